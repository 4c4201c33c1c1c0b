/* liveness_store.c - host_silent, clock_skew and refused samples in
 * PostgreSQL (see liveness_store.h). */
#include "liveness_store.h"
#include "alert_store.h"
#include "pgfail.h"
#include "store_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS_FROM_MS(n) "('epoch'::timestamptz + (" n ")::bigint * interval '1 millisecond')"

static bool ok(PGresult *r)
{
	ExecStatusType s = PQresultStatus(r);
	return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

static PGresult *exec(PGconn *c, const char *sql, int n, const char *const *v)
{
	return PQexecParams(c, sql, n, NULL, v, NULL, NULL, 0);
}

/* The silence threshold of a row, in SQL: $3 is the floor (ms). */
#define SILENT_AFTER "greatest(3 * interval_ms, $3::bigint)"
/* Not silent while its samples arrive and are refused (clock_skew). */
#define NOT_REFUSING "NOT (refused_at_ms > seen_ms AND refused_at_ms >= $2::bigint - " SILENT_AFTER ")"

/* Opens host_silent for one candidate under its state row lock, rechecking
 * that no sample arrived meanwhile. Returns 1 opened, 0 not, -1 error. */
static int silence_one(PGconn *c, const char *host, const char *now_s, const char *min_s, char *err,
		       size_t errlen)
{
	const char *v[3] = { host, now_s, min_s };
	PGresult *r = PQexec(c, "BEGIN");
	int rc = 0;

	if (!ok(r))
		return pg_fail(err, errlen, "could not begin", c, r);
	PQclear(r);
	r = exec(c,
		 "WITH s AS (UPDATE detector_state SET silent = true WHERE host = $1 "
		 "  AND last_ts_ms > 0 AND seen_ms < $2::bigint - " SILENT_AFTER " AND " NOT_REFUSING
		 "  RETURNING host, last_ts_ms, seen_ms, interval_ms) "
		 "INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, updated_at, "
		 "summary, evidence) SELECT host, NULL, 'host_silent', 'warning', 'open', "
		 TS_FROM_MS("seen_ms") ", " TS_FROM_MS("$2") ", now(), "
		 "format('no sample for %s s (expected every %s s)', ($2::bigint - seen_ms) / 1000, "
		 "greatest(interval_ms, 1000) / 1000), "
		 "jsonb_build_object('last_sample_ms', last_ts_ms, 'last_arrival_ms', seen_ms, "
		 "'interval_s', interval_ms / 1000.0, 'silent_s', ($2::bigint - seen_ms) / 1000, 'hint', "
		 "'check that the agent runs and reaches the server (its log says why it cannot post)') "
		 "FROM s ON CONFLICT " ALERT_OPEN_KEY " WHERE state = 'open' DO NOTHING", 3, v);
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

int liveness_store_open_silent(PGconn *c, int64_t now_ms, int64_t min_ms, int *nopened, char *err,
			       size_t errlen)
{
	char now_s[24], min_s[24];

	snprintf(now_s, sizeof(now_s), "%" PRId64, now_ms);
	snprintf(min_s, sizeof(min_s), "%" PRId64, min_ms);
	const char *v[3] = { NULL, now_s, min_s };
	PGresult *r = exec(c,
			   "SELECT d.host FROM detector_state d WHERE d.last_ts_ms > 0 "
			   "AND d.seen_ms < $2::bigint - greatest(3 * d.interval_ms, $3::bigint) "
			   "AND NOT (d.refused_at_ms > d.seen_ms AND d.refused_at_ms >= $2::bigint - "
			   "greatest(3 * d.interval_ms, $3::bigint)) "
			   "AND ($1::text IS NULL OR d.host = $1) "
			   "AND NOT EXISTS (SELECT 1 FROM alerts a WHERE a.host = d.host AND a.kind = 'host_silent' "
			   "AND a.state = 'open' AND coalesce(a.cgroup, '') = '') ORDER BY d.host LIMIT 1000", 3, v);
	*nopened = 0;
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_fail(err, errlen, "could not list silent hosts", c, r);
	for (int i = 0; i < PQntuples(r); i++) {
		int o = silence_one(c, PQgetvalue(r, i, 0), now_s, min_s, err, errlen);
		if (o < 0) {
			PQclear(r);
			return -1;
		}
		*nopened += o;
	}
	PQclear(r);
	return 0;
}

int store_note_refused(struct store *st, const char *host, int64_t ts_ms, int64_t now_ms, char *err,
		       size_t errlen)
{
	char ts_s[24], now_s[24];
	PGconn *c = db_pool_get(st->pool, STORE_POOL_WAIT_MS, err, errlen);

	if (!c)
		return STORE_EUNAVAIL;
	snprintf(ts_s, sizeof(ts_s), "%" PRId64, ts_ms);
	snprintf(now_s, sizeof(now_s), "%" PRId64, now_ms);
	const char *v[3] = { host, ts_s, now_s };
	int rc = store_q(c,
			 "INSERT INTO detector_state (host, refused_n, refused_at_ms, refused_ts_ms) "
			 "VALUES ($1, 1, $3::bigint, $2::bigint) ON CONFLICT (host) DO UPDATE SET "
			 "refused_n = detector_state.refused_n + 1, "
			 "refused_at_ms = greatest(detector_state.refused_at_ms, excluded.refused_at_ms), "
			 "refused_ts_ms = excluded.refused_ts_ms",
			 3, v, 0, NULL, "record a refused sample", err, errlen);
	db_pool_put(st->pool, c, rc == STORE_EUNAVAIL);
	return rc;
}

static int64_t get_i64(const PGresult *r, int row, int col, int64_t if_null)
{
	return PQgetisnull(r, row, col) ? if_null : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

int liveness_store_clock_rows(PGconn *c, int64_t skew_ms, struct clock_row **out, size_t *n, char *err,
			      size_t errlen)
{
	char skew_s[24];

	*out = NULL;
	*n = 0;
	snprintf(skew_s, sizeof(skew_s), "%" PRId64, skew_ms);
	const char *v[1] = { skew_s };
	PGresult *r = exec(c,
			   "SELECT d.host, d.seen_ms, d.interval_ms, d.lag_win_ms, d.lag_min_ms, d.lag_prev_ms, "
			   "d.refused_n, d.refused_at_ms, d.refused_ts_ms, coalesce(a.id, 0), "
			   "coalesce((a.evidence->>'samples_refused')::boolean, false), "
			   "coalesce(a.evidence->>'clock', '') = 'behind', "
			   "coalesce(round(coalesce(a.evidence->>'behind_s', a.evidence->>'ahead_s')::float8 * 1000), 0)::bigint, "
			   "d.lag_last_ms, d.clock_bad_ms "
			   "FROM detector_state d LEFT JOIN alerts a ON a.host = d.host AND a.kind = 'clock_skew' "
			   "AND a.state = 'open' AND a.cgroup IS NULL "
			   "WHERE a.id IS NOT NULL OR d.refused_at_ms > d.seen_ms OR abs(d.lag_prev_ms) >= $1::bigint "
			   "ORDER BY d.host LIMIT 10000", 1, v);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_fail(err, errlen, "could not list hosts' clocks", c, r);
	int nt = PQntuples(r);
	struct clock_row *rows = nt ? calloc((size_t)nt, sizeof(*rows)) : NULL;
	if (nt && !rows) {
		PQclear(r);
		snprintf(err, errlen, "could not list hosts' clocks: out of memory");
		return -1;
	}
	for (int i = 0; i < nt; i++) {
		struct clock_row *w = &rows[i];
		if (!(w->host = strdup(PQgetvalue(r, i, 0)))) {
			PQclear(r);
			liveness_store_clock_rows_free(rows, (size_t)i);
			snprintf(err, errlen, "could not list hosts' clocks: out of memory");
			return -1;
		}
		w->obs.seen_ms = get_i64(r, i, 1, 0);
		w->obs.interval_ms = get_i64(r, i, 2, 0);
		w->obs.lag.win_ms = get_i64(r, i, 3, 0);
		w->obs.lag.min_ms = get_i64(r, i, 4, LAG_NONE);
		w->obs.lag.prev_ms = get_i64(r, i, 5, LAG_NONE);
		w->obs.refused_n = get_i64(r, i, 6, 0);
		w->obs.refused_at_ms = get_i64(r, i, 7, 0);
		w->obs.refused_ts_ms = get_i64(r, i, 8, 0);
		w->alert_id = get_i64(r, i, 9, 0);
		w->alert_refused = PQgetvalue(r, i, 10)[0] == 't';
		w->alert_behind = PQgetvalue(r, i, 11)[0] == 't';
		w->alert_amount_ms = get_i64(r, i, 12, 0);
		w->obs.lag.last_ms = get_i64(r, i, 13, LAG_NONE);
		w->obs.lag.bad_ms = get_i64(r, i, 14, 0);
	}
	PQclear(r);
	*out = rows;
	*n = (size_t)nt;
	return 0;
}

void liveness_store_clock_rows_free(struct clock_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].host);
	free(rows);
}

/* A statement that writes one alert and returns nothing. */
static int write_alert(PGconn *c, const char *sql, int n, const char *const *v, const char *what, char *err,
		       size_t errlen)
{
	PGresult *r = exec(c, sql, n, v);

	if (!ok(r))
		return pg_fail(err, errlen, what, c, r);
	PQclear(r);
	return 0;
}

int liveness_store_clock_open(PGconn *c, const char *host, const char *severity, const char *summary,
			      const json_t *evidence, int64_t now_ms, char *err, size_t errlen)
{
	char now_s[24];
	char *ev = json_dumps(evidence, JSON_COMPACT | JSON_REAL_PRECISION(12));

	if (!ev) {
		snprintf(err, errlen, "could not open clock_skew: out of memory");
		return -1;
	}
	snprintf(now_s, sizeof(now_s), "%" PRId64, now_ms);
	const char *v[5] = { host, severity, summary, ev, now_s };
	int rc = write_alert(c,
			     "INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, "
			     "updated_at, summary, evidence) VALUES ($1, NULL, 'clock_skew', $2, 'open', "
			     TS_FROM_MS("$5") ", " TS_FROM_MS("$5") ", now(), $3, $4::jsonb) "
			     "ON CONFLICT " ALERT_OPEN_KEY " WHERE state = 'open' DO UPDATE SET "
			     "severity = excluded.severity, summary = excluded.summary, evidence = excluded.evidence, "
			     "updated_at = now()",
			     5, v, "could not open clock_skew", err, errlen);
	free(ev);
	return rc;
}

int liveness_store_clock_update(PGconn *c, int64_t id, const char *severity, const char *summary,
				const json_t *evidence, char *err, size_t errlen)
{
	char id_s[24];
	char *ev = json_dumps(evidence, JSON_COMPACT | JSON_REAL_PRECISION(12));

	if (!ev) {
		snprintf(err, errlen, "could not update clock_skew: out of memory");
		return -1;
	}
	snprintf(id_s, sizeof(id_s), "%" PRId64, id);
	const char *v[4] = { id_s, severity, summary, ev };
	int rc = write_alert(c,
			     "UPDATE alerts SET severity = $2, summary = $3, evidence = $4::jsonb, updated_at = now() "
			     "WHERE id = $1::bigint AND state = 'open'",
			     4, v, "could not update clock_skew", err, errlen);
	free(ev);
	return rc;
}

int liveness_store_clock_resolve(PGconn *c, int64_t id, int64_t now_ms, char *err, size_t errlen)
{
	char id_s[24], now_s[24];

	snprintf(id_s, sizeof(id_s), "%" PRId64, id);
	snprintf(now_s, sizeof(now_s), "%" PRId64, now_ms);
	const char *v[2] = { id_s, now_s };
	return write_alert(c,
			   "UPDATE alerts SET state = 'resolved', ended_at = greatest(opened_at, " TS_FROM_MS("$2")
			   "), updated_at = now() WHERE id = $1::bigint AND state = 'open'",
			   2, v, "could not resolve clock_skew", err, errlen);
}

/* The "clock" object of a host with refusals but no clock_skew alert yet
 * (the tick opens one within its period). */
static json_t *refusal_clock(int64_t n, int64_t at_ms, int64_t ts_ms)
{
	bool ahead = ts_ms > at_ms;
	double d = (double)(ahead ? ts_ms - at_ms : at_ms - ts_ms) / 1000.0;

	return json_pack("{s:s,s:f,s:f,s:b,s:I}", "clock", ahead ? "ahead" : "behind", ahead ? "ahead_s" : "behind_s",
			 d, "offset_s", ahead ? -d : d, "samples_refused", 1, "refused", (json_int_t)n);
}

/* A host object for a host with no stored sample: the fields store_hosts
 * gives, empty. */
static json_t *unstored_host(const char *host, json_t *clock)
{
	return json_pack("{s:s,s:n,s:n,s:n,s:n,s:n,s:{},s:i,s:i,s:o}", "host", host, "last_seen", "last_seen_ts",
			 "boot_id", "kernel", "agent_version", "labels", "cgroups", 0, "samples", 0, "clock", clock);
}

static const char *host_of(const json_t *h)
{
	const char *s = json_string_value(json_object_get(h, "host"));
	return s ? s : "";
}

int liveness_store_add_clocks(PGconn *c, json_t *hosts, const char *only_host, char *err, size_t errlen)
{
	const char *v[1] = { only_host };
	PGresult *r = NULL;
	int rc = store_q(c,
			 "SELECT d.host, a.evidence::text, d.refused_n, d.refused_at_ms, d.refused_ts_ms, "
			 "d.refused_n > 0 AND d.refused_at_ms > d.seen_ms "
			 "FROM detector_state d LEFT JOIN alerts a ON a.host = d.host AND a.kind = 'clock_skew' "
			 "AND a.state = 'open' AND a.cgroup IS NULL "
			 "WHERE (a.id IS NOT NULL OR (d.refused_n > 0 AND d.refused_at_ms > d.seen_ms)) "
			 "AND ($1::text IS NULL OR d.host = $1) ORDER BY d.host COLLATE \"C\" LIMIT 10000",
			 1, v, 0, &r, "read hosts' clocks", err, errlen);
	if (rc != STORE_OK)
		return rc;
	size_t nh = json_array_size(hosts);
	json_t *merged = json_array();
	size_t k = 0;
	int nr = PQntuples(r);
	for (int i = 0; merged && i <= nr; i++) {
		const char *name = i < nr ? PQgetvalue(r, i, 0) : NULL;
		/* the hosts before this row's, with no clock to report */
		while (k < nh && (!name || strcmp(host_of(json_array_get(hosts, k)), name) < 0)) {
			json_t *h = json_array_get(hosts, k++);
			json_object_set_new(h, "clock", json_null());
			json_array_append(merged, h);
		}
		if (!name)
			break;
		/* samples being refused: the live count; else the alert's figures */
		json_t *clock = NULL;
		json_error_t je;
		int64_t nref = strtoll(PQgetvalue(r, i, 2), NULL, 10);
		if (PQgetvalue(r, i, 5)[0] == 't')
			clock = refusal_clock(nref, strtoll(PQgetvalue(r, i, 3), NULL, 10),
					      strtoll(PQgetvalue(r, i, 4), NULL, 10));
		else if (!PQgetisnull(r, i, 1))
			clock = json_loads(PQgetvalue(r, i, 1), 0, &je);
		json_object_del(clock, "hint");
		if (k < nh && strcmp(host_of(json_array_get(hosts, k)), name) == 0) {
			json_t *h = json_array_get(hosts, k++);
			json_object_set_new(h, "clock", clock ? clock : json_null());
			json_array_append(merged, h);
		} else if (nref > 0 && clock) {
			json_array_append_new(merged, unstored_host(name, clock));	/* every sample refused */
		} else {
			json_decref(clock);	/* a host forgotten meanwhile */
		}
	}
	PQclear(r);
	/* hosts gets the merged list (merged holds a reference to each) */
	if (!merged || json_array_clear(hosts) < 0 || json_array_extend(hosts, merged) < 0) {
		json_decref(merged);
		snprintf(err, errlen, "could not read hosts' clocks: out of memory");
		return STORE_EINTERNAL;
	}
	json_decref(merged);
	return STORE_OK;
}
