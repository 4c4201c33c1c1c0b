/* detect_feat.c - maps kernel- and cgroup-version-specific names onto the
 * fixed slots of struct feat (see detect_feat.h).
 *
 * Each slot has alternatives tried in order; an alternative is a '+'-joined
 * list of flattened names whose values are summed (per-zone counters before
 * 4.8, anon+file after 5.8) and counts as present when any part is. The
 * names are interned once into dictionary ids, and each scope's ids sorted
 * into one list: a sample's sorted fields are matched against it in one
 * merge pass, after which every part is read by its position in the list
 * (a binary search per part was ~5% of the server's instructions per
 * 20-cgroup sample, callgrind).
 */
#include "detect_feat.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "rates.h"

#define MAX_ALT 4
#define MAX_PART 10

/* pos: the part's index in its scope's sorted id list (NO_POS: id 0) */
struct alt { uint32_t id[MAX_PART]; uint16_t pos[MAX_PART]; int n; };
struct slot { struct alt a[MAX_ALT]; int n; };

enum scope { SC_HOST, SC_V1, SC_V2, NSCOPE };

/* The distinct ids a scope's slots read, sorted (90 for the host, 40 for a
 * cgroup today). */
#define MAX_IDS 512
#define NO_POS 0xffff
static uint32_t scope_ids[NSCOPE][MAX_IDS];
static int nscope_ids[NSCOPE];
static bool scope_over[NSCOPE];	/* more ids than MAX_IDS: parts read by binary search */

/* Alternatives per slot and scope ("" = none). Zones for the pre-4.8 names. */
#define ZONES(p) p "_dma+" p "_dma32+" p "_normal+" p "_movable+" p "_high"
static const char *const ctr_src[NSCOPE][NCTR][MAX_ALT] = {
	[SC_HOST] = {
		[C_REFAULT_FILE] = { "vmstat.workingset_refault_file", "vmstat.workingset_refault" },
		[C_REFAULT_ANON] = { "vmstat.workingset_refault_anon" },
		[C_REFAULT_ALL] = { "vmstat.workingset_refault_file+vmstat.workingset_refault_anon",
				    "vmstat.workingset_refault" },
		[C_ACTIVATE_FILE] = { "vmstat.workingset_activate_file", "vmstat.workingset_activate" },
		[C_ACTIVATE_ALL] = { "vmstat.workingset_activate_file+vmstat.workingset_activate_anon",
				     "vmstat.workingset_activate" },
		[C_RESTORE_ALL] = { "vmstat.workingset_restore_file+vmstat.workingset_restore_anon",
				    "vmstat.workingset_restore" },
		[C_SCAN_ANON] = { "vmstat.pgscan_anon" },
		[C_SCAN_FILE] = { "vmstat.pgscan_file" },
		[C_SCAN_ALL] = { "vmstat.pgscan_anon+vmstat.pgscan_file",
				 "vmstat.pgscan_kswapd+vmstat.pgscan_direct+vmstat.pgscan_khugepaged",
				 ZONES("vmstat.pgscan_kswapd") "+" ZONES("vmstat.pgscan_direct") },
		[C_STEAL_ALL] = { "vmstat.pgsteal_anon+vmstat.pgsteal_file",
				  "vmstat.pgsteal_kswapd+vmstat.pgsteal_direct+vmstat.pgsteal_khugepaged",
				  ZONES("vmstat.pgsteal_kswapd") "+" ZONES("vmstat.pgsteal_direct") },
		[C_SCAN_GLOBAL] = { "vmstat.pgscan_kswapd+vmstat.pgscan_direct+vmstat.pgscan_khugepaged",
				    ZONES("vmstat.pgscan_kswapd") "+" ZONES("vmstat.pgscan_direct") },
		[C_STEAL_GLOBAL] = { "vmstat.pgsteal_kswapd+vmstat.pgsteal_direct+vmstat.pgsteal_khugepaged",
				     ZONES("vmstat.pgsteal_kswapd") "+" ZONES("vmstat.pgsteal_direct") },
		[C_SCAN_DIRECT] = { "vmstat.pgscan_direct", ZONES("vmstat.pgscan_direct") },
		[C_STEAL_DIRECT] = { "vmstat.pgsteal_direct", ZONES("vmstat.pgsteal_direct") },
		[C_ALLOCSTALL] = { ZONES("vmstat.allocstall") "+vmstat.allocstall_device", "vmstat.allocstall" },
		[C_PGREFILL] = { "vmstat.pgrefill", ZONES("vmstat.pgrefill") },
		[C_VMSCAN_WRITE] = { "vmstat.nr_vmscan_write" },
		[C_IMMEDIATE] = { "vmstat.nr_vmscan_immediate_reclaim" },
		[C_PGROTATED] = { "vmstat.pgrotated" },
		[C_LAZYFREE] = { "vmstat.pglazyfree" },
		[C_LAZYFREED] = { "vmstat.pglazyfreed" },
		[C_PSWPIN] = { "vmstat.pswpin" },	/* + zswpin: detect_swap.c sums them */
		[C_PSWPOUT] = { "vmstat.pswpout" },
		[C_ZSWPOUT] = { "vmstat.zswpout" },
		[C_OOM_KILL] = { "vmstat.oom_kill" },
		[C_MAJFAULT] = { "vmstat.pgmajfault" },
		[C_COMPACT_STALL] = { "vmstat.compact_stall" },
		[C_COMPACT_FAIL] = { "vmstat.compact_fail" },
		[C_PSI_MEM_SOME] = { "psi.memory.some.total" },
		[C_PSI_MEM_FULL] = { "psi.memory.full.total" },
		[C_PSI_IO_SOME] = { "psi.io.some.total" },
		[C_PSI_IO_FULL] = { "psi.io.full.total" },
		[C_ZSWPIN] = { "vmstat.zswpin" },
		[C_STEAL_ANON] = { "vmstat.pgsteal_anon" },
		[C_STEAL_FILE] = { "vmstat.pgsteal_file" },
		[C_PGPGIN] = { "vmstat.pgpgin" },
	},
	[SC_V1] = {
		[C_REFAULT_FILE] = { "stat.total_workingset_refault_file", "stat.workingset_refault_file",
				     "stat.total_workingset_refault", "stat.workingset_refault" },
		[C_REFAULT_ANON] = { "stat.total_workingset_refault_anon", "stat.workingset_refault_anon" },
		[C_REFAULT_ALL] = { "stat.total_workingset_refault_file+stat.total_workingset_refault_anon",
				    "stat.workingset_refault_file+stat.workingset_refault_anon",
				    "stat.total_workingset_refault", "stat.workingset_refault" },
		[C_ACTIVATE_FILE] = { "stat.total_workingset_activate_file", "stat.workingset_activate_file" },
		[C_ACTIVATE_ALL] = { "stat.total_workingset_activate_file+stat.total_workingset_activate_anon",
				     "stat.workingset_activate_file+stat.workingset_activate_anon" },
		[C_RESTORE_ALL] = { "stat.total_workingset_restore_file+stat.total_workingset_restore_anon",
				    "stat.workingset_restore_file+stat.workingset_restore_anon" },
		[C_MAJFAULT] = { "stat.total_pgmajfault", "stat.pgmajfault" },
		[C_PGPGIN] = { "stat.total_pgpgin", "stat.pgpgin" },
		[C_PSI_MEM_SOME] = { "psi.some.total" },
		[C_PSI_MEM_FULL] = { "psi.full.total" },
	},
	[SC_V2] = {
		[C_REFAULT_FILE] = { "stat.workingset_refault_file", "stat.workingset_refault" },
		[C_REFAULT_ANON] = { "stat.workingset_refault_anon" },
		[C_REFAULT_ALL] = { "stat.workingset_refault_file+stat.workingset_refault_anon",
				    "stat.workingset_refault" },
		[C_ACTIVATE_FILE] = { "stat.workingset_activate_file", "stat.workingset_activate" },
		[C_ACTIVATE_ALL] = { "stat.workingset_activate_file+stat.workingset_activate_anon",
				     "stat.workingset_activate" },
		[C_RESTORE_ALL] = { "stat.workingset_restore_file+stat.workingset_restore_anon",
				    "stat.workingset_restore" },
		[C_SCAN_ALL] = { "stat.pgscan" },
		[C_STEAL_ALL] = { "stat.pgsteal" },
		[C_SCAN_DIRECT] = { "stat.pgscan_direct" },
		[C_STEAL_DIRECT] = { "stat.pgsteal_direct" },
		[C_PGREFILL] = { "stat.pgrefill" },
		[C_LAZYFREE] = { "stat.pglazyfree" },
		[C_LAZYFREED] = { "stat.pglazyfreed" },
		/* swap-ins are pswpin + zswpin, as at host level; where memory.stat
		 * has no pswpin (before 6.x) detect_swap.c takes anon refaults */
		[C_PSWPIN] = { "stat.pswpin" },
		[C_PSWPOUT] = { "stat.pswpout" },
		[C_ZSWPOUT] = { "stat.zswpout" },
		[C_ZSWPIN] = { "stat.zswpin" },
		[C_OOM_KILL] = { "events.oom_kill" },
		[C_MAJFAULT] = { "stat.pgmajfault" },
		[C_PSI_MEM_SOME] = { "psi.some.total" },
		[C_PSI_MEM_FULL] = { "psi.full.total" },
		[C_EV_HIGH] = { "events.high" },
		[C_EV_MAX] = { "events.max" },
	},
};

/* Gauges: alternatives and the factor to bytes (or to a fraction). */
struct gsrc { const char *alt[MAX_ALT]; double mul; };
#define KB 1024.0
#define PAGES (-1.0)	/* multiply by the sample's page size */
#define CENTI 0.0001	/* centi-percent -> fraction */
static const struct gsrc gauge_src[NSCOPE][NGAUGE] = {
	[SC_HOST] = {
		[G_MEM_TOTAL] = { { "meminfo.MemTotal" }, KB },
		[G_MEM_AVAIL] = { { "meminfo.MemAvailable" }, KB },
		[G_SWAP_TOTAL] = { { "meminfo.SwapTotal" }, KB },
		[G_SWAP_FREE] = { { "meminfo.SwapFree" }, KB },
		[G_SWAPPINESS] = { { "settings.vm.swappiness" }, 1.0 },
		[G_INACTIVE_ANON] = { { "vmstat.nr_inactive_anon" }, PAGES },
		[G_ACTIVE_ANON] = { { "vmstat.nr_active_anon" }, PAGES },
		[G_INACTIVE_FILE] = { { "vmstat.nr_inactive_file" }, PAGES },
		[G_ACTIVE_FILE] = { { "vmstat.nr_active_file" }, PAGES },
		[G_DIRTY] = { { "vmstat.nr_dirty" }, PAGES },
		[G_WRITEBACK] = { { "vmstat.nr_writeback" }, PAGES },
		[G_PSI_MEM_SOME10] = { { "psi.memory.some.avg10" }, CENTI },
		[G_PSI_MEM_FULL10] = { { "psi.memory.full.avg10" }, CENTI },
		[G_PSI_IO_FULL10] = { { "psi.io.full.avg10" }, CENTI },
		[G_MGLRU] = { { "meta.mglru" }, 1.0 },
		[G_SWAP_DEVICES] = { { "settings.swap.devices" }, 1.0 },
		[G_SWAP_ZRAM] = { { "settings.swap.zram.size_kb" }, KB },
		[G_SWAP_OTHER] = { { "settings.swap.partition.size_kb+settings.swap.file.size_kb" }, KB },
		[G_ZSWAP_ON] = { { "settings.zswap.enabled" }, 1.0 },
	},
	[SC_V1] = {
		[G_SWAPPINESS] = { { "settings.memory.swappiness" }, 1.0 },
		[G_INACTIVE_ANON] = { { "stat.total_inactive_anon", "stat.inactive_anon" }, 1.0 },
		[G_ACTIVE_ANON] = { { "stat.total_active_anon", "stat.active_anon" }, 1.0 },
		[G_INACTIVE_FILE] = { { "stat.total_inactive_file", "stat.inactive_file" }, 1.0 },
		[G_ACTIVE_FILE] = { { "stat.total_active_file", "stat.active_file" }, 1.0 },
		[G_DIRTY] = { { "stat.total_dirty", "stat.dirty" }, 1.0 },
		[G_WRITEBACK] = { { "stat.total_writeback", "stat.writeback" }, 1.0 },
		[G_MEM_CURRENT] = { { "memory_current" }, 1.0 },
		[G_MEM_MAX] = { { "memory_max" }, 1.0 },
		[G_SWAP_CURRENT] = { { "swap_current" }, 1.0 },
		[G_PSI_MEM_SOME10] = { { "psi.some.avg10" }, CENTI },
		[G_PSI_MEM_FULL10] = { { "psi.full.avg10" }, CENTI },
		[G_MEMSW_LIMIT] = { { "stat.hierarchical_memsw_limit" }, 1.0 },
		[G_MEM_LIMIT_HIER] = { { "stat.hierarchical_memory_limit" }, 1.0 },
	},
	[SC_V2] = {
		[G_SWAPPINESS] = { { "settings.memory.swappiness" }, 1.0 },
		[G_INACTIVE_ANON] = { { "stat.inactive_anon" }, 1.0 },
		[G_ACTIVE_ANON] = { { "stat.active_anon" }, 1.0 },
		[G_INACTIVE_FILE] = { { "stat.inactive_file" }, 1.0 },
		[G_ACTIVE_FILE] = { { "stat.active_file" }, 1.0 },
		[G_DIRTY] = { { "stat.file_dirty" }, 1.0 },
		[G_WRITEBACK] = { { "stat.file_writeback" }, 1.0 },
		[G_MEM_CURRENT] = { { "memory_current" }, 1.0 },
		[G_MEM_MAX] = { { "memory_max" }, 1.0 },
		[G_SWAP_CURRENT] = { { "swap_current" }, 1.0 },
		[G_SWAP_MAX] = { { "settings.memory.swap.max" }, 1.0 },
		[G_PSI_MEM_SOME10] = { { "psi.some.avg10" }, CENTI },
		[G_PSI_MEM_FULL10] = { { "psi.full.avg10" }, CENTI },
		[G_MEM_HIGH] = { { "settings.memory.high" }, 1.0 },
	},
};

static const char *const ctr_names[NCTR] = {
	"refault_file", "refault_anon", "refault_all", "activate_file", "activate_all",
	"restore_all", "scan_anon", "scan_file", "scan_all", "steal_all", "scan_global",
	"steal_global", "scan_direct", "steal_direct", "allocstall", "pgrefill",
	"vmscan_write", "immediate", "pgrotated", "lazyfree", "lazyfreed", "pswpin",
	"pswpout", "zswpout", "oom_kill", "majfault", "compact_stall", "compact_fail",
	"psi_mem_some", "psi_mem_full", "psi_io_some", "psi_io_full", "ev_high", "ev_max",
	"swap_used", "anon_lru", "zswpin", "steal_anon", "steal_file", "pgpgin",
};

static struct slot ctr_slot[NSCOPE][NCTR];
static struct slot gauge_slot[NSCOPE][NGAUGE];
static uint32_t id_page_size, id_interval, id_psi_some_total_v2;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Parses "a+b+c" into interned ids. A full dictionary leaves id 0, which
 * never matches a field: the part then reads as absent. */
static void parse_alt(struct alt *a, const char *spec)
{
	const char *p = spec;

	a->n = 0;
	while (*p && a->n < MAX_PART) {
		const char *e = strchr(p, '+');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		a->id[a->n++] = dict_intern(p, len);
		p += len;
		if (*p == '+')
			p++;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Adds the parts of sl's alternatives to the scope's id list (*n so far);
 * false when it is full. */
static bool collect_ids(const struct slot *sl, uint32_t *ids, int *n)
{
	for (int a = 0; a < sl->n; a++)
		for (int i = 0; i < sl->a[a].n; i++) {
			if (!sl->a[a].id[i])
				continue;
			if (*n == MAX_IDS)
				return false;
			ids[(*n)++] = sl->a[a].id[i];
		}
	return true;
}

/* Each part's position in the scope's sorted id list. */
static void place_ids(struct slot *sl, const uint32_t *ids, int n)
{
	for (int a = 0; a < sl->n; a++) {
		for (int i = 0; i < sl->a[a].n; i++) {
			const uint32_t *at = sl->a[a].id[i] ? bsearch(&sl->a[a].id[i], ids, (size_t)n, sizeof(*ids), cmp_u32)
							   : NULL;
			sl->a[a].pos[i] = at ? (uint16_t)(at - ids) : NO_POS;
		}
	}
}

/* The sorted, distinct ids scope s reads, and every part's position. */
static void index_scope(int s)
{
	uint32_t *ids = scope_ids[s];
	int n = 0, u = 0;
	bool fit = true;

	for (int c = 0; c < NCTR; c++)
		fit &= collect_ids(&ctr_slot[s][c], ids, &n);
	for (int g = 0; g < NGAUGE; g++)
		fit &= collect_ids(&gauge_slot[s][g], ids, &n);
	scope_over[s] = !fit;
	qsort(ids, (size_t)n, sizeof(*ids), cmp_u32);
	for (int i = 0; i < n; i++)
		if (u == 0 || ids[u - 1] != ids[i])
			ids[u++] = ids[i];
	nscope_ids[s] = u;
	for (int c = 0; c < NCTR; c++)
		place_ids(&ctr_slot[s][c], ids, u);
	for (int g = 0; g < NGAUGE; g++)
		place_ids(&gauge_slot[s][g], ids, u);
}

static void init_tables(void)
{
	for (int s = 0; s < NSCOPE; s++) {
		for (int c = 0; c < NCTR; c++) {
			struct slot *sl = &ctr_slot[s][c];
			for (int a = 0; a < MAX_ALT && ctr_src[s][c][a]; a++)
				parse_alt(&sl->a[sl->n++], ctr_src[s][c][a]);
		}
		for (int g = 0; g < NGAUGE; g++) {
			struct slot *sl = &gauge_slot[s][g];
			for (int a = 0; a < MAX_ALT && gauge_src[s][g].alt[a]; a++)
				parse_alt(&sl->a[sl->n++], gauge_src[s][g].alt[a]);
		}
	}
	for (int s = 0; s < NSCOPE; s++)
		index_scope(s);
	id_page_size = dict_intern("meta.page_size", strlen("meta.page_size"));
	id_interval = dict_intern("meta.interval_ms", strlen("meta.interval_ms"));
	id_psi_some_total_v2 = dict_intern("psi.some.total", strlen("psi.some.total"));
}

/* Sum of the first alternative with any part present; false when none. */
static bool read_slot(const struct slot *sl, const struct sset *m, int64_t *out)
{
	for (int a = 0; a < sl->n; a++) {
		int64_t sum = 0;
		bool any = false;
		for (int i = 0; i < sl->a[a].n; i++) {
			int64_t v;
			if (sl->a[a].id[i] && sset_get(m, sl->a[a].id[i], &v) && v != SAMPLE_NULL) {
				sum += v;
				any = true;
			}
		}
		if (any) {
			*out = sum;
			return true;
		}
	}
	return false;
}

/* A sample's values of one scope's ids, by position in its list. */
struct scope_vals {
	int64_t v[MAX_IDS];
	unsigned char has[MAX_IDS];	/* present and not null */
};

/* Matches m's sorted fields against scope sc's sorted ids, one pass. */
static void scope_read(struct scope_vals *x, enum scope sc, const struct sset *m)
{
	const uint32_t *ids = scope_ids[sc];
	size_t i = 0, k = 0, n = m->n, nk = (size_t)nscope_ids[sc];

	memset(x->has, 0, nk);
	while (i < n && k < nk) {
		uint32_t a = m->f[i].id, b = ids[k];
		if (a < b) {
			i++;
		} else if (a > b) {
			k++;
		} else {
			x->v[k] = m->f[i].v;
			x->has[k] = m->f[i].v != SAMPLE_NULL;
			i++;
			k++;
		}
	}
}

/* read_slot over values scope_read gathered. */
static bool read_slot_at(const struct slot *sl, const struct scope_vals *x, int64_t *out)
{
	for (int a = 0; a < sl->n; a++) {
		int64_t sum = 0;
		bool any = false;
		for (int i = 0; i < sl->a[a].n; i++) {
			uint16_t p = sl->a[a].pos[i];
			if (p != NO_POS && x->has[p]) {
				sum += x->v[p];
				any = true;
			}
		}
		if (any) {
			*out = sum;
			return true;
		}
	}
	return false;
}

/* a + b, either may be absent; NAN when both are */
static double sum_present(double a, double b)
{
	if (isnan(a) && isnan(b))
		return NAN;
	return (isnan(a) ? 0 : a) + (isnan(b) ? 0 : b);
}

static void extract(struct feat *f, enum scope sc, const struct sset *m, const struct sset *psi_m,
		    double page_size)
{
	struct scope_vals x;
	bool indexed = !scope_over[sc];

	if (indexed)
		scope_read(&x, sc, m);
	for (int c = 0; c < NCTR; c++) {
		bool is_psi = c == C_PSI_MEM_SOME || c == C_PSI_MEM_FULL;
		int64_t v;
		bool got = (is_psi && psi_m) ? read_slot(&ctr_slot[sc][c], psi_m, &v)
			   : indexed	     ? read_slot_at(&ctr_slot[sc][c], &x, &v)
					     : read_slot(&ctr_slot[sc][c], m, &v);
		f->c[c] = got ? v : RATE_ABSENT;
	}
	for (int g = 0; g < NGAUGE; g++) {
		bool is_psi = g == G_PSI_MEM_SOME10 || g == G_PSI_MEM_FULL10;
		double mul = gauge_src[sc][g].mul;
		int64_t v;
		bool got = (is_psi && psi_m) ? read_slot(&gauge_slot[sc][g], psi_m, &v)
			   : indexed	     ? read_slot_at(&gauge_slot[sc][g], &x, &v)
					     : read_slot(&gauge_slot[sc][g], m, &v);
		if (!got) {
			f->g[g] = NAN;
			continue;
		}
		f->g[g] = (double)v * (mul == PAGES ? page_size : mul);
	}
	f->has_mem = !isnan(f->g[G_INACTIVE_FILE]) || !isnan(f->g[G_INACTIVE_ANON]) ||
		     f->c[C_REFAULT_ALL] != RATE_ABSENT;
	/* gauges whose growth the detectors need keep their value in a
	 * counter slot (bytes), so the engine remembers the previous one */
	double used = !isnan(f->g[G_SWAP_CURRENT]) ? f->g[G_SWAP_CURRENT] :
		      (!isnan(f->g[G_SWAP_TOTAL]) && !isnan(f->g[G_SWAP_FREE])) ?
		      f->g[G_SWAP_TOTAL] - f->g[G_SWAP_FREE] : NAN;
	f->c[C_SWAP_USED] = (!isnan(used) && used >= 0) ? (int64_t)used : RATE_ABSENT;
	double anon = sum_present(f->g[G_INACTIVE_ANON], f->g[G_ACTIVE_ANON]);
	f->c[C_ANON_LRU] = !isnan(anon) ? (int64_t)anon : RATE_ABSENT;
	f->has_psi = f->c[C_PSI_MEM_SOME] != RATE_ABSENT || !isnan(f->g[G_PSI_MEM_SOME10]);
}

void feat_extract_host(struct feat *f, const struct sample *s)
{
	int64_t iv, ps;

	feat_meta(s, &iv, &ps);
	extract(f, SC_HOST, &s->m, NULL, (double)ps);
	/* vmstat pgpgin is in kB (block I/O read), the cgroup's in pages */
	if (f->c[C_PGPGIN] != RATE_ABSENT && ps > 0)
		f->c[C_PGPGIN] = f->c[C_PGPGIN] / (ps / 1024 > 0 ? ps / 1024 : 1);
	f->has_mem = true;
	f->version = 0;
}

void feat_extract_cgroup(struct feat *f, const struct cgsample *cg, const struct cgsample *psi_twin)
{
	pthread_once(&once, init_tables);
	const struct sset *psi_m = NULL;
	if (psi_twin && id_psi_some_total_v2) {
		int64_t v;
		if (sset_get(&psi_twin->m, id_psi_some_total_v2, &v))
			psi_m = &psi_twin->m;
	}
	extract(f, cg->version == 1 ? SC_V1 : SC_V2, &cg->m, psi_m, 4096.0);
	f->version = cg->version;
}

void feat_meta(const struct sample *s, int64_t *interval_ms, int64_t *page_size)
{
	int64_t v;

	pthread_once(&once, init_tables);
	*interval_ms = (id_interval && sset_get(&s->m, id_interval, &v) && v > 0) ? v : 0;
	*page_size = (id_page_size && sset_get(&s->m, id_page_size, &v) && v > 0) ? v : 4096;
}

const char *feat_ctr_name(enum feat_ctr c)
{
	return (unsigned)c < NCTR ? ctr_names[c] : "?";
}
