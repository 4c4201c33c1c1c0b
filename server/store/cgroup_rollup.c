/* cgroup_rollup.c - the cgroup rollup thread (see cgroup_rollup.h). */
#include "cgroup_rollup.h"

#include "log.h"
#include "store_cgrollup.h"
#include "timeparse.h"
#include "worker.h"

#include <stdlib.h>
#include <time.h>

struct cgroup_rollup {
	struct app *app;
	struct worker w;
};

static int64_t mono_ms(clockid_t clk)
{
	struct timespec t;
	clock_gettime(clk, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Logs what the thread did since the last report: the figures
 * docs/design.md quotes (this thread's CPU per host-hour rolled up). */
static void report(const struct cgroll_stats *s, int64_t cpu_ms)
{
	if (!s->host_buckets)
		return;
	log_info("cgroup rollups: %ld host-buckets (%.1f host-hours) in %ld transactions, %ld raw rows read, "
		 "%ld cells of %.0f bytes avg; thread CPU %lld ms (%.1f ms per host-hour)",
		 s->host_buckets, s->host_buckets / 12.0, s->txs, s->rows_read, s->cells,
		 s->cells ? (double)s->bytes / (double)s->cells : 0.0, (long long)cpu_ms,
		 (double)cpu_ms * 12.0 / (double)s->host_buckets);
}

static void *run(void *arg)
{
	struct cgroup_rollup *cr = arg;
	struct store *st;
	struct cgroll_stats stats = { 0 };
	int64_t last_report = mono_ms(CLOCK_MONOTONIC), cpu0 = mono_ms(CLOCK_THREAD_CPUTIME_ID);
	bool failing = false;

	while (!(st = app_store(cr->app)))
		if (worker_nap(&cr->w, 1000))
			return NULL;
	for (;;) {
		char err[512] = "";
		bool more = false;
		int rc = store_cgrollup_run(st, time_now_ms(), CGR_MIN_PENDING, CGR_TX_PER_RUN, &stats, &more, err,
					    sizeof(err));
		if (rc != STORE_OK && !failing)
			log_warn("cgroup rollups failed (retrying every %d s): %s", CGR_PERIOD_MS / 1000, err);
		else if (rc == STORE_OK && failing)
			log_info("cgroup rollups running again");
		failing = rc != STORE_OK;
		/* a backlog ends with the batch that finds no more work: report then */
		int64_t now = mono_ms(CLOCK_MONOTONIC);
		if ((!more && stats.host_buckets > 12 * 24) || now - last_report >= CGR_REPORT_MS) {
			int64_t cpu = mono_ms(CLOCK_THREAD_CPUTIME_ID);
			report(&stats, cpu - cpu0);
			stats = (struct cgroll_stats){ 0 };
			cpu0 = cpu;
			last_report = now;
		}
		if (worker_nap(&cr->w, more && rc == STORE_OK ? 0 : CGR_PERIOD_MS))
			break;
	}
	return NULL;
}

struct cgroup_rollup *cgroup_rollup_start(struct app *app)
{
	struct cgroup_rollup *cr = calloc(1, sizeof(*cr));

	if (!cr)
		return NULL;
	cr->app = app;
	if (worker_start(&cr->w, run, cr) < 0) {
		free(cr);
		return NULL;
	}
	return cr;
}

void cgroup_rollup_stop(struct cgroup_rollup *cr)
{
	if (!cr)
		return;
	worker_stop(&cr->w);
	free(cr);
}
