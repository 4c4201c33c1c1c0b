/* cgroup_rollup.h - the server's cgroup rollup thread: once the store is
 * open, it rolls up the closed 5-minute buckets of cgroup metrics
 * (store_cgrollup.h) every CGR_PERIOD_MS, half an hour at a time per host, straight on while a backlog is
 * left (a new server, bulk-loaded history), on its own thread so that the
 * detector tick and ingest never wait for it. Several servers may run it:
 * each host's buckets are claimed with FOR UPDATE SKIP LOCKED.
 *
 * Ownership: cgroup_rollup_start returns a handle; cgroup_rollup_stop wakes
 * the thread, joins it and frees the handle. */
#ifndef VMSCOPE_CGROUP_ROLLUP_H
#define VMSCOPE_CGROUP_ROLLUP_H

#include "app.h"

#define CGR_PERIOD_MS 10000
#define CGR_TX_PER_RUN 16	/* transactions before checking for shutdown */
#define CGR_MIN_PENDING 6	/* buckets (30 min) a host waits for, so one
				 * transaction rolls several (store_cgrollup.h) */
#define CGR_REPORT_MS (3600 * 1000)

struct cgroup_rollup;

/* Starts the thread; NULL when it could not be created. */
struct cgroup_rollup *cgroup_rollup_start(struct app *app);
void cgroup_rollup_stop(struct cgroup_rollup *cr);

#endif
