/* api_fleet.c - GET /api/v1/fleet (see api_fleet.h). */
#include "api_fleet.h"
#include "api_read.h"
#include "params.h"
#include "respond.h"
#include "store.h"
#include "timeparse.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLEET_WORKERS 4	/* threads (so database connections) one fleet answer uses */

struct fleet_ctx {
	struct store *st;
	const char *host;
	int64_t since_ms, until_ms;
	int points;
};

/* The points of one series (a new reference; an empty array when the
 * metric is unknown), or NULL with rc set on a store error. */
static json_t *series_points(const struct fleet_ctx *fc, const char *metric, int *rc)
{
	struct series_query q = { .host = fc->host, .cgroup = NULL, .metric = metric,
				  .since_ms = fc->since_ms, .until_ms = fc->until_ms,
				  .points = fc->points };
	json_t *out = NULL;
	char err[256];

	*rc = store_series(fc->st, &q, &out, err, sizeof(err));
	if (*rc == STORE_ENOTFOUND) {
		*rc = STORE_OK;
		return json_array();
	}
	if (*rc != STORE_OK)
		return NULL;
	json_t *pts = json_object_get(out, "points");
	pts = json_is_array(pts) ? json_incref(pts) : json_array();
	json_decref(out);
	return pts;
}

/* [[ts, avg, min, max], ...] (or raw [[ts, v]]) to [[ts, avg], ...]. */
static json_t *ts_avg(const json_t *pts)
{
	json_t *out = json_array();
	size_t i;
	const json_t *p;

	if (!out)
		return NULL;
	json_array_foreach((json_t *)pts, i, p) {
		json_t *pair = json_pack("[OO]", json_array_get(p, 0), json_array_get(p, 1));
		if (pair)
			json_array_append_new(out, pair);
	}
	return out;
}

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

/* spark[name] = [[ts, avg], ...] of metric; 0 or a STORE_E* code. */
static int add_spark(json_t *spark, const struct fleet_ctx *fc, const char *name,
		     const char *metric, const char *fallback)
{
	int rc;
	json_t *pts = series_points(fc, metric, &rc);

	if (!pts)
		return rc;
	if (json_array_size(pts) == 0 && fallback) {
		json_decref(pts);
		pts = series_points(fc, fallback, &rc);
		if (!pts)
			return rc;
	}
	json_object_set_new(spark, name, ts_avg(pts));
	json_decref(pts);
	return STORE_OK;
}

static int host_spark(const struct fleet_ctx *fc, json_t **out)
{
	static const char *const eff_metrics[] = { "vmstat.pgsteal_kswapd", "vmstat.pgsteal_direct",
						   "vmstat.pgscan_kswapd", "vmstat.pgscan_direct" };
	json_t *spark = json_object();
	json_t *eff[4] = { NULL, NULL, NULL, NULL };
	int rc;

	if (!spark)
		return STORE_EINTERNAL;
	rc = add_spark(spark, fc, "psi_memory_some", "psi.memory.some.avg10", NULL);
	if (rc == STORE_OK)
		rc = add_spark(spark, fc, "refault_file", "vmstat.workingset_refault_file",
			       "vmstat.workingset_refault");
	for (size_t i = 0; rc == STORE_OK && i < 4; i++)
		eff[i] = series_points(fc, eff_metrics[i], &rc);
	if (rc == STORE_OK)
		json_object_set_new(spark, "reclaim_efficiency",
				    fleet_efficiency(eff[0], eff[1], eff[2], eff[3]));
	for (size_t i = 0; i < 4; i++)
		json_decref(eff[i]);
	if (rc == STORE_OK)
		rc = add_spark(spark, fc, "swap_in", "vmstat.pswpin", NULL);
	if (rc == STORE_OK)
		rc = add_spark(spark, fc, "swap_out", "vmstat.pswpout", NULL);
	if (rc != STORE_OK) {
		json_decref(spark);
		return rc;
	}
	*out = spark;
	return STORE_OK;
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

/* One host's sparklines, computed by whichever worker takes it. */
struct spark_job {
	struct fleet_ctx fc;
	json_t *spark;		/* new reference, or NULL */
	int rc;
};

struct spark_jobs {
	struct spark_job *job;
	size_t n;
	atomic_size_t next;
};

/* Takes jobs until none are left. Workers only create objects of their
 * own; the shared host list is read by the request's thread alone. */
static void *spark_worker(void *arg)
{
	struct spark_jobs *jobs = arg;

	for (;;) {
		size_t i = atomic_fetch_add(&jobs->next, 1);
		if (i >= jobs->n)
			break;
		if (jobs->job[i].fc.host)
			jobs->job[i].rc = host_spark(&jobs->job[i].fc, &jobs->job[i].spark);
	}
	return NULL;
}

/* Runs the jobs on up to FLEET_WORKERS threads (the caller's included):
 * each host costs several series queries, and they wait mostly on the
 * database, so a few connections at once cut the answer time. */
static void run_spark_jobs(struct spark_jobs *jobs)
{
	pthread_t tid[FLEET_WORKERS];
	size_t started = 0;

	for (size_t i = 0; i + 1 < FLEET_WORKERS && i + 1 < jobs->n; i++) {
		if (pthread_create(&tid[started], NULL, spark_worker, jobs) != 0)
			break;	/* fewer helpers: the caller does the rest */
		started++;
	}
	spark_worker(jobs);
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}

enum MHD_Result api_fleet(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct param_src src = api_params(rq);
	int window_s, points, rc;
	json_t *hosts = NULL, *alerts = NULL, *list, *out, *hl;
	char err[256] = "", now_s[40];
	int64_t now = time_now_ms();
	struct spark_jobs jobs;
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
	if (rc != STORE_OK) {
		json_decref(hosts);
		return respond_store_error(rq, rc, err);
	}
	hl = json_object_get(hosts, "hosts");
	memset(&jobs, 0, sizeof(jobs));
	jobs.n = json_array_size(hl);
	atomic_init(&jobs.next, 0);
	jobs.job = calloc(jobs.n ? jobs.n : 1, sizeof(*jobs.job));
	if (!jobs.job) {
		json_decref(hosts);
		json_decref(alerts);
		return respond_error(rq, 500, "out of memory", NULL, NULL);
	}
	json_array_foreach(hl, i, h) {
		struct fleet_ctx fc = { st, json_string_value(json_object_get(h, "host")),
					now - (int64_t)window_s * 1000, now, points };
		jobs.job[i].fc = fc;
		jobs.job[i].rc = STORE_OK;
	}
	run_spark_jobs(&jobs);

	list = json_array();
	rc = STORE_OK;
	json_array_foreach(hl, i, h) {
		struct spark_job *job = &jobs.job[i];
		if (job->rc != STORE_OK) {
			rc = job->rc;
			break;
		}
		json_t *entry = job->fc.host ? host_entry(h, json_object_get(alerts, "alerts"), now) : NULL;
		if (!entry || !job->spark)
			continue;
		json_object_set(entry, "spark", job->spark);
		json_array_append_new(list, entry);
	}
	for (i = 0; i < jobs.n; i++)
		json_decref(jobs.job[i].spark);
	free(jobs.job);
	json_decref(hosts);
	json_decref(alerts);
	if (rc != STORE_OK) {
		json_decref(list);
		return respond_store_error(rq, rc, "could not read a host's series");
	}
	out = json_pack("{s:s,s:f,s:i,s:i,s:o}", "now", time_format(now, now_s, sizeof(now_s)),
			"now_ts", (double)now / 1000.0, "window", window_s, "points", points,
			"hosts", list);
	return respond_json(rq, 200, out);
}
