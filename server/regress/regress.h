/* regress.h - the statistics of the kernel-regression watch (docs/detectors.md
 * "Kernel regressions"): for one kernel release against the baseline
 * release, which reclaim figures are worse, with the host as the unit.
 *
 * Per watched figure (regress_watched) of a compare (compare.h; side 0 the
 * baseline's hosts, side 1 the release's), each host's value over the
 * window is tested:
 * - without strata: the two-sided Mann-Whitney U test of compare itself;
 * - with strata (--regression-stratify LABEL): van Elteren's stratified
 *   rank-sum test over the strata that hold hosts of both releases
 *   (stats.h), the U test when only one does; hosts in other strata are
 *   left out of the figure.
 * The p values of every figure of every release tested in one run are
 * adjusted together by Holm's method (regress_decide), and a figure is
 * worse when its adjusted p is below REGRESS_ALPHA, the release's hosts
 * lie on the worse side (by the figure's direction), and the effect is
 * large enough: the median of the release's host values against the
 * baseline's (its hosts reweighted to the release's mix of strata) is
 * REGRESS_MIN_RATIO times worse and at least the figure's floor worse in
 * absolute terms. For the efficiency figures (higher is better, in %) the
 * ratio is of the unreclaimed share (100 - efficiency).
 *
 * Pure: no database, no allocation kept. Unit-tested in
 * tests/unit/test_regress.c. */
#ifndef VMSCOPE_REGRESS_H
#define VMSCOPE_REGRESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compare.h"
#include "store_compare.h"

#define REGRESS_KIND "kernel_regression"
#define REGRESS_ALPHA 0.05	/* family-wise, per run, after Holm */
#define REGRESS_MIN_RATIO 1.5
#define REGRESS_MAX_STRATA 64	/* label values kept apart; further ones share one stratum */

/* How the watch treats a figure it watches. */
struct regress_watch_fig {
	double floor;		/* least worse difference of medians, in the figure's unit */
	char theme[48];		/* what it is about, for the summary: "writeback", "swap" ... */
};

/* True when the compare figure named name is watched (the list in
 * regress.c, and alert_minutes_<kind> of every kind), with *out filled. */
bool regress_watched(const char *name, struct regress_watch_fig *out);

/* One side's host values of a figure. */
struct regress_side {
	int hosts;
	double mean, p5, p50, p95;	/* over the hosts' values; NAN without hosts */
};

/* One figure of one release. Strings are copies (the compare may go). */
struct regress_fig {
	int release;		/* the caller's index of the release */
	char name[64], label[96], unit[16];
	struct regress_watch_fig watch;
	bool higher_better;
	struct regress_side base, rel;
	bool tested;		/* both sides had hosts with a value */
	const char *method;	/* "mann-whitney-u" or "van-elteren" (static) */
	int strata;		/* strata the test used (1 without strata) */
	double p, p_adj;	/* two-sided p; after Holm (regress_decide); NAN untested */
	bool worse_side;	/* the release's hosts lie on the worse side */
	double med_base, med_rel;	/* the medians compared (see above) */
	double ratio;		/* how many times worse the release's median is */
	double diff;		/* how much worse, in the unit (negative: better) */
	bool effect;		/* ratio >= REGRESS_MIN_RATIO and diff >= floor */
	bool worse;		/* the verdict (regress_decide) */
};

/* Tests figure f of c, which must be watched (regress_watched of its
 * name, else -1). stratum[i] (0 .. nstrata - 1) per host index of c, or
 * NULL without strata. Returns 0 with *out filled (tested false when the
 * baseline has no host with a value, the release fewer than min_rel:
 * hosts that began the release inside the newest rollup bucket have none
 * yet, a kernel without PSI has none, and the few that have one must not
 * decide alone; or when every host's value is the same, so no test could
 * reject), or -1 (not watched, out of memory). */
int regress_figure(const struct compare *c, int f, const int *stratum, int nstrata, int min_rel,
		   struct regress_fig *out);

/* Holm's adjustment over the tested figures of figs[0..n) together (every
 * figure of every release of one run), then each figure's verdict. */
void regress_decide(struct regress_fig *figs, size_t n, double alpha);

/* "critical" when the median host of the release is beyond the
 * baseline's 95th percentile host (5th for a figure where higher is
 * better) on a worse figure of figs[0..n), else "warning". */
const char *regress_severity(const struct regress_fig *figs, size_t n);

/* Whether an open kernel_regression alert last confirmed at confirmed_ms
 * resolves at now_ms: its release has no host reporting in the window, or
 * it has not been found worse for a whole window. */
bool regress_resolves(int64_t now_ms, int64_t confirmed_ms, int64_t window_ms, int release_hosts);

/* The stratum of each host: index of its value of label (hosts without
 * the label share the value ""), values in order of first appearance,
 * at most REGRESS_MAX_STRATA - 1 of them, the rest in the last. Only
 * hosts with side[i] >= 0 count. stratum[0..n) is filled (-1 for others);
 * names[k] borrow the hosts' label strings ("" for none). Returns the
 * number of strata. */
int regress_strata(const struct cmp_host *h, const int *side, size_t n, const char *label, int *stratum,
		   const char *names[REGRESS_MAX_STRATA]);

/* How the hosts of the two sides differ by label: for each label key whose
 * shares of values differ by a total variation distance of at least 0.25
 * between the sides (hosts without the key count as value null),
 * {"label", "distance", "release": {value: hosts}, "baseline": {...}},
 * most different first, at most 5 keys of at most 8 values each. A new
 * reference (an empty array when none differ), NULL when out of memory. */
json_t *regress_label_mix(const struct cmp_host *h, const int *side, size_t n);

/* What one release's alert says (regress_evidence). */
struct regress_pair {
	const char *release, *baseline;
	const char *baseline_source;	/* "pinned" or "host-hours" */
	int hosts_rel, hosts_base;
	int64_t since_ms, until_ms;
	const char *stratify;	/* the label, or NULL */
	json_t *strata;		/* borrowed: [{"value","release","baseline"}] with stratify */
	json_t *label_mix;	/* borrowed: regress_label_mix without stratify */
	int tests;		/* p values adjusted together */
	double alpha;
};

/* The alert's evidence (docs/api.md "Kernel regression"): the pair, the
 * worse figures figs[0..n) with each side's host statistics, p and
 * adjusted p, effect, and the compare links. A new reference, NULL when
 * out of memory. */
json_t *regress_evidence(const struct regress_pair *p, const struct regress_fig *figs, size_t n);

/* The one-line summary: "B vs A: writeback, memory pressure worse, 6 vs
 * 20 hosts, p = 3.2e-05" (themes of figs[0..n) in order, the least
 * adjusted p). Writes at most len bytes; returns buf. */
char *regress_summary(const struct regress_pair *p, const struct regress_fig *figs, size_t n, char *buf,
		      size_t len);

#endif
