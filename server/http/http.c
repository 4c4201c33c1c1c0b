/* http.c - libmicrohttpd daemon, routing, auth and request logging (see http.h).
 *
 * libmicrohttpd calls on_request several times per request: once when the
 * headers are in (we create struct request then and answer everything but
 * an ingest upload right away), then once per chunk of upload data, then
 * once with no data (the ingest is processed then). on_completed runs when
 * the request is done, answered or not, and frees it. */
#include "http.h"
#include "api_export.h"
#include "api_compare.h"
#include "api_fleet.h"
#include "api_forget.h"
#include "api_overrides.h"
#include "api_read.h"
#include "api_regress.h"
#include "api_silence.h"
#include "auth.h"
#include "conn_watch.h"
#include "ingest.h"
#include "log.h"
#include "metrics.h"
#include "respond.h"
#include "static.h"
#include "tls.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

struct http_server {
	struct MHD_Daemon *d;
	struct tls_pem pem;	/* --tls-cert / --tls-key, kept while d runs */
	struct conn_watch *watch; /* header deadlines (slowloris) */
};

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

bool http_read_allowed(struct request *rq)
{
	const char *want = rq->app->cfg->read_token;
	const char *tok;
	size_t len = 0;

	if (!want)
		return true;
	tok = auth_bearer(MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Authorization"), &len);
	if (!tok) {
		const char *q = NULL;
		if (MHD_lookup_connection_value_n(rq->conn, MHD_GET_ARGUMENT_KIND, "token", 5, &q,
						  &len) != MHD_YES)
			q = NULL;
		tok = q;
	}
	if (tok && auth_token_equal(tok, len, want))
		return true;
	rq->www_authenticate = true;
	respond_error(rq, 401, tok ? "wrong read token" : "missing read token", NULL,
		      "this server needs --read-token for reads: send Authorization: Bearer TOKEN "
		      "or ?token=TOKEN");
	return false;
}

/* Answers a request that has no upload to wait for. */
static enum MHD_Result dispatch(struct request *rq)
{
	enum route_id id = rq->route.id;

	if (id == ROUTE_NOT_FOUND)
		return respond_error(rq, 404, "no such endpoint", rq->path,
				     "see docs/api.md for the endpoints");
	if (!route_method_ok(id, rq->method)) {
		rq->allow = route_allow(id);
		return respond_error(rq, 405, "method not allowed", NULL, NULL);
	}
	if (id == ROUTE_HOST || id == ROUTE_HOST_CGROUPS || id == ROUTE_HOST_METRICS ||
	    id == ROUTE_HOST_SERIES || id == ROUTE_HOST_SERIES_BATCH || id == ROUTE_HOST_SAMPLES) {
		if (rq->route.bad_host)
			return respond_error(rq, 404, "no such host", NULL,
					     "host names are 1 to 253 characters of A-Za-z0-9._-");
	}
	switch (id) {
	case ROUTE_SILENCE:
		return api_silence_delete(rq);	/* a write: its own credential check */
	case ROUTE_HEALTHZ:
		return api_healthz(rq);
	case ROUTE_STATIC:
		return static_serve(rq);
	default:
		break;
	}
	/* admin endpoints check the admin token instead of the read token */
	if (id == ROUTE_HOST && strcmp(rq->method, "DELETE") == 0)
		return api_host_forget(rq);
	if (id == ROUTE_OVERRIDE)
		return api_override_delete(rq);
	if (!http_read_allowed(rq))
		return rq->answered ? MHD_YES : MHD_NO;
	switch (id) {
	case ROUTE_METRICS: return api_metrics(rq);
	case ROUTE_HOSTS: return api_hosts(rq);
	case ROUTE_HOST: return api_host(rq);
	case ROUTE_HOST_CGROUPS: return api_cgroups(rq);
	case ROUTE_HOST_METRICS: return api_host_metrics(rq);
	case ROUTE_HOST_SERIES: return api_series(rq);
	case ROUTE_HOST_SERIES_BATCH: return api_series_batch(rq);
	case ROUTE_HOST_SAMPLES: return api_export(rq);
	case ROUTE_ALERTS: return api_alerts(rq);
	case ROUTE_FLEET: return api_fleet(rq);
	case ROUTE_OVERRIDES: return api_overrides_get(rq);
	case ROUTE_COMPARE: return api_compare(rq);
	case ROUTE_SILENCES: return api_silences_get(rq);
	case ROUTE_REGRESSION: return api_regression_get(rq);
	case ROUTE_REGRESSION_BASELINE: return api_regression_baseline_get(rq);
	default:
		return respond_error(rq, 500, "internal error", "unrouted endpoint", NULL);
	}
}

enum MHD_Result http_upload_data(struct request *rq, const char *data, size_t len)
{
	int rc = body_append(&rq->body, data, len);

	if (rc == BODY_ENOMEM)
		return MHD_NO;
	if (rc == BODY_ETOOBIG) {
		rq->discarded += len;
		if (rq->discarded > rq->body.limit)
			return MHD_NO;	/* a chunked body far over the limit: cut off */
	}
	return MHD_YES;
}

/* The endpoints that take a request body: the first callback (headers
 * in), each chunk of the body, the end. */
struct upload {
	enum MHD_Result (*begin)(struct request *rq);
	enum MHD_Result (*data)(struct request *rq, const char *data, size_t len);
	enum MHD_Result (*finish)(struct request *rq);
};

static const struct upload *upload_of(const struct request *rq)
{
	static const struct upload samples = { ingest_begin, ingest_data, ingest_finish };
	static const struct upload overrides = { api_overrides_put_begin, http_upload_data, api_overrides_put_finish };
	static const struct upload silences = { api_silence_begin, api_silence_data, api_silence_finish };
	static const struct upload baseline = { api_regression_baseline_put_begin, http_upload_data,
						api_regression_baseline_put_finish };

	switch (rq->route.id) {
	case ROUTE_SAMPLES: return strcmp(rq->method, "POST") == 0 ? &samples : NULL;
	case ROUTE_OVERRIDES: return strcmp(rq->method, "PUT") == 0 ? &overrides : NULL;
	case ROUTE_SILENCES: return strcmp(rq->method, "POST") == 0 ? &silences : NULL;
	case ROUTE_REGRESSION_BASELINE: return strcmp(rq->method, "PUT") == 0 ? &baseline : NULL;
	default: return NULL;
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct app *app = cls;
	struct request *rq = *con_cls;

	(void)version;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		rq->app = app;
		rq->conn = conn;
		rq->method = method;
		rq->t0_us = mono_us();
		rq->path = strdup(url);
		*con_cls = rq;
		conn_watch_request_begins(conn);
		if (!rq->path)
			return MHD_NO;
		route_match(url, &rq->route);
		const struct upload *up = upload_of(rq);
		if (up)
			return up->begin(rq);
		/* A response queued on the first call, before libmicrohttpd has
		 * seen the (empty) request body end, makes it close the
		 * connection after the answer: every GET then cost a new TCP
		 * connection (a dashboard view makes several). GET and HEAD are
		 * answered on the next call instead, which keeps the connection
		 * alive. Other methods on read endpoints are refused at once. */
		if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) {
			rq->deferred = true;
			return MHD_YES;
		}
		return dispatch(rq);
	}
	if (rq->deferred) {
		if (*upload_data_size) {	/* a GET with a body: ignored */
			*upload_data_size = 0;
			return MHD_YES;
		}
		rq->deferred = false;
		return dispatch(rq);
	}
	if (rq->answered) {
		/* answered early: libmicrohttpd discards the rest of the upload */
		*upload_data_size = 0;
		return MHD_YES;
	}
	const struct upload *up = upload_of(rq);
	if (!up)
		return MHD_NO;	/* cannot happen: only uploads get here unanswered */
	if (*upload_data_size) {
		enum MHD_Result r = up->data(rq, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return r;
	}
	return up->finish(rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct request *rq = *con_cls;

	(void)cls;
	conn_watch_request_ends(conn);
	if (!rq)
		return;
	double ms = (double)(mono_us() - rq->t0_us) / 1000.0;
	if (rq->status)
		metrics_request(rq->status);
	/* the decoded path may hold control characters: never let a client
	 * write its own log lines */
	char *shown = rq->path ? respond_sanitize(rq->path) : NULL;
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		log_info("%s %s %u %.1fms", rq->method, shown ? shown : "?", rq->status, ms);
	else
		log_info("%s %s %u %.1fms (connection ended early: %d)", rq->method,
			 shown ? shown : "?", rq->status, ms, (int)toe);
	free(shown);
	body_release(&rq->body);
	free(rq->path);
	free(rq);
	*con_cls = NULL;
}

static size_t on_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return route_unescape(s);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	size_t n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	log_debug("libmicrohttpd: %s", line);
}

struct http_server *http_start(struct app *app, char *err, size_t errlen)
{
	const struct server_config *cfg = app->cfg;
	struct sockaddr_storage ss;
	char addr[64];
	unsigned port;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	struct http_server *srv;

	memset(&ss, 0, sizeof(ss));
	if (config_split_listen(cfg->listen, addr, sizeof(addr), &port) < 0) {
		snprintf(err, errlen, "--listen: expected ADDR:PORT, got \"%s\"", cfg->listen);
		return NULL;
	}
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		flags |= MHD_USE_IPv6;
	} else {
		/* a name such as localhost: its first address */
		struct addrinfo hints, *res = NULL;
		memset(&hints, 0, sizeof(hints));
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_flags = AI_PASSIVE;
		if (getaddrinfo(addr, NULL, &hints, &res) != 0 || !res ||
		    res->ai_addrlen > sizeof(ss)) {
			if (res)
				freeaddrinfo(res);
			snprintf(err, errlen, "--listen: could not resolve \"%s\"", addr);
			return NULL;
		}
		memcpy(&ss, res->ai_addr, res->ai_addrlen);
		freeaddrinfo(res);
		if (ss.ss_family == AF_INET6) {
			sin6->sin6_port = htons((uint16_t)port);
			flags |= MHD_USE_IPv6;
		} else {
			sin->sin_port = htons((uint16_t)port);
		}
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* HTTPS: the PEM text goes to libmicrohttpd's GnuTLS through an option
	 * array, which is empty (MHD_OPTION_END only) for plain HTTP */
	struct MHD_OptionItem tls_opts[3] = { { MHD_OPTION_END, 0, NULL } };
	if (cfg->tls_cert) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			snprintf(err, errlen, "--tls-cert: this libmicrohttpd was built without TLS");
			free(srv);
			return NULL;
		}
		if (tls_load(&srv->pem, cfg->tls_cert, cfg->tls_key, err, errlen) < 0) {
			free(srv);
			return NULL;
		}
		tls_opts[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, srv->pem.cert };
		tls_opts[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, srv->pem.key };
		tls_opts[2] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
		flags |= MHD_USE_TLS;
	}
	srv->watch = cfg->timeout_s > 0 ? conn_watch_start((unsigned)cfg->timeout_s) : NULL;
	if (cfg->timeout_s > 0 && !srv->watch) {
		snprintf(err, errlen, "could not start a thread");
		tls_pem_release(&srv->pem);
		free(srv);
		return NULL;
	}
	srv->d = MHD_start_daemon(
		flags, (uint16_t)port, NULL, NULL, on_request, app,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)cfg->threads,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)cfg->max_connections,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, app,
		MHD_OPTION_NOTIFY_CONNECTION, conn_watch_notify, srv->watch,
		MHD_OPTION_UNESCAPE_CALLBACK, on_unescape, NULL,
		MHD_OPTION_ARRAY, tls_opts,
		MHD_OPTION_END);
	if (!srv->d) {
		snprintf(err, errlen, cfg->tls_cert ?
			 "could not listen on %s (address in use, not local, or the TLS "
			 "certificate and key do not match / cannot be parsed)" :
			 "could not listen on %s (address in use or not local?)", cfg->listen);
		tls_pem_release(&srv->pem);
		conn_watch_stop(srv->watch);
		free(srv);
		return NULL;
	}
	return srv;
}

void http_stop(struct http_server *srv)
{
	if (!srv)
		return;
	MHD_stop_daemon(srv->d);
	tls_pem_release(&srv->pem);
	conn_watch_stop(srv->watch);
	free(srv);
}
