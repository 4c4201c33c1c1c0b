/* test_alert_store.c - the detectors against a real PostgreSQL: alerts and
 * state written in the ingest transaction, no duplicate after an engine
 * restart, nothing kept from a rolled-back transaction, stale samples do
 * not reopen alerts, the row lock serialises a host, host_silent from the
 * tick, and every GET /api/v1/alerts filter (CONTRACT.md §3).
 * Needs VMSCOPE_TEST_DB (fails without it). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alert_store.h"
#include "detect.h"
#include "store_internal.h"
#include "harness.h"
#include "testdb.h"
#include "sample.h"

#define T0 1764518400.0

static int exec_sql(PGconn *c, const char *sql)
{
	char err[256];
	/* the hook's state update may still be in flight (detect.h) */
	if (store_pipe_finish(c, NULL, err, sizeof(err)) != STORE_OK)
		fprintf(stderr, "sql: before %.80s: %s\n", sql, err);
	PGresult *r = PQexec(c, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
	if (!ok)
		fprintf(stderr, "sql: %.80s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	return ok ? 0 : -1;
}

/* Applies one of the detectors' migrations (run from the source root). */
static int apply(PGconn *c, const char *path)
{
	static char sql[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		fprintf(stderr, "could not open %s (run from the source root)\n", path);
		return -1;
	}
	n = fread(sql, 1, sizeof(sql) - 1, f);
	fclose(f);
	sql[n] = '\0';
	return exec_sql(c, sql);
}


/* Seed 000 shape: refaults 4100/s, PSI some 30%, while on; idle when off. */
struct trace {
	const char *host;
	double ts, refault, psi_us;
};

static void make(struct trace *t, double dt, int on, struct sample *s)
{
	char err[SAMPLE_ERR_MAX];

	t->ts += dt;
	if (on) {
		t->refault += 4100 * dt;
		t->psi_us += 0.30 * dt * 1e6;
	}
	json_t *o = json_pack(
		"{s:s,s:s,s:f,s:i,s:{s:I,s:I,s:I,s:I,s:I,s:I},s:{s:I,s:I,s:I},"
		"s:{s:{s:{s:f,s:f,s:f,s:I},s:{s:f,s:f,s:f,s:I}}}}",
		"host", t->host, "boot_id", "b", "ts", t->ts, "interval_s", 10,
		"vmstat", "workingset_refault_file", (json_int_t)t->refault,
		"workingset_refault_anon", (json_int_t)0, "pgscan_kswapd", (json_int_t)(t->refault * 1.2),
		"pgscan_file", (json_int_t)(t->refault * 1.2), "pgscan_anon", (json_int_t)0,
		"nr_inactive_anon", (json_int_t)500000,
		"meminfo", "MemTotal", (json_int_t)8388608, "SwapTotal", (json_int_t)4194304,
		"SwapFree", (json_int_t)4194304,
		"psi", "memory", "some", "avg10", 0.0, "avg60", 0.0, "avg300", 0.0, "total", (json_int_t)t->psi_us,
		"full", "avg10", 0.0, "avg60", 0.0, "avg300", 0.0, "total", (json_int_t)0);
	if (!o || sample_from_json(s, o, err) < 0) {
		fprintf(stderr, "trace: %s\n", err);
		exit(2);
	}
	json_decref(o);
}

/* One ingest transaction of n samples of t; commit or roll back. */
static int batch(PGconn *c, struct detect_engine *eng, struct trace *t, int n, int on, int commit)
{
	struct sample s[16];
	const struct sample *p[16];
	char err[256] = "";
	int rc;

	for (int i = 0; i < n; i++) {
		make(t, 10, on, &s[i]);
		p[i] = &s[i];
	}
	exec_sql(c, "BEGIN");
	rc = detect_store_hook(eng, c, p, (size_t)n, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "hook: %s\n", err);
	exec_sql(c, commit && rc == 0 ? "COMMIT" : "ROLLBACK");
	for (int i = 0; i < n; i++)
		sample_release(&s[i]);
	return rc;
}

static json_t *query(PGconn *c, const char *host, const char *kind, const char *state,
		     int64_t since, int64_t until, int limit)
{
	struct alert_query q = { host, NULL, kind, state, since, until, limit };
	json_t *out = NULL;
	char err[256];
	store_pipe_finish(c, NULL, NULL, 0);	/* the hook's state update (detect.h) */
	if (alert_store_query(c, &q, &out, err, sizeof(err)) < 0)
		fprintf(stderr, "query: %s\n", err);
	return out;
}

static int64_t count(PGconn *c, const char *sql)
{
	store_pipe_finish(c, NULL, NULL, 0);	/* the hook's state update (detect.h) */
	PGresult *r = PQexec(c, sql);
	int64_t n = PQresultStatus(r) == PGRES_TUPLES_OK ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : -1;
	PQclear(r);
	return n;
}

static void test_lifecycle(PGconn *c)
{
	struct detect_engine *eng = detect_engine_new();
	struct trace t = { "db-07", T0, 0, 0 };

	CHECK_INT(batch(c, eng, &t, 3, 0, 1), 0);
	CHECK_INT(batch(c, eng, &t, 1, 1, 1), 0);	/* one critical hit */
	CHECK_INT(count(c, "SELECT count(*) FROM alerts"), 0);
	/* the engine "restarts" between requests: state is in the database */
	detect_engine_free(eng);
	eng = detect_engine_new();
	CHECK_INT(batch(c, eng, &t, 1, 1, 1), 0);	/* the second, 20 s of critical evidence: opens */
	json_t *a = query(c, "db-07", "thrash", "open", INT64_MIN, INT64_MAX, 100);
	json_t *arr = json_object_get(a, "alerts");
	CHECK_INT(json_array_size(arr), 1);
	json_t *al = json_array_get(arr, 0);
	CHECK_STR(json_string_value(json_object_get(al, "started_at")), "2025-11-30T16:00:40Z");
	CHECK_STR(json_string_value(json_object_get(al, "opened_at")), "2025-11-30T16:00:50Z");
	CHECK(json_is_null(json_object_get(al, "ended_at")));
	CHECK(json_is_null(json_object_get(al, "cgroup")));
	CHECK_STR(json_string_value(json_object_get(al, "severity")), "critical");
	CHECK_CONTAINS(json_string_value(json_object_get(al, "summary")), "4100 pages/s");
	CHECK(json_number_value(json_object_get(json_object_get(al, "evidence"), "workingset_refault_file_per_s")) == 4100);
	json_decref(a);

	/* ongoing across another restart: no duplicate alert */
	detect_engine_free(eng);
	eng = detect_engine_new();
	CHECK_INT(batch(c, eng, &t, 4, 1, 1), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE kind = 'thrash'"), 1);

	/* a rolled-back request leaves no trace in alerts or state */
	struct trace saved = t;
	CHECK_INT(batch(c, eng, &t, 9, 0, 0), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE state = 'open' AND kind = 'thrash'"), 1);
	t = saved;
	CHECK_INT(batch(c, eng, &t, 9, 0, 1), 0);	/* the same, committed: resolves */
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE state = 'resolved' AND kind = 'thrash'"), 1);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE ended_at IS NULL AND state = 'resolved'"), 0);

	/* a stale sample (behind the state) is not fed: nothing reopens */
	struct trace old = { "db-07", T0 + 30, 0, 0 };
	old.refault = 1e9;
	old.psi_us = 1e12;
	CHECK_INT(batch(c, eng, &old, 3, 1, 1), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE state = 'open'"), 0);
	detect_engine_free(eng);
}

static void test_row_lock(PGconn *c, const char *conninfo)
{
	PGconn *c2 = PQconnectdb(conninfo);
	/* sorted by name, one of them new */
	struct det_state_row rows[3] = { { .host = "db-07" }, { .host = "new-1" }, { .host = "quiet-x" } };
	int64_t v = -2;
	char err[256];

	CHECK(PQstatus(c2) == CONNECTION_OK);
	exec_sql(c, "BEGIN");
	CHECK_INT(alert_store_lock_states(c, rows, 3, &v, err, sizeof(err)), 0);
	CHECK(v >= 1);
	CHECK(rows[0].len > 0);
	CHECK(rows[0].last_ts_ms > 0);
	CHECK_INT(rows[1].len, 0);	/* created, empty */
	CHECK(rows[1].buf == NULL);
	CHECK_INT(rows[2].len, 0);
	for (int i = 0; i < 3; i++)
		free(rows[i].buf);
	exec_sql(c2, "BEGIN");
	exec_sql(c2, "SET LOCAL lock_timeout = '200ms'");
	/* a second request for the same host waits for the first */
	struct det_state_row one = { .host = "db-07" };
	CHECK_INT(alert_store_lock_states(c2, &one, 1, &v, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "lock");
	CHECK(one.buf == NULL);
	exec_sql(c2, "ROLLBACK");
	exec_sql(c, "ROLLBACK");	/* the new rows go too */
	CHECK_INT(count(c, "SELECT count(*) FROM detector_state WHERE host IN ('new-1', 'quiet-x')"), 0);
	PQfinish(c2);
}

/* Several hosts in one transaction (as group commit makes them) give the
 * same alerts and states as the same samples one host per transaction. */
static void test_many_hosts(PGconn *c)
{
	struct detect_engine *eng = detect_engine_new();
	struct trace a[3] = { { "m-a", T0, 0, 0 }, { "m-b", T0, 0, 0 }, { "m-c", T0, 0, 0 } };
	struct trace b[3] = { { "n-a", T0, 0, 0 }, { "n-b", T0, 0, 0 }, { "n-c", T0, 0, 0 } };
	char err[256] = "";

	for (int round = 0; round < 4; round++) {
		struct sample s[12];
		const struct sample *p[12];
		size_t n = 0;
		for (int h = 0; h < 3; h++)
			for (int i = 0; i < 4; i++) {
				make(&a[h], 10, round > 0 && h != 1, &s[n]);
				p[n] = &s[n];
				n++;
			}
		exec_sql(c, "BEGIN");
		CHECK_INT(detect_store_hook(eng, c, p, n, err, sizeof(err)), 0);
		exec_sql(c, "COMMIT");
		for (size_t i = 0; i < n; i++)
			sample_release(&s[i]);
		for (int h = 0; h < 3; h++)
			CHECK_INT(batch(c, eng, &b[h], 4, round > 0 && h != 1, 1), 0);
	}
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host LIKE 'm-%' AND kind = 'thrash' AND state = 'open'"), 2);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'm-b'"), 0);
	/* same states (they differ only in the ids of open alerts, so compared
	 * by size) and the same alerts as one host at a time */
	CHECK_INT(count(c, "SELECT count(*) FROM detector_state m JOIN detector_state n "
			   "ON n.host = 'n' || substr(m.host, 2) WHERE m.host LIKE 'm-%' "
			   "AND length(m.state) = length(n.state) AND length(m.state) > 0 "
			   "AND m.last_ts_ms = n.last_ts_ms AND m.interval_ms = n.interval_ms"), 3);
	int64_t nm = count(c, "SELECT count(*) FROM alerts WHERE host LIKE 'm-%'");
	CHECK(nm >= 2);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host LIKE 'n-%'"), nm);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts m JOIN alerts n ON n.host = 'n' || substr(m.host, 2) "
			   "AND n.kind = m.kind AND n.state = m.state AND n.severity = m.severity "
			   "AND n.started_at = m.started_at AND n.evidence = m.evidence WHERE m.host LIKE 'm-%'"), nm);
	detect_engine_free(eng);
}

/* The overrides are read once and again only after they changed. */
static void test_overrides_cache(PGconn *c)
{
	struct detect_engine *eng = detect_engine_new();
	struct trace t = { "ovr-1", T0, 0, 0 };

	CHECK_INT(batch(c, eng, &t, 2, 0, 1), 0);
	CHECK_INT(detect_engine_ovr_loads(eng), 1);
	CHECK_INT(batch(c, eng, &t, 2, 0, 1), 0);
	CHECK_INT(batch(c, eng, &t, 2, 0, 0), 0);
	CHECK_INT(detect_engine_ovr_loads(eng), 1);
	/* a change by anyone (here plain SQL) moves the version */
	exec_sql(c, "INSERT INTO detector_overrides (host, kind, params) VALUES ('ovr-1', 'thrash', '{\"hold_s\": 60}')");
	CHECK_INT(batch(c, eng, &t, 2, 0, 1), 0);
	CHECK_INT(detect_engine_ovr_loads(eng), 2);
	CHECK_INT(batch(c, eng, &t, 2, 0, 1), 0);
	CHECK_INT(detect_engine_ovr_loads(eng), 2);
	exec_sql(c, "DELETE FROM detector_overrides WHERE host = 'ovr-1'");
	CHECK_INT(batch(c, eng, &t, 2, 0, 1), 0);
	CHECK_INT(detect_engine_ovr_loads(eng), 3);
	/* a change rolled back leaves the version as it was */
	exec_sql(c, "BEGIN");
	exec_sql(c, "DELETE FROM detector_overrides");
	exec_sql(c, "ROLLBACK");
	CHECK_INT(batch(c, eng, &t, 2, 0, 1), 0);
	CHECK_INT(detect_engine_ovr_loads(eng), 3);
	detect_engine_free(eng);
}

static void test_adopt_open(PGconn *c)
{
	/* an open alert the engine's state does not know of (state lost) is
	 * adopted, not duplicated */
	exec_sql(c, "INSERT INTO alerts (host, kind, severity, state, started_at, opened_at, "
			   "updated_at, summary) VALUES ('web-2', 'thrash', 'warning', 'open', now(), now(), "
			   "now(), 'old')");
	struct detect_engine *eng = detect_engine_new();
	struct trace t = { "web-2", T0, 0, 0 };
	CHECK_INT(batch(c, eng, &t, 6, 1, 1), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'web-2' AND kind = 'thrash'"), 1);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'web-2' AND kind = 'thrash' AND severity = 'critical'"), 1);
	detect_engine_free(eng);
}

/* host_silent is judged by arrival (the server's clock), not by sample
 * times: these samples are dated 2025 and arrive now (liveness.h). */
static void test_silent(PGconn *c)
{
	struct detect_engine *eng = detect_engine_new();
	struct trace t = { "quiet", T0, 0, 0 };
	char err[256];

	CHECK_INT(batch(c, eng, &t, 2, 0, 1), 0);
	int64_t seen = count(c, "SELECT seen_ms FROM detector_state WHERE host = 'quiet'");
	CHECK(seen > (int64_t)(T0 * 1000) + 365LL * 86400 * 1000 / 2);	/* the arrival, not the sample time */
	CHECK_INT(detect_tick(eng, c, seen + 20000, true, err, sizeof(err)), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE kind = 'host_silent'"), 0);
	/* inside the grace period (judge_silence false) nobody is silent */
	CHECK_INT(detect_tick(eng, c, seen + 61000, false, err, sizeof(err)), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE kind = 'host_silent'"), 0);
	CHECK_INT(detect_tick(eng, c, seen + 61000, true, err, sizeof(err)), 0);
	CHECK_INT(detect_tick(eng, c, seen + 62000, true, err, sizeof(err)), 0);	/* still one */
	json_t *a = query(c, "quiet", "host_silent", "open", INT64_MIN, INT64_MAX, 10);
	json_t *al = json_array_get(json_object_get(a, "alerts"), 0);
	CHECK_INT(json_array_size(json_object_get(a, "alerts")), 1);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(al, "evidence"), "silent_s")), 61);
	json_decref(a);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE kind = 'host_silent' AND started_at = "
			   "'epoch'::timestamptz + (SELECT seen_ms FROM detector_state WHERE host = 'quiet') "
			   "* interval '1 millisecond'"), 1);
	CHECK_INT(count(c, "SELECT count(*) FROM detector_state WHERE host = 'quiet' AND silent"), 1);
	/* the host posts again: resolved at its arrival, which is before this
	 * test's future tick: clamped, never before the alert opened */
	CHECK_INT(batch(c, eng, &t, 1, 0, 1), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM detector_state WHERE host = 'quiet' AND silent"), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE kind = 'host_silent' AND state = 'resolved' "
			   "AND ended_at = opened_at"), 1);
	/* and the table itself refuses an alert that ends before it opened */
	PGresult *r = PQexec(c, "UPDATE alerts SET ended_at = opened_at - interval '1 s' WHERE kind = 'host_silent'");
	CHECK_STR(PQresultErrorField(r, PG_DIAG_SQLSTATE), "23514");
	PQclear(r);
	detect_engine_free(eng);
}

/* A clock stepped back: the host's new samples are older than its
 * detector state, so none is fed; its arrival still counts, or it would
 * be called silent while it posts. */
static void test_step_back(PGconn *c)
{
	struct detect_engine *eng = detect_engine_new();
	struct trace t = { "stepped", T0, 0, 0 };
	char err[256];

	CHECK_INT(batch(c, eng, &t, 3, 0, 1), 0);
	int64_t seen = count(c, "SELECT seen_ms FROM detector_state WHERE host = 'stepped'");
	int64_t last = count(c, "SELECT last_ts_ms FROM detector_state WHERE host = 'stepped'");
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	nanosleep(&pause, NULL);
	t.ts -= 300;	/* back 5 minutes */
	CHECK_INT(batch(c, eng, &t, 2, 0, 1), 0);
	CHECK(count(c, "SELECT seen_ms FROM detector_state WHERE host = 'stepped'") > seen);
	CHECK_INT(count(c, "SELECT last_ts_ms FROM detector_state WHERE host = 'stepped'"), last);
	CHECK(count(c, "SELECT lag_last_ms FROM detector_state WHERE host = 'stepped'") > 0);
	int64_t now = count(c, "SELECT seen_ms FROM detector_state WHERE host = 'stepped'");
	CHECK_INT(detect_tick(eng, c, now + 30000, true, err, sizeof(err)), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'stepped' AND kind = 'host_silent'"), 0);
	detect_engine_free(eng);
}

static void test_filters(PGconn *c)
{
	exec_sql(c, "TRUNCATE alerts");
	exec_sql(c,
		"INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, ended_at, "
		"updated_at, summary, evidence) VALUES "
		"('h1', NULL, 'thrash', 'warning', 'resolved', '2026-01-01T00:00:00Z', '2026-01-01T00:00:30Z', "
		" '2026-01-01T01:00:00Z', now(), 's1', '{\"a\":1}'),"
		"('h1', '/app', 'swap_imbalance', 'critical', 'open', '2026-01-02T00:00:00.250Z', "
		" '2026-01-02T00:00:30Z', NULL, now(), 's2', '{}'),"
		"('h2', NULL, 'thrash', 'critical', 'open', '2026-01-03T00:00:00Z', '2026-01-03T00:00:30Z', "
		" NULL, now(), 's3', '{}')");
	json_t *a = query(c, NULL, NULL, "all", INT64_MIN, INT64_MAX, 100);
	json_t *arr = json_object_get(a, "alerts");
	CHECK_INT(json_array_size(arr), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(arr, 0), "summary")), "s3");	/* newest first */
	CHECK_STR(json_string_value(json_object_get(json_array_get(arr, 1), "started_at")),
		  "2026-01-02T00:00:00.250Z");
	CHECK_STR(json_string_value(json_object_get(json_array_get(arr, 1), "cgroup")), "/app");
	CHECK_STR(json_string_value(json_object_get(json_array_get(arr, 2), "ended_at")), "2026-01-01T01:00:00Z");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(json_array_get(arr, 2), "evidence"), "a")), 1);
	json_decref(a);

	a = query(c, "h1", NULL, "all", INT64_MIN, INT64_MAX, 100);
	CHECK_INT(json_array_size(json_object_get(a, "alerts")), 2);
	json_decref(a);
	a = query(c, NULL, "thrash", "open", INT64_MIN, INT64_MAX, 100);
	CHECK_INT(json_array_size(json_object_get(a, "alerts")), 1);
	json_decref(a);
	a = query(c, NULL, NULL, "resolved", INT64_MIN, INT64_MAX, 100);
	CHECK_INT(json_array_size(json_object_get(a, "alerts")), 1);
	json_decref(a);
	/* overlap: 2026-01-01T00:30 .. 00:40 overlaps only the resolved h1 alert */
	a = query(c, NULL, NULL, "all", 1767227400000LL, 1767228000000LL, 100);
	CHECK_INT(json_array_size(json_object_get(a, "alerts")), 1);
	json_decref(a);
	/* since after everything started: the open ones still overlap */
	a = query(c, NULL, NULL, "all", 1798761600000LL, INT64_MAX, 100);
	CHECK_INT(json_array_size(json_object_get(a, "alerts")), 2);
	json_decref(a);
	a = query(c, NULL, NULL, "all", INT64_MIN, INT64_MAX, 1);
	CHECK_INT(json_array_size(json_object_get(a, "alerts")), 1);
	json_decref(a);
	struct alert_query q = { NULL, "/app", NULL, "all", INT64_MIN, INT64_MAX, 100 };
	char err[256];
	CHECK_INT(alert_store_query(c, &q, &a, err, sizeof(err)), 0);
	CHECK_INT(json_array_size(json_object_get(a, "alerts")), 1);
	json_decref(a);
	q.state = "bogus";
	CHECK_INT(alert_store_query(c, &q, &a, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "state");
}

/* Through the real storage layer: migrations (its own and ours), samples
 * and alerts in one transaction via the hook, store_alerts, a restart. */
static void test_through_store(void)
{
	struct testdb db;
	struct store *st = NULL;
	char err[256];
	struct trace t = { "int-1", (double)(time(NULL) - 3600), 0, 0 };

	testdb_create(&db);
	struct store_config cfg = { .conninfo = db.conninfo, .pool_size = 2, .schema_dir = "schema" };
	CHECK_INT(store_open(&st, &cfg, err, sizeof(err)), STORE_OK);
	if (!st) {
		fprintf(stderr, "store_open: %s\n", err);
		return;
	}
	struct detect_engine *eng = detect_engine_new();
	struct store_tx_hook hook = { detect_store_hook, eng, true, detect_hosts_heard };
	for (int round = 0; round < 5; round++) {
		if (round == 3) {	/* server restart */
			detect_engine_free(eng);
			store_close(st);
			CHECK_INT(store_open(&st, &cfg, err, sizeof(err)), STORE_OK);
			eng = detect_engine_new();
			hook.ctx = eng;
		}
		struct sample s[2];
		for (int i = 0; i < 2; i++)
			make(&t, 10, round > 0, &s[i]);
		size_t nfresh = 0;
		CHECK_INT(store_put_samples(st, s, 2, &hook, &nfresh, err, sizeof(err)), STORE_OK);
		CHECK_INT(nfresh, 2);
		/* a re-post of the same samples is harmless */
		CHECK_INT(store_put_samples(st, s, 2, &hook, &nfresh, err, sizeof(err)), STORE_OK);
		CHECK_INT(nfresh, 0);
		sample_release(&s[0]);
		sample_release(&s[1]);
	}
	struct alert_query q = { "int-1", NULL, "thrash", "all", INT64_MIN, INT64_MAX, 100 };
	json_t *out = NULL;
	CHECK_INT(store_alerts(st, &q, &out, err, sizeof(err)), STORE_OK);
	CHECK_INT(json_array_size(json_object_get(out, "alerts")), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(out, "alerts"), 0), "state")), "open");
	json_decref(out);
	q.state = "nope";
	CHECK_INT(store_alerts(st, &q, &out, err, sizeof(err)), STORE_EINVAL);
	detect_engine_free(eng);
	store_close(st);
	testdb_drop(&db);
}

int main(void)
{
	struct testdb db;
	testdb_create(&db);
	PGconn *c = PQconnectdb(db.conninfo);
	if (PQstatus(c) != CONNECTION_OK || apply(c, "schema/010_alerts.sql") < 0 ||
	    apply(c, "schema/011_detector_state.sql") < 0 || apply(c, "schema/012_detector_state_silent.sql") < 0 ||
	    apply(c, "schema/040_notify.sql") < 0 ||	/* silences: the alerts query reads them */
	    apply(c, "schema/050_overrides.sql") < 0 || apply(c, "schema/060_overrides_version.sql") < 0 ||
	    apply(c, "schema/090_liveness.sql") < 0 || apply(c, "schema/091_clock_hold.sql") < 0 ||
	    apply(c, "schema/092_fleet_alerts.sql") < 0) {	/* alerts.subject, silences of the fleet */
		fprintf(stderr, "could not prepare the test database: %s", PQerrorMessage(c));
		return 1;
	}

	test_lifecycle(c);
	test_row_lock(c, db.conninfo);
	test_many_hosts(c);
	test_overrides_cache(c);
	test_adopt_open(c);
	test_silent(c);
	test_step_back(c);
	test_filters(c);
	test_through_store();
	PQfinish(c);
	testdb_drop(&db);
	return harness_report("test_alert_store");
}
