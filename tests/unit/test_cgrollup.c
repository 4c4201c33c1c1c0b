/* Tests of the cgroup rollups (store_cgrollup.c) against a real PostgreSQL
 * ($VMSCOPE_TEST_DB): for every rolled-up cgroup metric the rollup answer
 * equals the raw answer at 5-minute buckets (across a reboot, with a
 * not-yet-rolled-up tail read raw), two stores running the job at once and
 * a restart never roll a bucket up twice, the job picks up new buckets, a
 * long range reads rollups by itself, and retention drops old month
 * partitions. */
#include "harness.h"
#include "testdb.h"
#include "teststore.h"

#include "gen.h"
#include "store.h"
#include "store_cgrollup.h"

#include <math.h>
#include <pthread.h>
#include <time.h>

#define STEP 300000LL
#define NCG 3

static struct testdb db;

static int roll_pending(struct store *st, int64_t now, int min_pending, struct cgroll_stats *stats)
{
	char err[512];
	bool more = true;
	int rc = STORE_OK;
	while (rc == STORE_OK && more)
		rc = store_cgrollup_run(st, now, min_pending, 4, stats, &more, err, sizeof(err));
	if (rc != STORE_OK)
		fprintf(stderr, "cgrollup: %s\n", err);
	return rc;
}

static int roll(struct store *st, int64_t now, struct cgroll_stats *stats)
{
	return roll_pending(st, now, 1, stats);
}

/* Samples i0..i1-1 of a generated host at 10 s from t0, NCG cgroups, a
 * reboot (new boot_id, counters restart) at sample 300. */
static void load(struct store *st, const char *name, int64_t t0, int i0, int i1)
{
	struct gen_host *g = gen_host_new(name, NCG, 7);
	struct gen_host *g2 = gen_host_new(name, NCG, 8);
	struct sample s[40];
	size_t n = 0;
	for (int i = 0; i < i1; i++) {
		struct gen_host *cur = i < 300 ? g : g2;
		gen_host_step(cur, 10000);
		if (i < i0)
			continue;
		CHECK(gen_host_sample(cur, t0 + (int64_t)i * 10000 + 1234, &s[n]) == 0);
		if (i >= 300) {
			free(s[n].boot_id);
			s[n].boot_id = strdup("rebooted-boot-id-0000000000000000");
		}
		if (++n == 40 || i == i1 - 1) {
			CHECK_INT(teststore_put(st, s, n), STORE_OK);
			for (size_t k = 0; k < n; k++)
				sample_release(&s[k]);
			n = 0;
		}
	}
	gen_host_free(g);
	gen_host_free(g2);
}

/* NULL on an error; *never set when the cgroup never reported the metric
 * (the 404 of store_series, not an error here). */
static json_t *series(struct store *st, const char *host, const char *cg, const char *metric, int64_t since,
		      int64_t until, int points, int source, bool *never)
{
	struct series_query q = { host, cg, metric, since, until, points, source, 0 };
	char err[512];
	json_t *o = NULL;
	int rc = store_series(st, &q, &o, err, sizeof(err));
	*never = rc == STORE_ENOMETRIC;
	if (rc != STORE_OK && !*never)
		fprintf(stderr, "series %s %s: %s\n", cg, metric, err);
	return o;
}

static bool near(const json_t *a, const json_t *b, double rel)
{
	if (json_is_null(a) || json_is_null(b))
		return json_is_null(a) && json_is_null(b);
	double x = json_number_value(a), y = json_number_value(b);
	return fabs(x - y) <= rel * fmax(1.0, fmax(fabs(x), fabs(y)));
}

/* The first cgroup paths of host name (as stored). */
static int cgroup_paths(const char *name, char paths[NCG][256])
{
	PGconn *c = PQconnectdb(db.conninfo);
	const char *p[1] = { name };
	PGresult *r = PQexecParams(c, "SELECT path FROM cgroups g JOIN hosts h ON h.id = g.host_id "
				   "WHERE h.name = $1 ORDER BY path", 1, NULL, p, NULL, NULL, 0);
	int n = 0;
	for (int i = 0; PQresultStatus(r) == PGRES_TUPLES_OK && i < PQntuples(r) && n < NCG; i++)
		snprintf(paths[n++], 256, "%s", PQgetvalue(r, i, 0));
	PQclear(r);
	PQfinish(c);
	return n;
}

/* Every rolled-up metric of every cgroup of host name: the rollup answer
 * (SERIES_ROLLUP) equals the raw one at nb 5-minute buckets from t0.
 * Returns the number of non-null buckets compared. */
static int check_equal(struct store *st, const char *name, int64_t t0, int nb)
{
	char paths[NCG][256];
	int ncg = cgroup_paths(name, paths), nonnull = 0, nmetrics = 0;
	int64_t until = t0 + nb * STEP - 1;

	CHECK_INT(ncg, NCG);
	for (int g = 0; g < ncg; g++) {
		for (int m = 0; m < CGROLL_NSLOT; m++) {
			bool never_raw, never_rol;
			json_t *raw = series(st, name, paths[g], cgroll_metric[m], t0, until, nb, SERIES_RAW, &never_raw);
			json_t *rol = series(st, name, paths[g], cgroll_metric[m], t0, until, nb, SERIES_ROLLUP, &never_rol);
			/* a name this host never sent: a 404 either way */
			CHECK(never_raw == never_rol);
			if (never_raw && never_rol)
				continue;
			CHECK(raw && rol);
			if (!raw || !rol) {
				json_decref(raw);
				json_decref(rol);
				continue;
			}
			CHECK_STR(json_string_value(json_object_get(raw, "source")), "raw");
			json_t *rp = json_object_get(raw, "points"), *op = json_object_get(rol, "points");
			/* (a name this host never sent has no id and no rollup) */
			if (json_array_size(rp))
				CHECK_STR(json_string_value(json_object_get(rol, "source")), "rollup");
			nmetrics += json_array_size(rp) > 0;
			bool same = json_array_size(op) == json_array_size(rp);
			for (size_t i = 0; same && i < json_array_size(rp); i++) {
				json_t *a = json_array_get(rp, i), *b = json_array_get(op, i);
				/* float4 in the cells: 2^-24 relative, and a sum of those */
				same = near(json_array_get(a, 0), json_array_get(b, 0), 1e-12) &&
				       near(json_array_get(a, 1), json_array_get(b, 1), 1e-6) &&
				       near(json_array_get(a, 2), json_array_get(b, 2), 1e-6) &&
				       near(json_array_get(a, 3), json_array_get(b, 3), 1e-6);
				nonnull += !json_is_null(json_array_get(a, 1));
				if (!same) {
					char *x = json_dumps(a, JSON_COMPACT), *y = json_dumps(b, JSON_COMPACT);
					fprintf(stderr, "%s %s bucket %zu: raw %s rollup %s\n", paths[g],
						cgroll_metric[m], i, x, y);
					free(x);
					free(y);
				}
			}
			if (json_array_size(op) != json_array_size(rp))
				fprintf(stderr, "%s %s: %zu raw buckets, %zu rollup\n", paths[g], cgroll_metric[m],
					json_array_size(rp), json_array_size(op));
			CHECK(same);
			json_decref(raw);
			json_decref(rol);
		}
	}
	CHECK_INT(nmetrics, NCG * 18);	/* the v2 names; v1 and pre-5.9 ones absent */
	return nonnull;
}

struct runner {
	struct store *st;
	int64_t now;
	int rc;
	struct cgroll_stats stats;
};

static void *run_job(void *arg)
{
	struct runner *r = arg;
	r->rc = roll(r->st, r->now, &r->stats);
	return NULL;
}

static long long cells_of(const char *name)
{
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM cgroup_rollup_5m r JOIN cgroups g ON g.id = r.cgroup_id "
		 "JOIN hosts h ON h.id = g.host_id WHERE h.name = '%s'", name);
	return teststore_q1(db.conninfo, sql);
}

static long long mark_of(const char *name)
{
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT next_b5 FROM cgroup_rollup_done d JOIN hosts h ON h.id = d.host_id "
		 "WHERE h.name = '%s'", name);
	return teststore_q1(db.conninfo, sql);
}

static void test_retention(int64_t now)
{
	struct store *st = teststore_open(db.conninfo, 200, 400);
	CHECK(st != NULL);
	if (!st)
		return;
	int64_t old = (now - 100LL * 86400000) / STEP * STEP;
	load(st, "cg-old", old, 0, 40);	/* 400 s: the first bucket closes */
	struct cgroll_stats stats = { 0 };
	CHECK_INT(roll(st, now, &stats), STORE_OK);
	CHECK_INT(cells_of("cg-old"), NCG);
	store_close(st);

	st = teststore_open(db.conninfo, 200, 60);
	CHECK(st != NULL);
	if (!st)
		return;
	long long parts = teststore_q1(db.conninfo, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'cgroup_rollup_5m'::regclass");
	CHECK(parts >= 2);
	int n = 0;
	char err[256];
	CHECK_INT(store_drop_expired(st, now, &n, err, sizeof(err)), STORE_OK);
	CHECK(n >= 1);
	/* the 100-day-old month went with its partition; raw rows (200 days) stay */
	CHECK_INT(cells_of("cg-old"), 0);
	CHECK(teststore_q1(db.conninfo, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'cgroup_rollup_5m'::regclass") < parts);
	CHECK_INT(teststore_q1(db.conninfo, "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = 'cg-old'"), 40);
	CHECK(cells_of("cg-a") > 0);	/* this month's are kept */
	/* a store keeping 60 days does not roll up older buckets again */
	stats = (struct cgroll_stats){ 0 };
	load(st, "cg-old2", old, 0, 40);
	CHECK_INT(roll(st, now, &stats), STORE_OK);
	CHECK_INT(cells_of("cg-old2"), 0);
	store_close(st);
}

int main(void)
{
	testdb_create(&db);
	int64_t now = (int64_t)time(NULL) * 1000;
	int64_t t0 = (now - 3 * 3600 * 1000) / STEP * STEP;	/* 5-minute aligned */
	struct store *st = teststore_open(db.conninfo, 30, 400);
	CHECK(st != NULL);
	if (!st) {
		testdb_drop(&db);
		return harness_report("test_cgrollup");
	}
	load(st, "cg-a", t0, 0, 720);	/* 2 h: buckets 0..23, the last one still open */
	load(st, "cg-b", t0, 0, 720);

	/* part-way: only buckets ending by t0 + 65 min are closed */
	struct cgroll_stats stats = { 0 };
	/* waiting for 6 closed buckets: one chunk of 12, then bucket 12 waits */
	CHECK_INT(roll_pending(st, t0 + 65 * 60000, 6, &stats), STORE_OK);
	CHECK_INT(mark_of("cg-a"), t0 / STEP + 12);
	CHECK_INT(roll(st, t0 + 65 * 60000, &stats), STORE_OK);
	CHECK_INT(mark_of("cg-a"), t0 / STEP + 13);
	CHECK_INT(cells_of("cg-a"), 13 * NCG);
	CHECK_INT(stats.host_buckets, 2 * 13);
	/* rolled-up part plus raw tail equals raw */
	int nonnull = check_equal(st, "cg-a", t0, 24);
	CHECK(nonnull > 500);

	/* two stores ("servers") running the job at once: each bucket once */
	struct store *st2 = teststore_open(db.conninfo, 30, 400);
	CHECK(st2 != NULL);
	struct runner r1 = { .st = st, .now = now }, r2 = { .st = st2, .now = now };
	pthread_t t1, t2;
	CHECK(pthread_create(&t1, NULL, run_job, &r1) == 0);
	CHECK(pthread_create(&t2, NULL, run_job, &r2) == 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	CHECK_INT(r1.rc, STORE_OK);
	CHECK_INT(r2.rc, STORE_OK);
	CHECK_INT(r1.stats.host_buckets + r2.stats.host_buckets, 2 * 10);	/* buckets 13..22 */
	CHECK_INT(mark_of("cg-a"), t0 / STEP + 23);
	CHECK_INT(mark_of("cg-b"), t0 / STEP + 23);
	CHECK_INT(cells_of("cg-a"), 23 * NCG);
	CHECK_INT(cells_of("cg-b"), 23 * NCG);
	CHECK(check_equal(st, "cg-b", t0, 24) > 500);
	store_close(st2);
	store_close(st);

	/* a restart: nothing left to do until new samples close buckets */
	st = teststore_open(db.conninfo, 30, 400);
	CHECK(st != NULL);
	if (st) {
		stats = (struct cgroll_stats){ 0 };
		CHECK_INT(roll(st, now, &stats), STORE_OK);
		CHECK_INT(stats.host_buckets, 0);
		CHECK_INT(cells_of("cg-a"), 23 * NCG);
		load(st, "cg-a", t0, 720, 780);	/* 10 more minutes: buckets 23, 24 close */
		CHECK_INT(roll(st, now, &stats), STORE_OK);
		CHECK_INT(stats.host_buckets, 2);
		CHECK_INT(mark_of("cg-a"), t0 / STEP + 26 - 1);
		CHECK_INT(cells_of("cg-a"), 25 * NCG);
		CHECK(check_equal(st, "cg-a", t0, 26) > 500);

		/* a long range picks rollups by itself; a metric not rolled up reads raw */
		char paths[NCG][256];
		CHECK_INT(cgroup_paths("cg-a", paths), NCG);
		bool never;
		json_t *o = series(st, "cg-a", paths[0], "stat.workingset_refault_file", t0 - 2 * 86400000LL,
				   t0 + 86400000LL, 600, SERIES_AUTO, &never);
		CHECK_STR(json_string_value(json_object_get(o, "source")), "rollup");
		CHECK(json_array_size(json_object_get(o, "points")) > 10);
		json_decref(o);
		o = series(st, "cg-a", paths[0], "stat.pgfault", t0 - 2 * 86400000LL, t0 + 86400000LL, 600,
			   SERIES_AUTO, &never);
		CHECK_STR(json_string_value(json_object_get(o, "source")), "raw");
		json_decref(o);
		/* a short range stays raw */
		o = series(st, "cg-a", paths[0], "stat.workingset_refault_file", t0, t0 + 3600000LL, 60, SERIES_AUTO,
			   &never);
		CHECK_STR(json_string_value(json_object_get(o, "source")), "raw");
		json_decref(o);
		store_close(st);
	}
	test_retention(now);
	testdb_drop(&db);
	return harness_report("test_cgrollup");
}
