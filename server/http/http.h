/* http.h - the HTTP server: a libmicrohttpd daemon with an internal thread
 * pool (epoll), a connection limit and an idle timeout, routing each request
 * to ingest.c, api_read.c, api_fleet.c or static.c, with auth, one log line
 * per request and the server's request counters.
 *
 * Ownership: http_start returns a daemon the caller stops with http_stop
 * (which waits for the handlers to finish) before freeing app. */
#ifndef VMSCOPE_HTTP_H
#define VMSCOPE_HTTP_H

#include <stddef.h>

#include "app.h"

struct http_server;

/* Binds cfg->listen and starts serving. Returns NULL with err written when
 * the address is bad or in use. */
struct http_server *http_start(struct app *app, char *err, size_t errlen);

/* Stops accepting, finishes the running handlers and frees everything.
 * NULL is a no-op. */
void http_stop(struct http_server *srv);

/* True when rq carries a read credential (or reads are open). Answers 401
 * itself and returns false otherwise. */
bool http_read_allowed(struct request *rq);

/* Appends an upload chunk to rq->body; past the body's limit the chunk
 * is dropped and counted (the endpoint's finish answers 413 when it sees
 * body.too_big), and a body far over the limit cuts the connection. For
 * admin bodies read whole before their credential is checked. */
enum MHD_Result http_upload_data(struct request *rq, const char *data, size_t len);

#endif
