/* store_series_batch.c - store_series_batch: several metrics of one host
 * (or cgroup) over one window in one answer, for the dashboard's host view,
 * which needs about 30 series per window.
 *
 * Why a separate read: over a long window every host figure comes from the
 * 5-minute rollups, and rollup_read() takes any number of slots, so the
 * whole view is ONE query over the host's rollup rows instead of one query
 * (and one pool round trip, host lookup and HTTP request) per metric.
 * Everything that is not a rolled-up host-level metric over a rollup range
 * (short windows, raw points, cgroups, unknown names, rollups written
 * before a slot existed) goes through store_series() itself, so each
 * answer is exactly what GET .../series?metric= gives for that metric.
 */
#include "store_internal.h"

#include "metric_kind.h"
#include "store_rollup.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *num_or_null(bool null, double v)
{
	return null ? json_null() : json_real(v);
}

/* Points of the slot at column group j of a rollup_read() result (columns
 * 3 + 4j .. 6 + 4j: count, sum, min, max), as rollup_points() in
 * store_series.c builds them. *total receives the slot's value count (0:
 * the slot holds nothing in this range, read raw rows instead). */
static json_t *slot_points(PGresult *r, int j, int64_t since, int64_t step, long *total)
{
	int cn = 3 + 4 * j, cs = cn + 1, clo = cn + 2, chi = cn + 3;
	json_t *arr = json_array();

	*total = 0;
	for (int i = 0; arr && i < PQntuples(r); i++) {
		int64_t k = strtoll(PQgetvalue(r, i, 1), NULL, 10);
		long cnt = strtol(PQgetvalue(r, i, cn), NULL, 10);
		bool null = cnt <= 0 || PQgetisnull(r, i, clo) || PQgetisnull(r, i, chi);
		*total += cnt > 0 ? cnt : 0;
		double sum = strtod(PQgetvalue(r, i, cs), NULL);
		json_t *pt = json_pack("[f, o, o, o]", (double)(since + k * step) / 1000.0,
				       num_or_null(null, null ? 0 : sum / (double)cnt),
				       num_or_null(null, null ? 0 : strtod(PQgetvalue(r, i, clo), NULL)),
				       num_or_null(null, null ? 0 : strtod(PQgetvalue(r, i, chi), NULL)));
		if (!pt || json_array_append_new(arr, pt) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

/* The single-series answer of a rolled-up metric (store_series's shape). */
static json_t *rollup_answer(const struct series_batch_query *q, const char *metric, int64_t step,
			     json_t *points)
{
	enum metric_kind kind = metric_kind(metric, false);
	json_t *o = json_object();
	int bad = !o || !points;

	if (!bad) {
		bad |= json_object_set_new(o, "host", json_string(q->host));
		bad |= json_object_set_new(o, "cgroup", json_null());
		bad |= json_object_set_new(o, "metric", json_string(metric));
		bad |= json_object_set_new(o, "kind", json_string(metric_kind_word(kind)));
		bad |= json_object_set_new(o, "unit", json_string(metric_unit(metric, false)));
		bad |= json_object_set_new(o, "since_ts", json_real((double)q->since_ms / 1000.0));
		bad |= json_object_set_new(o, "until_ts", json_real((double)q->until_ms / 1000.0));
		bad |= json_object_set_new(o, "downsampled", json_true());
		bad |= json_object_set_new(o, "source", json_string("rollup"));
		bad |= json_object_set_new(o, "step_s", json_real((double)step / 1000.0));
		bad |= json_object_set_new(o, "points", points);
		points = NULL;
	}
	json_decref(points);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Fills ans[i] for every metric that can come from one rollup query; the
 * others stay NULL. Holds one pool connection for the duration. */
static int read_rollups(struct store *st, const struct series_batch_query *q, json_t **ans,
			char *err, size_t errlen)
{
	int slots[SERIES_BATCH_MAX], at[SERIES_BATCH_MAX], ns = 0;
	int32_t hid;
	int rc;
	PGresult *r = NULL;

	int crc;
	PGconn *c = store_read_get(st, &crc, err, errlen);
	if (!c)
		return crc;
	if ((rc = store_host_id(c, q->host, &hid, NULL, err, errlen)) != STORE_OK)
		goto out;
	for (int i = 0; i < q->nmetrics; i++) {
		int32_t mid = 0;
		int slot = rollup_slot(q->metrics[i]);
		bool dup = false;
		if (slot < 0)
			continue;
		for (int j = 0; j < ns; j++)
			dup |= slots[j] == slot;
		if (dup)
			continue;	/* a repeated name: store_series answers it */
		if ((rc = store_metric_id(st, c, q->metrics[i], &mid, err, errlen)) != STORE_OK)
			goto out;
		if (!mid)
			continue;	/* never reported: store_series gives the empty answer */
		slots[ns] = slot;
		at[ns++] = i;
	}
	if (ns == 0)
		goto out;
	int64_t span = q->until_ms - q->since_ms + 1;
	int64_t step = (span + q->points - 1) / q->points;
	if (step < 1)
		step = 1;
	if ((rc = rollup_read(c, hid, q->since_ms, q->until_ms, step, slots, ns, &r, err, errlen)) != STORE_OK)
		goto out;
	for (int j = 0; j < ns && PQntuples(r) > 0; j++) {
		long total;
		json_t *pts = slot_points(r, j, q->since_ms, step, &total);
		if (pts && total == 0) {
			json_decref(pts);	/* rollups older than the slot: raw rows */
			continue;
		}
		if (!pts || !(ans[at[j]] = rollup_answer(q, q->metrics[at[j]], step, pts))) {
			snprintf(err, errlen, "out of memory");
			rc = STORE_EINTERNAL;
			goto out;
		}
	}
out:
	PQclear(r);
	store_read_put(st, c, rc);
	return rc;
}

int store_series_batch(struct store *st, struct series_batch_query *q, json_t **out,
		       char *err, size_t errlen)
{
	json_t *ans[SERIES_BATCH_MAX] = { 0 };
	json_t *list = NULL, *o = NULL;
	int rc = STORE_OK;

	*out = NULL;
	q->failed = -1;
	if (!q->host || q->nmetrics < 1 || q->nmetrics > SERIES_BATCH_MAX || q->until_ms < q->since_ms ||
	    q->points < 0) {
		snprintf(err, errlen, "invalid series batch: need host, 1..%d metrics, since <= until",
			 SERIES_BATCH_MAX);
		return STORE_EINVAL;
	}
	/* store_series's own rule for choosing the rollups (SERIES_AUTO) */
	if (!q->cgroup && q->points > 0 && q->until_ms - q->since_ms > SERIES_ROLLUP_AFTER_MS &&
	    (rc = read_rollups(st, q, ans, err, errlen)) != STORE_OK)
		goto fail;
	/* the others on one connection, the host and cgroup looked up once */
	int rest = 0;
	for (int i = 0; i < q->nmetrics; i++)
		rest += !ans[i];
	if (rest) {
		struct series_src src;
		PGconn *c = store_read_get(st, &rc, err, errlen);
		if (!c)
			goto fail;
		rc = series_src_open(c, q->host, q->cgroup, q->cgroup_version, &src, err, errlen);
		for (int i = 0; rc == STORE_OK && i < q->nmetrics; i++) {
			if (ans[i])
				continue;
			struct series_query one = { .host = q->host, .cgroup = q->cgroup,
						    .cgroup_version = q->cgroup_version, .metric = q->metrics[i],
						    .since_ms = q->since_ms, .until_ms = q->until_ms,
						    .points = q->points, .source = SERIES_AUTO };
			if ((rc = series_read(st, c, &src, &one, &ans[i], err, errlen)) != STORE_OK)
				q->failed = i;
		}
		series_src_release(&src);
		store_read_put(st, c, rc);
		if (rc != STORE_OK)
			goto fail;
	}
	o = json_object();
	list = json_array();
	int bad = !o || !list;
	for (int i = 0; !bad && i < q->nmetrics; i++) {
		bad |= json_array_append_new(list, ans[i]);
		ans[i] = NULL;
	}
	if (!bad) {
		bad |= json_object_set_new(o, "host", json_string(q->host));
		bad |= json_object_set_new(o, "cgroup", q->cgroup ? json_string(q->cgroup) : json_null());
		bad |= json_object_set_new(o, "since_ts", json_real((double)q->since_ms / 1000.0));
		bad |= json_object_set_new(o, "until_ts", json_real((double)q->until_ms / 1000.0));
		bad |= json_object_set_new(o, "series", list);
		list = NULL;
	}
	if (bad) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
		goto fail;
	}
	*out = o;
	return STORE_OK;
fail:
	for (int i = 0; i < q->nmetrics && i < SERIES_BATCH_MAX; i++)
		json_decref(ans[i]);
	json_decref(list);
	json_decref(o);
	return rc;
}
