/* background.c - store opening, detector tick, retention (see background.h). */
#include "background.h"
#include "detect.h"
#include "liveness.h"
#include "log.h"
#include "store.h"
#include "store_health.h"
#include "timeparse.h"
#include "worker.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <time.h>

struct background {
	struct app *app;
	struct worker w;
	int64_t db_back_ms;	/* the store opened, or a tick last found the database away */
};

static struct store *open_store(struct background *bg)
{
	const struct server_config *cfg = bg->app->cfg;
	struct store_config sc = { .conninfo = cfg->db, .read_conninfo = cfg->read_db, .pool_size = cfg->pool,
				   .schema_dir = cfg->schema_dir,
				   .retention_days = cfg->retention_days,
				   .rollup_retention_days = cfg->rollup_retention_days,
				   .checkpoint_ms = cfg->checkpoint_s * 1000 };
	struct store *st = NULL;
	char err[512] = "";
	int attempts = 0;

	for (;;) {
		int rc = store_open(&st, &sc, err, sizeof(err));
		if (rc == STORE_OK) {
			struct store_hook hk;
			detect_store_hook(bg->app->engine, &hk);
			store_set_hook(st, &hk);
			log_info("database ready%s", attempts ? " (after retrying)" : "");
			return st;
		}
		if (rc == STORE_EINVAL) {
			/* the wrong database (a Citus worker): stop the server */
			log_error("%s", err);
			atomic_store(&bg->app->fatal, true);
			kill(getpid(), SIGTERM);
			return NULL;
		}
		/* a wrong schema or conninfo syntax will not heal: say so louder */
		if (attempts == 0 || attempts % 30 == 0)
			log_msg(rc == STORE_EUNAVAIL ? LOG_WARN : LOG_ERROR,
				"could not open the database (%s); retrying every %d s, answering 503 "
				"meanwhile", err, BG_RETRY_MS / 1000);
		attempts++;
		if (worker_nap(&bg->w, BG_RETRY_MS))
			return NULL;
	}
}

/* Whether host_silent may be judged now: not within the grace period
 * (liveness.h) after the database became usable (the store opened, or a
 * tick or an ingest write last failed for the database), so that agents
 * backing off during an outage have brought their spools in first. The
 * server's start counts as the store opening. */
static bool silence_judged(struct background *bg, int64_t now)
{
	struct store_write_health w;

	store_health_get(now, &w);
	int64_t last = bg->db_back_ms > w.last_fail_ms ? bg->db_back_ms : w.last_fail_ms;
	return now - last >= liveness_cfg()->grace_ms;
}

static void tick(struct background *bg, struct store *st)
{
	char err[512] = "";
	PGconn *conn = store_conn_get(st);
	int64_t now = time_now_ms();

	if (!conn) {
		log_debug("detector tick skipped: database unreachable");
		bg->db_back_ms = now;	/* the grace runs from when it answers again */
		return;
	}
	if (detect_tick(bg->app->engine, conn, now, silence_judged(bg, now), err, sizeof(err)) < 0) {
		log_warn("detector tick failed: %s", err);
		if (PQstatus(conn) != CONNECTION_OK)
			bg->db_back_ms = now;
	}
	store_conn_put(st, conn, PQstatus(conn) != CONNECTION_OK);
}

/* Writes the checkpoints that are due (store_checkpoint). */
static void checkpoint(struct store *st)
{
	char err[512] = "";
	int n = 0;

	if (store_checkpoint(st, false, &n, err, sizeof(err)) != STORE_OK)
		log_warn("could not write checkpoints: %s", err);
	else if (n)
		log_debug("wrote %d checkpoint(s)", n);
}

static void expire(struct store *st)
{
	char err[512] = "";
	int ndropped = 0;

	if (store_drop_expired(st, time_now_ms(), &ndropped, err, sizeof(err)) != STORE_OK)
		log_warn("could not drop expired partitions: %s", err);
	else if (ndropped)
		log_info("dropped %d expired partition(s)", ndropped);
}

static void *run(void *arg)
{
	struct background *bg = arg;
	struct store *st = open_store(bg);
	int64_t last_tick = 0, last_expire = 0;

	if (!st)
		return NULL;
	atomic_store(&bg->app->store, st);
	bg->db_back_ms = time_now_ms();
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
		if (last_expire == 0 || ms - last_expire >= BG_EXPIRE_MS) {
			expire(st);
			last_expire = ms;
		}
		if (last_tick == 0 || ms - last_tick >= liveness_cfg()->tick_ms) {
			tick(bg, st);
			last_tick = ms;
		}
		checkpoint(st);
		if (worker_nap(&bg->w, liveness_cfg()->tick_ms < 1000 ? (int)liveness_cfg()->tick_ms : 1000))
			break;
	}
	return NULL;
}

struct background *background_start(struct app *app)
{
	struct background *bg = calloc(1, sizeof(*bg));

	if (!bg)
		return NULL;
	bg->app = app;
	if (worker_start(&bg->w, run, bg) < 0) {
		free(bg);
		return NULL;
	}
	return bg;
}

void background_stop(struct background *bg)
{
	if (!bg)
		return;
	worker_stop(&bg->w);
	free(bg);
}
