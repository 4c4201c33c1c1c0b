/* deliver.h - posting spooled samples to the server (CONTRACT.md §2).
 *
 * One request at a time, driven by the agent's loop through a libcurl multi
 * handle so sampling never waits for the network. Records are taken from
 * the spool head in batches (a JSON array, gzip'ed when over 4 KiB) and the
 * head only moves once the server has answered for them. In the steady
 * state the batch is just the sample taken a moment ago: then its body is
 * built while the sample is written to the spool (deliver_stream_*, fed
 * from the writer's buffer as it is flushed), not read back from the
 * spool. The same bytes either way: a re-post after a restart reads the
 * very record from the spool, and the server stores it once. Answers:
 *   2xx          accepted: the head moves past the batch
 *   400          the batch is split in halves until the refused samples are
 *                alone; a refused single sample is dropped, counted, logged
 *                (at error level, once a minute with a count, when refused
 *                for its timestamp: this machine's clock is wrong)
 *   413          split likewise; a single sample over the limit is dropped
 *   401, 403     kept; logged at error level on every attempt (backoff)
 *   429, 503, other answers, network errors
 *                kept; retried with exponential backoff and jitter (1 s
 *                doubling to 60 s), Retry-After honoured
 */
#ifndef VMSCOPE_AGENT_DELIVER_H
#define VMSCOPE_AGENT_DELIVER_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>
#include <zlib.h>

#include "memq.h"
#include "options.h"
#include "spool.h"

#define DELIVER_MAX_BATCH_BYTES (1u << 20)	/* uncompressed JSON per request */
#define DELIVER_GZIP_MIN 4096
#define DELIVER_KEEP_BODY (64u << 10)	/* bigger request buffers are freed after use */

/* A request body: raw JSON, or gzip once it passed DELIVER_GZIP_MIN. */
struct deliver_body {
	char *p;			/* owned, reused */
	size_t len, cap;
	bool gz;
};

struct deliver {
	const struct agent_opts *o;	/* borrowed */
	CURLM *multi;
	CURL *easy;
	struct curl_slist *hdr_plain, *hdr_gzip;
	char *url;			/* owned */
	bool inflight;
	z_stream z;			/* owned deflate stream, reset per gzip'ed batch */
	bool z_ready;
	struct deliver_body req;	/* the body of the request in flight (or
					 * being built from the spool) */
	struct deliver_body next;	/* the sample being written, streamed in:
					 * its one-sample batch */
	bool streaming;			/* next is being fed (deliver_stream_add) */
	char held;			/* the last byte fed, held back (the
					 * record's '\n' is not part of the body) */
	bool has_held;
	bool next_ready;		/* next holds the batch of the record at
					 * next_start..next_end in the spool */
	struct spool_pos next_start, next_end;
	char resp[512];			/* start of the answer body */
	size_t rlen;
	long retry_after;		/* seconds from Retry-After, -1 when none */
	size_t n;			/* records in the request in flight */
	struct spool_pos *ends;		/* owned, batch_max entries */
	size_t limit;			/* batch size while splitting */
	size_t split_left;		/* records still inside a split region */
	double next_try;		/* CLOCK_MONOTONIC seconds */
	double backoff;			/* current backoff step, 0 after success */
	bool failing;			/* last attempt failed (to log recovery once) */
	struct memq *mq;		/* borrowed: samples the spool could not take */
	bool from_mem;			/* the request in flight holds mq's oldest records */
	uint64_t sent, refused, requests;	/* totals */
	uint64_t refused_time;		/* of refused: for their timestamp (the clock) */
	uint64_t duplicates;		/* of sent: not stored, the server had their (host, ts) */
	double dup_logged;		/* when duplicates were last logged (CLOCK_MONOTONIC) */
	uint64_t dup_unlogged;		/* duplicates since */
	double time_logged;		/* when such a refusal was last logged (CLOCK_MONOTONIC) */
	uint64_t time_unlogged;		/* such refusals since */
	uint64_t streamed;		/* requests whose body was built while the
					 * sample was written */
};

/* Prepares the HTTP handles; mq (borrowed, may be NULL) holds samples the
 * spool could not take, posted after the spool's (memq.h). Returns 0, or
 * -1 (logged). */
int deliver_init(struct deliver *d, const struct agent_opts *o, struct memq *mq);

void deliver_release(struct deliver *d);

/* Starts a request when none is in flight, the backoff has passed and the
 * spool has records; collects a finished request's answer and acts on it
 * (moving the spool head). Never blocks on the network. now is
 * CLOCK_MONOTONIC seconds. */
void deliver_step(struct deliver *d, struct spool *s, double now);

/* Starts building the body of the sample about to be written to the spool,
 * when it will be the whole batch (nothing else waits in the spool but the
 * request in flight, and delivery is not failing). Returns true when the
 * caller should feed the sample's bytes to deliver_stream_add. */
bool deliver_stream_begin(struct deliver *d, const struct spool *s);

/* Feeds the next bytes of the record (its final '\n' included: the last
 * byte fed is left out of the body). */
void deliver_stream_add(struct deliver *d, const char *p, size_t n);

/* The record is in the spool from start to end (just after its '\n'):
 * its body is ready, and deliver_step posts it when the spool holds just
 * that record. ok false: the record was not written (abandon the body). */
void deliver_stream_end(struct deliver *d, bool ok, struct spool_pos start, struct spool_pos end);

/* Waits up to `seconds` for network activity of the request in flight (or
 * just sleeps when there is none); returns at once when seconds <= 0. The
 * sleep is as precise as the clock (not rounded down to a millisecond: a
 * wait shorter than one millisecond would otherwise not wait at all, and
 * the main loop would spin through the last millisecond before every
 * sample: ~1,400 turns and ~0.8 ms of CPU per sample). */
void deliver_wait(struct deliver *d, double seconds);

/* Seconds until deliver_step has something to do (0 when it does now). */
double deliver_due_in(const struct deliver *d, const struct spool *s, double now);

/* Abandons the request in flight (its samples stay spooled). */
void deliver_abort(struct deliver *d, struct spool *s);

/* On shutdown: waits up to timeout_s for the request in flight to be
 * answered (so its samples are not sent twice after a restart), starting no
 * new one, then abandons it. */
void deliver_finish(struct deliver *d, struct spool *s, double timeout_s);

#endif
