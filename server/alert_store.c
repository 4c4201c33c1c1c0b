/* alert_store.c - alerts and detector state in PostgreSQL (alert_store.h).
 *
 * Times go in and out as Unix milliseconds and are converted in SQL with
 * 'epoch' + n ms, which is exact (no float rounding of sample times). */
#include "alert_store.h"
#include "pgfail.h"

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
	r = exec(c, "UPDATE alerts SET state = 'resolved', ended_at = " TS_FROM_MS("$2") ", "
		    "updated_at = now() WHERE id = $1 AND state = 'open'", 2, v);
	if (!ok(r))
		return pg_fail(err, errlen, "could not resolve alert", c, r);
	PQclear(r);
	return 0;
}

/* SELECT ... FOR UPDATE of an existing row in binary format; NULL result
 * rows when the host has none yet. */
static PGresult *select_locked(PGconn *c, const char *host)
{
	const char *v[1] = { host };
	return PQexecParams(c, "SELECT state, last_ts_ms, silent FROM detector_state WHERE host = $1 "
			       "FOR UPDATE", 1, NULL, v, NULL, NULL, 1 /* binary */);
}

int alert_store_lock_state(PGconn *c, const char *host, unsigned char **buf, size_t *len,
			   int64_t *last_ts_ms, bool *silent, char *err, size_t errlen)
{
	const char *v[1] = { host };
	PGresult *r;

	*buf = NULL;
	*len = 0;
	*last_ts_ms = 0;
	*silent = false;
	/* the common case is one query: the row exists */
	r = select_locked(c, host);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 0) {
		PQclear(r);
		r = exec(c, "INSERT INTO detector_state (host) VALUES ($1) ON CONFLICT (host) DO NOTHING", 1, v);
		if (!ok(r))
			return pg_fail(err, errlen, "could not create detector state", c, r);
		PQclear(r);
		r = select_locked(c, host);
	}
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		return pg_fail(err, errlen, "could not lock detector state", c, r);
	size_t n = (size_t)PQgetlength(r, 0, 0);
	if (n) {
		*buf = malloc(n);
		if (!*buf) {
			PQclear(r);
			snprintf(err, errlen, "could not load detector state: out of memory");
			return -1;
		}
		memcpy(*buf, PQgetvalue(r, 0, 0), n);
		*len = n;
	}
	if (PQgetlength(r, 0, 1) == 8) {
		const unsigned char *p = (const unsigned char *)PQgetvalue(r, 0, 1);
		uint64_t x = 0;
		for (int i = 0; i < 8; i++)
			x = (x << 8) | p[i];	/* binary int8 is big-endian */
		*last_ts_ms = (int64_t)x;
	}
	*silent = PQgetlength(r, 0, 2) == 1 && PQgetvalue(r, 0, 2)[0] != 0;
	PQclear(r);
	return 0;
}

int alert_store_save_state(PGconn *c, const char *host, const unsigned char *buf, size_t len,
			   int64_t last_ts_ms, int64_t interval_ms, char *err, size_t errlen)
{
	char t[24], iv[24];
	snprintf(t, sizeof(t), "%" PRId64, last_ts_ms);
	snprintf(iv, sizeof(iv), "%" PRId64, interval_ms);
	const char *v[4] = { host, (const char *)buf, t, iv };
	int lens[4] = { 0, (int)len, 0, 0 };
	int fmts[4] = { 0, 1, 0, 0 };
	PGresult *r = PQexecParams(c, "UPDATE detector_state SET state = $2, last_ts_ms = $3, "
				      "interval_ms = $4, silent = false, updated_at = now() WHERE host = $1",
				   4, NULL, v, lens, fmts, 0);
	if (!ok(r))
		return pg_fail(err, errlen, "could not save detector state", c, r);
	PQclear(r);
	return 0;
}

int alert_store_host_back(PGconn *c, const char *host, int64_t ts_ms, char *err, size_t errlen)
{
	char t[24];
	snprintf(t, sizeof(t), "%" PRId64, ts_ms);
	const char *v[2] = { host, t };
	PGresult *r = exec(c, "UPDATE alerts SET state = 'resolved', ended_at = greatest(started_at, "
			      TS_FROM_MS("$2") "), updated_at = now() WHERE host = $1 AND cgroup IS NULL "
			      "AND kind = 'host_silent' AND state = 'open'", 2, v);
	if (!ok(r))
		return pg_fail(err, errlen, "could not resolve host_silent", c, r);
	PQclear(r);
	return 0;
}

/* Opens host_silent for one candidate under its state row lock, rechecking
 * that no sample arrived meanwhile. Returns 1 opened, 0 not, -1 error. */
static int silence_one(PGconn *c, const char *host, const char *now_s, char *err, size_t errlen)
{
	const char *v[2] = { host, now_s };
	PGresult *r = PQexec(c, "BEGIN");
	int rc = 0;

	if (!ok(r))
		return pg_fail(err, errlen, "could not begin", c, r);
	PQclear(r);
	r = exec(c,
		 "WITH s AS (UPDATE detector_state SET silent = true WHERE host = $1 "
		 "  AND last_ts_ms > 0 AND last_ts_ms < $2::bigint - greatest(3 * interval_ms, 60000) "
		 "  RETURNING host, last_ts_ms, interval_ms) "
		 "INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, updated_at, "
		 "summary, evidence) SELECT host, NULL, 'host_silent', 'warning', 'open', "
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
			   "SELECT d.host FROM detector_state d WHERE d.last_ts_ms > 0 "
			   "AND d.last_ts_ms < $1::bigint - greatest(3 * d.interval_ms, 60000) "
			   "AND NOT EXISTS (SELECT 1 FROM alerts a WHERE a.host = d.host AND a.kind = 'host_silent' "
			   "AND a.state = 'open' AND coalesce(a.cgroup, '') = '') ORDER BY d.host LIMIT 1000", 1, v);
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
