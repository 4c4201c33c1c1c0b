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

/* Called every few seconds by the server with a pooled connection, outside
 * any transaction: raises/resolves the alerts that need no sample
 * (clock_skew; host_silent only when judge_silence, i.e. outside the grace
 * period after the server's start or a database outage: liveness.h). */
int detect_tick(struct detect_engine *eng, PGconn *conn, int64_t now_ms, bool judge_silence, char *err,
		size_t errlen);

#endif
