/* test_export.c - store_export_* (server/store/store_export.c) against a real
 * PostgreSQL: samples stored through store_put_samples come back exactly,
 * field by field, in ts order: generated hosts with cgroups across a UTC day
 * boundary and page boundaries, late rows between stored ones, and
 * hand-made odd samples (unknown counters, null memory_max and
 * swap_current, v1 and v2 cgroups of one path, labels, INT64_MAX values,
 * counters going backwards, a boot_id change, a kernel upgrade, cgroups
 * coming and going), sub-ranges starting inside a delta chain, and rows
 * stored while a cursor is open (new names and cgroups).
 */
#include "harness.h"
#include "testdb.h"

#include "dict.h"
#include "gen.h"
#include "store.h"
#include "timeparse.h"

#include <stdlib.h>
#include <string.h>

static struct testdb db;

static struct store *open_store(void)
{
	struct store_config cfg = { .conninfo = db.conninfo, .pool_size = 3, .retention_days = 30 };
	char err[512];
	struct store *st = NULL;
	if (store_open(&st, &cfg, err, sizeof(err)) != STORE_OK)
		fprintf(stderr, "store_open: %s\n", err);
	return st;
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool set_eq(const struct sset *a, const struct sset *b, const char *where, int64_t ts)
{
	if (a->n != b->n) {
		fprintf(stderr, "ts %lld %s: %zu fields, expected %zu\n", (long long)ts, where, a->n, b->n);
		return false;
	}
	for (size_t i = 0; i < a->n; i++) {
		if (a->f[i].id != b->f[i].id || a->f[i].v != b->f[i].v) {
			fprintf(stderr, "ts %lld %s: %s=%lld, expected %s=%lld\n", (long long)ts, where,
				dict_name(a->f[i].id), (long long)a->f[i].v, dict_name(b->f[i].id),
				(long long)b->f[i].v);
			return false;
		}
	}
	return true;
}

/* Every field of got equals want's (cgroups matched by path and version). */
static bool sample_eq(const struct sample *got, const struct sample *want)
{
	int64_t ts = want->ts_ms;

	if (strcmp(got->host, want->host) != 0 || got->ts_ms != want->ts_ms) {
		fprintf(stderr, "got %s@%lld, expected %s@%lld\n", got->host, (long long)got->ts_ms, want->host,
			(long long)ts);
		return false;
	}
	if (!str_eq(got->boot_id, want->boot_id) || !str_eq(got->kernel, want->kernel) ||
	    !str_eq(got->agent_version, want->agent_version)) {
		fprintf(stderr, "ts %lld: boot_id/kernel/agent_version %s/%s/%s, expected %s/%s/%s\n", (long long)ts,
			got->boot_id, got->kernel, got->agent_version, want->boot_id, want->kernel,
			want->agent_version);
		return false;
	}
	if ((got->labels || want->labels) && !(got->labels && want->labels && json_equal(got->labels, want->labels))) {
		fprintf(stderr, "ts %lld: labels differ\n", (long long)ts);
		return false;
	}
	if (!set_eq(&got->m, &want->m, "host", ts))
		return false;
	if (got->ncg != want->ncg) {
		fprintf(stderr, "ts %lld: %zu cgroups, expected %zu\n", (long long)ts, got->ncg, want->ncg);
		return false;
	}
	for (size_t i = 0; i < want->ncg; i++) {
		const struct cgsample *g = sample_find_cgroup(got, want->cg[i].path, want->cg[i].version);
		if (!g) {
			fprintf(stderr, "ts %lld: cgroup %s v%d missing\n", (long long)ts, want->cg[i].path,
				want->cg[i].version);
			return false;
		}
		if (!set_eq(&g->m, &want->cg[i].m, want->cg[i].path, ts))
			return false;
	}
	return true;
}

static int cmp_ts(const void *a, const void *b)
{
	int64_t x = ((const struct sample *)a)->ts_ms, y = ((const struct sample *)b)->ts_ms;
	return (x > y) - (x < y);
}

/* Exports host over [since, until] and compares with want[0..n) (sorted
 * by ts, those in range). Returns how many matched in order. */
static size_t export_check(struct store *st, const char *host, int64_t since, int64_t until,
			   const struct sample *want, size_t n)
{
	struct store_export *x = NULL;
	struct sample s;
	char err[256];
	size_t k = 0, got = 0;
	int rc;

	sample_init(&s);
	if (store_export_open(st, host, since, until, &x, err, sizeof(err)) != STORE_OK) {
		fprintf(stderr, "export_open: %s\n", err);
		return 0;
	}
	while ((rc = store_export_next(x, &s, err, sizeof(err))) == 1) {
		while (k < n && (want[k].ts_ms < since || want[k].ts_ms > until))
			k++;
		if (k >= n || !sample_eq(&s, &want[k])) {
			fprintf(stderr, "mismatch at exported sample %zu\n", got);
			break;
		}
		k++;
		got++;
	}
	if (rc < 0)
		fprintf(stderr, "export_next: %s\n", err);
	sample_release(&s);
	store_export_close(x);
	return got;
}

static size_t count_in(const struct sample *s, size_t n, int64_t since, int64_t until)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += s[i].ts_ms >= since && s[i].ts_ms <= until;
	return c;
}

static int put(struct store *st, const struct sample *s, size_t n)
{
	char err[512];
	size_t nfresh;
	int rc = store_put_samples(st, s, n, &nfresh, err, sizeof(err));
	if (rc != STORE_OK)
		fprintf(stderr, "put: %s\n", err);
	return rc;
}

/* Generated host: 5 cgroups, 300 samples at 10 s across midnight UTC
 * (keyframe at the day change, more rows than a page), posted in batches
 * of 40, then 20 late samples at +5 s between stored ones. */
static void test_generated(struct store *st)
{
	enum { N = 300, LATE = 20 };
	struct sample *s = calloc(N + LATE, sizeof(*s));
	struct gen_host *g = gen_host_new("gen-01", 5, 11);
	int64_t t0 = (time_now_ms() / 86400000 - 1) * 86400000 - 1500 * 1000;	/* before a midnight */

	CHECK(s && g);
	for (int i = 0; i < N; i++) {
		gen_host_step(g, 10000);
		CHECK_INT(gen_host_sample(g, t0 + (int64_t)i * 10000, &s[i]), 0);
	}
	for (int i = 0; i < LATE; i++) {
		gen_host_step(g, 10000);
		CHECK_INT(gen_host_sample(g, t0 + (int64_t)(i * 13 + 2) * 10000 + 5000, &s[N + i]), 0);
	}
	for (int i = 0; i < N; i += 40)
		CHECK_INT(put(st, s + i, i + 40 <= N ? 40 : N - i), STORE_OK);
	CHECK_INT(put(st, s + N, LATE), STORE_OK);
	qsort(s, N + LATE, sizeof(*s), cmp_ts);

	int64_t end = s[N + LATE - 1].ts_ms;
	CHECK_INT(export_check(st, "gen-01", t0, end, s, N + LATE), N + LATE);
	/* a sub-range starting inside a chain, and one ending in the middle */
	int64_t a = t0 + 1234567, b = t0 + 2345678;
	CHECK_INT(export_check(st, "gen-01", a, b, s, N + LATE), count_in(s, N + LATE, a, b));
	CHECK(count_in(s, N + LATE, a, b) > 100);
	/* one sample, exactly at since == until */
	CHECK_INT(export_check(st, "gen-01", s[77].ts_ms, s[77].ts_ms, s, N + LATE), 1);
	/* nothing in range */
	CHECK_INT(export_check(st, "gen-01", end + 1, end + 100000, s, N + LATE), 0);

	for (int i = 0; i < N + LATE; i++)
		sample_release(&s[i]);
	free(s);
	gen_host_free(g);
}

static int from_json(struct sample *s, const char *text)
{
	json_error_t je;
	char err[SAMPLE_ERR_MAX];
	json_t *j = json_loads(text, 0, &je);
	int rc = -1;

	sample_init(s);
	if (!j)
		fprintf(stderr, "bad test JSON: %s: %s\n", je.text, text);
	else if ((rc = sample_from_json(s, j, err)) < 0)
		fprintf(stderr, "sample_from_json: %s\n", err);
	json_decref(j);
	return rc;
}

/* Hand-made samples of host "odd" (ts seconds from base). */
static const char *const odd[] = {
	/* first sample: labels, unknown counters, v1 and v2 cgroups of one path */
	"{\"host\":\"odd\",\"ts\":%s.001,\"boot_id\":\"b-1\",\"kernel\":\"5.15.0-1\",\"agent_version\":\"0.9\","
	"\"interval_s\":10,\"page_size\":4096,\"mglru\":true,\"labels\":{\"rack\":\"r1\",\"env\":\"prod\"},"
	"\"vmstat\":{\"pgscan_kswapd\":100,\"my_future_counter\":9223372036854775807,\"nr_free_pages\":0},"
	"\"meminfo\":{\"MemTotal\":24683520,\"HugePages_Total\":0},"
	"\"psi\":{\"memory\":{\"some\":{\"avg10\":1.5,\"avg60\":0.25,\"avg300\":0.01,\"total\":9223372036854775807},"
	"\"full\":{\"avg10\":0,\"avg60\":0,\"avg300\":0,\"total\":0}}},"
	"\"settings\":{\"vm.swappiness\":60,\"vm.dirty_bytes\":0},"
	"\"cgroups\":[{\"path\":\"/system.slice\",\"version\":2,\"memory_stat\":{\"anon\":1,\"file\":2,\"new_stat_field\":3},"
	"\"events\":{\"oom_kill\":0,\"high\":5},\"memory_current\":123,\"memory_max\":null,\"swap_current\":0,"
	"\"settings\":{\"memory.high\":9223372036854775807}},"
	"{\"path\":\"/system.slice\",\"version\":1,\"memory_stat\":{\"cache\":4096,\"total_cache\":8192},"
	"\"memory_current\":4096,\"memory_max\":null,\"swap_current\":null}]}",
	/* counters go backwards, a counter disappears, memory_max gets a value */
	"{\"host\":\"odd\",\"ts\":%s.002,\"boot_id\":\"b-1\",\"kernel\":\"5.15.0-1\",\"agent_version\":\"0.9\","
	"\"labels\":{\"rack\":\"r1\",\"env\":\"prod\"},"
	"\"vmstat\":{\"pgscan_kswapd\":5,\"my_future_counter\":0},"
	"\"cgroups\":[{\"path\":\"/system.slice\",\"version\":2,\"memory_stat\":{\"anon\":0,\"file\":9223372036854775807},"
	"\"memory_current\":0,\"memory_max\":9223372036854771712,\"swap_current\":null},"
	"{\"path\":\"/system.slice\",\"version\":1,\"memory_stat\":{\"cache\":0},"
	"\"memory_current\":0,\"memory_max\":1,\"swap_current\":0}]}",
	/* reboot into a new kernel: new boot_id, other labels, no agent_version, a cgroup gone, one new */
	"{\"host\":\"odd\",\"ts\":%s.5,\"boot_id\":\"b-2\",\"kernel\":\"6.1.0-18-amd64\","
	"\"labels\":{\"rack\":\"r2\"},\"interval_s\":2.5,\"mglru\":false,"
	"\"vmstat\":{\"pgscan_kswapd\":1,\"workingset_refault_file\":42},"
	"\"cgroups\":[{\"path\":\"/user.slice/user-1000.slice/user@1000.service\",\"version\":2,"
	"\"memory_stat\":{\"anon\":7},\"psi\":{\"some\":{\"avg10\":99.99,\"avg60\":0,\"avg300\":0,\"total\":1},"
	"\"full\":{\"avg10\":0,\"avg60\":0,\"avg300\":0,\"total\":1}},\"memory_current\":1,\"memory_max\":null}]}",
	/* no boot_id, no kernel, no labels, no cgroups */
	"{\"host\":\"odd\",\"ts\":%s,\"vmstat\":{\"pgscan_kswapd\":1}}",
	/* the same again but with everything back */
	"{\"host\":\"odd\",\"ts\":%s.999,\"boot_id\":\"b-2\",\"kernel\":\"6.1.0-18-amd64\",\"agent_version\":\"1.0\","
	"\"labels\":{\"rack\":\"r2\"},\"vmstat\":{\"pgscan_kswapd\":9223372036854775807,\"zero\":0},"
	"\"cgroups\":[{\"path\":\"/system.slice\",\"version\":2,\"memory_stat\":{},\"memory_max\":null}]}",
};

static void test_odd(struct store *st)
{
	enum { N = sizeof(odd) / sizeof(odd[0]) };
	struct sample s[N];
	int64_t base = (time_now_ms() / 1000) - 7200;
	char text[4096], ts[32];

	for (int i = 0; i < (int)N; i++) {
		snprintf(ts, sizeof(ts), "%lld", (long long)(base + i * 10));
		snprintf(text, sizeof(text), odd[i], ts);
		CHECK_INT(from_json(&s[i], text), 0);
		/* one sample per call, as an agent posts */
		CHECK_INT(put(st, &s[i], 1), STORE_OK);
	}
	CHECK_INT(export_check(st, "odd", base * 1000, (base + 100) * 1000, s, N), N);
	/* a late copy of sample 1 one second later: self-contained row between chain rows */
	struct sample late;
	CHECK_INT(sample_copy(&late, &s[1]), 0);
	late.ts_ms += 1000;
	CHECK_INT(put(st, &late, 1), STORE_OK);
	struct sample all[N + 1];
	memcpy(all, s, sizeof(s));
	all[N] = late;
	qsort(all, N + 1, sizeof(*all), cmp_ts);
	CHECK_INT(export_check(st, "odd", base * 1000, (base + 100) * 1000, all, N + 1), N + 1);
	for (int i = 0; i < (int)N + 1; i++)
		sample_release(&all[i]);
}

/* Rows stored while a cursor is open (a new metric name, a new cgroup)
 * come out decoded; unknown hosts and bad ranges are refused. */
static void test_cursor(struct store *st)
{
	struct sample a, b, got;
	struct store_export *x = NULL;
	char err[256];
	int64_t base = (time_now_ms() / 1000) - 3600;
	char text[1024];

	snprintf(text, sizeof(text), "{\"host\":\"live\",\"ts\":%lld,\"vmstat\":{\"pgscan_kswapd\":1}}",
		 (long long)base);
	CHECK_INT(from_json(&a, text), 0);
	snprintf(text, sizeof(text), "{\"host\":\"live\",\"ts\":%lld,\"vmstat\":{\"pgscan_kswapd\":2,"
		 "\"brand_new_counter_%lld\":3},\"cgroups\":[{\"path\":\"/new\",\"version\":2,"
		 "\"memory_stat\":{\"anon\":5}}]}", (long long)base + 10, (long long)base);
	CHECK_INT(from_json(&b, text), 0);
	CHECK_INT(put(st, &a, 1), STORE_OK);
	sample_init(&got);
	CHECK_INT(store_export_open(st, "live", base * 1000, (base + 60) * 1000, &x, err, sizeof(err)), STORE_OK);
	CHECK_INT(store_export_next(x, &got, err, sizeof(err)), 1);
	CHECK(sample_eq(&got, &a));
	CHECK_INT(put(st, &b, 1), STORE_OK);
	CHECK_INT(store_export_next(x, &got, err, sizeof(err)), 1);
	CHECK(sample_eq(&got, &b));
	CHECK_INT(store_export_next(x, &got, err, sizeof(err)), 0);
	store_export_close(x);
	sample_release(&got);
	sample_release(&a);
	sample_release(&b);

	x = NULL;
	CHECK_INT(store_export_open(st, "nobody", 0, 1000, &x, err, sizeof(err)), STORE_ENOTFOUND);
	CHECK(x == NULL);
	CHECK_INT(store_export_open(st, "live", 1000, 0, &x, err, sizeof(err)), STORE_EINVAL);
	store_export_close(NULL);
}

int main(void)
{
	testdb_create(&db);
	struct store *st = open_store();
	CHECK(st != NULL);
	if (st) {
		test_generated(st);
		test_odd(st);
		test_cursor(st);
		store_close(st);
	}
	testdb_drop(&db);
	return harness_report("test_export");
}
