/* detect.c - the detector engine inside the server (detect.h): per host in
 * an ingest batch, lock its detector_state row, load the state, feed the
 * samples newer than it, write alert changes and the new state, all in the
 * ingest transaction (so samples, alerts and state commit or roll back
 * together).
 *
 * No state is cached in memory: the row lock already reads the committed
 * state, and a cache would need a version check because a transaction can
 * roll back after the feed. Loading costs microseconds per host per request.
 */
#include "detect.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert_store.h"
#include "detect_engine.h"
#include "overrides_store.h"

struct detect_engine {
	atomic_llong fed, skipped, actions, state_resets;
};

struct detect_engine *detect_engine_new(void)
{
	return calloc(1, sizeof(struct detect_engine));
}

void detect_engine_free(struct detect_engine *eng)
{
	free(eng);
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

/* Feeds fresh[from..to) (one host, ts order) with the operator's overrides. */
static int feed_host(struct detect_engine *eng, PGconn *conn, const struct sample *const *fresh,
		     size_t from, size_t to, const struct ovr_set *ovr, char *err, size_t errlen)
{
	const char *host = fresh[from]->host;
	unsigned char *buf = NULL;
	size_t len = 0;
	int64_t last_ts = 0, first_fed = 0;
	bool silent = false;
	char lerr[160];
	struct emit_ctx ec = { eng, conn, err, errlen };

	if (alert_store_lock_state(conn, host, &buf, &len, &last_ts, &silent, err, errlen) < 0)
		return -1;
	struct det_host *h = det_host_load(host, buf, len, lerr, sizeof(lerr));
	free(buf);
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
		int r = det_host_feed_tuned(h, fresh[i], ovr, emit_sql, &ec);
		if (r < 0) {
			if (!err[0])
				snprintf(err, errlen, "could not run the detectors: out of memory");
			det_host_free(h);
			return -1;
		}
		if (r == 1) {
			atomic_fetch_add(&eng->fed, 1);
			if (!first_fed)
				first_fed = fresh[i]->ts_ms;
		} else {
			atomic_fetch_add(&eng->skipped, 1);
		}
	}
	int rc = 0;
	if (first_fed) {
		if ((silent && alert_store_host_back(conn, host, first_fed, err, errlen) < 0) ||
		    det_host_save(h, &buf, &len) < 0) {
			if (!err[0])
				snprintf(err, errlen, "could not save detector state: out of memory");
			rc = -1;
		} else {
			rc = alert_store_save_state(conn, host, buf, len, det_host_last_ts(h),
						    det_host_interval_ms(h), err, errlen);
			free(buf);
		}
	}
	det_host_free(h);
	return rc;
}

int detect_store_hook(void *ctx, PGconn *conn, const struct sample *const *fresh, size_t nfresh,
		      char *err, size_t errlen)
{
	struct detect_engine *eng = ctx;
	struct ovr_set ovr;
	size_t i = 0;
	int rc = 0;

	if (errlen)
		err[0] = '\0';
	if (!nfresh)
		return 0;
	/* read in this transaction: a rule changed before it applies from now on
	 * (one small query per ingest transaction) */
	if (ovr_store_load(conn, &ovr, err, errlen) < 0)
		return -1;
	while (i < nfresh) {
		size_t j = i + 1;
		while (j < nfresh && strcmp(fresh[j]->host, fresh[i]->host) == 0)
			j++;
		if (feed_host(eng, conn, fresh, i, j, &ovr, err, errlen) < 0) {
			rc = -1;
			break;
		}
		i = j;
	}
	ovr_set_release(&ovr);
	return rc;
}

int detect_tick(struct detect_engine *eng, PGconn *conn, int64_t now_ms, char *err, size_t errlen)
{
	int n = 0;

	(void)eng;
	return alert_store_tick_silent(conn, now_ms, &n, err, errlen);
}
