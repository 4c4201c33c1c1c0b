/* detect.c - the detector engine inside the server (detect.h), as the
 * store's hook (store.h): each host's detector state lives in the store's
 * memory of the hosts this server owns; the samples of an ingest
 * transaction are fed to it there and the alert changes written in that
 * transaction (so samples and alerts commit or roll back together). The
 * store checkpoints the states (hk_save) and, when it takes a host over,
 * loads the checkpoint (hk_load) and replays the samples stored since
 * (hk_replay), which only looks up the alerts they opened back then: the
 * state ends where an uninterrupted server's would be.
 *
 * The operators' overrides are cached: they are read again only when
 * detector_overrides_version (060_overrides_version.sql, read in each
 * ingest transaction) moved, so a change applies from the next
 * transaction on, from any server.
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
	atomic_llong fed, skipped, actions, state_resets, ovr_loads, replayed;
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
 * version of -1 (unknown) is never trusted; -2 takes whatever is cached. The caller gives the set back
 * with ovr_put. NULL with err written on failure. */
static struct ovr_cached *ovr_get(struct detect_engine *eng, PGconn *conn, int64_t version, char *err,
				  size_t errlen)
{
	pthread_mutex_lock(&eng->mu);
	struct ovr_cached *o = eng->ovr;
	if (o && ((version >= 0 && o->version == version) || version == -2)) {
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
	int32_t host_id;	/* of the host being fed */
};

static int emit_sql(void *ctx, struct det_action *a)
{
	struct emit_ctx *e = ctx;

	atomic_fetch_add(&e->eng->actions, 1);
	return alert_store_apply(e->conn, e->host_id, a, e->err, e->errlen);
}

/* A replayed sample's action was written when the sample first arrived:
 * only the id of the alert an open made is needed (the state refers to
 * it). An alert that is not there (forgotten, or written by a build whose
 * detectors differed) is opened now, as a live feed would. */
static int emit_replay(void *ctx, struct det_action *a)
{
	struct emit_ctx *e = ctx;

	if (a->type != DA_OPEN)
		return 0;
	if (alert_store_find(e->conn, e->host_id, a, &a->alert_id, e->err, e->errlen) < 0)
		return -1;
	return a->alert_id ? 0 : emit_sql(ctx, a);
}

/* ---- the store's hook (store.h): per-host state in the store's memory ---- */

static void *hk_load(void *ctx, const char *host, const unsigned char *buf, size_t len, char *err, size_t errlen)
{
	struct detect_engine *eng = ctx;
	char lerr[160];
	struct det_host *h = det_host_load(host, buf, len, lerr, sizeof(lerr));

	if (!h) {
		/* A state this build cannot read (format change) or corrupt:
		 * start afresh. Open alerts are adopted by the unique open index. */
		fprintf(stderr, "vmscope: %s; starting the detectors of %s afresh\n", lerr, host);
		atomic_fetch_add(&eng->state_resets, 1);
		if (!(h = det_host_new(host)))
			snprintf(err, errlen, "could not run the detectors: out of memory");
	}
	return h;
}

static int hk_save(void *ctx, const void *state, unsigned char **buf, size_t *len, int64_t *interval_ms)
{
	(void)ctx;
	*interval_ms = det_host_interval_ms(state);
	return det_host_save(state, buf, len);
}

static void hk_release(void *ctx, void *state)
{
	(void)ctx;
	det_host_free(state);
}

/* Feeds samples to h at now_ms (the server's clock); *first_fed gets the
 * first one fed (0: none). A state ahead of the server's clock (a sample
 * from the future) is re-anchored on the samples arriving now. */
static int feed(struct detect_engine *eng, struct det_host *h, const struct sample *const *s, size_t n,
		const struct ovr_set *ovr, det_emit_fn emit, struct emit_ctx *ec, int64_t now_ms, int64_t *first_fed)
{
	*first_fed = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t last = det_host_last_ts(h), ts = s[i]->ts_ms;
		if (ts <= last && last > now_ms + DETECT_AHEAD_MS && ts <= now_ms + DETECT_AHEAD_MS) {
			log_warn("detectors of %s: their state was %lld s ahead of the server's clock "
				 "(a sample from the future); re-anchored on the samples arriving now",
				 s[i]->host, (long long)((last - now_ms) / 1000));
			det_host_reanchor(h, ts);
		}
		int r = det_host_feed_tuned(h, s[i], ovr, emit, ec);
		if (r < 0) {
			if (!ec->err[0])
				snprintf(ec->err, ec->errlen, "could not run the detectors: out of memory");
			return -1;
		}
		if (r == 1) {
			atomic_fetch_add(&eng->fed, 1);
			if (!*first_fed)
				*first_fed = s[i]->ts_ms;
		} else {
			atomic_fetch_add(&eng->skipped, 1);
		}
	}
	return 0;
}

static int hk_feed(void *ctx, PGconn *conn, const struct store_hook_host *hosts, size_t nhosts, int64_t version,
		   char *err, size_t errlen)
{
	struct detect_engine *eng = ctx;
	struct emit_ctx ec = { eng, conn, err, errlen, 0 };
	struct det_host_back *backs = calloc(nhosts, sizeof(*backs));
	struct ovr_cached *ovr = NULL;
	size_t nback = 0;
	int rc = -1;

	if (errlen)
		err[0] = '\0';
	if (!backs) {
		snprintf(err, errlen, "could not run the detectors: out of memory");
		return -1;
	}
	if (!(ovr = ovr_get(eng, conn, version, err, errlen)))
		goto out;
	for (size_t k = 0; k < nhosts; k++) {
		int64_t first_fed;
		if (!hosts[k].state)
			continue;
		ec.host_id = hosts[k].host_id;
		if (feed(eng, hosts[k].state, hosts[k].fresh, hosts[k].n, &ovr->set, emit_sql, &ec, hosts[k].seen_ms,
			 &first_fed) < 0)
			goto out;
		/* back after host_silent: resolved at this arrival */
		if (hosts[k].silent)
			backs[nback++] = (struct det_host_back){ hosts[k].host, hosts[k].host_id, hosts[k].seen_ms };
	}
	if (alert_store_hosts_back(conn, backs, nback, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	ovr_put(eng, ovr);
	free(backs);
	return rc;
}

static int hk_replay(void *ctx, PGconn *conn, void *state, int32_t host_id, const struct sample *s, char *err,
		     size_t errlen)
{
	struct detect_engine *eng = ctx;
	struct emit_ctx ec = { eng, conn, err, errlen, host_id };
	int64_t first_fed;

	if (errlen)
		err[0] = '\0';
	/* the overrides as they are now (the cached set, read if none) */
	struct ovr_cached *ovr = ovr_get(eng, conn, -2, err, errlen);
	if (!ovr)
		return -1;
	/* its arrival was before now: a state ahead of now was ahead then */
	int rc = feed(eng, state, &s, 1, &ovr->set, emit_replay, &ec, time_now_ms(), &first_fed);
	ovr_put(eng, ovr);
	atomic_fetch_add(&eng->replayed, 1);
	return rc;
}

/* The clock offset's window (liveness.h): this arrival and the newest
 * sample it brought, over a window that grows with the host's interval. */
static void hk_arrive(void *ctx, const void *state, int64_t now_ms, int64_t newest_ts_ms, struct host_lag *lag)
{
	(void)ctx;
	host_lag_observe(lag, now_ms, newest_ts_ms, liveness_window(state ? det_host_interval_ms(state) : 0));
}

void detect_store_hook(struct detect_engine *eng, struct store_hook *out)
{
	*out = (struct store_hook){ .ctx = eng, .load = hk_load, .save = hk_save, .release = hk_release,
				    .feed = hk_feed, .replay = hk_replay, .arrive = hk_arrive };
}

int detect_tick(struct detect_engine *eng, PGconn *conn, int64_t now_ms, bool judge_silence, char *err,
		size_t errlen)
{
	(void)eng;
	return liveness_tick(conn, now_ms, judge_silence, err, errlen);
}
