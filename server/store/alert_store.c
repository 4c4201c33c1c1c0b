/* alert_store.c - alerts and detector state in PostgreSQL (alert_store.h).
 *
 * Times go in and out as Unix milliseconds and are converted in SQL with
 * 'epoch' + n ms, which is exact (no float rounding of sample times). */
#include "alert_store.h"
#include "pgarr.h"
#include "pgbin.h"
#include "pgfail.h"
#include "store_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alert_json.h"
#include "silence.h"

#define TS_FROM_MS(n) "('epoch'::timestamptz + (" n ")::bigint * interval '1 millisecond')"
#define MS_FROM_TS(col) "(floor(extract(epoch from " col ") * 1000))::bigint"

static PGresult *exec(PGconn *c, const char *sql, int n, const char *const *v)
{
	return PQexecParams(c, sql, n, NULL, v, NULL, NULL, 0);
}

static bool ok(PGresult *r)
{
	ExecStatusType s = PQresultStatus(r);
	return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

/* Each alert change writes its notification outbox row in the same
 * statement (ALERT_OUTBOX, docs/notify.md): an open of a new alert, an
 * escalation from warning to critical, a resolve. The notifier is woken
 * at commit. */

/* The time of a write, as the server's clock has it (a parameter rather
 * than now() in the statement: a distributed PostgreSQL does not evaluate
 * now() in every place a statement may use it). */
static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *alert_sql_with_now(const char *sql, int n, char *buf, size_t cap)
{
	char num[8];
	size_t o = 0;
	snprintf(num, sizeof(num), "$%d", n);
	for (const char *p = sql; *p && o + 8 < cap;) {
		if (strncmp(p, "$now", 4) == 0) {
			o += (size_t)snprintf(buf + o, cap - o, "%s", num);
			p += 4;
		} else {
			buf[o++] = *p++;
		}
	}
	buf[o] = '\0';
	return buf;
}

static const char open_sql[] =
	"WITH prev AS (SELECT severity FROM alerts WHERE host_id = $1::int AND coalesce(cgroup, '') = "
	"coalesce($3::text, '') AND kind = $4 AND subject IS NULL AND state = 'open'), "
	"a AS (INSERT INTO alerts (host_id, host, cgroup, kind, severity, state, started_at, opened_at, "
	"updated_at, summary, evidence) VALUES ($1::int, $2, $3, $4, $5, 'open', " TS_FROM_MS("$6") ", "
	TS_FROM_MS("$7") ", " TS_FROM_MS("$now") ", $8, $9::jsonb) "
	"ON CONFLICT " ALERT_OPEN_KEY " WHERE state = 'open' DO UPDATE SET "
	"severity = CASE WHEN alerts.severity = 'critical' THEN 'critical' ELSE excluded.severity END, "
	"updated_at = excluded.updated_at RETURNING host_id, id, severity), "
	ALERT_OUTBOX("CASE WHEN EXISTS (SELECT 1 FROM prev) THEN 'escalate' ELSE 'open' END", "a",
	       "NOT EXISTS (SELECT 1 FROM prev) OR (a.severity = 'critical' AND (SELECT severity FROM prev) = 'warning')")
	"SELECT id FROM a";

static const char update_sql[] =
	"WITH prev AS (SELECT severity FROM alerts WHERE host_id = $1::int AND id = $2::bigint AND state = 'open'), "
	"a AS (UPDATE alerts SET severity = $3, summary = $4, evidence = $5::jsonb, updated_at = " TS_FROM_MS("$now")
	" WHERE host_id = $1::int AND id = $2::bigint AND state = 'open' RETURNING host_id, id, severity), "
	ALERT_OUTBOX("'escalate'", "a", "a.severity = 'critical' AND (SELECT severity FROM prev) = 'warning'")
	"SELECT 1";

static const char resolve_sql[] =
	"WITH a AS (UPDATE alerts SET state = 'resolved', ended_at = greatest(opened_at, " TS_FROM_MS("$3") "), "
	"updated_at = "
	TS_FROM_MS("$now") " WHERE host_id = $1::int AND id = $2::bigint AND state = 'open' RETURNING host_id, id), "
	ALERT_OUTBOX("'resolve'", "a", "true")
	"SELECT 1";

/* Wakes the notifier (LISTEN vmscope_notify) when the transaction commits. */
static int wake_notifier(PGconn *c, char *err, size_t errlen)
{
	return store_q_send(c, "SELECT pg_notify('vmscope_notify', '')", 0, NULL, NULL, "wake the notifier", err,
			    errlen) == STORE_OK ? 0 : -1;
}

int alert_store_apply(PGconn *c, int32_t host_id, struct det_action *a, char *err, size_t errlen)
{
	char hid[16], id[24], t1[24], t2[24], now[24], sql[2048];
	PGresult *r;

	if (store_pipe_finish(c, NULL, err, errlen) != STORE_OK)	/* writes in flight first */
		return -1;
	snprintf(hid, sizeof(hid), "%d", host_id);
	snprintf(now, sizeof(now), "%" PRId64, now_ms());

	if (a->type == DA_OPEN) {
		char *ev = json_dumps(a->evidence, JSON_COMPACT | JSON_REAL_PRECISION(12));
		if (!ev) {
			snprintf(err, errlen, "could not insert alert: out of memory");
			return -1;
		}
		snprintf(t1, sizeof(t1), "%" PRId64, a->started_ms);
		snprintf(t2, sizeof(t2), "%" PRId64, a->opened_ms);
		const char *v[10] = { hid, a->host, a->cgroup, a->kind, a->severity, t1, t2, a->summary, ev, now };
		r = exec(c, alert_sql_with_now(open_sql, 10, sql, sizeof(sql)), 10, v);
		free(ev);
		if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
			return pg_fail(err, errlen, "could not insert alert", c, r);
		a->alert_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		PQclear(r);
		return wake_notifier(c, err, errlen);
	}
	snprintf(id, sizeof(id), "%" PRId64, a->alert_id);
	if (a->type == DA_UPDATE) {
		char *ev = json_dumps(a->evidence, JSON_COMPACT | JSON_REAL_PRECISION(12));
		if (!ev) {
			snprintf(err, errlen, "could not update alert: out of memory");
			return -1;
		}
		const char *v[6] = { hid, id, a->severity, a->summary, ev, now };
		r = exec(c, alert_sql_with_now(update_sql, 6, sql, sizeof(sql)), 6, v);
		free(ev);
		if (!ok(r))
			return pg_fail(err, errlen, "could not update alert", c, r);
		PQclear(r);
		return wake_notifier(c, err, errlen);
	}
	snprintf(t1, sizeof(t1), "%" PRId64, a->at_ms);
	const char *v[4] = { hid, id, t1, now };
	r = exec(c, alert_sql_with_now(resolve_sql, 4, sql, sizeof(sql)), 4, v);
	if (!ok(r))
		return pg_fail(err, errlen, "could not resolve alert", c, r);
	PQclear(r);
	return wake_notifier(c, err, errlen);
}

int alert_store_find(PGconn *c, int32_t host_id, const struct det_action *a, int64_t *id, char *err,
		     size_t errlen)
{
	char t[24], hid[16];
	snprintf(t, sizeof(t), "%" PRId64, a->started_ms);
	snprintf(hid, sizeof(hid), "%d", host_id);
	const char *v[4] = { hid, a->cgroup ? a->cgroup : "", a->kind, t };
	/* the alert this open made: the one started at that sample, or the
	 * open one it was adopted into */
	PGresult *r = exec(c, "SELECT id FROM alerts WHERE host_id = $1::int AND coalesce(cgroup, '') = $2 AND kind = $3 "
			      "AND (started_at = " TS_FROM_MS("$4") " OR state = 'open') "
			      "ORDER BY (started_at = " TS_FROM_MS("$4") ") DESC, id DESC LIMIT 1", 4, v);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_fail(err, errlen, "could not look up an alert", c, r);
	*id = PQntuples(r) ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
	PQclear(r);
	return 0;
}

static const char back_sql[] =
	"WITH a AS (UPDATE alerts SET state = 'resolved', ended_at = greatest(opened_at, " TS_FROM_MS("$2") "), "
	"updated_at = " TS_FROM_MS("$now") " WHERE host_id = $1::int AND cgroup IS NULL AND kind = 'host_silent' "
	"AND state = 'open' RETURNING host_id, id), "
	ALERT_OUTBOX("'resolve'", "a", "true")
	"UPDATE hosts SET silent = false WHERE id = $1::int";

int alert_store_hosts_back(PGconn *c, const struct det_host_back *b, size_t n, char *err, size_t errlen)
{
	char sql[1024], now[24];

	if (!n)
		return 0;
	snprintf(now, sizeof(now), "%" PRId64, now_ms());
	alert_sql_with_now(back_sql, 3, sql, sizeof(sql));
	/* one statement per host (each stays on its host's shard), sent with
	 * COMMIT */
	for (size_t i = 0; i < n; i++) {
		char hid[16], t[24];
		snprintf(hid, sizeof(hid), "%d", b[i].host_id);
		snprintf(t, sizeof(t), "%" PRId64, b[i].at_ms);
		const char *prm[3] = { hid, t, now };
		if (store_q_send(c, sql, 3, prm, NULL, "resolve host_silent", err, errlen) != STORE_OK)
			return -1;
	}
	return wake_notifier(c, err, errlen);
}

int alert_store_query(PGconn *c, const struct alert_query *q, json_t **out, char *err, size_t errlen)
{
	char since[24], until[24], limit[16];
	const char *state = q->state && strcmp(q->state, "all") != 0 ? q->state : NULL;
	json_t *arr = NULL;

	*out = NULL;
	if (state && strcmp(state, "open") != 0 && strcmp(state, "resolved") != 0) {
		snprintf(err, errlen, "state: expected open, resolved or all");
		return -1;
	}
	snprintf(since, sizeof(since), "%" PRId64, q->since_ms);
	snprintf(until, sizeof(until), "%" PRId64, q->until_ms);
	snprintf(limit, sizeof(limit), "%d", q->limit < 1 ? 100 : q->limit > 10000 ? 10000 : q->limit);
	/* one host's alerts: by its id (one shard on Citus); a name without a
	 * host row is an alert kept after its host was forgotten (id 0) */
	char hid[16] = "0";
	if (q->host) {
		int32_t id = 0;
		int hrc = store_host_key(c, q->host, &id, err, errlen);
		if (hrc != STORE_OK && hrc != STORE_ENOTFOUND)
			return -1;
		snprintf(hid, sizeof(hid), "%d", id);
	}
	const char *v[8] = { q->host, q->cgroup, q->kind, state,
			     q->since_ms == INT64_MIN ? NULL : since,
			     q->until_ms == INT64_MAX ? NULL : until, limit, hid };
#define ALERTS_SQL(hostcond)                                                                               \
	"SELECT id, host, cgroup, kind, severity, state, " MS_FROM_TS("started_at") ", "                     \
	MS_FROM_TS("opened_at") ", " MS_FROM_TS("ended_at") ", summary, evidence::text, "                    \
	SILENCE_MATCH_SQL("alerts") ", subject FROM alerts WHERE " hostcond                                          \
	"AND ($2::text IS NULL OR cgroup = $2) AND ($3::text IS NULL OR kind = $3) "                         \
	"AND ($4::text IS NULL OR state = $4) "                                                              \
	"AND ($5::bigint IS NULL OR coalesce(ended_at, 'infinity') >= " TS_FROM_MS("$5") ") "               \
	"AND ($6::bigint IS NULL OR started_at <= " TS_FROM_MS("$6") ") "                                   \
	"ORDER BY started_at DESC, id DESC LIMIT $7::int"
	PGresult *r = exec(c, q->host ? ALERTS_SQL("host_id = $8::int AND host = $1::text ")
				      : ALERTS_SQL("$1::text IS NULL AND $8::int = 0 "), 8, v);
#undef ALERTS_SQL
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_fail(err, errlen, "could not query alerts", c, r);
	arr = json_array();
	if (!arr)
		goto oom;
	for (int i = 0; i < PQntuples(r); i++) {
		struct alert_rec a;
		json_error_t jerr;
		memset(&a, 0, sizeof(a));
		a.id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
		a.host = PQgetvalue(r, i, 1);
		a.cgroup = PQgetisnull(r, i, 2) ? NULL : PQgetvalue(r, i, 2);
		a.kind = PQgetvalue(r, i, 3);
		a.severity = PQgetvalue(r, i, 4);
		a.open = strcmp(PQgetvalue(r, i, 5), "open") == 0;
		a.started_ms = strtoll(PQgetvalue(r, i, 6), NULL, 10);
		a.opened_ms = strtoll(PQgetvalue(r, i, 7), NULL, 10);
		a.ended_ms = PQgetisnull(r, i, 8) ? 0 : strtoll(PQgetvalue(r, i, 8), NULL, 10);
		a.summary = PQgetvalue(r, i, 9);
		a.evidence = json_loads(PQgetvalue(r, i, 10), 0, &jerr);
		a.silenced = PQgetvalue(r, i, 11)[0] == 't';
		a.subject = PQgetisnull(r, i, 12) ? NULL : PQgetvalue(r, i, 12);
		json_t *o = alert_rec_to_json(&a);	/* borrows the PGresult's strings */
		if (a.evidence)
			json_decref(a.evidence);
		if (!o || json_array_append_new(arr, o) < 0)
			goto oom;
	}
	PQclear(r);
	*out = json_pack("{s:o}", "alerts", arr);
	if (!*out) {
		snprintf(err, errlen, "could not build the answer: out of memory");
		return -1;
	}
	return 0;
oom:
	PQclear(r);
	json_decref(arr);
	snprintf(err, errlen, "could not build the answer: out of memory");
	return -1;
}
