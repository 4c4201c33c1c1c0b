/* ingest.c - POST /api/v1/samples (see ingest.h). */
#include "ingest.h"
#include "admit.h"
#include "auth.h"
#include "detect.h"
#include "dict.h"
#include "log.h"
#include "malloc_tune.h"
#include "membudget.h"
#include "metrics.h"
#include "ratelimit.h"
#include "respond.h"
#include "sample_body.h"
#include "store.h"
#include "store_health.h"
#include "liveness_store.h"
#include "timeparse.h"
#include "tokens.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What parsing a body may allocate at its peak per byte of body, reserved
 * from the in-flight budget (membudget.h) once the body is whole. An upper
 * bound, not an estimate: the jansson reference parser took 22 bytes per
 * body byte for an array of one-digit numbers and 29 for an object of
 * short keys (VmHWM of one 8 MiB body); the streaming parser builds no tree
 * but a parsed sample costs a few KiB (at most SAMPLE_BODY_MAX_SAMPLES of
 * them a body). */
#define INGEST_PARSE_BYTES_PER_BYTE 32
/* A body from this size up is parsed into megabytes (~30 bytes per byte):
 * its memory goes back to the kernel once it is freed (trim_after). An
 * agent's sample is a few KiB to a few tens of KiB. */
#define INGEST_TRIM_AFTER ((size_t)128 * 1024)

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(struct ingest_error *e, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct ingest_error *e, const char *hint, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->error, sizeof(e->error), fmt, ap);
	va_end(ap);
	snprintf(e->hint, sizeof(e->hint), "%s", hint ? hint : "");
	return -1;
}

bool ingest_depth_ok(const char *buf, size_t len, int max_depth)
{
	return sample_json_depth_ok(buf, len, max_depth);
}

void ingest_key_before(const char *buf, size_t pos, char *key, size_t keylen)
{
	sample_json_key_before(buf, pos, key, keylen);
}

void ingest_batch_release(struct ingest_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		sample_release(&b->s[i]);
	free(b->s);
	b->s = NULL;
	b->n = 0;
}

/* Checks sample idx against the clock and the retention; -1 with e. */
static int check_time(const struct sample *s, size_t idx, int64_t now_ms, int64_t oldest_ms,
		      int retention_days, struct ingest_error *e)
{
	char when[40], limit[40];

	if (s->ts_ms > now_ms + INGEST_MAX_SKEW_MS || s->ts_ms < oldest_ms) {
		snprintf(e->time_host, sizeof(e->time_host), "%s", s->host);
		e->time_ts_ms = s->ts_ms;
	}
	if (s->ts_ms > now_ms + INGEST_MAX_SKEW_MS) {
		fail(e, "synchronise the agent's clock (NTP); samples may be at most 10 minutes "
		     "ahead of the server's", "could not accept sample %zu: ts: %s is more than "
		     "10 minutes ahead of the server's clock (clock skew)", idx,
		     time_format(s->ts_ms, when, sizeof(when)));
		snprintf(e->detail, sizeof(e->detail), "server time %s",
			 time_format(now_ms, limit, sizeof(limit)));
		return -1;
	}
	if (s->ts_ms < oldest_ms) {
		fail(e, "samples older than the raw-data retention cannot be stored",
		     "could not accept sample %zu: ts: %s is older than the raw-data retention "
		     "(%d days)", idx, time_format(s->ts_ms, when, sizeof(when)), retention_days);
		snprintf(e->detail, sizeof(e->detail), "oldest accepted %s",
			 time_format(oldest_ms, limit, sizeof(limit)));
		return -1;
	}
	return 0;
}

int ingest_parse(const char *buf, size_t len, int64_t now_ms, int64_t oldest_ms,
		 int retention_days, struct ingest_batch *b, struct ingest_error *e)
{
	struct sample_body_err be;

	memset(e, 0, sizeof(*e));
	b->s = NULL;
	b->n = 0;
	if (sample_body_parse(buf, len, INGEST_MAX_DEPTH, &b->s, &b->n, &be) < 0) {
		snprintf(e->detail, sizeof(e->detail), "%s", be.detail);
		switch (be.kind) {
		case SB_DEPTH:
			return fail(e, "a sample nests 6 levels deep", "could not parse JSON: %s", be.msg);
		case SB_TOOBIG:
			return fail(e, "integers are 0 to 2^63-1 (CONTRACT §1); the agent drops larger values",
				    "could not parse JSON: %s: expected an integer from 0 to 2^63-1", be.msg);
		case SB_SAMPLE:
			return fail(e, "fix the field named; nothing of this request was stored",
				    "could not parse sample %zu: %s", be.sample, be.msg);
		case SB_BATCH:
			e->status = 413;
			return fail(e, "split the batch (the agent does so on 413)",
				    "too many samples in one request: %s (at most %d)", be.msg,
				    SAMPLE_BODY_MAX_SAMPLES);
		case SB_NOMEM:
			return fail(e, NULL, "out of memory");
		case SB_TOP:
			return fail(e, NULL, "could not parse JSON: %s", be.msg);
		default:
			return fail(e, "send a sample object or an array of them (UTF-8 JSON, integers at "
				    "most 2^63-1, no duplicate keys)", "could not parse JSON: %s", be.msg);
		}
	}
	for (size_t i = 0; i < b->n; i++)
		if (check_time(&b->s[i], i, now_ms, oldest_ms, retention_days, e) < 0) {
			ingest_batch_release(b);
			return -1;
		}
	return 0;
}

/* The detail of a 413: the limit, in bytes. */
static const char *limit_detail(const struct request *rq, char *buf, size_t len)
{
	snprintf(buf, len, "at most %zu bytes (--max-body)", rq->app->cfg->max_body);
	return buf;
}

/* Refuses the request before its body. libmicrohttpd closes a connection
 * whose upload it did not read, and a client still sending then gets a
 * reset that can swallow the answer; so a body of at most
 * INGEST_DRAIN_MAX is read and dropped first and the answer given at its
 * end (ingest_finish). A larger declared body is refused at once. */
static enum MHD_Result refuse_upto(struct request *rq, size_t drain_max, unsigned status,
				   const char *error, const char *hint)
{
	const char *cl = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Content-Length");

	char d[96];
	if (body_check_content_length(cl, drain_max) != BODY_OK)
		return respond_error(rq, status, error, status == 413 ? limit_detail(rq, d, sizeof(d)) : NULL,
				     hint);
	rq->drain_max = drain_max;
	rq->refuse_status = status;
	rq->refuse_error = error;
	rq->refuse_hint = hint;
	return MHD_YES;
}

static enum MHD_Result refuse(struct request *rq, unsigned status, const char *error,
			      const char *hint)
{
	return refuse_upto(rq, INGEST_DRAIN_MAX, status, error, hint);
}

enum MHD_Result ingest_begin(struct request *rq)
{
	struct app *app = rq->app;
	const struct server_config *cfg = app->cfg;
	size_t key = 0;
	int retry;

	if (cfg->insecure_no_auth) {
		/* one unscoped pseudo-token: budgets still apply to it */
		snprintf(rq->grant.name, sizeof(rq->grant.name), "%s", "(no auth)");
	} else {
		size_t len = 0;
		const char *tok = auth_bearer(
			MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Authorization"), &len);
		int idx = tok ? tokens_check_grant(app->tokens, tok, len, time_now_ms(), &rq->grant) : -1;
		if (idx < 0) {
			rq->www_authenticate = true;
			return refuse(rq, 401, tok ? "wrong ingest token" : "missing ingest token",
				      "send Authorization: Bearer TOKEN with a token the server was "
				      "given (--token, --tokens-file or `vmscope-server token add`)");
		}
		key = (size_t)idx;
	}
	if (!ratelimit_take(app->rl, key, time_now_ms(), &retry)) {
		rq->retry_after = retry;
		return refuse(rq, 429, "rate limit exceeded",
			      "this token may post at most --rate-limit requests per second");
	}
	if (!app_store(app)) {
		metrics_db_error();
		rq->retry_after = 5;
		return refuse(rq, 503, "database unreachable",
			      "the server keeps retrying; retry the request later");
	}
	switch (body_check_content_length(
		MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Content-Length"), cfg->max_body)) {
	case BODY_ETOOBIG:
		/* a batch somewhat over the limit is drained so that the agent
		 * surely reads the 413 (and splits); a huge one is cut off */
		return refuse_upto(rq, 2 * cfg->max_body, 413, "request body too large",
				   "split the batch; the server takes at most --max-body bytes");
	case BODY_ECORRUPT:
		return respond_error(rq, 400, "bad Content-Length", NULL, NULL);
	default:
		break;
	}
	rq->encoding = body_encoding(
		MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Content-Encoding"));
	if (rq->encoding < 0)
		return refuse(rq, 415, "unsupported Content-Encoding",
			      "send the body as is or with Content-Encoding: gzip");
	/* while it arrives a body reserves only its own bytes: a client that
	 * stalls mid-upload holds what it sent, not the parse it may never
	 * reach; the parse is reserved when the body is whole (ingest_finish) */
	body_init_budget(&rq->body, cfg->max_body, app->inflight, 1);
	body_expect(&rq->body, MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Content-Length"));
	return MHD_YES;
}

size_t ingest_lone_bytes(size_t max_body)
{
	/* a gzip body of --max-body and its inflated copy with its parse */
	return max_body * (2 + INGEST_PARSE_BYTES_PER_BYTE);
}

/* What a parsed batch holds in memory, near enough for the in-flight
 * budget: the samples, their fields and cgroups. */
static size_t batch_bytes(const struct ingest_batch *b)
{
	size_t n = b->n * sizeof(struct sample);

	for (size_t i = 0; i < b->n; i++) {
		const struct sample *s = &b->s[i];
		n += s->m.cap * sizeof(struct sfield) + s->cgcap * sizeof(struct cgsample);
		for (size_t k = 0; k < s->ncg; k++)
			n += s->cg[k].m.cap * sizeof(struct sfield) + strlen(s->cg[k].path) + 1;
	}
	return n;
}

/* After a large body, the parse's memory goes back to the kernel
 * (malloc_give_back): it costs far less than such a parse did. */
static void trim_after(size_t body_len)
{
	if (body_len >= INGEST_TRIM_AFTER)
		malloc_give_back();
}

enum MHD_Result ingest_data(struct request *rq, const char *data, size_t len)
{
	if (rq->refuse_status) {
		/* refused already: drop the body, close past INGEST_DRAIN_MAX */
		rq->discarded += len;
		return rq->discarded > rq->drain_max ? MHD_NO : MHD_YES;
	}
	int rc = body_append(&rq->body, data, len);

	if (rc == BODY_EBUSY) {
		/* the server holds --max-inflight-bytes of requests already: give
		 * this one's memory back now, drop the rest of its upload and
		 * answer 503 at its end (the agent retries after Retry-After) */
		size_t had = rq->body.len;
		body_release(&rq->body);
		trim_after(had);
		metrics_ingest_busy();
		rq->retry_after = 1;
		rq->drain_max = rq->app->cfg->max_body;
		rq->refuse_status = 503;
		rq->refuse_error = "server busy: too many request bytes in flight";
		rq->refuse_hint = "retry after Retry-After seconds (--max-inflight-bytes)";
		rq->discarded += len;
		return MHD_YES;
	}
	if (rc == BODY_ENOMEM)
		return respond_error(rq, 500, "out of memory", NULL, NULL) == MHD_YES ? MHD_YES : MHD_NO;
	if (rc == BODY_ETOOBIG) {
		/* libmicrohttpd (0.9.75) cannot answer in the middle of an upload:
		 * discard up to another --max-body bytes so that a modestly
		 * oversized chunked body still gets its 413 at the end, and close
		 * the connection past that rather than read an unbounded body */
		rq->discarded += len;
		if (rq->discarded > rq->body.limit) {
			log_info("%s %s: chunked body far over %zu bytes, closing the connection",
				 rq->method, rq->path, rq->body.limit);
			return MHD_NO;
		}
	}
	return MHD_YES;
}

static enum MHD_Result busy(struct request *rq)
{
	metrics_ingest_busy();
	rq->retry_after = 1;
	return respond_error(rq, 503, "server busy: too many request bytes in flight", NULL,
			     "retry after Retry-After seconds (--max-inflight-bytes)");
}

/* A sample refused for its timestamp: recorded with its host, so that a
 * host whose clock is wrong is listed and alerted on (clock_skew) though
 * none of its samples is stored (liveness.h). The answer is the refusal
 * either way. */
static void note_refused(struct store *st, const struct ingest_error *e, int64_t now)
{
	char err[256];

	if (store_note_refused(st, e->time_host, e->time_ts_ms, now, err, sizeof(err)) != STORE_OK)
		log_warn("%s", err);
}

/* 503 for a write the database could not take now, saying why: "disk
 * full" rather than "unreachable" for a database that answers but refuses
 * writes (store_health.h). */
static enum MHD_Result unavailable(struct request *rq, const char *err)
{
	struct store_write_health w;
	char msg[96];

	store_health_get(time_now_ms(), &w);
	snprintf(msg, sizeof(msg), "database cannot take writes now: %s",
		 db_unavail_text(w.failing ? w.reason : DBU_UNREACHABLE));
	return respond_db_retry(rq, msg, err);
}

enum MHD_Result ingest_finish(struct request *rq)
{
	struct app *app = rq->app;
	struct store *st = app_store(app);
	const char *buf = rq->body.buf ? rq->body.buf : "";
	size_t len = rq->body.len;
	struct body inflated;
	struct ingest_batch b;
	struct ingest_error e;
	struct dict_stage stage;
	struct admit_refusal ar;
	struct admit_taken took;
	const struct admit_limits lim = { app->cfg->new_names_per_host, app->cfg->new_names_per_token };
	char err[512] = "";
	size_t nfresh = 0;
	enum MHD_Result r;
	double t0 = mono_s();

	char d[96];
	if (rq->refuse_status)
		return respond_error(rq, rq->refuse_status, rq->refuse_error,
				     rq->refuse_status == 413 ? limit_detail(rq, d, sizeof(d)) : NULL,
				     rq->refuse_hint);
	if (rq->body.too_big)
		return respond_error(rq, 413, "request body too large", limit_detail(rq, d, sizeof(d)),
				     "split the batch; the server takes at most --max-body bytes");
	if (!st)
		return respond_unavailable(rq);
	body_init_budget(&inflated, app->cfg->max_body, app->inflight,
			 1 + INGEST_PARSE_BYTES_PER_BYTE);
	inflated.also_held = rq->body.held;	/* one request, two buffers */
	if (rq->encoding != 1 && !body_reserve(&rq->body, len * INGEST_PARSE_BYTES_PER_BYTE)) {
		body_release(&rq->body);
		trim_after(len);
		return busy(rq);
	}
	if (rq->encoding == 1) {
		int zrc = body_gunzip(buf, len, &inflated);
		if (zrc != BODY_OK)
			body_release(&inflated);
		switch (zrc) {
		case BODY_OK:
			buf = inflated.buf;
			len = inflated.len;
			/* the compressed copy is no longer needed; the body
			 * stays tied to the budget for the parsed samples'
			 * reservation (body_keep_reservation below) */
			body_keep_reservation(&rq->body, 0);
			break;
		case BODY_ETOOBIG:
			return respond_error(rq, 413, "request body too large once inflated",
					     limit_detail(rq, d, sizeof(d)),
					     "split the batch; the server takes at most --max-body "
					     "bytes after decompression");
		case BODY_ECORRUPT:
			return respond_error(rq, 400, "could not decompress the body: not valid gzip",
					     NULL, NULL);
		case BODY_EBUSY:
			body_release(&rq->body);
			trim_after(len);
			return busy(rq);
		default:
			return respond_error(rq, 500, "out of memory", NULL, NULL);
		}
	}
	int64_t now = time_now_ms();
	/* names the server has not seen are held in the stage until the
	 * request is admitted (admit.h): a refused one leaves none behind */
	dict_stage_init(&stage, DICT_MAX_NAMES - dict_count());
	dict_stage_begin(&stage);
	int prc = ingest_parse(buf, len, now, store_oldest_accepted_ms(st, now),
			       app->cfg->retention_days, &b, &e);
	dict_stage_end();
	/* the body and its parse reservation go back now; the parsed samples,
	 * which wait for the commit (store_gc.c), keep a reservation of their
	 * own size until then (released at the end of this function), so that
	 * requests queued behind a slow database stay within the budget */
	body_keep_reservation(&rq->body, prc == 0 ? batch_bytes(&b) : 0);
	body_release(&inflated);
	if (prc < 0) {
		metrics_ingest_refused();
		if (e.time_host[0] && admit_may_record(app->admit, st, &rq->grant, e.time_host))
			note_refused(st, &e, now);
		trim_after(len);
		if (stage.over) {
			admit_refuse_overflow(&lim, &rq->grant, &stage, e.error, &ar);
			dict_stage_release(&stage);
			return respond_error(rq, ar.status, ar.error, ar.detail, ar.hint);
		}
		dict_stage_release(&stage);
		return respond_error(rq, e.status ? e.status : 400, e.error, e.detail, e.hint);
	}
	int arc = admit_batch(app->admit, &lim, st, &rq->grant, &b, &stage, &took, &ar);
	dict_stage_release(&stage);
	if (arc < 0) {
		if (ar.status == 400)
			metrics_ingest_refused();
		ingest_batch_release(&b);
		body_release(&rq->body);
		trim_after(len);
		rq->retry_after = ar.retry_after;
		return respond_error(rq, ar.status, ar.error, ar.detail[0] ? ar.detail : NULL,
				     ar.hint[0] ? ar.hint : NULL);
	}
	int rc = b.n ? store_put_samples(st, b.s, b.n, &nfresh, err, sizeof(err)) : STORE_OK;
	if (rc != STORE_OK)
		admit_refund(app->admit, &took);
	if (rc == STORE_EUNAVAIL) {
		r = unavailable(rq, err);
	} else if (rc != STORE_OK) {
		if (rc == STORE_EINVAL)
			metrics_ingest_refused();
		r = respond_store_error(rq, rc, err);
	} else {
		admit_stored(app->admit, &rq->grant, &b);
		metrics_ingest_ok(b.n, nfresh, mono_s() - t0);
		/* duplicates: a (host, ts) stored already; the stored sample
		 * stands (a re-post, or a sample taken after a clock step) */
		char ans[96];
		int alen = snprintf(ans, sizeof(ans), "{\"accepted\":%zu,\"stored\":%zu,\"duplicates\":%zu}", b.n,
				    nfresh, b.n - nfresh);
		r = respond_json_text(rq, 202, ans, (size_t)alen);
	}
	ingest_batch_release(&b);
	body_release(&rq->body);
	trim_after(len);
	return r;
}
