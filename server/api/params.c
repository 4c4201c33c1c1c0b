/* params.c - query parameter validation (see params.h). */
#include "params.h"
#include "errf.h"
#include "names.h"
#include "timeparse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIME_EXPECT "expected Unix seconds or an RFC 3339 time (2026-11-30T10:00:00Z)"

int param_parse_int(const char *s, long min, long max, long *out)
{
	char *end;

	if (!s || !*s || s[0] == ' ' || s[0] == '+' || strlen(s) > 20)
		return -1;
	errno = 0;
	long x = strtol(s, &end, 10);
	if (errno || end == s || *end || x < min || x > max)
		return -1;
	*out = x;
	return 0;
}

/* Looks name up; *v = NULL when absent. -1 (with err) when the value held
 * a NUL byte or is empty. */
static int get(const struct param_src *src, const char *name, const char **v, char *err,
	       size_t errlen)
{
	size_t len = 0;

	*v = src->get(src->ctx, name, &len);
	if (!*v)
		return 0;
	if (len != strlen(*v) || len == 0)
		return errf(err, errlen, "%s: expected a value", name);
	return 0;
}

static int get_host(const struct param_src *src, const char **v, char *err, size_t errlen)
{
	if (get(src, "host", v, err, errlen) < 0)
		return -1;
	if (*v && !name_host_valid(*v, strlen(*v)))
		return errf(err, errlen, "host: expected 1 to 253 characters of A-Za-z0-9._-");
	return 0;
}

static int get_cgroup(const struct param_src *src, const char **v, char *err, size_t errlen)
{
	if (get(src, "cgroup", v, err, errlen) < 0)
		return -1;
	if (*v && !name_cgroup_path_valid(*v, strlen(*v)))
		return errf(err, errlen, "cgroup: expected a cgroup path (printable UTF-8 "
			    "starting with /, no . or .. components, at most %d bytes)",
			    CGROUP_PATH_MAXLEN);
	return 0;
}

static int get_time(const struct param_src *src, const char *name, int64_t *ms, bool *given,
		    char *err, size_t errlen)
{
	const char *v;

	*given = false;
	if (get(src, name, &v, err, errlen) < 0)
		return -1;
	if (!v)
		return 0;
	if (time_parse(v, ms) < 0)
		return errf(err, errlen, "%s: " TIME_EXPECT, name);
	*given = true;
	return 0;
}

static int get_int(const struct param_src *src, const char *name, long min, long max,
		   long *out, char *err, size_t errlen)
{
	const char *v;

	if (get(src, name, &v, err, errlen) < 0)
		return -1;
	if (v && param_parse_int(v, min, max, out) < 0)
		return errf(err, errlen, "%s: expected an integer from %ld to %ld", name, min, max);
	return 0;
}

int params_alerts(const struct param_src *src, struct alert_query *q, char *err, size_t errlen)
{
	const char *kind, *state;
	long limit = 100;
	bool given;

	memset(q, 0, sizeof(*q));
	q->state = "all";
	q->since_ms = INT64_MIN;
	q->until_ms = INT64_MAX;
	if (get_host(src, &q->host, err, errlen) < 0 || get_cgroup(src, &q->cgroup, err, errlen) < 0)
		return -1;
	if (get(src, "kind", &kind, err, errlen) < 0)
		return -1;
	if (kind) {
		size_t n = strlen(kind);
		bool ok = n <= 64;
		for (size_t i = 0; ok && i < n; i++)
			ok = (kind[i] >= 'a' && kind[i] <= 'z') || kind[i] == '_' ||
			     (kind[i] >= '0' && kind[i] <= '9');
		if (!ok)
			return errf(err, errlen, "kind: expected an alert kind such as thrash, "
				    "writeback_storm or swap_imbalance");
		q->kind = kind;
	}
	if (get(src, "state", &state, err, errlen) < 0)
		return -1;
	if (state) {
		/* one of open, resolved, all, or a comma list of them ("open,resolved") */
		bool open = false, resolved = false;
		const char *p = state;
		while (*p) {
			size_t n = strcspn(p, ",");
			if (n == 4 && strncmp(p, "open", 4) == 0)
				open = true;
			else if (n == 8 && strncmp(p, "resolved", 8) == 0)
				resolved = true;
			else if (n == 3 && strncmp(p, "all", 3) == 0)
				open = resolved = true;
			else
				return errf(err, errlen, "state: expected open, resolved or all");
			p += n;
			if (*p == ',' && *++p == '\0')
				return errf(err, errlen, "state: expected open, resolved or all");
		}
		q->state = open && resolved ? "all" : open ? "open" : "resolved";
	}
	if (get_time(src, "since", &q->since_ms, &given, err, errlen) < 0 ||
	    get_time(src, "until", &q->until_ms, &given, err, errlen) < 0)
		return -1;
	if (q->since_ms != INT64_MIN && q->until_ms != INT64_MAX && q->until_ms < q->since_ms)
		return errf(err, errlen, "until: must not be before since");
	if (get_int(src, "limit", 1, 10000, &limit, err, errlen) < 0)
		return -1;
	q->limit = (int)limit;
	return 0;
}

/* cgroup and cgroup_version (1 or 2, only with cgroup; 0 when absent:
 * both hierarchies of a hybrid machine, merged by name). */
static int get_cgroup_version(const struct param_src *src, const char **cgroup, int *version, char *err,
			      size_t errlen)
{
	long v = 0;

	if (get_cgroup(src, cgroup, err, errlen) < 0 || get_int(src, "cgroup_version", 1, 2, &v, err, errlen) < 0)
		return -1;
	if (v && !*cgroup)
		return errf(err, errlen, "cgroup_version: only with cgroup");
	*version = (int)v;
	return 0;
}

/* The window part shared by series and series_batch: cgroup,
 * cgroup_version, since, until (default: the hour before now_ms), points. */
static int series_window(const struct param_src *src, int64_t now_ms, const char **cgroup, int *version,
			 int64_t *since_ms, int64_t *until_ms, int *pts, char *err, size_t errlen)
{
	bool has_since, has_until;
	long points = 0;

	if (get_cgroup_version(src, cgroup, version, err, errlen) < 0)
		return -1;
	if (get_time(src, "until", until_ms, &has_until, err, errlen) < 0 ||
	    get_time(src, "since", since_ms, &has_since, err, errlen) < 0)
		return -1;
	if (!has_until)
		*until_ms = now_ms;
	if (!has_since)
		*since_ms = *until_ms - 3600 * 1000;
	if (*until_ms <= *since_ms)
		return errf(err, errlen, "until: must be after since");
	if (*until_ms - *since_ms > PARAMS_MAX_RANGE_MS)
		return errf(err, errlen, "since: the range may span at most 400 days");
	if (get_int(src, "points", 0, 10000, &points, err, errlen) < 0)
		return -1;
	*pts = (int)points;
	return 0;
}

int params_series(const struct param_src *src, int64_t now_ms, struct series_query *q,
		  char *err, size_t errlen)
{
	q->cgroup = NULL;
	q->metric = NULL;
	if (get(src, "metric", &q->metric, err, errlen) < 0)
		return -1;
	if (!q->metric)
		return errf(err, errlen, "metric: missing (required), e.g. metric=vmstat.pgscan_kswapd");
	/* a flattened name: prefixes and kernel names joined by dots */
	if (!name_metric_valid(q->metric, strlen(q->metric)))
		return errf(err, errlen, "metric: expected a metric name such as vmstat.pgscan_kswapd");
	return series_window(src, now_ms, &q->cgroup, &q->cgroup_version, &q->since_ms, &q->until_ms, &q->points,
			     err, errlen);
}

int params_series_batch(const struct param_src *src, int64_t now_ms, struct series_batch_query *q,
			char *err, size_t errlen)
{
	const char *list;

	q->cgroup = NULL;
	q->nmetrics = 0;
	if (get(src, "metrics", &list, err, errlen) < 0)
		return -1;
	if (!list)
		return errf(err, errlen, "metrics: missing (required), a comma list such as "
			    "metrics=vmstat.pgscan_kswapd,vmstat.pgsteal_kswapd");
	size_t len = strlen(list);
	if (len >= sizeof(q->namebuf))
		return errf(err, errlen, "metrics: at most %d names", SERIES_BATCH_MAX);
	memcpy(q->namebuf, list, len + 1);
	/* metric names never hold a comma (name_metric_valid) */
	for (char *p = q->namebuf;;) {
		char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (!name_metric_valid(p, n))
			return errf(err, errlen, "metrics: expected metric names such as vmstat.pgscan_kswapd, "
				    "separated by commas");
		if (q->nmetrics == SERIES_BATCH_MAX)
			return errf(err, errlen, "metrics: at most %d names", SERIES_BATCH_MAX);
		q->metrics[q->nmetrics++] = p;
		if (!comma)
			break;
		*comma = '\0';
		p = comma + 1;
	}
	const char *layout;
	if (get(src, "layout", &layout, err, errlen) < 0)
		return -1;
	q->columns = layout && strcmp(layout, "columns") == 0;
	if (layout && !q->columns && strcmp(layout, "points") != 0)
		return errf(err, errlen, "layout: expected points or columns");
	return series_window(src, now_ms, &q->cgroup, &q->cgroup_version, &q->since_ms, &q->until_ms, &q->points,
			     err, errlen);
}

int params_metrics(const struct param_src *src, const char **cgroup, int *version, char *err, size_t errlen)
{
	return get_cgroup_version(src, cgroup, version, err, errlen);
}

int params_fleet_max_points(int window_s)
{
	/* buckets start at multiples of 5 minutes, the first at or before
	 * now - window: ceil(window / 300) of them, one more when now is
	 * past a multiple */
	return (window_s + 299) / 300 + 1;
}

int params_fleet(const struct param_src *src, int *window_s, int *points, char *err, size_t errlen)
{
	long w = 3600, p;

	if (get_int(src, "window", 60, 86400, &w, err, errlen) < 0)
		return -1;
	int max = params_fleet_max_points((int)w);
	p = max;
	if (get_int(src, "points", 1, max, &p, err, errlen) < 0)
		return errf(err, errlen, "points: expected 1 to %d for window=%ld (the sparklines are "
			    "5-minute rollups: at most one point per 5 minutes of the window)", max, w);
	*window_s = (int)w;
	*points = (int)p;
	return 0;
}
