/* regress_store.h - what the kernel-regression watch (server/regress/) keeps
 * in PostgreSQL: its one-row table regression_watch (a pinned baseline, the
 * last run's report and time; schema/092_fleet_alerts.sql), the host-hours
 * of each release, when a host began its current release (host_meta), and
 * its fleet alerts (alerts with host '', subject the release).
 *
 * Functions take a connection the caller owns. All SQL is parameterised.
 * Errors: STORE_* codes with "could not ..." in err. */
#ifndef VMSCOPE_REGRESS_STORE_H
#define VMSCOPE_REGRESS_STORE_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store_compare.h"

#define REGRESS_LOCK_KEY 0x766d737265677273LL	/* "vmsregrs": one run at a time across servers */
#define REGRESS_BASELINE_DAYS 7			/* host-hours counted over this span */
#define REGRESS_MAX_RELEASE 256			/* bytes of a release name */

/* Tries the session advisory lock that lets one server run the watch at a
 * time; *got says whether this connection holds it now. unlock releases it. */
int regress_store_try_lock(PGconn *c, bool *got, char *err, size_t errlen);
int regress_store_unlock(PGconn *c, char *err, size_t errlen);

/* "BEGIN", "COMMIT" or "ROLLBACK" on c: the run's writes are one
 * transaction. */
int regress_store_tx(PGconn *c, const char *cmd, char *err, size_t errlen);

/* The watch's row: the pinned baseline (*pinned malloc'd, NULL when
 * none; caller frees) and how long ago, by the database's clock, the last
 * run finished (*since_run_ms, -1 when never), so that several servers
 * keep one pace. */
int regress_store_state(PGconn *c, char **pinned, int64_t *since_run_ms, char *err, size_t errlen);

/* A release and the hours its hosts reported under it. */
struct regress_hours {
	char *release;		/* owned */
	double host_hours;
};

/* Host-hours per kernel release over [now - span, now]: each host's
 * time from its first to its newest sample, split at its recorded kernel
 * changes (host_meta), most first (then by name), at most 50. *out is
 * malloc'd (NULL when none); free with regress_hours_free. */
int regress_store_host_hours(PGconn *c, int64_t now_ms, int64_t span_ms, struct regress_hours **out, size_t *n,
			     char *err, size_t errlen);
void regress_hours_free(struct regress_hours *h, size_t n);

/* For each of hosts h[0..n) that ran another kernel before the one it has
 * at until (host_meta), sets from_ms to its first sample on its current
 * kernel (until when it has none by then; compare.h drops the buckets
 * that start before it); others keep from_ms. */
int regress_store_kernel_since(PGconn *c, struct cmp_host *h, size_t n, int64_t until_ms, char *err,
			       size_t errlen);

/* An open kernel_regression alert. */
struct regress_open {
	int64_t id;
	char release[REGRESS_MAX_RELEASE + 1];
	int64_t confirmed_ms;	/* evidence.confirmed_ts: the last run that found it worse */
};

/* The open kernel_regression alerts, malloc'd array (NULL when none). */
int regress_store_open_alerts(PGconn *c, struct regress_open **out, size_t *n, char *err, size_t errlen);

/* Opens the release's alert at at_ms, or refreshes the open one (summary,
 * evidence; severity only up, as the detectors do). *opened says which. */
int regress_store_raise(PGconn *c, const char *release, const char *severity, const char *summary,
			const json_t *evidence, int64_t at_ms, bool *opened, char *err, size_t errlen);

/* Resolves the release's open alert at at_ms (no-op when none). */
int regress_store_resolve(PGconn *c, const char *release, int64_t at_ms, char *err, size_t errlen);

/* Records the run: last_run_at = now(), last_report = report. */
int regress_store_report(PGconn *c, const json_t *report, char *err, size_t errlen);

/* Pins the baseline (release NULL: unpins), by whom. */
int regress_store_pin(PGconn *c, const char *release, const char *by, char *err, size_t errlen);

/* For the API: *pin = {"release" (null: none), "pinned_at", "pinned_by"}
 * and *report = the last report (JSON null when none), new references. */
int regress_store_read(PGconn *c, json_t **pin, json_t **report, char *err, size_t errlen);

#endif
