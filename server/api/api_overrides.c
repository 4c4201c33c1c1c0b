/* api_overrides.c - the detector overrides endpoints (see api_overrides.h). */
#include "api_overrides.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "http.h"
#include "log.h"
#include "overrides_store.h"
#include "respond.h"
#include "store.h"

/* A pooled connection, or NULL after answering 503. */
static PGconn *conn_or_503(struct request *rq, struct store **st)
{
	PGconn *c;

	*st = app_store(rq->app);
	c = *st ? store_conn_get(*st) : NULL;
	if (!c)
		respond_unavailable(rq);
	return c;
}

static void conn_done(struct store *st, PGconn *c)
{
	store_conn_put(st, c, PQstatus(c) != CONNECTION_OK);
}

/* The stored set as the answer (GET, and after PUT). */
static enum MHD_Result answer_set(struct request *rq, struct store *st, PGconn *c)
{
	struct ovr_set set;
	char err[OVR_ERR_MAX + 64];

	if (ovr_store_load(c, &set, err, sizeof(err)) < 0) {
		bool broken = PQstatus(c) != CONNECTION_OK;
		store_conn_put(st, c, broken);
		return broken ? respond_unavailable(rq) : respond_error(rq, 500, err, NULL, NULL);
	}
	conn_done(st, c);
	json_t *out = ovr_set_to_json(&set);
	ovr_set_release(&set);
	return respond_json(rq, 200, out);
}

enum MHD_Result api_overrides_get(struct request *rq)
{
	struct store *st;
	PGconn *c = conn_or_503(rq, &st);

	return c ? answer_set(rq, st, c) : MHD_YES;
}

enum MHD_Result api_override_delete(struct request *rq)
{
	struct store *st;
	char err[OVR_ERR_MAX + 64];

	if (!admin_allowed(rq))
		return MHD_YES;
	if (rq->route.id_num < 0)
		return respond_error(rq, 404, "no such override", NULL,
				     "ids are the numbers GET /api/v1/overrides shows");
	PGconn *c = conn_or_503(rq, &st);
	if (!c)
		return MHD_YES;
	int rc = ovr_store_delete(c, rq->route.id_num, err, sizeof(err));
	bool broken = PQstatus(c) != CONNECTION_OK;
	store_conn_put(st, c, broken);
	if (rc < 0)
		return broken ? respond_unavailable(rq) : respond_error(rq, 500, err, NULL, NULL);
	if (rc == 0)
		return respond_error(rq, 404, "no such override", NULL,
				     "ids are the numbers GET /api/v1/overrides shows");
	log_info("override %lld deleted", rq->route.id_num);
	return respond_json(rq, 200, json_pack("{s:I}", "deleted", (json_int_t)rq->route.id_num));
}

enum MHD_Result api_overrides_put_begin(struct request *rq)
{
	const char *cl = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Content-Length");

	if (body_check_content_length(cl, API_OVERRIDES_MAX_BODY) != BODY_OK)
		return respond_error(rq, 413, "request body too large", NULL,
				     "overrides are at most 4 MiB of JSON");
	body_init(&rq->body, API_OVERRIDES_MAX_BODY);
	return MHD_YES;
}

enum MHD_Result api_overrides_put_finish(struct request *rq)
{
	struct ovr_set set;
	struct store *st;
	json_error_t jerr;
	char err[OVR_ERR_MAX + 64];

	if (!admin_allowed(rq))
		return MHD_YES;
	if (rq->body.too_big)
		return respond_error(rq, 413, "request body too large", NULL,
				     "overrides are at most 4 MiB of JSON");
	json_t *j = json_loadb(rq->body.buf ? rq->body.buf : "", rq->body.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		return respond_error(rq, 400, "could not parse JSON", jerr.text,
				     "send {\"overrides\": [...]} as GET /api/v1/overrides shows it");
	int rc = ovr_set_from_json(&set, j, err, sizeof(err));
	json_decref(j);
	if (rc < 0)
		return respond_error(rq, 400, err, NULL, "see docs/detectors.md \"Overrides\"");
	PGconn *c = conn_or_503(rq, &st);
	if (!c) {
		ovr_set_release(&set);
		return MHD_YES;
	}
	rc = ovr_store_replace(c, &set, err, sizeof(err));
	size_t n = set.n;
	ovr_set_release(&set);
	if (rc < 0) {
		bool broken = PQstatus(c) != CONNECTION_OK;
		store_conn_put(st, c, broken);
		return broken ? respond_unavailable(rq) : respond_error(rq, 500, err, NULL, NULL);
	}
	log_info("overrides replaced: %zu rule(s)", n);
	return answer_set(rq, st, c);
}
