/* test_regress.c - server/regress/regress.c without a database: per-host
 * values in through compare.c, verdicts out. Checks that a clear
 * regression on a few hosts is found and says so (severity, evidence,
 * summary, links), and each guard the watch relies on: a tiny shift on
 * many hosts (significant, below the minimum effect), one bad host among
 * six, Holm's correction across tests, the direction of a figure where
 * higher is better, a difference that lies only between the strata of a
 * label (found across them, gone within them), and the resolve rule. */
#include "harness.h"
#include "regress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define B0 1764547200000LL	/* a 5-minute boundary */
#define STEP 300000LL

/* A little fleet: n hosts, ids 1..n, side and label role per host. */
struct fleet {
	struct cmp_host h[512];
	int side[512];
	size_t n;
};

static void host(struct fleet *f, int side, const char *role)
{
	struct cmp_host *h = &f->h[f->n];
	memset(h, 0, sizeof(*h));
	h->id = (int32_t)f->n + 1;
	h->last_ts_ms = B0 + 2 * STEP;
	h->labels = json_pack("{s:s,s:s}", "role", role, "rack", f->n % 2 ? "r1" : "r2");
	f->side[f->n++] = side;
}

static void fleet_free(struct fleet *f)
{
	for (size_t i = 0; i < f->n; i++)
		json_decref(f->h[i].labels);
}

/* Two buckets per host of one source (psi, immediate reclaim or the
 * kswapd scan/steal pair for the efficiency) at value x. */
static void rows(struct compare *c, int32_t id, int src, double x)
{
	for (int k = 0; k < 2; k++) {
		double v[CMP_NSRC];
		for (int s = 0; s < CMP_NSRC; s++)
			v[s] = NAN;
		if (src == CMP_STEAL_K) {	/* x: efficiency in % */
			v[CMP_SCAN_K] = 1000;
			v[CMP_STEAL_K] = 10 * x;
		} else {
			v[src] = x;
		}
		CHECK_INT(compare_add_row(c, id, B0 + k * STEP, v), 0);
	}
}

static int fig_index(const struct compare *c, const char *name)
{
	for (int f = 0; f < compare_nfig(c); f++) {
		struct compare_fig d;
		compare_fig_info(c, f, &d);
		if (strcmp(d.name, name) == 0)
			return f;
	}
	return -1;
}

/* 20 hosts of A with psi 0.1 .. 0.29, 6 of B with psi 9.5 .. 10.5 */
static void test_clear_regression(void)
{
	struct fleet fl = { .n = 0 };
	for (int i = 0; i < 20; i++)
		host(&fl, 0, "web");
	for (int i = 0; i < 6; i++)
		host(&fl, 1, "web");
	struct compare *c = compare_new(fl.h, fl.side, fl.n, NULL, 0, 2);
	for (int i = 0; i < 20; i++)
		rows(c, i + 1, CMP_PSI_SOME, 0.1 + 0.01 * i);
	for (int i = 0; i < 6; i++)
		rows(c, 21 + i, CMP_PSI_SOME, 9.5 + 0.2 * i);

	struct regress_fig g[2], x;
	CHECK_INT(regress_figure(c, fig_index(c, "psi_memory_some"), NULL, 0, 5, &g[0]), 0);
	CHECK(g[0].tested && g[0].worse_side && g[0].effect);
	CHECK_STR(g[0].method, "mann-whitney-u");
	CHECK_INT(g[0].base.hosts, 20);
	CHECK_INT(g[0].rel.hosts, 6);
	/* complete separation 20 vs 6 without ties: exact p = 2 / C(26, 6) */
	CHECK(fabs(g[0].p - 2.0 / 230230) < 1e-12);
	CHECK(fabs(g[0].med_rel - 10.0) < 1e-9);
	CHECK(fabs(g[0].med_base - 0.195) < 1e-9);
	CHECK(fabs(g[0].diff - (10.0 - 0.195)) < 1e-9);
	CHECK(fabs(g[0].base.p95 - (0.1 + 0.01 * 18.05)) < 1e-9);
	CHECK_STR(g[0].watch.theme, "memory pressure");
	/* fewer release hosts with a value than asked for: not tested */
	CHECK_INT(regress_figure(c, fig_index(c, "psi_memory_some"), NULL, 0, 7, &x), 0);
	CHECK(!x.tested && isnan(x.p) && x.rel.hosts == 6 && x.base.hosts == 20);

	/* a figure without values: not tested */
	CHECK_INT(regress_figure(c, fig_index(c, "swap_in"), NULL, 0, 5, &g[1]), 0);
	CHECK(!g[1].tested && isnan(g[1].p));
	/* not watched: -1 */
	CHECK_INT(regress_figure(c, fig_index(c, "scan_kswapd"), NULL, 0, 5, &x), -1);

	regress_decide(g, 2, REGRESS_ALPHA);
	CHECK(g[0].worse && !g[1].worse);
	CHECK(fabs(g[0].p_adj - g[0].p) < 1e-15);	/* one test in the family */
	CHECK_STR(regress_severity(g, 1), "critical");	/* B's median above A's p95 */

	/* what the alert says */
	struct regress_pair p = { .release = "6.1.0-21+deb", .baseline = "6.1.0-18", .baseline_source = "host-hours",
				  .hosts_rel = 6, .hosts_base = 20, .since_ms = B0, .until_ms = B0 + 6 * 3600000LL,
				  .tests = 2, .alpha = REGRESS_ALPHA };
	char sum[256];
	CHECK_STR(regress_summary(&p, g, 1, sum, sizeof(sum)),
		  "6.1.0-21+deb vs 6.1.0-18: memory pressure worse, 6 vs 20 hosts, p = 8.7e-06");
	json_t *ev = regress_evidence(&p, g, 1);
	CHECK(ev != NULL);
	CHECK_STR(json_string_value(json_object_get(ev, "release")), "6.1.0-21+deb");
	CHECK_INT(json_integer_value(json_object_get(ev, "window_s")), 6 * 3600);
	json_t *f0 = json_array_get(json_object_get(ev, "figures"), 0);
	CHECK_STR(json_string_value(json_object_get(f0, "name")), "psi_memory_some");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(f0, "release"), "hosts")), 6);
	CHECK(json_is_number(json_object_get(json_object_get(f0, "baseline"), "p50")));
	CHECK(json_is_number(json_object_get(f0, "p_adjusted")));
	CHECK_STR(json_string_value(json_object_get(json_object_get(ev, "compare"), "page")),
		  "#/compare?group_by=kernel&a=6.1.0-18&b=6.1.0-21%2Bdeb&range=6h&mark=psi_memory_some");
	CHECK_CONTAINS(json_string_value(json_object_get(json_object_get(ev, "compare"), "api")),
		       "/api/v1/compare?group_by=kernel&a=6.1.0-18&b=6.1.0-21%2Bdeb&since=1764547200000&until=");
	CHECK(json_is_null(json_object_get(ev, "stratify")));
	json_decref(ev);
	compare_free(c);
	fleet_free(&fl);
}

/* 200 + 200 hosts, B 0.3 points of PSI higher: significant, too small */
static void test_tiny_shift(void)
{
	static struct fleet fl;
	fl.n = 0;
	for (int i = 0; i < 400; i++)
		host(&fl, i < 200 ? 0 : 1, "web");
	struct compare *c = compare_new(fl.h, fl.side, fl.n, NULL, 0, 2);
	for (int i = 0; i < 400; i++)
		rows(c, i + 1, CMP_PSI_SOME, 0.5 + 0.001 * (i % 200) + (i < 200 ? 0 : 0.3));
	struct regress_fig g;
	CHECK_INT(regress_figure(c, fig_index(c, "psi_memory_some"), NULL, 0, 5, &g), 0);
	regress_decide(&g, 1, REGRESS_ALPHA);
	CHECK(g.tested && g.worse_side && g.p < 1e-10);
	CHECK(!g.effect && !g.worse);	/* 0.3 < the floor of 1 point */
	compare_free(c);
	fleet_free(&fl);
}

/* one storming host among 6 on B: not worse */
static void test_one_bad_host(void)
{
	struct fleet fl = { .n = 0 };
	for (int i = 0; i < 26; i++)
		host(&fl, i < 20 ? 0 : 1, "web");
	struct compare *c = compare_new(fl.h, fl.side, fl.n, NULL, 0, 2);
	for (int i = 0; i < 26; i++)
		rows(c, i + 1, CMP_IMMEDIATE, i == 25 ? 1800 : 0.5 * (i % 7));
	struct regress_fig g;
	CHECK_INT(regress_figure(c, fig_index(c, "immediate_reclaim"), NULL, 0, 5, &g), 0);
	regress_decide(&g, 1, REGRESS_ALPHA);
	CHECK(g.tested && !g.worse);
	CHECK(g.p > 0.05 && !g.effect);
	compare_free(c);
	fleet_free(&fl);
}

/* efficiency: higher is better; the ratio is of the unreclaimed share */
static void test_efficiency(void)
{
	struct fleet fl = { .n = 0 };
	for (int i = 0; i < 16; i++)
		host(&fl, i < 10 ? 0 : 1, "web");
	struct compare *c = compare_new(fl.h, fl.side, fl.n, NULL, 0, 2);
	for (int i = 0; i < 16; i++)
		rows(c, i + 1, CMP_STEAL_K, i < 10 ? 94 + 0.1 * i : 60 + i);
	struct regress_fig g;
	CHECK_INT(regress_figure(c, fig_index(c, "kswapd_efficiency"), NULL, 0, 5, &g), 0);
	regress_decide(&g, 1, REGRESS_ALPHA);
	CHECK(g.higher_better && g.worse_side && g.effect && g.worse);
	CHECK(fabs(g.diff - (g.med_base - g.med_rel)) < 1e-9);
	CHECK(fabs(g.ratio - (100 - g.med_rel) / (100 - g.med_base)) < 1e-9);
	CHECK_STR(regress_severity(&g, 1), "critical");	/* B's median below A's p5 */
	compare_free(c);

	/* the other way round: better, not worse */
	int side2[16];
	for (int i = 0; i < 16; i++)
		side2[i] = 1 - fl.side[i];
	c = compare_new(fl.h, side2, fl.n, NULL, 0, 2);
	for (int i = 0; i < 16; i++)
		rows(c, i + 1, CMP_STEAL_K, i < 10 ? 94 + 0.1 * i : 60 + i);
	CHECK_INT(regress_figure(c, fig_index(c, "kswapd_efficiency"), NULL, 0, 5, &g), 0);
	regress_decide(&g, 1, REGRESS_ALPHA);
	CHECK(g.tested && !g.worse_side && !g.worse && g.diff < 0);
	compare_free(c);
	fleet_free(&fl);
}

static void test_holm(void)
{
	struct regress_fig g[3];
	memset(g, 0, sizeof(g));
	for (int i = 0; i < 3; i++) {
		g[i].tested = g[i].worse_side = g[i].effect = true;
		g[i].higher_better = false;
	}
	/* each below 0.05 alone; adjusted 0.06, 0.06, 0.06 */
	g[0].p = 0.02;
	g[1].p = 0.03;
	g[2].p = 0.04;
	regress_decide(g, 3, REGRESS_ALPHA);
	CHECK(!g[0].worse && !g[1].worse && !g[2].worse);
	CHECK(fabs(g[0].p_adj - 0.06) < 1e-12);
	/* 0.004 0.02 0.04: 0.012 0.04 0.04 */
	g[0].p = 0.004;
	g[1].p = 0.02;
	regress_decide(g, 3, REGRESS_ALPHA);
	CHECK(g[0].worse && g[1].worse && g[2].worse);
	CHECK(fabs(g[2].p_adj - 0.04) < 1e-12);
	/* an untested figure is not in the family */
	g[2].tested = false;
	g[1].p = 0.03;
	regress_decide(g, 3, REGRESS_ALPHA);
	CHECK(fabs(g[1].p_adj - 0.03) < 1e-12 && isnan(g[2].p_adj) && !g[2].worse);
	CHECK_STR(regress_severity(g, 3), "warning");	/* no medians: never beyond */
}

/* A: 17 web hosts (psi 0) and 3 db hosts (psi ~10); B: 6 db hosts (psi
 * ~10). Across roles B looks worse; within role=db it is not. */
static void test_strata(void)
{
	struct fleet fl = { .n = 0 };
	for (int i = 0; i < 17; i++)
		host(&fl, 0, "web");
	for (int i = 0; i < 3; i++)
		host(&fl, 0, "db");
	for (int i = 0; i < 6; i++)
		host(&fl, 1, "db");
	struct compare *c = compare_new(fl.h, fl.side, fl.n, NULL, 0, 2);
	for (size_t i = 0; i < fl.n; i++)
		rows(c, (int32_t)i + 1, CMP_PSI_SOME, i < 17 ? 0.01 * (double)i : 9.7 + 0.1 * (double)(i % 5));

	struct regress_fig g;
	CHECK_INT(regress_figure(c, fig_index(c, "psi_memory_some"), NULL, 0, 5, &g), 0);
	regress_decide(&g, 1, REGRESS_ALPHA);
	CHECK(g.worse);	/* across the roles */

	int stratum[32];
	const char *names[REGRESS_MAX_STRATA];
	int ns = regress_strata(fl.h, fl.side, fl.n, "role", stratum, names);
	CHECK_INT(ns, 2);
	CHECK_STR(names[0], "web");
	CHECK_STR(names[1], "db");
	CHECK_INT(stratum[0], 0);
	CHECK_INT(stratum[25], 1);
	CHECK_INT(regress_figure(c, fig_index(c, "psi_memory_some"), stratum, ns, 5, &g), 0);
	regress_decide(&g, 1, REGRESS_ALPHA);
	CHECK_STR(g.method, "mann-whitney-u");	/* one shared stratum: the U test */
	CHECK_INT(g.strata, 1);		/* web has no host of B */
	CHECK_INT(g.base.hosts, 3);	/* A's db hosts only */
	CHECK(g.tested && !g.worse && g.p > 0.05 && !g.effect);
	CHECK(g.med_base > 9);		/* A reweighted to B's mix: db */

	/* how the sides' labels differ: role (total variation distance
	 * (|0.85 - 0| + |0.15 - 1|) / 2), not rack */
	json_t *mix = regress_label_mix(fl.h, fl.side, fl.n);
	CHECK_INT(json_array_size(mix), 1);
	json_t *m0 = json_array_get(mix, 0);
	CHECK_STR(json_string_value(json_object_get(m0, "label")), "role");
	CHECK(fabs(json_number_value(json_object_get(m0, "distance")) - 0.85) < 1e-9);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(m0, "baseline"), "web")), 17);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(m0, "baseline"), "db")), 3);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(m0, "release"), "db")), 6);
	struct regress_pair p = { .release = "b", .baseline = "a", .baseline_source = "pinned", .since_ms = B0,
				  .until_ms = B0 + 900000, .label_mix = mix, .alpha = REGRESS_ALPHA };
	json_t *ev = regress_evidence(&p, &g, 1);
	CHECK_CONTAINS(json_string_value(json_object_get(ev, "hint")), "--regression-stratify role");
	CHECK_CONTAINS(json_string_value(json_object_get(json_object_get(ev, "compare"), "page")), "&range=1h&");
	json_decref(ev);
	json_decref(mix);

	/* a host outside both sides has no stratum; a host without the label
	 * is in the stratum "" */
	fl.side[0] = -1;
	json_object_del(fl.h[1].labels, "role");
	ns = regress_strata(fl.h, fl.side, fl.n, "role", stratum, names);
	CHECK_INT(stratum[0], -1);
	CHECK_STR(names[stratum[1]], "");
	CHECK_INT(ns, 3);
	compare_free(c);
	fleet_free(&fl);
}

/* --regression-stratify with every host in one stratum gives the U
 * test's exact p (2 / C(13, 5) for 5 hosts all above 8); with two shared
 * strata, van Elteren's test over both */
static void test_one_stratum(void)
{
	struct fleet fl = { .n = 0 };
	for (int i = 0; i < 8; i++)
		host(&fl, 0, "web");
	for (int i = 0; i < 5; i++)
		host(&fl, 1, "web");
	struct compare *c = compare_new(fl.h, fl.side, fl.n, NULL, 0, 2);
	for (size_t i = 0; i < fl.n; i++)
		rows(c, (int32_t)i + 1, CMP_PSI_SOME, i < 8 ? 0.1 * (double)i : 5 + (double)i);
	int stratum[32];
	const char *names[REGRESS_MAX_STRATA];
	int ns = regress_strata(fl.h, fl.side, fl.n, "role", stratum, names);
	struct regress_fig g;
	CHECK_INT(regress_figure(c, fig_index(c, "psi_memory_some"), stratum, ns, 5, &g), 0);
	CHECK_STR(g.method, "mann-whitney-u");
	CHECK_INT(g.strata, 1);
	CHECK(fabs(g.p - 2.0 / 1287) < 1e-12);
	/* the alert's compare links ask the question of that stratum */
	json_t *strata = json_pack("[{s:s,s:i,s:i,s:b},{s:s,s:i,s:i,s:b}]", "value", "web", "release", 5, "baseline",
				   8, "shared", 1, "value", "db", "release", 0, "baseline", 12, "shared", 0);
	struct regress_pair p = { .release = "b", .baseline = "a", .baseline_source = "host-hours", .since_ms = B0,
				  .until_ms = B0 + 900000, .stratify = "role", .strata = strata, .alpha = REGRESS_ALPHA };
	json_t *ev = regress_evidence(&p, &g, 1);
	json_t *links = json_object_get(ev, "compare");
	CHECK_STR(json_string_value(json_object_get(links, "page")),
		  "#/compare?group_by=kernel&a=a&b=b&range=1h&label=role%3Aweb&mark=psi_memory_some");
	CHECK_CONTAINS(json_string_value(json_object_get(links, "api")), "&until=1764548100000&label=role%3Aweb");
	json_decref(ev);
	/* two shared strata: no one question, no filter */
	json_object_set_new(json_array_get(strata, 1), "shared", json_true());
	ev = regress_evidence(&p, &g, 1);
	CHECK(strstr(json_string_value(json_object_get(json_object_get(ev, "compare"), "page")), "label=") == NULL);
	json_decref(ev);
	json_decref(strata);
	/* the rack label splits both sides in two shared strata */
	ns = regress_strata(fl.h, fl.side, fl.n, "rack", stratum, names);
	CHECK_INT(ns, 2);
	CHECK_INT(regress_figure(c, fig_index(c, "psi_memory_some"), stratum, ns, 5, &g), 0);
	CHECK_STR(g.method, "van-elteren");
	CHECK_INT(g.strata, 2);
	CHECK(g.tested && g.worse_side && g.p < 0.05);
	compare_free(c);
	fleet_free(&fl);
}

/* A figure needs min_rel release hosts with a value (few baseline hosts
 * only weaken the test), and values that differ somewhere: 4 baseline
 * hosts and 6 release hosts; a figure that is 0 on every host (no swap
 * anywhere) is not tested. */
static void test_few_and_flat(void)
{
	struct fleet fl = { .n = 0 };
	for (int i = 0; i < 4; i++)
		host(&fl, 0, "web");
	for (int i = 0; i < 6; i++)
		host(&fl, 1, "web");
	struct compare *c = compare_new(fl.h, fl.side, fl.n, NULL, 0, 2);
	for (size_t i = 0; i < fl.n; i++) {
		rows(c, (int32_t)i + 1, CMP_PSI_SOME, i < 4 ? 0.1 * (double)i : 10 + (double)i);
		rows(c, (int32_t)i + 1, CMP_PSWPIN, 0);
	}
	struct regress_fig g;
	CHECK_INT(regress_figure(c, fig_index(c, "psi_memory_some"), NULL, 0, 5, &g), 0);
	CHECK(g.tested && g.worse_side && fabs(g.p - 2.0 / 210) < 1e-12);
	CHECK_INT(regress_figure(c, fig_index(c, "psi_memory_some"), NULL, 0, 7, &g), 0);
	CHECK(!g.tested && isnan(g.p) && g.base.hosts == 4 && g.rel.hosts == 6);	/* 6 < 7 */
	CHECK_INT(regress_figure(c, fig_index(c, "swap_in"), NULL, 0, 4, &g), 0);
	CHECK(!g.tested && isnan(g.p) && g.base.hosts == 4 && g.rel.hosts == 6);	/* all 0 */
	compare_free(c);
	fleet_free(&fl);
}

/* van Elteren over 8 strata of one host per release, the release's above
 * in each: the normal approximation says ~0.0047, but no arrangement of
 * the design is rarer than 1 / 2^8 per tail: p is 2 / 256 */
static void test_small_strata(void)
{
	static const char *role[8] = { "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7" };
	struct fleet fl = { .n = 0 };
	for (int i = 0; i < 16; i++)
		host(&fl, i % 2, role[i / 2]);
	struct compare *c = compare_new(fl.h, fl.side, fl.n, NULL, 0, 2);
	for (size_t i = 0; i < fl.n; i++)
		rows(c, (int32_t)i + 1, CMP_PSI_SOME, (double)(i / 2) + (i % 2 ? 5 : 0));
	int stratum[32];
	const char *names[REGRESS_MAX_STRATA];
	int ns = regress_strata(fl.h, fl.side, fl.n, "role", stratum, names);
	CHECK_INT(ns, 8);
	struct regress_fig g;
	CHECK_INT(regress_figure(c, fig_index(c, "psi_memory_some"), stratum, ns, 5, &g), 0);
	CHECK_STR(g.method, "van-elteren");
	CHECK_INT(g.strata, 8);
	CHECK(g.tested && g.worse_side && fabs(g.p - 2.0 / 256) < 1e-12);
	compare_free(c);
	fleet_free(&fl);
}

static void test_watched_and_resolve(void)
{
	struct regress_watch_fig w;
	CHECK(regress_watched("immediate_reclaim", &w) && w.floor == 50);
	CHECK_STR(w.theme, "writeback");
	CHECK(regress_watched("vmscan_write", &w) && w.floor == 10);
	CHECK_STR(w.theme, "reclaim writes (file or swap)");
	CHECK(regress_watched("alert_minutes_thrash", &w) && w.floor == 30);
	CHECK_STR(w.theme, "thrashing");
	CHECK(regress_watched("alert_minutes_oom_kill", &w));
	CHECK_STR(w.theme, "oom kill alerts");
	CHECK(!regress_watched("alert_minutes_host_silent", &w));
	CHECK(!regress_watched("scan_kswapd", &w));
	CHECK(!regress_watched("allocstall", &w));

	const int64_t win = 6 * 3600000LL;
	CHECK(!regress_resolves(B0 + win - 1, B0, win, 7));	/* confirmed less than a window ago */
	CHECK(regress_resolves(B0 + win, B0, win, 7));		/* not confirmed for a whole window */
	CHECK(regress_resolves(B0 + 1000, B0, win, 0));		/* the release left the fleet */
}

int main(void)
{
	test_clear_regression();
	test_tiny_shift();
	test_one_bad_host();
	test_efficiency();
	test_holm();
	test_strata();
	test_one_stratum();
	test_few_and_flat();
	test_small_strata();
	test_watched_and_resolve();
	return harness_report("test_regress");
}
