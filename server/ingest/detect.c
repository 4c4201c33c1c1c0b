/* detect.c - the detector engine inside the server (detect.h): for the
 * hosts of an ingest transaction, lock their detector_state rows, load the
 * states, feed the samples newer than them, write alert changes and the new
 * states, all in the ingest transaction (so samples, alerts and state commit
 * or roll back together).
 *
 * Set-based: whatever the number of hosts in the transaction (group commit
 * puts many requests in one), the states are locked and read with one
 * statement and written back with one (alert_store.c); only alert changes,
 * which are rare, go one by one.
 *
 * No state is cached in memory: the row lock already reads the committed
 * state, and a cache would need a version check because a transaction can
 * roll back after the feed. The operators' overrides ARE cached: they are
 * read again only when detector_overrides_version (060_overrides_version.sql,
 * read by the lock statement) moved, so a change still applies from the
 * next transaction on, from any server.
 */
#include "detect.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert_store.h"
#include "detect_engine.h"
#include "liveness.h"
#include "log.h"
#include "overrides_store.h"
#include "timeparse.h"

/* A state more than this ahead of the server's clock was anchored by a
 * sample from the future (a wrong clock, up to INGEST_MAX_SKEW_MS ahead,
 * or a forged one): the first sample behind it that is not itself that far
 * ahead re-anchors the host's detectors instead of waiting behind it
 * (CONTRACT.md §2). NTP keeps honest agents' clocks within a second; any
 * more room is time one forged sample hides a host's samples behind it
 * (a thrash of 100 s behind a sample 110 s ahead raised no alert). A host
 * whose clock is further ahead than this is never re-anchored: its own
 * samples are that far ahead too. */
#define DETECT_AHEAD_MS (5 * 1000)

/* The overrides as last read, shared by the transactions that use them. */
struct ovr_cached {
	struct ovr_set set;
	int64_t version;
	int refs;		/* under detect_engine.mu */
};

struct detect_engine {
	atomic_llong fed, skipped, actions, state_resets, ovr_loads;
	pthread_mutex_t mu;
	struct ovr_cached *ovr;	/* NULL until first read */
};

struct detect_engine *detect_engine_new(void)
{
	struct detect_engine *eng = calloc(1, sizeof(struct detect_engine));
	if (eng && pthread_mutex_init(&eng->mu, NULL) != 0) {
		free(eng);
		return NULL;
	}
	return eng;
}

static void ovr_put(struct detect_engine *eng, struct ovr_cached *o)
{
	if (!o)
		return;
	pthread_mutex_lock(&eng->mu);
	bool last = --o->refs == 0;
	pthread_mutex_unlock(&eng->mu);
	if (last) {
		ovr_set_release(&o->set);
		free(o);
	}
}

void detect_engine_free(struct detect_engine *eng)
{
	if (!eng)
		return;
	ovr_put(eng, eng->ovr);
	pthread_mutex_destroy(&eng->mu);
	free(eng);
}

long long detect_engine_ovr_loads(struct detect_engine *eng)
{
	return atomic_load(&eng->ovr_loads);
}

/* The overrides at version (read by the caller's transaction): the cached
 * set when it is that version, else read now through conn and cached. A
 * version of -1 (unknown) is never trusted. The caller gives the set back
 * with ovr_put. NULL with err written on failure. */
static struct ovr_cached *ovr_get(struct detect_engine *eng, PGconn *conn, int64_t version, char *err,
				  size_t errlen)
{
	pthread_mutex_lock(&eng->mu);
	struct ovr_cached *o = eng->ovr;
	if (o && version >= 0 && o->version == version) {
		o->refs++;
		pthread_mutex_unlock(&eng->mu);
		return o;
	}
	pthread_mutex_unlock(&eng->mu);
	if (!(o = calloc(1, sizeof(*o)))) {
		snprintf(err, errlen, "could not read overrides: out of memory");
		return NULL;
	}
	if (ovr_store_load(conn, &o->set, err, errlen) < 0) {
		free(o);
		return NULL;
	}
	atomic_fetch_add(&eng->ovr_loads, 1);
	o->version = version;
	o->refs = 1;
	if (version < 0)
		return o;
	pthread_mutex_lock(&eng->mu);
	struct ovr_cached *old = NULL;
	/* keep the newest: a slower transaction may bring an older version */
	if (!eng->ovr || eng->ovr->version < version) {
		old = eng->ovr;
		eng->ovr = o;
		o->refs++;
	}
	pthread_mutex_unlock(&eng->mu);
	ovr_put(eng, old);
	return o;
}

struct emit_ctx {
	struct detect_engine *eng;
	PGconn *conn;
	char *err;
	size_t errlen;
};

static int emit_sql(void *ctx, struct det_action *a)
{
	struct emit_ctx *e = ctx;

	atomic_fetch_add(&e->eng->actions, 1);
	return alert_store_apply(e->conn, a, e->err, e->errlen);
}

/* Feeds fresh[from..to) (one host, ts order) to the state in row with the
 * operator's overrides. *save gets the new state (save->buf malloc'd),
 * with this arrival, and it returns 1; -1 on error. */
static int feed_host(struct detect_engine *eng, PGconn *conn, const struct sample *const *fresh,
		     size_t from, size_t to, const struct det_state_row *row, const struct ovr_set *ovr,
		     int64_t now_ms, struct det_state_save *save, int64_t *first_fed, char *err, size_t errlen)
{
	const char *host = fresh[from]->host;
	char lerr[160];
	struct emit_ctx ec = { eng, conn, err, errlen };

	*first_fed = 0;
	struct det_host *h = det_host_load(host, row->buf, row->len, lerr, sizeof(lerr));
	if (!h) {
		/* A state this build cannot read (format change) or corrupt: start
		 * afresh. Open alerts are adopted by the unique open index. */
		fprintf(stderr, "vmscope: %s; starting the detectors of %s afresh\n", lerr, host);
		atomic_fetch_add(&eng->state_resets, 1);
		h = det_host_new(host);
		if (!h) {
			snprintf(err, errlen, "could not run the detectors: out of memory");
			return -1;
		}
	}
	for (size_t i = from; i < to; i++) {
		int64_t last = det_host_last_ts(h), ts = fresh[i]->ts_ms;
		if (ts <= last && last > now_ms + DETECT_AHEAD_MS && ts <= now_ms + DETECT_AHEAD_MS) {
			log_warn("detectors of %s: their state was %lld s ahead of the server's clock "
				 "(a sample from the future); re-anchored on the samples arriving now",
				 host, (long long)((last - now_ms) / 1000));
			det_host_reanchor(h, ts);
		}
		int r = det_host_feed_tuned(h, fresh[i], ovr, emit_sql, &ec);
		if (r < 0) {
			if (!err[0])
				snprintf(err, errlen, "could not run the detectors: out of memory");
			det_host_free(h);
			return -1;
		}
		if (r == 1) {
			atomic_fetch_add(&eng->fed, 1);
			if (!*first_fed)
				*first_fed = fresh[i]->ts_ms;
		} else {
			atomic_fetch_add(&eng->skipped, 1);
		}
	}
	/* Saved even when no sample was fed (all older than the state: a
	 * clock stepped back): the host was heard from all the same, and its
	 * arrival and clock window must move, or it would look silent. */
	int rc = 0;
	{
		unsigned char *buf = NULL;
		size_t len = 0;
		if (det_host_save(h, &buf, &len) < 0) {
			snprintf(err, errlen, "could not save detector state: out of memory");
			rc = -1;
		} else {
			*save = (struct det_state_save){ host, buf, len, det_host_last_ts(h), det_host_interval_ms(h),
							 now_ms, row->lag };
			/* the clock offset's window: this arrival and its newest sample */
			host_lag_observe(&save->lag, now_ms, fresh[to - 1]->ts_ms,
					 liveness_window(det_host_interval_ms(h)));
			rc = 1;
		}
	}
	det_host_free(h);
	return rc;
}

int detect_store_hook(void *ctx, PGconn *conn, const struct sample *const *fresh, size_t nfresh,
		      char *err, size_t errlen)
{
	struct detect_engine *eng = ctx;
	struct det_state_row *rows = NULL;
	struct det_state_save *saves = NULL;
	struct det_host_back *backs = NULL;
	size_t *start = NULL, nh = 0, nsave = 0, nback = 0;
	struct ovr_cached *ovr = NULL;
	int64_t version = -1;
	int rc = -1;

	if (errlen)
		err[0] = '\0';
	if (!nfresh)
		return 0;
	/* the hosts, in the callers' (host, ts) order */
	rows = calloc(nfresh, sizeof(*rows));
	saves = calloc(nfresh, sizeof(*saves));
	backs = calloc(nfresh, sizeof(*backs));
	start = calloc(nfresh + 1, sizeof(*start));
	if (!rows || !saves || !backs || !start) {
		snprintf(err, errlen, "could not run the detectors: out of memory");
		goto out;
	}
	for (size_t i = 0; i < nfresh; i++) {
		if (i && strcmp(fresh[i]->host, fresh[i - 1]->host) == 0)
			continue;
		start[nh] = i;
		rows[nh++].host = fresh[i]->host;
	}
	start[nh] = nfresh;
	if (alert_store_lock_states(conn, rows, nh, &version, err, errlen) < 0) {
		nh = 0;	/* nothing allocated */
		goto out;
	}
	if (!(ovr = ovr_get(eng, conn, version, err, errlen)))
		goto out;
	int64_t now = time_now_ms();	/* these samples' arrival */
	for (size_t k = 0; k < nh; k++) {
		int64_t first_fed;
		int fr = feed_host(eng, conn, fresh, start[k], start[k + 1], &rows[k], &ovr->set, now, &saves[nsave],
				   &first_fed, err, errlen);
		if (fr < 0)
			goto out;
		if (fr == 0)
			continue;
		nsave++;
		if (rows[k].silent)
			backs[nback++] = (struct det_host_back){ rows[k].host, now };
	}
	if (alert_store_hosts_back(conn, backs, nback, err, errlen) < 0 ||
	    alert_store_save_states(conn, saves, nsave, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	ovr_put(eng, ovr);
	for (size_t k = 0; k < nh; k++)
		free(rows[k].buf);
	for (size_t k = 0; k < nsave; k++)
		free((void *)saves[k].buf);
	free(rows);
	free(saves);
	free(backs);
	free(start);
	return rc;
}

int detect_hosts_heard(void *ctx, PGconn *conn, const char *const *hosts, size_t n, char *err, size_t errlen)
{
	(void)ctx;
	return alert_store_hosts_heard(conn, hosts, n, time_now_ms(), err, errlen);
}

int detect_tick(struct detect_engine *eng, PGconn *conn, int64_t now_ms, bool judge_silence, char *err,
		size_t errlen)
{
	(void)eng;
	return liveness_tick(conn, now_ms, judge_silence, err, errlen);
}
