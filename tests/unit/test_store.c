/* Tests of the storage layer against a real PostgreSQL ($VMSCOPE_TEST_DB):
 * migrations, ingest with duplicates and old partitions, the transaction
 * hook, series rates and downsampling, the host/cgroup/metric answers,
 * retention, an unreachable database, storage size per sample, and insert
 * throughput. */
#include "harness.h"
#include "testdb.h"

#include "dict.h"
#include "gen.h"
#include "store.h"
#include "store_internal.h"

#include <math.h>
#include <pthread.h>
#include <time.h>

static struct testdb db;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct store *open_store(const char *conninfo, int pool)
{
	struct store_config cfg = { .conninfo = conninfo, .pool_size = pool, .schema_dir = NULL, .retention_days = 30 };
	char err[512];
	struct store *st = NULL;
	int rc = store_open(&st, &cfg, err, sizeof(err));
	if (rc != STORE_OK)
		fprintf(stderr, "store_open: %s\n", err);
	return st;
}

/* Runs sql on the test database, returning the first column of the first
 * row as an integer (or -1). */
static long long q1(const char *sql)
{
	PGconn *c = PQconnectdb(db.conninfo);
	long long v = -1;
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	else if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
		fprintf(stderr, "q1: %s", PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	return v;
}

static void add(struct sset *m, const char *name, int64_t v)
{
	if (sset_add(m, dict_intern(name, strlen(name)), v) < 0)
		abort();
}

/* A sample of host at ts_ms with boot_id (may be NULL) and pairs of
 * (name, value) ended by NULL; cgroup fields go through addcg. */
static void mk(struct sample *s, const char *host, int64_t ts_ms, const char *boot_id, ...)
{
	va_list ap;
	sample_init(s);
	snprintf(s->host, sizeof(s->host), "%s", host);
	s->ts_ms = ts_ms;
	s->boot_id = boot_id ? strdup(boot_id) : NULL;
	va_start(ap, boot_id);
	const char *name;
	while ((name = va_arg(ap, const char *)))
		add(&s->m, name, va_arg(ap, int64_t));
	va_end(ap);
	sset_sort(&s->m);
}

static void addcg(struct sample *s, const char *path, const char *name, int64_t v)
{
	struct cgsample *cg = (struct cgsample *)sample_find_cgroup(s, path, 2);
	if (!cg)
		cg = sample_add_cgroup(s, strdup(path), 2);
	add(&cg->m, name, v);
	sset_sort(&cg->m);
}

/* As addcg, in the hierarchy of the given version (1 or 2). */
static void addcgv(struct sample *s, const char *path, int version, const char *name, int64_t v)
{
	struct cgsample *cg = (struct cgsample *)sample_find_cgroup(s, path, version);
	if (!cg)
		cg = sample_add_cgroup(s, strdup(path), version);
	add(&cg->m, name, v);
	sset_sort(&cg->m);
}

/* put with a hook (store_set_hook) for this call only, NULL: none */
static int put(struct store *st, struct sample *s, size_t n, const struct store_hook *hook, size_t *fresh)
{
	char err[512];
	size_t f = 0;
	if (hook)
		store_set_hook(st, hook);
	int rc = store_put_samples(st, s, n, &f, err, sizeof(err));
	if (hook)
		store_set_hook(st, &(struct store_hook){ 0 });
	if (rc != STORE_OK && !hook)
		fprintf(stderr, "put: %s\n", err);
	if (fresh)
		*fresh = f;
	return rc;
}

static void release(struct sample *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sample_release(&s[i]);
}

static json_t *series(struct store *st, const char *host, const char *cg, const char *metric, int64_t since,
		      int64_t until, int points, int *rc)
{
	struct series_query q = { host, cg, metric, since, until, points, SERIES_AUTO, 0 };
	char err[512];
	json_t *o = NULL;
	*rc = store_series(st, &q, &o, err, sizeof(err));
	if (*rc != STORE_OK && *rc != STORE_ENOTFOUND && *rc != STORE_ENOMETRIC)
		fprintf(stderr, "series: %s\n", err);
	return o;
}

/* value of point i, column col (NAN for null) */
static double pv(json_t *o, size_t i, size_t col)
{
	json_t *v = json_array_get(json_array_get(json_object_get(o, "points"), i), col);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static size_t npoints(json_t *o)
{
	return json_array_size(json_object_get(o, "points"));
}

/* midnight UTC two days ago, so test data sits in whole days in the past */
static int64_t base_ms(void)
{
	int64_t now = (int64_t)time(NULL) * 1000;
	return (now / 86400000 - 2) * 86400000;
}

static void test_migrations(void)
{
	struct store *a = open_store(db.conninfo, 2);
	CHECK(a != NULL);
	long long files = q1("SELECT count(*) FROM schema_migrations");
	CHECK(files >= 1);
	struct store *b = open_store(db.conninfo, 2);	/* second open: nothing to apply, no error */
	CHECK(b != NULL);
	CHECK_INT(q1("SELECT count(*) FROM schema_migrations"), files);
	store_close(a);
	store_close(b);
}

static void *open_thread(void *arg)
{
	struct testdb *d = arg;
	struct store *st = open_store(d->conninfo, 1);
	store_close(st);
	return st ? (void *)1 : NULL;
}

static void test_migrations_concurrent(void)
{
	struct testdb other;
	pthread_t t[6];
	void *ok[6];

	testdb_create(&other);
	for (int i = 0; i < 6; i++)
		pthread_create(&t[i], NULL, open_thread, &other);
	int good = 0;
	for (int i = 0; i < 6; i++) {
		pthread_join(t[i], &ok[i]);
		good += ok[i] != NULL;
	}
	CHECK_INT(good, 6);
	testdb_drop(&other);
}

static void test_put_and_duplicates(struct store *st)
{
	int64_t t0 = base_ms() + 1000;
	struct sample s[4];
	size_t fresh;
	int rc;

	mk(&s[0], "dup-host", t0, "b1", "vmstat.nr_free_pages", (int64_t)100, NULL);
	mk(&s[1], "dup-host", t0, "b1", "vmstat.nr_free_pages", (int64_t)999, NULL);	/* same ts: dropped */
	mk(&s[2], "dup-host", t0 + 10000, "b1", "vmstat.nr_free_pages", (int64_t)200, NULL);
	mk(&s[3], "dup-host", t0 + 5000, "b1", "vmstat.nr_free_pages", (int64_t)150, NULL);	/* out of order */
	CHECK_INT(put(st, s, 4, NULL, &fresh), STORE_OK);
	CHECK_INT(fresh, 3);
	CHECK_INT(put(st, s, 4, NULL, &fresh), STORE_OK);	/* replay: all duplicates, all accepted */
	CHECK_INT(fresh, 0);
	release(s, 4);
	/* a late copy with other values does not replace the stored one */
	mk(&s[0], "dup-host", t0, "b1", "vmstat.nr_free_pages", (int64_t)555, NULL);
	mk(&s[1], "dup-host", t0 + 2000, "b1", "vmstat.nr_free_pages", (int64_t)120, NULL);	/* new, late */
	CHECK_INT(put(st, s, 2, NULL, &fresh), STORE_OK);
	CHECK_INT(fresh, 1);
	release(s, 2);

	json_t *o = series(st, "dup-host", NULL, "vmstat.nr_free_pages", t0, t0 + 20000, 0, &rc);
	CHECK_INT(rc, STORE_OK);
	CHECK_INT(npoints(o), 4);
	CHECK(pv(o, 0, 1) == 100);
	CHECK(pv(o, 1, 1) == 120);
	CHECK(pv(o, 2, 1) == 150);
	CHECK(pv(o, 3, 1) == 200);
	CHECK(fabs(pv(o, 0, 0) - (double)t0 / 1000.0) < 1e-6);
	CHECK_STR(json_string_value(json_object_get(o, "kind")), "gauge");
	CHECK_STR(json_string_value(json_object_get(o, "unit")), "pages");
	json_decref(o);
	CHECK_INT(q1("SELECT samples FROM hosts WHERE name = 'dup-host'"), 4);

	/* the newest sample continues the delta chain across the late ones */
	mk(&s[0], "dup-host", t0 + 20000, "b1", "vmstat.nr_free_pages", (int64_t)210, NULL);
	CHECK_INT(put(st, s, 1, NULL, &fresh), STORE_OK);
	release(s, 1);
	o = series(st, "dup-host", NULL, "vmstat.nr_free_pages", t0 + 15000, t0 + 30000, 0, &rc);
	CHECK_INT(npoints(o), 1);
	CHECK(pv(o, 0, 1) == 210);
	json_decref(o);
}

static void test_old_partition(struct store *st)
{
	int64_t old = base_ms() - 20LL * 86400000 + 3600000;	/* 22 days ago */
	struct sample s;
	size_t fresh;
	int rc;
	char sql[256];
	time_t t = (time_t)(old / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);

	mk(&s, "old-host", old, NULL, "meminfo.MemFree", (int64_t)42, NULL);
	CHECK_INT(put(st, &s, 1, NULL, &fresh), STORE_OK);
	CHECK_INT(fresh, 1);
	sample_release(&s);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM pg_class WHERE relname = 'samples_%04d%02d%02d'",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
	CHECK_INT(q1(sql), 1);
	json_t *o = series(st, "old-host", NULL, "meminfo.MemFree", old - 1000, old + 1000, 0, &rc);
	CHECK_INT(npoints(o), 1);
	CHECK(pv(o, 0, 1) == 42);
	CHECK_STR(json_string_value(json_object_get(o, "unit")), "kB");
	json_decref(o);
}

struct hook_log {
	char hosts[16][HOST_NAME_MAXLEN + 1];
	int64_t ts[16];
	size_t n;
	int fail;
	long long rows_seen;	/* samples visible through the hook's connection */
};

static int hook_fn(void *ctx, PGconn *conn, const struct store_hook_host *hosts, size_t nhosts,
		   int64_t version, char *err, size_t errlen)
{
	struct hook_log *l = ctx;
	(void)version;
	for (size_t k = 0; k < nhosts; k++) {
		for (size_t i = 0; i < hosts[k].n && l->n < 16; i++, l->n++) {
			snprintf(l->hosts[l->n], sizeof(l->hosts[0]), "%s", hosts[k].fresh[i]->host);
			l->ts[l->n] = hosts[k].fresh[i]->ts_ms;
		}
	}
	store_pipe_finish(conn, NULL, NULL, 0);	/* the rows may still be on their way */
	PGresult *r = PQexec(conn, "SELECT count(*) FROM samples");
	l->rows_seen = PQresultStatus(r) == PGRES_TUPLES_OK ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : -1;
	PQclear(r);
	if (l->fail) {
		snprintf(err, errlen, "hook refused");
		return -1;
	}
	return 0;
}

static void test_hook(struct store *st)
{
	int64_t t0 = base_ms() + 2000;
	struct sample s[4];
	struct hook_log log = { 0 };
	struct store_hook hook = { .ctx = &log, .feed = hook_fn };
	size_t fresh;

	long long before = q1("SELECT count(*) FROM samples");
	mk(&s[0], "hook-b", t0 + 10000, NULL, "vmstat.pgfault", (int64_t)1, NULL);
	mk(&s[1], "hook-a", t0 + 10000, NULL, "vmstat.pgfault", (int64_t)1, NULL);
	mk(&s[2], "hook-b", t0, NULL, "vmstat.pgfault", (int64_t)1, NULL);
	mk(&s[3], "hook-b", t0, NULL, "vmstat.pgfault", (int64_t)2, NULL);	/* duplicate */
	log.fail = 1;
	CHECK(put(st, s, 4, &hook, &fresh) != STORE_OK);
	CHECK_INT(fresh, 0);
	CHECK_INT(log.n, 3);
	CHECK_INT(log.rows_seen, before + 3);	/* called after the insert */
	CHECK_INT(q1("SELECT count(*) FROM samples"), before);	/* rolled back */
	CHECK_INT(q1("SELECT count(*) FROM hosts WHERE name LIKE 'hook-%' AND samples > 0"), 0);
	int rc;
	json_t *o = series(st, "hook-a", NULL, "vmstat.pgfault", t0, t0 + 10000, 0, &rc);
	CHECK_INT(rc, STORE_ENOTFOUND);
	json_decref(o);

	memset(&log, 0, sizeof(log));
	CHECK_INT(put(st, s, 4, &hook, &fresh), STORE_OK);
	CHECK_INT(fresh, 3);
	CHECK_INT(log.n, 3);
	CHECK_STR(log.hosts[0], "hook-a");
	CHECK_STR(log.hosts[1], "hook-b");
	CHECK_STR(log.hosts[2], "hook-b");
	CHECK(log.ts[1] == t0 && log.ts[2] == t0 + 10000);
	release(s, 4);
}

/* A hybrid machine: the v1 memory controller and the v2 hierarchy report
 * the same path, v1 with memory.stat, v2 with memory.pressure. One path
 * reads as one cgroup; cgroup_version picks one hierarchy. */
static void test_hybrid_cgroup(struct store *st)
{
	int64_t t0 = base_ms() + 7000;
	struct sample s[6];
	char err[512];
	int rc;

	for (int i = 0; i < 6; i++) {
		mk(&s[i], "hybrid-host", t0 + i * 10000, "H", "vmstat.pgscan_kswapd", (int64_t)(i * 100), NULL);
		addcgv(&s[i], "/app.slice", 1, "stat.workingset_refault_file", (int64_t)(i * 500));
		addcgv(&s[i], "/app.slice", 1, "stat.cache", (int64_t)(1 << 20));
		addcgv(&s[i], "/app.slice", 2, "psi.some.avg10", (int64_t)(i * 100));
	}
	CHECK_INT(put(st, s, 6, NULL, NULL), STORE_OK);
	release(s, 6);

	json_t *m = NULL;
	CHECK_INT(store_metrics(st, "hybrid-host", "/app.slice", 0, &m, err, sizeof(err)), STORE_OK);
	json_t *names = json_object_get(m, "metrics");
	CHECK_INT(json_array_size(names), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(names, 0), "name")), "psi.some.avg10");
	CHECK_STR(json_string_value(json_object_get(json_array_get(names, 2), "name")), "stat.workingset_refault_file");
	CHECK_INT(json_array_size(json_object_get(m, "cgroup_versions")), 2);
	json_decref(m);
	CHECK_INT(store_metrics(st, "hybrid-host", "/app.slice", 2, &m, err, sizeof(err)), STORE_OK);
	CHECK_INT(json_array_size(json_object_get(m, "metrics")), 1);
	json_decref(m);

	/* each name from the hierarchy that has it */
	json_t *o = series(st, "hybrid-host", "/app.slice", "stat.workingset_refault_file", t0, t0 + 60000, 0, &rc);
	CHECK_INT(rc, STORE_OK);
	CHECK_INT(npoints(o), 6);
	CHECK(pv(o, 2, 1) == 50);
	json_decref(o);
	o = series(st, "hybrid-host", "/app.slice", "psi.some.avg10", t0, t0 + 60000, 0, &rc);
	CHECK_INT(rc, STORE_OK);
	CHECK_INT(npoints(o), 6);
	CHECK(fabs(pv(o, 3, 1) - 3.0) < 1e-9);
	json_decref(o);
	/* downsampled too */
	o = series(st, "hybrid-host", "/app.slice", "stat.cache", t0, t0 + 60000, 3, &rc);
	CHECK_INT(rc, STORE_OK);
	CHECK(npoints(o) >= 2);
	json_decref(o);
	/* only v2: its own names, and the v1 ones are not its */
	struct series_query q = { "hybrid-host", "/app.slice", "stat.cache", t0, t0 + 60000, 0, SERIES_AUTO, 2 };
	CHECK_INT(store_series(st, &q, &o, err, sizeof(err)), STORE_ENOMETRIC);
	q.metric = "psi.some.avg10";
	CHECK_INT(store_series(st, &q, &o, err, sizeof(err)), STORE_OK);
	CHECK_INT(npoints(o), 6);
	json_decref(o);
	q.cgroup = "/other.slice";
	CHECK_INT(store_series(st, &q, &o, err, sizeof(err)), STORE_ENOTFOUND);
	CHECK_CONTAINS(err, "cgroup v2");
}

static void test_rates(struct store *st)
{
	int64_t t0 = base_ms() + 3000;
	/* counter: +100/10s, then a reset (goes backwards), then a boot_id change */
	int64_t vals[] = { 1000, 2000, 3000, 500, 1500, 100, 1100 };
	const char *boots[] = { "A", "A", "A", "A", "A", "B", "B" };
	struct sample s[7];
	int rc;

	for (int i = 0; i < 7; i++) {
		mk(&s[i], "rate-host", t0 + i * 10000, boots[i], "vmstat.pgscan_kswapd", vals[i],
		   "psi.memory.some.avg10", (int64_t)(i * 150), "psi.memory.some.total", (int64_t)(i * 50000), NULL);
		addcg(&s[i], "/a.slice", "stat.pgfault", (int64_t)(i * 20));
		addcg(&s[i], "/a.slice", "stat.anon", (int64_t)4096);
	}
	CHECK_INT(put(st, s, 7, NULL, NULL), STORE_OK);
	release(s, 7);
	json_t *o = series(st, "rate-host", NULL, "vmstat.pgscan_kswapd", t0, t0 + 60000, 0, &rc);
	CHECK_STR(json_string_value(json_object_get(o, "kind")), "rate");
	CHECK_STR(json_string_value(json_object_get(o, "unit")), "pages/s");
	CHECK_INT(npoints(o), 7);
	CHECK(isnan(pv(o, 0, 1)));	/* no predecessor */
	CHECK(pv(o, 1, 1) == 100);
	CHECK(pv(o, 2, 1) == 100);
	CHECK(isnan(pv(o, 3, 1)));	/* went backwards */
	CHECK(pv(o, 4, 1) == 100);
	CHECK(isnan(pv(o, 5, 1)));	/* new boot */
	CHECK(pv(o, 6, 1) == 100);
	json_decref(o);
	/* the first point in range uses the sample before it */
	o = series(st, "rate-host", NULL, "vmstat.pgscan_kswapd", t0 + 10000, t0 + 20000, 0, &rc);
	CHECK_INT(npoints(o), 2);
	CHECK(pv(o, 0, 1) == 100);
	json_decref(o);
	o = series(st, "rate-host", NULL, "psi.memory.some.avg10", t0, t0 + 60000, 0, &rc);
	CHECK_STR(json_string_value(json_object_get(o, "unit")), "%");
	CHECK(fabs(pv(o, 2, 1) - 3.0) < 1e-9);	/* 300 centi-percent */
	json_decref(o);
	o = series(st, "rate-host", NULL, "psi.memory.some.total", t0, t0 + 60000, 0, &rc);
	CHECK_STR(json_string_value(json_object_get(o, "unit")), "us/s");
	CHECK(fabs(pv(o, 2, 1) - 5000.0) < 1e-9);
	json_decref(o);
	o = series(st, "rate-host", "/a.slice", "stat.pgfault", t0, t0 + 60000, 0, &rc);
	CHECK_INT(rc, STORE_OK);
	CHECK_INT(npoints(o), 7);
	CHECK(pv(o, 1, 1) == 2);
	CHECK(isnan(pv(o, 5, 1)));	/* boot change applies to cgroups too */
	json_decref(o);
	o = series(st, "rate-host", "/a.slice", "stat.anon", t0, t0 + 60000, 0, &rc);
	CHECK_STR(json_string_value(json_object_get(o, "kind")), "gauge");
	CHECK_STR(json_string_value(json_object_get(o, "unit")), "bytes");
	CHECK(pv(o, 6, 1) == 4096);
	json_decref(o);
	o = series(st, "rate-host", "/nope", "stat.anon", t0, t0 + 60000, 0, &rc);
	CHECK_INT(rc, STORE_ENOTFOUND);
	json_decref(o);
	/* a name the host never reported is a 404; one it reported, asked
	 * for a window without samples, an empty answer */
	o = series(st, "rate-host", NULL, "vmstat.never_seen", t0, t0 + 60000, 0, &rc);
	CHECK_INT(rc, STORE_ENOMETRIC);
	CHECK(o == NULL);
	o = series(st, "rate-host", "/a.slice", "stat.never_seen", t0, t0 + 60000, 0, &rc);
	CHECK_INT(rc, STORE_ENOMETRIC);
	o = series(st, "rate-host", NULL, "vmstat.pgscan_kswapd", t0 - 7200000, t0 - 3600000, 0, &rc);
	CHECK_INT(rc, STORE_OK);
	CHECK_INT(npoints(o), 0);
	json_decref(o);
	o = series(st, "rate-host", "/a.slice", "stat.anon", t0 - 7200000, t0 - 3600000, 20, &rc);
	CHECK_INT(rc, STORE_OK);
	CHECK_INT(npoints(o), 0);
	json_decref(o);
	o = series(st, "no-such-host", NULL, "vmstat.pgfault", t0, t0 + 60000, 0, &rc);
	CHECK_INT(rc, STORE_ENOTFOUND);
	json_decref(o);
}

static void test_downsample(struct store *st)
{
	int64_t t0 = base_ms() + 4000;
	struct sample s[100];
	int rc;

	for (int i = 0; i < 100; i++)
		mk(&s[i], "ds-host", t0 + i * 1000, NULL, "meminfo.Dirty", (int64_t)(i % 10 == 3 ? 1000 : i), NULL);
	CHECK_INT(put(st, s, 100, NULL, NULL), STORE_OK);
	release(s, 100);
	/* 100 s in 10 buckets of 10 s: bucket k holds i = 10k..10k+9 */
	json_t *o = series(st, "ds-host", NULL, "meminfo.Dirty", t0, t0 + 99999, 10, &rc);
	CHECK_INT(rc, STORE_OK);
	CHECK(json_is_true(json_object_get(o, "downsampled")));
	CHECK(fabs(json_number_value(json_object_get(o, "step_s")) - 10.0) < 1e-9);
	CHECK_INT(npoints(o), 10);
	int good = 0;
	for (int k = 0; k < 10; k++) {
		double sum = 0, mn = 1e18, mx = -1;
		for (int i = 10 * k; i < 10 * k + 10; i++) {
			double v = i % 10 == 3 ? 1000 : i;
			sum += v;
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
		}
		good += fabs(pv(o, (size_t)k, 0) - (double)(t0 + k * 10000) / 1000.0) < 1e-6 &&
			fabs(pv(o, (size_t)k, 1) - sum / 10) < 1e-9 && pv(o, (size_t)k, 2) == mn &&
			pv(o, (size_t)k, 3) == mx;
	}
	CHECK_INT(good, 10);
	json_decref(o);
	/* more buckets than samples: empty buckets are left out */
	o = series(st, "ds-host", NULL, "meminfo.Dirty", t0, t0 + 99999, 1000, &rc);
	CHECK_INT(npoints(o), 100);
	json_decref(o);
}

static void test_answers(struct store *st)
{
	int64_t t0 = base_ms() + 5000;
	struct sample s[2];
	json_t *o;
	char err[256];

	for (int i = 0; i < 2; i++) {
		mk(&s[i], "ans-host", t0 + i * 10000, i ? "boot-2" : "boot-1", "vmstat.nr_dirty", (int64_t)5,
		   "vmstat.pgmajfault", (int64_t)7, NULL);
		s[i].kernel = strdup(i ? "6.1.0" : "5.10.0");
		s[i].agent_version = strdup("0.9");
		s[i].labels = json_pack("{s:s}", "role", i ? "db" : "web");
		addcg(&s[i], "/system.slice/x.service", "stat.file", 1);
		if (i == 0)
			addcg(&s[i], "/gone.slice", "memory_current", 1);
	}
	CHECK_INT(put(st, s, 2, NULL, NULL), STORE_OK);
	release(s, 2);
	CHECK_INT(store_hosts(st, &o, err, sizeof(err)), STORE_OK);
	json_t *hosts = json_object_get(o, "hosts");
	json_t *h = NULL;
	const char *prev = "";
	int sorted = 1;
	for (size_t i = 0; i < json_array_size(hosts); i++) {
		const char *name = json_string_value(json_object_get(json_array_get(hosts, i), "host"));
		sorted &= strcmp(prev, name) < 0;
		prev = name;
		if (strcmp(name, "ans-host") == 0)
			h = json_array_get(hosts, i);
	}
	CHECK(sorted);
	CHECK(h != NULL);
	CHECK_STR(json_string_value(json_object_get(h, "boot_id")), "boot-2");
	CHECK_STR(json_string_value(json_object_get(h, "kernel")), "6.1.0");
	CHECK_STR(json_string_value(json_object_get(h, "agent_version")), "0.9");
	CHECK_STR(json_string_value(json_object_get(json_object_get(h, "labels"), "role")), "db");
	CHECK_INT(json_integer_value(json_object_get(h, "cgroups")), 1);
	CHECK_INT(json_integer_value(json_object_get(h, "samples")), 2);
	CHECK(fabs(json_number_value(json_object_get(h, "last_seen_ts")) - (double)(t0 + 10000) / 1000.0) < 1e-6);
	CHECK(strlen(json_string_value(json_object_get(h, "last_seen"))) >= 20);
	json_decref(o);

	CHECK_INT(store_host(st, "ans-host", &o, err, sizeof(err)), STORE_OK);
	CHECK_INT(json_integer_value(json_object_get(o, "samples")), 2);
	json_decref(o);
	CHECK_INT(store_host(st, "nobody", &o, err, sizeof(err)), STORE_ENOTFOUND);

	CHECK_INT(store_cgroups(st, "ans-host", &o, err, sizeof(err)), STORE_OK);
	json_t *cgs = json_object_get(o, "cgroups");
	CHECK_INT(json_array_size(cgs), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(cgs, 0), "path")), "/gone.slice");
	CHECK(fabs(json_number_value(json_object_get(json_array_get(cgs, 0), "last_seen_ts")) - (double)t0 / 1000.0) < 1e-6);
	CHECK(fabs(json_number_value(json_object_get(json_array_get(cgs, 1), "last_seen_ts")) -
		   (double)(t0 + 10000) / 1000.0) < 1e-6);
	json_decref(o);
	CHECK_INT(store_cgroups(st, "nobody", &o, err, sizeof(err)), STORE_ENOTFOUND);

	CHECK_INT(store_metrics(st, "ans-host", NULL, 0, &o, err, sizeof(err)), STORE_OK);
	json_t *ms = json_object_get(o, "metrics");
	CHECK_INT(json_array_size(ms), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(ms, 0), "name")), "vmstat.nr_dirty");
	CHECK_STR(json_string_value(json_object_get(json_array_get(ms, 0), "kind")), "gauge");
	CHECK_STR(json_string_value(json_object_get(json_array_get(ms, 1), "name")), "vmstat.pgmajfault");
	CHECK_STR(json_string_value(json_object_get(json_array_get(ms, 1), "kind")), "rate");
	json_decref(o);
	CHECK_INT(store_metrics(st, "ans-host", "/gone.slice", 0, &o, err, sizeof(err)), STORE_OK);
	ms = json_object_get(o, "metrics");
	CHECK_INT(json_array_size(ms), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(ms, 0), "name")), "memory_current");
	json_decref(o);
}

/* The labels of host's row as GET /api/v1/hosts lists them (compact JSON
 * with sorted keys), into buf. */
static void host_labels(struct store *st, const char *host, char *buf, size_t len)
{
	json_t *o;
	char err[256];

	snprintf(buf, len, "(none)");
	if (store_hosts(st, &o, err, sizeof(err)) != STORE_OK)
		return;
	json_t *hosts = json_object_get(o, "hosts");
	for (size_t i = 0; i < json_array_size(hosts); i++) {
		json_t *h = json_array_get(hosts, i);
		if (strcmp(json_string_value(json_object_get(h, "host")), host) != 0)
			continue;
		char *t = json_dumps(json_object_get(h, "labels"), JSON_COMPACT | JSON_SORT_KEYS);
		snprintf(buf, len, "%s", t ? t : "(none)");
		free(t);
	}
	json_decref(o);
}

/* Labels that change alone (same kernel and agent), one transaction per
 * sample: the host's row follows each change, keeps them while they stay,
 * and a sample without labels clears them. */
static void test_labels_alone(struct store *st)
{
	static const char *const lab[] = { "{\"role\":\"web\"}", "{\"role\":\"db\",\"zone\":\"a\"}",
					    "{\"zone\":\"a\",\"role\":\"db\"}", NULL, "{\"role\":\"web\"}" };
	static const char *const want[] = { "{\"role\":\"web\"}", "{\"role\":\"db\",\"zone\":\"a\"}",
					     "{\"role\":\"db\",\"zone\":\"a\"}", "{}", "{\"role\":\"web\"}" };
	int64_t t0 = base_ms() + 7000;
	char got[256];

	for (int i = 0; i < 5; i++) {
		struct sample s;
		mk(&s, "lab-host", t0 + i * 10000, "boot-1", "vmstat.nr_dirty", (int64_t)i, NULL);
		s.kernel = strdup("6.1.0");
		s.agent_version = strdup("0.9");
		s.labels = lab[i] ? json_loads(lab[i], 0, NULL) : NULL;
		CHECK_INT(put(st, &s, 1, NULL, NULL), STORE_OK);
		release(&s, 1);
		host_labels(st, "lab-host", got, sizeof(got));
		CHECK_STR(got, want[i]);
	}
}

static void test_drop_expired(struct store *st)
{
	int64_t now = (int64_t)time(NULL) * 1000;
	struct sample s;
	int n = -1;
	char err[256];

	mk(&s, "exp-host", now - 29LL * 86400000, NULL, "vmstat.nr_dirty", (int64_t)1, NULL);
	CHECK_INT(put(st, &s, 1, NULL, NULL), STORE_OK);
	sample_release(&s);
	long long parts = q1("SELECT count(*) FROM pg_inherits WHERE inhparent = 'samples'::regclass");
	long long rows = q1("SELECT count(*) FROM samples");
	/* a week later the 29-day-old sample is past the 30-day retention */
	CHECK_INT(store_drop_expired(st, now + 7LL * 86400000, &n, err, sizeof(err)), STORE_OK);
	CHECK(n >= 1);
	CHECK_INT(q1("SELECT count(*) FROM samples WHERE host_id = (SELECT id FROM hosts WHERE name = 'exp-host')"), 0);
	CHECK(q1("SELECT count(*) FROM samples") < rows);
	CHECK(q1("SELECT count(*) FROM pg_inherits WHERE inhparent = 'samples'::regclass") < parts + 2);
	/* nothing more to drop at the same time */
	CHECK_INT(store_drop_expired(st, now + 7LL * 86400000, &n, err, sizeof(err)), STORE_OK);
	CHECK_INT(n, 0);
	CHECK(store_oldest_accepted_ms(st, now) == now - 30LL * 86400000);
}

static void test_unavailable(void)
{
	struct store_config cfg = { .conninfo = "host=127.0.0.1 port=1 dbname=x connect_timeout=2" };
	struct store *st = (struct store *)1;
	char err[512] = "";
	CHECK_INT(store_open(&st, &cfg, err, sizeof(err)), STORE_EUNAVAIL);
	CHECK(st == NULL);
	CHECK_CONTAINS(err, "could not connect");
}

/* ---- size and speed with generated hosts ---- */

static long long samples_bytes(void)
{
	return q1("SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits "
		  "WHERE inhparent = 'samples'::regclass");
}

static int load_gen(struct store *st, const char *name, int ncg, int64_t t0, int count, int batch)
{
	struct gen_host *g = gen_host_new(name, ncg, 42);
	struct sample *s = calloc((size_t)batch, sizeof(*s));
	int n = 0, bad = 0;
	for (int i = 0; i < count && !bad; i++) {
		gen_host_step(g, 10000);
		if (gen_host_sample(g, t0 + (int64_t)i * 10000, &s[n++]) < 0)
			bad = 1;
		if (n == batch || i == count - 1) {
			bad |= put(st, s, (size_t)n, NULL, NULL) != STORE_OK;
			release(s, (size_t)n);
			n = 0;
		}
	}
	free(s);
	gen_host_free(g);
	return bad ? -1 : 0;
}

static void test_size_and_speed(void)
{
	struct testdb sz;
	testdb_create(&sz);
	struct store *st = open_store(sz.conninfo, 4);
	struct testdb keep = db;
	db = sz;	/* q1 reads the size database */
	int64_t t0 = base_ms() - 86400000;

	/* a day of 10 s samples of one host, host level only */
	double t = now_s();
	CHECK_INT(load_gen(st, "size-host", 0, t0, 8640, 200), 0);
	double load_s = now_s() - t;
	q1("VACUUM ANALYZE");
	long long bytes = samples_bytes();
	double per = (double)bytes / 8640.0;
	printf("host level: %.0f bytes/sample on disk incl. indexes (8640 samples, %lld bytes), "
	       "loaded at %.0f samples/s\n", per, bytes, 8640 / load_s);
	CHECK(per < 500);

	/* series over the whole day, raw and downsampled */
	int rc;
	t = now_s();
	json_t *o = series(st, "size-host", NULL, "vmstat.pgscan_kswapd", t0, t0 + 86400000, 0, &rc);
	double raw_ms = (now_s() - t) * 1000;
	CHECK_INT(npoints(o), 8640);
	json_decref(o);
	t = now_s();
	o = series(st, "size-host", NULL, "vmstat.nr_free_pages", t0, t0 + 86400000, 300, &rc);
	double ds_ms = (now_s() - t) * 1000;
	CHECK_INT(npoints(o), 300);
	json_decref(o);
	printf("series of 8640 samples: raw %.1f ms, 300 buckets %.1f ms\n", raw_ms, ds_ms);
	/* timing is printed, not asserted: speed belongs in make bench (a
	 * 500 ms bound here failed under load 19 on the shared 2 cores) */

	/* with 20 cgroups */
	long long before = samples_bytes();
	t = now_s();
	CHECK_INT(load_gen(st, "cg-host", 20, t0, 400, 100), 0);
	load_s = now_s() - t;
	q1("VACUUM ANALYZE");
	per = (double)(samples_bytes() - before) / 400.0;
	printf("with 20 cgroups: %.0f bytes/sample on disk incl. indexes, loaded at %.0f samples/s\n", per,
	       400 / load_s);
	CHECK(per < 4000);
	t = now_s();
	o = series(st, "cg-host", "/system.slice/svc-07.service", "stat.anon", t0, t0 + 86400000, 0, &rc);
	CHECK_INT(npoints(o), 400);
	printf("cgroup series of 400 samples: %.1f ms\n", (now_s() - t) * 1000);
	json_decref(o);
	store_close(st);
	db = keep;
	testdb_drop(&sz);
}

/* Several threads posting overlapping hosts with new metric names at once:
 * no deadlock, no failure, every sample stored once. */
struct conc {
	struct store *st;
	int id;
	int failed;
};

static void *conc_thread(void *arg)
{
	struct conc *c = arg;
	int64_t t0 = base_ms() + 7000;
	for (int round = 0; round < 20; round++) {
		struct sample s[3];
		for (int k = 0; k < 3; k++) {
			char host[32], metric[64];
			snprintf(host, sizeof(host), "conc-%d", (c->id + k) % 4);
			snprintf(metric, sizeof(metric), "vmstat.conc_%d", (round + k) % 7);
			mk(&s[k], host, t0 + round * 1000 + c->id, NULL, metric, (int64_t)round, NULL);
			addcg(&s[k], "/c.slice", metric + 7, 1);
		}
		if (put(c->st, s, 3, NULL, NULL) != STORE_OK)
			c->failed++;
		release(s, 3);
	}
	return NULL;
}

static void test_concurrent_puts(struct store *st)
{
	pthread_t t[6];
	struct conc c[6];
	for (int i = 0; i < 6; i++) {
		c[i] = (struct conc){ st, i, 0 };
		pthread_create(&t[i], NULL, conc_thread, &c[i]);
	}
	int failed = 0;
	for (int i = 0; i < 6; i++) {
		pthread_join(t[i], NULL);
		failed += c[i].failed;
	}
	CHECK_INT(failed, 0);
	CHECK_INT(q1("SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name LIKE 'conc-%'"),
		  6 * 20 * 3);
	CHECK_INT(q1("SELECT sum(samples) FROM hosts WHERE name LIKE 'conc-%'"), 6 * 20 * 3);
}

/* The database goes away while the store is open (connections refused,
 * pooled ones killed): every call answers STORE_EUNAVAIL; once it is back
 * the pool reconnects by itself. */
static void test_outage(struct store *st)
{
	struct sample s;
	size_t fresh = 9;
	char sql[256], err[256];
	json_t *o = NULL;

	snprintf(sql, sizeof(sql), "ALTER DATABASE %s ALLOW_CONNECTIONS false", db.name);
	CHECK_INT(testdb_admin_exec(db.admin, sql), 0);
	snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s'",
		 db.name);
	PGconn *c = PQconnectdb(db.admin);
	PQclear(PQexec(c, sql));
	PQfinish(c);

	mk(&s, "outage-host", base_ms() + 12000, NULL, "vmstat.nr_dirty", (int64_t)1, NULL);
	CHECK_INT(store_put_samples(st, &s, 1, &fresh, err, sizeof(err)), STORE_EUNAVAIL);
	CHECK_INT(fresh, 0);
	CHECK(!store_ping(st));
	CHECK_INT(store_hosts(st, &o, err, sizeof(err)), STORE_EUNAVAIL);
	CHECK(o == NULL);
	struct series_query q = { "outage-host", NULL, "vmstat.nr_dirty", 0, 1000, 0, SERIES_AUTO, 0 };
	CHECK_INT(store_series(st, &q, &o, err, sizeof(err)), STORE_EUNAVAIL);
	CHECK(store_conn_get(st) == NULL);

	snprintf(sql, sizeof(sql), "ALTER DATABASE %s ALLOW_CONNECTIONS true", db.name);
	CHECK_INT(testdb_admin_exec(db.admin, sql), 0);
	CHECK(store_ping(st));
	CHECK_INT(put(st, &s, 1, NULL, &fresh), STORE_OK);
	CHECK_INT(fresh, 1);
	sample_release(&s);
	PGconn *b = store_conn_get(st);
	CHECK(b != NULL);
	if (b)
		store_conn_put(st, b, false);
}

/* Two servers (stores) alternate on the same hosts, so each must rebuild
 * the other's encoding state from the database; replayed late samples are
 * mixed in. Every value read back must be what was posted. */
static void test_two_servers(struct store *a)
{
	struct store *b = open_store(db.conninfo, 2);
	struct gen_host *g = gen_host_new("two-servers", 3, 7);
	enum { N = 150 };
	static struct sample s[N];
	int64_t t0 = base_ms() + 10000;
	int rc, bad = 0;

	CHECK(b != NULL && g != NULL);
	if (!b || !g)
		goto out;
	for (int i = 0; i < N; i++) {
		gen_host_step(g, 10000);
		CHECK_INT(gen_host_sample(g, t0 + (int64_t)i * 10000, &s[i]), 0);
		if (i == 70) {	/* a reboot half way */
			free(s[i].boot_id);
			s[i].boot_id = strdup("second-boot");
		} else if (i > 70) {
			free(s[i].boot_id);
			s[i].boot_id = strdup("second-boot");
		}
	}
	/* in order, alternating stores, in batches of 1..4; every 10th
	 * sample is held back and posted late through the other store */
	for (int i = 0, k = 0; i < N; k++) {
		int n = 1 + k % 4;
		if (i + n > N)
			n = N - i;
		struct sample batch[4];
		int m = 0;
		for (int j = i; j < i + n; j++)
			if (j % 10 != 5)
				batch[m++] = s[j];
		if (m)
			bad |= put(k % 2 ? a : b, batch, (size_t)m, NULL, NULL) != STORE_OK;
		i += n;
	}
	for (int j = 5; j < N; j += 10)
		bad |= put(j % 20 == 5 ? a : b, &s[j], 1, NULL, NULL) != STORE_OK;
	CHECK_INT(bad, 0);
	CHECK_INT(q1("SELECT samples FROM hosts WHERE name = 'two-servers'"), N);
	/* the stores continued each other's delta chains (reloading state from
	 * the database) instead of writing keyframes: self-contained rows are
	 * only the late ones, the keyframes and the first after the reboot */
	long long selfc = q1("SELECT count(*) FROM samples WHERE get_byte(d, 0) = 0 AND host_id = "
			     "(SELECT id FROM hosts WHERE name = 'two-servers')");
	CHECK(selfc >= N / 10 && selfc <= N / 10 + 6);

	/* gauges read back exactly, from either store */
	const char *gauges[] = { "vmstat.nr_free_pages", "meminfo.MemFree", "meminfo.Cached" };
	for (size_t m = 0; m < 3; m++) {
		uint32_t id = dict_lookup(gauges[m]);
		json_t *o = series(m % 2 ? a : b, "two-servers", NULL, gauges[m], t0, t0 + N * 10000, 0, &rc);
		int same = npoints(o) == N;
		for (int i = 0; same && i < N; i++) {
			int64_t v;
			same = sset_get(&s[i].m, id, &v) == 1 && pv(o, (size_t)i, 1) == (double)v;
		}
		CHECK(same);
		json_decref(o);
	}
	/* a counter as rates, null at the reboot */
	uint32_t id = dict_lookup("vmstat.pgfault");
	json_t *o = series(a, "two-servers", NULL, "vmstat.pgfault", t0, t0 + N * 10000, 0, &rc);
	int same = npoints(o) == N;
	for (int i = 1; same && i < N; i++) {
		int64_t v, pvv;
		sset_get(&s[i].m, id, &v);
		sset_get(&s[i - 1].m, id, &pvv);
		double want = (double)(v - pvv) / 10.0;
		same = i == 70 ? isnan(pv(o, (size_t)i, 1)) : fabs(pv(o, (size_t)i, 1) - want) < 1e-9;
	}
	CHECK(same);
	json_decref(o);
	/* a cgroup gauge, and memory_max that is null in some cgroups */
	const char *paths[] = { "/system.slice", "/user.slice", "/init.scope" };
	for (int c = 0; c < 3; c++) {
		uint32_t anon = dict_lookup("stat.anon"), mx = dict_lookup("memory_max");
		json_t *x = series(b, "two-servers", paths[c], "stat.anon", t0, t0 + N * 10000, 0, &rc);
		json_t *y = series(a, "two-servers", paths[c], "memory_max", t0, t0 + N * 10000, 0, &rc);
		int ok = npoints(x) == N && npoints(y) == N;
		for (int i = 0; ok && i < N; i++) {
			const struct cgsample *cg = sample_find_cgroup(&s[i], paths[c], 2);
			int64_t v, w;
			ok = cg && sset_get(&cg->m, anon, &v) == 1 && pv(x, (size_t)i, 1) == (double)v &&
			     sset_get(&cg->m, mx, &w) == 1 &&
			     (w == SAMPLE_NULL ? isnan(pv(y, (size_t)i, 1)) : pv(y, (size_t)i, 1) == (double)w);
		}
		CHECK(ok);
		json_decref(x);
		json_decref(y);
	}
out:
	release(s, N);
	gen_host_free(g);
	store_close(b);
}

/* Group commit: 16 threads posting one sample each through a pool of 2
 * with a slow hook share transactions; a request whose hook fails is
 * retried alone and fails alone. */
struct gc_hook {
	pthread_mutex_t mu;
	int calls;
	size_t max_batch;
};

static int gc_hook_fn(void *ctx, PGconn *conn, const struct store_hook_host *hosts, size_t nhosts,
		      int64_t version, char *err, size_t errlen)
{
	struct gc_hook *h = ctx;
	size_t nfresh = 0;
	(void)conn;
	(void)version;
	for (size_t k = 0; k < nhosts; k++)
		nfresh += hosts[k].n;
	pthread_mutex_lock(&h->mu);
	h->calls++;
	if (nfresh > h->max_batch)
		h->max_batch = nfresh;
	pthread_mutex_unlock(&h->mu);
	struct timespec ts = { 0, 20 * 1000000 };
	nanosleep(&ts, NULL);
	for (size_t i = 0; i < nhosts; i++) {
		if (strcmp(hosts[i].host, "gc-poison") == 0) {
			snprintf(err, errlen, "poisoned");
			return -1;
		}
	}
	return 0;
}

struct gc_job {
	struct store *st;
	struct gc_hook *hook;
	int id, rc;
	size_t fresh;
};

static void *gc_thread(void *arg)
{
	struct gc_job *j = arg;
	struct sample s;
	char host[32];
	snprintf(host, sizeof(host), j->id == 7 ? "gc-poison" : "gc-%02d", j->id);
	mk(&s, host, base_ms() + 11000, NULL, "vmstat.nr_dirty", (int64_t)j->id, NULL);
	j->rc = put(j->st, &s, 1, NULL, &j->fresh);
	sample_release(&s);
	return NULL;
}

static void test_group_commit(void)
{
	struct store *st = open_store(db.conninfo, 2);
	struct gc_hook hk = { PTHREAD_MUTEX_INITIALIZER, 0, 0 };
	enum { T = 16 };
	pthread_t t[T];
	struct gc_job j[T];

	if (!st) {
		CHECK(0);
		return;
	}
	/* no statements: the writes go with COMMIT */
	store_set_hook(st, &(struct store_hook){ .ctx = &hk, .feed = gc_hook_fn });
	for (int i = 0; i < T; i++) {
		j[i] = (struct gc_job){ st, &hk, i, -99, 0 };
		pthread_create(&t[i], NULL, gc_thread, &j[i]);
	}
	int ok = 0;
	for (int i = 0; i < T; i++) {
		pthread_join(t[i], NULL);
		ok += j[i].rc == STORE_OK && j[i].fresh == 1;
	}
	CHECK_INT(ok, T - 1);
	CHECK(j[7].rc != STORE_OK);
	CHECK(hk.max_batch > 1);	/* some requests shared a transaction */
	CHECK_INT(q1("SELECT count(*) FROM hosts WHERE name LIKE 'gc-%' AND samples = 1"), T - 1);
	CHECK_INT(q1("SELECT count(*) FROM hosts WHERE name = 'gc-poison' AND samples > 0"), 0);
	printf("group commit: %d hook calls for %d one-sample requests, largest shared batch %zu\n",
	       hk.calls, T, hk.max_batch);
	store_close(st);
}

/* A pooled connection whose backend went away (server restart, idle
 * timeout) is replaced without failing the request. */
static void test_reconnect(struct store *st)
{
	struct sample s;
	size_t fresh = 0;
	char sql[256];

	mk(&s, "reconnect-host", base_ms() + 8000, NULL, "vmstat.nr_dirty", (int64_t)1, NULL);
	CHECK_INT(put(st, &s, 1, NULL, &fresh), STORE_OK);
	sample_release(&s);
	snprintf(sql, sizeof(sql), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
		 "WHERE datname = '%s' AND application_name = 'vmscope-server'", db.name);
	CHECK(q1(sql) >= 1);
	mk(&s, "reconnect-host", base_ms() + 9000, NULL, "vmstat.nr_dirty", (int64_t)2, NULL);
	CHECK_INT(put(st, &s, 1, NULL, &fresh), STORE_OK);
	CHECK_INT(fresh, 1);
	sample_release(&s);
	CHECK(store_ping(st));
	CHECK_INT(q1("SELECT samples FROM hosts WHERE name = 'reconnect-host'"), 2);
}

int main(void)
{
	testdb_create(&db);
	test_unavailable();
	test_migrations();
	test_migrations_concurrent();
	struct store *st = open_store(db.conninfo, 4);
	CHECK(st != NULL);
	if (st) {
		CHECK(store_ping(st));
		test_put_and_duplicates(st);
		test_old_partition(st);
		test_hook(st);
		test_rates(st);
		test_hybrid_cgroup(st);
		test_downsample(st);
		test_answers(st);
		test_labels_alone(st);
		test_concurrent_puts(st);
		test_reconnect(st);
		test_outage(st);
		test_two_servers(st);
		test_group_commit();
		test_drop_expired(st);
		store_close(st);
	}
	test_size_and_speed();
	testdb_drop(&db);
	return harness_report("test_store");
}
