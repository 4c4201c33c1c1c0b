/* api_fleet.c - GET /api/v1/fleet (see api_fleet.h): hosts, open alerts
 * and every host's sparklines from the 5-minute rollups: three queries
 * whatever the fleet size (store_fleet_sparks). */
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

/* One host's fleet entry from its store_hosts object and the open alerts. */
static json_t *host_entry(const json_t *h, const json_t *alerts, int64_t now_ms)
{
	const char *name = json_string_value(json_object_get(h, "host"));
	json_t *open = json_array();
	const char *state = "ok";
	size_t i;
	const json_t *a;

	json_array_foreach((json_t *)alerts, i, a) {
		const char *ah = json_string_value(json_object_get(a, "host"));
		if (!ah || !name || strcmp(ah, name) != 0)
			continue;
		const char *sev = json_string_value(json_object_get(a, "severity"));
		if (sev && strcmp(sev, "critical") == 0)
			state = "critical";
		else if (sev && strcmp(sev, "warning") == 0 && strcmp(state, "ok") == 0)
			state = "warning";
		json_array_append_new(open, json_pack("{s:O?,s:O?,s:O?,s:O?}",
						      "id", json_object_get(a, "id"),
						      "kind", json_object_get(a, "kind"),
						      "severity", json_object_get(a, "severity"),
						      "cgroup", json_object_get(a, "cgroup")));
	}
	double last = json_number_value(json_object_get(h, "last_seen_ts"));
	double interval = json_number_value(json_object_get(h, "interval_s"));
	double stale_after = 3 * interval > 60 ? 3 * interval : 60;
	bool stale = !json_is_number(json_object_get(h, "last_seen_ts")) ||
		     (double)now_ms / 1000.0 - last > stale_after;
	return json_pack("{s:O?,s:s,s:O?,s:O?,s:b,s:O?,s:O?,s:o}",
			 "host", json_object_get(h, "host"),
			 "state", state,
			 "last_seen", json_object_get(h, "last_seen"),
			 "last_seen_ts", json_object_get(h, "last_seen_ts"),
			 "stale", stale,
			 "kernel", json_object_get(h, "kernel"),
			 "labels", json_object_get(h, "labels"),
			 "open_alerts", open);
}

/* Empty sparklines for a host without rollups in the window. */
static json_t *empty_spark(void)
{
	return json_pack("{s:[],s:[],s:[],s:[],s:[]}", "psi_memory_some", "refault_file",
			 "reclaim_efficiency", "swap_in", "swap_out");
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

enum MHD_Result api_fleet(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct param_src src = api_params(rq);
	int window_s, points, rc;
	json_t *hosts = NULL, *alerts = NULL, *sparks = NULL, *list, *out, *hl;
	char err[256] = "", now_s[40];
	int64_t now = time_now_ms(), since, step;
	size_t i;
	const json_t *h;

	if (params_fleet(&src, &window_s, &points, err, sizeof(err)) < 0)
		return respond_error(rq, 400, err, NULL, "see docs/api.md: window, points");
	if (!st)
		return respond_unavailable(rq);
	rc = store_hosts(st, &hosts, err, sizeof(err));
	if (rc != STORE_OK)
		return respond_store_error(rq, rc, err);
	struct alert_query aq = { .state = "open", .since_ms = INT64_MIN, .until_ms = INT64_MAX,
				  .limit = 10000 };
	rc = store_alerts(st, &aq, &alerts, err, sizeof(err));
	if (rc == STORE_OK) {
		fleet_range(now, window_s, points, &since, &step);
		rc = store_fleet_sparks(st, since, now, step, &sparks, err, sizeof(err));
	}
	if (rc != STORE_OK) {
		json_decref(hosts);
		json_decref(alerts);
		return respond_store_error(rq, rc, err);
	}
	hl = json_object_get(hosts, "hosts");
	list = json_array();
	json_array_foreach(hl, i, h) {
		const char *name = json_string_value(json_object_get(h, "host"));
		json_t *entry = name ? host_entry(h, json_object_get(alerts, "alerts"), now) : NULL;
		if (!entry)
			continue;
		json_t *sp = json_object_get(sparks, name);
		json_object_set_new(entry, "spark", sp ? json_incref(sp) : empty_spark());
		json_array_append_new(list, entry);
	}
	json_decref(hosts);
	json_decref(alerts);
	json_decref(sparks);
	out = json_pack("{s:s,s:f,s:i,s:i,s:f,s:o}", "now", time_format(now, now_s, sizeof(now_s)),
			"now_ts", (double)now / 1000.0, "window", window_s, "points", points,
			"step_s", (double)step / 1000.0, "hosts", list);
	return respond_json(rq, 200, out);
}
