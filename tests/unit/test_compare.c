/* test_compare.c - server/api/compare.c without a database: rows of two groups
 * of hosts in, figures out. Checks the definitions of docs/api.md
 * "Compare" on numbers worked by hand: the scan-weighted host efficiency,
 * alert minutes per host-day, histogram counts, the verdict's direction,
 * null statistics for a figure without data. */
#include "compare.h"
#include "harness.h"

#include <math.h>
#include <string.h>

#define B0 1764547200000LL	/* a 5-minute boundary */
#define STEP 300000LL

static const json_t *fig(const json_t *figs, const char *name)
{
	size_t i;
	const json_t *f;
	json_array_foreach((json_t *)figs, i, f)
		if (strcmp(json_string_value(json_object_get(f, "name")), name) == 0)
			return f;
	return NULL;
}

static double num(const json_t *f, const char *side, const char *key)
{
	const json_t *v = json_object_get(json_object_get(f, side), key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void row(struct compare *c, int32_t id, int k, double scan_k, double steal_k, double psi)
{
	double v[CMP_NSRC];
	for (int s = 0; s < CMP_NSRC; s++)
		v[s] = NAN;
	v[CMP_SCAN_K] = scan_k;
	v[CMP_STEAL_K] = steal_k;
	v[CMP_PSI_SOME] = psi;
	CHECK_INT(compare_add_row(c, id, B0 + k * STEP, v), 0);
}

int main(void)
{
	/* hosts 1..6 in group a, 11..16 in b, 20 outside both */
	struct cmp_host h[13];
	int side[13];
	size_t n = 0;
	memset(h, 0, sizeof(h));
	for (int i = 1; i <= 6; i++, n++) {
		h[n].id = i;
		side[n] = 0;
		h[n].last_ts_ms = B0 + 2 * STEP;
	}
	for (int i = 11; i <= 16; i++, n++) {
		h[n].id = i;
		side[n] = 1;
		h[n].last_ts_ms = B0 + 2 * STEP;
	}
	h[n].id = 20;
	side[n++] = -1;

	/* host 11: a writeback_storm alert open from 1 min into bucket 0 until
	 * 2 min into bucket 1 (4 + 2 minutes), and a second, overlapping one of
	 * a cgroup over all of bucket 0 (capped at 5); host 12: still open from
	 * bucket 1 + 3 min, ends at its newest sample (bucket 2 start). */
	struct cmp_alert al[3] = {
		{ 11, "writeback_storm", B0 + 60000, B0 + STEP + 120000 },
		{ 11, "writeback_storm", B0, B0 + STEP },
		{ 12, "writeback_storm", B0 + STEP + 180000, INT64_MAX },
	};
	struct compare *c = compare_new(h, side, n, al, 3, 1);	/* 1: the arrays must grow */
	CHECK(c != NULL);

	/* group a: efficiency 50 % in bucket 0 (scan 100) and 100 % in bucket
	 * 1 (scan 300): host value 100 * (50 + 300) / 400 = 87.5; psi 1 */
	for (int i = 1; i <= 6; i++) {
		row(c, i, 0, 100, 50, 1);
		row(c, i, 1, 300, 300, 1);
	}
	/* group b: efficiency 10 %, psi 5 + i / 10 */
	for (int i = 11; i <= 16; i++) {
		row(c, i, 0, 100, 10, 5 + i / 10.0);
		row(c, i, 1, 100, 10, 5 + i / 10.0);
	}
	row(c, 20, 0, 100, 100, 99);	/* outside both groups: ignored */
	row(c, 99, 0, 100, 100, 99);	/* unknown host: ignored */

	json_t *figs = compare_figures(c, COMPARE_ALPHA);
	CHECK(figs != NULL);

	const json_t *e = fig(figs, "kswapd_efficiency");
	CHECK(e != NULL);
	CHECK_INT((long long)num(e, "a", "n"), 12);
	CHECK_INT((long long)num(e, "a", "hosts"), 6);
	/* interval values 50 and 100, six of each: mean 75, p50 75 */
	CHECK(fabs(num(e, "a", "mean") - 75) < 1e-9);
	CHECK(fabs(num(e, "a", "p50") - 75) < 1e-9);
	CHECK(fabs(num(e, "b", "mean") - 10) < 1e-9);
	CHECK(json_is_true(json_object_get(e, "significant")));
	CHECK_STR(json_string_value(json_object_get(e, "verdict")), "worse");	/* lower efficiency */
	/* 6 vs 6 all a above all b: U of a = 36; ties within groups -> normal */
	CHECK(fabs(json_number_value(json_object_get(json_object_get(e, "test"), "u")) - 36) < 1e-9);
	CHECK(fabs(json_number_value(json_object_get(json_object_get(e, "change_pct"), "mean")) -
		   (10.0 - 75.0) / 75.0 * 100) < 1e-9);
	const json_t *hist = json_object_get(e, "hist");
	CHECK_INT(json_array_size(json_object_get(hist, "edges")), 11);
	CHECK(fabs(json_number_value(json_array_get(json_object_get(hist, "edges"), 0)) - 10) < 1e-9);
	CHECK(fabs(json_number_value(json_array_get(json_object_get(hist, "edges"), 10)) - 100) < 1e-9);
	CHECK_INT(json_integer_value(json_array_get(json_object_get(hist, "a"), 4)), 6);	/* 50 in [46, 55) */
	CHECK_INT(json_integer_value(json_array_get(json_object_get(hist, "a"), 9)), 6);	/* 100: the last bin */
	CHECK_INT(json_integer_value(json_array_get(json_object_get(hist, "b"), 0)), 12);

	const json_t *p = fig(figs, "psi_memory_some");
	CHECK_STR(json_string_value(json_object_get(p, "verdict")), "worse");
	CHECK(fabs(num(p, "a", "p99") - 1) < 1e-9);

	/* no data: null statistics, no test */
	const json_t *w = fig(figs, "vmscan_write");
	CHECK(w != NULL);
	CHECK_INT((long long)num(w, "a", "hosts"), 0);
	CHECK(json_is_null(json_object_get(json_object_get(w, "a"), "mean")));
	CHECK(json_is_null(json_object_get(json_object_get(w, "test"), "p")));
	CHECK(json_is_null(json_object_get(w, "hist")));
	CHECK(json_is_false(json_object_get(w, "significant")));
	CHECK_STR(json_string_value(json_object_get(w, "verdict")), "same");

	/* alert minutes per bucket x 288: host 11 bucket 0 min(5, 4 + 5) = 5,
	 * bucket 1: 2; host 12 bucket 1: 2 (open until its newest sample) */
	const json_t *m = fig(figs, "alert_minutes_writeback_storm");
	CHECK(m != NULL);
	CHECK_STR(json_string_value(json_object_get(m, "unit")), "min/host-day");
	CHECK(fabs(num(m, "a", "mean")) < 1e-9);
	CHECK_INT((long long)num(m, "b", "n"), 12);
	CHECK(fabs(num(m, "b", "mean") - (5 + 2 + 2) * 288.0 / 12) < 1e-9);
	/* sorted: nine 0, 576, 576, 1440; h = 11 * 0.99 = 10.89 */
	CHECK(fabs(num(m, "b", "p99") - (576 + 0.89 * (1440 - 576))) < 1e-6);

	json_decref(figs);
	compare_free(c);

	/* the same figures whether hosts are found through the id table
	 * (dense ids, above) or by binary search (sparse ids), and whether
	 * the value arrays are the reused block (sized for 2 buckets) or grow
	 * (1): a and b one host each, ids far apart */
	struct cmp_host h2[3];
	int side2[3] = { 0, -1, 1 };
	memset(h2, 0, sizeof(h2));
	h2[0].id = 5;
	h2[1].id = 700000;
	h2[2].id = 2000000000;
	for (size_t buckets = 1; buckets <= 2; buckets++) {
		struct compare *c2 = compare_new(h2, side2, 3, NULL, 0, buckets);
		CHECK(c2 != NULL);
		row(c2, 5, 0, 100, 40, 1);
		row(c2, 5, 1, 100, 60, 3);
		row(c2, 700000, 0, 100, 100, 99);	/* outside both groups */
		row(c2, 2000000000, 0, 200, 20, 7);
		row(c2, 2000000000, 1, 200, 20, 9);
		row(c2, 1999999999, 0, 1, 1, 1);	/* unknown */
		json_t *f2 = compare_figures(c2, COMPARE_ALPHA);
		CHECK(f2 != NULL);
		const json_t *p2 = fig(f2, "psi_memory_some");
		CHECK_INT((long long)num(p2, "a", "n"), 2);
		CHECK(fabs(num(p2, "a", "mean") - 2) < 1e-9);
		CHECK(fabs(num(p2, "b", "mean") - 8) < 1e-9);
		CHECK(fabs(num(p2, "b", "p50") - 8) < 1e-9);
		const json_t *e2 = fig(f2, "kswapd_efficiency");
		CHECK(fabs(num(e2, "a", "mean") - 50) < 1e-9);
		CHECK(fabs(num(e2, "b", "mean") - 10) < 1e-9);
		CHECK_INT((long long)num(e2, "b", "hosts"), 1);
		json_decref(f2);
		compare_free(c2);
	}

	/* per-host values (what the watch tests) and from_ms: host 1 ran its
	 * group only from 2 min into bucket 1, so bucket 0 is not its, nor
	 * bucket 1 (its first 2 minutes are of the host's previous group) */
	struct cmp_host h3[2];
	int side3[2] = { 0, 1 };
	memset(h3, 0, sizeof(h3));
	h3[0].id = 1;
	h3[0].from_ms = B0 + STEP + 120000;
	h3[1].id = 2;
	/* host 1's writeback_storm alert, open from bucket 0 to 3 min into
	 * bucket 2: only its minutes in bucket 2 count */
	struct cmp_alert al3[1] = { { 1, "writeback_storm", B0 + 60000, B0 + 2 * STEP + 180000 } };
	struct compare *c3 = compare_new(h3, side3, 2, al3, 1, 4);
	CHECK(c3 != NULL);
	row(c3, 1, 0, 100, 100, 50);	/* dropped */
	row(c3, 1, 1, 100, 100, 50);	/* dropped: holds from_ms */
	row(c3, 1, 2, 100, 50, 4);
	row(c3, 1, 3, 300, 0, 6);
	row(c3, 2, 0, 100, 100, 50);	/* kept: host 2 has no from_ms */
	CHECK_INT(compare_nhosts(c3), 2);
	CHECK_INT(compare_side(c3, 1), 1);
	int fpsi = -1, feff = -1;
	for (int f = 0; f < compare_nfig(c3); f++) {
		struct compare_fig d;
		compare_fig_info(c3, f, &d);
		if (strcmp(d.name, "psi_memory_some") == 0)
			fpsi = f;
		if (strcmp(d.name, "kswapd_efficiency") == 0) {
			feff = f;
			CHECK(d.higher_better);
		}
	}
	CHECK(fpsi >= 0 && feff >= 0);
	double x = -1;
	CHECK(compare_host_value(c3, fpsi, 0, &x));
	CHECK(fabs(x - 5) < 1e-9);
	CHECK(compare_host_value(c3, fpsi, 1, &x));
	CHECK(fabs(x - 50) < 1e-9);
	CHECK(compare_host_value(c3, feff, 0, &x));
	CHECK(fabs(x - 100.0 * 50 / 400) < 1e-9);	/* scan-weighted: 12.5 % */
	int fsw = -1;
	for (int f = 0; f < compare_nfig(c3); f++) {
		struct compare_fig d;
		compare_fig_info(c3, f, &d);
		if (strcmp(d.name, "swap_in") == 0)
			fsw = f;
	}
	CHECK(fsw >= 0 && !compare_host_value(c3, fsw, 0, &x));	/* no value */
	int fmin = -1;
	for (int f = 0; f < compare_nfig(c3); f++) {
		struct compare_fig d;
		compare_fig_info(c3, f, &d);
		if (strcmp(d.name, "alert_minutes_writeback_storm") == 0)
			fmin = f;
	}
	/* buckets 2 and 3: 3 minutes x 288, then 0 */
	CHECK(fmin >= 0 && compare_host_value(c3, fmin, 0, &x));
	CHECK(fabs(x - 3 * 288.0 / 2) < 1e-9);
	compare_free(c3);
	return harness_report("test_compare");
}
