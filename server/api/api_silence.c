/* api_silence.c - the silences endpoints (see api_silence.h). */
#include "api_silence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "auth.h"
#include "respond.h"
#include "silence.h"
#include "store.h"
#include "timeparse.h"
#include "tokens.h"

#define SILENCE_HINT "see docs/api.md: {\"host\", \"cgroup\", \"kind\", \"subject\", \"duration_s\" or " \
	"\"until\", \"comment\"}; a host or a kind is required"

bool api_write_allowed(struct request *rq, const char **who)
{
	const struct server_config *cfg = rq->app->cfg;
	size_t len = 0;
	/* a header only: a token in the URL of a write would end up in logs */
	const char *tok = auth_bearer(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
								  "Authorization"), &len);

	if (who)
		*who = cfg->admin_token ? "admin-token" : "read-token";
	if (!cfg->admin_token && !cfg->read_token) {
		respond_error(rq, 403, "silences cannot be changed on this server", NULL,
			      "changing silences needs a token: start the server with --admin-token-file "
			      "FILE (make run makes var/admin.token) or --read-token-file FILE");
		return false;
	}
	/* whatever else it may be, an ingest token never writes (an agent's
	 * token is on every machine) */
	if (tok && tokens_check(rq->app->tokens, tok, len, time_now_ms()) >= 0) {
		respond_error(rq, 403, "an ingest token cannot change silences", NULL,
			      cfg->admin_token ? "use the admin token (--admin-token-file)" :
			      "use the read token (--read-token-file)");
		return false;
	}
	if (cfg->admin_token)
		return admin_allowed(rq);
	if (tok && auth_token_equal(tok, len, cfg->read_token))
		return true;
	if (!tok) {
		rq->www_authenticate = true;
		respond_error(rq, 401, "missing token", NULL,
			      "silences are changed with the --read-token (or the admin token when the "
			      "server has --admin-token-file): send Authorization: Bearer TOKEN");
	} else {
		respond_error(rq, 403, "this token may not change silences", NULL,
			      "use the read token (--read-token-file)");
	}
	return false;
}

/* A pooled connection or a 503 answered; NULL then. */
static PGconn *conn_or_503(struct request *rq, struct store **st)
{
	*st = app_store(rq->app);
	PGconn *c = *st ? store_conn_get(*st) : NULL;
	if (!c)
		respond_unavailable(rq);
	return c;
}

static enum MHD_Result db_error(struct request *rq, struct store *st, PGconn *c, const char *err)
{
	bool broken = PQstatus(c) != CONNECTION_OK;
	store_conn_put(st, c, broken);
	if (broken)
		return respond_unavailable(rq);
	return respond_error(rq, 500, "database error", err, NULL);
}

enum MHD_Result api_silences_get(struct request *rq)
{
	const char *all = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "all");
	bool want_all = all && (strcmp(all, "1") == 0 || strcmp(all, "true") == 0);
	char err[256] = "";
	json_t *out = NULL;
	struct store *st;

	if (all && !want_all && strcmp(all, "0") != 0 && strcmp(all, "false") != 0)
		return respond_error(rq, 400, "all: expected 1 or 0", NULL, NULL);
	PGconn *c = conn_or_503(rq, &st);
	if (!c)
		return rq->answered ? MHD_YES : MHD_NO;
	if (silence_list(c, want_all, &out, err, sizeof(err)) < 0)
		return db_error(rq, st, c, err);
	store_conn_put(st, c, false);
	return respond_json(rq, 200, out);
}

enum MHD_Result api_silence_begin(struct request *rq)
{
	const char *ct = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Content-Type");

	if (!api_write_allowed(rq, NULL))
		return rq->answered ? MHD_YES : MHD_NO;
	if (!ct || strncasecmp(ct, "application/json", 16) != 0)
		return respond_error(rq, 415, "expected Content-Type: application/json", NULL, NULL);
	if (body_check_content_length(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
								  "Content-Length"), SILENCE_MAX_BODY) != BODY_OK)
		return respond_error(rq, 413, "request body too large", NULL,
				     "a silence is a small JSON object (at most 64 KiB)");
	body_init(&rq->body, SILENCE_MAX_BODY);
	return MHD_YES;
}

enum MHD_Result api_silence_data(struct request *rq, const char *data, size_t len)
{
	int rc = body_append(&rq->body, data, len);

	if (rc == BODY_ETOOBIG)
		return respond_error(rq, 413, "request body too large", NULL,
				     "a silence is a small JSON object (at most 64 KiB)");
	if (rc != BODY_OK)
		return respond_error(rq, 500, "out of memory", NULL, NULL);
	return MHD_YES;
}

enum MHD_Result api_silence_finish(struct request *rq)
{
	struct silence_req sr;
	json_error_t jerr;
	char err[256] = "";
	const char *who = NULL;
	json_t *out = NULL;
	struct store *st;

	api_write_allowed(rq, &who);	/* checked in begin; this only names the credential */
	json_t *body = json_loadb(rq->body.buf ? rq->body.buf : "", rq->body.len, JSON_REJECT_DUPLICATES,
				  &jerr);
	if (!body)
		return respond_error(rq, 400, "could not parse the body as JSON", jerr.text,
				     SILENCE_HINT);
	if (silence_parse(body, time_now_ms(), &sr, err, sizeof(err)) < 0) {
		json_decref(body);
		return respond_error(rq, 400, err, NULL,
				     SILENCE_HINT);
	}
	if (!sr.created_by)
		sr.created_by = who;
	PGconn *c = conn_or_503(rq, &st);
	if (!c) {
		json_decref(body);
		return rq->answered ? MHD_YES : MHD_NO;
	}
	int rc = silence_create(c, &sr, &out, err, sizeof(err));
	json_decref(body);
	if (rc < 0)
		return db_error(rq, st, c, err);
	store_conn_put(st, c, false);
	return respond_json(rq, 201, out);
}

enum MHD_Result api_silence_delete(struct request *rq)
{
	char err[256] = "";
	struct store *st;

	if (!api_write_allowed(rq, NULL))
		return rq->answered ? MHD_YES : MHD_NO;
	if (rq->route.id_num <= 0)
		return respond_error(rq, 404, "no such silence", NULL, "ids are positive integers");
	PGconn *c = conn_or_503(rq, &st);
	if (!c)
		return rq->answered ? MHD_YES : MHD_NO;
	int n = silence_end(c, (int64_t)rq->route.id_num, err, sizeof(err));
	if (n < 0)
		return db_error(rq, st, c, err);
	store_conn_put(st, c, false);
	if (n == 0)
		return respond_error(rq, 404, "no such active silence", NULL,
				     "GET /api/v1/silences lists the active ones");
	return respond_json(rq, 200, json_pack("{s:I,s:b}", "id", (json_int_t)rq->route.id_num,
					       "ended", 1));
}
