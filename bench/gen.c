/* gen.c - synthetic host model for the benchmarks (see gen.h). */
#include "gen.h"
#include "dict.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const vmstat_names[] = { "nr_free_pages", "nr_free_pages_blocks", "nr_zone_inactive_anon", "nr_zone_active_anon", "nr_zone_inactive_file", "nr_zone_active_file", "nr_zone_unevictable", "nr_zone_write_pending", "nr_mlock", "nr_zspages", "nr_free_cma", "numa_hit", "numa_miss", "numa_foreign", "numa_interleave", "numa_local", "numa_other", "nr_inactive_anon", "nr_active_anon", "nr_inactive_file", "nr_active_file", "nr_unevictable", "nr_slab_reclaimable", "nr_slab_unreclaimable", "nr_isolated_anon", "nr_isolated_file", "workingset_nodes", "workingset_refault_anon", "workingset_refault_file", "workingset_activate_anon", "workingset_activate_file", "workingset_restore_anon", "workingset_restore_file", "workingset_nodereclaim", "nr_anon_pages", "nr_mapped", "nr_file_pages", "nr_dirty", "nr_writeback", "nr_shmem", "nr_shmem_hugepages", "nr_shmem_pmdmapped", "nr_file_hugepages", "nr_file_pmdmapped", "nr_anon_transparent_hugepages", "nr_vmscan_write", "nr_vmscan_immediate_reclaim", "nr_dirtied", "nr_written", "nr_throttled_written", "nr_kernel_misc_reclaimable", "nr_foll_pin_acquired", "nr_foll_pin_released", "nr_kernel_stack", "nr_page_table_pages", "nr_sec_page_table_pages", "nr_iommu_pages", "nr_swapcached", "pgpromote_success", "pgpromote_candidate", "pgpromote_candidate_nrl", "pgdemote_kswapd", "pgdemote_direct", "pgdemote_khugepaged", "pgdemote_proactive", "nr_hugetlb", "nr_balloon_pages", "nr_kernel_file_pages", "nr_dirty_threshold", "nr_dirty_background_threshold", "nr_memmap_pages", "nr_memmap_boot_pages", "pgpgin", "pgpgout", "pswpin", "pswpout", "pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "pgalloc_movable", "pgalloc_device", "allocstall_dma", "allocstall_dma32", "allocstall_normal", "allocstall_movable", "allocstall_device", "pgskip_dma", "pgskip_dma32", "pgskip_normal", "pgskip_movable", "pgskip_device", "pgfree", "pgactivate", "pgdeactivate", "pglazyfree", "pgfault", "pgmajfault", "pglazyfreed", "pgrefill", "pgreuse", "pgsteal_kswapd", "pgsteal_direct", "pgsteal_khugepaged", "pgsteal_proactive", "pgscan_kswapd", "pgscan_direct", "pgscan_khugepaged", "pgscan_proactive", "pgscan_direct_throttle", "pgscan_anon", "pgscan_file", "pgsteal_anon", "pgsteal_file", "zone_reclaim_success", "zone_reclaim_failed", "pginodesteal", "slabs_scanned", "kswapd_inodesteal", "kswapd_low_wmark_hit_quickly", "kswapd_high_wmark_hit_quickly", "pageoutrun", "pgrotated", "drop_pagecache", "drop_slab", "oom_kill", "numa_pte_updates", "numa_huge_pte_updates", "numa_hint_faults", "numa_hint_faults_local", "numa_pages_migrated", "pgmigrate_success", "pgmigrate_fail", "thp_migration_success", "thp_migration_fail", "thp_migration_split", "compact_migrate_scanned", "compact_free_scanned", "compact_isolated", "compact_stall", "compact_fail", "compact_success", "compact_daemon_wake", "compact_daemon_migrate_scanned", "compact_daemon_free_scanned", "htlb_buddy_alloc_success", "htlb_buddy_alloc_fail", "unevictable_pgs_culled", "unevictable_pgs_scanned", "unevictable_pgs_rescued", "unevictable_pgs_mlocked", "unevictable_pgs_munlocked", "unevictable_pgs_cleared", "unevictable_pgs_stranded", "thp_fault_alloc", "thp_fault_fallback", "thp_fault_fallback_charge", "thp_collapse_alloc", "thp_collapse_alloc_failed", "thp_file_alloc", "thp_file_fallback", "thp_file_fallback_charge", "thp_file_mapped", "thp_split_page", "thp_split_page_failed", "thp_deferred_split_page", "thp_underused_split_page", "thp_split_pmd", "thp_scan_exceed_none_pte", "thp_scan_exceed_swap_pte", "thp_scan_exceed_share_pte", "thp_split_pud", "thp_zero_page_alloc", "thp_zero_page_alloc_failed", "thp_swpout", "thp_swpout_fallback", "balloon_inflate", "balloon_deflate", "balloon_migrate", "swap_ra", "swap_ra_hit", "swpin_zero", "swpout_zero", "ksm_swpin_copy", "cow_ksm", "zswpin", "zswpout", "zswpwb", "direct_map_level2_splits", "direct_map_level3_splits", "direct_map_level2_collapses", "direct_map_level3_collapses", "nr_unstable",  };
static const char *const meminfo_names[] = { "MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SwapCached", "Active", "Inactive", "Active(anon)", "Inactive(anon)", "Active(file)", "Inactive(file)", "Unevictable", "Mlocked", "SwapTotal", "SwapFree", "Zswap", "Zswapped", "Dirty", "Writeback", "AnonPages", "Mapped", "Shmem", "KReclaimable", "Slab", "SReclaimable", "SUnreclaim", "KernelStack", "PageTables", "SecPageTables", "NFS_Unstable", "Bounce", "WritebackTmp", "CommitLimit", "Committed_AS", "VmallocTotal", "VmallocUsed", "VmallocChunk", "Percpu", "AnonHugePages", "ShmemHugePages", "ShmemPmdMapped", "FileHugePages", "FilePmdMapped", "Balloon", "HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "HugePages_Surp", "Hugepagesize", "Hugetlb", "DirectMap4k", "DirectMap2M",  };
static const char *const cgstat_names[] = {
	"anon", "file", "kernel", "kernel_stack", "pagetables", "sec_pagetables", "percpu",
	"sock", "vmalloc", "shmem", "zswap", "zswapped", "file_mapped", "file_dirty",
	"file_writeback", "swapcached", "anon_thp", "file_thp", "shmem_thp", "inactive_anon",
	"active_anon", "inactive_file", "active_file", "unevictable", "slab_reclaimable",
	"slab_unreclaimable", "slab", "workingset_refault_anon", "workingset_refault_file",
	"workingset_activate_anon", "workingset_activate_file", "workingset_restore_anon",
	"workingset_restore_file", "workingset_nodereclaim", "pgscan", "pgsteal",
	"pgscan_kswapd", "pgscan_direct", "pgscan_khugepaged", "pgsteal_kswapd",
	"pgsteal_direct", "pgsteal_khugepaged", "pgfault", "pgmajfault", "pgrefill",
	"pgactivate", "pgdeactivate", "pglazyfree", "pglazyfreed", "zswpin", "zswpout",
	"thp_fault_alloc", "thp_collapse_alloc",
};
static const char *const cgevent_names[] = { "low", "high", "max", "oom", "oom_kill", "oom_group_kill" };

#define NVM (sizeof(vmstat_names) / sizeof(vmstat_names[0]))
#define NMI (sizeof(meminfo_names) / sizeof(meminfo_names[0]))
enum { MI_MEMTOTAL = 0, MI_SWAPTOTAL = 14, MI_SWAPFREE = 15 };	/* positions in meminfo_names */
#define NCS (sizeof(cgstat_names) / sizeof(cgstat_names[0]))
#define NCE (sizeof(cgevent_names) / sizeof(cgevent_names[0]))

/* How a value moves per second: 0 flat, >0 counter growing by up to that
 * many, <0 gauge wandering by up to that many. One in four counters moves. */
struct gen_cg {
	char path[64];
	int64_t stat[NCS], events[NCE], psi_total[2], current, max;
};

struct gen_host {
	char name[64];
	uint64_t rng;
	uint64_t boot;	/* fixed per host: part of its boot_id */
	int64_t vm[NVM], vm_rate[NVM];
	int64_t mi[NMI], mi_rate[NMI];
	int64_t psi_total[3][2];
	int ncg;
	struct gen_cg *cg;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct gen_host *gen_host_new(const char *name, int ncg, uint64_t seed)
{
	struct gen_host *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->rng = seed * 2654435761u + 88172645463325252ULL;
	h->boot = seed & 0xffffffffffffULL;
	for (size_t i = 0; i < NVM; i++) {
		h->vm[i] = (int64_t)(rnd(&h->rng) % 100000000);
		uint64_t r = rnd(&h->rng) % 8;
		bool gauge = strncmp(vmstat_names[i], "nr_", 3) == 0;
		h->vm_rate[i] = r < 2 ? (gauge ? -(int64_t)(rnd(&h->rng) % 500) : (int64_t)(rnd(&h->rng) % 5000)) : 0;
	}
	for (size_t i = 0; i < NMI; i++) {
		h->mi[i] = (int64_t)(rnd(&h->rng) % 30000000);
		h->mi_rate[i] = rnd(&h->rng) % 3 == 0 ? -(int64_t)(rnd(&h->rng) % 2000) : 0;
	}
	/* totals fixed and above what they bound (the dashboard charts
	 * MemTotal - MemAvailable and SwapTotal - SwapFree) */
	h->mi[MI_MEMTOTAL] = 33554432;	/* 32 GiB in kB */
	h->mi[MI_SWAPTOTAL] = 8388604;
	h->mi_rate[MI_MEMTOTAL] = h->mi_rate[MI_SWAPTOTAL] = 0;
	h->mi[MI_SWAPFREE] %= h->mi[MI_SWAPTOTAL];
	h->ncg = ncg;
	h->cg = calloc((size_t)(ncg ? ncg : 1), sizeof(*h->cg));
	if (!h->cg) {
		free(h);
		return NULL;
	}
	for (int c = 0; c < ncg; c++) {
		struct gen_cg *g = &h->cg[c];
		snprintf(g->path, sizeof(g->path), c < 4 ? "/system.slice" : "/system.slice/svc-%02d.service", c);
		if (c > 0 && c < 4)
			snprintf(g->path, sizeof(g->path), c == 1 ? "/user.slice" : c == 2 ? "/init.scope" : "/machine.slice");
		for (size_t i = 0; i < NCS; i++)
			g->stat[i] = (int64_t)(rnd(&h->rng) % 1000000000);
		g->current = (int64_t)(rnd(&h->rng) % 4000000000LL);
		g->max = c % 3 == 0 ? SAMPLE_NULL : 8589934592LL;
	}
	return h;
}

void gen_host_free(struct gen_host *h)
{
	if (!h)
		return;
	free(h->cg);
	free(h);
}

/* moves v by rate over dt: counters grow, gauges wander but stay >= 0 */
static int64_t move(uint64_t *rng, int64_t v, int64_t rate, int64_t dt_ms)
{
	if (rate == 0)
		return v;
	int64_t span = (rate < 0 ? -rate : rate) * dt_ms / 1000 + 1;
	int64_t d = (int64_t)(rnd(rng) % (uint64_t)span);
	if (rate > 0)
		return v + d;
	v += (rnd(rng) & 1) ? d : -d;
	return v < 0 ? 0 : v;
}

void gen_host_step(struct gen_host *h, int64_t dt_ms)
{
	for (size_t i = 0; i < NVM; i++)
		h->vm[i] = move(&h->rng, h->vm[i], h->vm_rate[i], dt_ms);
	for (size_t i = 0; i < NMI; i++)
		h->mi[i] = move(&h->rng, h->mi[i], h->mi_rate[i], dt_ms);
	if (h->mi[MI_SWAPFREE] > h->mi[MI_SWAPTOTAL])
		h->mi[MI_SWAPFREE] = h->mi[MI_SWAPTOTAL];
	for (int r = 0; r < 3; r++)
		h->psi_total[r][0] += (int64_t)(rnd(&h->rng) % 50) * dt_ms / 1000;
	for (int c = 0; c < h->ncg; c++) {
		struct gen_cg *g = &h->cg[c];
		for (size_t i = 0; i < NCS; i += 4)
			g->stat[i] = move(&h->rng, g->stat[i], i > 26 ? 200 : -4096, dt_ms);
		g->current = move(&h->rng, g->current, -100000, dt_ms);
		g->psi_total[0] += (int64_t)(rnd(&h->rng) % 20) * dt_ms / 1000;
	}
}

/* Numbers in a rendered body that follow the host's state: where they are,
 * how wide, what they show and where their value lives. */
enum slot_kind { SK_INT, SK_NULLABLE, SK_MOD7, SK_TS };

struct gen_slot {
	uint32_t off;
	uint8_t width;
	uint8_t kind;		/* enum slot_kind */
	const int64_t *src;	/* NULL for SK_TS */
	int64_t shown;
};

struct gen_body {
	const struct gen_host *h;	/* rendered from; NULL: never rendered */
	char *buf;
	size_t cap, len;
	struct gen_slot *slot;
	size_t nslot, slotcap;
	bool fresh;			/* slots are being recorded */
	bool oom;
};

/* The renderer's state: into buf (cap), recording slots into b when set. */
struct wr {
	char *buf;
	size_t cap, len;
	int err;
	struct gen_body *b;
};

static void lit(struct wr *w, const char *s, size_t n)
{
	if (w->err || n >= w->cap - w->len) {
		w->err = 1;
		return;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

#define LIT(w, s) lit(w, s, sizeof(s) - 1)

static void str(struct wr *w, const char *s)
{
	lit(w, s, strlen(s));
}

/* The text of a slot's value into t (at least 24 bytes); its length. */
static size_t fmt_slot(enum slot_kind k, int64_t v, char *t)
{
	char tmp[24], *q = tmp + sizeof(tmp);
	uint64_t u;
	size_t n;

	if (k == SK_NULLABLE && v == SAMPLE_NULL) {
		memcpy(t, "null", 4);
		return 4;
	}
	if (k == SK_MOD7) {
		t[0] = '0';
		t[1] = (char)('0' + v % 7);
		return 2;
	}
	if (k == SK_TS) {
		/* "%lld.%03lld" of seconds and milliseconds */
		n = fmt_slot(SK_INT, v / 1000, t);
		t[n] = '.';
		t[n + 1] = (char)('0' + v % 1000 / 100);
		t[n + 2] = (char)('0' + v % 100 / 10);
		t[n + 3] = (char)('0' + v % 10);
		return n + 4;
	}
	u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do
		*--q = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--q = '-';
	n = (size_t)(tmp + sizeof(tmp) - q);
	memcpy(t, q, n);
	return n;
}

static void num(struct wr *w, enum slot_kind k, const int64_t *src, int64_t v)
{
	char t[24];
	size_t n = fmt_slot(k, v, t);
	struct gen_body *b = w->b;

	if (b && !w->err && !b->oom) {
		if (b->nslot == b->slotcap) {
			size_t ncap = b->slotcap ? b->slotcap * 2 : 512;
			struct gen_slot *ns = realloc(b->slot, ncap * sizeof(*ns));
			if (!ns) {
				b->oom = true;
				return;
			}
			b->slot = ns;
			b->slotcap = ncap;
		}
		b->slot[b->nslot++] = (struct gen_slot){ (uint32_t)w->len, (uint8_t)n, (uint8_t)k, src, v };
	}
	lit(w, t, n);
}

static void render(struct wr *w, const struct gen_host *h, int64_t ts_ms)
{
	static const char *const res[] = { "memory", "io", "cpu" };
	char boot[16];

	snprintf(boot, sizeof(boot), "%012llx", (unsigned long long)h->boot);
	LIT(w, "{\"host\":\"");
	str(w, h->name);
	LIT(w, "\",\"boot_id\":\"5f1c3a9e-0000-4000-8000-");
	str(w, boot);
	LIT(w, "\",\"ts\":");
	num(w, SK_TS, NULL, ts_ms);
	LIT(w, ",\"interval_s\":10,\"kernel\":\"6.1.0-18-amd64\",\"page_size\":4096,"
	    "\"agent_version\":\"bench\",\"labels\":{\"role\":\"bench\"},\"vmstat\":{");
	for (size_t i = 0; i < NVM; i++) {
		if (i)
			LIT(w, ",");
		LIT(w, "\"");
		str(w, vmstat_names[i]);
		LIT(w, "\":");
		num(w, SK_INT, &h->vm[i], h->vm[i]);
	}
	LIT(w, "},\"meminfo\":{");
	for (size_t i = 0; i < NMI; i++) {
		if (i)
			LIT(w, ",");
		LIT(w, "\"");
		str(w, meminfo_names[i]);
		LIT(w, "\":");
		num(w, SK_INT, &h->mi[i], h->mi[i]);
	}
	LIT(w, "},\"psi\":{");
	for (int r = 0; r < 3; r++) {
		if (r)
			LIT(w, ",");
		LIT(w, "\"");
		str(w, res[r]);
		LIT(w, "\":{\"some\":{\"avg10\":0.");
		num(w, SK_MOD7, &h->psi_total[r][0], h->psi_total[r][0]);
		LIT(w, ",\"avg60\":0.00,\"avg300\":0.00,\"total\":");
		num(w, SK_INT, &h->psi_total[r][0], h->psi_total[r][0]);
		LIT(w, "},\"full\":{\"avg10\":0.00,\"avg60\":0.00,\"avg300\":0.00,\"total\":");
		num(w, SK_INT, &h->psi_total[r][1], h->psi_total[r][1]);
		LIT(w, "}}");
	}
	LIT(w, "},\"settings\":{\"vm.swappiness\":60,\"vm.dirty_ratio\":20,"
	    "\"vm.dirty_background_ratio\":10,\"vm.dirty_bytes\":0,\"vm.dirty_background_bytes\":0,"
	    "\"vm.min_free_kbytes\":67584,\"vm.watermark_scale_factor\":10},\"cgroups\":[");
	for (int c = 0; c < h->ncg; c++) {
		const struct gen_cg *g = &h->cg[c];
		if (c)
			LIT(w, ",");
		LIT(w, "{\"path\":\"");
		str(w, g->path);
		LIT(w, "\",\"version\":2,\"memory_stat\":{");
		for (size_t i = 0; i < NCS; i++) {
			if (i)
				LIT(w, ",");
			LIT(w, "\"");
			str(w, cgstat_names[i]);
			LIT(w, "\":");
			num(w, SK_INT, &g->stat[i], g->stat[i]);
		}
		LIT(w, "},\"events\":{");
		for (size_t i = 0; i < NCE; i++) {
			if (i)
				LIT(w, ",");
			LIT(w, "\"");
			str(w, cgevent_names[i]);
			LIT(w, "\":");
			num(w, SK_INT, &g->events[i], g->events[i]);
		}
		LIT(w, "},\"psi\":{\"some\":{\"avg10\":0.00,\"avg60\":0.00,\"avg300\":0.00,\"total\":");
		num(w, SK_INT, &g->psi_total[0], g->psi_total[0]);
		LIT(w, "},\"full\":{\"avg10\":0.00,\"avg60\":0.00,\"avg300\":0.00,\"total\":");
		num(w, SK_INT, &g->psi_total[1], g->psi_total[1]);
		LIT(w, "}},\"memory_current\":");
		num(w, SK_INT, &g->current, g->current);
		LIT(w, ",\"memory_max\":");
		num(w, SK_NULLABLE, &g->max, g->max);
		LIT(w, ",\"swap_current\":0}");
	}
	LIT(w, "]}");
}

int gen_host_json(const struct gen_host *h, int64_t ts_ms, char *buf, size_t cap)
{
	struct wr w = { buf, cap, 0, 0, NULL };

	if (!cap)
		return -1;
	render(&w, h, ts_ms);
	return w.err ? -1 : (int)w.len;
}

struct gen_body *gen_body_new(void)
{
	return calloc(1, sizeof(struct gen_body));
}

void gen_body_free(struct gen_body *b)
{
	if (!b)
		return;
	free(b->buf);
	free(b->slot);
	free(b);
}

/* Renders h whole into b, recording the slots. */
static int body_full(struct gen_body *b, const struct gen_host *h, int64_t ts_ms)
{
	for (;;) {
		if (!b->buf) {
			b->cap = b->cap ? b->cap : 64 * 1024;
			if (!(b->buf = malloc(b->cap)))
				return -1;
		}
		struct wr w = { b->buf, b->cap, 0, 0, b };
		b->nslot = 0;
		b->oom = false;
		render(&w, h, ts_ms);
		if (b->oom)
			return -1;
		if (!w.err) {
			b->len = w.len;
			b->h = h;
			return 0;
		}
		if (b->cap >= 64u << 20)
			return -1;
		free(b->buf);
		b->buf = NULL;
		b->cap *= 2;
	}
}

const char *gen_body_render(struct gen_body *b, const struct gen_host *h, int64_t ts_ms, size_t *len)
{
	char t[24];

	if (b->h != h)
		goto full;
	for (size_t i = 0; i < b->nslot; i++) {
		struct gen_slot *sl = &b->slot[i];
		int64_t v = sl->kind == SK_TS ? ts_ms : *sl->src;
		if (v == sl->shown)
			continue;
		size_t n = fmt_slot((enum slot_kind)sl->kind, v, t);
		if (n != sl->width)
			goto full;	/* a number grew a digit: shift everything once */
		memcpy(b->buf + sl->off, t, n);
		sl->shown = v;
	}
	*len = b->len;
	return b->buf;
full:
	if (body_full(b, h, ts_ms) < 0)
		return NULL;
	*len = b->len;
	return b->buf;
}

int gen_host_sample(const struct gen_host *h, int64_t ts_ms, struct sample *s)
{
	/* One path for both outputs: render JSON, then validate it like ingest
	 * would. The bulk loader is not CPU-bound on this. */
	size_t cap = 256 * 1024;
	char *buf = malloc(cap);
	char err[SAMPLE_ERR_MAX];
	json_error_t je;
	int rc = -1;

	sample_init(s);
	if (!buf)
		return -1;
	int n = gen_host_json(h, ts_ms, buf, cap);
	json_t *j = n > 0 ? json_loadb(buf, (size_t)n, 0, &je) : NULL;
	if (j && sample_from_json(s, j, err) == 0)
		rc = 0;
	else if (j)
		fprintf(stderr, "gen: %s\n", err);
	json_decref(j);
	free(buf);
	return rc;
}

/* ---- gen_host_refresh: the bulk loader's fast path ---- */

/* Dict ids of the names gen_host_json writes and gen_host_step moves,
 * interned once (ids are process-wide and never change). */
static struct {
	uint32_t vm[NVM], mi[NMI], psi_avg10[3], psi_some[3], psi_full[3];
	uint32_t cs[NCS], ce[NCE], cg_psi_some, cg_psi_full, cg_current;
} ids;
static pthread_once_t ids_once = PTHREAD_ONCE_INIT;

static uint32_t id_of(const char *prefix, const char *name)
{
	char buf[160];
	int n = snprintf(buf, sizeof(buf), "%s%s", prefix, name);
	return n > 0 && (size_t)n < sizeof(buf) ? dict_intern(buf, (size_t)n) : 0;
}

static void intern_ids(void)
{
	static const char *const res[] = { "memory", "io", "cpu" };
	char buf[64];

	for (size_t i = 0; i < NVM; i++)
		ids.vm[i] = id_of("vmstat.", vmstat_names[i]);
	for (size_t i = 0; i < NMI; i++)
		ids.mi[i] = id_of("meminfo.", meminfo_names[i]);
	for (int r = 0; r < 3; r++) {
		snprintf(buf, sizeof(buf), "psi.%s.some.", res[r]);
		ids.psi_avg10[r] = id_of(buf, "avg10");
		ids.psi_some[r] = id_of(buf, "total");
		snprintf(buf, sizeof(buf), "psi.%s.full.", res[r]);
		ids.psi_full[r] = id_of(buf, "total");
	}
	for (size_t i = 0; i < NCS; i++)
		ids.cs[i] = id_of("stat.", cgstat_names[i]);
	for (size_t i = 0; i < NCE; i++)
		ids.ce[i] = id_of("events.", cgevent_names[i]);
	ids.cg_psi_some = id_of("psi.some.", "total");
	ids.cg_psi_full = id_of("psi.full.", "total");
	ids.cg_current = id_of("", "memory_current");
}

/* Sets the value of id in a sorted set; -1 when it is not there. */
static int set_value(struct sset *m, uint32_t id, int64_t v)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->f[mid].id == id) {
			m->f[mid].v = v;
			return 0;
		}
		if (m->f[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int gen_host_refresh(const struct gen_host *h, int64_t ts_ms, struct sample *s)
{
	int bad = 0;

	pthread_once(&ids_once, intern_ids);
	if ((size_t)h->ncg != s->ncg)
		return -1;
	s->ts_ms = ts_ms;
	for (size_t i = 0; i < NVM; i++)
		bad |= set_value(&s->m, ids.vm[i], h->vm[i]);
	for (size_t i = 0; i < NMI; i++)
		bad |= set_value(&s->m, ids.mi[i], h->mi[i]);
	for (int r = 0; r < 3; r++) {
		/* avg10 is printed as 0.0N percent: N centi-percent */
		bad |= set_value(&s->m, ids.psi_avg10[r], h->psi_total[r][0] % 7);
		bad |= set_value(&s->m, ids.psi_some[r], h->psi_total[r][0]);
		bad |= set_value(&s->m, ids.psi_full[r], h->psi_total[r][1]);
	}
	for (int c = 0; c < h->ncg; c++) {
		const struct gen_cg *g = &h->cg[c];
		struct cgsample *cs = &s->cg[c];
		if (strcmp(cs->path, g->path) != 0)
			return -1;
		for (size_t i = 0; i < NCS; i++)
			bad |= set_value(&cs->m, ids.cs[i], g->stat[i]);
		for (size_t i = 0; i < NCE; i++)
			bad |= set_value(&cs->m, ids.ce[i], g->events[i]);
		bad |= set_value(&cs->m, ids.cg_psi_some, g->psi_total[0]);
		bad |= set_value(&cs->m, ids.cg_psi_full, g->psi_total[1]);
		bad |= set_value(&cs->m, ids.cg_current, g->current);
	}
	return bad ? -1 : 0;
}
