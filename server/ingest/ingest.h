/* ingest.h - POST /api/v1/samples (CONTRACT.md §2).
 *
 * The request is refused before its body is read when the token is wrong
 * (401), the rate limit is hit (429), the database was never reached (503),
 * Content-Length is over --max-body (413) or the encoding is unknown (415).
 * Otherwise the body is collected under the limit, inflated under the same
 * limit when gzip, parsed by libyajl callbacks straight into samples
 * (sample_body.h: the same checks as jansson + sample_from_json, duplicate
 * keys refused, nesting depth capped), every sample checked
 * against the clock and the retention, and the whole batch stored in one
 * transaction with the detectors' hook: all or nothing. */
#ifndef VMSCOPE_INGEST_H
#define VMSCOPE_INGEST_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "app.h"
#include "sample.h"

#define INGEST_MAX_DEPTH 32		/* JSON nesting; a sample needs 6 */
#define INGEST_MAX_SKEW_MS (10 * 60 * 1000)	/* ts ahead of our clock */
#define INGEST_DRAIN_MAX (1u << 20)	/* a refused body up to this is read before the answer */

/* The http.c entry points: first callback, each upload chunk, the end.
 * A refusal decided before the body (401, 429, 503, 415) is answered after
 * reading and dropping a body of up to INGEST_DRAIN_MAX, so that the client
 * gets the answer rather than a connection reset. */
enum MHD_Result ingest_begin(struct request *rq);
enum MHD_Result ingest_data(struct request *rq, const char *data, size_t len);
enum MHD_Result ingest_finish(struct request *rq);

/* The most one request alone may hold of the in-flight budget with bodies
 * of at most max_body bytes (membudget_set_lone). */
size_t ingest_lone_bytes(size_t max_body);

/* The validated samples of one request. Owned: ingest_batch_release frees. */
struct ingest_batch {
	struct sample *s;
	size_t n;
};

/* Why a body was refused (HTTP 400); strings as in respond_error. */
struct ingest_error {
	unsigned status;	/* HTTP status to answer; 0 means 400 */
	char error[SAMPLE_ERR_MAX + 64];
	char detail[160];
	char hint[160];
	/* a sample refused for its timestamp (the host's clock): whose, and
	 * its ts; host is "" for any other error */
	char time_host[HOST_NAME_MAXLEN + 1];
	int64_t time_ts_ms;
};

/* True when no array or object in buf[0..len) nests deeper than max_depth
 * (counted outside strings). A cheap pass before the parser sees the body. */
bool ingest_depth_ok(const char *buf, size_t len, int max_depth);

/* Parses a body (a sample object or an array of them) into b, refusing the
 * whole body on the first bad sample: "could not parse sample N: <field
 * path>: <expected>" (N counts from 0 in the array; 0 for a lone object),
 * ts more than 10 minutes after now_ms (clock skew) or before oldest_ms
 * (retention). Returns 0, or -1 with e filled and b empty. */
int ingest_parse(const char *buf, size_t len, int64_t now_ms, int64_t oldest_ms,
		 int retention_days, struct ingest_batch *b, struct ingest_error *e);

void ingest_batch_release(struct ingest_batch *b);

/* The object key whose value ends at or spans buf[pos] ("pgpgin" for
 * `"pgpgin": 99999999999999999999` with pos inside or after the number), for
 * naming the field of a number the parser refused. key is "" when there is
 * none (an array element) or it is not plain ASCII. */
void ingest_key_before(const char *buf, size_t pos, char *key, size_t keylen);

#endif
