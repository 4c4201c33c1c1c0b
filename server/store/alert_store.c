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
			 "ON CONFLICT " ALERT_OPEN_KEY " WHERE state = 'open' DO UPDATE SET "
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

/* ---- detector state of the hosts of one ingest transaction ---- */

/* Locks the rows of hosts (a text[] literal) in name order and reads them,
 * with the overrides version as a scalar subquery, in binary format. (A
 * version that must come even when no row matches, through a CTE and an
 * outer join, made the statement cost 10 times a one-row lock; when no row
 * matches the hosts are new, and the re-lock after creating them reads it.) */
static const char lock_sql[] =
	"SELECT host, state, last_ts_ms, silent, (SELECT v FROM detector_overrides_version), "
	"lag_win_ms, lag_min_ms, lag_prev_ms, lag_last_ms, clock_bad_ms "
	"FROM detector_state WHERE host = ANY($1::text[]) ORDER BY host COLLATE \"C\" FOR UPDATE";

static struct det_state_row *find_row(struct det_state_row *rows, size_t n, const char *host)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(rows[mid].host, host);
		if (c == 0)
			return &rows[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Writes into names (initialised here; the caller releases it) a text
 * array of the hosts of rows not yet found. Returns 0, or -1 when out of
 * memory. */
static int missing_hosts(struct cbuf *names, const struct det_state_row *rows, size_t n, const bool *found)
{
	cbuf_init(names);
	int bad = arr_begin(names);
	for (size_t i = 0; i < n && !bad; i++)
		if (!found[i])
			bad |= arr_text(names, rows[i].host);
	bad |= arr_end(names);
	return bad ? -1 : 0;
}

/* Runs lock_sql for the hosts of rows that are not yet found (all when
 * none is) and fills what it returns. Returns how many rows were found,
 * or -1 with err written. */
static int lock_rows(PGconn *c, struct det_state_row *rows, size_t n, bool *found, int64_t *ovr_version,
		     char *err, size_t errlen)
{
	struct cbuf names;
	PGresult *r = NULL;
	int nfound = 0;

	if (missing_hosts(&names, rows, n, found) < 0) {
		cbuf_release(&names);
		snprintf(err, errlen, "could not lock detector state: out of memory");
		return -1;
	}
	const char *prm[1] = { (const char *)names.p };
	int rc = store_q_prep(c, STORE_PREP_DET_LOCK, lock_sql, 1, prm, 1, &r, "lock detector state", err, errlen);
	cbuf_release(&names);
	if (rc != STORE_OK)
		return -1;
	for (int i = 0; i < PQntuples(r); i++) {
		*ovr_version = PQgetisnull(r, i, 4) ? -1 : store_get_i64(r, i, 4);
		struct det_state_row *d = find_row(rows, n, PQgetvalue(r, i, 0));
		if (!d || found[d - rows])
			continue;
		size_t len = (size_t)PQgetlength(r, i, 1);
		if (len) {
			if (!(d->buf = malloc(len))) {
				PQclear(r);
				snprintf(err, errlen, "could not load detector state: out of memory");
				return -1;
			}
			memcpy(d->buf, PQgetvalue(r, i, 1), len);
		}
		d->len = len;
		d->last_ts_ms = store_get_i64(r, i, 2);
		d->silent = PQgetvalue(r, i, 3)[0] != 0;
		d->lag.win_ms = store_get_i64(r, i, 5);
		d->lag.min_ms = PQgetisnull(r, i, 6) ? LAG_NONE : store_get_i64(r, i, 6);
		d->lag.prev_ms = PQgetisnull(r, i, 7) ? LAG_NONE : store_get_i64(r, i, 7);
		d->lag.last_ms = PQgetisnull(r, i, 8) ? LAG_NONE : store_get_i64(r, i, 8);
		d->lag.bad_ms = store_get_i64(r, i, 9);
		found[d - rows] = true;
		nfound++;
	}
	PQclear(r);
	return nfound;
}

int alert_store_lock_states(PGconn *c, struct det_state_row *rows, size_t n, int64_t *ovr_version, char *err,
			    size_t errlen)
{
	bool *found = calloc(n ? n : 1, sizeof(*found));
	int rc = -1;

	*ovr_version = -1;
	for (size_t i = 0; i < n; i++) {
		rows[i].buf = NULL;
		rows[i].len = 0;
		rows[i].last_ts_ms = 0;
		rows[i].silent = false;
		rows[i].lag = (struct host_lag){ 0, LAG_NONE, LAG_NONE, LAG_NONE, 0 };
	}
	if (!found) {
		snprintf(err, errlen, "could not lock detector state: out of memory");
		return -1;
	}
	int got = lock_rows(c, rows, n, found, ovr_version, err, errlen);
	if (got < 0)
		goto out;
	if ((size_t)got < n) {
		/* hosts seen for the first time: their rows, then lock those */
		struct cbuf names;
		if (missing_hosts(&names, rows, n, found) < 0) {
			cbuf_release(&names);
			snprintf(err, errlen, "could not create detector state: out of memory");
			goto out;
		}
		const char *prm[1] = { (const char *)names.p };
		int qrc = store_q(c, "INSERT INTO detector_state (host) SELECT x FROM unnest($1::text[]) AS x "
				     "ORDER BY x COLLATE \"C\" ON CONFLICT (host) DO NOTHING", 1, prm, 0, NULL,
				  "create detector state", err, errlen);
		cbuf_release(&names);
		if (qrc != STORE_OK)
			goto out;
		int more = lock_rows(c, rows, n, found, ovr_version, err, errlen);
		if (more < 0)
			goto out;
		if ((size_t)(got + more) != n) {
			snprintf(err, errlen, "could not lock detector state: rows missing");
			goto out;
		}
	}
	rc = 0;
out:
	if (rc < 0)
		for (size_t i = 0; i < n; i++) {
			free(rows[i].buf);
			rows[i].buf = NULL;
		}
	free(found);
	return rc;
}

/* The states as a binary bytea[] parameter (pgbin.h): they travel as they
 * are, without hex text both ways. */
static int bytea_array(struct cbuf *b, const struct det_state_save *s, size_t n)
{
	int bad = pgbin_bytea_begin(b);
	for (size_t i = 0; i < n && !bad; i++)
		bad |= pgbin_bytea_add(b, s[i].buf ? s[i].buf : (const uint8_t *)"", s[i].len);
	return bad | pgbin_bytea_end(b);
}

int alert_store_save_states(PGconn *c, const struct det_state_save *s, size_t n, char *err, size_t errlen)
{
	enum { H, ST, T, IV, SEEN, LW, LM, LP, LL, LB, NA };
	struct cbuf a[NA];
	int rc = -1, bad = 0;

	if (!n)
		return 0;
	for (int k = 0; k < NA; k++)
		cbuf_init(&a[k]);
	for (int k = 0; k < NA; k++)
		bad |= k == ST ? bytea_array(&a[ST], s, n) : arr_begin(&a[k]);
	/* an absent window minimum travels as INT64_MIN (LAG_NONE), NULL in the row */
	for (size_t i = 0; i < n && !bad; i++)
		bad |= arr_text(&a[H], s[i].host) | arr_num(&a[T], s[i].last_ts_ms) | arr_num(&a[IV], s[i].interval_ms) |
		       arr_num(&a[SEEN], s[i].seen_ms) | arr_num(&a[LW], s[i].lag.win_ms) |
		       arr_num(&a[LM], s[i].lag.min_ms) | arr_num(&a[LP], s[i].lag.prev_ms) |
		       arr_num(&a[LL], s[i].lag.last_ms) | arr_num(&a[LB], s[i].lag.bad_ms);
	for (int k = 0; k < NA; k++)
		if (k != ST)
			bad |= arr_end(&a[k]);
	if (bad || a[ST].len > INT32_MAX) {
		snprintf(err, errlen, "could not save detector state: out of memory");
		goto out;
	}
	const char *prm[NA];
	int lens[NA] = { 0 }, fmts[NA] = { 0 };
	for (int k = 0; k < NA; k++)
		prm[k] = (const char *)a[k].p;
	lens[ST] = (int)a[ST].len;
	fmts[ST] = 1;
	/* sent without waiting: its result comes back with COMMIT (store_sql.c) */
	if (store_q_prep_send(c, STORE_PREP_DET_SAVE,
			      "UPDATE detector_state d SET state = u.s, last_ts_ms = u.l, interval_ms = u.i, "
			      "seen_ms = u.seen, lag_win_ms = u.lw, lag_min_ms = nullif(u.lm, -9223372036854775808), "
			      "lag_prev_ms = nullif(u.lp, -9223372036854775808), "
			      "lag_last_ms = nullif(u.ll, -9223372036854775808), clock_bad_ms = u.lb, "
			      "silent = false, updated_at = now() FROM unnest($1::text[], $2::bytea[], $3::bigint[], "
			      "$4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], "
			      "$10::bigint[]) AS u(h, s, l, i, seen, lw, lm, lp, ll, lb) WHERE d.host = u.h",
			      NA, prm, lens, fmts, 0, "save detector state", err, errlen) == STORE_OK)
		rc = 0;
out:
	for (int k = 0; k < NA; k++)
		cbuf_release(&a[k]);
	return rc;
}

int alert_store_hosts_back(PGconn *c, const struct det_host_back *b, size_t n, char *err, size_t errlen)
{
	struct cbuf h, t;
	int rc = -1;

	if (!n)
		return 0;
	cbuf_init(&h);
	cbuf_init(&t);
	int bad = arr_begin(&h) | arr_begin(&t);
	for (size_t i = 0; i < n && !bad; i++)
		bad |= arr_text(&h, b[i].host) | arr_num(&t, b[i].at_ms);
	bad |= arr_end(&h) | arr_end(&t);
	if (bad) {
		snprintf(err, errlen, "could not resolve host_silent: out of memory");
		goto out;
	}
	const char *prm[2] = { (const char *)h.p, (const char *)t.p };
	if (store_q(c, "UPDATE alerts SET state = 'resolved', ended_at = greatest(opened_at, "
		       TS_FROM_MS("u.t") "), updated_at = now() FROM unnest($1::text[], $2::bigint[]) AS u(h, t) "
		       "WHERE alerts.host = u.h AND alerts.cgroup IS NULL AND alerts.kind = 'host_silent' "
		       "AND alerts.state = 'open'", 2, prm, 0, NULL, "resolve host_silent", err, errlen) == STORE_OK)
		rc = 0;
out:
	cbuf_release(&h);
	cbuf_release(&t);
	return rc;
}

int alert_store_hosts_heard(PGconn *c, const char *const *hosts, size_t n, int64_t now_ms, char *err,
			    size_t errlen)
{
	struct cbuf h;
	char now_s[24];
	int rc = -1;

	cbuf_init(&h);
	int bad = arr_begin(&h);
	for (size_t i = 0; i < n && !bad; i++)
		bad |= arr_text(&h, hosts[i]);
	bad |= arr_end(&h);
	if (bad) {
		snprintf(err, errlen, "could not record an arrival: out of memory");
		goto out;
	}
	snprintf(now_s, sizeof(now_s), "%" PRId64, now_ms);
	const char *prm[2] = { (const char *)h.p, now_s };
	/* SKIP LOCKED: a row another transaction holds is being written by
	 * an arrival of that host anyway, and waiting for it here, outside
	 * the name order alert_store_lock_states keeps, could deadlock */
	if (store_q(c, "WITH l AS (SELECT host FROM detector_state WHERE host = ANY($1::text[]) ORDER BY host "
		       "COLLATE \"C\" FOR UPDATE SKIP LOCKED), "
		       "u AS (UPDATE detector_state d SET seen_ms = greatest(d.seen_ms, $2::bigint), silent = false "
		       "FROM l WHERE d.host = l.host RETURNING d.host) "
		       "UPDATE alerts SET state = 'resolved', ended_at = greatest(opened_at, " TS_FROM_MS("$2")
		       "), updated_at = now() FROM u WHERE alerts.host = u.host AND alerts.cgroup IS NULL "
		       "AND alerts.kind = 'host_silent' AND alerts.state = 'open'",
		       2, prm, 0, NULL, "record an arrival", err, errlen) == STORE_OK)
		rc = 0;
out:
	cbuf_release(&h);
	return rc;
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
			   SILENCE_MATCH_SQL("alerts") ", subject FROM alerts WHERE ($1::text IS NULL OR host = $1) "
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
		a.subject = PQgetisnull(r, i, 12) ? NULL : PQgetvalue(r, i, 12);
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
