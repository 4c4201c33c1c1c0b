/* liveness_store.h - the SQL of host_silent and clock_skew: the per-host
 * arrival, clock window and refusal columns of hosts (090_liveness.sql,
 * 094_host_ownership.sql; ingest writes the first two with the host's
 * row, store_put.c) and the two alert kinds that need no sample. The
 * rules are in server/ingest/liveness.c.
 *
 * Times of these alerts are the server's clock (they are about arrivals,
 * not about what a sample showed): started_at is the last arrival (or the
 * first refusal), opened_at the tick, ended_at the arrival or tick that
 * ended it, never before opened_at. Errors: 0 or -1 with a message in err.
 */
#ifndef VMSCOPE_LIVENESS_STORE_H
#define VMSCOPE_LIVENESS_STORE_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* What the tick knows about one host's clock. */
struct clock_obs {
	int64_t seen_ms;		/* last arrival of a stored sample, 0: never */
	int64_t interval_ms;
	struct host_lag lag;
	int64_t refused_n, refused_at_ms, refused_ts_ms;
	bool alert_open;		/* a clock_skew alert is open */
	bool alert_refused;		/* ... saying every sample is refused (critical) */
};

/* Opens host_silent, each in its own short transaction under the host's
 * state row lock, for the hosts whose last arrival is older than
 * max(3 x interval, min_ms) before now_ms, whose samples are not being
 * refused (clock_skew says why instead) and that have none open.
 * *nopened receives how many. */
int liveness_store_open_silent(PGconn *c, int64_t now_ms, int64_t min_ms, int *nopened, char *err,
			       size_t errlen);

/* Records that a sample of host with timestamp ts_ms was refused for its
 * timestamp at now_ms (creates the host's state row when it has none). */
int store_note_refused(struct store *st, const char *host, int64_t ts_ms, int64_t now_ms, char *err,
		       size_t errlen);

/* One host the clock tick looks at. */
struct clock_row {
	char *host;			/* owned */
	int32_t host_id;
	struct clock_obs obs;
	int64_t alert_id;		/* its open clock_skew alert, 0 when none */
	bool alert_refused, alert_behind;	/* what that alert says */
	int64_t alert_amount_ms;
};

/* The hosts with an open clock_skew alert, a refusal newer than their last
 * stored sample, or an offset window beyond skew_ms. Free with
 * liveness_store_clock_rows_free. */
int liveness_store_clock_rows(PGconn *c, int64_t skew_ms, struct clock_row **out, size_t *n, char *err,
			      size_t errlen);
void liveness_store_clock_rows_free(struct clock_row *rows, size_t n);

/* Opens (or, when one is open already, adopts) the host's clock_skew
 * alert at now_ms; rewrites an open one's severity, summary and evidence;
 * resolves one at now_ms. evidence is borrowed. */
int liveness_store_clock_open(PGconn *c, int32_t host_id, const char *host, const char *severity,
			      const char *summary, json_t *evidence, int64_t now_ms, char *err, size_t errlen);
int liveness_store_clock_update(PGconn *c, int32_t host_id, int64_t id, const char *severity, const char *summary,
				json_t *evidence, char *err, size_t errlen);
int liveness_store_clock_resolve(PGconn *c, int32_t host_id, int64_t id, int64_t now_ms, char *err, size_t errlen);

/* GET /api/v1/hosts and /api/v1/fleet: every host object of hosts (an
 * array of store_hosts objects, sorted by host) gets "clock": null, or the
 * evidence of its open clock_skew alert; hosts whose every sample was
 * refused (no stored sample, so not in hosts) are added in order, with
 * "samples": 0 and their clock. only_host: just that host (store_host).
 * Returns a STORE_E* code. */
int liveness_store_add_clocks(PGconn *c, json_t *hosts, const char *only_host, char *err, size_t errlen);

#endif
