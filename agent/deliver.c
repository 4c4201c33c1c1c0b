/* deliver.c - batches from the spool to POST /api/v1/samples (see deliver.h). */
#include "deliver.h"
#include "alog.h"
#include "version.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* Retries back off from 1 s, doubling, to at most 60 s. The server's grace
 * period after it starts or its database comes back (server/ingest/
 * liveness.c) is sized from this: keep the two in step. */
#define BACKOFF_FIRST 1.0
#define BACKOFF_MAX 60.0

/* VMSCOPE_TEST_TIME_SCALE (tests only, as for the server): the backoff's
 * durations times this factor, so an outage can be replayed faster with
 * the same proportions. */
static double time_scale(void)
{
	static double f;

	if (f == 0) {
		const char *e = getenv("VMSCOPE_TEST_TIME_SCALE");
		double v = e ? strtod(e, NULL) : 1;
		f = v > 0 && v <= 1 ? v : 1;
	}
	return f;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	struct deliver *d = ud;
	size_t n = size * nmemb, room = sizeof(d->resp) - 1 - d->rlen;
	size_t k = n < room ? n : room;

	memcpy(d->resp + d->rlen, p, k);
	d->rlen += k;
	d->resp[d->rlen] = '\0';
	return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	struct deliver *d = ud;
	size_t n = size * nmemb;
	char v[128];

	if (n > 12 && n < sizeof(v) + 12 && !strncasecmp(p, "Retry-After:", 12)) {
		size_t vl = n - 12;
		memcpy(v, p + 12, vl);
		v[vl] = '\0';
		char *s = v;
		while (*s == ' ' || *s == '\t')
			s++;
		char *e = s + strlen(s);
		while (e > s && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
			*--e = '\0';
		char *end;
		long secs = strtol(s, &end, 10);
		if (end != s && !*end && secs >= 0) {
			d->retry_after = secs;
		} else {
			time_t t = curl_getdate(s, NULL);
			if (t > 0)
				d->retry_after = t > time(NULL) ? (long)(t - time(NULL)) : 0;
		}
	}
	return n;
}

int deliver_init(struct deliver *d, const struct agent_opts *o, struct memq *mq)
{
	char auth[OPT_MAX_STR + 32];
	size_t ul = strlen(o->server);

	memset(d, 0, sizeof(*d));
	d->o = o;
	d->mq = mq;
	d->limit = (size_t)o->batch_max;
	d->retry_after = -1;
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	while (ul > 0 && o->server[ul - 1] == '/')
		ul--;
	d->url = malloc(ul + sizeof("/api/v1/samples"));
	d->ends = calloc((size_t)o->batch_max, sizeof(*d->ends));
	if (!d->url || !d->ends)
		goto oom;
	memcpy(d->url, o->server, ul);
	strcpy(d->url + ul, "/api/v1/samples");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		alog_error("could not initialise libcurl");
		return -1;
	}
	d->multi = curl_multi_init();
	d->easy = curl_easy_init();
	if (!d->multi || !d->easy)
		goto oom;
	const char *common[] = { "Content-Type: application/json", "Expect:", NULL };
	for (int i = 0; common[i]; i++) {
		struct curl_slist *a = curl_slist_append(d->hdr_plain, common[i]);
		struct curl_slist *b = a ? curl_slist_append(d->hdr_gzip, common[i]) : NULL;
		if (!a || !b)
			goto oom;
		d->hdr_plain = a;
		d->hdr_gzip = b;
	}
	if (o->token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", o->token);
		struct curl_slist *a = curl_slist_append(d->hdr_plain, auth);
		struct curl_slist *b = a ? curl_slist_append(d->hdr_gzip, auth) : NULL;
		if (!a || !b)
			goto oom;
		d->hdr_plain = a;
		d->hdr_gzip = b;
	}
	/* One deflate stream for the agent's life, reset per batch: set up
	 * afresh per batch its 128 KiB of tables were a fresh allocation (page
	 * faults) every time, the costliest step of delivering a small batch.
	 * Level 1 (zlib's fastest): on the agent's JSON it gives 5-15 % more
	 * bytes than level 5 for half the CPU; the agent's machine is the one
	 * whose CPU counts. 16 KiB window, smaller tables: JSON repeats within
	 * a sample, and the agent must stay small. */
	if (deflateInit2(&d->z, 1, Z_DEFLATED, 14 + 16, 7, Z_DEFAULT_STRATEGY) != Z_OK)
		goto oom;
	d->z_ready = true;
	struct curl_slist *g = curl_slist_append(d->hdr_gzip, "Content-Encoding: gzip");
	if (!g)
		goto oom;
	d->hdr_gzip = g;

	CURL *e = d->easy;
	long tmo = (long)(o->timeout_s * 1000);
	curl_easy_setopt(e, CURLOPT_URL, d->url);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, tmo);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, tmo < 5000 ? tmo : 5000L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "vmscope-agent/" VMSCOPE_VERSION);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, d);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, d);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	/* https: the server's certificate and name are always checked, against
	 * --cacert when given (a private CA), else the system's CAs */
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	if (o->cacert && curl_easy_setopt(e, CURLOPT_CAINFO, o->cacert) != CURLE_OK) {
		alog_error("could not use --cacert %s", o->cacert);
		return -1;
	}
	return 0;
oom:
	alog_error("could not set up delivery: out of memory");
	return -1;
}

static void abort_request(struct deliver *d)
{
	if (d->inflight) {
		curl_multi_remove_handle(d->multi, d->easy);
		d->inflight = false;
	}
}

void deliver_release(struct deliver *d)
{
	abort_request(d);
	if (d->easy)
		curl_easy_cleanup(d->easy);
	if (d->multi)
		curl_multi_cleanup(d->multi);
	curl_slist_free_all(d->hdr_plain);
	curl_slist_free_all(d->hdr_gzip);
	free(d->url);
	free(d->req.p);
	free(d->next.p);
	free(d->ends);
	if (d->z_ready)
		deflateEnd(&d->z);
	if (d->o)
		curl_global_cleanup();
	memset(d, 0, sizeof(*d));
}

/* The request is over: its records may be dropped again to make room. */
static void unpin(struct deliver *d, struct spool *s)
{
	s->pinned = false;
	if (d->mq)
		d->mq->pinned = 0;
}

void deliver_abort(struct deliver *d, struct spool *s)
{
	abort_request(d);
	unpin(d, s);
}

static int reserve(struct deliver_body *b, size_t need)
{
	if (need <= b->cap)
		return 0;
	char *nb = realloc(b->p, need);
	if (!nb)
		return -1;
	b->p = nb;
	b->cap = need;
	return 0;
}

/* Body building: records joined into a JSON array, in one pass. The body
 * starts raw; when it would grow past DELIVER_GZIP_MIN it switches to
 * deflate (the raw prefix, at most that size, fed first), so a small batch
 * goes uncompressed without measuring the batch first. The one deflate
 * stream is used by one body at a time: a body is finished before the
 * next is started (the request in flight holds a finished one). */
static int z_feed(struct deliver *d, struct deliver_body *b, const char *p, size_t n, int flush)
{
	z_stream *z = &d->z;

	z->next_in = (Bytef *)(uintptr_t)p;
	z->avail_in = (uInt)n;
	do {
		if (b->cap - b->len < 1024 && reserve(b, b->cap * 2) < 0)
			return -1;
		z->next_out = (Bytef *)b->p + b->len;
		z->avail_out = (uInt)(b->cap - b->len);
		int rc = deflate(z, flush);
		b->len = b->cap - z->avail_out;
		if (rc == Z_STREAM_ERROR)
			return -1;
		if (rc == Z_STREAM_END)
			break;
	} while (z->avail_in > 0 || z->avail_out == 0 || flush == Z_FINISH);
	return 0;
}

static int body_start(struct deliver_body *b)
{
	b->len = 0;
	b->gz = false;
	return reserve(b, 2 * DELIVER_GZIP_MIN);
}

/* Appends to the body; the switch to gzip happens here. */
static int add_piece(struct deliver *d, struct deliver_body *b, const char *p, size_t n)
{
	if (!b->gz && b->len + n + 1 > DELIVER_GZIP_MIN) {	/* +1: the closing ']' */
		char prefix[DELIVER_GZIP_MIN];
		size_t pl = b->len;

		memcpy(prefix, b->p, pl);
		b->len = 0;
		if (deflateReset(&d->z) != Z_OK)
			return -1;
		b->gz = true;
		if (pl && z_feed(d, b, prefix, pl, Z_NO_FLUSH) < 0)
			return -1;
	}
	if (b->gz)
		return z_feed(d, b, p, n, Z_NO_FLUSH);
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* Closes the array: "]", and the end of the gzip stream. */
static int body_finish(struct deliver *d, struct deliver_body *b)
{
	return b->gz ? z_feed(d, b, "]", 1, Z_FINISH) : add_piece(d, b, "]", 1);
}

struct build {
	struct deliver *d;
	size_t i;
};

static int on_record(void *ctx, const char *rec, size_t len)
{
	struct build *b = ctx;

	if (add_piece(b->d, &b->d->req, b->i == 0 ? "[" : ",", 1) < 0)
		return -1;
	b->i++;
	return add_piece(b->d, &b->d->req, rec, len);
}

/* Builds the next batch into d->req: the streamed body when the spool holds
 * just its record, else up to max_n records read from the spool head.
 * Returns 1 when gzip'ed, 0 when raw, -1 on error. */
static int build_body(struct deliver *d, struct spool *s, size_t max_n)
{
	size_t n, bytes;
	struct build b = { .d = d, .i = 0 };

	if (d->next_ready && spool_pos_cmp(s->head, d->next_start) == 0 &&
	    spool_pos_cmp(spool_end(s), d->next_end) == 0) {
		struct deliver_body t = d->req;
		d->from_mem = false;

		d->req = d->next;
		d->next = t;
		d->next_ready = false;
		d->ends[0] = d->next_end;
		d->n = 1;
		d->streamed++;
		return d->req.gz;
	}
	d->next_ready = false;	/* the spool holds more (or less): read it */
	if (body_start(&d->req) < 0)
		return -1;
	/* the spool's records are older than the memory queue's: spool first */
	d->from_mem = spool_empty(s) && d->mq && !memq_empty(d->mq);
	int rc = d->from_mem ? memq_peek(d->mq, max_n, DELIVER_MAX_BATCH_BYTES, on_record, &b, &n)
			     : spool_peek(s, max_n, DELIVER_MAX_BATCH_BYTES, on_record, &b, d->ends, &n, &bytes);
	if (rc == 0 && n > 0)
		rc = body_finish(d, &d->req);
	else
		rc = -1;
	d->n = n;
	return rc < 0 ? -1 : d->req.gz;
}

bool deliver_stream_begin(struct deliver *d, const struct spool *s)
{
	d->next_ready = false;
	d->streaming = false;
	if (d->failing)
		return false;	/* backing off: the sample will wait in the spool */
	if (!spool_empty(s) && !(d->inflight && d->n > 0 && spool_pos_cmp(d->ends[d->n - 1], spool_end(s)) == 0))
		return false;	/* a backlog: the next batch is read from the spool */
	if (body_start(&d->next) < 0 || add_piece(d, &d->next, "[", 1) < 0)
		return false;
	d->streaming = true;
	d->has_held = false;
	return true;
}

void deliver_stream_add(struct deliver *d, const char *p, size_t n)
{
	if (!d->streaming || n == 0)
		return;
	if (d->has_held && add_piece(d, &d->next, &d->held, 1) < 0)
		goto fail;
	if (n > 1 && add_piece(d, &d->next, p, n - 1) < 0)
		goto fail;
	d->held = p[n - 1];
	d->has_held = true;
	return;
fail:
	d->streaming = false;	/* the batch will be read from the spool */
}

void deliver_stream_end(struct deliver *d, bool ok, struct spool_pos start, struct spool_pos end)
{
	if (!d->streaming)
		return;
	d->streaming = false;
	/* the held byte is the record's '\n' */
	if (!ok || !d->has_held || d->held != '\n' || body_finish(d, &d->next) < 0)
		return;
	d->next_start = start;
	d->next_end = end;
	d->next_ready = true;
}

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void backoff(struct deliver *d, double now)
{
	double delay;

	d->backoff = d->backoff > 0 ? d->backoff * 2 : BACKOFF_FIRST * time_scale();
	if (d->backoff > BACKOFF_MAX * time_scale())
		d->backoff = BACKOFF_MAX * time_scale();
	/* equal jitter: half fixed, half random, so a fleet does not retry in step */
	delay = d->backoff / 2 + (double)rand() / RAND_MAX * d->backoff / 2;
	if (d->retry_after >= 0)
		delay = d->retry_after < 1 ? 1.0 : (double)(d->retry_after > 3600 ? 3600 : d->retry_after);
	d->next_try = now + delay;
	d->failing = true;
}

/* The start of the server's answer as one printable line: the server's
 * {"error": ..., "hint": ...} object as it came, or whatever a proxy in
 * between answered. Logged as text rather than parsed, so the agent needs no
 * JSON parser; control bytes become spaces (the body is the server's, and
 * the log is read by people and line-based tools). */
static void answer_message(const struct deliver *d, char *out, size_t outlen)
{
	size_t n = 0;
	bool space = false;

	for (size_t i = 0; i < d->rlen && n + 1 < outlen; i++) {
		unsigned char c = (unsigned char)d->resp[i];
		if (c < 0x20 || c == 0x7f || c == ' ') {
			space = n > 0;
			continue;
		}
		if (space) {
			if (n + 2 >= outlen)
				break;
			out[n++] = ' ';
			space = false;
		}
		out[n++] = (char)c;
	}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, outlen, "no message");
}

/* Records resolved (accepted or dropped) at the head: move the head (or
 * forget them from the memory queue). */
static void resolved(struct deliver *d, struct spool *s, size_t k)
{
	if (d->from_mem)
		memq_pop(d->mq, k);
	else
		spool_ack(s, d->ends[k - 1], k);
	if (d->split_left > 0) {
		d->split_left -= k < d->split_left ? k : d->split_left;
		if (d->split_left == 0)
			d->limit = (size_t)d->o->batch_max;
	}
}

static void split(struct deliver *d)
{
	if (d->split_left == 0)
		d->split_left = d->n;
	d->limit = (d->n + 1) / 2;
}

/* The server's words for a sample refused for its timestamp (CONTRACT.md
 * §2: more than 10 minutes ahead of its clock, or older than the
 * retention): this machine's clock, not the sample, is wrong. */
static bool refused_for_time(const char *msg)
{
	return strstr(msg, "(clock skew)") || strstr(msg, "older than the raw-data retention");
}

/* Says so at error level: at once the first time, then at most once a
 * minute with how many more were refused (one line per sample would be a
 * line per interval for as long as the clock stays wrong). The samples go:
 * the contract lets the server refuse them for good. */
static void log_time_refusal(struct deliver *d, const char *msg, double now)
{
	d->refused_time++;
	d->time_unlogged++;
	if (d->time_logged > 0 && now - d->time_logged < 60)
		return;
	alog_error("server refused %llu sample%s for its timestamp: this machine's clock is wrong; "
		   "synchronise it (NTP). The server said: %s. Refused samples are dropped "
		   "(%llu so far, %llu in all)", (unsigned long long)d->time_unlogged,
		   d->time_unlogged == 1 ? "" : "s", msg, (unsigned long long)d->refused_time,
		   (unsigned long long)d->refused);
	d->time_logged = now;
	d->time_unlogged = 0;
}

/* A 202 says how many of the batch the server had already (same host and
 * ts: CONTRACT.md §2) and did not store again. Expected after an attempt
 * whose answer was lost; otherwise a clock set back made new samples
 * carry the timestamps of stored ones, and those samples are not stored.
 * Counted always, said at once and then at most once a minute. */
static void note_duplicates(struct deliver *d, double now)
{
	const char *p = strstr(d->resp, "\"duplicates\":");
	unsigned long long n = p ? strtoull(p + 13, NULL, 10) : 0;

	if (n == 0 || n > d->n)
		return;
	d->duplicates += n;
	d->dup_unlogged += n;
	if (d->dup_logged > 0 && now - d->dup_logged < 60)
		return;
	alog_warn("server had %llu of the samples posted already (same host and timestamp) and kept the stored "
		  "ones: a re-post after an unanswered attempt, or samples taken after the clock was set back, "
		  "which are not stored (%llu such samples in all)", (unsigned long long)d->dup_unlogged,
		  (unsigned long long)d->duplicates);
	d->dup_logged = now;
	d->dup_unlogged = 0;
}

static void finished(struct deliver *d, struct spool *s, CURLcode cc, double now)
{
	long status = 0;
	char msg[300];

	d->inflight = false;
	unpin(d, s);
	curl_multi_remove_handle(d->multi, d->easy);
	if (d->req.cap > DELIVER_KEEP_BODY) {
		/* a catch-up batch: give its memory back rather than keep it dirty */
		free(d->req.p);
		d->req.p = NULL;
		d->req.cap = d->req.len = 0;
	}
	if (cc != CURLE_OK) {
		backoff(d, now);
		alog_warn("could not deliver %zu samples to %s: %s%s; retrying in %.1f s (%llu bytes spooled)",
			  d->n, d->url, curl_easy_strerror(cc),
			  cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE ?
			  " (TLS verification failed: give the server's CA with --cacert)" : "",
			  d->next_try - now, (unsigned long long)spool_pending_bytes(s));
		return;
	}
	curl_easy_getinfo(d->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300) {
		if (d->failing)
			alog_info("delivery recovered: the server accepted %zu samples", d->n);
		d->failing = false;
		d->backoff = 0;
		d->sent += d->n;
		note_duplicates(d, now);
		resolved(d, s, d->n);
		d->next_try = now;
		return;
	}
	answer_message(d, msg, sizeof(msg));
	if ((status == 400 || status == 413) && d->n > 1) {
		alog_debug("server answered %ld for a batch of %zu; splitting it", status, d->n);
		split(d);
		d->next_try = now;
		return;
	}
	if (status == 400 || status == 413) {
		d->refused++;
		if (refused_for_time(msg))
			log_time_refusal(d, msg, now);
		else
			alog_warn("server refused a sample (%ld: %s); dropped it (%llu refused so far)", status,
				  msg, (unsigned long long)d->refused);
		resolved(d, s, 1);
		d->next_try = now;
		return;
	}
	backoff(d, now);
	if (status == 401 || status == 403)
		alog_error("server refused the token (%ld: %s): check --token or --token-file; "
			   "samples are kept in the spool (%llu bytes); retrying in %.1f s", status, msg,
			   (unsigned long long)spool_pending_bytes(s), d->next_try - now);
	else
		alog_warn("server answered %ld (%s); %zu samples kept, retrying in %.1f s", status, msg,
			  d->n, d->next_try - now);
}

/* Collects the answer of the request in flight, if it has finished. now is
 * the caller's clock reading: deliver_step compares next_try with the same
 * value, so a batch answered with "go on at once" (next_try = now) is
 * followed by the next one in the same step. (With a fresh clock reading
 * here, next_try came out a few microseconds after deliver_step's now: no
 * request was in flight until the next step, and main.c synced the sample
 * just taken as "not being delivered" -- an fdatasync for about half of
 * the samples when requests overlap the next sample.) */
static void collect(struct deliver *d, struct spool *s, double now)
{
	int running, left;
	CURLMsg *m;

	curl_multi_perform(d->multi, &running);
	while ((m = curl_multi_info_read(d->multi, &left))) {
		if (m->msg == CURLMSG_DONE && m->easy_handle == d->easy)
			finished(d, s, m->data.result, now);
	}
}

void deliver_finish(struct deliver *d, struct spool *s, double timeout_s)
{
	double end = now_mono() + timeout_s;

	while (d->inflight && now_mono() < end) {
		curl_multi_poll(d->multi, NULL, 0, 100, NULL);
		collect(d, s, now_mono());
	}
	deliver_abort(d, s);
}

void deliver_step(struct deliver *d, struct spool *s, double now)
{
	int running;

	if (d->inflight) {
		collect(d, s, now);
		if (d->inflight)
			return;
	}
	if (now < d->next_try || (spool_empty(s) && (!d->mq || memq_empty(d->mq))))
		return;
	size_t max_n = d->limit < (size_t)d->o->batch_max ? d->limit : (size_t)d->o->batch_max;
	int gz = build_body(d, s, max_n);
	if (gz < 0) {
		alog_error("could not build a batch from the spool; retrying later");
		backoff(d, now);
		return;
	}
	d->rlen = 0;
	d->resp[0] = '\0';
	d->retry_after = -1;
	curl_easy_setopt(d->easy, CURLOPT_HTTPHEADER, gz ? d->hdr_gzip : d->hdr_plain);
	curl_easy_setopt(d->easy, CURLOPT_POSTFIELDS, d->req.p);
	curl_easy_setopt(d->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)d->req.len);
	if (curl_multi_add_handle(d->multi, d->easy) != CURLM_OK) {
		alog_error("could not start an HTTP request");
		backoff(d, now);
		return;
	}
	d->inflight = true;
	d->requests++;
	/* the spool (or the memory queue) must not drop these records to make
	 * room while they are in flight: they would count as lost and yet arrive */
	if (d->from_mem) {
		d->mq->pinned = d->n;
	} else {
		s->pinned = true;
		s->pin = d->ends[d->n - 1];
		s->pin_n = d->n;
	}
	curl_multi_perform(d->multi, &running);
}

double deliver_due_in(const struct deliver *d, const struct spool *s, double now)
{
	if (d->inflight)
		return 0;
	if (spool_empty(s) && (!d->mq || memq_empty(d->mq)))
		return 1e9;
	return d->next_try > now ? d->next_try - now : 0;
}

void deliver_wait(struct deliver *d, double seconds)
{
	if (!(seconds > 0))
		return;
	if (d->inflight) {
		/* curl counts milliseconds: round up, or a wait under one
		 * would return at once and the caller come straight back */
		curl_multi_poll(d->multi, NULL, 0, (int)ceil(seconds * 1000), NULL);
		return;
	}
	struct timespec ts = { (time_t)seconds, (long)((seconds - floor(seconds)) * 1e9) };
	nanosleep(&ts, NULL);	/* EINTR: a signal; the caller looks at it */
}
