/* regress_run.h - one run of the kernel-regression watch (docs/detectors.md
 * "Kernel regressions"): the hosts reporting in the window grouped by
 * kernel release, the baseline release (pinned while it has enough
 * hosts, else the one with the most host-hours over 7 days among those
 * with enough hosts now), every other release with enough hosts
 * compared with it through compare.h and tested by regress.h (one Holm
 * family per run), then the fleet alerts
 * raised, refreshed or resolved and the run's report recorded, in one
 * transaction.
 *
 * The caller holds the watch's advisory lock on c (regress_store.h), so
 * one server runs at a time; the reads go through the store's pool. */
#ifndef VMSCOPE_REGRESS_RUN_H
#define VMSCOPE_REGRESS_RUN_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct regress_settings {
	int64_t window_ms;	/* --regression-window */
	int min_hosts;		/* --regression-min-hosts */
	const char *stratify;	/* --regression-stratify, NULL: none */
};

/* Runs the watch as of now_ms. *report (new reference, also stored in
 * regression_watch.last_report) says what was tested and decided; see
 * docs/api.md "Regression watch". STORE_* code, err written on failure
 * (nothing written to the database then). */
int regress_run(struct store *st, PGconn *c, const struct regress_settings *s, int64_t now_ms, json_t **report,
		char *err, size_t errlen);

/* The baseline as a run now would choose it, for GET
 * /api/v1/regression/baseline: {"release" (null when none qualifies),
 * "source" ("pinned" or "host-hours"), "pinned" (bool), "pinned_at",
 * "pinned_by", "hosts" (in the window), "host_hours": [{"release",
 * "host_hours", "hosts"}] (the releases with the most host-hours over 7
 * days, at most 20)}, and "pin_ignored" {"release", "hosts",
 * "min_hosts"} when the pinned release has too few hosts in the window
 * (the host-hours choice then). *out new reference. STORE_* code. */
int regress_baseline(struct store *st, PGconn *c, const struct regress_settings *s, int64_t now_ms, json_t **out,
		     char *err, size_t errlen);

#endif
