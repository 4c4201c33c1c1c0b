/* Tests of the 5-minute rollups against a real PostgreSQL ($VMSCOPE_TEST_DB):
 * every rolled-up metric's rollup buckets equal the raw series downsampled
 * to the same 5-minute buckets (across a reboot and a counter reset), the
 * fleet sparklines equal the ones computed from raw series, long series
 * ranges switch to rollups, late samples leave rollups alone, and old
 * rollup month partitions are dropped by retention. */
#include "harness.h"
#include "testdb.h"
#include "teststore.h"

#include "api_fleet.h"
#include "dict.h"
#include "gen.h"
#include "store.h"
#include "store_rollup.h"

#include <math.h>
#include <time.h>

#define STEP 300000LL

static struct testdb db;

static json_t *series(struct store *st, const char *host, const char *metric, int64_t since, int64_t until,
		      int points, int source)
{
	struct series_query q = { host, NULL, metric, since, until, points, source, 0 };
	char err[512];
	json_t *o = NULL;
	if (store_series(st, &q, &o, err, sizeof(err)) != STORE_OK)
		fprintf(stderr, "series %s: %s\n", metric, err);
	return o;
}

static bool near(const json_t *a, const json_t *b, double rel)
{
	if (json_is_null(a) || json_is_null(b))
		return json_is_null(a) && json_is_null(b);
	double x = json_number_value(a), y = json_number_value(b);
	return fabs(x - y) <= rel * fmax(1.0, fmax(fabs(x), fabs(y)));
}

/* Two hours of a generated host at 10 s in batches, with a reboot (new
 * boot_id, counters restart) after 50 minutes. */
static void load_host(struct store *st, const char *name, int64_t t0)
{
	struct gen_host *g = gen_host_new(name, 2, 7);
	struct gen_host *g2 = gen_host_new(name, 2, 8);	/* "after the reboot": other counters */
	struct sample s[40];
	size_t n = 0;
	for (int i = 0; i < 720; i++) {
		struct gen_host *cur = i < 300 ? g : g2;
		gen_host_step(cur, 10000);
		CHECK(gen_host_sample(cur, t0 + (int64_t)i * 10000 + 1234, &s[n]) == 0);
		if (i >= 300) {
			free(s[n].boot_id);
			s[n].boot_id = strdup("rebooted-boot-id-0000000000000000");
		}
		if (++n == 40 || i == 719) {
			CHECK_INT(teststore_put_ckpt(st, s, n), STORE_OK);
			for (size_t k = 0; k < n; k++)
				sample_release(&s[k]);
			n = 0;
		}
	}
	gen_host_free(g);
	gen_host_free(g2);
}

static const char *const metrics[] = {
	"psi.memory.some.avg10", "psi.memory.full.avg10", "vmstat.workingset_refault_file",
	"vmstat.pgsteal_kswapd", "vmstat.pgsteal_direct", "vmstat.pgscan_kswapd",
	"vmstat.pgscan_direct", "vmstat.pswpin", "vmstat.pswpout",
	/* 031_rollup_wide.sql */
	"vmstat.workingset_refault_anon", "vmstat.workingset_activate_file", "vmstat.workingset_activate_anon",
	"vmstat.nr_vmscan_write", "vmstat.nr_vmscan_immediate_reclaim", "vmstat.pgrotated", "vmstat.nr_dirty",
	"vmstat.nr_writeback", "meminfo.Dirty", "meminfo.Writeback", "vmstat.nr_dirty_threshold",
	"vmstat.nr_dirty_background_threshold", "meminfo.SwapTotal", "meminfo.SwapFree", "psi.io.some.avg10",
	"psi.io.full.avg10", "vmstat.allocstall_normal", "vmstat.allocstall_movable", "vmstat.allocstall_dma",
	"vmstat.allocstall_dma32", "vmstat.allocstall_device",
	/* 100_rollup_all_reclaim.sql */
	"vmstat.pgscan_anon", "vmstat.pgscan_file", "vmstat.pgsteal_anon", "vmstat.pgsteal_file",
};

static void test_equal_to_raw(struct store *st, int64_t t0)
{
	int64_t until = t0 + 2 * 3600 * 1000 - 1;	/* 24 buckets of exactly 5 minutes */
	int nonnull = 0;
	for (size_t m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		json_t *raw = series(st, "roll-a", metrics[m], t0, until, 24, SERIES_RAW);
		json_t *rol = series(st, "roll-a", metrics[m], t0, until, 24, SERIES_ROLLUP);
		CHECK(raw && rol);
		if (!raw || !rol)
			continue;
		CHECK_STR(json_string_value(json_object_get(raw, "source")), "raw");
		CHECK_STR(json_string_value(json_object_get(rol, "source")), "rollup");
		json_t *rp = json_object_get(raw, "points"), *op = json_object_get(rol, "points");
		CHECK_INT(json_array_size(op), json_array_size(rp));
		CHECK(json_array_size(rp) >= 23);
		bool same = json_array_size(op) == json_array_size(rp);
		for (size_t i = 0; same && i < json_array_size(rp); i++) {
			json_t *a = json_array_get(rp, i), *b = json_array_get(op, i);
			same = near(json_array_get(a, 0), json_array_get(b, 0), 1e-12) &&
			       near(json_array_get(a, 1), json_array_get(b, 1), 1e-9) &&
			       near(json_array_get(a, 2), json_array_get(b, 2), 1e-6) &&	/* float4 */
			       near(json_array_get(a, 3), json_array_get(b, 3), 1e-6);
			nonnull += !json_is_null(json_array_get(a, 1));
			if (!same)
				fprintf(stderr, "%s bucket %zu: raw %s rollup %s\n", metrics[m], i,
					json_dumps(a, JSON_COMPACT), json_dumps(b, JSON_COMPACT));
		}
		CHECK(same);
		json_decref(raw);
		json_decref(rol);
	}
	CHECK(nonnull > 100);	/* the comparison compared numbers, not just nulls */
	/* every metric the host view charts on this (5.9+) kernel is rolled up */
	for (size_t m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++)
		CHECK(rollup_slot(metrics[m]) >= 0);
}

/* Host `name`'s 5-minute buckets in [t0, t0 + nb * STEP) of the per-sample
 * sum of the raw series of names[] (a sample where one of them has no
 * value counts as no value), against rollup slot `slot`. */
static void check_summed(struct store *st, const char *name, const char *const *names, int nn, int slot,
			 int64_t t0, int nb)
{
	double sum[64] = { 0 }, lo[64] = { 0 }, hi[64] = { 0 };
	int cnt[64] = { 0 };
	json_t *raw[8];
	int64_t until = t0 + nb * STEP - 1;

	CHECK(nb <= 64 && nn <= 8);
	for (int k = 0; k < nn; k++) {
		raw[k] = series(st, name, names[k], t0, until, 0, SERIES_RAW);
		CHECK(raw[k] != NULL);
		if (!raw[k])
			return;
	}
	json_t *p0 = json_object_get(raw[0], "points");
	bool aligned = true;
	for (size_t i = 0; i < json_array_size(p0); i++) {
		double x = 0, ts = json_number_value(json_array_get(json_array_get(p0, i), 0));
		bool null = false;
		for (int k = 0; k < nn; k++) {
			json_t *pt = json_array_get(json_object_get(raw[k], "points"), i);
			aligned &= json_number_value(json_array_get(pt, 0)) == ts;	/* same samples */
			null |= json_is_null(json_array_get(pt, 1));
			x += json_number_value(json_array_get(pt, 1));
		}
		int b = (int)(((int64_t)llround(ts * 1000) - t0) / STEP);
		if (null || b < 0 || b >= nb)
			continue;
		if (!cnt[b] || x < lo[b])
			lo[b] = x;
		if (!cnt[b] || x > hi[b])
			hi[b] = x;
		sum[b] += x;
		cnt[b]++;
	}
	CHECK(aligned);
	for (int k = 0; k < nn; k++)
		json_decref(raw[k]);

	PGconn *c = PQconnectdb(db.conninfo);
	PGresult *r = NULL;
	char err[256];
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT id FROM hosts WHERE name = '%s'", name);	/* a constant of this file */
	int32_t hid = (int32_t)teststore_q1(db.conninfo, sql);
	CHECK_INT(rollup_read(c, hid, t0, until, STEP, &slot, 1, &r, err, sizeof(err)), STORE_OK);
	int nonnull = 0;
	bool same = r && PQntuples(r) == nb;
	CHECK_INT(r ? PQntuples(r) : -1, nb);
	for (int i = 0; same && i < nb; i++) {
		int k = atoi(PQgetvalue(r, i, 1));
		same = k == i && atoi(PQgetvalue(r, i, 3)) == cnt[i];
		if (same && cnt[i]) {
			double a = strtod(PQgetvalue(r, i, 4), NULL) / cnt[i], want = sum[i] / cnt[i];
			double l = strtod(PQgetvalue(r, i, 5), NULL), h = strtod(PQgetvalue(r, i, 6), NULL);
			same = fabs(a - want) <= 1e-9 * fmax(1, fabs(want)) && fabs(l - lo[i]) <= 1e-6 * fmax(1, lo[i]) &&
			       fabs(h - hi[i]) <= 1e-6 * fmax(1, hi[i]);
			nonnull++;
		}
		if (!same)
			fprintf(stderr, "%s slot %d bucket %d: rollup k %s n %s sum %s lo %s hi %s; raw n %d avg %g lo %g hi %g\n",
				name, slot, i, PQgetvalue(r, i, 1), PQgetvalue(r, i, 3), PQgetvalue(r, i, 4),
				PQgetvalue(r, i, 5), PQgetvalue(r, i, 6), cnt[i], cnt[i] ? sum[i] / cnt[i] : 0, lo[i], hi[i]);
	}
	CHECK(same);
	CHECK(nonnull >= nb - 2);
	PQclear(r);
	PQfinish(c);
}

static uint32_t intern(const char *name)
{
	return dict_intern(name, strlen(name));
}

/* Slots that add up per-zone names: allocstall on a 4.10+ kernel (zones),
 * pgscan/pgsteal on a pre-4.8 kernel (only per-zone names exist). */
static void test_summed(struct store *st, int64_t t0)
{
	static const char *const zones[] = { "vmstat.allocstall_dma", "vmstat.allocstall_dma32",
					     "vmstat.allocstall_normal", "vmstat.allocstall_movable",
					     "vmstat.allocstall_device" };
	check_summed(st, "roll-a", zones, 5, rollup_slot("vmstat.allocstall"), t0, 24);

	/* a pre-4.8 host: pgscan_kswapd and pgsteal_direct split into zones */
	uint32_t scan = intern("vmstat.pgscan_kswapd"), steal = intern("vmstat.pgsteal_direct");
	uint32_t sn = intern("vmstat.pgscan_kswapd_normal"), sd = intern("vmstat.pgscan_kswapd_dma32");
	uint32_t tn = intern("vmstat.pgsteal_direct_normal");
	struct gen_host *g = gen_host_new("roll-zones", 0, 11);
	struct sample s[40];
	for (int i = 0; i < 360; i++) {
		struct sample *x = &s[i % 40];
		gen_host_step(g, 10000);
		CHECK(gen_host_sample(g, t0 + (int64_t)i * 10000 + 500, x) == 0);
		struct sset m = { 0 };
		for (size_t f = 0; f < x->m.n; f++) {
			uint32_t id = x->m.f[f].id;
			int64_t v = x->m.f[f].v;
			if (id == scan) {
				CHECK(sset_add(&m, sn, v) == 0 && sset_add(&m, sd, v / 3 + i) == 0);
			} else if (id == steal) {
				CHECK(sset_add(&m, tn, v) == 0);
			} else {
				CHECK(sset_add(&m, id, v) == 0);
			}
		}
		CHECK(sset_sort(&m) == 0);
		sset_release(&x->m);
		x->m = m;
		if (i % 40 == 39) {
			CHECK_INT(teststore_put_ckpt(st, s, 40), STORE_OK);
			for (int k = 0; k < 40; k++)
				sample_release(&s[k]);
		}
	}
	gen_host_free(g);
	static const char *const scans[] = { "vmstat.pgscan_kswapd_normal", "vmstat.pgscan_kswapd_dma32" };
	static const char *const steals[] = { "vmstat.pgsteal_direct_normal" };
	check_summed(st, "roll-zones", scans, 2, rollup_slot("vmstat.pgscan_kswapd"), t0, 12);
	check_summed(st, "roll-zones", steals, 1, rollup_slot("vmstat.pgsteal_direct"), t0, 12);
}

/* ts -> [ts, avg] of a downsampled series' points */
static json_t *ts_avg(const json_t *pts)
{
	json_t *out = json_array();
	size_t i;
	json_t *p;
	json_array_foreach((json_t *)pts, i, p)
		json_array_append_new(out, json_pack("[OO]", json_array_get(p, 0), json_array_get(p, 1)));
	return out;
}

/* {spark name: [[ts, v|null] for buckets with samples]} of host `name`
 * (the documented points layout), NULL when the host has no rollups. */
static json_t *spark_json(const struct fleet_sparks *fs, const char *name)
{
	int h = fleet_sparks_find(fs, name);
	if (h < 0)
		return NULL;
	json_t *o = json_object();
	for (int s = 0; s < FLEET_NSPARK; s++) {
		json_t *arr = json_array();
		for (int k = 0; k < fs->nb; k++) {
			size_t at = ((size_t)h * FLEET_NSPARK + (size_t)s) * (size_t)fs->nb + (size_t)k;
			if (fs->state[at] == FLEET_ABSENT)
				continue;
			json_array_append_new(arr, json_pack("[f,o]", (double)(fs->since_ms + k * fs->step_ms) / 1000.0,
							     fs->state[at] == FLEET_VALUE ? json_real(fs->v[at]) : json_null()));
		}
		json_object_set_new(o, fleet_spark_name[s], arr);
	}
	return o;
}

/* A host whose reclaim is all at a cgroup's limit: kswapd and direct
 * scan nothing, pgscan/pgsteal_anon/_file count it (5.8+). */
static void put_limit_host(struct store *st, int64_t t0)
{
	uint32_t zero[4] = { intern("vmstat.pgscan_kswapd"), intern("vmstat.pgscan_direct"), intern("vmstat.pgsteal_kswapd"),
			     intern("vmstat.pgsteal_direct") };
	struct gen_host *g = gen_host_new("roll-limit", 0, 13);
	struct sample s[40];
	for (int i = 0; i < 720; i++) {
		struct sample *x = &s[i % 40];
		gen_host_step(g, 10000);
		CHECK(gen_host_sample(g, t0 + (int64_t)i * 10000 + 700, x) == 0);
		for (size_t f = 0; f < x->m.n; f++)
			for (int k = 0; k < 4; k++)
				if (x->m.f[f].id == zero[k])
					x->m.f[f].v = 1000;
		if (i % 40 == 39) {
			CHECK_INT(teststore_put_ckpt(st, s, 40), STORE_OK);
			for (int k = 0; k < 40; k++)
				sample_release(&s[k]);
		}
	}
	gen_host_free(g);
}

static void test_fleet(struct store *st, int64_t t0)
{
	int64_t until = t0 + 2 * 3600 * 1000 - 1, step = 2 * STEP;
	struct fleet_sparks fs;
	char err[256];
	put_limit_host(st, t0);
	CHECK_INT(store_fleet_sparks(st, t0, until, step, &fs, err, sizeof(err)), STORE_OK);
	CHECK_INT(fs.nb, 12);
	json_t *sp = spark_json(&fs, "roll-a"), *h = sp;
	json_t *spb = spark_json(&fs, "roll-b");
	CHECK(h != NULL);
	CHECK(spb != NULL);
	CHECK(fleet_sparks_find(&fs, "roll-nope") < 0);
	json_decref(spb);
	fleet_sparks_release(&fs);
	if (!h)
		return;
	/* each sparkline equals the raw series' averages in 10-minute buckets */
	static const char *const pairs[][2] = { { "psi_memory_some", "psi.memory.some.avg10" },
						{ "refault_file", "vmstat.workingset_refault_file" },
						{ "swap_in", "vmstat.pswpin" }, { "swap_out", "vmstat.pswpout" } };
	for (size_t k = 0; k < 4; k++) {
		json_t *raw = series(st, "roll-a", pairs[k][1], t0, until, 12, SERIES_RAW);
		json_t *want = ts_avg(json_object_get(raw, "points"));
		json_t *got = json_object_get(h, pairs[k][0]);
		CHECK_INT(json_array_size(got), 12);
		bool same = json_array_size(got) == json_array_size(want);
		for (size_t i = 0; same && i < json_array_size(got); i++)
			same = near(json_array_get(json_array_get(got, i), 0), json_array_get(json_array_get(want, i), 0), 1e-12) &&
			       near(json_array_get(json_array_get(got, i), 1), json_array_get(json_array_get(want, i), 1), 1e-9);
		CHECK(same);
		json_decref(want);
		json_decref(raw);
	}
	/* roll-a reports all reclaim (pgscan/pgsteal_anon/_file, the last
	 * four names): its efficiency is theirs, not kswapd + direct's */
	const size_t nm = sizeof(metrics) / sizeof(metrics[0]);
	const char *const eff[4] = { metrics[nm - 2], metrics[nm - 1], metrics[nm - 4], metrics[nm - 3] };
	json_t *e[4];
	for (int k = 0; k < 4; k++) {
		json_t *raw = series(st, "roll-a", eff[k], t0, until, 12, SERIES_RAW);
		e[k] = json_incref(json_object_get(raw, "points"));
		json_decref(raw);
	}
	json_t *want = fleet_efficiency(e[0], e[1], e[2], e[3]);
	json_t *got = json_object_get(h, "reclaim_efficiency");
	CHECK_INT(json_array_size(got), json_array_size(want));
	bool same = json_array_size(got) == json_array_size(want);
	for (size_t i = 0; same && i < json_array_size(got); i++)
		same = near(json_array_get(json_array_get(got, i), 1), json_array_get(json_array_get(want, i), 1), 1e-9);
	CHECK(same);
	for (int k = 0; k < 4; k++)
		json_decref(e[k]);
	json_decref(want);
	/* the limit host: its efficiency from all reclaim, a value in every
	 * bucket although kswapd and direct scanned nothing */
	CHECK_INT(store_fleet_sparks(st, t0, until, step, &fs, err, sizeof(err)), STORE_OK);
	json_t *lim = spark_json(&fs, "roll-limit");
	fleet_sparks_release(&fs);
	for (int k = 0; k < 4; k++) {
		json_t *raw = series(st, "roll-limit", eff[k], t0, until, 12, SERIES_RAW);
		e[k] = json_incref(json_object_get(raw, "points"));
		json_decref(raw);
	}
	want = fleet_efficiency(e[0], e[1], e[2], e[3]);
	got = json_object_get(lim, "reclaim_efficiency");
	same = json_array_size(got) == 12 && json_array_size(want) == 12;
	for (size_t i = 0; same && i < 12; i++)
		same = json_is_number(json_array_get(json_array_get(got, i), 1)) &&
		       near(json_array_get(json_array_get(got, i), 1), json_array_get(json_array_get(want, i), 1), 1e-9);
	CHECK(same);
	for (int k = 0; k < 4; k++)
		json_decref(e[k]);
	json_decref(want);
	json_decref(lim);
	/* invalid steps are refused */
	json_decref(sp);
	CHECK_INT(store_fleet_sparks(st, t0, until, 1000, &fs, err, sizeof(err)), STORE_EINVAL);
	CHECK(fs.nhosts == 0 && fs.v == NULL);
}

static void test_auto_and_late(struct store *st, int64_t t0)
{
	/* a 3-day range reads rollups, a 2-hour one raw rows */
	json_t *o = series(st, "roll-a", "vmstat.pswpin", t0 - 2 * 86400000LL, t0 + 86400000LL, 100, SERIES_AUTO);
	CHECK_STR(json_string_value(json_object_get(o, "source")), "rollup");
	json_decref(o);
	o = series(st, "roll-a", "vmstat.pswpin", t0, t0 + 7200000, 100, SERIES_AUTO);
	CHECK_STR(json_string_value(json_object_get(o, "source")), "raw");
	json_decref(o);
	/* a 3-day host view reads no raw rows: every charted metric */
	int nroll = 0;
	for (size_t m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		o = series(st, "roll-a", metrics[m], t0 - 2 * 86400000LL, t0 + 86400000LL, 600, SERIES_AUTO);
		const char *src = json_string_value(json_object_get(o, "source"));
		nroll += src && strcmp(src, "rollup") == 0;
		json_decref(o);
	}
	CHECK_INT(nroll, (int)(sizeof(metrics) / sizeof(metrics[0])));
	/* a metric that is not rolled up always reads raw rows */
	o = series(st, "roll-a", "vmstat.pgfault", t0 - 2 * 86400000LL, t0 + 86400000LL, 100, SERIES_AUTO);
	CHECK_STR(json_string_value(json_object_get(o, "source")), "raw");
	json_decref(o);
	/* a late sample is stored but not rolled up */
	long long n0 = teststore_q1(db.conninfo, "SELECT sum(n) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = 'roll-a'");
	CHECK_INT(n0, 720);
	struct gen_host *g = gen_host_new("roll-a", 0, 9);
	struct sample s;
	gen_host_step(g, 10000);
	CHECK(gen_host_sample(g, t0 + 5000, &s) == 0);
	CHECK_INT(teststore_put_ckpt(st, &s, 1), STORE_OK);
	sample_release(&s);
	gen_host_free(g);
	CHECK_INT(teststore_q1(db.conninfo, "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = 'roll-a'"), 721);
	CHECK_INT(teststore_q1(db.conninfo, "SELECT sum(n) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = 'roll-a'"), n0);
}

static void test_retention(int64_t now)
{
	struct store *st = teststore_open(db.conninfo, 200, 60);
	CHECK(st != NULL);
	if (!st)
		return;
	int64_t old = (now - 100LL * 86400000) / STEP * STEP;
	struct gen_host *g = gen_host_new("roll-old", 0, 3);
	struct sample s[2];
	for (int i = 0; i < 2; i++) {
		gen_host_step(g, 10000);
		CHECK(gen_host_sample(g, old + i * 10000, &s[i]) == 0);
	}
	CHECK_INT(teststore_put_ckpt(st, s, 2), STORE_OK);
	sample_release(&s[0]);
	sample_release(&s[1]);
	gen_host_free(g);
	CHECK_INT(teststore_q1(db.conninfo, "SELECT sum(n) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = 'roll-old'"), 2);
	long long parts = teststore_q1(db.conninfo, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'rollup_5m'::regclass");
	CHECK(parts >= 2);
	int n = 0;
	char err[256];
	CHECK_INT(store_drop_expired(st, now, &n, err, sizeof(err)), STORE_OK);
	CHECK(n >= 1);
	/* the 100-day-old month went with its partition; raw rows (200 days) stay */
	CHECK_INT(teststore_q1(db.conninfo, "SELECT count(*) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = 'roll-old'"), 0);
	CHECK(teststore_q1(db.conninfo, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'rollup_5m'::regclass") < parts);
	CHECK_INT(teststore_q1(db.conninfo, "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = 'roll-old'"), 2);
	/* this month's rollups are kept */
	CHECK(teststore_q1(db.conninfo, "SELECT count(*) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = 'roll-a'") > 0);
	CHECK_INT(store_drop_expired(st, now, &n, err, sizeof(err)), STORE_OK);
	CHECK_INT(n, 0);
	store_close(st);
}

int main(void)
{
	testdb_create(&db);
	int64_t now = (int64_t)time(NULL) * 1000;
	int64_t t0 = (now - 3 * 3600 * 1000) / STEP * STEP;	/* 5-minute aligned */
	struct store *st = teststore_open(db.conninfo, 30, 400);
	CHECK(st != NULL);
	if (st) {
		load_host(st, "roll-a", t0);
		load_host(st, "roll-b", t0);
		test_equal_to_raw(st, t0);
		test_fleet(st, t0);
		test_summed(st, t0);
		test_auto_and_late(st, t0);
		store_close(st);
	}
	test_retention(now);
	testdb_drop(&db);
	return harness_report("test_rollup");
}
