/* detect.h - the reclaim-pathology detectors as seen by the rest of the
 * server: an engine fed with freshly stored samples inside the ingest
 * transaction (so samples, alerts and detector state commit together), a
 * periodic tick for conditions that need no sample (a host gone silent),
 * and the alerts query behind GET /api/v1/alerts (store_alerts in store.h,
 * implemented next to the alert writer).
 *
 * Ownership: detect_engine_new returns an engine the caller frees with
 * detect_engine_free after the HTTP server stopped. The engine is safe to use
 * from several threads at once; samples of one host are serialised in the
 * database (row lock on its detector state), so several servers may share a
 * database.
 */
#ifndef VMSCOPE_DETECT_H
#define VMSCOPE_DETECT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

struct detect_engine;

struct detect_engine *detect_engine_new(void);
void detect_engine_free(struct detect_engine *eng);

/* How many times the engine read the overrides table (its cache missed):
 * for tests and metrics. */
long long detect_engine_ovr_loads(struct detect_engine *eng);

/* A store_tx_hook function (store.h): ctx is the engine. Feeds the fresh
 * samples (sorted by host, ts) to the detectors, writes alerts and detector
 * state through conn. Returns 0, or -1 with err written (the ingest
 * transaction then rolls back and the client gets 503/500). The state
 * update may still be in flight when it returns (pipelined, store_sql.c):
 * the caller commits with store_commit or runs store_pipe_finish before
 * any other statement (store_internal.h). */
/* A store_tx_hook's heard function: hosts whose samples were all stored
 * already arrived all the same (liveness.h): their arrival is recorded and
 * an open host_silent resolved. */
int detect_hosts_heard(void *ctx, PGconn *conn, const char *const *hosts, size_t n, char *err, size_t errlen);

int detect_store_hook(void *ctx, PGconn *conn, const struct sample *const *fresh, size_t nfresh,
		      char *err, size_t errlen);

/* Called every few seconds by the server with a pooled connection, outside
 * any transaction: raises/resolves the alerts that need no sample
 * (clock_skew; host_silent only when judge_silence, i.e. outside the grace
 * period after the server's start or a database outage: liveness.h). */
int detect_tick(struct detect_engine *eng, PGconn *conn, int64_t now_ms, bool judge_silence, char *err,
		size_t errlen);

#endif
