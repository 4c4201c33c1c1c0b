/* alert_store.h - the detectors' tables in PostgreSQL: alerts (010_alerts.sql)
 * and detector_state (011_detector_state.sql).
 *
 * Every function works on a connection the caller owns and, where noted,
 * inside the caller's transaction. All SQL is parameterised. Errors: 0 on
 * success, -1 with a short message in err ("could not insert alert: ...");
 * the caller decides whether the connection broke (PQstatus).
 */
#ifndef VMSCOPE_ALERT_STORE_H
#define VMSCOPE_ALERT_STORE_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detect_engine.h"
#include "liveness_store.h"
#include "store.h"

/* The columns of the unique index of open alerts (schema/092_fleet_alerts.sql),
 * for ON CONFLICT: one open alert per (host, cgroup, kind, subject). */
#define ALERT_OPEN_KEY "(host, (coalesce(cgroup, '')), kind, (coalesce(subject, '')))"

/* Applies one engine action (detect_engine.h) to the alerts table. For
 * DA_OPEN stores the new id in a->alert_id; when an alert of the same
 * (host, cgroup, kind) is already open (state lost, two servers racing) it
 * is adopted instead of duplicated. */
int alert_store_apply(PGconn *c, struct det_action *a, char *err, size_t errlen);

/* One host's detector_state row as the ingest hook reads it. */
struct det_state_row {
	const char *host;	/* set by the caller, borrowed */
	unsigned char *buf;	/* malloc'd copy of the saved state (caller frees), NULL when empty */
	size_t len;
	int64_t last_ts_ms;	/* ts of the last sample fed, 0 for a new host */
	bool silent;		/* the tick opened a host_silent alert a new sample must resolve */
	struct host_lag lag;	/* the clock offset's window (liveness_store.h) */
};

/* Inside the ingest transaction, one statement for all hosts: creates the
 * detector_state rows that are missing and locks them FOR UPDATE in name
 * order (rows[] sorted by strcmp of host, no duplicates), filling the rest
 * of each row. *ovr_version receives detector_overrides_version.v (-1 when
 * unknown), read in the same statement, for the overrides cache. On error
 * nothing is left allocated. */
int alert_store_lock_states(PGconn *c, struct det_state_row *rows, size_t n, int64_t *ovr_version, char *err,
			    size_t errlen);

/* A host's new state, for alert_store_save_states. */
struct det_state_save {
	const char *host;
	const unsigned char *buf;
	size_t len;
	int64_t last_ts_ms, interval_ms;
	int64_t seen_ms;	/* when these samples arrived (the server's clock) */
	struct host_lag lag;
};

/* Writes the hosts' states, arrival times and clock windows back (rows
 * locked by alert_store_lock_states) and clears their silent flags, in
 * one prepared statement. */
int alert_store_save_states(PGconn *c, const struct det_state_save *s, size_t n, char *err, size_t errlen);

/* A host that posted again after the tick marked it silent. */
struct det_host_back {
	const char *host;
	int64_t at_ms;	/* when its sample arrived (the server's clock) */
};

/* Resolves the hosts' open host_silent alerts at their arrival, never
 * before the alert opened, in one statement. */
int alert_store_hosts_back(PGconn *c, const struct det_host_back *b, size_t n, char *err, size_t errlen);

/* Hosts that posted only samples stored already (a re-post, a clock set
 * back onto stored timestamps): records their arrival at now_ms and
 * resolves their open host_silent, in the ingest transaction. Rows locked
 * by another transaction (an arrival of the same host) are skipped. */
int alert_store_hosts_heard(PGconn *c, const char *const *hosts, size_t n, int64_t now_ms, char *err,
			    size_t errlen);

/* GET /api/v1/alerts on a given connection: *out = new reference to
 * {"alerts":[...]} (CONTRACT.md §3), newest started_at first. */
int alert_store_query(PGconn *c, const struct alert_query *q, json_t **out, char *err, size_t errlen);

#endif
