/* api_fleet.c - GET /api/v1/fleet (see api_fleet.h): hosts, open and
 * recently ended alerts and every host's sparklines from the 5-minute
 * rollups: four queries
 * whatever the fleet size (store_fleet_sparks), written out without a
 * JSON tree for the sparklines. */
#include "api_fleet.h"
#include "api_read.h"
#include "params.h"
#include "respond.h"
#include "store.h"
#include "timeparse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bucket values by ts: sums[bucket] += v over a series; `seen` counts
 * non-null contributions. Keys are the ts printed to the millisecond. */
static void accumulate(json_t *acc, const json_t *pts, int slot)
{
	size_t i;
	const json_t *p;
	char key[40];

	if (!pts)
		return;
	json_array_foreach((json_t *)pts, i, p) {
		const json_t *ts = json_array_get(p, 0), *v = json_array_get(p, 1);
		if (!json_is_number(ts) || !json_is_number(v))
			continue;
		snprintf(key, sizeof(key), "%.3f", json_number_value(ts));
		json_t *cell = json_object_get(acc, key);
		if (!cell) {
			cell = json_pack("[f,f,f]", json_number_value(ts), 0.0, 0.0);
			if (!cell || json_object_set_new(acc, key, cell) < 0)
				continue;
		}
		json_t *slotv = json_array_get(cell, (size_t)slot);
		json_real_set(slotv, json_real_value(slotv) + json_number_value(v));
	}
}

static int by_ts(const void *a, const void *b)
{
	double x = json_number_value(json_array_get(*(json_t *const *)a, 0));
	double y = json_number_value(json_array_get(*(json_t *const *)b, 0));
	return (x > y) - (x < y);
}

json_t *fleet_efficiency(const json_t *steal_k, const json_t *steal_d, const json_t *scan_k,
			 const json_t *scan_d)
{
	json_t *acc = json_object(), *out = json_array();
	const char *key;
	json_t *cell;
	size_t n = 0;

	if (!acc || !out) {
		json_decref(acc);
		json_decref(out);
		return NULL;
	}
	accumulate(acc, steal_k, 1);
	accumulate(acc, steal_d, 1);
	accumulate(acc, scan_k, 2);
	accumulate(acc, scan_d, 2);
	json_t **rows = calloc(json_object_size(acc) + 1, sizeof(*rows));
	if (!rows) {
		json_decref(acc);
		json_decref(out);
		return NULL;
	}
	json_object_foreach(acc, key, cell) {
		double steal = json_real_value(json_array_get(cell, 1));
		double scan = json_real_value(json_array_get(cell, 2));
		json_t *v;
		if (scan > 0) {
			double e = steal / scan;
			v = json_real(e < 0 ? 0 : e > 1 ? 1 : e);
		} else {
			v = json_null();
		}
		rows[n++] = json_pack("[Oo]", json_array_get(cell, 0), v);
	}
	qsort(rows, n, sizeof(*rows), by_ts);
	for (size_t i = 0; i < n; i++)
		if (rows[i])
			json_array_append_new(out, rows[i]);
	free(rows);
	json_decref(acc);
	return out;
}

/* The answer is written straight into one buffer: per host the small
 * metadata object through json_dumpb, the sparklines (1,000 hosts x 5 x
 * buckets numbers) as text with no JSON object per point. Building them
 * as jansson arrays of [ts, v] took most of a second for 1,000 hosts. */
#define FLEET_MAX_ANSWER (64u << 20)

struct out {
	char *p;	/* owned */
	size_t len, cap;
	int bad;	/* out of memory or over FLEET_MAX_ANSWER: answer 500 */
};

static char *out_reserve(struct out *o, size_t n)
{
	if (o->bad)
		return NULL;
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap : 65536;
		while (cap < o->len + n)
			cap *= 2;
		char *p = cap <= FLEET_MAX_ANSWER ? realloc(o->p, cap) : NULL;
		if (!p) {
			o->bad = 1;
			return NULL;
		}
		o->p = p;
		o->cap = cap;
	}
	return o->p + o->len;
}

static void out_put(struct out *o, const char *s, size_t n)
{
	char *d = out_reserve(o, n);
	if (d) {
		memcpy(d, s, n);
		o->len += n;
	}
}

static void out_lit(struct out *o, const char *s)
{
	out_put(o, s, strlen(s));
}

/* A number as JSON, 5 significant digits (sparklines, not data export);
 * null for a value JSON cannot hold. */
static void out_num(struct out *o, double v)
{
	char *d = out_reserve(o, 32);
	if (!d)
		return;
	int n = isfinite(v) ? snprintf(d, 32, "%.5g", v) : snprintf(d, 32, "null");
	o->len += (size_t)n;
}

/* The compact serialisation of j, dumped in place (grown and retried
 * when it does not fit). */
static void out_json(struct out *o, const json_t *j)
{
	size_t avail = o->cap - o->len, need;
	if (o->bad)
		return;
	need = json_dumpb(j, o->p ? o->p + o->len : NULL, o->p ? avail : 0, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
	if (need == 0) {
		o->bad = 1;
		return;
	}
	if (need > avail) {
		if (!out_reserve(o, need))
			return;
		need = json_dumpb(j, o->p + o->len, need, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
	}
	o->len += need;
}

/* Bucket k's start in Unix seconds (buckets start on whole seconds). */
static void out_ts(struct out *o, const struct fleet_sparks *fs, int k)
{
	char *d = out_reserve(o, 24);
	if (d)
		o->len += (size_t)snprintf(d, 24, "%lld", (long long)((fs->since_ms + (int64_t)k * fs->step_ms) / 1000));
}

/* Host h's "spark" object (h < 0: no rollups, empty arrays). columns: one
 * value per bucket (null for none), else [ts, v] for buckets with samples. */
static void out_spark(struct out *o, const struct fleet_sparks *fs, int h, bool columns)
{
	out_lit(o, "{");
	for (int s = 0; s < FLEET_NSPARK; s++) {
		out_lit(o, s ? ",\"" : "\"");
		out_lit(o, fleet_spark_name[s]);
		out_lit(o, "\":[");
		if (h >= 0) {
			size_t base = ((size_t)h * FLEET_NSPARK + (size_t)s) * (size_t)fs->nb;
			bool first = true;
			for (int k = 0; k < fs->nb; k++) {
				uint8_t st = fs->state[base + (size_t)k];
				if (!columns && st == FLEET_ABSENT)
					continue;
				if (!first)
					out_lit(o, ",");
				first = false;
				if (!columns) {
					out_lit(o, "[");
					out_ts(o, fs, k);
					out_lit(o, ",");
				}
				if (st == FLEET_VALUE)
					out_num(o, fs->v[base + (size_t)k]);
				else
					out_lit(o, "null");
				if (!columns)
					out_lit(o, "]");
			}
		}
		out_lit(o, "]");
	}
	out_lit(o, "}");
}

/* An alert time field of a store_alerts object as Unix seconds (null
 * when absent or unreadable). */
static json_t *ts_of(const json_t *a, const char *field)
{
	const char *s = json_string_value(json_object_get(a, field));
	int64_t ms;

	if (!s || time_parse(s, &ms) < 0)
		return json_null();
	return json_real((double)ms / 1000.0);
}

/* The fleet's short form of an alert: what the dashboard's chip shows
 * (kind, cgroup, since when) and its tooltip (the summary). */
static json_t *alert_brief(const json_t *a, bool resolved)
{
	json_t *o = json_pack("{s:O?,s:O?,s:O?,s:O?,s:o,s:O?}",
			      "id", json_object_get(a, "id"),
			      "kind", json_object_get(a, "kind"),
			      "severity", json_object_get(a, "severity"),
			      "cgroup", json_object_get(a, "cgroup"),
			      "started_at_ts", ts_of(a, "started_at"),
			      "summary", json_object_get(a, "summary"));
	if (o && resolved && json_object_set_new(o, "ended_at_ts", ts_of(a, "ended_at")) < 0) {
		json_decref(o);
		o = NULL;
	}
	/* an open alert a silence holds back: "somebody is on it" */
	if (o && !resolved && json_is_true(json_object_get(a, "silenced")) &&
	    json_object_set_new(o, "silenced", json_true()) < 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/* One host's fleet entry (without its sparklines) from its store_hosts
 * object, its open alerts and the alerts that ended within the window
 * (arrays, or NULL for none). */
static json_t *host_entry(const json_t *h, const json_t *alerts, const json_t *ended, int64_t now_ms)
{
	json_t *open = json_array(), *recent = json_array();
	const char *state = "ok";
	size_t i;
	const json_t *a;

	json_array_foreach((json_t *)alerts, i, a) {
		const char *sev = json_string_value(json_object_get(a, "severity"));
		if (sev && strcmp(sev, "critical") == 0)
			state = "critical";
		else if (sev && strcmp(sev, "warning") == 0 && strcmp(state, "ok") == 0)
			state = "warning";
		json_array_append_new(open, alert_brief(a, false));
	}
	json_array_foreach((json_t *)ended, i, a)
		json_array_append_new(recent, alert_brief(a, true));
	double last = json_number_value(json_object_get(h, "last_seen_ts"));
	double interval = json_number_value(json_object_get(h, "interval_s"));
	double stale_after = 3 * interval > 60 ? 3 * interval : 60;
	/* a host's clock known to be off (clock_skew): its newest sample is
	 * as old as it looks on the server's clock, offset_s later */
	const json_t *clock = json_object_get(h, "clock");
	double offset = json_number_value(json_object_get(clock, "offset_s"));
	bool stale = !json_is_number(json_object_get(h, "last_seen_ts")) ||
		     (double)now_ms / 1000.0 - (last + offset) > stale_after;
	json_t *e = json_pack("{s:O?,s:s,s:O?,s:O?,s:b,s:O?,s:O?,s:o,s:o}",
			      "host", json_object_get(h, "host"),
			      "state", state,
			      "last_seen", json_object_get(h, "last_seen"),
			      "last_seen_ts", json_object_get(h, "last_seen_ts"),
			      "stale", stale,
			      "kernel", json_object_get(h, "kernel"),
			      "labels", json_object_get(h, "labels"),
			      "open_alerts", open,
			      "resolved_alerts", recent);
	if (e && json_is_object(clock))
		json_object_set(e, "clock", (json_t *)clock);
	return e;
}

/* {host: [alert, ...]} of the open alerts (borrowed alert objects). */
static json_t *alerts_by_host(const json_t *alerts)
{
	json_t *by = json_object();
	size_t i;
	json_t *a;

	json_array_foreach((json_t *)alerts, i, a) {
		const char *host = json_string_value(json_object_get(a, "host"));
		if (!by || !host)
			continue;
		json_t *list = json_object_get(by, host);
		if (!list && (list = json_array()) && json_object_set_new(by, host, list) < 0)
			list = NULL;
		if (list)
			json_array_append(list, a);
	}
	return by;
}

/* The sparklines' buckets: 5-minute rollups, so the step is a multiple of
 * 5 minutes (at least window / points) and since is aligned to 5 minutes;
 * at most `points` buckets cover [now - window, now]. */
static void fleet_range(int64_t now, int window_s, int points, int64_t *since, int64_t *step)
{
	const int64_t r = 300000;
	int64_t from = now - (int64_t)window_s * 1000;
	int64_t st = ((int64_t)window_s * 1000 + points - 1) / points;

	st = (st + r - 1) / r * r;
	*since = from / r * r;
	while ((now - *since) / st + 1 > points)
		st += r;
	*step = st;
}

/* Sends the answer in o (taking its buffer). */
static enum MHD_Result send_out(struct request *rq, struct out *o)
{
	if (o->bad) {
		free(o->p);
		return respond_error(rq, 500, "out of memory", NULL, NULL);
	}
	struct MHD_Response *resp = MHD_create_response_from_buffer(o->len, o->p, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(o->p);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	return respond_queue(rq, 200, resp);
}

enum MHD_Result api_fleet(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct param_src src = api_params(rq);
	int window_s, points, rc;
	json_t *hosts = NULL, *alerts = NULL, *ended = NULL, *by = NULL, *by_ended = NULL;
	struct fleet_sparks fs;
	char err[256] = "", now_s[40];
	int64_t now = time_now_ms(), since, step;
	size_t i, len = 0;
	const json_t *h;
	struct out o = { 0 };

	if (params_fleet(&src, &window_s, &points, err, sizeof(err)) < 0)
		return respond_error(rq, 400, err, NULL, "see docs/api.md: window, points, layout");
	const char *layout = src.get(src.ctx, "layout", &len);
	bool columns = layout && strcmp(layout, "columns") == 0;
	if (layout && !columns && strcmp(layout, "points") != 0)
		return respond_error(rq, 400, "layout: expected points or columns", NULL,
				     "see docs/api.md: window, points, layout");
	if (!st)
		return respond_unavailable(rq);
	rc = store_hosts(st, &hosts, err, sizeof(err));
	if (rc != STORE_OK)
		return respond_store_error(rq, rc, err);
	struct alert_query aq = { .state = "open", .since_ms = INT64_MIN, .until_ms = INT64_MAX,
				  .limit = 10000 };
	rc = store_alerts(st, &aq, &alerts, err, sizeof(err));
	/* and those that ended within the window: an OOM kill just before a
	 * host went silent is over by the time anyone looks */
	struct alert_query eq = { .state = "resolved", .since_ms = now - (int64_t)window_s * 1000,
					.until_ms = INT64_MAX, .limit = 10000 };
	if (rc == STORE_OK)
		rc = store_alerts(st, &eq, &ended, err, sizeof(err));
	fleet_range(now, window_s, points, &since, &step);
	if (rc == STORE_OK)
		rc = store_fleet_sparks(st, since, now, step, &fs, err, sizeof(err));
	if (rc != STORE_OK) {
		json_decref(hosts);
		json_decref(alerts);
		json_decref(ended);
		return respond_store_error(rq, rc, err);
	}
	by = alerts_by_host(json_object_get(alerts, "alerts"));
	by_ended = alerts_by_host(json_object_get(ended, "alerts"));

	out_lit(&o, "{\"now\":");
	json_t *tmp = json_string(time_format(now, now_s, sizeof(now_s)));
	out_json(&o, tmp);
	json_decref(tmp);
	out_lit(&o, ",\"now_ts\":");
	char num[64];
	snprintf(num, sizeof(num), "%.3f,\"window\":%d,\"points\":%d,\"step_s\":%.3f", (double)now / 1000.0,
		 window_s, points, (double)step / 1000.0);
	out_lit(&o, num);
	if (columns) {
		out_lit(&o, ",\"layout\":\"columns\",\"ts\":[");
		for (int k = 0; k < fs.nb; k++) {
			if (k)
				out_lit(&o, ",");
			out_ts(&o, &fs, k);
		}
		out_lit(&o, "]");
	}
	out_lit(&o, ",\"hosts\":[");
	bool first = true;
	json_array_foreach(json_object_get(hosts, "hosts"), i, h) {
		const char *name = json_string_value(json_object_get(h, "host"));
		json_t *entry = name ? host_entry(h, json_object_get(by, name), json_object_get(by_ended, name), now) : NULL;
		if (!entry)
			continue;
		if (!first)
			out_lit(&o, ",");
		first = false;
		out_json(&o, entry);
		json_decref(entry);
		if (o.bad)
			break;
		o.len--;	/* the entry's closing brace: the sparklines go in */
		out_lit(&o, ",\"spark\":");
		out_spark(&o, &fs, fleet_sparks_find(&fs, name), columns);
		out_lit(&o, "}");
	}
	out_lit(&o, "]}");
	json_decref(by);
	json_decref(by_ended);
	json_decref(hosts);
	json_decref(alerts);
	json_decref(ended);
	fleet_sparks_release(&fs);
	return send_out(rq, &o);
}
