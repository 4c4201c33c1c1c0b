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
#include "store.h"

/* Applies one engine action (detect_engine.h) to the alerts table. For
 * DA_OPEN stores the new id in a->alert_id; when an alert of the same
 * (host, cgroup, kind) is already open (state lost, two servers racing) it
 * is adopted instead of duplicated. */
int alert_store_apply(PGconn *c, struct det_action *a, char *err, size_t errlen);

/* Inside the ingest transaction: creates the host's detector_state row when
 * missing and locks it FOR UPDATE. *buf receives a malloc'd copy of the
 * saved state (the caller frees it; length 0 for a new host), *last_ts_ms
 * the ts of the last sample fed, *silent whether the tick opened a
 * host_silent alert that a new sample must resolve. */
int alert_store_lock_state(PGconn *c, const char *host, unsigned char **buf, size_t *len,
			   int64_t *last_ts_ms, bool *silent, char *err, size_t errlen);

/* Writes the host's state back (row locked by alert_store_lock_state) and
 * clears its silent flag. */
int alert_store_save_state(PGconn *c, const char *host, const unsigned char *buf, size_t len,
			   int64_t last_ts_ms, int64_t interval_ms, char *err, size_t errlen);

/* Resolves the host's open host_silent alert, if any, at sample time ts_ms. */
int alert_store_host_back(PGconn *c, const char *host, int64_t ts_ms, char *err, size_t errlen);

/* detect_tick's work, outside any transaction: for each host whose last
 * sample is older than max(3 x interval, 60 s) before now_ms and that has no
 * open host_silent alert, opens one (started_at = its last sample, opened_at
 * = now), each in its own short transaction under the state row lock.
 * *nopened receives how many. */
int alert_store_tick_silent(PGconn *c, int64_t now_ms, int *nopened, char *err, size_t errlen);

/* GET /api/v1/alerts on a given connection: *out = new reference to
 * {"alerts":[...]} (CONTRACT.md §3), newest started_at first. */
int alert_store_query(PGconn *c, const struct alert_query *q, json_t **out, char *err, size_t errlen);

#endif
