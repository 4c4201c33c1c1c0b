/* body.h - collecting a request body under a hard limit, and inflating a
 * gzip body under the same limit (so that a small "gzip bomb" cannot make
 * the server allocate more than the limit). Independent of libmicrohttpd.
 *
 * Every byte a body holds is also reserved against an optional
 * process-wide budget (membudget.h), so that many large uploads at once
 * cannot exhaust memory: a growth the budget refuses fails with BODY_EBUSY
 * (HTTP 503, retry later).
 *
 * Ownership: struct body owns buf and its reservation; body_release frees
 * and gives both back. body_gunzip fills a struct body the caller
 * initialised and releases. */
#ifndef VMSCOPE_BODY_H
#define VMSCOPE_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include "membudget.h"

enum {
	BODY_OK = 0,
	BODY_ETOOBIG = -1,	/* over the limit: HTTP 413 */
	BODY_ECORRUPT = -2,	/* not valid gzip: HTTP 400 */
	BODY_ENOMEM = -3,	/* HTTP 500 */
	BODY_EBUSY = -4,	/* the in-flight budget is spent: HTTP 503 */
};

struct body {
	char *buf;		/* owned; NUL-terminated when not NULL */
	size_t len, cap;
	size_t limit;		/* len never exceeds it */
	bool too_big;		/* a body_append went over the limit */
	struct membudget *mb;	/* not owned; NULL: no budget */
	size_t per_byte;	/* bytes reserved per byte received */
	size_t held;		/* bytes reserved from mb (len * per_byte, and body_reserve's) */
	size_t expect;		/* the declared length (Content-Length), 0 unknown */
	size_t also_held;	/* bytes the same request holds in another body (the
				 * compressed copy of an inflated one): a request
				 * alone in the budget may grow even past it */
};

/* The body is expected to be n bytes (its Content-Length): a small one's
 * buffer is sized for it at the first append rather than grown by doubling
 * (each growth copies what came so far). From BODY_MAP_FROM up the buffer
 * still grows with what arrives (mapped pages grow without a copy), so a
 * client declaring a large body and stalling holds no more than it sent.
 * Ignored over the limit. */
void body_expect(struct body *b, const char *content_length);

/* A body with no budget (small admin bodies). */
void body_init(struct body *b, size_t limit);

/* mb may be NULL (no budget). per_byte (>= 1) is what each byte of the
 * buffer costs, reserved as the buffer grows: 1 for a body still arriving
 * from the network (a client that stalls mid-upload then holds no more
 * than it sent), more for a buffer filled at once from memory (an
 * inflated gzip body) that will be parsed next. */
void body_init_budget(struct body *b, size_t limit, struct membudget *mb, size_t per_byte);

/* Reserves n more bytes for what the body is about to cost beyond its
 * buffer (its parse), given back with it by body_release. Taken once the
 * body is whole, when the work that needs it starts at once: false when
 * the budget refuses (nothing reserved; answer 503). */
bool body_reserve(struct body *b, size_t n);

/* Appends data. Returns BODY_OK, BODY_ETOOBIG (nothing appended, too_big
 * set; later appends keep failing), BODY_EBUSY (the budget refused the
 * growth; nothing appended) or BODY_ENOMEM. */
int body_append(struct body *b, const char *data, size_t len);

/* Frees the buffer but keeps n bytes reserved until body_release: for what
 * outlives the body (its parsed samples, until they are committed). Cannot
 * fail: n may exceed what was held (the caller holds that memory under
 * another reservation it gives back next). */
void body_keep_reservation(struct body *b, size_t n);

void body_release(struct body *b);

/* Checks a Content-Length header value against limit: BODY_OK when absent
 * (NULL) or within, BODY_ETOOBIG when over, BODY_ECORRUPT when malformed. */
int body_check_content_length(const char *value, size_t limit);

/* How a Content-Encoding header value is handled: 0 identity (absent,
 * "identity"), 1 gzip ("gzip", "x-gzip"), -1 anything else (HTTP 415). */
int body_encoding(const char *value);

/* Inflates a gzip stream in[0..inlen) into out (body_init'ed by the caller
 * with the limit and budget; NUL-terminated like any body), refusing with
 * BODY_ETOOBIG as soon as the output would exceed out's limit,
 * BODY_ECORRUPT for bad, truncated or trailing data, and BODY_EBUSY when
 * the budget refuses room for a body that is within the limit: a body
 * over it gets BODY_ETOOBIG whatever the budget (the rest is inflated and
 * counted, not kept), so that it is not retried forever. The caller
 * body_release's out in every case. */
int body_gunzip(const char *in, size_t inlen, struct body *out);

#endif
