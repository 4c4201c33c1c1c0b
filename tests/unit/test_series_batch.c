/* Tests of GET /api/v1/hosts/{host}/series_batch's store and parameter
 * layers against a real PostgreSQL ($VMSCOPE_TEST_DB): every element of a
 * batch answer equals the single-series answer for that metric, over a
 * window read from the rollups (one query for the whole batch), a short
 * window read from raw rows, a cgroup, with names the host never reported
 * and repeated names; unknown hosts and cgroups are not found; and the
 * metrics= list is parsed and refused as docs/api.md says. */
#include "harness.h"
#include "testparams.h"
#include "testdb.h"

#include "gen.h"
#include "params.h"
#include "store.h"

#include <string.h>
#include <time.h>

static struct testdb db;

static struct store *open_store(void)
{
	struct store_config cfg = { .conninfo = db.conninfo, .pool_size = 2, .retention_days = 30,
				    .rollup_retention_days = 400 };
	char err[512];
	struct store *st = NULL;
	if (store_open(&st, &cfg, err, sizeof(err)) != STORE_OK)
		fprintf(stderr, "store_open: %s\n", err);
	return st;
}

/* 30 hours of a generated host with 3 cgroups, one sample a minute (enough
 * for a window longer than SERIES_ROLLUP_AFTER_MS, quick to load). */
static void load_host(struct store *st, const char *name, int64_t t0)
{
	struct gen_host *g = gen_host_new(name, 3, 11);
	struct sample s[60];
	size_t n = 0;
	int nck;
	char err[512];
	for (int i = 0; i < 30 * 60; i++) {
		gen_host_step(g, 60000);
		CHECK(gen_host_sample(g, t0 + (int64_t)i * 60000 + 321, &s[n]) == 0);
		if (++n == 60 || i == 30 * 60 - 1) {
			size_t f = 0;
			int rc = store_put_samples(st, s, n, &f, err, sizeof(err));
			if (rc != STORE_OK)
				fprintf(stderr, "put: %s\n", err);
			else	/* the rollups go to the table with the checkpoint */
				rc = store_checkpoint(st, true, &nck, err, sizeof(err));
			CHECK_INT(rc, STORE_OK);
			for (size_t k = 0; k < n; k++)
				sample_release(&s[k]);
			n = 0;
		}
	}
	gen_host_free(g);
}

static const char *const host_metrics[] = {
	"vmstat.workingset_refault_file", "vmstat.workingset_activate_file", "vmstat.pgscan_kswapd",
	"vmstat.pgsteal_kswapd", "vmstat.pgscan_direct", "vmstat.pgsteal_direct", "vmstat.nr_vmscan_write",
	"vmstat.nr_vmscan_immediate_reclaim", "vmstat.pgrotated", "meminfo.Dirty", "meminfo.Writeback",
	"vmstat.nr_dirty_threshold", "vmstat.nr_dirty_background_threshold", "vmstat.pswpin", "vmstat.pswpout",
	"meminfo.SwapTotal", "meminfo.SwapFree", "psi.memory.some.avg10", "psi.memory.full.avg10",
	"psi.io.some.avg10", "psi.io.full.avg10", "vmstat.allocstall_normal", "vmstat.nr_dirty",
	/* not rolled up, repeated: the single endpoint answers them */
	"vmstat.pgfault", "vmstat.pgscan_kswapd",
};

/* The batch for names[0..n) equals store_series per name. Returns how
 * many elements came from the rollups. */
static int check_equal(struct store *st, const char *host, const char *cgroup, const char *const *names, int n,
		       int64_t since, int64_t until, int points)
{
	struct series_batch_query bq;
	char err[512];
	json_t *out = NULL;
	int rolled = 0;

	memset(&bq, 0, sizeof(bq));
	bq.host = host;
	bq.cgroup = cgroup;
	bq.since_ms = since;
	bq.until_ms = until;
	bq.points = points;
	for (int i = 0; i < n; i++)
		bq.metrics[bq.nmetrics++] = names[i];
	int rc = store_series_batch(st, &bq, &out, err, sizeof(err));
	if (rc != STORE_OK)
		fprintf(stderr, "batch: %s\n", err);
	CHECK_INT(rc, STORE_OK);
	if (rc != STORE_OK)
		return 0;
	CHECK_STR(json_string_value(json_object_get(out, "host")), host);
	json_t *list = json_object_get(out, "series");
	CHECK_INT(json_array_size(list), n);
	for (int i = 0; i < n && (size_t)i < json_array_size(list); i++) {
		struct series_query q = { host, cgroup, names[i], since, until, points, SERIES_AUTO, 0 };
		json_t *one = NULL;
		CHECK_INT(store_series(st, &q, &one, err, sizeof(err)), STORE_OK);
		json_t *b = json_array_get(list, i);
		CHECK_STR(json_string_value(json_object_get(b, "metric")), names[i]);
		if (!json_equal(one, b)) {
			char *x = json_dumps(one, JSON_COMPACT), *y = json_dumps(b, JSON_COMPACT);
			fprintf(stderr, "differs for %s:\n single %.300s\n batch  %.300s\n", names[i], x, y);
			free(x);
			free(y);
		}
		CHECK(json_equal(one, b));
		const char *src = json_string_value(json_object_get(b, "source"));
		rolled += src && strcmp(src, "rollup") == 0;
		json_decref(one);
	}
	json_decref(out);
	return rolled;
}

static void test_equal(struct store *st, int64_t t0)
{
	int n = (int)(sizeof(host_metrics) / sizeof(host_metrics[0]));
	int64_t until = t0 + 30LL * 3600 * 1000;

	/* 29 hours: the rollups, one query for the rolled-up names */
	int rolled = check_equal(st, "batch-a", NULL, host_metrics, n, until - 29LL * 3600 * 1000, until, 400);
	CHECK(rolled >= 23);
	/* a second host's batch is its own */
	CHECK(check_equal(st, "batch-b", NULL, host_metrics, n, until - 29LL * 3600 * 1000, until, 400) >= 23);
	/* one hour: raw rows, downsampled and not */
	CHECK_INT(check_equal(st, "batch-a", NULL, host_metrics, n, until - 3600 * 1000, until, 120), 0);
	CHECK_INT(check_equal(st, "batch-a", NULL, host_metrics, 5, until - 3600 * 1000, until, 0), 0);
	/* a cgroup's names */
	const char *cg[] = { "stat.workingset_refault_file", "stat.pgscan", "stat.pgsteal", "memory_current",
			     "memory_max", "psi.some.avg10", "events.oom_kill" };
	check_equal(st, "batch-a", "/user.slice", cg, 7, until - 6 * 3600 * 1000, until, 200);
	check_equal(st, "batch-a", "/user.slice", cg, 7, until - 29LL * 3600 * 1000, until, 200);
}

static void test_errors(struct store *st, int64_t t0)
{
	struct series_batch_query bq;
	char err[512];
	json_t *out = NULL;

	memset(&bq, 0, sizeof(bq));
	bq.host = "no-such-host";
	bq.metrics[0] = "vmstat.pgscan_kswapd";
	bq.nmetrics = 1;
	bq.since_ms = t0;
	bq.until_ms = t0 + 28LL * 3600 * 1000;
	bq.points = 100;
	CHECK_INT(store_series_batch(st, &bq, &out, err, sizeof(err)), STORE_ENOTFOUND);
	CHECK(out == NULL);
	bq.until_ms = t0 + 3600 * 1000;
	CHECK_INT(store_series_batch(st, &bq, &out, err, sizeof(err)), STORE_ENOTFOUND);
	bq.host = "batch-a";
	bq.cgroup = "/no/such.slice";
	CHECK_INT(store_series_batch(st, &bq, &out, err, sizeof(err)), STORE_ENOTFOUND);
	CHECK_CONTAINS(err, "no such cgroup");
	/* a name never reported: a 404 about that name (failed: its index),
	 * over the rollups' range and the raw one alike */
	bq.cgroup = NULL;
	bq.metrics[0] = "vmstat.pgscan_kswapd";
	bq.metrics[1] = "vmstat.no_such_counter";
	bq.nmetrics = 2;
	CHECK_INT(store_series_batch(st, &bq, &out, err, sizeof(err)), STORE_ENOMETRIC);
	CHECK_INT(bq.failed, 1);
	CHECK_CONTAINS(err, "vmstat.no_such_counter");
	CHECK(out == NULL);
	bq.until_ms = t0 + 28LL * 3600 * 1000;
	CHECK_INT(store_series_batch(st, &bq, &out, err, sizeof(err)), STORE_ENOMETRIC);
	CHECK_INT(bq.failed, 1);
	bq.cgroup = "/user.slice";
	bq.metrics[1] = "stat.nope";
	CHECK_INT(store_series_batch(st, &bq, &out, err, sizeof(err)), STORE_ENOMETRIC);
	/* a reported name in a window before the host's first sample: empty */
	bq.cgroup = NULL;
	bq.nmetrics = 1;
	bq.since_ms = t0 - 7200 * 1000;
	bq.until_ms = t0 - 3600 * 1000;
	CHECK_INT(store_series_batch(st, &bq, &out, err, sizeof(err)), STORE_OK);
	CHECK_INT(json_array_size(json_object_get(json_array_get(json_object_get(out, "series"), 0), "points")), 0);
	json_decref(out);
	out = NULL;
	bq.until_ms = t0 + 3600 * 1000;
	bq.nmetrics = 0;
	CHECK_INT(store_series_batch(st, &bq, &out, err, sizeof(err)), STORE_EINVAL);
	CHECK(out == NULL);
}

static int parse(const char *const *pairs, struct series_batch_query *q, char *err)
{
	struct kv kv = { pairs };
	struct param_src src = { kv_get, &kv };
	memset(q, 0, sizeof(*q));
	return params_series_batch(&src, 1764518400000LL, q, err, 256);
}

static void test_params(void)
{
	static struct series_batch_query q;
	char err[256];

	const char *ok[] = { "metrics", "vmstat.pgscan_kswapd,psi.memory.some.avg10,meminfo.Dirty",
			     "cgroup", "/system.slice", "since", "1764500000", "points", "500", NULL };
	CHECK_INT(parse(ok, &q, err), 0);
	CHECK_INT(q.nmetrics, 3);
	CHECK_STR(q.metrics[0], "vmstat.pgscan_kswapd");
	CHECK_STR(q.metrics[1], "psi.memory.some.avg10");
	CHECK_STR(q.metrics[2], "meminfo.Dirty");
	CHECK_STR(q.cgroup, "/system.slice");
	CHECK_INT(q.since_ms, 1764500000000LL);
	CHECK_INT(q.until_ms, 1764518400000LL);	/* now */
	CHECK_INT(q.points, 500);

	const char *dflt[] = { "metrics", "vmstat.pswpin", NULL };
	CHECK_INT(parse(dflt, &q, err), 0);
	CHECK_INT(q.nmetrics, 1);
	CHECK_INT(q.until_ms - q.since_ms, 3600 * 1000);
	CHECK(q.cgroup == NULL);

	const char *none[] = { NULL };
	CHECK_INT(parse(none, &q, err), -1);
	CHECK_CONTAINS(err, "metrics:");
	const char *empty_name[] = { "metrics", "vmstat.pswpin,,vmstat.pswpout", NULL };
	CHECK_INT(parse(empty_name, &q, err), -1);
	CHECK_CONTAINS(err, "metrics:");
	const char *trailing[] = { "metrics", "vmstat.pswpin,", NULL };
	CHECK_INT(parse(trailing, &q, err), -1);
	const char *bad_name[] = { "metrics", "vmstat.pswpin,vm stat", NULL };
	CHECK_INT(parse(bad_name, &q, err), -1);
	const char *bad_points[] = { "metrics", "vmstat.pswpin", "points", "10001", NULL };
	CHECK_INT(parse(bad_points, &q, err), -1);
	CHECK_CONTAINS(err, "points:");
	const char *backwards[] = { "metrics", "vmstat.pswpin", "since", "1764518400", "until", "1764500000", NULL };
	CHECK_INT(parse(backwards, &q, err), -1);
	CHECK_CONTAINS(err, "until:");

	/* SERIES_BATCH_MAX names pass, one more does not */
	char list[SERIES_BATCH_MAX * 12 + 16];
	size_t o = 0;
	for (int i = 0; i < SERIES_BATCH_MAX; i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%sm.n%03d", i ? "," : "", i);
	const char *max[] = { "metrics", list, NULL };
	CHECK_INT(parse(max, &q, err), 0);
	CHECK_INT(q.nmetrics, SERIES_BATCH_MAX);
	CHECK_STR(q.metrics[SERIES_BATCH_MAX - 1], "m.n063");
	snprintf(list + o, sizeof(list) - o, ",m.x");
	CHECK_INT(parse(max, &q, err), -1);
	CHECK_CONTAINS(err, "at most");
}

int main(void)
{
	test_params();
	testdb_create(&db);
	int64_t now = (int64_t)time(NULL) * 1000;
	int64_t t0 = (now - 31LL * 3600 * 1000) / 300000 * 300000;
	struct store *st = open_store();
	CHECK(st != NULL);
	if (st) {
		load_host(st, "batch-a", t0);
		load_host(st, "batch-b", t0);
		test_equal(st, t0);
		test_errors(st, t0);
		store_close(st);
	}
	testdb_drop(&db);
	return harness_report("test_series_batch");
}
