/* test_detect.c - the detector engine on synthetic traces built from the
 * seed reports' shapes: which alerts open, when (sample times), at which
 * scope, and that gaps, reboots, old kernels' names, state round trips and
 * stale samples behave. No database (see test_alert_store.c for that). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect_engine.h"
#include "detect_feat.h"
#include "detect_mem.h"
#include "harness.h"
#include "kernel_bugs.h"
#include "rates.h"
#include "sample.h"
#include "../../bench/gen.h"

/* A synthetic host: per-second rates integrated into counters, gauges set
 * directly. Names are the kernel's; a rate of a name adds to its counter. */
#define MAXK 48
struct gen {
	const char *host, *boot;
	double ts;
	double interval;
	int nk;
	const char *key[MAXK];
	double rate[MAXK], val[MAXK];
	int is_gauge[MAXK];	/* a gauge's rate, when set, is its growth per second */
	int cg_on;		/* emit a v1 cgroup /app with its own counters */
	double cg_refault_rate, cg_refault;
	double cg_dirty, cg_writeback;	/* bytes, the cgroup's total_dirty/_writeback */
	double psi_some_rate, psi_some_total;	/* host memory PSI, share 0..1 */
	int no_psi;
	int limit_reclaim;	/* swap_batch(): cgroup-limit reclaim (kswapd scans nothing) */
};

static int slot(struct gen *g, const char *k)
{
	for (int i = 0; i < g->nk; i++)
		if (strcmp(g->key[i], k) == 0)
			return i;
	g->key[g->nk] = k;
	g->rate[g->nk] = g->val[g->nk] = 0;
	g->is_gauge[g->nk] = 0;
	return g->nk++;
}

static void set_rate(struct gen *g, const char *k, double r) { g->rate[slot(g, k)] = r; }
static void set_gauge(struct gen *g, const char *k, double v)
{
	int i = slot(g, k);
	g->val[i] = v;
	g->is_gauge[i] = 1;
	g->rate[i] = 0;
}

/* A gauge that grows by r per second from its current value. */
static void set_growth(struct gen *g, const char *k, double r)
{
	int i = slot(g, k);
	g->is_gauge[i] = 1;
	g->rate[i] = r;
}

static void gen_init(struct gen *g, const char *host)
{
	memset(g, 0, sizeof(*g));
	g->host = host;
	g->boot = "b0";
	g->ts = 1764518400.0;
	g->interval = 10;
	set_gauge(g, "MemTotal", 8.0 * 1024 * 1024);	/* kB: 8 GiB */
	set_gauge(g, "SwapTotal", 4.0 * 1024 * 1024);
	set_gauge(g, "SwapFree", 4.0 * 1024 * 1024);
	set_gauge(g, "nr_inactive_anon", 10000);
	set_gauge(g, "nr_inactive_file", 100000);
	set_gauge(g, "nr_dirty", 100);
	set_gauge(g, "nr_writeback", 0);
	set_rate(g, "pgscan_kswapd", 0);
	set_rate(g, "pgscan_direct", 0);
	set_rate(g, "pgscan_anon", 0);
	set_rate(g, "pgscan_file", 0);
	set_rate(g, "workingset_refault_file", 0);
	set_rate(g, "workingset_refault_anon", 0);
}

static int is_meminfo(const char *k)
{
	return strncmp(k, "Mem", 3) == 0 || strncmp(k, "Swap", 4) == 0;
}

/* Advances by dt seconds and builds the sample. */
static void gen_step(struct gen *g, double dt, struct sample *s)
{
	char err[SAMPLE_ERR_MAX];
	json_t *vm = json_object(), *mi = json_object();

	g->ts += dt;
	for (int i = 0; i < g->nk; i++) {
		g->val[i] += g->rate[i] * dt;
		json_object_set_new(is_meminfo(g->key[i]) ? mi : vm, g->key[i],
				    json_integer((json_int_t)llround(g->val[i])));
	}
	g->psi_some_total += g->psi_some_rate * dt * 1e6;
	json_t *o = json_pack("{s:s, s:s, s:f, s:f, s:o, s:o, s:{s:i}}", "host", g->host, "boot_id", g->boot,
			      "ts", g->ts, "interval_s", g->interval, "vmstat", vm, "meminfo", mi,
			      "settings", "vm.swappiness", 60);
	if (!g->no_psi)
		json_object_set_new(o, "psi", json_pack("{s:{s:{s:f,s:f,s:f,s:I},s:{s:f,s:f,s:f,s:I}}}",
			"memory", "some", "avg10", g->psi_some_rate * 100, "avg60", 0.0, "avg300", 0.0,
			"total", (json_int_t)g->psi_some_total, "full", "avg10", 0.0, "avg60", 0.0,
			"avg300", 0.0, "total", (json_int_t)0));
	if (g->cg_on) {
		g->cg_refault += g->cg_refault_rate * dt;
		json_object_set_new(o, "cgroups", json_pack("[{s:s,s:i,s:{s:I,s:I,s:I,s:I,s:I,s:I},s:I,s:I}]",
			"path", "/app", "version", 1, "memory_stat",
			"total_workingset_refault_file", (json_int_t)g->cg_refault,
			"total_inactive_file", (json_int_t)(100 << 20), "total_inactive_anon", (json_int_t)(1 << 20),
			"total_pgmajfault", (json_int_t)0, "total_dirty", (json_int_t)g->cg_dirty,
			"total_writeback", (json_int_t)g->cg_writeback,
			"memory_current", (json_int_t)(256 << 20), "memory_max", (json_int_t)(256 << 20)));
	}
	if (sample_from_json(s, o, err) < 0) {
		fprintf(stderr, "gen: %s\n", err);
		exit(2);
	}
	json_decref(o);
}

/* Feeds n samples dt apart into m. */
static void run(struct detect_mem *m, struct gen *g, int n, double dt)
{
	for (int i = 0; i < n; i++) {
		struct sample s;
		gen_step(g, dt, &s);
		CHECK(detect_mem_feed(m, &s) >= 0);
		sample_release(&s);
	}
}

static const struct alert_rec *find(const struct detect_mem *m, const char *kind, const char *cgroup)
{
	for (size_t i = 0; i < detect_mem_count(m); i++) {
		const struct alert_rec *a = detect_mem_alert(m, i);
		if (strcmp(a->kind, kind) == 0 &&
		    ((!cgroup && !a->cgroup) || (cgroup && a->cgroup && strcmp(cgroup, a->cgroup) == 0)))
			return a;
	}
	return NULL;
}

static int count_kind(const struct detect_mem *m, const char *kind)
{
	int n = 0;
	for (size_t i = 0; i < detect_mem_count(m); i++)
		n += strcmp(detect_mem_alert(m, i)->kind, kind) == 0;
	return n;
}

/* Host-level over-swap in one second of a reclaim batch (mib MiB of anon
 * swapped out by kswapd, swap in use growing by as much, file cache stolen
 * a quarter as much and not refaulted), or none (mib 0). A 1.2 GiB file
 * cache stays on the active list throughout. */
static void swap_batch(struct gen *g, double mib)
{
	double pages = mib * 256;

	set_gauge(g, "nr_active_file", 300000);
	set_rate(g, "pswpout", pages);
	set_rate(g, "pswpin", 0);
	set_rate(g, "pgsteal_anon", pages);
	set_rate(g, "pgsteal_file", pages / 4);
	set_rate(g, "pgscan_anon", pages * 1.2);
	set_rate(g, "pgscan_file", pages / 4 * 1.1);
	set_rate(g, "pgscan_kswapd", g->limit_reclaim ? 0 : pages * 1.2 + pages / 4 * 1.1);
	set_growth(g, "SwapFree", -mib * 1024);	/* kB/s */
}

/* Runs seconds of a workload whose reclaim swaps mib MiB in the first
 * second of every period (or at the seconds listed in at[], n_at of them,
 * when period is 0), sampled every `every` seconds. */
static void run_batches(struct detect_mem *m, struct gen *g, int seconds, int period, const int *at, int n_at,
			double mib, int every)
{
	for (int t = 0; t < seconds; t++) {
		bool burst = false;
		if (period > 0)
			burst = t % period == 0;
		for (int i = 0; i < n_at; i++)
			burst = burst || at[i] == t;
		swap_batch(g, burst ? mib : 0);
		struct sample s;
		gen_step(g, 1, &s);
		if ((t + 1) % every == 0)
			CHECK(detect_mem_feed(m, &s) >= 0);
		sample_release(&s);
	}
}

static void test_rates(void)
{
	CHECK(fabs(rate_counter(100, 200, 10) - 10) < 1e-9);
	CHECK(isnan(rate_counter(200, 100, 10)));		/* went backwards: restart */
	CHECK(isnan(rate_counter(RATE_ABSENT, 100, 10)));
	CHECK(isnan(rate_counter(1, 2, 0)));
	CHECK(fabs(rate_psi_share(0, 5000000, 10) - 0.5) < 1e-9);
	CHECK_INT(rate_gap_limit_ms(10000), 60000);
	CHECK_INT(rate_gap_limit_ms(60000), 180000);
	CHECK_INT(rate_gap_limit_ms(0), 60000);
	CHECK(rate_boot_hash("a") != rate_boot_hash("b"));
	CHECK_INT(rate_boot_hash(NULL), 0);
}

/* Seed 000 shape on a host: file refaults 4100/s, memory stall 30%,
 * 1.9 GiB inactive anon never scanned, free swap, swappiness 60. */
static void seed000(struct gen *g)
{
	set_rate(g, "workingset_refault_file", 4100);
	set_rate(g, "workingset_activate_file", 3000);
	set_rate(g, "pgscan_kswapd", 6000);
	set_rate(g, "pgscan_file", 6000);
	set_rate(g, "pgsteal_kswapd", 5000);
	set_gauge(g, "nr_inactive_anon", 1.9 * 262144);
	g->psi_some_rate = 0.30;
}

static void test_thrash_and_imbalance_open_times(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "db-07");
	run(m, &g, 3, 10);		/* healthy */
	CHECK_INT(detect_mem_count(m), 0);
	seed000(&g);
	double first = g.ts + 10;
	run(m, &g, 1, 10);		/* one critical sample: not yet */
	CHECK_INT(detect_mem_count(m), 0);
	run(m, &g, 1, 10);		/* the second: 20 s of critical evidence */
	const struct alert_rec *t = find(m, "thrash", NULL), *si = find(m, "swap_imbalance", NULL);
	CHECK(t != NULL);
	CHECK(si != NULL);
	if (t) {
		CHECK_INT(t->started_ms, (int64_t)llround(first * 1000));
		CHECK_INT(t->opened_ms, (int64_t)llround((first + 10) * 1000));
		CHECK_STR(t->severity, "critical");
		CHECK(t->open);
		CHECK_CONTAINS(t->summary, "4100 pages/s");
		CHECK(json_real_value(json_object_get(t->evidence, "workingset_refault_file_per_s")) == 4100.0 ||
		      json_integer_value(json_object_get(t->evidence, "workingset_refault_file_per_s")) == 4100);
		CHECK(json_is_string(json_object_get(t->evidence, "hint")));
	}
	if (si) {
		CHECK_CONTAINS(si->summary, "1.9 GiB of inactive anon is never scanned");
		CHECK_STR(json_string_value(json_object_get(si->evidence, "shape")), "cold_anon_file_thrash");
	}
	/* continuing: no duplicates, also across a save/load (server restart) */
	CHECK_INT(detect_mem_roundtrip(m), 0);
	run(m, &g, 10, 10);
	CHECK_INT(count_kind(m, "thrash"), 1);
	CHECK_INT(count_kind(m, "swap_imbalance"), 1);
	/* clear: resolves after >= 60 s clear, ended_at is a sample time */
	set_rate(&g, "workingset_refault_file", 0);
	set_rate(&g, "workingset_activate_file", 0);
	g.psi_some_rate = 0;
	run(m, &g, 3, 10);
	CHECK(find(m, "thrash", NULL)->open);
	run(m, &g, 6, 10);
	t = find(m, "thrash", NULL);
	CHECK(!t->open);
	CHECK(t->ended_ms > t->opened_ms);
	CHECK_INT(t->ended_ms % 10000, (int64_t)llround(g.ts * 1000) % 10000);
	detect_mem_free(m);
}

/* Below the entry threshold but above the sustain level, an open alert
 * stays open; the clear time counts from the last such sample. */
static void test_sustain_keeps_open(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "sus");
	seed000(&g);
	run(m, &g, 5, 10);
	CHECK(find(m, "thrash", NULL) && find(m, "thrash", NULL)->open);
	set_rate(&g, "workingset_refault_file", 100);	/* 400 KiB/s */
	set_rate(&g, "workingset_activate_file", 50);
	g.psi_some_rate = 0.03;
	run(m, &g, 12, 10);
	CHECK(find(m, "thrash", NULL)->open);
	set_rate(&g, "workingset_refault_file", 0);
	set_rate(&g, "workingset_activate_file", 0);
	g.psi_some_rate = 0;
	int64_t last_present = (int64_t)llround(g.ts * 1000);
	run(m, &g, 5, 10);
	CHECK(find(m, "thrash", NULL)->open);	/* 50 s after the last sustain sample */
	run(m, &g, 1, 10);
	CHECK(!find(m, "thrash", NULL)->open);
	CHECK_INT(find(m, "thrash", NULL)->ended_ms, last_present + 60000);
	CHECK_INT(count_kind(m, "thrash"), 1);
	detect_mem_free(m);
}

static void test_no_imbalance_without_swap_or_swappiness(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "noswap");
	set_gauge(&g, "SwapTotal", 0);
	set_gauge(&g, "SwapFree", 0);
	seed000(&g);
	run(m, &g, 8, 10);
	CHECK(find(m, "thrash", NULL) != NULL);
	CHECK(find(m, "swap_imbalance", NULL) == NULL);
	detect_mem_free(m);
}

/* A stall is the refaults' only where the kernel says so: a 1 MiB/s trickle
 * of file refaults on 8 GiB (0.01 % a second) beside PSI 30 % is thrash
 * only when those refaults restore working-set pages (workingset_restore:
 * the ones that stall in folio_wait_bit_common), not when restore is 0. */
static void test_psi_owner(void)
{
	for (int restoring = 0; restoring <= 1; restoring++) {
		struct detect_mem *m = detect_mem_new();
		struct gen g;

		gen_init(&g, restoring ? "restoring" : "trickle");
		set_rate(&g, "workingset_refault_file", 300);
		set_rate(&g, "workingset_activate_file", 15);
		set_rate(&g, "workingset_restore_file", restoring ? 150 : 0);
		set_rate(&g, "pgscan_kswapd", 2000);
		set_rate(&g, "pgscan_file", 2000);
		g.psi_some_rate = 0.30;
		run(m, &g, 8, 10);
		CHECK((find(m, "thrash", NULL) != NULL) == restoring);
		detect_mem_free(m);
	}
}

/* Seed 004's shape host-wide, swapping through zswap only (pswpin/out flat,
 * zswpin/zswpout busy) while 3 GiB of inactive file is not refaulted. */
static void test_zswap_churn(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "zsw");
	set_gauge(&g, "nr_inactive_file", 3.0 * 262144);
	set_rate(&g, "pswpin", 0);
	set_rate(&g, "pswpout", 0);
	set_rate(&g, "zswpin", 3000);
	set_rate(&g, "zswpout", 3500);
	set_rate(&g, "pgscan_kswapd", 8000);
	set_rate(&g, "pgscan_anon", 7000);
	set_rate(&g, "pgscan_file", 1000);
	set_rate(&g, "workingset_refault_anon", 3000);
	g.psi_some_rate = 0.1;
	run(m, &g, 8, 10);
	const struct alert_rec *a = find(m, "swap_imbalance", NULL);
	CHECK(a != NULL);
	if (a) {
		CHECK_STR(json_string_value(json_object_get(a->evidence, "shape")), "anon_swap_churn");
		CHECK(json_number_value(json_object_get(a->evidence, "swapin_per_s")) == 3000);
	}
	detect_mem_free(m);
}

/* Seed 002: swapless, MADV_FREE far ahead of pglazyfreed, file refaults. */
static void test_lazyfree(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "lazy");
	set_gauge(&g, "SwapTotal", 0);
	set_gauge(&g, "SwapFree", 0);
	set_rate(&g, "pglazyfree", 20000);
	set_rate(&g, "pglazyfreed", 10);
	set_rate(&g, "workingset_refault_file", 2000);
	set_rate(&g, "pgscan_file", 5000);
	set_rate(&g, "pgsteal_file", 4000);
	set_rate(&g, "pgscan_kswapd", 5000);
	g.psi_some_rate = 0.08;
	/* on a kernel that has the counters (4.12+, the fix) hinted pages
	 * being reused (anon flat) is normal: nothing */
	set_gauge(&g, "nr_active_anon", 100000);
	run(m, &g, 8, 10);
	CHECK(find(m, "swap_imbalance", NULL) == NULL);
	/* piling up: anon that cannot be reclaimed grows 40 MiB/s */
	set_growth(&g, "nr_active_anon", 10000);
	run(m, &g, 8, 10);
	const struct alert_rec *a = find(m, "swap_imbalance", NULL);
	CHECK(a != NULL);
	if (a) {
		CHECK_STR(json_string_value(json_object_get(a->evidence, "shape")), "lazyfree_backlog");
		CHECK_CONTAINS(a->summary, "anon grows");
	}
	detect_mem_free(m);
}

/* Seed 003: dirty pages at the LRU tail, reclaim writes them, immediate
 * reclaim, direct reclaim stalls, efficiency 40%. */
static void test_writeback(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "hadoop");
	set_gauge(&g, "nr_dirty", 60000);
	set_gauge(&g, "nr_writeback", 20000);
	set_gauge(&g, "nr_inactive_file", 120000);
	set_rate(&g, "pgscan_kswapd", 20000);
	set_rate(&g, "pgscan_direct", 10000);
	set_rate(&g, "pgscan_file", 30000);
	set_rate(&g, "pgsteal_file", 12000);
	set_rate(&g, "pgsteal_kswapd", 8000);
	set_rate(&g, "pgsteal_direct", 4000);
	set_rate(&g, "nr_vmscan_write", 3000);
	set_rate(&g, "nr_vmscan_immediate_reclaim", 4000);
	set_rate(&g, "allocstall_normal", 50);
	g.psi_some_rate = 0.2;
	run(m, &g, 8, 10);
	const struct alert_rec *a = find(m, "writeback_storm", NULL);
	CHECK(a != NULL);
	if (a) {
		CHECK_STR(a->severity, "critical");
		CHECK_CONTAINS(a->summary, "reclaim writes");
	}
	CHECK(find(m, "direct_reclaim_stall", NULL) != NULL);
	CHECK(find(m, "thrash", NULL) == NULL);
	detect_mem_free(m);
}

/* A v1 cgroup at its limit with half its file cache dirty or under
 * writeback and memory PSI 8%: with the host's immediate reclaim at 0 that
 * is a writer flushing its own data (fsync, real-fsyncbig): no alert. The
 * same cgroup while reclaim tags dirty pages for immediate reclaim is the
 * storm, on the cgroup. */
static void test_cgroup_fsync_is_not_a_storm(void)
{
	for (int storm = 0; storm <= 1; storm++) {
		struct detect_mem *m = detect_mem_new();
		struct gen g;

		gen_init(&g, storm ? "db-storm" : "db-fsync");
		g.cg_on = 1;
		g.cg_dirty = 32 << 20;
		g.cg_writeback = 32 << 20;
		set_gauge(&g, "nr_dirty", 8192);	/* pages: the host's 32+32 MiB */
		set_gauge(&g, "nr_writeback", 8192);
		set_rate(&g, "nr_vmscan_write", 0);
		set_rate(&g, "nr_vmscan_immediate_reclaim", storm ? 2000 : 0);
		g.psi_some_rate = 0.08;
		run(m, &g, 10, 10);
		const struct alert_rec *a = find(m, "writeback_storm", "/app");
		CHECK(storm ? a != NULL : count_kind(m, "writeback_storm") == 0);
		detect_mem_free(m);
	}
}

/* Cgroup-limited thrash (host pgscan_kswapd flat): alert on the cgroup only. */
static void test_cgroup_scope(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "web-1");
	g.cg_on = 1;
	set_rate(&g, "workingset_refault_file", 20000);
	set_rate(&g, "pgscan_file", 25000);
	g.cg_refault_rate = 20000;
	g.psi_some_rate = 0.15;
	run(m, &g, 8, 10);
	const struct alert_rec *a = find(m, "thrash", "/app");
	CHECK(a != NULL);
	CHECK(find(m, "thrash", NULL) == NULL);
	if (a)
		CHECK_STR(json_string_value(json_object_get(a->evidence, "psi_source")), "host");
	/* the cgroup disappears: its alert resolves after a while */
	g.cg_on = 0;
	run(m, &g, 8, 10);
	a = find(m, "thrash", "/app");
	CHECK(a && !a->open);
	detect_mem_free(m);
}

/* A 10-minute outage in the middle: the delta across it is not a spike,
 * and pending evidence does not carry over. */
static void test_gap(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "gappy");
	run(m, &g, 3, 10);
	seed000(&g);
	run(m, &g, 1, 10);
	g.psi_some_rate = 0;
	set_rate(&g, "workingset_refault_file", 0);
	set_rate(&g, "workingset_activate_file", 0);
	/* during the outage a huge amount of refaults happened */
	g.val[slot(&g, "workingset_refault_file")] += 50e6;
	g.psi_some_total += 500e6;
	run(m, &g, 1, 600);
	run(m, &g, 5, 10);
	CHECK_INT(detect_mem_count(m), 0);
	detect_mem_free(m);
}

/* Reboot: counters restart, boot_id changes: open alerts resolve, no spike. */
static void test_reboot_and_stale(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "rb");
	seed000(&g);
	run(m, &g, 6, 10);
	CHECK(find(m, "thrash", NULL) && find(m, "thrash", NULL)->open);
	g.boot = "b1";
	for (int i = 0; i < g.nk; i++)
		if (!g.is_gauge[i])
			g.val[i] = 0;
	g.psi_some_total = 0;
	set_rate(&g, "workingset_refault_file", 0);
	g.psi_some_rate = 0;
	run(m, &g, 1, 10);
	CHECK(!find(m, "thrash", NULL)->open);
	run(m, &g, 5, 10);
	CHECK_INT(count_kind(m, "thrash"), 1);
	/* a sample older than the last fed one is skipped */
	struct sample s;
	struct gen old = g;
	old.ts -= 100;
	gen_step(&old, 0, &s);
	CHECK_INT(detect_mem_feed(m, &s), 0);
	sample_release(&s);
	detect_mem_free(m);
}

/* Kernel 4.x names: workingset_refault without the split, per-zone
 * pgscan/pgsteal, allocstall; no PSI at all. */
static void test_old_kernel_names(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	memset(&g, 0, sizeof(g));
	g.host = "old";
	g.boot = "b";
	g.ts = 1500000000;
	g.interval = 10;
	g.no_psi = 1;
	set_gauge(&g, "MemTotal", 4.0 * 1024 * 1024);
	set_gauge(&g, "nr_inactive_file", 50000);
	set_gauge(&g, "nr_inactive_anon", 10000);
	set_rate(&g, "workingset_refault", 8000);
	set_rate(&g, "workingset_activate", 6000);
	set_rate(&g, "pgscan_kswapd_normal", 9000);
	set_rate(&g, "pgsteal_kswapd_normal", 8500);
	set_rate(&g, "allocstall", 0);
	run(m, &g, 8, 10);
	const struct alert_rec *a = find(m, "thrash", NULL);
	CHECK(a != NULL);
	if (a)
		CHECK_CONTAINS(a->summary, "working set");
	detect_mem_free(m);
}

static void test_oom(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "oomy");
	set_rate(&g, "oom_kill", 0);
	run(m, &g, 2, 10);
	g.val[slot(&g, "oom_kill")] += 2;
	run(m, &g, 1, 10);
	const struct alert_rec *a = find(m, "oom_kill", NULL);
	CHECK(a != NULL);
	if (a) {
		CHECK_INT(a->started_ms, a->opened_ms);
		CHECK_STR(a->severity, "critical");
		CHECK_CONTAINS(a->summary, "2 OOM kills");
	}
	run(m, &g, 20, 10);
	CHECK(a && a->open);		/* quiet for 200 s: still open */
	run(m, &g, 12, 10);
	CHECK(a && !a->open);		/* quiet >= 300 s */
	detect_mem_free(m);
}

static void test_state_roundtrip_and_corrupt(void)
{
	struct det_host *h = det_host_new("x");
	unsigned char *buf;
	size_t len;
	char err[128];

	CHECK_INT(det_host_save(h, &buf, &len), 0);
	struct det_host *h2 = det_host_load("x", buf, len, err, sizeof(err));
	CHECK(h2 != NULL);
	det_host_free(h2);
	buf[0] = 'X';
	h2 = det_host_load("x", buf, len, err, sizeof(err));
	CHECK(h2 == NULL);
	CHECK_CONTAINS(err, "not version");
	buf[0] = 'V';
	h2 = det_host_load("x", buf, len - 1, err, sizeof(err));
	CHECK(h2 == NULL);
	free(buf);
	h2 = det_host_load("x", NULL, 0, err, sizeof(err));
	CHECK(h2 != NULL && det_host_last_ts(h2) == 0);
	det_host_free(h2);
	det_host_free(h);
}

static int open_ids(void *ctx, struct det_action *a)
{
	if (a->type == DA_OPEN)
		a->alert_id = ++*(int64_t *)ctx;
	return 0;
}

/* Feeds gen's next sample (dt later) to h; returns what det_host_feed did. */
static int feed_next(struct det_host *h, struct gen *g, double dt, int64_t *opened)
{
	struct sample s;

	gen_step(g, dt, &s);
	int r = det_host_feed(h, &s, open_ids, opened);
	sample_release(&s);
	return r;
}

/* A sample 9 minutes in the future (a wrong clock, within the contract's
 * skew) puts the state ahead of the samples that follow: they are skipped
 * and a real thrash behind it goes unseen, until the state is re-anchored
 * (the server does so when the state is ahead of its clock); then the
 * thrash opens its alert as it would have. */
static void test_reanchor(void)
{
	struct det_host *h = det_host_new("fut");
	struct gen g;
	int64_t opened = 0;

	gen_init(&g, "fut");
	for (int i = 0; i < 3; i++)
		CHECK_INT(feed_next(h, &g, 10, &opened), 1);
	struct gen future = g;
	CHECK_INT(feed_next(h, &future, 540, &opened), 1);
	int64_t ahead = det_host_last_ts(h);
	seed000(&g);
	for (int i = 0; i < 6; i++)
		CHECK_INT(feed_next(h, &g, 10, &opened), 0);	/* behind: skipped */
	CHECK_INT(opened, 0);
	det_host_reanchor(h, (int64_t)llround((g.ts + 10) * 1000));
	CHECK(det_host_last_ts(h) < ahead);
	for (int i = 0; i < 6; i++)
		CHECK_INT(feed_next(h, &g, 10, &opened), 1);
	CHECK_INT(opened, 2);	/* thrash and swap_imbalance, as without the future sample */
	det_host_free(h);
}

/* Saves h in both formats and checks: version 2 reads back to the same
 * state (saving again gives the same bytes), version 1 reads back to the
 * same state as version 2, version 2 is at most max_pct % of version 1's
 * size, and every truncation of it is refused. */
static void check_formats(const struct det_host *h, int max_pct)
{
	unsigned char *v2, *v1, *again, *from1;
	size_t n2, n1, nagain, nfrom1;
	char err[128];

	CHECK_INT(det_host_save(h, &v2, &n2), 0);
	CHECK_INT(det_host_save_v1(h, &v1, &n1), 0);
	CHECK(v2[3] == 4 && v1[3] == 1);
	/* version 2 and 3 states (before the critical run's start, before the
	 * batch window's snapshots were kept; a host sampled every 10 s has
	 * none) read back to the same state */
	int (*const older[])(const struct det_host *, unsigned char **, size_t *) = {
		det_host_save_v2, det_host_save_v3,
	};
	for (int ver = 2; ver <= 3; ver++) {
		unsigned char *old, *from;
		size_t nold, nfrom;
		CHECK_INT(older[ver - 2](h, &old, &nold), 0);
		CHECK(old[3] == ver && nold <= n2);
		struct det_host *c2 = det_host_load(det_host_name(h), old, nold, err, sizeof(err));
		CHECK(c2 != NULL);
		if (c2) {
			CHECK_INT(det_host_save(c2, &from, &nfrom), 0);
			CHECK(nfrom == n2 && memcmp(from, v2, n2) == 0);
			free(from);
			det_host_free(c2);
		}
		free(old);
	}
	struct det_host *a = det_host_load(det_host_name(h), v2, n2, err, sizeof(err));
	struct det_host *b = det_host_load(det_host_name(h), v1, n1, err, sizeof(err));
	CHECK(a != NULL && b != NULL);
	if (!a || !b)
		return;
	CHECK_INT(det_host_save(a, &again, &nagain), 0);
	CHECK_INT(det_host_save(b, &from1, &nfrom1), 0);
	CHECK(nagain == n2 && memcmp(again, v2, n2) == 0);
	CHECK(nfrom1 == n2 && memcmp(from1, v2, n2) == 0);
	CHECK(n2 * 100 <= n1 * (size_t)max_pct);
	for (size_t cut = 0; cut + 1 < n2; cut++) {
		struct det_host *t = det_host_load(det_host_name(h), v2, cut + 1, err, sizeof(err));
		CHECK(t == NULL);
		det_host_free(t);
	}
	det_host_free(a);
	det_host_free(b);
	free(v2);
	free(v1);
	free(again);
	free(from1);
}

static void feed_batches(struct det_host *h, struct gen *g, int seconds, int64_t *ids)
{
	for (int t = 0; t < seconds; t++) {
		swap_batch(g, t % 4 == 0 ? 16 : 0);
		struct sample s;
		gen_step(g, 1, &s);
		CHECK(det_host_feed(h, &s, open_ids, ids) >= 0);
		sample_release(&s);
	}
}

/* A host sampled every second keeps the batch window's snapshots: version 4
 * carries them (saved again, the same bytes; every truncation refused), and
 * the host reloaded carries on exactly as the one in memory (the same state
 * after every sample, the over-swap opened); a version 3 state of it loads
 * without them and still opens the over-swap once the window has filled
 * again. */
static void test_state_batch_window(void)
{
	struct det_host *h = det_host_new("b1");
	struct gen g;
	int64_t ids = 0;
	unsigned char *v4, *v3, *again;
	size_t n4, n3, nagain;
	char err[128];

	gen_init(&g, "b1");
	g.interval = 1;
	feed_batches(h, &g, 22, &ids);
	CHECK_INT(ids, 0);
	CHECK_INT(det_host_save(h, &v4, &n4), 0);
	CHECK_INT(det_host_save_v3(h, &v3, &n3), 0);
	CHECK(n3 + 30 < n4);	/* three snapshots */
	struct det_host *a = det_host_load("b1", v4, n4, err, sizeof(err));
	struct det_host *b = det_host_load("b1", v3, n3, err, sizeof(err));
	CHECK(a != NULL && b != NULL);
	if (a) {
		CHECK_INT(det_host_save(a, &again, &nagain), 0);
		CHECK(nagain == n4 && memcmp(again, v4, n4) == 0);
		free(again);
	}
	for (size_t cut = 0; cut + 1 < n4; cut++) {
		struct det_host *t = det_host_load("b1", v4, cut + 1, err, sizeof(err));
		CHECK(t == NULL);
		det_host_free(t);
	}
	int64_t ida = 0, idb = 0, idh = 0;
	struct gen ga = g, gb = g;
	bool same = true;
	for (int t = 0; t < 70 && a && b; t++) {
		feed_batches(h, &g, 1, &idh);
		feed_batches(a, &ga, 1, &ida);
		feed_batches(b, &gb, 1, &idb);
		unsigned char *sh, *sa;
		size_t nh, na;
		CHECK_INT(det_host_save(h, &sh, &nh), 0);
		CHECK_INT(det_host_save(a, &sa, &na), 0);
		same = same && nh == na && memcmp(sh, sa, nh) == 0;
		free(sh);
		free(sa);
	}
	CHECK(same);
	CHECK(idh > 0 && ida == idh);
	CHECK(idb > 0);	/* the v3 state carries on: the window fills again */
	det_host_free(a);
	det_host_free(b);
	det_host_free(h);
	free(v4);
	free(v3);
}

/* A host with open and pending alerts in the host scope and a cgroup, and
 * one of the benchmark's hosts with 20 cgroups. */
static void test_state_formats(void)
{
	struct det_host *h = det_host_new("db-07");
	struct gen g;
	int64_t ids = 0;

	gen_init(&g, "db-07");
	g.cg_on = 1;
	seed000(&g);
	g.cg_refault_rate = 5000;
	for (int i = 0; i < 5; i++) {
		struct sample s;
		gen_step(&g, 10, &s);
		CHECK(det_host_feed(h, &s, open_ids, &ids) >= 0);
		sample_release(&s);
	}
	CHECK(ids > 0);
	check_formats(h, 80);
	det_host_free(h);

	struct gen_host *gh = gen_host_new("big-01", 20, 7);
	h = det_host_new("big-01");
	static char buf[1 << 17];
	for (int i = 0; i < 4 && gh; i++) {
		gen_host_step(gh, 10000);
		CHECK(gen_host_json(gh, 1764518400000 + i * 10000, buf, sizeof(buf)) > 0);
		json_error_t jerr;
		json_t *j = json_loads(buf, 0, &jerr);
		struct sample s;
		char serr[SAMPLE_ERR_MAX];
		CHECK(j != NULL && sample_from_json(&s, j, serr) == 0);
		json_decref(j);
		CHECK(det_host_feed(h, &s, open_ids, &ids) >= 0);
		sample_release(&s);
	}
	check_formats(h, 60);
	det_host_free(h);
	gen_host_free(gh);
	test_state_batch_window();
}

/* The agent's fixture trees (tests/fixtures/k.../expected.json: samples of
 * real 4.14, 5.4, 5.10, 6.1 and 6.8-hybrid machines, produced independently
 * of this code) must map onto the slots the detectors need. */
static const struct sample *load_fixture(const char *k, struct sample *s)
{
	char path[128], err[SAMPLE_ERR_MAX];
	json_error_t jerr;

	snprintf(path, sizeof(path), "tests/fixtures/%s/expected.json", k);
	json_t *j = json_load_file(path, 0, &jerr);
	CHECK(j != NULL);
	if (!j) {
		fprintf(stderr, "%s: %s (run from the source root)\n", path, jerr.text);
		return NULL;
	}
	if (!json_object_get(j, "ts"))	/* the fixtures leave out the read time */
		json_object_set_new(j, "ts", json_real(1764518400.0));
	int rc = sample_from_json(s, j, err);
	json_decref(j);
	CHECK_INT(rc, 0);
	if (rc)
		fprintf(stderr, "%s: %s\n", path, err);
	return rc == 0 ? s : NULL;
}

static void test_agent_fixtures(void)
{
	static const struct { const char *k; int split, psi; const char *cg; int cg_refault; } fx[] = {
		{ "k4.14", 0, 0, "/docker", 0 },
		{ "k5.4", 0, 1, "/system.slice", 0 },
		{ "k5.10", 1, 1, "/system.slice", 1 },
		{ "k6.1", 1, 1, "/system.slice", 1 },
		{ "k6.8-hybrid", 1, 1, "/kubepods", 1 },
	};
	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		struct sample s;
		struct feat f;
		if (!load_fixture(fx[i].k, &s))
			continue;
		feat_extract_host(&f, &s);
		CHECK(f.c[C_REFAULT_ALL] != RATE_ABSENT);
		CHECK(f.c[C_REFAULT_FILE] != RATE_ABSENT);
		CHECK(f.c[C_SCAN_ALL] != RATE_ABSENT);
		CHECK(f.c[C_SCAN_GLOBAL] != RATE_ABSENT);
		CHECK(f.c[C_ALLOCSTALL] != RATE_ABSENT);
		CHECK(f.c[C_VMSCAN_WRITE] != RATE_ABSENT);
		CHECK(f.c[C_IMMEDIATE] != RATE_ABSENT);
		CHECK((f.c[C_SCAN_ANON] != RATE_ABSENT) == (fx[i].k[1] >= '5' && strcmp(fx[i].k, "k5.4") != 0));
		CHECK((f.c[C_REFAULT_ANON] != RATE_ABSENT) == fx[i].split);
		CHECK(f.has_psi == fx[i].psi);
		CHECK(!isnan(f.g[G_MEM_TOTAL]) && f.g[G_MEM_TOTAL] > 0);
		CHECK(!isnan(f.g[G_INACTIVE_ANON]));
		CHECK(!isnan(f.g[G_DIRTY]));
		const struct cgsample *cg = NULL;
		for (size_t j = 0; j < s.ncg; j++)
			if (strcmp(s.cg[j].path, fx[i].cg) == 0 && (!cg || s.cg[j].m.n > cg->m.n))
				cg = &s.cg[j];
		CHECK(cg != NULL);
		if (cg) {
			feat_extract_cgroup(&f, cg, cg->version == 1 ? sample_find_cgroup(&s, cg->path, 2) : NULL);
			CHECK(f.has_mem);
			CHECK(!isnan(f.g[G_INACTIVE_FILE]));
			CHECK(!isnan(f.g[G_DIRTY]));
			CHECK((f.c[C_REFAULT_ALL] != RATE_ABSENT) == fx[i].cg_refault);
			if (cg->version == 2)
				CHECK(f.has_psi);
		}
		sample_release(&s);
	}
}

/* A warning-level thrash: refaults 16 MiB/s with memory PSI 8%. */
static void warn_thrash(struct gen *g, int on)
{
	set_rate(g, "workingset_refault_file", on ? 4000 : 0);
	set_rate(g, "workingset_activate_file", on ? 3000 : 0);
	g->psi_some_rate = on ? 0.08 : 0;
}

/* The opening rules (docs/detectors.md, "Hysteresis"): critical evidence
 * opens after two critical samples spanning 20 s, warning evidence after
 * 30 s, a tenth of the interval is forgiven, blips open nothing, and an
 * alert never opens on a clear sample. */
/* Over-swap whose swap-out comes in reclaim batches (16 MiB every 4 s, as
 * recorded in real-overswap) gives the same verdict at 1 s sampling, where
 * three samples in four show no swap-out, as at 10 s; isolated batches, one
 * or two 30 s apart, open nothing at either. */
static void test_overswap_batches(void)
{
	static const int every[] = { 1, 10 };
	for (size_t i = 0; i < sizeof(every) / sizeof(every[0]); i++) {
		struct detect_mem *m = detect_mem_new();
		struct gen g;
		gen_init(&g, "batches");
		g.interval = every[i];
		run_batches(m, &g, 20, 0, NULL, 0, 0, every[i]);
		double onset = g.ts;
		run_batches(m, &g, 120, 4, NULL, 0, 16, every[i]);
		const struct alert_rec *a = find(m, "swap_imbalance", NULL);
		CHECK(a != NULL);
		if (a) {
			double after = (double)a->opened_ms / 1000.0 - onset;
			CHECK(after >= 29 && after <= 40);
			CHECK_STR(a->severity, "warning");
			CHECK_CONTAINS(a->summary, "swap in use");
			if (every[i] == 1)
				CHECK_CONTAINS(a->summary, "over the last");
		}
		CHECK_INT(detect_mem_count(m), 1);
		detect_mem_free(m);

		static const double sizes[] = { 16, 64 };
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			static const int one[] = { 5 }, two[] = { 5, 35 };
			m = detect_mem_new();
			gen_init(&g, "healthy");
			g.interval = every[i];
			run_batches(m, &g, 20, 0, NULL, 0, 0, every[i]);
			run_batches(m, &g, 120, 0, two, 2, sizes[k], every[i]);
			run_batches(m, &g, 120, 0, one, 1, sizes[k], every[i]);
			if (detect_mem_count(m))
				fprintf(stderr, "isolated %.0f MiB batches at %d s: %s\n", sizes[k], every[i],
					detect_mem_alert(m, 0)->summary);
			CHECK_INT(detect_mem_count(m), 0);
			detect_mem_free(m);
		}

		/* the same swap-out by cgroups at their own limits: not the
		 * host's balance, per interval or over the window */
		m = detect_mem_new();
		gen_init(&g, "limits");
		g.interval = every[i];
		g.limit_reclaim = 1;
		run_batches(m, &g, 20, 0, NULL, 0, 0, every[i]);
		run_batches(m, &g, 120, 4, NULL, 0, 16, every[i]);
		CHECK_INT(detect_mem_count(m), 0);
		detect_mem_free(m);
	}
}

static void test_open_rules(void)
{
	static const struct { double iv; int crit; int n_on; int opens; double max_after_onset; } cases[] = {
		{ 1, 1, 40, 1, 20 },	/* critical at 1 s: within 20 s of onset */
		{ 10, 1, 5, 1, 20 },	/* critical at 10 s: the second sample */
		{ 15, 1, 5, 1, 30 },	/* critical at 15 s: the second sample */
		{ 1, 0, 60, 1, 30 },	/* warning keeps its 30 s hold */
		{ 10, 0, 5, 1, 30 },
		{ 15, 0, 5, 1, 30 },	/* two warning samples span 30 s */
		{ 5, 0, 3, 0, 0 },	/* a 15 s warning blip at 5 s: nothing */
		{ 10, 0, 2, 0, 0 },	/* a 20 s warning blip at 10 s: nothing */
		{ 1, 1, 19, 0, 0 },	/* 19 s of critical evidence at 1 s: not yet */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct detect_mem *m = detect_mem_new();
		struct gen g;
		gen_init(&g, "rules");
		g.interval = cases[i].iv;
		run(m, &g, 3, cases[i].iv);
		double onset = g.ts;	/* the evidence starts with the next interval */
		if (cases[i].crit)
			seed000(&g);
		else
			warn_thrash(&g, 1);
		run(m, &g, cases[i].n_on, cases[i].iv);
		warn_thrash(&g, 0);
		set_rate(&g, "workingset_refault_file", 0);
		g.psi_some_rate = 0;
		run(m, &g, 3, cases[i].iv);
		const struct alert_rec *a = find(m, "thrash", NULL);
		CHECK_INT(a != NULL, cases[i].opens);
		if (a && cases[i].opens) {
			double after = (double)a->opened_ms / 1000.0 - onset;
			if (after > cases[i].max_after_onset)
				fprintf(stderr, "case %zu: opened %.1f s after onset\n", i, after);
			CHECK(after <= cases[i].max_after_onset);
			CHECK_STR(a->severity, cases[i].crit ? "critical" : "warning");
		}
		detect_mem_free(m);
	}
}

/* Timestamps jittered by less than a tenth of the interval still open;
 * an alert never opens on a clear sample, even when the span is reached
 * there. */
static void test_jitter_and_clear_sample(void)
{
	struct detect_mem *m = detect_mem_new();
	struct gen g;

	gen_init(&g, "jit");
	run(m, &g, 3, 10);
	warn_thrash(&g, 1);
	run(m, &g, 3, 9.7);	/* three warning samples spanning 29.1 s */
	const struct alert_rec *a = find(m, "thrash", NULL);
	CHECK(a != NULL);
	if (a)
		CHECK_INT(a->opened_ms, (int64_t)llround(g.ts * 1000));
	detect_mem_free(m);

	m = detect_mem_new();
	gen_init(&g, "clr");
	run(m, &g, 3, 10);
	warn_thrash(&g, 1);
	run(m, &g, 2, 10);	/* hits spanning 20 s */
	warn_thrash(&g, 0);
	run(m, &g, 1, 10);	/* clear, 30 s after the first hit's interval began */
	CHECK_INT(detect_mem_count(m), 0);
	warn_thrash(&g, 1);
	run(m, &g, 1, 10);	/* the next hit opens */
	a = find(m, "thrash", NULL);
	CHECK(a != NULL);
	if (a)
		CHECK_INT(a->opened_ms, (int64_t)llround(g.ts * 1000));
	detect_mem_free(m);
}

static void test_kernel_bugs(void)
{
	struct kver k;
	char buf[512];

	kver_parse(&k, "5.4.0-150-generic");
	CHECK(k.major == 5 && k.minor == 4 && k.patch == 0);
	kver_parse(&k, "4.19.91-27.al7.x86_64");
	CHECK(k.major == 4 && k.minor == 19 && k.patch == 91);
	kver_parse(&k, "6.1");
	CHECK(k.major == 6 && k.minor == 1);
	kver_parse(&k, "garbage");
	CHECK(!kver_known(&k));
	kver_parse(&k, NULL);
	CHECK(!kver_known(&k));

	kver_parse(&k, "4.19.0-27-amd64");
	CHECK(kbug_inside(KB_COLD_ANON, &k));
	CHECK_CONTAINS(kbug_verdict(KB_COLD_ANON, &k, buf, sizeof(buf)), "kernel 4.19.0 is inside");
	kver_parse(&k, "4.19.91");	/* the 4.19 stable series has it since 4.19.62 */
	CHECK(!kbug_inside(KB_COLD_ANON, &k));
	CHECK_CONTAINS(kbug_verdict(KB_COLD_ANON, &k, buf, sizeof(buf)), "has the fix since 4.19.62");
	kver_parse(&k, "5.4.22");
	CHECK(kbug_inside(KB_SCAN_ROUNDUP, &k));
	kver_parse(&k, "5.4.23");
	CHECK(!kbug_inside(KB_SCAN_ROUNDUP, &k));
	kver_parse(&k, "4.19.0-27-amd64");
	CHECK_CONTAINS(buf, "scan anonymous pages on file refaults");
	CHECK_CONTAINS(buf, "backports");
	kver_parse(&k, "5.3.0");
	CHECK(!kbug_inside(KB_COLD_ANON, &k));
	CHECK_CONTAINS(kbug_verdict(KB_COLD_ANON, &k, buf, sizeof(buf)), "kernel 5.3.0 is after");
	kver_parse(&k, "5.5.0");
	CHECK(kbug_inside(KB_SCAN_ROUNDUP, &k));
	kver_parse(&k, "4.19.0");
	CHECK_CONTAINS(kbug_verdict(KB_SCAN_ROUNDUP, &k, buf, sizeof(buf)), "kernel 4.19.0 is before");
	kver_parse(&k, "5.6.0");
	CHECK(!kbug_inside(KB_SCAN_ROUNDUP, &k));
	kver_parse(&k, "4.10.0-rc5");
	CHECK(kbug_inside(KB_KSWAPD_WRITEBACK, &k));
	kver_parse(&k, "4.11.0");
	CHECK(!kbug_inside(KB_KSWAPD_WRITEBACK, &k));
	kver_parse(&k, "4.12.14");
	CHECK(!kbug_inside(KB_LAZYFREE_SWAPLESS, &k));
	/* the stable releases that received the fixes (release announcements) */
	static const struct { const char *rel; enum kbug b; int inside; } stable[] = {
		{ "4.14.134", KB_COLD_ANON, 1 }, { "4.14.135", KB_COLD_ANON, 0 },
		{ "4.19.61", KB_COLD_ANON, 1 }, { "4.19.62", KB_COLD_ANON, 0 },
		{ "5.1.20", KB_COLD_ANON, 1 }, { "5.1.21", KB_COLD_ANON, 0 },
		{ "5.2.2", KB_COLD_ANON, 1 }, { "5.2.3", KB_COLD_ANON, 0 },
		{ "5.5.6", KB_SCAN_ROUNDUP, 1 }, { "5.5.7", KB_SCAN_ROUNDUP, 0 },
		/* 68600f623d69 was backported to 4.14 and 4.19 before the fix */
		{ "4.19.106", KB_SCAN_ROUNDUP, 1 }, { "4.19.107", KB_SCAN_ROUNDUP, 0 },
		{ "4.14.171", KB_SCAN_ROUNDUP, 1 }, { "4.14.172", KB_SCAN_ROUNDUP, 0 },
		{ "4.9.300", KB_SCAN_ROUNDUP, 0 },
	};
	for (size_t i = 0; i < sizeof(stable) / sizeof(stable[0]); i++) {
		kver_parse(&k, stable[i].rel);
		if (kbug_inside(stable[i].b, &k) != stable[i].inside)
			fprintf(stderr, "kernel %s: inside %d, expected %d\n", stable[i].rel,
				kbug_inside(stable[i].b, &k), stable[i].inside);
		CHECK_INT(kbug_inside(stable[i].b, &k), stable[i].inside);
	}
	kver_parse(&k, "4.19.106");
	CHECK_CONTAINS(kbug_verdict(KB_SCAN_ROUNDUP, &k, buf, sizeof(buf)), "fix only in 4.19.107");
	kver_parse(&k, "4.14.200");
	CHECK_CONTAINS(kbug_verdict(KB_SCAN_ROUNDUP, &k, buf, sizeof(buf)), "kernel 4.14.200 is before");
	kver_parse(&k, NULL);
	CHECK_CONTAINS(kbug_verdict(KB_COLD_ANON, &k, buf, sizeof(buf)), "4.14.135, 4.19.62, 5.1.21 and 5.2.3");
	CHECK_CONTAINS(kbug_verdict(KB_SCAN_ROUNDUP, &k, buf, sizeof(buf)), "upstream fix");
	/* truncation is safe */
	kbug_verdict(KB_SCAN_ROUNDUP, &k, buf, 8);
	CHECK_INT(strlen(buf), 7);
}

int main(void)
{
	test_rates();
	test_thrash_and_imbalance_open_times();
	test_no_imbalance_without_swap_or_swappiness();
	test_sustain_keeps_open();
	test_lazyfree();
	test_zswap_churn();
	test_psi_owner();
	test_writeback();
	test_cgroup_fsync_is_not_a_storm();
	test_cgroup_scope();
	test_gap();
	test_reboot_and_stale();
	test_reanchor();
	test_old_kernel_names();
	test_oom();
	test_state_roundtrip_and_corrupt();
	test_state_formats();
	test_agent_fixtures();
	test_open_rules();
	test_overswap_batches();
	test_jitter_and_clear_sample();
	test_kernel_bugs();
	return harness_report("test_detect");
}
