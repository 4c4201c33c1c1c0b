/* respond.c - JSON answers and error bodies (see respond.h). */
#include "respond.h"
#include "log.h"
#include "metrics.h"
#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETRY_AFTER_DB_S 5

enum MHD_Result respond_queue(struct request *rq, unsigned status, struct MHD_Response *resp)
{
	enum MHD_Result r;

	if (!resp)
		return MHD_NO;
	/* on every answer, so that no page or JSON of this server can be
	 * framed (clickjacking of the dashboard's silence buttons), run
	 * another site's script or leak its URL (a ?token=) as a Referer */
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Content-Security-Policy", RESPOND_CSP);
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	r = MHD_queue_response(rq->conn, status, resp);
	MHD_destroy_response(resp);
	if (r == MHD_YES) {
		rq->status = status;
		rq->answered = true;
	}
	return r;
}

enum MHD_Result respond_json(struct request *rq, unsigned status, json_t *body)
{
	char *text;
	struct MHD_Response *resp;

	if (!body)
		return respond_error(rq, 500, "out of memory", NULL, NULL);
	text = json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(body);
	if (!text)
		return respond_error(rq, 500, "out of memory", NULL, NULL);
	size_t len = strlen(text);
	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	return respond_queue(rq, status, resp);
}

enum MHD_Result respond_json_text(struct request *rq, unsigned status, const char *text, size_t len)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	return respond_queue(rq, status, resp);
}

char *respond_sanitize(const char *s)
{
	char *copy = strdup(s);

	if (!copy)
		return NULL;
	if (!name_printable_utf8(copy, strlen(copy)))
		for (char *p = copy; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
				*p = '?';
	return copy;
}

/* Adds key: sanitize(value) to obj when value is set. */
static void set_str(json_t *obj, const char *key, const char *value)
{
	char *clean;

	if (!value || !*value)
		return;
	clean = respond_sanitize(value);
	if (clean)
		json_object_set_new(obj, key, json_string(clean));
	free(clean);
}

enum MHD_Result respond_error(struct request *rq, unsigned status, const char *error,
			      const char *detail, const char *hint)
{
	json_t *body = json_object();
	char *text = NULL;
	struct MHD_Response *resp;
	char num[24];

	if (body) {
		set_str(body, "error", error);
		set_str(body, "detail", detail);
		set_str(body, "hint", hint);
		text = json_dumps(body, JSON_COMPACT);
		json_decref(body);
	}
	if (!text) {
		static const char oom[] = "{\"error\":\"out of memory\"}";
		resp = MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)oom,
						       MHD_RESPMEM_PERSISTENT);
	} else {
		resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
		if (!resp)
			free(text);
	}
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (status == 405 && rq->allow)
		MHD_add_response_header(resp, "Allow", rq->allow);
	if (rq->retry_after > 0) {
		snprintf(num, sizeof(num), "%d", rq->retry_after);
		MHD_add_response_header(resp, "Retry-After", num);
	}
	if (status == 401 && rq->www_authenticate)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"vmscope\"");
	if (status >= 500) {
		char *shown = respond_sanitize(rq->path ? rq->path : "?");
		log_msg(status == 503 ? LOG_DEBUG : LOG_WARN, "%s %s: %u %s%s%s", rq->method,
			shown ? shown : "?", status, error, detail ? ": " : "", detail ? detail : "");
		free(shown);
	}
	return respond_queue(rq, status, resp);
}

enum MHD_Result respond_db_retry(struct request *rq, const char *error, const char *detail)
{
	metrics_db_error();
	rq->retry_after = RETRY_AFTER_DB_S;
	return respond_error(rq, 503, error, detail, "the server keeps retrying; retry the request later");
}

enum MHD_Result respond_unavailable(struct request *rq)
{
	return respond_db_retry(rq, "database unreachable", NULL);
}

enum MHD_Result respond_store_error(struct request *rq, int rc, const char *err)
{
	switch (rc) {
	case STORE_EUNAVAIL:
		return respond_db_retry(rq, "database unreachable", err);
	case STORE_EINVAL:
		return respond_error(rq, 400, err && *err ? err : "invalid request", NULL, NULL);
	case STORE_ENOTFOUND:
	case STORE_ENOMETRIC:
		return respond_error(rq, 404, err && *err ? err : "not found", NULL, NULL);
	default:
		metrics_db_error();
		return respond_error(rq, 500, "internal error", err, NULL);
	}
}
