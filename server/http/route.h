/* route.h - maps a request path to an endpoint of docs/api.md, with the
 * host name taken out of /api/v1/hosts/{host}/... Independent of
 * libmicrohttpd; the path is already percent-decoded (http.c decodes it and
 * turns an encoded NUL or '/' into a 404 by leaving it encoded). */
#ifndef VMSCOPE_ROUTE_H
#define VMSCOPE_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "names.h"

enum route_id {
	ROUTE_NOT_FOUND = 0,	/* unknown /api path */
	ROUTE_HEALTHZ,
	ROUTE_METRICS,		/* GET /metrics (Prometheus) */
	ROUTE_SAMPLES,		/* POST /api/v1/samples */
	ROUTE_HOSTS,
	ROUTE_HOST,
	ROUTE_HOST_CGROUPS,
	ROUTE_HOST_METRICS,
	ROUTE_HOST_SERIES,
	ROUTE_HOST_SERIES_BATCH,	/* GET /api/v1/hosts/{host}/series_batch */
	ROUTE_HOST_SAMPLES,	/* GET /api/v1/hosts/{host}/samples (export, JSON lines) */
	ROUTE_ALERTS,
	ROUTE_FLEET,
	ROUTE_OVERRIDES,	/* GET, PUT /api/v1/overrides (detector overrides) */
	ROUTE_OVERRIDE,		/* DELETE /api/v1/overrides/{id} */
	ROUTE_COMPARE,		/* GET /api/v1/compare */
	ROUTE_SILENCES,		/* GET, POST /api/v1/silences */
	ROUTE_SILENCE,		/* DELETE /api/v1/silences/{id} */
	ROUTE_REGRESSION,	/* GET /api/v1/regression (the watch's last run) */
	ROUTE_REGRESSION_BASELINE,	/* GET, PUT /api/v1/regression/baseline */
	ROUTE_STATIC,		/* anything outside /api: a dashboard file */
};

struct route {
	enum route_id id;
	char host[HOST_NAME_MAXLEN + 1];	/* for ROUTE_HOST* */
	bool bad_host;		/* the {host} segment is not a valid host name */
	long long id_num;	/* ROUTE_OVERRIDE, ROUTE_SILENCE: the {id}; -1 when not a number (404) */
};

/* Fills r from path. A trailing slash on an /api path is ignored. Cannot fail. */
void route_match(const char *path, struct route *r);

/* The methods an endpoint answers, for 405's Allow header ("GET, HEAD"). */
const char *route_allow(enum route_id id);

/* True when method is one route_allow lists. */
/* (ROUTE_HOST also answers DELETE, ROUTE_OVERRIDES PUT: admin, admin.h.) */
bool route_method_ok(enum route_id id, const char *method);

/* Percent-decodes s in place (only %XX; '+' stays). An invalid escape, or
 * one that would give a NUL byte, is left as is so that validation refuses
 * it. Returns the new length. Used as libmicrohttpd's unescape callback. */
size_t route_unescape(char *s);

#endif
