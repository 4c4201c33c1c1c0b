/* notify.c - the notifier thread (see notify.h and docs/notify.md). */
#include "notify.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "alert_json.h"
#include "log.h"
#include "metrics.h"
#include "notify_http.h"
#include "notify_payload.h"
#include "notify_receiver.h"
#include "silence.h"
#include "timeparse.h"

#define NOTIFY_LOCK_KEY 0x766d736e6f7469LL	/* "vmsnoti" */
#define MS_FROM_TS(col) "(floor(extract(epoch from " col ") * 1000))::bigint"
#define ALERT_COLS "a.id, a.host, a.cgroup, a.kind, a.severity, a.state, " MS_FROM_TS("a.started_at") \
	", " MS_FROM_TS("a.opened_at") ", " MS_FROM_TS("a.ended_at") ", a.summary, a.evidence::text, a.subject"
#define ALERT_NCOLS 12
/* Whether an open event of the row's alert before it was not held back
 * (a resolve or escalate without one is held back too), and the join the
 * outbox queries read it from. */
#define OPEN_SENT_SQL "EXISTS (SELECT 1 FROM notify_outbox p WHERE p.alert_id = a.id " \
	"AND p.event = 'open' AND NOT p.suppressed AND p.id < o.id)"
#define OUTBOX_FROM_SQL "FROM notify_outbox o JOIN alerts a ON a.id = o.alert_id "
#define RESEND_CHUNK 500		/* alerts in one Alertmanager re-send */
#define RESEND_MAX_ALERTS_STR "10000"	/* open alerts re-sent at most */
#define RESEND_MAX_CHUNKS 20		/* 10000 / RESEND_CHUNK */

/* What a receiver's one transfer is doing. */
enum job { JOB_NONE, JOB_EVENT, JOB_RESEND };

/* A receiver, its retry state and its transfer: fails counts the failed
 * attempts of the event it is stuck on; nothing goes to it before next_ms.
 * Each receiver has at most one transfer running, so its events go out in
 * order, and its own time limit, so a receiver that hangs holds up no
 * other (notify_http.h). */
struct rstate {
	struct notify_receiver r;
	int fails;
	int64_t next_ms;
	struct notify_http *http;
	enum job job;
	int64_t ev;			/* JOB_EVENT: the outbox row */
	char what[160];			/* JOB_EVENT: "open thrash of db-07 /x (alert 17, event 42)" */
	char *resend[RESEND_MAX_CHUNKS];	/* Alertmanager re-sends waiting, owned bodies */
	size_t nresend;
	size_t resend_count[RESEND_MAX_CHUNKS];	/* alerts in each */
};

struct notify {
	struct app *app;
	struct rstate rs[NOTIFY_MAX_RECEIVERS];
	size_t nr;
	char *public_url;
	CURLM *multi;
	pthread_t thread;
	int wake[2];		/* a byte on wake[1] ends the thread's wait */
	atomic_bool stopping;
	PGconn *conn;		/* own connection: LISTEN and the advisory lock */
	bool leader;
	bool dirty;		/* something changed: look at the outbox again now */
	int64_t next_resend_ms, next_gc_ms, next_look_ms;
	uint64_t rnd;		/* xorshift state for the jitter */
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double rnd01(struct notify *n)
{
	n->rnd ^= n->rnd << 13;
	n->rnd ^= n->rnd >> 7;
	n->rnd ^= n->rnd << 17;
	return (double)(n->rnd >> 11) / 9007199254740992.0;
}

long notify_backoff_ms(int fails, double r)
{
	long d = NOTIFY_BACKOFF_MIN_MS;

	for (int i = 1; i < fails && d < NOTIFY_BACKOFF_MAX_MS; i++)
		d *= 2;
	if (d > NOTIFY_BACKOFF_MAX_MS)
		d = NOTIFY_BACKOFF_MAX_MS;
	if (r < 0)
		r = 0;
	if (r >= 1)
		r = 0.999999;
	return d / 2 + (long)((double)(d / 2) * r);
}

static void pq_log(const char *what, PGconn *c, PGresult *r)
{
	const char *m = r ? PQresultErrorMessage(r) : PQerrorMessage(c);
	size_t len = strlen(m);

	while (len && (m[len - 1] == '\n' || m[len - 1] == ' '))
		len--;
	log_warn("notify: %s: %.*s", what, (int)len, m);
}

/* Runs a statement without rows; false (logged) on error. */
static bool exec_ok(struct notify *n, const char *what, const char *sql, int np, const char *const *v)
{
	PGresult *r = PQexecParams(n->conn, sql, np, NULL, v, NULL, NULL, 0);
	ExecStatusType s = PQresultStatus(r);
	bool ok = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;

	if (!ok)
		pq_log(what, n->conn, r);
	PQclear(r);
	return ok;
}

static void drop_conn(struct notify *n)
{
	if (n->conn)
		PQfinish(n->conn);
	n->conn = NULL;
	n->leader = false;
}

/* Connects and tries to become the one sender. Returns true when this
 * server sends. */
static bool ensure_leader(struct notify *n)
{
	if (n->conn && PQstatus(n->conn) != CONNECTION_OK) {
		log_warn("notify: lost the database connection; reconnecting");
		drop_conn(n);
	}
	if (!n->conn) {
		n->conn = PQconnectdb(n->app->cfg->db);
		if (PQstatus(n->conn) != CONNECTION_OK) {
			drop_conn(n);
			return false;
		}
	}
	if (n->leader)
		return true;
	char key[24];
	snprintf(key, sizeof(key), "%lld", (long long)NOTIFY_LOCK_KEY);
	const char *v[1] = { key };
	PGresult *r = PQexecParams(n->conn, "SELECT pg_try_advisory_lock($1::bigint)", 1, NULL, v, NULL, NULL, 0);
	bool got = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		pq_log("could not take the notifier lock", n->conn, r);
	PQclear(r);
	if (!got)
		return false;
	if (!exec_ok(n, "could not LISTEN", "LISTEN vmscope_notify", 0, NULL)) {
		drop_conn(n);
		return false;
	}
	n->leader = true;
	n->next_resend_ms = 0;	/* tell Alertmanager about every open alert now */
	log_info("notify: sending notifications to %zu receiver(s)", n->nr);
	return true;
}

/* Fills a from columns off.. of row i of r (ALERT_COLS); strings borrowed
 * from r, evidence a new reference the caller drops. */
static void alert_from_row(PGresult *r, int i, int off, struct alert_rec *a)
{
	json_error_t jerr;

	memset(a, 0, sizeof(*a));
	a->id = strtoll(PQgetvalue(r, i, off), NULL, 10);
	a->host = PQgetvalue(r, i, off + 1);
	a->cgroup = PQgetisnull(r, i, off + 2) ? NULL : PQgetvalue(r, i, off + 2);
	a->kind = PQgetvalue(r, i, off + 3);
	a->severity = PQgetvalue(r, i, off + 4);
	a->open = strcmp(PQgetvalue(r, i, off + 5), "open") == 0;
	a->started_ms = strtoll(PQgetvalue(r, i, off + 6), NULL, 10);
	a->opened_ms = strtoll(PQgetvalue(r, i, off + 7), NULL, 10);
	a->ended_ms = PQgetisnull(r, i, off + 8) ? 0 : strtoll(PQgetvalue(r, i, off + 8), NULL, 10);
	a->summary = PQgetvalue(r, i, off + 9);
	a->evidence = json_loads(PQgetvalue(r, i, off + 10), 0, &jerr);
	a->subject = PQgetisnull(r, i, off + 11) ? NULL : PQgetvalue(r, i, off + 11);
}

/* True when name (or "!name") is in the text[] literal list "{a,b}". */
static bool delivered_has(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	while (*p) {
		while (*p == '{' || *p == ',' || *p == '!')
			p++;
		const char *e = p;
		while (*e && *e != ',' && *e != '}')
			e++;
		if ((size_t)(e - p) == len && strncmp(p, name, len) == 0)
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

static int64_t am_ends_ms(const struct notify *n)
{
	return time_now_ms() + 4LL * n->app->cfg->notify_resend_s * 1000;
}

/* The body for receiver r: a new string the caller frees, NULL when out
 * of memory. */
static char *build_body(struct notify *n, const struct rstate *rs, const struct alert_rec *a,
			const char *event)
{
	json_t *j;
	char *s = NULL;

	if (rs->r.format == NOTIFY_ALERTMANAGER) {
		json_t *one = notify_am_alert(a, am_ends_ms(n), n->public_url);
		j = one ? json_pack("[o]", one) : NULL;
	} else if (rs->r.format == NOTIFY_SLACK) {
		j = notify_slack_body(a, event, n->public_url);
	} else {
		j = notify_webhook_body(a, event, n->public_url);
	}
	if (j)
		s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return s;
}

static bool mark_delivered(struct notify *n, int64_t ev, const char *name, bool gave_up)
{
	char id[24], tag[NOTIFY_NAME_MAX + 2];

	snprintf(id, sizeof(id), "%" PRId64, ev);
	snprintf(tag, sizeof(tag), "%s%s", gave_up ? "!" : "", name);
	const char *v[2] = { id, tag };
	return exec_ok(n, "could not record a delivery",
		       "UPDATE notify_outbox SET delivered = array_append(delivered, $2) WHERE id = $1", 2, v);
}

static bool mark_done(struct notify *n, int64_t ev, bool suppressed)
{
	char id[24];

	snprintf(id, sizeof(id), "%" PRId64, ev);
	const char *v[2] = { id, suppressed ? "t" : "f" };
	return exec_ok(n, "could not mark an event done",
		       "UPDATE notify_outbox SET done_at = now(), suppressed = $2::boolean WHERE id = $1", 2, v);
}

/* Queues an open event for each open alert whose every open event was held
 * back by a silence that is now over. */
static void requeue_unsilenced(struct notify *n)
{
	exec_ok(n, "could not queue alerts whose silence ended",
		"INSERT INTO notify_outbox (alert_id, event) SELECT a.id, 'open' FROM alerts a "
		"WHERE a.state = 'open' AND NOT " SILENCE_MATCH_SQL("a") " "
		"AND EXISTS (SELECT 1 FROM notify_outbox o WHERE o.alert_id = a.id AND o.event = 'open' "
		"  AND o.suppressed) "
		"AND NOT EXISTS (SELECT 1 FROM notify_outbox o WHERE o.alert_id = a.id AND o.event = 'open' "
		"  AND NOT o.suppressed)", 0, NULL);
}

/* Whether event ev of the row is held back rather than sent: its alert is
 * silenced now, or it is not an open and no open of its alert went out. */
static bool held_back(const char *event, bool silenced, bool opened)
{
	return silenced || (strcmp(event, "open") != 0 && !opened);
}

/* Goes through the pending events in order (NOTIFY_BATCH at a time):
 * held-back ones are marked done (suppressed), and ones that every
 * matching receiver has taken (delivered, or given up) are marked done.
 * Returns false on a database error. */
static bool sweep(struct notify *n)
{
	char lim[16], after[24] = "0";
	int rows;

	snprintf(lim, sizeof(lim), "%d", NOTIFY_BATCH);
	do {
		const char *v[2] = { after, lim };
		PGresult *r = PQexecParams(n->conn,
			"SELECT o.id, o.event, o.delivered::text, " SILENCE_MATCH_SQL("a") ", "
			OPEN_SENT_SQL ", a.id, a.kind, a.severity " OUTBOX_FROM_SQL
			"WHERE o.done_at IS NULL AND o.id > $1::bigint ORDER BY o.id LIMIT $2::int",
			2, NULL, v, NULL, NULL, 0);
		if (PQresultStatus(r) != PGRES_TUPLES_OK) {
			pq_log("could not read the outbox", n->conn, r);
			PQclear(r);
			return false;
		}
		rows = PQntuples(r);
		for (int i = 0; i < rows && !atomic_load(&n->stopping); i++) {
			int64_t ev = strtoll(PQgetvalue(r, i, 0), NULL, 10);
			const char *event = PQgetvalue(r, i, 1), *delivered = PQgetvalue(r, i, 2);
			bool silenced = PQgetvalue(r, i, 3)[0] == 't', opened = PQgetvalue(r, i, 4)[0] == 't';
			snprintf(after, sizeof(after), "%" PRId64, ev);
			if (held_back(event, silenced, opened)) {
				if (!mark_done(n, ev, true))
					break;
				metrics_notify(METRICS_NOTIFY_HELD_BACK);
				log_info("notify: %s of alert %s held back (%s)", event, PQgetvalue(r, i, 5),
					 silenced ? "silenced" : "its open was not notified");
				continue;
			}
			bool all = true;
			for (size_t k = 0; k < n->nr && all; k++)
				if (notify_receiver_matches(&n->rs[k].r, PQgetvalue(r, i, 6), PQgetvalue(r, i, 7)))
					all = delivered_has(delivered, n->rs[k].r.name);
			if (all && !mark_done(n, ev, false))
				break;
		}
		PQclear(r);
	} while (rows == NOTIFY_BATCH && !atomic_load(&n->stopping));
	return true;
}

/* Starts the next event receiver rs has not taken yet, in outbox order:
 * the first pending one that matches it and is not held back. Returns true
 * when a transfer started. */
static bool start_event(struct notify *n, struct rstate *rs)
{
	char lim[16], after[24] = "0";
	int rows;

	snprintf(lim, sizeof(lim), "%d", NOTIFY_BATCH);
	do {
		const char *v[3] = { rs->r.name, after, lim };
		PGresult *r = PQexecParams(n->conn,
			"SELECT o.id, o.event, " SILENCE_MATCH_SQL("a") ", "
			OPEN_SENT_SQL ", " ALERT_COLS " " OUTBOX_FROM_SQL
			"WHERE o.done_at IS NULL AND o.id > $2::bigint AND NOT ($1 = ANY(o.delivered) OR "
			"  '!' || $1 = ANY(o.delivered)) ORDER BY o.id LIMIT $3::int",
			3, NULL, v, NULL, NULL, 0);
		if (PQresultStatus(r) != PGRES_TUPLES_OK) {
			pq_log("could not read the outbox", n->conn, r);
			PQclear(r);
			return false;
		}
		rows = PQntuples(r);
		for (int i = 0; i < rows; i++) {
			int64_t ev = strtoll(PQgetvalue(r, i, 0), NULL, 10);
			const char *event = PQgetvalue(r, i, 1);
			snprintf(after, sizeof(after), "%" PRId64, ev);
			if (held_back(event, PQgetvalue(r, i, 2)[0] == 't', PQgetvalue(r, i, 3)[0] == 't') ||
			    !notify_receiver_matches(&rs->r, PQgetvalue(r, i, 7), PQgetvalue(r, i, 8)))
				continue;
			struct alert_rec a;
			alert_from_row(r, i, 4, &a);
			char *body = build_body(n, rs, &a, event);
			bool fleet = alert_is_fleet(&a);
			const char *what = fleet ? a.subject : a.cgroup;
			char *vis = what ? name_visible(what) : NULL;	/* for the log */
			snprintf(rs->what, sizeof(rs->what), "%s %s of %s%s%s (alert %" PRId64 ", event %" PRId64 ")",
				 event, a.kind, fleet ? "the fleet" : a.host, vis ? " " : "", vis ? vis : "", a.id, ev);
			free(vis);
			if (a.evidence)
				json_decref(a.evidence);
			PQclear(r);
			if (!body || notify_http_start(rs->http, n->multi, rs->r.url, body) < 0) {
				log_warn("notify: could not start the notification %s to %s", rs->what,
					 rs->r.name);
				rs->next_ms = mono_ms() + NOTIFY_BACKOFF_MIN_MS;
				return false;
			}
			rs->job = JOB_EVENT;
			rs->ev = ev;
			return true;
		}
		PQclear(r);
	} while (rows == NOTIFY_BATCH);
	return false;
}

/* An event transfer of rs ended with status (0: no answer, err why). */
static void event_done(struct notify *n, struct rstate *rs, long status, const char *err)
{
	if (status >= 200 && status <= 299) {
		log_info("notify: %s sent to %s", rs->what, rs->r.name);
		rs->fails = 0;
		rs->next_ms = 0;
		metrics_notify(METRICS_NOTIFY_SENT);
		mark_delivered(n, rs->ev, rs->r.name, false);
		return;
	}
	rs->fails++;
	if (!notify_http_retryable(status) || rs->fails >= n->app->cfg->notify_retries) {
		log_warn("notify: gave up the notification %s to %s after %d attempt(s): %s", rs->what,
			 rs->r.name, rs->fails, err);
		rs->fails = 0;
		rs->next_ms = 0;
		metrics_notify(METRICS_NOTIFY_GAVE_UP);
		mark_delivered(n, rs->ev, rs->r.name, true);
		return;
	}
	long delay = notify_backoff_ms(rs->fails, rnd01(n));
	log_warn("notify: the notification %s to %s failed (%s); retrying in %.1f s (attempt %d of %d)",
		 rs->what, rs->r.name, err, (double)delay / 1000.0, rs->fails + 1,
		 n->app->cfg->notify_retries);
	rs->next_ms = mono_ms() + delay;
	metrics_notify(METRICS_NOTIFY_RETRY);
}

/* Gives every Alertmanager receiver the current open, unsilenced alerts
 * whose open went out, as bodies of RESEND_CHUNK alerts queued behind its
 * events (a receiver backing off gets none: it is re-sent next time). */
static void queue_resend(struct notify *n)
{
	bool any = false;

	for (size_t k = 0; k < n->nr; k++)
		any = any || n->rs[k].r.format == NOTIFY_ALERTMANAGER;
	if (!any)
		return;
	PGresult *r = PQexecParams(n->conn,
		"SELECT " ALERT_COLS " FROM alerts a WHERE a.state = 'open' AND NOT " SILENCE_MATCH_SQL("a") " "
		"AND EXISTS (SELECT 1 FROM notify_outbox o WHERE o.alert_id = a.id AND o.event = 'open' "
		"  AND NOT o.suppressed AND o.done_at IS NOT NULL) ORDER BY a.id LIMIT $1::int",
		1, NULL, (const char *const[]){ RESEND_MAX_ALERTS_STR }, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		pq_log("could not list the open alerts", n->conn, r);
		PQclear(r);
		return;
	}
	int64_t ends = am_ends_ms(n);
	for (size_t k = 0; k < n->nr; k++) {
		struct rstate *rs = &n->rs[k];
		if (rs->r.format != NOTIFY_ALERTMANAGER || rs->next_ms > mono_ms())
			continue;
		for (size_t c = 0; c < rs->nresend; c++)	/* a newer list replaces one not sent */
			free(rs->resend[c]);
		rs->nresend = 0;
		json_t *arr = NULL;
		for (int i = 0; i <= PQntuples(r); i++) {
			if (arr && (i == PQntuples(r) || json_array_size(arr) == RESEND_CHUNK)) {
				char *body = json_array_size(arr) ? json_dumps(arr, JSON_COMPACT) : NULL;
				if (body && rs->nresend < RESEND_MAX_CHUNKS) {
					rs->resend_count[rs->nresend] = json_array_size(arr);
					rs->resend[rs->nresend++] = body;
				} else {
					free(body);
				}
				json_decref(arr);
				arr = NULL;
			}
			if (i == PQntuples(r))
				break;
			struct alert_rec a;
			alert_from_row(r, i, 0, &a);
			if (notify_receiver_matches(&rs->r, a.kind, a.severity) && (arr || (arr = json_array())))
				json_array_append_new(arr, notify_am_alert(&a, ends, n->public_url));
			if (a.evidence)
				json_decref(a.evidence);
		}
		json_decref(arr);
	}
	PQclear(r);
}

/* Starts rs's next queued re-send. True when a transfer started. */
static bool start_resend(struct notify *n, struct rstate *rs)
{
	if (!rs->nresend)
		return false;
	char *body = rs->resend[0];
	size_t count = rs->resend_count[0];
	memmove(rs->resend, rs->resend + 1, (rs->nresend - 1) * sizeof(*rs->resend));
	memmove(rs->resend_count, rs->resend_count + 1, (rs->nresend - 1) * sizeof(*rs->resend_count));
	rs->nresend--;
	if (notify_http_start(rs->http, n->multi, rs->r.url, body) < 0)
		return false;
	rs->job = JOB_RESEND;
	snprintf(rs->what, sizeof(rs->what), "%zu open alert(s)", count);
	return true;
}

/* Gives each idle receiver that is not backing off its next transfer:
 * its next event, else a queued re-send. */
static void start_idle(struct notify *n)
{
	int64_t now = mono_ms();

	for (size_t k = 0; k < n->nr && !atomic_load(&n->stopping); k++) {
		struct rstate *rs = &n->rs[k];
		if (rs->job != JOB_NONE || rs->next_ms > now)
			continue;
		if (!start_event(n, rs))
			start_resend(n, rs);
	}
}

/* Handles the transfers curl reports finished. */
static void finish_done(struct notify *n)
{
	struct notify_http *hs[NOTIFY_MAX_RECEIVERS];
	CURLMsg *msg;
	int left;

	for (size_t k = 0; k < n->nr; k++)
		hs[k] = n->rs[k].http;
	while ((msg = curl_multi_info_read(n->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		int k = notify_http_find(hs, n->nr, msg->easy_handle);
		if (k < 0)
			continue;
		struct rstate *rs = &n->rs[k];
		char err[300] = "";
		long status = notify_http_done(rs->http, msg->data.result, err, sizeof(err));
		enum job job = rs->job;
		rs->job = JOB_NONE;
		n->dirty = true;
		if (job == JOB_EVENT) {
			event_done(n, rs, status, err);
		} else if (status >= 200 && status <= 299) {
			log_debug("notify: re-sent %s to %s", rs->what, rs->r.name);
			metrics_notify(METRICS_NOTIFY_RESENT);
		} else {
			log_warn("notify: could not re-send %s to %s: %s", rs->what, rs->r.name, err);
			metrics_notify(METRICS_NOTIFY_RESEND_FAILED);
		}
	}
}

/* Drops every running transfer and queued re-send (stopping, or the lock
 * is lost: another server sends now; what was running goes again). */
static void abort_all(struct notify *n)
{
	for (size_t k = 0; k < n->nr; k++) {
		struct rstate *rs = &n->rs[k];
		notify_http_abort(rs->http);
		rs->job = JOB_NONE;
		for (size_t c = 0; c < rs->nresend; c++)
			free(rs->resend[c]);
		rs->nresend = 0;
	}
}

static void gc(struct notify *n)
{
	char days[16];

	snprintf(days, sizeof(days), "%d", NOTIFY_KEEP_DAYS);
	const char *v[1] = { days };
	exec_ok(n, "could not delete old outbox rows",
		"DELETE FROM notify_outbox o USING alerts a WHERE a.id = o.alert_id AND a.state = 'resolved' "
		"AND o.done_at < now() - $1::int * interval '1 day'", 1, v);
	/* events of alerts deleted since (a forgotten host) */
	exec_ok(n, "could not delete orphaned outbox rows",
		"DELETE FROM notify_outbox o WHERE NOT EXISTS (SELECT 1 FROM alerts a WHERE a.id = o.alert_id)",
		0, NULL);
}

/* Runs the transfers for up to ms, returning early for a wake byte, a
 * NOTIFY (when listening) or a finished transfer. */
static void wait_for(struct notify *n, int64_t ms)
{
	struct curl_waitfd fds[2] = { { n->wake[0], CURL_WAIT_POLLIN, 0 }, { -1, CURL_WAIT_POLLIN, 0 } };
	unsigned nfds = 1;
	char buf[64];
	int running = 0;

	if (ms < 0)
		ms = 0;
	if (n->conn && n->leader && PQsocket(n->conn) >= 0)
		fds[nfds++].fd = PQsocket(n->conn);
	curl_multi_poll(n->multi, fds, nfds, (int)ms, NULL);
	if (fds[0].revents & CURL_WAIT_POLLIN)
		while (read(n->wake[0], buf, sizeof(buf)) > 0)
			;
	curl_multi_perform(n->multi, &running);
	finish_done(n);
	if (n->conn && n->leader) {
		PGnotify *note;
		PQconsumeInput(n->conn);
		while ((note = PQnotifies(n->conn))) {
			PQfreemem(note);
			n->dirty = true;	/* an alert changed: new events */
		}
	}
}

static void *run(void *arg)
{
	struct notify *n = arg;

	/* the store's migrations create the tables: wait for it */
	while (!atomic_load(&n->stopping) && !app_store(n->app))
		wait_for(n, 200);
	while (!atomic_load(&n->stopping)) {
		if (!ensure_leader(n)) {
			abort_all(n);
			wait_for(n, NOTIFY_POLL_MS * 2);
			continue;
		}
		int64_t now = mono_ms();
		if (n->dirty || now >= n->next_look_ms) {
			n->dirty = false;
			n->next_look_ms = now + NOTIFY_POLL_MS;
			requeue_unsilenced(n);
			sweep(n);
		}
		if (now >= n->next_resend_ms) {
			queue_resend(n);
			n->next_resend_ms = now + (int64_t)n->app->cfg->notify_resend_s * 1000;
		}
		start_idle(n);
		if (now >= n->next_gc_ms) {
			gc(n);
			n->next_gc_ms = now + 3600 * 1000;
		}
		/* until the next look-around, re-send or retry; a finished
		 * transfer or a NOTIFY ends the wait earlier */
		int64_t until = n->next_look_ms;
		if (n->next_resend_ms < until)
			until = n->next_resend_ms;
		for (size_t k = 0; k < n->nr; k++)
			if (n->rs[k].job == JOB_NONE && n->rs[k].next_ms > now && n->rs[k].next_ms < until)
				until = n->rs[k].next_ms;
		if (!n->dirty)
			wait_for(n, until - mono_ms());
	}
	abort_all(n);
	drop_conn(n);
	return NULL;
}

/* http://LISTEN, with the machine's name for a wildcard address. */
static char *default_public_url(const char *listen)
{
	char *u = NULL;

	if (strncmp(listen, "0.0.0.0:", 8) == 0 || strncmp(listen, "[::]:", 5) == 0 || listen[0] == ':') {
		char hn[256];
		if (gethostname(hn, sizeof(hn)) == 0) {
			hn[sizeof(hn) - 1] = '\0';
			if (asprintf(&u, "http://%s:%s", hn, strrchr(listen, ':') + 1) < 0)
				u = NULL;
			return u;
		}
	}
	if (asprintf(&u, "http://%s", listen) < 0)
		u = NULL;
	return u;
}

static void free_all(struct notify *n)
{
	for (size_t k = 0; k < n->nr; k++) {
		for (size_t c = 0; c < n->rs[k].nresend; c++)
			free(n->rs[k].resend[c]);
		notify_http_free(n->rs[k].http);
		notify_receiver_release(&n->rs[k].r);
	}
	if (n->multi)
		curl_multi_cleanup(n->multi);
	free(n->public_url);
	if (n->wake[0] >= 0)
		close(n->wake[0]);
	if (n->wake[1] >= 0)
		close(n->wake[1]);
	free(n);
}

struct notify *notify_start(struct app *app, char *err, size_t errlen)
{
	const struct server_config *cfg = app->cfg;
	struct notify *n = calloc(1, sizeof(*n));

	if (!n) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	n->app = app;
	n->wake[0] = n->wake[1] = -1;
	atomic_init(&n->stopping, false);
	for (size_t i = 0; i < cfg->nwebhooks && i < NOTIFY_MAX_RECEIVERS; i++) {
		if (notify_receiver_parse(cfg->webhooks[i], &n->rs[i].r, err, errlen) < 0) {
			free_all(n);
			return NULL;
		}
		for (size_t k = 0; k < i; k++) {
			if (strcmp(n->rs[k].r.name, n->rs[i].r.name) == 0) {
				snprintf(err, errlen, "--webhook: two receivers named %s (give name=)",
					 n->rs[i].r.name);
				n->nr = i + 1;
				free_all(n);
				return NULL;
			}
		}
		n->nr = i + 1;
	}
	n->public_url = cfg->public_url ? strdup(cfg->public_url) : default_public_url(cfg->listen);
	if (getrandom(&n->rnd, sizeof(n->rnd), 0) != sizeof(n->rnd) || n->rnd == 0)
		n->rnd = (uint64_t)time(NULL) | 1;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "could not initialise libcurl");
		free_all(n);
		return NULL;
	}
	bool http_ok = (n->multi = curl_multi_init()) != NULL;
	for (size_t k = 0; k < n->nr && http_ok; k++)
		http_ok = (n->rs[k].http = notify_http_new(cfg->notify_timeout_s)) != NULL;
	if (!n->public_url || !http_ok || pipe2(n->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(err, errlen, "could not start the notifier: %s", n->public_url && http_ok ?
			 strerror(errno) : "out of memory");
		free_all(n);
		curl_global_cleanup();
		return NULL;
	}
	if (pthread_create(&n->thread, NULL, run, n) != 0) {
		snprintf(err, errlen, "could not start the notifier thread");
		free_all(n);
		curl_global_cleanup();
		return NULL;
	}
	return n;
}

void notify_stop(struct notify *n)
{
	if (!n)
		return;
	atomic_store(&n->stopping, true);
	if (write(n->wake[1], "x", 1) < 0)
		log_debug("notify: could not wake the notifier: %s", strerror(errno));
	pthread_join(n->thread, NULL);
	free_all(n);
	curl_global_cleanup();
}
