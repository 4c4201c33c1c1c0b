/* http.c - libmicrohttpd daemon, routing, auth and request logging (see http.h).
 *
 * libmicrohttpd calls on_uri when a request line is in (struct request is
 * created there, with what only the raw request line shows: its length and
 * an encoded '/'), then on_request several times: once when the headers
 * are in (the request's checks run then, and everything but an upload is
 * answered right away or on the next call), then once per chunk of upload
 * data, then once with no data (the upload is processed then).
 * on_completed runs when the request is done, answered or not, and frees
 * it. */
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
#include "host_allow.h"
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

/* Requests whose request line or headers are larger get 414 / 431 from
 * here, as JSON, before libmicrohttpd's own limit (its memory pool of
 * HTTP_CONN_MEMORY per connection) answers them with its HTML page. */
#define HTTP_URL_MAX (8 * 1024)
#define HTTP_HEADERS_MAX (32 * 1024)
#define HTTP_CONN_MEMORY (64 * 1024)
/* The default --max-connections: the open-file limit less what the server
 * needs besides connections (an epoll descriptor per thread, the database
 * pool, files), at most this many (each connection may take up to
 * HTTP_CONN_MEMORY). */
#define HTTP_DEFAULT_CONN_CAP 16384
#define HTTP_FD_RESERVE 64

struct http_server {
	struct MHD_Daemon *d;
	struct app *app;
	struct host_allow hosts;	/* the Host header allow-list */
	struct tls_pem pem;	/* --tls-cert / --tls-key, kept while d runs */
	struct conn_watch *watch; /* request deadlines and the connection limit */
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

/* A request line is in: the request starts here, with what only the raw
 * line shows (libmicrohttpd decodes the path before on_request sees it). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct http_server *srv = cls;
	struct request *rq = calloc(1, sizeof(*rq));

	if (!rq)
		return NULL;
	rq->app = srv->app;
	rq->conn = conn;
	rq->t0_us = mono_us();
	size_t plen = strcspn(uri, "?");
	rq->raw_len = strlen(uri);
	rq->encoded_slash = memmem(uri, plen, "%2F", 3) || memmem(uri, plen, "%2f", 3);
	return rq;
}

/* The checks every request passes when its headers are in, before it is
 * routed. Returns true to go on; otherwise the answer is queued. */
static bool request_ok(struct http_server *srv, struct request *rq, const char *version)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(rq->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	const char *host = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Host");

	if (rq->raw_len > HTTP_URL_MAX) {
		respond_error(rq, 414, "request URI too long", NULL, "at most 8192 bytes");
		return false;
	}
	if (ci && ci->header_size > HTTP_HEADERS_MAX) {
		respond_error(rq, 431, "request headers too large", NULL, "at most 32768 bytes");
		return false;
	}
	if (!host && strcmp(version, MHD_HTTP_VERSION_1_0) != 0) {
		/* HTTP/1.1 requires Host (RFC 9112 3.2); only 1.0 may go without */
		respond_error(rq, 400, "missing Host header", NULL, "HTTP/1.1 requests carry a Host header");
		return false;
	}
	if (!host_allow_ok(&srv->hosts, host)) {
		char *shown = respond_sanitize(host);
		respond_error(rq, 421, "this server does not answer to this host name", shown,
			      srv->hosts.loopback ?
			      "a server on a loopback address answers localhost and loopback "
			      "addresses; add names with --allowed-hosts" :
			      "the names this server answers are set with --allowed-hosts");
		free(shown);
		return false;
	}
	if (rq->encoded_slash) {
		/* a %2F names no endpoint and no file: no path segment holds a '/' */
		respond_error(rq, 404, "no such endpoint", rq->path, "a path segment cannot hold %2F");
		return false;
	}
	return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct request *rq = *con_cls;

	if (!rq || !rq->method) {
		if (!rq && !(rq = on_uri(srv, "", conn)))
			return MHD_NO;
		rq->method = method;
		rq->path = strdup(url);
		*con_cls = rq;
		if (!rq->path)
			return MHD_NO;
		if (!request_ok(srv, rq, version))
			return rq->answered ? MHD_YES : MHD_NO;
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
	if (*upload_data_size == 0)
		conn_watch_request_received(conn);	/* whole: its deadline ends */
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
	const char *method = rq->method ? rq->method : "-";	/* refused by libmicrohttpd */
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		log_info("%s %s %u %.1fms", method, shown ? shown : "?", rq->status, ms);
	else
		log_info("%s %s %u %.1fms (connection ended early: %d)", method,
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

/* True for 127.0.0.0/8 and ::1. */
static bool addr_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return false;
}

/* The connection limit: --max-connections, or by default the open-file
 * limit less a reserve. The soft limit is raised to the hard one first
 * (as far as needed) so that a default systemd or shell limit of 1024
 * does not cap a server the operator allowed more. *mhd_limit gets the
 * bound given to libmicrohttpd, well above ours: ours is kept by closing a
 * waiting connection once a new one is accepted (conn_watch.c), and
 * libmicrohttpd divides its bound among its threads and refuses a
 * connection on a thread whose share is full, closing sockets included;
 * its bound only keeps the descriptors within the open-file limit. */
static unsigned conn_limit(const struct server_config *cfg, unsigned *mhd_limit)
{
	struct rlimit rl;
	rlim_t reserve = (rlim_t)cfg->threads + (rlim_t)cfg->pool + HTTP_FD_RESERVE;
	unsigned max = cfg->max_connections > 0 ? (unsigned)cfg->max_connections : HTTP_DEFAULT_CONN_CAP;
	rlim_t mhd = (rlim_t)max * 2 + (rlim_t)cfg->threads * 8;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < mhd + reserve) {
			rlim_t old = rl.rlim_cur;
			rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > mhd + reserve ?
				      mhd + reserve : rl.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
				rl.rlim_cur = old;
		}
		if (rl.rlim_cur != RLIM_INFINITY) {
			rlim_t avail = rl.rlim_cur > reserve + 64 ? rl.rlim_cur - reserve : 64;
			if (cfg->max_connections <= 0) {
				/* room for the connections being closed for new ones */
				max = (unsigned)(avail - avail / 8);
				if (max > HTTP_DEFAULT_CONN_CAP)
					max = HTTP_DEFAULT_CONN_CAP;
			} else if ((rlim_t)max > avail) {
				log_warn("--max-connections %u is more than the open-file limit allows (%llu "
					 "descriptors); raise it (ulimit -n, LimitNOFILE=)", max,
					 (unsigned long long)rl.rlim_cur);
			}
			if (mhd > avail)
				mhd = avail > max ? avail : max;
		}
	}
	*mhd_limit = (unsigned)mhd;
	return max;
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
	srv->app = app;
	host_allow_init(&srv->hosts, addr_is_loopback(&ss), cfg->allowed_hosts);
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
	unsigned mhd_limit, max_conn = conn_limit(cfg, &mhd_limit);
	srv->watch = conn_watch_start((unsigned)cfg->timeout_s, max_conn);
	if (!srv->watch) {
		snprintf(err, errlen, "could not start a thread");
		tls_pem_release(&srv->pem);
		free(srv);
		return NULL;
	}
	srv->d = MHD_start_daemon(
		flags, (uint16_t)port, NULL, NULL, on_request, srv,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)cfg->threads,
		MHD_OPTION_CONNECTION_LIMIT, mhd_limit,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)cfg->max_conn_per_addr,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
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
	log_info("at most %u connections%s%s", max_conn,
		 cfg->max_conn_per_addr > 0 ? ", per client address " : "",
		 cfg->max_conn_per_addr > 0 ? "limited" : "");
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
