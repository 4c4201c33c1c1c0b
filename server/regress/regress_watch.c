/* regress_watch.c - the kernel-regression watch thread (see regress_watch.h). */
#include "regress_watch.h"

#include "log.h"
#include "regress_run.h"
#include "regress_store.h"
#include "timeparse.h"
#include "worker.h"

#include <stdlib.h>
#include <time.h>

struct regress_watch {
	struct app *app;
	struct worker w;
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One attempt: the lock, the pace, the run. */
static void attempt(struct regress_watch *rw, struct store *st)
{
	const struct server_config *cfg = rw->app->cfg;
	struct regress_settings s = { .window_ms = (int64_t)cfg->regression_window_s * 1000,
				      .min_hosts = cfg->regression_min_hosts, .stratify = cfg->regression_stratify };
	char err[512] = "";
	bool got = false;
	int64_t since_run = -1;
	char *pinned = NULL;
	json_t *report = NULL;
	PGconn *c = store_conn_get(st);

	if (!c) {
		log_debug("regression watch skipped: database unreachable");
		return;
	}
	int rc = regress_store_try_lock(c, &got, err, sizeof(err));
	if (rc != STORE_OK || !got)
		goto out;
	rc = regress_store_state(c, &pinned, &since_run, err, sizeof(err));
	free(pinned);
	/* a run by any server less than an interval ago (a little slack for
	 * the attempts' own timing) */
	if (rc == STORE_OK && (since_run < 0 || since_run >= (int64_t)cfg->regression_every_s * 1000 - 500)) {
		rc = regress_run(st, c, &s, time_now_ms(), &report, err, sizeof(err));
		if (rc == STORE_OK)
			log_debug("regression watch: run done");
		json_decref(report);
	}
	char e2[128];
	if (regress_store_unlock(c, e2, sizeof(e2)) != STORE_OK && rc == STORE_OK) {
		rc = STORE_EUNAVAIL;
		snprintf(err, sizeof(err), "%s", e2);
	}
out:
	if (rc != STORE_OK)
		log_warn("regression watch failed: %s", err);
	store_conn_put(st, c, PQstatus(c) != CONNECTION_OK);
}

static void *run(void *arg)
{
	struct regress_watch *rw = arg;
	int64_t every = (int64_t)rw->app->cfg->regression_every_s * 1000;
	int64_t step = every < REGRESS_TRY_MAX_MS ? every : REGRESS_TRY_MAX_MS, next = 0;
	struct store *st;

	while (!(st = app_store(rw->app)))
		if (worker_nap(&rw->w, 1000))
			return NULL;
	for (;;) {
		int64_t now = mono_ms();
		if (now >= next) {
			attempt(rw, st);
			next = mono_ms() + step;
		}
		int64_t nap = next - mono_ms();
		if (worker_nap(&rw->w, nap > 1000 ? 1000 : nap < 1 ? 1 : nap))
			break;
	}
	return NULL;
}

struct regress_watch *regress_watch_start(struct app *app, bool *failed)
{
	struct regress_watch *rw;

	*failed = false;
	if (app->cfg->regression_every_s <= 0)
		return NULL;
	if (!(rw = calloc(1, sizeof(*rw)))) {
		*failed = true;
		return NULL;
	}
	rw->app = app;
	if (worker_start(&rw->w, run, rw) < 0) {
		free(rw);
		*failed = true;
		return NULL;
	}
	return rw;
}

void regress_watch_stop(struct regress_watch *rw)
{
	if (!rw)
		return;
	worker_stop(&rw->w);
	free(rw);
}
