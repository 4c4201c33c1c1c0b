/* api_export.c - GET /api/v1/hosts/{host}/samples (see api_export.h).
 *
 * The answer is produced while libmicrohttpd sends it: its reader callback
 * pulls samples from a store_export cursor (which borrows a database
 * connection only per page of rows) and serialises them one line at a
 * time, so memory stays at one page and one line whatever the range.
 * Errors found before the first byte get a proper status (404, 503);
 * one in the middle of the stream can only cut it short, which a client
 * sees as a chunked body without its final chunk.
 */
#include "api_export.h"

#include "api_read.h"
#include "log.h"
#include "respond.h"
#include "store.h"
#include "timeparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIME_EXPECT "expected Unix seconds or an RFC 3339 time (2026-11-30T10:00:00Z)"

static int get_param(const struct param_src *src, const char *name, const char **v, char *err, size_t errlen)
{
	size_t len = 0;

	*v = src->get(src->ctx, name, &len);
	if (*v && (len != strlen(*v) || len == 0)) {
		snprintf(err, errlen, "%s: expected a value", name);
		return -1;
	}
	return 0;
}

static int get_time(const struct param_src *src, const char *name, int64_t *ms, char *err, size_t errlen)
{
	const char *v;

	if (get_param(src, name, &v, err, errlen) < 0)
		return -1;
	if (v && time_parse(v, ms) < 0) {
		snprintf(err, errlen, "%s: " TIME_EXPECT, name);
		return -1;
	}
	return 0;
}

int params_export(const struct param_src *src, int64_t now_ms, struct export_query *q,
		  char *err, size_t errlen)
{
	const char *v;

	q->until_ms = now_ms;
	q->since_ms = INT64_MIN;
	q->limit = EXPORT_MAX_LIMIT;
	if (get_time(src, "until", &q->until_ms, err, errlen) < 0 ||
	    get_time(src, "since", &q->since_ms, err, errlen) < 0)
		return -1;
	if (q->since_ms == INT64_MIN)
		q->since_ms = q->until_ms - 3600 * 1000;
	if (q->until_ms < q->since_ms) {
		snprintf(err, errlen, "until: must not be before since");
		return -1;
	}
	if (q->until_ms - q->since_ms > EXPORT_MAX_RANGE_MS) {
		snprintf(err, errlen, "since: one export may span at most 31 days");
		return -1;
	}
	if (get_param(src, "limit", &v, err, errlen) < 0)
		return -1;
	if (v && param_parse_int(v, 1, EXPORT_MAX_LIMIT, &q->limit) < 0) {
		snprintf(err, errlen, "limit: expected an integer from 1 to %d", EXPORT_MAX_LIMIT);
		return -1;
	}
	return 0;
}

/* One streaming answer: the cursor, the line being sent, what is left. */
struct xstream {
	struct store_export *x;	/* owned */
	struct sample s;
	char *line;		/* owned: the current line, "\n" included */
	size_t len, off;
	long left;		/* samples still allowed by limit */
	bool have;		/* s holds a sample not yet serialised */
	bool done;
};

static void xstream_free(void *cls)
{
	struct xstream *xs = cls;

	store_export_close(xs->x);
	sample_release(&xs->s);
	free(xs->line);
	free(xs);
}

/* Serialises xs->s into xs->line. Returns 0 or -1 when out of memory. */
static int serialise(struct xstream *xs)
{
	json_t *o = sample_to_json(&xs->s);
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;

	json_decref(o);
	if (!text)
		return -1;
	size_t n = strlen(text);
	char *line = realloc(text, n + 2);
	if (!line) {
		free(text);
		return -1;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	free(xs->line);
	xs->line = line;
	xs->len = n + 1;
	xs->off = 0;
	xs->have = false;
	xs->left--;
	return 0;
}

/* Makes the next line ready. Returns 1 (ready), 0 (end) or -1 (error). */
static int next_line(struct xstream *xs)
{
	char err[256] = "";

	if (!xs->have) {
		if (xs->done || xs->left <= 0)
			return 0;
		int rc = store_export_next(xs->x, &xs->s, err, sizeof(err));
		if (rc == 0) {
			xs->done = true;
			return 0;
		}
		if (rc < 0) {
			log_error("export of %s stopped: %s", xs->s.host[0] ? xs->s.host : "a host", err);
			return -1;
		}
		xs->have = true;
	}
	if (serialise(xs) < 0) {
		log_error("export stopped: out of memory");
		return -1;
	}
	return 1;
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct xstream *xs = cls;
	size_t n = 0;

	(void)pos;
	while (n < max) {
		if (xs->off == xs->len) {
			int r = next_line(xs);
			if (r < 0)
				return MHD_CONTENT_READER_END_WITH_ERROR;
			if (r == 0)
				break;
		}
		size_t k = xs->len - xs->off;
		if (k > max - n)
			k = max - n;
		memcpy(buf + n, xs->line + xs->off, k);
		xs->off += k;
		n += k;
	}
	if (n == 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	return (ssize_t)n;
}

enum MHD_Result api_export(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct param_src src = api_params(rq);
	struct export_query q;
	struct xstream *xs;
	char err[256] = "";

	if (params_export(&src, time_now_ms(), &q, err, sizeof(err)) < 0)
		return respond_error(rq, 400, err, NULL, "see docs/api.md: since, until, limit");
	if (!st)
		return respond_unavailable(rq);
	if (!(xs = calloc(1, sizeof(*xs))))
		return respond_error(rq, 500, "out of memory", NULL, NULL);
	sample_init(&xs->s);
	xs->left = q.limit;
	int rc = store_export_open(st, rq->route.host, q.since_ms, q.until_ms, &xs->x, err, sizeof(err));
	/* the first sample before the headers, so a failure still gets its status */
	if (rc == STORE_OK) {
		rc = store_export_next(xs->x, &xs->s, err, sizeof(err));
		xs->have = rc == 1;
		xs->done = rc == 0;
		rc = rc > 0 ? STORE_OK : rc;
	}
	if (rc != STORE_OK) {
		xstream_free(xs);
		if (rc == STORE_ENOTFOUND)
			return respond_error(rq, 404, "no such host", rq->route.host, NULL);
		return respond_store_error(rq, rc, err);
	}
	struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, reader, xs,
								      xstream_free);
	if (!resp) {
		xstream_free(xs);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/x-ndjson");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	return respond_queue(rq, 200, resp);
}
