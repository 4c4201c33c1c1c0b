/* compare.h - the figures of GET /api/v1/compare (docs/api.md "Compare"):
 * built from the 5-minute rollup buckets (host-intervals) of the hosts of
 * two groups, mmtests style: per figure the mean, p50, p95 and p99 across
 * the host-intervals of each group, the change in %, a shared-edge
 * histogram, and a Mann-Whitney U test over one value per host (the host's
 * mean over the window) so that one noisy host cannot decide it.
 *
 * Usage: compare_load (or compare_new, then compare_add_row, a
 * cmp_row_fn, for every rollup row), then compare_figures or the per-host
 * accessors; compare_free releases everything. The per-host accessors
 * serve the kernel-regression watch (regress.h), which tests the same
 * host values in its own way.
 */
#ifndef VMSCOPE_COMPARE_H
#define VMSCOPE_COMPARE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store_compare.h"

#define COMPARE_ALPHA 0.05
#define COMPARE_MAX_KINDS 24	/* alert kinds given their own figure */
/* hosts x 5-minute buckets of a comparison: 1,000 hosts x ~5 days */
#define COMPARE_MAX_INTERVALS 1500000

struct compare;

/* A figure: its name in the answer, label, unit and which way is better. */
struct compare_fig {
	const char *name, *label, *unit;	/* static, or owned by the compare */
	bool higher_better;
};

/* hosts[0..n) sorted by id (store_compare_hosts); side[i] is 0 for group
 * a, 1 for group b, -1 for a host outside both. A host's from_ms, when
 * non-zero, drops its rollup buckets that start before from_ms, the one
 * holding it too (its samples before from_ms are of the host's previous
 * release, a rollup cannot part them), and so its alert minutes before
 * the first bucket kept (the watch counts a host only since it runs its
 * release). alerts[0..nalerts)
 * (store_compare_alerts) give the alert_minutes_<kind> figures. buckets:
 * the most rollup buckets a host can have in the window (sizes the first
 * allocation of the value arrays). Borrows hosts, side and alerts until
 * compare_free. NULL when out of memory. */
struct compare *compare_new(const struct cmp_host *hosts, const int *side, size_t n,
			    const struct cmp_alert *alerts, size_t nalerts, size_t buckets);

/* Adds one rollup bucket (a cmp_row_fn with ctx the compare). Rows of
 * hosts outside both groups are ignored. 0, or -1 when out of memory. */
int compare_add_row(void *ctx, int32_t host_id, int64_t bucket_ms, const double *v);

/* The whole read: the hosts' alerts (store_compare_alerts), compare_new
 * and every rollup row of the hosts with side >= 0 in [since, until]
 * (store_compare_rows). Refuses (STORE_EINVAL, err naming since) more
 * than COMPARE_MAX_INTERVALS host-intervals. Borrows hosts and side until
 * compare_free. STORE_* code; *out set on STORE_OK only. */
int compare_load(struct store *st, const struct cmp_host *hosts, const int *side, size_t n,
		 int64_t since_ms, int64_t until_ms, struct compare **out, char *err, size_t errlen);

/* Figures f = 0 .. compare_nfig - 1: the base figures in a fixed order,
 * then alert_minutes_<kind> per alert kind present, sorted by kind. */
int compare_nfig(const struct compare *c);
void compare_fig_info(const struct compare *c, int f, struct compare_fig *out);

/* The hosts given to compare_new and their sides. */
size_t compare_nhosts(const struct compare *c);
int compare_side(const struct compare *c, size_t i);

/* Host i's value of figure f over the window (its mean of its buckets; the
 * efficiency figures 100 * sum(steal) / sum(scan)): true with *x set, false
 * when the host has none or is outside both groups. What the U test of
 * compare_figures ranks. */
bool compare_host_value(const struct compare *c, int f, size_t i, double *x);

/* The "figures" array of the answer (new reference), or NULL when out of
 * memory. Reorders the collected values; call once. */
json_t *compare_figures(struct compare *c, double alpha);

void compare_free(struct compare *c);

#endif
