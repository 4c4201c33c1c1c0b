/* alert_store.h - the detectors' tables in PostgreSQL: alerts (010_alerts.sql)
 * and host_silent (hosts.silent).
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

/* The columns of the unique index of open alerts (schema/095_host_keys.sql),
 * for ON CONFLICT: one open alert per (host, cgroup, kind, subject). The
 * fleet's alerts (host '', a subject) have the reserved host id 0. */
#define ALERT_OPEN_KEY "(host_id, (coalesce(cgroup, '')), kind, (coalesce(subject, '')))"
#define ALERT_FLEET_HOST_ID 0

/* Applies one engine action (detect_engine.h) of host host_id to the alerts
 * table, with its notification outbox row (an open, an escalation to
 * critical, a resolve). For DA_OPEN stores the new id in a->alert_id; when
 * an alert of the same (host, cgroup, kind) is already open (state lost)
 * it is adopted instead of duplicated. */
int alert_store_apply(PGconn *c, int32_t host_id, struct det_action *a, char *err, size_t errlen);

/* The id of the alert an action of a replayed sample opened back then
 * (store_hook.replay): the alert of its host, scope and kind started at
 * a->started_ms, else the open one (it adopted an open alert); 0 when
 * there is none. */
int alert_store_find(PGconn *c, int32_t host_id, const struct det_action *a, int64_t *id, char *err,
		     size_t errlen);

/* A host that posted again after the tick marked it silent. */
struct det_host_back {
	const char *host;
	int32_t host_id;
	int64_t at_ms;	/* when its sample arrived (the server's clock) */
};

/* Resolves the hosts' open host_silent alerts at their arrival, never
 * before the alert opened, and clears their hosts.silent (the statements
 * go with COMMIT). */
int alert_store_hosts_back(PGconn *c, const struct det_host_back *b, size_t n, char *err, size_t errlen);

/* For the other writers of alerts (liveness_store.c): a CTE writing the
 * outbox row of every alert the CTE `from` returns (host_id, id) where
 * `where` holds, at $now; and sql with "$now" replaced by $n (the
 * statement's last parameter) into buf. */
#define ALERT_OUTBOX(ev, from, where)                                                                  \
	"o AS (INSERT INTO notify_outbox (host_id, alert_id, event, created_at) SELECT host_id, id, " ev \
	", ('epoch'::timestamptz + ($now)::bigint * interval '1 millisecond') FROM " from " WHERE " where ") "
const char *alert_sql_with_now(const char *sql, int n, char *buf, size_t cap);

/* GET /api/v1/alerts on a given connection: *out = new reference to
 * {"alerts":[...]} (CONTRACT.md §3), newest started_at first. */
int alert_store_query(PGconn *c, const struct alert_query *q, json_t **out, char *err, size_t errlen);

#endif
