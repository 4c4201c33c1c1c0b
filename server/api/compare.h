/* compare.h - the figures of GET /api/v1/compare (docs/api.md "Compare"):
 * built from the 5-minute rollup buckets (host-intervals) of the hosts of
 * two groups, mmtests style: per figure the mean, p50, p95 and p99 across
 * the host-intervals of each group, the change in %, a shared-edge
 * histogram, and a Mann-Whitney U test over one value per host (the host's
 * mean over the window) so that one noisy host cannot decide it.
 *
 * Usage: compare_new, then compare_add_row (a cmp_row_fn) for every
 * rollup row, then compare_figures; compare_free releases everything.
 */
#ifndef VMSCOPE_COMPARE_H
#define VMSCOPE_COMPARE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store_compare.h"

#define COMPARE_ALPHA 0.05
#define COMPARE_MAX_KINDS 24	/* alert kinds given their own figure */

struct compare;

/* hosts[0..n) sorted by id (store_compare_hosts); side[i] is 0 for group
 * a, 1 for group b, -1 for a host outside both. alerts[0..nalerts)
 * (store_compare_alerts) give the alert_minutes_<kind> figures. buckets:
 * the most rollup buckets a host can have in the window (sizes the first
 * allocation of the value arrays). Borrows hosts, side and alerts until
 * compare_free. NULL when out of memory. */
struct compare *compare_new(const struct cmp_host *hosts, const int *side, size_t n,
			    const struct cmp_alert *alerts, size_t nalerts, size_t buckets);

/* Adds one rollup bucket (a cmp_row_fn with ctx the compare). Rows of
 * hosts outside both groups are ignored. 0, or -1 when out of memory. */
int compare_add_row(void *ctx, int32_t host_id, int64_t bucket_ms, const double *v);

/* The "figures" array of the answer (new reference), or NULL when out of
 * memory. Reorders the collected values; call once. */
json_t *compare_figures(struct compare *c, double alpha);

void compare_free(struct compare *c);

#endif
