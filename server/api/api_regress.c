/* api_regress.c - the kernel-regression watch's endpoints (see api_regress.h). */
#include "api_regress.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "log.h"
#include "names.h"
#include "regress_run.h"
#include "regress_store.h"
#include "respond.h"
#include "store.h"
#include "timeparse.h"

#define PUT_HINT "send {\"release\": \"6.1.0-18-amd64\"} to pin the baseline, {\"release\": null} to unpin"

static struct regress_settings settings(const struct request *rq)
{
	const struct server_config *cfg = rq->app->cfg;
	return (struct regress_settings){ .window_ms = (int64_t)cfg->regression_window_s * 1000,
					  .min_hosts = cfg->regression_min_hosts,
					  .stratify = cfg->regression_stratify };
}

/* A pooled connection, or NULL after answering 503. */
static PGconn *conn_or_503(struct request *rq, struct store **st)
{
	*st = app_store(rq->app);
	PGconn *c = *st ? store_conn_get(*st) : NULL;
	if (!c)
		respond_unavailable(rq);
	return c;
}

static enum MHD_Result done(struct request *rq, struct store *st, PGconn *c, int rc, const char *err, json_t *out)
{
	bool broken = PQstatus(c) != CONNECTION_OK;
	store_conn_put(st, c, broken);
	if (rc != STORE_OK) {
		json_decref(out);
		return broken || rc == STORE_EUNAVAIL ? respond_unavailable(rq) : respond_error(rq, 500, err, NULL, NULL);
	}
	return respond_json(rq, 200, out);
}

enum MHD_Result api_regression_get(struct request *rq)
{
	const struct server_config *cfg = rq->app->cfg;
	char err[512] = "";
	json_t *pin = NULL, *report = NULL, *out = NULL;
	struct store *st;
	PGconn *c = conn_or_503(rq, &st);

	if (!c)
		return MHD_YES;
	int rc = regress_store_read(c, &pin, &report, err, sizeof(err));
	if (rc == STORE_OK) {
		out = json_pack("{s:{s:i,s:i,s:i,s:o},s:o,s:o}",
				"settings", "every_s", cfg->regression_every_s, "window_s", cfg->regression_window_s,
				"min_hosts", cfg->regression_min_hosts,
				"stratify", cfg->regression_stratify ? json_string(cfg->regression_stratify) : json_null(),
				"pinned", pin, "last_run", report);
		if (!out) {
			snprintf(err, sizeof(err), "out of memory");
			rc = STORE_EINTERNAL;
		}
	}
	return done(rq, st, c, rc, err, out);
}

/* The baseline document (GET, and after PUT). */
static enum MHD_Result answer_baseline(struct request *rq, struct store *st, PGconn *c)
{
	struct regress_settings s = settings(rq);
	char err[512] = "";
	json_t *out = NULL;

	int rc = regress_baseline(st, c, &s, time_now_ms(), &out, err, sizeof(err));
	return done(rq, st, c, rc, err, out);
}

enum MHD_Result api_regression_baseline_get(struct request *rq)
{
	struct store *st;
	PGconn *c = conn_or_503(rq, &st);

	return c ? answer_baseline(rq, st, c) : MHD_YES;
}

enum MHD_Result api_regression_baseline_put_begin(struct request *rq)
{
	const char *cl = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Content-Length");

	if (body_check_content_length(cl, API_REGRESS_MAX_BODY) != BODY_OK)
		return respond_error(rq, 413, "request body too large", NULL, PUT_HINT);
	body_init(&rq->body, API_REGRESS_MAX_BODY);
	return MHD_YES;
}

enum MHD_Result api_regression_baseline_put_finish(struct request *rq)
{
	json_error_t jerr;
	char err[512] = "";
	struct store *st;

	if (!admin_allowed(rq))
		return MHD_YES;
	if (rq->body.too_big)
		return respond_error(rq, 413, "request body too large", NULL, PUT_HINT);
	json_t *j = json_loadb(rq->body.buf ? rq->body.buf : "", rq->body.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		return respond_error(rq, 400, "could not parse JSON", jerr.text, PUT_HINT);
	json_t *rel = json_object_get(j, "release");
	const char *name = json_string_value(rel);
	size_t len = json_string_length(rel);
	if (!json_is_object(j) || !rel || (!json_is_null(rel) && !name) ||
	    (name && (!len || len > REGRESS_MAX_RELEASE || strlen(name) != len || !name_printable_utf8(name, len)))) {
		json_decref(j);
		return respond_error(rq, 400, "release: expected a kernel release (1 to 256 printable "
				     "characters) or null", NULL, PUT_HINT);
	}
	PGconn *c = conn_or_503(rq, &st);
	if (!c) {
		json_decref(j);
		return MHD_YES;
	}
	int rc = regress_store_pin(c, name, "admin-token", err, sizeof(err));
	if (rc == STORE_OK)
		log_info("regression watch: baseline %s%s", name ? "pinned to " : "unpinned", name ? name : "");
	json_decref(j);
	if (rc != STORE_OK)
		return done(rq, st, c, rc, err, NULL);
	return answer_baseline(rq, st, c);
}
