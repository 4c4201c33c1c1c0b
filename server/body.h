/* body.h - collecting a request body under a hard limit, and inflating a
 * gzip body under the same limit (so that a small "gzip bomb" cannot make
 * the server allocate more than the limit). Independent of libmicrohttpd.
 *
 * Ownership: struct body owns buf; body_release frees it. body_gunzip
 * returns a malloc'd buffer in *out that the caller frees. */
#ifndef VMSCOPE_BODY_H
#define VMSCOPE_BODY_H

#include <stdbool.h>
#include <stddef.h>

enum {
	BODY_OK = 0,
	BODY_ETOOBIG = -1,	/* over the limit: HTTP 413 */
	BODY_ECORRUPT = -2,	/* not valid gzip: HTTP 400 */
	BODY_ENOMEM = -3,	/* HTTP 500 */
};

struct body {
	char *buf;		/* owned; NUL-terminated when not NULL */
	size_t len, cap;
	size_t limit;		/* len never exceeds it */
	bool too_big;		/* a body_append went over the limit */
};

void body_init(struct body *b, size_t limit);

/* Appends data. Returns BODY_OK, BODY_ETOOBIG (nothing appended, too_big
 * set; later appends keep failing) or BODY_ENOMEM. */
int body_append(struct body *b, const char *data, size_t len);

void body_release(struct body *b);

/* Checks a Content-Length header value against limit: BODY_OK when absent
 * (NULL) or within, BODY_ETOOBIG when over, BODY_ECORRUPT when malformed. */
int body_check_content_length(const char *value, size_t limit);

/* How a Content-Encoding header value is handled: 0 identity (absent,
 * "identity"), 1 gzip ("gzip", "x-gzip"), -1 anything else (HTTP 415). */
int body_encoding(const char *value);

/* Inflates a gzip stream in[0..inlen) into *out (NUL-terminated, *outlen
 * bytes without the NUL), refusing with BODY_ETOOBIG as soon as the output
 * would exceed limit, BODY_ECORRUPT for bad or trailing data. *out is NULL
 * on error. */
int body_gunzip(const char *in, size_t inlen, size_t limit, char **out, size_t *outlen);

#endif
