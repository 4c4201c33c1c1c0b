/* route.c - request path to endpoint (see route.h). */
#include "route.h"

#include <stdlib.h>
#include <string.h>

#define HOSTS_PREFIX "/api/v1/hosts/"
#define OVERRIDES_PREFIX "/api/v1/overrides/"
#define SILENCES_PREFIX "/api/v1/silences/"

static bool seg_eq(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

void route_match(const char *path, struct route *r)
{
	size_t len = strlen(path);

	memset(r, 0, sizeof(*r));
	if (strcmp(path, "/healthz") == 0) {
		r->id = ROUTE_HEALTHZ;
		return;
	}
	if (strcmp(path, "/metrics") == 0) {
		r->id = ROUTE_METRICS;
		return;
	}
	if (strncmp(path, "/api/", 5) != 0 && strcmp(path, "/api") != 0) {
		r->id = ROUTE_STATIC;
		return;
	}
	if (len > 1 && path[len - 1] == '/')
		len--;
	if (seg_eq(path, len, "/api/v1/samples"))
		r->id = ROUTE_SAMPLES;
	else if (seg_eq(path, len, "/api/v1/hosts"))
		r->id = ROUTE_HOSTS;
	else if (seg_eq(path, len, "/api/v1/alerts"))
		r->id = ROUTE_ALERTS;
	else if (seg_eq(path, len, "/api/v1/fleet"))
		r->id = ROUTE_FLEET;
	else if (seg_eq(path, len, "/api/v1/overrides"))
		r->id = ROUTE_OVERRIDES;
	else if (len > strlen(OVERRIDES_PREFIX) &&
		 strncmp(path, OVERRIDES_PREFIX, strlen(OVERRIDES_PREFIX)) == 0) {
		const char *d = path + strlen(OVERRIDES_PREFIX);
		size_t dlen = len - strlen(OVERRIDES_PREFIX);
		r->id = ROUTE_OVERRIDE;
		r->id_num = -1;
		if (dlen <= 18 && strspn(d, "0123456789") == dlen)
			r->id_num = strtoll(d, NULL, 10);
	} else if (seg_eq(path, len, "/api/v1/silences")) {
		r->id = ROUTE_SILENCES;
	} else if (len > strlen(SILENCES_PREFIX) &&
		   strncmp(path, SILENCES_PREFIX, strlen(SILENCES_PREFIX)) == 0) {
		const char *d = path + strlen(SILENCES_PREFIX);
		size_t dlen = len - strlen(SILENCES_PREFIX);
		r->id = ROUTE_SILENCE;
		r->id_num = -1;
		if (dlen <= 18 && strspn(d, "0123456789") == dlen)
			r->id_num = strtoll(d, NULL, 10);
	}
	else if (seg_eq(path, len, "/api/v1/compare"))
		r->id = ROUTE_COMPARE;
	else if (seg_eq(path, len, "/api/v1/regression"))
		r->id = ROUTE_REGRESSION;
	else if (seg_eq(path, len, "/api/v1/regression/baseline"))
		r->id = ROUTE_REGRESSION_BASELINE;
	else if (len > strlen(HOSTS_PREFIX) && strncmp(path, HOSTS_PREFIX, strlen(HOSTS_PREFIX)) == 0) {
		const char *h = path + strlen(HOSTS_PREFIX);
		const char *end = path + len;
		const char *slash = memchr(h, '/', (size_t)(end - h));
		size_t hlen = (size_t)((slash ? slash : end) - h);

		if (!slash)
			r->id = ROUTE_HOST;
		else if (seg_eq(slash, (size_t)(end - slash), "/cgroups"))
			r->id = ROUTE_HOST_CGROUPS;
		else if (seg_eq(slash, (size_t)(end - slash), "/metrics"))
			r->id = ROUTE_HOST_METRICS;
		else if (seg_eq(slash, (size_t)(end - slash), "/series"))
			r->id = ROUTE_HOST_SERIES;
		else if (seg_eq(slash, (size_t)(end - slash), "/series_batch"))
			r->id = ROUTE_HOST_SERIES_BATCH;
		else if (seg_eq(slash, (size_t)(end - slash), "/samples"))
			r->id = ROUTE_HOST_SAMPLES;
		else
			return;	/* ROUTE_NOT_FOUND */
		if (hlen == 0 || hlen > HOST_NAME_MAXLEN || !name_host_valid(h, hlen)) {
			r->bad_host = true;
			return;
		}
		memcpy(r->host, h, hlen);
		r->host[hlen] = '\0';
	}
}

const char *route_allow(enum route_id id)
{
	switch (id) {
	case ROUTE_SAMPLES:
		return "POST";
	case ROUTE_HOST:
		return "GET, HEAD, DELETE";
	case ROUTE_OVERRIDES:
	case ROUTE_REGRESSION_BASELINE:
		return "GET, HEAD, PUT";
	case ROUTE_SILENCES:
		return "GET, HEAD, POST";
	case ROUTE_OVERRIDE:
	case ROUTE_SILENCE:
		return "DELETE";
	case ROUTE_NOT_FOUND:
		return "";
	default:
		return "GET, HEAD";
	}
}

bool route_method_ok(enum route_id id, const char *method)
{
	if (id == ROUTE_SAMPLES)
		return strcmp(method, "POST") == 0;
	if (id == ROUTE_OVERRIDE || id == ROUTE_SILENCE)
		return strcmp(method, "DELETE") == 0;
	if (id == ROUTE_HOST && strcmp(method, "DELETE") == 0)
		return true;
	if (id == ROUTE_SILENCES && strcmp(method, "POST") == 0)
		return true;
	if ((id == ROUTE_OVERRIDES || id == ROUTE_REGRESSION_BASELINE) && strcmp(method, "PUT") == 0)
		return true;
	return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t route_unescape(char *s)
{
	char *w = s;

	for (const char *p = s; *p; p++) {
		int hi, lo;
		if (*p == '%' && (hi = hexval(p[1])) >= 0 && (lo = hexval(p[2])) >= 0 &&
		    (hi | lo) != 0) {
			*w++ = (char)(hi * 16 + lo);
			p += 2;
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}
