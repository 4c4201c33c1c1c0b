/* app.h - the state one running server shares between its HTTP threads and
 * its background thread, and the per-request state of the HTTP layer.
 *
 * Ownership: main.c owns struct app and everything in it. The store pointer
 * is NULL until the background thread has opened the database; once set it
 * stays until shutdown (after the HTTP daemon stopped), so a handler may use
 * what app_store returns for the whole request. */
#ifndef VMSCOPE_APP_H
#define VMSCOPE_APP_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "body.h"
#include "config.h"
#include "route.h"
#include "store.h"
#include "token_scope.h"

struct admit;
struct detect_engine;
struct ratelimit;
struct tokens;
struct membudget;

struct app {
	const struct server_config *cfg;
	_Atomic(struct store *) store;
	struct detect_engine *engine;
	struct ratelimit *rl;
	struct tokens *tokens;	/* hashed ingest tokens (tokens.h) */
	struct membudget *inflight;	/* request bytes held at once (membudget.h) */
	struct admit *admit;	/* token scopes and new-name/new-host budgets (admit.h) */
};

/* The open store, or NULL while the database has never been reached. */
static inline struct store *app_store(struct app *app)
{
	return atomic_load(&app->store);
}

/* One HTTP request, created on libmicrohttpd's first callback and freed in
 * its completion callback (http.c). */
struct request {
	struct app *app;
	struct MHD_Connection *conn;
	const char *method;	/* borrowed from libmicrohttpd; NULL before the headers */
	char *path;		/* owned copy, for the log line */
	struct route route;
	int64_t t0_us;		/* monotonic start, for the log line and metrics */
	unsigned status;	/* the status queued, 0 before */
	size_t raw_len;		/* the request line's target as sent, in bytes */
	bool encoded_slash;	/* its path holds %2F */
	/* headers for the next error answer */
	const char *allow;	/* 405: Allow */
	int retry_after;	/* > 0: Retry-After seconds (429, 503) */
	bool www_authenticate;	/* 401 */
	/* ingest only */
	struct token_grant grant;	/* the token's name and scope */
	struct body body;
	int encoding;		/* body_encoding(): 1 gzip */
	size_t discarded;	/* upload bytes dropped (over the limit, or refused) */
	unsigned refuse_status;	/* > 0: answer this once the body is drained */
	size_t drain_max;	/* ... if it is at most this long */
	const char *refuse_error, *refuse_hint;	/* static strings */
	bool answered;		/* a response was queued */
	bool deferred;		/* GET/HEAD: answered on the second call (keep-alive) */
};

#endif
