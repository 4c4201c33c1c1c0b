/* overrides_store.c - the detector_overrides table (see overrides_store.h).
 * Rows go through the same JSON validation as the API and the replay
 * file (ovr_rule_from_json), so the three can never disagree. */
#include "overrides_store.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store_internal.h"

static int fail(char *err, size_t errlen, const char *what, PGconn *c, PGresult *r)
{
	const char *m = r ? PQresultErrorMessage(r) : NULL;
	if (!m || !*m)
		m = PQerrorMessage(c);
	snprintf(err, errlen, "%s: %.*s", what, (int)strcspn(m, "\n"), m);
	PQclear(r);
	return -1;
}

/* One row as the API's rule object, for ovr_rule_from_json. */
static json_t *row_json(PGresult *r, int i)
{
	json_error_t jerr;
	json_t *o = json_object();
	json_t *params = json_loads(PQgetvalue(r, i, 5), 0, &jerr);
	int bad = !o || !params;

	if (!bad)
		bad |= json_object_set_new(o, "id", json_integer(strtoll(PQgetvalue(r, i, 0), NULL, 10)));
	if (!bad && !PQgetisnull(r, i, 1))
		bad |= json_object_set_new(o, "host", json_string(PQgetvalue(r, i, 1)));
	if (!bad && !PQgetisnull(r, i, 2)) {
		size_t n = strlen(PQgetvalue(r, i, 2)) + strlen(PQgetvalue(r, i, 3)) + 2;
		char *l = malloc(n);
		if (l) {
			snprintf(l, n, "%s=%s", PQgetvalue(r, i, 2), PQgetvalue(r, i, 3));
			bad |= json_object_set_new(o, "label", json_string(l));
			free(l);
		} else {
			bad = 1;
		}
	}
	if (!bad)
		bad |= json_object_set_new(o, "kind", json_string(PQgetvalue(r, i, 4)));
	if (!bad) {
		bad |= json_object_set_new(o, "params", params);
		params = NULL;
	}
	if (!bad && !PQgetisnull(r, i, 6))
		bad |= json_object_set_new(o, "note", json_string(PQgetvalue(r, i, 6)));
	json_decref(params);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int ovr_store_load(PGconn *c, struct ovr_set *set, char *err, size_t errlen)
{
	memset(set, 0, sizeof(*set));
	/* an ingest transaction's rows may still be on their way (store_sql.c) */
	if (store_pipe_finish(c, NULL, err, errlen) != STORE_OK)
		return -1;
	PGresult *r = PQexecParams(c,
		"SELECT id, host, label_key, label_value, kind, params::text, note, "
		"to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
		"FROM detector_overrides ORDER BY id", 0, NULL, NULL, NULL, NULL, 0);

	memset(set, 0, sizeof(*set));
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return fail(err, errlen, "could not read overrides", c, r);
	for (int i = 0; i < PQntuples(r); i++) {
		char e[OVR_ERR_MAX];
		struct ovr_rule rule;
		json_t *o = row_json(r, i);
		if (!o) {
			snprintf(err, errlen, "could not read overrides: out of memory");
			goto bad;
		}
		int rc = ovr_rule_from_json(&rule, o, e, sizeof(e));
		json_decref(o);
		if (rc < 0) {
			log_warn("override %s is not usable, ignored: %s", PQgetvalue(r, i, 0), e);
			continue;
		}
		if (!(rule.updated_at = strdup(PQgetvalue(r, i, 7))) || ovr_set_add(set, &rule) < 0) {
			ovr_rule_release(&rule);
			snprintf(err, errlen, "could not read overrides: out of memory");
			goto bad;
		}
	}
	PQclear(r);
	return 0;
bad:
	PQclear(r);
	ovr_set_release(set);
	return -1;
}

static int exec_ok(PGconn *c, const char *sql, char *err, size_t errlen, const char *what)
{
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		return fail(err, errlen, what, c, r);
	PQclear(r);
	return 0;
}

int ovr_store_replace(PGconn *c, const struct ovr_set *set, char *err, size_t errlen)
{
	/* the version row first: its lock makes one writer at a time (the
	 * detectors' reads go on), and every server sees the new version */
	if (exec_ok(c, "BEGIN", err, errlen, "could not begin") < 0)
		return -1;
	if (exec_ok(c, OVR_BUMP_SQL, err, errlen, "could not lock overrides") < 0 ||
	    exec_ok(c, "DELETE FROM detector_overrides", err, errlen, "could not clear overrides") < 0)
		goto rollback;
	for (size_t i = 0; i < set->n; i++) {
		const struct ovr_rule *rule = &set->r[i];
		json_t *p = ovr_params_to_json(rule);
		char *ptext = p ? json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		json_decref(p);
		if (!ptext) {
			snprintf(err, errlen, "could not store overrides: out of memory");
			goto rollback;
		}
		const char *v[6] = { rule->host, rule->label_key, rule->label_value,
				     det_kind_name(rule->kind), ptext, rule->note };
		PGresult *r = PQexecParams(c,
			"INSERT INTO detector_overrides (host, label_key, label_value, kind, params, note) "
			"VALUES ($1, $2, $3, $4, $5::jsonb, $6)", 6, NULL, v, NULL, NULL, 0);
		free(ptext);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			fail(err, errlen, "could not store overrides", c, r);
			goto rollback;
		}
		PQclear(r);
	}
	return exec_ok(c, "COMMIT", err, errlen, "could not commit overrides");
rollback:
	PQclear(PQexec(c, "ROLLBACK"));
	return -1;
}

int ovr_store_delete(PGconn *c, int64_t id, char *err, size_t errlen)
{
	char idbuf[24];
	const char *v[1] = { idbuf };

	snprintf(idbuf, sizeof(idbuf), "%" PRId64, id);
	if (exec_ok(c, "BEGIN", err, errlen, "could not begin") < 0)
		return -1;
	if (exec_ok(c, OVR_BUMP_SQL, err, errlen, "could not lock overrides") < 0)
		goto rollback;
	PGresult *r = PQexecParams(c, "DELETE FROM detector_overrides WHERE id = $1::bigint", 1, NULL, v,
				   NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		fail(err, errlen, "could not delete override", c, r);
		goto rollback;
	}
	int n = atoi(PQcmdTuples(r));
	PQclear(r);
	if (exec_ok(c, n > 0 ? "COMMIT" : "ROLLBACK", err, errlen, "could not commit") < 0)
		return -1;
	return n > 0 ? 1 : 0;
rollback:
	PQclear(PQexec(c, "ROLLBACK"));
	return -1;
}
