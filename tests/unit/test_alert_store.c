/* test_alert_store.c - the detectors through the real store and a real
 * PostgreSQL: alerts written in the ingest transaction, the state kept in
 * the owning server's memory and rebuilt from the checkpoint and the
 * stored samples after a restart, a rolled-back transaction or a host
 * moving between servers (the same alerts as an uninterrupted server), no
 * duplicate after a restart, stale samples do not reopen alerts, several
 * hosts in one transaction, host_silent from the tick, and every
 * GET /api/v1/alerts filter (CONTRACT.md §3).
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

/* A server: a store with the detector engine as its hook, wrapped so that
 * a feed can be made to fail (the transaction then rolls back). */
struct server {
	struct store *st;
	struct detect_engine *eng;
	struct store_hook real;
	int fail;
};

static const char *conninfo;

static int failing_feed(void *ctx, PGconn *conn, const struct store_hook_host *h, size_t n, int64_t v, char *err,
			size_t errlen)
{
	struct server *sv = ctx;
	int rc = sv->real.feed(sv->real.ctx, conn, h, n, v, err, errlen);
	if (rc == 0 && sv->fail) {
		snprintf(err, errlen, "refused by the test");
		return -1;
	}
	return rc;
}

static void *w_load(void *ctx, const char *host, const unsigned char *buf, size_t len, char *err, size_t errlen)
{
	struct server *sv = ctx;
	return sv->real.load(sv->real.ctx, host, buf, len, err, errlen);
}

static int w_save(void *ctx, const void *state, unsigned char **buf, size_t *len, int64_t *iv)
{
	struct server *sv = ctx;
	return sv->real.save(sv->real.ctx, state, buf, len, iv);
}

static void w_release(void *ctx, void *state)
{
	struct server *sv = ctx;
	sv->real.release(sv->real.ctx, state);
}

static int w_replay(void *ctx, PGconn *conn, void *state, int32_t host_id, const struct sample *s, char *err,
		    size_t errlen)
{
	struct server *sv = ctx;
	return sv->real.replay(sv->real.ctx, conn, state, host_id, s, err, errlen);
}

static void w_arrive(void *ctx, const void *state, int64_t now_ms, int64_t newest_ts_ms, struct host_lag *lag)
{
	struct server *sv = ctx;
	sv->real.arrive(sv->real.ctx, state, now_ms, newest_ts_ms, lag);
}

static void server_start(struct server *sv)
{
	char err[256];
	struct store_config cfg = { .conninfo = conninfo, .pool_size = 2, .schema_dir = "schema" };
	memset(sv, 0, sizeof(*sv));
	if (store_open(&sv->st, &cfg, err, sizeof(err)) != STORE_OK) {
		fprintf(stderr, "store_open: %s\n", err);
		exit(1);
	}
	sv->eng = detect_engine_new();
	detect_store_hook(sv->eng, &sv->real);
	store_set_hook(sv->st, &(struct store_hook){ .ctx = sv, .load = w_load, .save = w_save,
						     .release = w_release, .feed = failing_feed, .replay = w_replay,
						     .arrive = w_arrive });
}

/* A clean stop writes the checkpoints; a crash (kill -9) does not. */
static void server_stop(struct server *sv)
{
	store_close(sv->st);
	detect_engine_free(sv->eng);
}

/* One ingest request of n samples of t (the transaction fails when the
 * server is made to fail). Returns the store's code. */
static int batch(struct server *sv, struct trace *t, int n, int on)
{
	struct sample s[16];
	char err[256] = "";
	size_t fresh = 0;

	for (int i = 0; i < n; i++)
		make(t, 10, on, &s[i]);
	int rc = store_put_samples(sv->st, s, (size_t)n, &fresh, err, sizeof(err));
	if (rc != STORE_OK && !sv->fail)
		fprintf(stderr, "put: %s\n", err);
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
	struct server sv;
	struct trace t = { "db-07", T0, 0, 0 };

	server_start(&sv);
	CHECK_INT(batch(&sv, &t, 3, 0), STORE_OK);
	CHECK_INT(batch(&sv, &t, 1, 1), STORE_OK);	/* one critical hit */
	CHECK_INT(count(c, "SELECT count(*) FROM alerts"), 0);
	/* the server restarts between requests: the state is checkpointed */
	server_stop(&sv);
	CHECK(count(c, "SELECT length(state) FROM detector_state d JOIN hosts h ON h.id = d.host_id "
		       "WHERE h.name = 'db-07'") > 0);
	server_start(&sv);
	CHECK_INT(batch(&sv, &t, 1, 1), STORE_OK);	/* the second, 20 s of critical evidence: opens */
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
	server_stop(&sv);
	server_start(&sv);
	CHECK_INT(batch(&sv, &t, 4, 1), STORE_OK);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE kind = 'thrash'"), 1);

	/* a rolled-back request leaves no trace in alerts or in the state the
	 * server keeps: the same samples, committed, resolve the alert */
	struct trace saved = t;
	sv.fail = 1;
	CHECK(batch(&sv, &t, 9, 0) != STORE_OK);
	sv.fail = 0;
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE state = 'open' AND kind = 'thrash'"), 1);
	t = saved;
	CHECK_INT(batch(&sv, &t, 9, 0), STORE_OK);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE state = 'resolved' AND kind = 'thrash'"), 1);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE ended_at IS NULL AND state = 'resolved'"), 0);

	/* a stale sample (behind the state) is not fed: nothing reopens */
	struct trace old = { "db-07", T0 + 30, 0, 0 };
	old.refault = 1e9;
	old.psi_us = 1e12;
	CHECK_INT(batch(&sv, &old, 3, 1), STORE_OK);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE state = 'open'"), 0);
	server_stop(&sv);
}

/* The alerts and checkpoints of host "mv" fed through two servers that take
 * it from each other (each rebuilding the state the other left in memory
 * from a checkpoint, or from none, and the stored samples) equal those of
 * host "ref" fed the same samples through one server. A server killed
 * with SIGKILL: tests/e2e/test_owner_moves.sh. */
static void test_moving_host(PGconn *c)
{
	struct server a, b, r;
	struct trace mv = { "mv", T0, 0, 0 }, ref = { "ref", T0, 0, 0 };
	/* off, on (opens), off (resolves), on again (opens again) */
	static const int phase[] = { 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1 };
	enum { NP = sizeof(phase) / sizeof(phase[0]) };

	server_start(&a);
	server_start(&b);
	server_start(&r);
	for (int i = 0; i < NP; i++) {
		/* a, b, b, a, a, ... and a crash of b in the middle */
		struct server *to = (i / 2) % 2 ? &b : &a;
		int n;
		char err[256];
		if (i == 9)	/* a checkpoint to rebuild from, else from none */
			CHECK_INT(store_checkpoint(b.st, true, &n, err, sizeof(err)), STORE_OK);
		CHECK_INT(batch(to, &mv, 3, phase[i]), STORE_OK);
		CHECK_INT(batch(&r, &ref, 3, phase[i]), STORE_OK);
	}
	CHECK(count(c, "SELECT count(*) FROM alerts WHERE host = 'ref'") >= 2);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'mv'"),
		  count(c, "SELECT count(*) FROM alerts WHERE host = 'ref'"));
	CHECK_INT(count(c, "SELECT count(*) FROM alerts m JOIN alerts n ON n.host = 'ref' AND n.kind = m.kind "
			   "AND coalesce(n.cgroup, '') = coalesce(m.cgroup, '') AND n.state = m.state "
			   "AND n.severity = m.severity AND n.started_at = m.started_at "
			   "AND n.opened_at = m.opened_at AND n.ended_at IS NOT DISTINCT FROM m.ended_at "
			   "AND n.evidence = m.evidence WHERE m.host = 'mv'"),
		  count(c, "SELECT count(*) FROM alerts WHERE host = 'ref'"));
	server_stop(&a);
	server_stop(&b);
	server_stop(&r);
	/* the checkpoints agree too (they differ only in the ids of open
	 * alerts, so compared by size), and so do the 5-minute rollups */
	CHECK_INT(count(c, "SELECT count(*) FROM detector_state m JOIN hosts hm ON hm.id = m.host_id, "
			   "detector_state n JOIN hosts hn ON hn.id = n.host_id WHERE hm.name = 'mv' "
			   "AND hn.name = 'ref' AND length(m.state) = length(n.state) AND m.last_ts_ms = n.last_ts_ms "
			   "AND m.interval_ms = n.interval_ms"), 1);
	CHECK(count(c, "SELECT count(*) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = 'ref'") > 0);
	CHECK_INT(count(c, "SELECT count(*) FROM (SELECT bucket_ms, n, n0, s0, lo0, hi0, n2, s2, lo2, hi2 FROM rollup_5m r "
			   "JOIN hosts h ON h.id = r.host_id WHERE h.name = 'mv' EXCEPT SELECT bucket_ms, n, n0, s0, lo0, "
			   "hi0, n2, s2, lo2, hi2 FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = 'ref') x"),
		  0);
	CHECK_INT(count(c, "SELECT sum(n) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = 'mv'"),
		  NP * 3);
}

/* Several hosts in one transaction (as group commit makes them) give the
 * same alerts and states as the same samples one host per transaction. */
static void test_many_hosts(PGconn *c)
{
	struct server sv;
	struct trace a[3] = { { "m-a", T0, 0, 0 }, { "m-b", T0, 0, 0 }, { "m-c", T0, 0, 0 } };
	struct trace b[3] = { { "n-a", T0, 0, 0 }, { "n-b", T0, 0, 0 }, { "n-c", T0, 0, 0 } };
	char err[256] = "";

	server_start(&sv);
	for (int round = 0; round < 4; round++) {
		struct sample s[12];
		size_t n = 0, fresh = 0;
		for (int h = 0; h < 3; h++)
			for (int i = 0; i < 4; i++)
				make(&a[h], 10, round > 0 && h != 1, &s[n++]);
		CHECK_INT(store_put_samples(sv.st, s, n, &fresh, err, sizeof(err)), STORE_OK);
		CHECK_INT(fresh, n);
		for (size_t i = 0; i < n; i++)
			sample_release(&s[i]);
		for (int h = 0; h < 3; h++)
			CHECK_INT(batch(&sv, &b[h], 4, round > 0 && h != 1), STORE_OK);
	}
	server_stop(&sv);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host LIKE 'm-%' AND kind = 'thrash' AND state = 'open'"), 2);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'm-b'"), 0);
	/* same states (they differ only in the ids of open alerts, so compared
	 * by size) and the same alerts as one host at a time */
	CHECK_INT(count(c, "SELECT count(*) FROM detector_state m JOIN hosts hm ON hm.id = m.host_id "
			   "JOIN hosts hn ON hn.name = 'n' || substr(hm.name, 2) JOIN detector_state n ON n.host_id = hn.id "
			   "WHERE hm.name LIKE 'm-%' AND length(m.state) = length(n.state) AND length(m.state) > 0 "
			   "AND m.last_ts_ms = n.last_ts_ms AND m.interval_ms = n.interval_ms"), 3);
	int64_t nm = count(c, "SELECT count(*) FROM alerts WHERE host LIKE 'm-%'");
	CHECK(nm >= 2);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host LIKE 'n-%'"), nm);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts m JOIN alerts n ON n.host = 'n' || substr(m.host, 2) "
			   "AND n.kind = m.kind AND n.state = m.state AND n.severity = m.severity "
			   "AND n.started_at = m.started_at AND n.evidence = m.evidence WHERE m.host LIKE 'm-%'"), nm);
}

/* The overrides are read once and again only after they changed. */
static void test_overrides_cache(PGconn *c)
{
	struct server sv;
	struct trace t = { "ovr-1", T0, 0, 0 };

	server_start(&sv);
	CHECK_INT(batch(&sv, &t, 2, 0), STORE_OK);
	CHECK_INT(detect_engine_ovr_loads(sv.eng), 1);
	CHECK_INT(batch(&sv, &t, 2, 0), STORE_OK);
	sv.fail = 1;
	CHECK(batch(&sv, &t, 2, 0) != STORE_OK);
	sv.fail = 0;
	CHECK_INT(detect_engine_ovr_loads(sv.eng), 1);
	/* a change by any writer (here plain SQL) moves the version with it */
	exec_sql(c, "BEGIN");
	exec_sql(c, "INSERT INTO detector_overrides (host, kind, params) VALUES ('ovr-1', 'thrash', '{\"hold_s\": 60}')");
	exec_sql(c, "UPDATE detector_overrides_version SET v = v + 1");
	exec_sql(c, "COMMIT");
	CHECK_INT(batch(&sv, &t, 2, 0), STORE_OK);
	CHECK_INT(detect_engine_ovr_loads(sv.eng), 2);
	CHECK_INT(batch(&sv, &t, 2, 0), STORE_OK);
	CHECK_INT(detect_engine_ovr_loads(sv.eng), 2);
	exec_sql(c, "BEGIN");
	exec_sql(c, "DELETE FROM detector_overrides WHERE host = 'ovr-1'");
	exec_sql(c, "UPDATE detector_overrides_version SET v = v + 1");
	exec_sql(c, "COMMIT");
	CHECK_INT(batch(&sv, &t, 2, 0), STORE_OK);
	CHECK_INT(detect_engine_ovr_loads(sv.eng), 3);
	/* a change rolled back leaves the version as it was */
	exec_sql(c, "BEGIN");
	exec_sql(c, "DELETE FROM detector_overrides");
	exec_sql(c, "UPDATE detector_overrides_version SET v = v + 1");
	exec_sql(c, "ROLLBACK");
	CHECK_INT(batch(&sv, &t, 2, 0), STORE_OK);
	CHECK_INT(detect_engine_ovr_loads(sv.eng), 3);
	server_stop(&sv);
}

static void test_adopt_open(PGconn *c)
{
	/* an open alert the engine's state does not know of (state lost) is
	 * adopted, not duplicated */
	struct server sv;
	struct trace t = { "web-2", T0, 0, 0 };
	server_start(&sv);
	CHECK_INT(batch(&sv, &t, 1, 0), STORE_OK);	/* the host exists */
	exec_sql(c, "INSERT INTO alerts (host_id, host, kind, severity, state, started_at, opened_at, "
			   "updated_at, summary) SELECT id, 'web-2', 'thrash', 'warning', 'open', now(), now(), "
			   "now(), 'old' FROM host_names WHERE name = 'web-2'");
	CHECK_INT(batch(&sv, &t, 5, 1), STORE_OK);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'web-2' AND kind = 'thrash'"), 1);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'web-2' AND kind = 'thrash' AND severity = 'critical'"), 1);
	server_stop(&sv);
}

/* host_silent is judged by arrival (the server's clock), not by sample
 * times: these samples are dated 2025 and arrive now (liveness.h). */
static void test_silent(PGconn *c)
{
	struct server sv;
	struct trace t = { "quiet", T0, 0, 0 };
	char err[256];

	server_start(&sv);
	CHECK_INT(batch(&sv, &t, 2, 0), STORE_OK);
	struct detect_engine *eng = sv.eng;
	int64_t seen = count(c, "SELECT seen_ms FROM hosts WHERE name = 'quiet'");
	CHECK(seen > (int64_t)(T0 * 1000) + 365LL * 86400 * 1000 / 2);	/* the arrival, not the sample time */
	/* the other tests' hosts are not judged here */
	exec_sql(c, "UPDATE hosts SET silent = true WHERE name <> 'quiet'");
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
			   "'epoch'::timestamptz + (SELECT seen_ms FROM hosts WHERE name = 'quiet') "
			   "* interval '1 millisecond'"), 1);
	CHECK_INT(count(c, "SELECT count(*) FROM notify_outbox o JOIN alerts a ON a.id = o.alert_id "
			   "WHERE a.kind = 'host_silent' AND o.event = 'open'"), 1);
	CHECK_INT(count(c, "SELECT count(*) FROM hosts WHERE name = 'quiet' AND silent"), 1);
	/* the host posts again: resolved at its arrival, which is before this
	 * test's future tick: clamped, never before the alert opened */
	CHECK_INT(batch(&sv, &t, 1, 0), STORE_OK);
	CHECK_INT(count(c, "SELECT count(*) FROM hosts WHERE name = 'quiet' AND silent"), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE kind = 'host_silent' AND state = 'resolved' "
			   "AND ended_at = opened_at"), 1);
	/* and the table itself refuses an alert that ends before it opened */
	PGresult *r = PQexec(c, "UPDATE alerts SET ended_at = opened_at - interval '1 s' WHERE kind = 'host_silent'");
	CHECK_STR(PQresultErrorField(r, PG_DIAG_SQLSTATE), "23514");
	PQclear(r);
	server_stop(&sv);
}

/* A clock stepped back: the host's new samples are older than its
 * newest, and then the same again (every sample stored already); each
 * post is an arrival all the same, written with the host's row, or the
 * host would be called silent while it posts. */
static void test_step_back(PGconn *c)
{
	struct server sv;
	struct trace t = { "stepped", T0, 0, 0 };
	char err[256];
	struct timespec pause = { 0, 20 * 1000 * 1000 };

	server_start(&sv);
	CHECK_INT(batch(&sv, &t, 3, 0), STORE_OK);
	int64_t seen = count(c, "SELECT seen_ms FROM hosts WHERE name = 'stepped'");
	int64_t last = count(c, "SELECT last_ts_ms FROM hosts WHERE name = 'stepped'");
	nanosleep(&pause, NULL);
	t.ts -= 300;	/* back 5 minutes */
	double back = t.ts;
	CHECK_INT(batch(&sv, &t, 2, 0), STORE_OK);
	CHECK(count(c, "SELECT seen_ms FROM hosts WHERE name = 'stepped'") > seen);
	CHECK_INT(count(c, "SELECT last_ts_ms FROM hosts WHERE name = 'stepped'"), last);
	CHECK(count(c, "SELECT lag_last_ms FROM hosts WHERE name = 'stepped'") > 0);
	int64_t now = count(c, "SELECT seen_ms FROM hosts WHERE name = 'stepped'");
	CHECK_INT(detect_tick(sv.eng, c, now + 30000, true, err, sizeof(err)), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'stepped' AND kind = 'host_silent'"), 0);
	/* silent by a future tick, then the same two samples again: only
	 * duplicates, still an arrival, and host_silent resolves at it */
	CHECK_INT(detect_tick(sv.eng, c, now + 61000, true, err, sizeof(err)), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'stepped' AND kind = 'host_silent' "
			   "AND state = 'open'"), 1);
	nanosleep(&pause, NULL);
	t.ts = back;
	int64_t nsamples = count(c, "SELECT samples FROM hosts WHERE name = 'stepped'");
	CHECK_INT(batch(&sv, &t, 2, 0), STORE_OK);
	CHECK_INT(count(c, "SELECT samples FROM hosts WHERE name = 'stepped'"), nsamples);
	CHECK(count(c, "SELECT seen_ms FROM hosts WHERE name = 'stepped'") > now);
	CHECK_INT(count(c, "SELECT count(*) FROM hosts WHERE name = 'stepped' AND silent"), 0);
	CHECK_INT(count(c, "SELECT count(*) FROM alerts WHERE host = 'stepped' AND kind = 'host_silent' "
			   "AND state = 'resolved'"), 1);
	CHECK_INT(count(c, "SELECT count(*) FROM notify_outbox o JOIN alerts a ON a.id = o.alert_id "
			   "WHERE a.host = 'stepped' AND a.kind = 'host_silent' AND o.event = 'resolve'"), 1);
	server_stop(&sv);
}

static void test_filters(PGconn *c)
{
	exec_sql(c, "TRUNCATE alerts");
	exec_sql(c,
		"INSERT INTO alerts (host_id, host, cgroup, kind, severity, state, started_at, opened_at, ended_at, "
		"updated_at, summary, evidence) VALUES "
		"(0, 'h1', NULL, 'thrash', 'warning', 'resolved', '2026-01-01T00:00:00Z', '2026-01-01T00:00:30Z', "
		" '2026-01-01T01:00:00Z', now(), 's1', '{\"a\":1}'),"
		"(0, 'h1', '/app', 'swap_imbalance', 'critical', 'open', '2026-01-02T00:00:00.250Z', "
		" '2026-01-02T00:00:30Z', NULL, now(), 's2', '{}'),"
		"(0, 'h2', NULL, 'thrash', 'critical', 'open', '2026-01-03T00:00:00Z', '2026-01-03T00:00:30Z', "
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

int main(void)
{
	struct testdb db;
	testdb_create(&db);
	conninfo = db.conninfo;
	PGconn *c = PQconnectdb(db.conninfo);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "could not connect to the test database: %s", PQerrorMessage(c));
		return 1;
	}

	test_lifecycle(c);
	test_moving_host(c);
	test_many_hosts(c);
	test_overrides_cache(c);
	test_adopt_open(c);
	test_silent(c);
	test_step_back(c);
	test_filters(c);
	PQfinish(c);
	testdb_drop(&db);
	return harness_report("test_alert_store");
}
