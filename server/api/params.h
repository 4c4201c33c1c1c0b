/* params.h - validation of the REST API's query parameters (docs/api.md,
 * CONTRACT.md §3), independent of libmicrohttpd so it can be unit-tested.
 *
 * Values are read through a param_src (the HTTP layer looks them up in the
 * request). Every error message names the parameter ("limit: expected an
 * integer from 1 to 10000"); unknown parameters are ignored. Strings stored
 * in the query structs are borrowed from the source and live as long as the
 * request. */
#ifndef VMSCOPE_PARAMS_H
#define VMSCOPE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct param_src {
	/* Returns the value of name (NUL-terminated) or NULL when absent; *len
	 * receives its length in bytes, which differs from strlen when the
	 * value held an encoded NUL. */
	const char *(*get)(void *ctx, const char *name, size_t *len);
	void *ctx;
};

#define PARAMS_MAX_RANGE_MS (400LL * 86400 * 1000)	/* series: at most 400 days */

/* An integer in [min, max]; 0 or -1. */
int param_parse_int(const char *s, long min, long max, long *out);

/* GET /api/v1/alerts. Defaults: state all, limit 100, unbounded window. */
int params_alerts(const struct param_src *src, struct alert_query *q, char *err, size_t errlen);

/* GET /api/v1/hosts/{host}/series: metric (required), cgroup,
 * cgroup_version, since, until, points. now_ms is the default until. q->host is left alone. */
int params_series(const struct param_src *src, int64_t now_ms, struct series_query *q,
		  char *err, size_t errlen);

/* GET /api/v1/hosts/{host}/series_batch: metrics (required, a comma list
 * of up to SERIES_BATCH_MAX names, copied into q->namebuf), layout (points
 * or columns), then cgroup, since, until, points as params_series. q->host
 * is left alone. */
int params_series_batch(const struct param_src *src, int64_t now_ms, struct series_batch_query *q,
			char *err, size_t errlen);

/* GET /api/v1/hosts/{host}/metrics: optional cgroup into *cgroup (NULL
 * when absent) and cgroup_version into *version (1 or 2; 0 when absent). */
int params_metrics(const struct param_src *src, const char **cgroup, int *version, char *err, size_t errlen);

/* The most sparkline points GET /api/v1/fleet can give for a window (5-minute
 * rollup buckets over it). */
int params_fleet_max_points(int window_s);

/* GET /api/v1/fleet: window seconds (default 3600, 60..86400), points
 * (1..params_fleet_max_points(window), default that maximum). */
int params_fleet(const struct param_src *src, int *window_s, int *points, char *err, size_t errlen);

#endif
