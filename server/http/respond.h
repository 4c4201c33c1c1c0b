/* respond.h - queueing answers on a request: JSON bodies, the error shape
 * {"error","detail","hint"} every 4xx/5xx carries (CONTRACT.md §2), and the
 * mapping of storage error codes to statuses.
 *
 * Every function records the status in rq->status and returns what
 * MHD_queue_response returned (MHD_NO closes the connection). */
#ifndef VMSCOPE_RESPOND_H
#define VMSCOPE_RESPOND_H

#include <jansson.h>
#include <microhttpd.h>

#include "app.h"

/* The Content-Security-Policy of every answer: scripts, styles, images
 * and API calls from this server only (style attributes set by uPlot and
 * the views need 'unsafe-inline' for styles), no plugins, no framing. */
#define RESPOND_CSP "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " \
	"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " \
	"form-action 'self'; frame-ancestors 'none'"

/* Answers status with body serialised; steals the reference. A NULL body
 * (allocation failed upstream) becomes a 500. */
enum MHD_Result respond_json(struct request *rq, unsigned status, json_t *body);
/* The same for a body the caller wrote as JSON text (text[0..len), copied):
 * for a small fixed-shape answer on a hot path, without building a tree. */
enum MHD_Result respond_json_text(struct request *rq, unsigned status, const char *text, size_t len);

/* Answers status with {"error": error, "detail": detail, "hint": hint};
 * detail and hint may be NULL. Strings that are not printable UTF-8 are
 * made so (bytes replaced by '?'). Adds Allow, Retry-After and
 * WWW-Authenticate when rq asks for them. */
enum MHD_Result respond_error(struct request *rq, unsigned status, const char *error,
			      const char *detail, const char *hint);

/* Maps a STORE_E* code and its message: EUNAVAIL 503 with Retry-After,
 * EINVAL 400, ENOTFOUND and ENOMETRIC 404, anything else 500. */
enum MHD_Result respond_store_error(struct request *rq, int rc, const char *err);

/* Answers 503 "database unreachable" with Retry-After. */
enum MHD_Result respond_unavailable(struct request *rq);

/* Answers 503 with Retry-After for a database that cannot serve now (full
 * disk, read-only, ...): error says why, detail the database's message. */
enum MHD_Result respond_db_retry(struct request *rq, const char *error, const char *detail);

/* Queues a prepared response with status, adding the common headers, and
 * destroys our reference to it. */
enum MHD_Result respond_queue(struct request *rq, unsigned status, struct MHD_Response *resp);

/* A copy of s safe for a JSON string (see respond_error); caller frees. */
char *respond_sanitize(const char *s);

#endif
