/* admin.c - the admin token check (see admin.h). */
#include "admin.h"

#include "auth.h"
#include "respond.h"

bool admin_allowed(struct request *rq)
{
	const char *want = rq->app->cfg->admin_token;
	size_t len = 0;
	const char *tok = auth_bearer(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Authorization"),
				      &len);

	if (!want) {
		respond_error(rq, 403, "admin endpoints are off", NULL,
			      "start the server with --admin-token-file FILE to change overrides or "
			      "forget hosts");
		return false;
	}
	if (!tok) {
		rq->www_authenticate = true;
		respond_error(rq, 401, "missing admin token", NULL,
			      "send Authorization: Bearer ADMIN_TOKEN (the token of --admin-token-file)");
		return false;
	}
	if (!auth_token_equal(tok, len, want)) {
		respond_error(rq, 403, "not the admin token", NULL,
			      "this endpoint needs the token of --admin-token-file; ingest and read "
			      "tokens do not grant it");
		return false;
	}
	return true;
}
