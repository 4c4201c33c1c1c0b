/* api_read.c - read endpoints (see api_read.h). */
#include "api_read.h"
#include "alert_kinds.h"
#include "metrics.h"
#include "metrics_fleet.h"
#include "respond.h"
#include "store.h"
#include "store_health.h"
#include "suggest.h"
#include "timeparse.h"

#include <stdlib.h>
#include <string.h>

static const char *query_get(void *ctx, const char *name, size_t *len)
{
	struct request *rq = ctx;
	const char *v = NULL;

	if (MHD_lookup_connection_value_n(rq->conn, MHD_GET_ARGUMENT_KIND, name, strlen(name), &v,
					  len) != MHD_YES)
		return NULL;
	return v;
}

struct param_src api_params(struct request *rq)
{
	struct param_src src = { query_get, rq };
	return src;
}

/* 200 when the database answers and takes writes; 503 "degraded" when it
 * is unreachable, read-only, or the last ingest writes failed with a
 * "retry later" error (disk full, out of memory, ...: store_health.h),
 * with the reason in the JSON. */
enum MHD_Result api_healthz(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct store_health_report h;
	int64_t now = time_now_ms();

	if (store_health_check(st, now, &h))
		return respond_json(rq, 200, json_pack("{s:s,s:s}", "status", "ok", "database", "ok"));
	metrics_db_error();
	rq->retry_after = 5;
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "status", "degraded", "database", h.database,
			      "reason", db_unavail_name(h.state), "detail", h.reason,
			      /* the error shape every 5xx has, plus the health fields */
			      "error", h.reason,
			      "hint", !st ? "the server keeps trying to connect"
				  : h.state == DBU_UNREACHABLE ? "the connection pool reconnects by itself"
				  : "ingest answers 503 with Retry-After meanwhile; agents keep their samples");
	if (o && h.writes.failing) {
		char since[40];
		json_object_set_new(o, "failing_since", json_string(time_format(h.writes.since_ms, since, sizeof(since))));
		if (h.writes.sqlstate[0])
			json_object_set_new(o, "sqlstate", json_string(h.writes.sqlstate));
	}
	return respond_json(rq, 503, o);
}

/* The database's write health for /metrics (store_health.h). */
static int append_db_health(char **text, size_t *len, int64_t now)
{
	struct store_write_health w;
	char buf[2048];
	size_t n = 0;

	store_health_get(now, &w);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			      "# HELP vmscope_db_write_failures_total Ingest transactions that failed with a "
			      "retry-later database error (answered 503), by reason.\n"
			      "# TYPE vmscope_db_write_failures_total counter\n");
	for (int r = DBU_UNREACHABLE; r < DBU_N && n < sizeof(buf); r++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "vmscope_db_write_failures_total{reason=\"%s\"} %llu\n",
				      db_unavail_name((enum db_unavail)r), (unsigned long long)w.failures[r]);
	if (n < sizeof(buf))
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "# HELP vmscope_db_writes_failing 1 while ingest writes fail (/healthz degraded).\n"
				      "# TYPE vmscope_db_writes_failing gauge\n"
				      "vmscope_db_writes_failing %d\n", w.failing ? 1 : 0);
	if (n >= sizeof(buf))
		return -1;
	char *t = realloc(*text, *len + n + 1);
	if (!t)
		return -1;
	memcpy(t + *len, buf, n + 1);
	*text = t;
	*len += n;
	return 0;
}

enum MHD_Result api_metrics(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct store_health_report h;
	size_t len = 0;

	/* vmscope_database_up: a query answered now, not "a pool exists" */
	store_health_check(st, time_now_ms(), &h);
	char *text = metrics_render(h.db_up, &len);
	struct MHD_Response *resp;

	if (!text)
		return respond_error(rq, 500, "out of memory", NULL, NULL);
	/* write health, open alerts and per-host signals (cached a few seconds) */
	if (append_db_health(&text, &len, time_now_ms()) < 0 ||
	    metrics_fleet_append(st, time_now_ms(), &text, &len) < 0) {
		free(text);
		return respond_error(rq, 500, "out of memory", NULL, NULL);
	}
	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	return respond_queue(rq, 200, resp);
}

/* Common tail: *out from a store call, or its error. */
static enum MHD_Result answer(struct request *rq, int rc, json_t *out, const char *err)
{
	if (rc != STORE_OK) {
		json_decref(out);
		return respond_store_error(rq, rc, err);
	}
	return respond_json(rq, 200, out);
}

enum MHD_Result api_hosts(struct request *rq)
{
	struct store *st = app_store(rq->app);
	json_t *out = NULL;
	char err[256] = "";

	if (!st)
		return respond_unavailable(rq);
	int rc = store_hosts(st, &out, err, sizeof(err));
	return answer(rq, rc, out, err);
}

enum MHD_Result api_host(struct request *rq)
{
	struct store *st = app_store(rq->app);
	json_t *out = NULL;
	char err[256] = "";

	if (!st)
		return respond_unavailable(rq);
	int rc = store_host(st, rq->route.host, &out, err, sizeof(err));
	if (rc == STORE_ENOTFOUND)
		return respond_error(rq, 404, "no such host", rq->route.host, NULL);
	return answer(rq, rc, out, err);
}

enum MHD_Result api_cgroups(struct request *rq)
{
	struct store *st = app_store(rq->app);
	json_t *out = NULL;
	char err[256] = "";

	if (!st)
		return respond_unavailable(rq);
	int rc = store_cgroups(st, rq->route.host, &out, err, sizeof(err));
	if (rc == STORE_ENOTFOUND)
		return respond_error(rq, 404, "no such host", rq->route.host, NULL);
	return answer(rq, rc, out, err);
}

enum MHD_Result api_host_metrics(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct param_src src = api_params(rq);
	const char *cgroup = NULL;
	int version = 0;
	json_t *out = NULL;
	char err[256] = "";

	if (params_metrics(&src, &cgroup, &version, err, sizeof(err)) < 0)
		return respond_error(rq, 400, err, NULL, NULL);
	if (!st)
		return respond_unavailable(rq);
	int rc = store_metrics(st, rq->route.host, cgroup, version, &out, err, sizeof(err));
	if (rc == STORE_ENOTFOUND)
		return respond_error(rq, 404, *err ? err : "no such host", rq->route.host, NULL);
	return answer(rq, rc, out, err);
}

/* The 404 of a metric the host (cgroup) never reported: the store's
 * message, and the names it does report that are closest to the one asked
 * for ("did_you_mean", from GET .../metrics; empty when none is close or
 * they could not be read). param is "metric" or "metrics". */
static enum MHD_Result no_metric(struct request *rq, const char *param, const char *metric, const char *cgroup,
				 int version, const char *msg)
{
	struct store *st = app_store(rq->app);
	json_t *names = NULL, *list = json_array();
	char err[256] = "", error[400];

	snprintf(error, sizeof(error), "%s: %s", param, msg);
	if (list && store_metrics(st, rq->route.host, cgroup, version, &names, err, sizeof(err)) == STORE_OK) {
		json_t *arr = json_object_get(names, "metrics");
		size_t n = json_array_size(arr);
		const char **all = calloc(n + 1, sizeof(*all)), *best[SUGGEST_MAX];
		for (size_t i = 0; all && i < n; i++) {
			const char *nm = json_string_value(json_object_get(json_array_get(arr, i), "name"));
			all[i] = nm ? nm : "";
		}
		size_t k = all ? suggest_names(metric, all, n, best, SUGGEST_MAX) : 0;
		for (size_t i = 0; i < k; i++)
			json_array_append_new(list, json_string(best[i]));
		free(all);
	}
	json_decref(names);
	const char *hint = cgroup ? "GET /api/v1/hosts/HOST/metrics?cgroup=PATH lists the names it reports"
				  : "GET /api/v1/hosts/HOST/metrics lists the names it reports";
	json_t *body = json_pack("{s:s, s:s, s:o*}", "error", error, "hint", hint, "did_you_mean", list);
	return respond_json(rq, 404, body);
}

enum MHD_Result api_series(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct param_src src = api_params(rq);
	struct series_query q;
	json_t *out = NULL;
	char err[256] = "";

	memset(&q, 0, sizeof(q));
	q.host = rq->route.host;
	if (params_series(&src, time_now_ms(), &q, err, sizeof(err)) < 0)
		return respond_error(rq, 400, err, NULL,
				     "see docs/api.md: metric, cgroup, since, until, points");
	if (!st)
		return respond_unavailable(rq);
	int rc = store_series(st, &q, &out, err, sizeof(err));
	if (rc == STORE_ENOMETRIC)
		return no_metric(rq, "metric", q.metric, q.cgroup, q.cgroup_version, err);
	if (rc == STORE_ENOTFOUND)	/* the host, or with cgroup= that cgroup */
		return respond_error(rq, 404, *err ? err : "no such host", rq->route.host, NULL);
	if (rc == STORE_OK && out) {
		/* the window as resolved, for clients that left it to the defaults */
		json_object_set_new(out, "since_ts", json_real((double)q.since_ms / 1000.0));
		json_object_set_new(out, "until_ts", json_real((double)q.until_ms / 1000.0));
	}
	return answer(rq, rc, out, err);
}

/* One series answer's points as columns: "ts" and "v" (raw), or "ts",
 * "avg", "min", "max" (downsampled), in place of "points". A browser then
 * parses four arrays per series instead of one small array per point (a
 * 7-day host view: ~11,000 of them). The number objects are moved, not
 * copied. 0, or -1 when out of memory (o is then unchanged). */
static int series_columns(json_t *o)
{
	json_t *pts = json_object_get(o, "points");
	bool ds = json_is_true(json_object_get(o, "downsampled"));
	int ncol = ds ? 4 : 2;
	static const char *const names[2][4] = { { "ts", "v", NULL, NULL }, { "ts", "avg", "min", "max" } };
	json_t *col[4] = { NULL, NULL, NULL, NULL };
	size_t i;
	json_t *p;
	int bad = 0;

	for (int c = 0; c < ncol; c++)
		bad |= !(col[c] = json_array());
	json_array_foreach(pts, i, p) {
		for (int c = 0; !bad && c < ncol; c++) {
			json_t *v = json_array_get(p, (size_t)c);
			bad |= json_array_append(col[c], v ? v : json_null()) < 0;
		}
	}
	for (int c = 0; !bad && c < ncol; c++)
		bad |= json_object_set(o, names[ds][c], col[c]) < 0;
	for (int c = 0; c < ncol; c++)
		json_decref(col[c]);
	if (bad) {
		for (int c = 0; c < ncol; c++)
			json_object_del(o, names[ds][c]);
		return -1;
	}
	json_object_del(o, "points");
	return 0;
}

/* Several series of one window in one answer (the dashboard's host view):
 * the same parameters as api_series with metrics= a comma list. */
enum MHD_Result api_series_batch(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct param_src src = api_params(rq);
	struct series_batch_query *q = calloc(1, sizeof(*q));	/* 8 KiB of names: not on the stack */
	json_t *out = NULL;
	char err[256] = "";
	enum MHD_Result res;

	if (!q)
		return respond_error(rq, 500, "out of memory", NULL, NULL);
	q->host = rq->route.host;
	if (params_series_batch(&src, time_now_ms(), q, err, sizeof(err)) < 0) {
		res = respond_error(rq, 400, err, NULL,
				    "see docs/api.md: metrics (comma list), cgroup, since, until, points, layout");
	} else if (!st) {
		res = respond_unavailable(rq);
	} else {
		int rc = store_series_batch(st, q, &out, err, sizeof(err));
		if (rc == STORE_ENOMETRIC && q->failed >= 0)
			res = no_metric(rq, "metrics", q->metrics[q->failed], q->cgroup, q->cgroup_version, err);
		else if (rc == STORE_ENOTFOUND)	/* the host, or with cgroup= that cgroup */
			res = respond_error(rq, 404, *err ? err : "no such host", rq->route.host, NULL);
		else {
			if (rc == STORE_OK && q->columns) {
				size_t i;
				json_t *one;
				int bad = json_object_set_new(out, "layout", json_string("columns")) < 0;
				json_array_foreach(json_object_get(out, "series"), i, one)
					bad |= series_columns(one) < 0;
				if (bad) {
					json_decref(out);
					free(q);
					return respond_error(rq, 500, "out of memory", NULL, NULL);
				}
			}
			res = answer(rq, rc, out, err);
		}
	}
	free(q);
	return res;
}

enum MHD_Result api_alerts(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct param_src src = api_params(rq);
	struct alert_query q;
	json_t *out = NULL;
	char err[256] = "";

	if (params_alerts(&src, &q, err, sizeof(err)) < 0)
		return respond_error(rq, 400, err, NULL,
				     "see CONTRACT §3: host, cgroup, kind, state, since, until, limit");
	if (!st)
		return respond_unavailable(rq);
	if (q.kind && !alert_kind_known(q.kind)) {
		/* not a kind the server raises: still one to filter on when such
		 * alerts are stored (an older version's kind, one written by hand) */
		bool stored = false;
		int rc = store_alert_kind_stored(st, q.kind, &stored, err, sizeof(err));
		if (rc != STORE_OK)
			return respond_store_error(rq, rc, err);
		if (!stored) {
			char hint[512], kinds[400];
			alert_kinds_text(kinds, sizeof(kinds));
			snprintf(hint, sizeof(hint), "one of: %s", kinds);
			snprintf(err, sizeof(err), "kind: unknown alert kind %s", q.kind);
			return respond_error(rq, 400, err, NULL, hint);
		}
	}
	int rc = store_alerts(st, &q, &out, err, sizeof(err));
	return answer(rq, rc, out, err);
}
