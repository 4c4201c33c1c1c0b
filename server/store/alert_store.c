/* alert_store.c - alerts and detector state in PostgreSQL (alert_store.h).
 *
 * Times go in and out as Unix milliseconds and are converted in SQL with
 * 'epoch' + n ms, which is exact (no float rounding of sample times). */
#include "alert_store.h"
#include "pgarr.h"
#include "pgbin.h"
#include "pgfail.h"
#include "store_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert_json.h"
#include "silence.h"

#define TS_FROM_MS(n) "('epoch'::timestamptz + (" n ")::bigint * interval '1 millisecond')"
#define MS_FROM_TS(col) "(floor(extract(epoch from " col ") * 1000))::bigint"

static PGresult *exec(PGconn *c, const char *sql, int n, const char *const *v)
{
	return PQexecParams(c, sql, n, NULL, v, NULL, NULL, 0);
}

static bool ok(PGresult *r)
{
	ExecStatusType s = PQresultStatus(r);
	return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

int alert_store_apply(PGconn *c, struct det_action *a, char *err, size_t errlen)
{
	char id[24], t1[24], t2[24];
	PGresult *r;

	if (store_pipe_finish(c, NULL, err, errlen) != STORE_OK)	/* writes in flight first */
		return -1;

	if (a->type == DA_OPEN) {
		char *ev = json_dumps(a->evidence, JSON_COMPACT | JSON_REAL_PRECISION(12));
		if (!ev) {
			snprintf(err, errlen, "could not insert alert: out of memory");
			return -1;
		}
		snprintf(t1, sizeof(t1), "%" PRId64, a->started_ms);
		snprintf(t2, sizeof(t2), "%" PRId64, a->opened_ms);
		const char *v[8] = { a->host, a->cgroup, a->kind, a->severity, t1, t2, a->summary, ev };
		r = exec(c,
			 "INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, "
			 "updated_at, summary, evidence) VALUES ($1, $2, $3, $4, 'open', " TS_FROM_MS("$5") ", "
			 TS_FROM_MS("$6") ", now(), $7, $8::jsonb) "
			 "ON CONFLICT (host, (coalesce(cgroup, '')), kind) WHERE state = 'open' DO UPDATE SET "
			 "severity = CASE WHEN alerts.severity = 'critical' THEN 'critical' "
			 "ELSE excluded.severity END, updated_at = now() RETURNING id", 8, v);
		free(ev);
		if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
			return pg_fail(err, errlen, "could not insert alert", c, r);
		a->alert_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		PQclear(r);
		return 0;
	}
	snprintf(id, sizeof(id), "%" PRId64, a->alert_id);
	if (a->type == DA_UPDATE) {
		char *ev = json_dumps(a->evidence, JSON_COMPACT | JSON_REAL_PRECISION(12));
		if (!ev) {
			snprintf(err, errlen, "could not update alert: out of memory");
			return -1;
		}
		const char *v[4] = { id, a->severity, a->summary, ev };
		r = exec(c, "UPDATE alerts SET severity = $2, summary = $3, evidence = $4::jsonb, "
			    "updated_at = now() WHERE id = $1 AND state = 'open'", 4, v);
		free(ev);
		if (!ok(r))
			return pg_fail(err, errlen, "could not update alert", c, r);
		PQclear(r);
		return 0;
	}
	snprintf(t1, sizeof(t1), "%" PRId64, a->at_ms);
	const char *v[2] = { id, t1 };
	/* never before it opened: a detector re-anchored on samples behind
	 * it (a clock set back) resolves at the later of the two */
	r = exec(c, "UPDATE alerts SET state = 'resolved', ended_at = greatest(opened_at, " TS_FROM_MS("$2") "), "
		    "updated_at = now() WHERE id = $1 AND state = 'open'", 2, v);
	if (!ok(r))
		return pg_fail(err, errlen, "could not resolve alert", c, r);
	PQclear(r);
	return 0;
}

int alert_store_find(PGconn *c, const struct det_action *a, int64_t *id, char *err, size_t errlen)
{
	char t[24];
	snprintf(t, sizeof(t), "%" PRId64, a->started_ms);
	const char *v[4] = { a->host, a->cgroup ? a->cgroup : "", a->kind, t };
	/* the alert this open made: the one started at that sample, or the
	 * open one it was adopted into */
	PGresult *r = exec(c, "SELECT id FROM alerts WHERE host = $1 AND coalesce(cgroup, '') = $2 AND kind = $3 "
			      "AND (started_at = " TS_FROM_MS("$4") " OR state = 'open') "
			      "ORDER BY (started_at = " TS_FROM_MS("$4") ") DESC, id DESC LIMIT 1", 4, v);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_fail(err, errlen, "could not look up an alert", c, r);
	*id = PQntuples(r) ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
	PQclear(r);
	return 0;
}

int alert_store_hosts_back(PGconn *c, const struct det_host_back *b, size_t n, char *err, size_t errlen)
{
	struct cbuf h, t, ids;
	int rc = -1;

	if (!n)
		return 0;
	cbuf_init(&h);
	cbuf_init(&t);
	cbuf_init(&ids);
	int bad = arr_begin(&h) | arr_begin(&t) | arr_begin(&ids);
	for (size_t i = 0; i < n && !bad; i++)
		bad |= arr_text(&h, b[i].host) | arr_num(&t, b[i].ts_ms) | arr_num(&ids, b[i].host_id);
	bad |= arr_end(&h) | arr_end(&t) | arr_end(&ids);
	if (bad) {
		snprintf(err, errlen, "could not resolve host_silent: out of memory");
		goto out;
	}
	const char *prm[2] = { (const char *)h.p, (const char *)t.p };
	if (store_q(c, "UPDATE alerts SET state = 'resolved', ended_at = greatest(opened_at, "
		       TS_FROM_MS("u.t") "), updated_at = now() FROM unnest($1::text[], $2::bigint[]) AS u(h, t) "
		       "WHERE alerts.host = u.h AND alerts.cgroup IS NULL AND alerts.kind = 'host_silent' "
		       "AND alerts.state = 'open'", 2, prm, 0, NULL, "resolve host_silent", err, errlen) == STORE_OK &&
	    store_q_send(c, "UPDATE hosts SET silent = false WHERE id = ANY($1::int[])", 1,
			 (const char *const[]){ (const char *)ids.p }, NULL, "clear host_silent", err,
			 errlen) == STORE_OK)
		rc = 0;
out:
	cbuf_release(&h);
	cbuf_release(&t);
	cbuf_release(&ids);
	return rc;
}

/* Opens host_silent for one candidate under its hosts row lock, rechecking
 * that no sample arrived meanwhile (ingest updates that row with every
 * sample). Returns 1 opened, 0 not, -1 error. */
static int silence_one(PGconn *c, const char *host_id, const char *now_s, char *err, size_t errlen)
{
	const char *v[2] = { host_id, now_s };
	PGresult *r = PQexec(c, "BEGIN");
	int rc = 0;

	if (!ok(r))
		return pg_fail(err, errlen, "could not begin", c, r);
	PQclear(r);
	r = exec(c,
		 "WITH s AS (UPDATE hosts h SET silent = true FROM detector_state d WHERE h.id = $1::int "
		 "  AND d.host_id = h.id AND NOT h.silent AND h.samples > 0 "
		 "  AND h.last_ts_ms < $2::bigint - greatest(3 * d.interval_ms, 60000) "
		 "  RETURNING h.name, h.last_ts_ms, d.interval_ms) "
		 "INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, updated_at, "
		 "summary, evidence) SELECT name, NULL, 'host_silent', 'warning', 'open', "
		 TS_FROM_MS("last_ts_ms") ", " TS_FROM_MS("$2") ", now(), "
		 "format('no sample for %s s (expected every %s s)', ($2::bigint - last_ts_ms) / 1000, "
		 "greatest(interval_ms, 1000) / 1000), "
		 "jsonb_build_object('last_sample_ms', last_ts_ms, 'interval_s', interval_ms / 1000.0, "
		 "'silent_s', ($2::bigint - last_ts_ms) / 1000, 'hint', "
		 "'check that the agent runs and reaches the server (its log says why it cannot post)') "
		 "FROM s ON CONFLICT (host, (coalesce(cgroup, '')), kind) WHERE state = 'open' DO NOTHING", 2, v);
	if (!ok(r)) {
		pg_fail(err, errlen, "could not open host_silent", c, r);
		r = PQexec(c, "ROLLBACK");
		PQclear(r);
		return -1;
	}
	rc = atoi(PQcmdTuples(r)) > 0;
	PQclear(r);
	r = PQexec(c, "COMMIT");
	if (!ok(r))
		return pg_fail(err, errlen, "could not commit host_silent", c, r);
	PQclear(r);
	return rc;
}

int alert_store_tick_silent(PGconn *c, int64_t now_ms, int *nopened, char *err, size_t errlen)
{
	char now_s[24];
	snprintf(now_s, sizeof(now_s), "%" PRId64, now_ms);
	const char *v[1] = { now_s };
	PGresult *r = exec(c,
			   "SELECT h.id FROM hosts h JOIN detector_state d ON d.host_id = h.id "
			   "WHERE NOT h.silent AND h.samples > 0 "
			   "AND h.last_ts_ms < $1::bigint - greatest(3 * d.interval_ms, 60000) "
			   "ORDER BY h.id LIMIT 1000", 1, v);
	*nopened = 0;
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_fail(err, errlen, "could not list silent hosts", c, r);
	for (int i = 0; i < PQntuples(r); i++) {
		int o = silence_one(c, PQgetvalue(r, i, 0), now_s, err, errlen);
		if (o < 0) {
			PQclear(r);
			return -1;
		}
		*nopened += o;
	}
	PQclear(r);
	return 0;
}

int alert_store_query(PGconn *c, const struct alert_query *q, json_t **out, char *err, size_t errlen)
{
	char since[24], until[24], limit[16];
	const char *state = q->state && strcmp(q->state, "all") != 0 ? q->state : NULL;
	json_t *arr = NULL;

	*out = NULL;
	if (state && strcmp(state, "open") != 0 && strcmp(state, "resolved") != 0) {
		snprintf(err, errlen, "state: expected open, resolved or all");
		return -1;
	}
	snprintf(since, sizeof(since), "%" PRId64, q->since_ms);
	snprintf(until, sizeof(until), "%" PRId64, q->until_ms);
	snprintf(limit, sizeof(limit), "%d", q->limit < 1 ? 100 : q->limit > 10000 ? 10000 : q->limit);
	const char *v[7] = { q->host, q->cgroup, q->kind, state,
			     q->since_ms == INT64_MIN ? NULL : since,
			     q->until_ms == INT64_MAX ? NULL : until, limit };
	PGresult *r = exec(c,
			   "SELECT id, host, cgroup, kind, severity, state, " MS_FROM_TS("started_at") ", "
			   MS_FROM_TS("opened_at") ", " MS_FROM_TS("ended_at") ", summary, evidence::text, "
			   SILENCE_MATCH_SQL("alerts") " FROM alerts WHERE ($1::text IS NULL OR host = $1) "
			   "AND ($2::text IS NULL OR cgroup = $2) AND ($3::text IS NULL OR kind = $3) "
			   "AND ($4::text IS NULL OR state = $4) "
			   "AND ($5::bigint IS NULL OR coalesce(ended_at, 'infinity') >= " TS_FROM_MS("$5") ") "
			   "AND ($6::bigint IS NULL OR started_at <= " TS_FROM_MS("$6") ") "
			   "ORDER BY started_at DESC, id DESC LIMIT $7::int", 7, v);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_fail(err, errlen, "could not query alerts", c, r);
	arr = json_array();
	if (!arr)
		goto oom;
	for (int i = 0; i < PQntuples(r); i++) {
		struct alert_rec a;
		json_error_t jerr;
		memset(&a, 0, sizeof(a));
		a.id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
		a.host = PQgetvalue(r, i, 1);
		a.cgroup = PQgetisnull(r, i, 2) ? NULL : PQgetvalue(r, i, 2);
		a.kind = PQgetvalue(r, i, 3);
		a.severity = PQgetvalue(r, i, 4);
		a.open = strcmp(PQgetvalue(r, i, 5), "open") == 0;
		a.started_ms = strtoll(PQgetvalue(r, i, 6), NULL, 10);
		a.opened_ms = strtoll(PQgetvalue(r, i, 7), NULL, 10);
		a.ended_ms = PQgetisnull(r, i, 8) ? 0 : strtoll(PQgetvalue(r, i, 8), NULL, 10);
		a.summary = PQgetvalue(r, i, 9);
		a.evidence = json_loads(PQgetvalue(r, i, 10), 0, &jerr);
		a.silenced = PQgetvalue(r, i, 11)[0] == 't';
		json_t *o = alert_rec_to_json(&a);	/* borrows the PGresult's strings */
		if (a.evidence)
			json_decref(a.evidence);
		if (!o || json_array_append_new(arr, o) < 0)
			goto oom;
	}
	PQclear(r);
	*out = json_pack("{s:o}", "alerts", arr);
	if (!*out) {
		snprintf(err, errlen, "could not build the answer: out of memory");
		return -1;
	}
	return 0;
oom:
	PQclear(r);
	json_decref(arr);
	snprintf(err, errlen, "could not build the answer: out of memory");
	return -1;
}
