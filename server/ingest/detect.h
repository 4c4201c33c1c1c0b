/* detect.h - the reclaim-pathology detectors as seen by the rest of the
 * server: an engine fed with freshly stored samples inside the ingest
 * transaction (so samples, alerts and detector state commit together), a
 * periodic tick for conditions that need no sample (a host gone silent),
 * and the alerts query behind GET /api/v1/alerts (store_alerts in store.h,
 * implemented next to the alert writer).
 *
 * Ownership: detect_engine_new returns an engine the caller frees with
 * detect_engine_free after the HTTP server stopped. The engine is safe to use
 * from several threads at once; samples of one host are serialised by the
 * store (one owner per host, its row lock), so several servers may share a
 * database.
 */
#ifndef VMSCOPE_DETECT_H
#define VMSCOPE_DETECT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"
#include "store.h"

struct detect_engine;

struct detect_engine *detect_engine_new(void);
void detect_engine_free(struct detect_engine *eng);

/* How many times the engine read the overrides table (its cache missed):
 * for tests and metrics. */
long long detect_engine_ovr_loads(struct detect_engine *eng);

/* The engine as the store's hook (store.h): per-host detector states in
 * the memory of the server owning the host, fed with each transaction's
 * fresh samples, checkpointed and rebuilt by the store. Fills *out. */
void detect_store_hook(struct detect_engine *eng, struct store_hook *out);

/* Whether a sample at ts is kept out of a host's detection (stored, not
 * fed): it is more than DETECT_AHEAD_MS ahead of the server's clock now_ms
 * while the host's own timeline is current (its last fed sample last_ts is
 * not that far ahead and one was fed at fed_at_ms, by the server's clock,
 * within three intervals, at least DETECT_QUIET_MS). A forged sample from
 * the future interleaved with a host's real ones then never moves its
 * detectors; a host whose clock jumped ahead is followed once its present
 * samples have stopped for that long. */
bool detect_hold_ahead(int64_t ts, int64_t last_ts, int64_t fed_at_ms, int64_t interval_ms, int64_t now_ms);

/* Called every few seconds by the server with a pooled connection, outside
 * any transaction: raises/resolves the alerts that need no sample
 * (clock_skew; host_silent only when judge_silence, i.e. outside the grace
 * period after the server's start or a database outage: liveness.h). */
int detect_tick(struct detect_engine *eng, PGconn *conn, int64_t now_ms, bool judge_silence, char *err,
		size_t errlen);

#endif
