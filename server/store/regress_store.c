/* regress_store.c - the kernel-regression watch's tables (see regress_store.h). */
#include "regress_store.h"

#include "alert_store.h"
#include "alert_json.h"
#include "pgarr.h"
#include "store_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS_FROM_MS(n) "('epoch'::timestamptz + (" n ")::bigint * interval '1 millisecond')"
#define MS_FROM_TS(col) "(floor(extract(epoch from " col ") * 1000))::bigint"
#define KIND "'kernel_regression'"

static int lock_q(PGconn *c, const char *fn, bool *got, char *err, size_t errlen)
{
	char key[24], sql[64];
	PGresult *r = NULL;

	snprintf(key, sizeof(key), "%lld", (long long)REGRESS_LOCK_KEY);
	snprintf(sql, sizeof(sql), "SELECT %s($1::bigint)", fn);
	const char *v[1] = { key };
	int rc = store_q(c, sql, 1, v, 0, &r, "take the regression watch's lock", err, errlen);
	if (rc != STORE_OK)
		return rc;
	if (got)
		*got = PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
	PQclear(r);
	return STORE_OK;
}

int regress_store_try_lock(PGconn *c, bool *got, char *err, size_t errlen)
{
	*got = false;
	return lock_q(c, "pg_try_advisory_lock", got, err, errlen);
}

int regress_store_unlock(PGconn *c, char *err, size_t errlen)
{
	return lock_q(c, "pg_advisory_unlock", NULL, err, errlen);
}

int regress_store_tx(PGconn *c, const char *cmd, char *err, size_t errlen)
{
	return store_q(c, cmd, 0, NULL, 0, NULL, "run the regression watch's transaction", err, errlen);
}

int regress_store_state(PGconn *c, char **pinned, int64_t *since_run_ms, char *err, size_t errlen)
{
	PGresult *r = NULL;

	*pinned = NULL;
	*since_run_ms = -1;
	int rc = store_q(c, "SELECT baseline, (floor(extract(epoch FROM now() - last_run_at) * 1000))::bigint "
			    "FROM regression_watch WHERE id = 1", 0, NULL, 0, &r, "read the regression watch",
			 err, errlen);
	if (rc != STORE_OK)
		return rc;
	if (PQntuples(r) == 1) {
		if (!PQgetisnull(r, 0, 0) && !(*pinned = strdup(PQgetvalue(r, 0, 0)))) {
			PQclear(r);
			snprintf(err, errlen, "out of memory");
			return STORE_EINTERNAL;
		}
		if (!PQgetisnull(r, 0, 1))
			*since_run_ms = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	}
	PQclear(r);
	return STORE_OK;
}

void regress_hours_free(struct regress_hours *h, size_t n)
{
	for (size_t i = 0; h && i < n; i++)
		free(h[i].release);
	free(h);
}

int regress_store_host_hours(PGconn *c, int64_t now_ms, int64_t span_ms, struct regress_hours **out, size_t *n,
			     char *err, size_t errlen)
{
	char a[24], b[24];
	PGresult *r = NULL;

	*out = NULL;
	*n = 0;
	snprintf(a, sizeof(a), "%" PRId64, now_ms);
	snprintf(b, sizeof(b), "%" PRId64, now_ms - span_ms);
	const char *v[2] = { a, b };
	/* a host_meta row holds from its ts (the host's first sample for its
	 * first row) to the next row's ts (the host's newest sample for its
	 * last); each piece is clipped to [now - span, now] */
	int rc = store_q(c,
		"WITH m AS (SELECT hm.kernel, "
		"  CASE WHEN lag(hm.ts_ms) OVER w IS NULL THEN h.first_ts_ms ELSE hm.ts_ms END AS t0, "
		"  coalesce(lead(hm.ts_ms) OVER w, h.last_ts_ms) AS t1 "
		"  FROM host_meta hm JOIN hosts h ON h.id = hm.host_id "
		"  WHERE h.samples > 0 AND h.last_ts_ms >= $2::bigint "
		"  WINDOW w AS (PARTITION BY hm.host_id ORDER BY hm.ts_ms)), "
		"s AS (SELECT kernel, sum(greatest(0, least(t1, $1::bigint) - greatest(t0, $2::bigint))) AS ms "
		"  FROM m WHERE kernel IS NOT NULL GROUP BY kernel) "
		"SELECT kernel, ms / 3600000.0 FROM s WHERE ms > 0 ORDER BY ms DESC, kernel LIMIT 50",
		2, v, 0, &r, "count host-hours per release", err, errlen);
	if (rc != STORE_OK)
		return rc;
	int rows = PQntuples(r);
	struct regress_hours *h = rows ? calloc((size_t)rows, sizeof(*h)) : NULL;
	if (rows && !h)
		goto oom;
	for (int i = 0; i < rows; i++) {
		if (!(h[i].release = strdup(PQgetvalue(r, i, 0)))) {
			regress_hours_free(h, (size_t)rows);
			goto oom;
		}
		h[i].host_hours = strtod(PQgetvalue(r, i, 1), NULL);
	}
	PQclear(r);
	*out = h;
	*n = (size_t)rows;
	return STORE_OK;
oom:
	PQclear(r);
	snprintf(err, errlen, "out of memory");
	return STORE_EINTERNAL;
}

static struct cmp_host *find_host(struct cmp_host *h, size_t n, int32_t id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && h[lo].id == id ? &h[lo] : NULL;
}

int regress_store_kernel_since(PGconn *c, struct cmp_host *h, size_t n, int64_t until_ms, char *err,
			       size_t errlen)
{
	struct cbuf ids, ks;
	char u[24];
	PGresult *r = NULL;
	int rc;

	if (!n)
		return STORE_OK;
	cbuf_init(&ids);
	cbuf_init(&ks);
	int bad = arr_begin(&ids) | arr_begin(&ks);
	for (size_t i = 0; i < n && !bad; i++)
		bad |= arr_num(&ids, h[i].id) | arr_text_or_null(&ks, h[i].kernel);
	bad |= arr_end(&ids) | arr_end(&ks);
	if (bad) {
		cbuf_release(&ids);
		cbuf_release(&ks);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	snprintf(u, sizeof(u), "%" PRId64, until_ms);
	const char *v[3] = { (const char *)ids.p, (const char *)ks.p, u };
	/* the last record of another kernel at or before until (a record's
	 * ts is the newest sample of the batch that moved the host to it),
	 * then the host's first sample after it: where the current kernel
	 * began (its first record is the end of its first batch, later) */
	rc = store_q(c,
		"WITH cur AS (SELECT * FROM unnest($1::int[], $2::text[]) AS c(id, k)), "
		"prev AS (SELECT hm.host_id, max(hm.ts_ms) AS t FROM host_meta hm JOIN cur ON cur.id = hm.host_id "
		"  WHERE hm.ts_ms <= $3::bigint AND hm.kernel IS DISTINCT FROM cur.k GROUP BY hm.host_id) "
		"SELECT prev.host_id, coalesce(f.ts_ms, $3::bigint) FROM prev LEFT JOIN LATERAL "
		"  (SELECT s.ts_ms FROM samples s WHERE s.host_id = prev.host_id AND s.ts_ms > prev.t "
		"   AND s.ts_ms <= $3::bigint ORDER BY s.ts_ms LIMIT 1) f ON true",
		3, v, 0, &r, "read when hosts changed kernel", err, errlen);
	cbuf_release(&ids);
	cbuf_release(&ks);
	if (rc != STORE_OK)
		return rc;
	for (int i = 0; i < PQntuples(r); i++) {
		struct cmp_host *x = find_host(h, n, (int32_t)strtol(PQgetvalue(r, i, 0), NULL, 10));
		if (x)
			x->from_ms = strtoll(PQgetvalue(r, i, 1), NULL, 10);
	}
	PQclear(r);
	return STORE_OK;
}

int regress_store_open_alerts(PGconn *c, struct regress_open **out, size_t *n, char *err, size_t errlen)
{
	PGresult *r = NULL;

	*out = NULL;
	*n = 0;
	int rc = store_q(c, "SELECT id, subject, coalesce((evidence->>'confirmed_ts')::float8 * 1000, "
			    MS_FROM_TS("opened_at") ") FROM alerts WHERE host = '' AND kind = " KIND
			    " AND state = 'open' AND subject IS NOT NULL ORDER BY id",
			 0, NULL, 0, &r, "read the open kernel_regression alerts", err, errlen);
	if (rc != STORE_OK)
		return rc;
	int rows = PQntuples(r);
	struct regress_open *o = rows ? calloc((size_t)rows, sizeof(*o)) : NULL;
	if (rows && !o) {
		PQclear(r);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	for (int i = 0; i < rows; i++) {
		o[i].id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
		snprintf(o[i].release, sizeof(o[i].release), "%s", PQgetvalue(r, i, 1));
		o[i].confirmed_ms = (int64_t)llround(strtod(PQgetvalue(r, i, 2), NULL));
	}
	PQclear(r);
	*out = o;
	*n = (size_t)rows;
	return STORE_OK;
}

int regress_store_raise(PGconn *c, const char *release, const char *severity, const char *summary,
			const json_t *evidence, int64_t at_ms, bool *opened, char *err, size_t errlen)
{
	char at[24];
	PGresult *r = NULL;
	char *ev = json_dumps(evidence, JSON_COMPACT | JSON_REAL_PRECISION(12));

	*opened = false;
	if (!ev) {
		snprintf(err, errlen, "could not raise kernel_regression: out of memory");
		return STORE_EINTERNAL;
	}
	snprintf(at, sizeof(at), "%" PRId64, at_ms);
	const char *v[5] = { release, severity, at, summary, ev };
	int rc = store_q(c,
		"INSERT INTO alerts (host, cgroup, kind, subject, severity, state, started_at, opened_at, updated_at, "
		"summary, evidence) VALUES ('" ALERT_FLEET_HOST "', NULL, " KIND ", $1, $2, 'open', " TS_FROM_MS("$3")
		", " TS_FROM_MS("$3") ", now(), $4, $5::jsonb) "
		"ON CONFLICT " ALERT_OPEN_KEY " WHERE state = 'open' DO UPDATE SET "
		"severity = CASE WHEN alerts.severity = 'critical' THEN 'critical' ELSE excluded.severity END, "
		"summary = excluded.summary, evidence = excluded.evidence, updated_at = now() "
		"RETURNING (xmax = 0)",
		5, v, 0, &r, "raise kernel_regression", err, errlen);
	free(ev);
	if (rc != STORE_OK)
		return rc;
	*opened = PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
	PQclear(r);
	return STORE_OK;
}

int regress_store_resolve(PGconn *c, const char *release, int64_t at_ms, char *err, size_t errlen)
{
	char at[24];

	snprintf(at, sizeof(at), "%" PRId64, at_ms);
	const char *v[2] = { release, at };
	return store_q(c, "UPDATE alerts SET state = 'resolved', ended_at = greatest(opened_at, " TS_FROM_MS("$2")
			  "), updated_at = now() WHERE host = '' AND kind = " KIND " AND subject = $1 "
			  "AND state = 'open'", 2, v, 0, NULL, "resolve kernel_regression", err, errlen);
}

int regress_store_report(PGconn *c, const json_t *report, char *err, size_t errlen)
{
	char *txt = json_dumps(report, JSON_COMPACT | JSON_REAL_PRECISION(12));

	if (!txt) {
		snprintf(err, errlen, "could not record the regression run: out of memory");
		return STORE_EINTERNAL;
	}
	const char *v[1] = { txt };
	int rc = store_q(c, "INSERT INTO regression_watch (id, last_run_at, last_report) VALUES (1, now(), $1::jsonb) "
			    "ON CONFLICT (id) DO UPDATE SET last_run_at = now(), last_report = excluded.last_report",
			 1, v, 0, NULL, "record the regression run", err, errlen);
	free(txt);
	return rc;
}

int regress_store_pin(PGconn *c, const char *release, const char *by, char *err, size_t errlen)
{
	const char *v[2] = { release, by ? by : "" };

	return store_q(c, "INSERT INTO regression_watch (id, baseline, pinned_at, pinned_by) VALUES (1, $1, "
			  "CASE WHEN $1::text IS NULL THEN NULL ELSE now() END, $2) ON CONFLICT (id) DO UPDATE SET "
			  "baseline = excluded.baseline, pinned_at = excluded.pinned_at, pinned_by = excluded.pinned_by",
		       2, v, 0, NULL, "pin the baseline release", err, errlen);
}

int regress_store_read(PGconn *c, json_t **pin, json_t **report, char *err, size_t errlen)
{
	PGresult *r = NULL;
	char at[40];

	*pin = *report = NULL;
	int rc = store_q(c, "SELECT baseline, " MS_FROM_TS("pinned_at") ", pinned_by, last_report::text "
			    "FROM regression_watch WHERE id = 1", 0, NULL, 0, &r, "read the regression watch",
			 err, errlen);
	if (rc != STORE_OK)
		return rc;
	bool row = PQntuples(r) == 1;
	bool pinned = row && !PQgetisnull(r, 0, 0);
	*pin = json_pack("{s:o,s:o,s:s}", "release", pinned ? json_string(PQgetvalue(r, 0, 0)) : json_null(),
			 "pinned_at", pinned && !PQgetisnull(r, 0, 1)
			 ? json_string(alert_time_format(strtoll(PQgetvalue(r, 0, 1), NULL, 10), at, sizeof(at)))
			 : json_null(),
			 "pinned_by", pinned ? PQgetvalue(r, 0, 2) : "");
	*report = row && !PQgetisnull(r, 0, 3) ? json_loads(PQgetvalue(r, 0, 3), 0, NULL) : json_null();
	PQclear(r);
	if (!*pin || !*report) {
		json_decref(*pin);
		json_decref(*report);
		*pin = *report = NULL;
		snprintf(err, errlen, "could not read the regression watch: out of memory");
		return STORE_EINTERNAL;
	}
	return STORE_OK;
}
