/* detect_engine.c - per-host detector state, hysteresis and parent/child
 * de-duplication (see detect_engine.h for the contract).
 *
 * A feed runs in three passes over the scopes (host + cgroups):
 *  1. rates and detector levels for every scope and kind;
 *  2. de-duplication: a signature that lives in a cgroup is raised there,
 *     not again on its ancestors or the host (v2 memory.stat and the host
 *     counters include the child's reclaim);
 *  3. hysteresis: levels become open / update / resolve actions.
 * Then the current counters become the previous ones.
 */
#include "detect_engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_feat.h"
#include "detect_kinds.h"
#include "kernel_bugs.h"
#include "overrides.h"
#include "rates.h"

enum phase { PH_IDLE, PH_PENDING, PH_OPEN };

struct kstate {
	uint8_t phase, sev, misses, crit_run;
	uint16_t hits, clear_hits;
	int64_t started_ms, since_ms, opened_ms, clear_since_ms;
	int64_t last_hit_ms;	/* pending: last WARNING+ sample; open: last sample not clear */
	int64_t alert_id;
	int64_t crit_since_ms;	/* start of the first interval of the current critical run; 0: none */
	int64_t hit_ms;		/* pending: time covered by hit samples' intervals */
	int64_t miss_ms;	/* pending: time covered by the other samples' intervals */
};

/* A counter snapshot that starts a batch window ("batch windows" below). */
struct anchor {
	int64_t ts_ms;
	int64_t c[NCTR];
};

#define NANCHOR 3

struct scope {
	char *path;		/* NULL for the host scope */
	int64_t last_seen_ms;
	int64_t prev_ts_ms;	/* 0: no previous counters */
	int64_t prev[NCTR];
	struct kstate k[NKIND];
	struct anchor anc[NANCHOR];	/* oldest first, >= DET_BATCH_WINDOW_MS / 2 apart */
	uint8_t nanc;
	/* per feed, not saved */
	bool seen;
	bool valid;		/* rates were computed */
	bool wvalid;		/* the batch window's views were computed */
	bool from_window[NKIND];	/* the kind's level is the batch window's */
	struct feat cur;
	struct dview view;
	struct dview wview, wold, wnew;	/* the batch window, its older and newer part */
	enum det_level lv[NKIND];
	double mag[NKIND];
};

struct det_host {
	char host[HOST_NAME_MAXLEN + 1];
	int64_t last_ts_ms;
	int64_t interval_est_ms;	/* measured */
	int64_t interval_meta_ms;	/* from the sample's interval_s */
	uint64_t boot_hash;
	struct scope *sc;	/* sc[0] is the host; cgroups after it, sorted by path */
	size_t nsc, capsc;
	struct ovr_tuning tune;	/* per feed, not saved: the operator overrides resolved for it */
};

static const det_fn detectors[NKIND] = {
	[K_THRASH] = detect_thrash,
	[K_SWAP_IMBALANCE] = detect_swap_imbalance,
	[K_WRITEBACK_STORM] = detect_writeback_storm,
	[K_DIRECT_RECLAIM_STALL] = detect_direct_reclaim_stall,
	[K_OOM_KILL] = detect_oom_kill,
	[K_COMPACTION_STALL] = detect_compaction_stall,
};

/* Page counters become bytes/s in the view; the rest stay per second. */
static const bool ctr_is_pages[NCTR] = {
	[C_REFAULT_FILE] = 1, [C_REFAULT_ANON] = 1, [C_REFAULT_ALL] = 1, [C_ACTIVATE_FILE] = 1,
	[C_ACTIVATE_ALL] = 1, [C_RESTORE_ALL] = 1, [C_SCAN_ANON] = 1, [C_SCAN_FILE] = 1,
	[C_SCAN_ALL] = 1, [C_STEAL_ALL] = 1, [C_SCAN_GLOBAL] = 1, [C_STEAL_GLOBAL] = 1,
	[C_SCAN_DIRECT] = 1, [C_STEAL_DIRECT] = 1, [C_PGREFILL] = 1, [C_VMSCAN_WRITE] = 1,
	[C_IMMEDIATE] = 1, [C_PGROTATED] = 1, [C_LAZYFREE] = 1, [C_LAZYFREED] = 1,
	[C_PSWPIN] = 1, [C_PSWPOUT] = 1, [C_ZSWPOUT] = 1, [C_ZSWPIN] = 1, [C_STEAL_ANON] = 1,
	[C_STEAL_FILE] = 1, [C_PGPGIN] = 1,
};

/* Gauges kept in counter slots (bytes): their rate is a signed growth. */
static bool ctr_is_gauge(int i)
{
	return i == C_SWAP_USED || i == C_ANON_LRU;
}

static void scope_reset_prev(struct scope *c)
{
	c->prev_ts_ms = 0;
	c->nanc = 0;
	for (int i = 0; i < NCTR; i++)
		c->prev[i] = RATE_ABSENT;
}

static void scope_init(struct scope *c, char *path)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	scope_reset_prev(c);
}

struct det_host *det_host_new(const char *host)
{
	struct det_host *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	snprintf(h->host, sizeof(h->host), "%s", host);
	h->sc = calloc(4, sizeof(*h->sc));
	if (!h->sc) {
		free(h);
		return NULL;
	}
	h->capsc = 4;
	h->nsc = 1;
	scope_init(&h->sc[0], NULL);
	ovr_tuning_default(&h->tune);
	return h;
}

void det_host_free(struct det_host *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nsc; i++)
		free(h->sc[i].path);
	free(h->sc);
	free(h);
}

const char *det_host_name(const struct det_host *h)
{
	return h->host;
}

int64_t det_host_last_ts(const struct det_host *h)
{
	return h->last_ts_ms;
}

int64_t det_host_interval_ms(const struct det_host *h)
{
	return h->interval_meta_ms > 0 ? h->interval_meta_ms : h->interval_est_ms;
}

/* Binary search among the cgroup scopes (index >= 1). Returns the index,
 * or -(insertion point) - 1. */
static long find_scope(const struct det_host *h, const char *path)
{
	size_t lo = 1, hi = h->nsc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(h->sc[mid].path, path);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

/* Returns the scope of path, adding it (sorted) when new; NULL when out of
 * memory or at DET_MAX_SCOPES. Invalidates scope pointers. */
static struct scope *get_scope(struct det_host *h, const char *path)
{
	long i = find_scope(h, path);

	if (i >= 0)
		return &h->sc[i];
	if (h->nsc >= DET_MAX_SCOPES)
		return NULL;
	size_t at = (size_t)(-i - 1);
	if (h->nsc == h->capsc) {
		size_t ncap = h->capsc * 2;
		struct scope *n = realloc(h->sc, ncap * sizeof(*n));
		if (!n)
			return NULL;
		h->sc = n;
		h->capsc = ncap;
	}
	char *p = strdup(path);
	if (!p)
		return NULL;
	memmove(&h->sc[at + 1], &h->sc[at], (h->nsc - at) * sizeof(*h->sc));
	h->nsc++;
	scope_init(&h->sc[at], p);
	return &h->sc[at];
}

/* --- views --- */

/* Rates from the counters prev to cur over dt seconds. */
static void build_rates(struct dview *v, const int64_t *prev, const int64_t *cur, double dt, double ps)
{
	for (int i = 0; i < NCTR; i++) {
		if (ctr_is_gauge(i)) {
			bool known = prev[i] != RATE_ABSENT && cur[i] != RATE_ABSENT && dt > 0;
			v->r[i] = known ? (double)(cur[i] - prev[i]) / dt : NAN;
			continue;
		}
		double r = rate_counter(prev[i], cur[i], dt);
		if (i == C_PSI_MEM_SOME || i == C_PSI_MEM_FULL || i == C_PSI_IO_SOME || i == C_PSI_IO_FULL)
			r = rate_psi_share(prev[i], cur[i], dt);
		else if (ctr_is_pages[i])
			r *= ps;
		v->r[i] = r;
	}
}

/* Stall share from the totals; the avg10 gauge when the total is missing. */
static double psi_share(double from_total, double avg10)
{
	return !isnan(from_total) ? from_total : avg10;
}

/* What the swap is: zram devices and zswap are compressed memory (swap-ins
 * at memory speed), from the agent's settings (swap.devices, swap.KIND.*,
 * zswap.enabled: CONTRACT.md §1; swap.KIND keys appear only for kinds that
 * have a device, zswap.enabled only where the kernel has zswap), or zswap
 * from its counters moving. */
static void swap_kind(struct dview *v)
{
	double zram = v->g[G_SWAP_ZRAM], other = v->g[G_SWAP_OTHER], zon = v->g[G_ZSWAP_ON];
	bool known = !isnan(v->g[G_SWAP_DEVICES]);
	bool zswap_moving = det_nz(v->r[C_ZSWPOUT]) > 0 || det_nz(v->r[C_ZSWPIN]) > 0;

	v->swap_zram = !isnan(zram) && zram > 0;
	v->swap_zswap = (!isnan(zon) && zon > 0) || zswap_moving;
	v->swap_disk_only = known && !v->swap_zram && !isnan(other) && other > 0 && !v->swap_zswap;
}

/* The host's view of the interval from the counters prev (c->prev, or a
 * batch window's anchor) to the current sample. */
static void host_view(struct dview *v, const struct scope *c, const int64_t *prev, double dt, double ps,
		      const struct kver *kv)
{
	memset(v, 0, sizeof(*v));
	v->dt = dt;
	v->page_size = ps;
	v->kernel = *kv;
	build_rates(v, prev, c->cur.c, dt, ps);
	memcpy(v->g, c->cur.g, sizeof(v->g));
	v->mglru = !isnan(v->g[G_MGLRU]) && v->g[G_MGLRU] > 0;
	swap_kind(v);
	v->mem_ref = v->g[G_MEM_TOTAL];
	v->mem_ref_name = "MemTotal";
	v->swap_free = v->g[G_SWAP_FREE];
	if (isnan(v->swap_free) && !isnan(v->g[G_SWAP_TOTAL]) && v->g[G_SWAP_TOTAL] == 0)
		v->swap_free = 0;
	v->swappiness_known = !isnan(v->g[G_SWAPPINESS]);
	v->swappiness = v->swappiness_known ? v->g[G_SWAPPINESS] : 60;
	v->psi_some = psi_share(v->r[C_PSI_MEM_SOME], v->g[G_PSI_MEM_SOME10]);
	v->psi_full = psi_share(v->r[C_PSI_MEM_FULL], v->g[G_PSI_MEM_FULL10]);
	v->io_full = psi_share(v->r[C_PSI_IO_FULL], v->g[G_PSI_IO_FULL10]);
	double sa = v->r[C_SCAN_ANON], sf = v->r[C_SCAN_FILE], sg = v->r[C_SCAN_GLOBAL];
	v->global_share = NAN;
	if (!isnan(sa) && !isnan(sf) && !isnan(sg) && sa + sf >= 1 * MiB) {
		v->global_share = fmin(1.0, sg / (sa + sf));
	} else if (isnan(sa) || isnan(sf)) {
		/* before 5.8 only machine-wide reclaim is counted (kswapd +
		 * direct); every page refaulted or swapped out was evicted
		 * first, so evictions far above its steals were cgroup-limit
		 * reclaim */
		double need = fmax(det_nz(v->r[C_REFAULT_ALL]), det_nz(v->r[C_PSWPOUT]) + det_nz(v->r[C_ZSWPOUT]));
		double stg = v->r[C_STEAL_GLOBAL];
		if (need >= 1 * MiB && !isnan(stg))
			v->global_share = fmin(1.0, stg / need);
	}
}

static void cgroup_view(struct dview *v, const struct scope *c, const int64_t *prev, const struct dview *hv,
			double dt, double ps)
{
	memset(v, 0, sizeof(*v));
	v->is_cgroup = true;
	v->dt = dt;
	v->page_size = ps;
	v->kernel = hv->kernel;
	build_rates(v, prev, c->cur.c, dt, ps);
	memcpy(v->g, c->cur.g, sizeof(v->g));
	static const int from_host[] = { G_MEM_TOTAL, G_MEM_AVAIL, G_SWAP_TOTAL, G_SWAP_FREE, G_MGLRU,
					 G_SWAP_DEVICES, G_SWAP_ZRAM, G_SWAP_OTHER, G_ZSWAP_ON };
	for (size_t i = 0; i < sizeof(from_host) / sizeof(from_host[0]); i++)
		v->g[from_host[i]] = hv->g[from_host[i]];
	v->mglru = hv->mglru;
	v->swap_zram = hv->swap_zram;
	v->swap_zswap = hv->swap_zswap || det_nz(v->r[C_ZSWPOUT]) > 0;
	v->swap_disk_only = hv->swap_disk_only && !v->swap_zswap;
	/* the cgroup's memory is the tighter of memory.max and memory.high
	 * (a cgroup limited only by memory.high is throttled and reclaimed
	 * there: Kubernetes MemoryQoS, systemd MemoryHigh=), else the host's */
	double max = v->g[G_MEM_MAX], high = v->g[G_MEM_HIGH];
	v->mem_ref = hv->mem_ref;
	v->mem_ref_name = hv->mem_ref_name;
	if (!isnan(max) && max > 0 && (isnan(v->mem_ref) || max < v->mem_ref)) {
		v->mem_ref = max;
		v->mem_ref_name = c->cur.version == 1 ? "memory.limit_in_bytes" : "memory.max";
		v->mem_limited = true;
	}
	if (!isnan(high) && high > 0 && (isnan(v->mem_ref) || high < v->mem_ref)) {
		v->mem_ref = high;
		v->mem_ref_name = "memory.high";
		v->mem_limited = true;
	}
	v->swap_free = hv->swap_free;
	double smax = v->g[G_SWAP_MAX];
	/* cgroup v1: swap a cgroup may hold is its memsw limit less its memory
	 * limit; when the memsw counter is what fails a charge,
	 * try_charge_memcg() clears MEMCG_RECLAIM_MAY_SWAP and limit reclaim
	 * does not scan anon at all (memsw limit == memory limit, Docker's
	 * --memory-swap equal to --memory: no swap). Unlimited (PAGE_COUNTER_MAX
	 * pages, ~2^63 bytes) counts as no limit. */
	double msw = v->g[G_MEMSW_LIMIT], mlim = v->g[G_MEM_LIMIT_HIER];
	if (isnan(smax) && !isnan(msw) && !isnan(mlim) && msw < 0x1p62)
		smax = fmax(0.0, msw - mlim);
	if (!isnan(smax)) {
		double left = fmax(0.0, smax - det_nz(v->g[G_SWAP_CURRENT]));
		v->swap_free = isnan(v->swap_free) ? left : fmin(v->swap_free, left);
	}
	v->swappiness_known = !isnan(v->g[G_SWAPPINESS]) || hv->swappiness_known;
	v->swappiness = !isnan(v->g[G_SWAPPINESS]) ? v->g[G_SWAPPINESS] : hv->swappiness;
	if (c->cur.has_psi) {
		v->psi_some = psi_share(v->r[C_PSI_MEM_SOME], v->g[G_PSI_MEM_SOME10]);
		v->psi_full = psi_share(v->r[C_PSI_MEM_FULL], v->g[G_PSI_MEM_FULL10]);
	} else {
		v->psi_some = hv->psi_some;
		v->psi_full = hv->psi_full;
		v->psi_from_host = !isnan(hv->psi_some);
	}
	v->io_full = hv->io_full;
	v->global_share = NAN;
	/* cgroup v1 before ~5.9 has no workingset counters in memory.stat:
	 * attribute the host's refaults by this cgroup's share of the host's
	 * major faults (both count pages read back; read-around makes major
	 * faults fewer than refaults, the share is what is used). Refaults
	 * through read() take no page fault at all: when the host has almost
	 * no major faults for its refaults, the share of pages read in
	 * (vmstat pgpgin against the cgroup's pgpgin charges) stands in. */
	double hmaj = hv->r[C_MAJFAULT], cmaj = v->r[C_MAJFAULT];
	double hin = hv->r[C_PGPGIN], cin = v->r[C_PGPGIN], hrf = hv->r[C_REFAULT_ALL];
	if (isnan(v->r[C_REFAULT_ALL]) && !isnan(hrf)) {
		double share = NAN;
		if (!isnan(cmaj) && !isnan(hmaj) && hmaj > 0 && hmaj * ps >= 0.01 * hrf)
			share = fmin(1.0, cmaj / hmaj);
		else if (!isnan(cin) && !isnan(hin) && hin > 0)
			share = fmin(1.0, cin / hin);
		if (!isnan(share)) {
			v->r[C_REFAULT_ALL] = hrf * share;
			v->r[C_REFAULT_FILE] = hv->r[C_REFAULT_FILE] * share;
			v->refault_attributed = true;
		}
	}
	/* memory.stat without pswpin (before 6.12) and without anon refaults
	 * (v1; v2 before 5.9): every swap-in is a major fault (do_swap_page
	 * returns VM_FAULT_MAJOR when it reads), so the host's swap-ins are
	 * attributed by this cgroup's share of the host's major faults */
	double hsin = det_nz(hv->r[C_PSWPIN]) + det_nz(hv->r[C_ZSWPIN]);
	if (isnan(v->r[C_PSWPIN]) && isnan(v->r[C_REFAULT_ANON]) && isnan(v->r[C_ZSWPIN]) &&
	    !isnan(hv->r[C_PSWPIN]) && !isnan(cmaj) && !isnan(hmaj) && hmaj > 0) {
		v->r[C_PSWPIN] = hsin * fmin(1.0, cmaj / hmaj);
		v->swapin_attributed = true;
	}
	/* machine-wide counters that only exist at host level */
	v->r[C_ALLOCSTALL] = NAN;
	/* immediate reclaim hits dirty pages: attribute the host's rate by
	 * this cgroup's share of the dirty+writeback pages */
	double hdw = det_nz(hv->g[G_DIRTY]) + det_nz(hv->g[G_WRITEBACK]);
	double cdw = det_nz(v->g[G_DIRTY]) + det_nz(v->g[G_WRITEBACK]);
	v->r[C_IMMEDIATE] = (hdw > 0 && !isnan(hv->r[C_IMMEDIATE])) ? hv->r[C_IMMEDIATE] * fmin(1.0, cdw / hdw) : NAN;
	v->r[C_VMSCAN_WRITE] = NAN;
	v->r[C_COMPACT_STALL] = NAN;
	v->r[C_COMPACT_FAIL] = NAN;
}

/* --- batch windows ---
 *
 * Reclaim frees memory in batches, not as a flow: a memcg charge that
 * fails reclaims at least SWAP_CLUSTER_MAX pages
 * (try_to_free_mem_cgroup_pages() takes max(nr_pages, SWAP_CLUSTER_MAX)),
 * and only when the cgroup allocates; kswapd wakes below the low watermark,
 * reclaims to the high one and sleeps again. Swap-out therefore moves in
 * steps whose period follows the allocations (real-overswap: 16 MiB every
 * ~4 s), and an agent reading every second sees the steps, not the rate: a
 * volume signature is a hit in a quarter of its samples, under the third
 * a pending signature must cover. The over-swap shape is a volume, so on a
 * host sampled at most every DET_BATCH_WINDOW_MS / 2 it is also measured
 * over the last DET_BATCH_WINDOW_MS (10 s, the default interval, at which
 * the thresholds are set: a 1 s agent then sees what a 10 s agent sees).
 * The window runs from the oldest of NANCHOR counter snapshots kept at
 * least half a window apart, taken at the same samples in every scope: it
 * is 10 to 15 s long, its two parts (a0, a1] and (a1, now] at least 5 s
 * each (detect_over_swap_window() wants swap-out in both: one batch is not
 * a rate). Hosts sampled less often keep no snapshots. */

static bool batch_mode(const struct det_host *h)
{
	int64_t iv = det_host_interval_ms(h);
	return iv > 0 && iv <= DET_BATCH_WINDOW_MS / 2;
}

/* A view of rates alone between two snapshots: a window's part. */
static void part_view(struct dview *v, bool is_cgroup, const int64_t *from, const int64_t *to, double dt,
		      double ps)
{
	memset(v, 0, sizeof(*v));
	v->is_cgroup = is_cgroup;
	v->dt = dt;
	v->page_size = ps;
	build_rates(v, from, to, dt, ps);
}

/* Whether anything was swapped out (or swap in use changed) in the window:
 * if not, the window has nothing to say and its views are not built. */
static bool window_moved(const struct scope *c)
{
	static const int swap_ctr[] = { C_PSWPOUT, C_ZSWPOUT, C_SWAP_USED };
	for (size_t j = 0; j < sizeof(swap_ctr) / sizeof(swap_ctr[0]); j++)
		if (c->anc[0].c[swap_ctr[j]] != c->cur.c[swap_ctr[j]])
			return true;
	return false;
}

/* Builds the window views of every scope whose snapshots match the
 * host's and whose swap moved in the window (wvalid). */
static void batch_windows(struct det_host *h, int64_t ts, double ps, const struct kver *kv)
{
	struct scope *hs = &h->sc[0];

	for (size_t i = 0; i < h->nsc; i++)
		h->sc[i].wvalid = false;
	if (!batch_mode(h) || !hs->valid || hs->nanc < NANCHOR)
		return;
	const struct anchor *a = hs->anc;
	double dt = (double)(ts - a[0].ts_ms) / 1000.0;
	double d_old = (double)(a[1].ts_ms - a[0].ts_ms) / 1000.0, d_new = (double)(ts - a[1].ts_ms) / 1000.0;
	/* the host's window view is built whenever a cgroup's is: a cgroup's
	 * view borrows the host's (PSI, attributions) */
	host_view(&hs->wview, hs, a[0].c, dt, ps, kv);
	if (window_moved(hs)) {
		part_view(&hs->wold, false, a[0].c, a[1].c, d_old, ps);
		part_view(&hs->wnew, false, a[1].c, hs->cur.c, d_new, ps);
		hs->wvalid = true;
	}
	for (size_t i = 1; i < h->nsc; i++) {
		struct scope *c = &h->sc[i];
		if (!c->seen || !c->valid || c->nanc < NANCHOR || c->anc[0].ts_ms != a[0].ts_ms ||
		    c->anc[1].ts_ms != a[1].ts_ms || !window_moved(c))
			continue;
		cgroup_view(&c->wview, c, c->anc[0].c, &hs->wview, dt, ps);
		part_view(&c->wold, true, c->anc[0].c, c->anc[1].c, d_old, ps);
		part_view(&c->wnew, true, c->anc[1].c, c->cur.c, d_new, ps);
		c->wvalid = true;
	}
}

/* After the feed: a scope without rates this sample starts its snapshots
 * again; when push (decided on the host, so every scope snapshots the same
 * samples), the current counters become the newest snapshot (the oldest
 * dropped when there are NANCHOR). */
static void note_anchor(struct scope *c, int64_t ts, bool batch, bool push)
{
	if (!batch || !c->valid)
		c->nanc = 0;
	if (!batch || !push)
		return;
	if (c->nanc == NANCHOR) {
		memmove(&c->anc[0], &c->anc[1], (NANCHOR - 1) * sizeof(c->anc[0]));
		c->nanc--;
	}
	c->anc[c->nanc].ts_ms = ts;
	memcpy(c->anc[c->nanc].c, c->cur.c, sizeof(c->anc[0].c));
	c->nanc++;
}

/* --- actions --- */

static json_t *evidence_json(const struct det_result *r, const struct dview *v)
{
	json_t *e = json_object();

	if (!e)
		return NULL;
	for (int i = 0; i < r->nev; i++) {
		double x = r->ev[i].v;
		json_t *j = (x == floor(x) && fabs(x) < 9e15) ? json_integer((json_int_t)x)
							      : json_real(round(x * 1000) / 1000);
		if (!j || json_object_set_new(e, r->ev[i].key, j) < 0)
			goto fail;
	}
	if (r->shape && json_object_set_new(e, "shape", json_string(r->shape)) < 0)
		goto fail;
	if (r->hint && json_object_set_new(e, "hint", json_string(r->hint)) < 0)
		goto fail;
	if (v->psi_from_host && json_object_set_new(e, "psi_source", json_string("host")) < 0)
		goto fail;
	if (v->swapin_attributed &&
	    json_object_set_new(e, "swapin_source",
				json_string("host swap-ins by this cgroup's share of major faults")) < 0)
		goto fail;
	if (v->refault_attributed &&
	    json_object_set_new(e, "refault_source",
				json_string("host refaults by this cgroup's share of major faults or pages read in")) < 0)
		goto fail;
	return e;
fail:
	json_decref(e);
	return NULL;
}

static const char *sev_name(int sev)
{
	return sev >= DL_CRITICAL ? "critical" : "warning";
}

static int emit_change(struct det_host *h, struct scope *c, int kind, enum det_action_type type,
		       int level, int64_t ts, det_emit_fn emit, void *ctx)
{
	struct kstate *k = &c->k[kind];
	struct det_action a = {
		.type = type, .alert_id = k->alert_id, .host = h->host, .cgroup = c->path,
		.kind = det_kind_name(kind), .severity = sev_name(k->sev), .level = level,
		.started_ms = k->started_ms, .opened_ms = k->opened_ms, .at_ms = ts,
	};
	struct det_result r;
	int rc;

	if (type == DA_RESOLVE)
		return emit(ctx, &a);
	det_result_init(&r);
	if (c->from_window[kind])
		detect_over_swap_window(&c->wview, &c->wold, &c->wnew, &r);
	else
		detectors[kind](&c->view, &r);
	if (r.summary[0] == '\0')
		snprintf(r.summary, sizeof(r.summary), "%s", det_kind_name(kind));
	a.summary = r.summary;
	a.evidence = evidence_json(&r, c->from_window[kind] ? &c->wview : &c->view);
	if (!a.evidence)
		return -1;
	rc = emit(ctx, &a);
	if (rc == 0 && type == DA_OPEN)
		k->alert_id = a.alert_id;
	json_decref(a.evidence);
	return rc;
}

static void kstate_idle(struct kstate *k)
{
	memset(k, 0, sizeof(*k));
}

/* level: the sample's level for the kind (DL_CLEAR when it has none: a
 * reboot, a cgroup gone) */
static int resolve(struct det_host *h, struct scope *c, int kind, int level, int64_t ts, det_emit_fn emit,
		   void *ctx)
{
	struct kstate *k = &c->k[kind];

	if (k->phase == PH_OPEN && emit_change(h, c, kind, DA_RESOLVE, level, ts, emit, ctx) < 0)
		return -1;
	kstate_idle(k);
	return 0;
}

static int resolve_all(struct det_host *h, struct scope *c, int64_t ts, det_emit_fn emit, void *ctx)
{
	for (int kind = 0; kind < NKIND; kind++)
		if (resolve(h, c, kind, DL_CLEAR, ts, emit, ctx) < 0)
			return -1;
	return 0;
}

/* The hold a pending signature must span before it opens, less the timing
 * tolerance: agents wake late by a few per cent of the interval (a busy
 * CPU, a slow /proc read), so three samples 10 s apart may span 29.4 s. A
 * tenth of the interval is forgiven. */
static bool held(const struct det_host *h, int64_t span_ms, int64_t need_ms)
{
	return span_ms >= need_ms - det_host_interval_ms(h) / 10;
}

/* Records one sample's level in a pending or open state's critical run:
 * the run starts at the first critical sample's interval (since), and any
 * sample below critical ends it. */
static void note_critical(struct kstate *k, int lv, int64_t since)
{
	if (lv == DL_CRITICAL) {
		if (k->crit_run == 0)
			k->crit_since_ms = since;
		if (k->crit_run < UINT8_MAX)
			k->crit_run++;
	} else {
		k->crit_run = 0;
		k->crit_since_ms = 0;
	}
}

/* Applies one level to one (scope, kind) state machine. lv < 0: no rates
 * this sample (first sample, reboot, outage gap): pending restarts, an
 * open alert stays as it is. since is the start of this sample's interval.
 *
 * Opening (docs/detectors.md, "Hysteresis"), always on a sample that is
 * itself a hit:
 *   critical  DET_CRIT_HITS consecutive critical samples whose intervals
 *             span two thirds of the hold (20 s by default)
 *   warning   DET_MIN_HITS hits spanning the hold (30 s by default), their
 *             intervals covering at least a third of it */
static int step(struct det_host *h, struct scope *c, int kind, int lv, int64_t ts, int64_t since,
		det_emit_fn emit, void *ctx)
{
	struct kstate *k = &c->k[kind];
	bool oom = kind == K_OOM_KILL;
	int64_t hold = h->tune.k[kind].hold_ms;

	if (lv < 0) {
		if (k->phase == PH_PENDING)
			kstate_idle(k);
		return 0;
	}
	switch (k->phase) {
	case PH_IDLE:
		if (lv < DL_WARNING)
			return 0;
		kstate_idle(k);
		k->phase = PH_PENDING;
		k->started_ms = ts;
		k->since_ms = since;
		k->sev = DL_WARNING;
		/* this sample is the first hit */
		__attribute__((fallthrough));
	case PH_PENDING:
		if (lv < DL_WARNING) {
			note_critical(k, lv, since);
			/* hits must cover at least a third of the time since the
			 * signature began: a noisy signal that crosses the threshold
			 * now and then (PSI read every second) is not evidence that
			 * lasts */
			k->miss_ms += ts - since;
			if ((++k->misses >= 2 && ts - k->last_hit_ms >= DET_PENDING_MISS_MS) ||
			    2 * k->hit_ms < k->miss_ms)
				kstate_idle(k);
			return 0;	/* never open on a sample that is clear */
		}
		if (k->hits < UINT16_MAX)
			k->hits++;
		k->misses = 0;
		k->last_hit_ms = ts;
		k->hit_ms += ts - since;
		note_critical(k, lv, since);
		bool crit_ok = k->crit_run >= DET_CRIT_HITS && held(h, ts - k->crit_since_ms, hold * 2 / 3);
		bool warn_ok = k->hits >= DET_MIN_HITS && held(h, ts - k->since_ms, hold) &&
			       2 * k->hit_ms >= k->miss_ms;
		if (!(oom && lv == DL_CRITICAL) && !crit_ok && !warn_ok)
			return 0;
		k->sev = (crit_ok || oom) ? DL_CRITICAL : DL_WARNING;
		k->phase = PH_OPEN;
		k->opened_ms = ts;
		k->clear_hits = 0;
		k->clear_since_ms = 0;
		return emit_change(h, c, kind, DA_OPEN, lv, ts, emit, ctx);
	case PH_OPEN:
		if ((!oom && lv >= DL_SUSTAIN) || (oom && lv >= DL_WARNING)) {
			k->clear_hits = 0;
			k->clear_since_ms = 0;
		} else {
			note_critical(k, lv, since);
			if (k->clear_hits == 0)
				k->clear_since_ms = k->last_hit_ms ? k->last_hit_ms : ts;
			if (k->clear_hits < UINT16_MAX)
				k->clear_hits++;
			int64_t need = oom ? DET_OOM_QUIET_MS : DET_CLEAR_SPAN_MS;
			int need_hits = oom ? 1 : DET_CLEAR_HITS;
			if (k->clear_hits >= need_hits && held(h, ts - k->clear_since_ms, need))
				return resolve(h, c, kind, lv, ts, emit, ctx);
			return 0;
		}
		k->last_hit_ms = ts;	/* still present (at least sustain): the clear time starts after it */
		note_critical(k, lv, since);
		if (k->sev < DL_CRITICAL && k->crit_run >= DET_CRIT_HITS &&
		    held(h, ts - k->crit_since_ms, hold * 2 / 3)) {
			k->sev = DL_CRITICAL;
			return emit_change(h, c, kind, DA_UPDATE, lv, ts, emit, ctx);
		}
		return 0;
	}
	return 0;
}


/* True when child is a strict descendant of parent ("/a" of "/a/b"). */
static bool is_descendant(const char *parent, const char *child)
{
	size_t n = strlen(parent);
	return strncmp(parent, child, n) == 0 && child[n] == '/';
}

/* Pass 2: a signature present in a cgroup is raised on the deepest cgroup
 * showing it, not again on its ancestors or on the host. An ancestor's own
 * open alert is kept open (sustain) but none is newly raised. The host
 * yields to its cgroups when a cgroup tracks the same kind (hit, pending or
 * open) and either the host's reclaim is mostly cgroup-limit reclaim
 * (pgscan_kswapd+direct < 25% of pgscan_anon+file, 5.8+) or that cgroup
 * carries at least half of the host's magnitude. */
static void dedup(struct det_host *h)
{
	for (int kind = 0; kind < NKIND; kind++) {
		double max_cg = 0;
		bool any_cg = false;
		for (size_t i = 1; i < h->nsc; i++) {
			struct scope *p = &h->sc[i];
			bool tracking = p->k[kind].phase != PH_IDLE;
			if (!p->seen || (p->lv[kind] < DL_WARNING && !tracking))
				continue;
			any_cg = true;
			if (p->lv[kind] >= DL_SUSTAIN && p->mag[kind] > max_cg)
				max_cg = p->mag[kind];
			if (p->lv[kind] < DL_WARNING)
				continue;
			for (size_t j = 1; j < h->nsc; j++) {
				struct scope *q = &h->sc[j];
				if (j != i && q->seen && q->lv[kind] >= DL_WARNING && is_descendant(p->path, q->path)) {
					p->lv[kind] = p->k[kind].phase == PH_OPEN ? DL_SUSTAIN : DL_CLEAR;
					break;
				}
			}
		}
		struct scope *hs = &h->sc[0];
		if (!any_cg || hs->lv[kind] < DL_WARNING)
			continue;
		bool cg_reclaim = !isnan(hs->view.global_share) && hs->view.global_share < 0.25;
		if (cg_reclaim || max_cg >= 0.5 * hs->mag[kind]) {
			hs->lv[kind] = hs->k[kind].phase == PH_OPEN ? DL_SUSTAIN : DL_CLEAR;
			continue;
		}
		/* The host keeps a host-wide signature (CONTRACT.md §3): machine-
		 * wide reclaim spread over cgroups that have no limit of their own
		 * is one signature, not one per cgroup (8 unlimited pods each with
		 * an eighth of a node's thrash). A cgroup at its own limit keeps
		 * its alert: that reclaim is its own. */
		for (size_t i = 1; i < h->nsc; i++) {
			struct scope *p = &h->sc[i];
			if (p->seen && p->lv[kind] >= DL_WARNING && !p->view.mem_limited)
				p->lv[kind] = p->k[kind].phase == PH_OPEN ? DL_SUSTAIN : DL_CLEAR;
		}
	}
}


/* Inactive anon the host's reclaim cannot swap: held by cgroups whose
 * swap is used up or forbidden (memory.swap.max 0, v1 memsw limit equal to
 * the memory limit). get_scan_count() asks can_reclaim_anon_pages(), which
 * for a memcg is mem_cgroup_get_nr_swap_pages() > 0, and scans only file
 * there: such anon is not "never scanned" by a wrong balance. Each cgroup
 * counts once, outermost first (scopes are sorted by path; a counted
 * cgroup's descendants are inside its figure). */
static double anon_noswap(const struct det_host *h)
{
	double sum = 0;
	const char *counted[64];
	int nc = 0;

	for (size_t i = 1; i < h->nsc; i++) {
		const struct scope *c = &h->sc[i];
		if (!c->seen || isnan(c->view.swap_free) || c->view.swap_free >= 1 * MiB ||
		    isnan(c->view.g[G_INACTIVE_ANON]))
			continue;
		bool inside = false;
		for (int j = 0; j < nc && !inside; j++)
			inside = is_descendant(counted[j], c->path);
		if (inside)
			continue;
		sum += c->view.g[G_INACTIVE_ANON];
		if (nc < (int)(sizeof(counted) / sizeof(counted[0])))
			counted[nc++] = c->path;
	}
	return sum;
}

/* Pass 1: every detector on one scope, then the operator's overrides
 * (overrides.h) on its level; over-swap also over the batch window. */
static void evaluate(struct scope *c, const struct ovr_tuning *tune)
{
	for (int kind = 0; kind < NKIND; kind++) {
		struct det_result r;
		det_result_init(&r);
		r.text = false;	/* levels only: texts are built when an alert changes */
		detectors[kind](&c->view, &r);
		c->lv[kind] = (enum det_level)ovr_apply_level(&tune->k[kind], r.level, r.magnitude);
		c->mag[kind] = r.magnitude;
	}
	if (!c->wvalid)
		return;
	/* over-swap over the batch window, when that says more */
	struct det_result r;
	det_result_init(&r);
	r.text = false;
	detect_over_swap_window(&c->wview, &c->wold, &c->wnew, &r);
	int lv = ovr_apply_level(&tune->k[K_SWAP_IMBALANCE], r.level, r.magnitude);
	if (lv > (int)c->lv[K_SWAP_IMBALANCE]) {
		c->lv[K_SWAP_IMBALANCE] = (enum det_level)lv;
		c->mag[K_SWAP_IMBALANCE] = r.magnitude;
		c->from_window[K_SWAP_IMBALANCE] = true;
	}
}

static void save_prev(struct scope *c, int64_t ts)
{
	memcpy(c->prev, c->cur.c, sizeof(c->prev));
	c->prev_ts_ms = ts;
}

static int64_t clamp_ts(int64_t t, int64_t ts)
{
	return t > ts ? ts : t;
}

void det_host_reanchor(struct det_host *h, int64_t ts)
{
	for (size_t i = 0; i < h->nsc; i++) {
		struct scope *c = &h->sc[i];
		scope_reset_prev(c);
		c->last_seen_ms = clamp_ts(c->last_seen_ms, ts);
		for (int kind = 0; kind < NKIND; kind++) {
			struct kstate *k = &c->k[kind];
			if (k->phase == PH_PENDING) {
				kstate_idle(k);
				continue;
			}
			k->last_hit_ms = clamp_ts(k->last_hit_ms, ts);
			k->clear_since_ms = clamp_ts(k->clear_since_ms, ts);
		}
	}
	/* as before the first sample: no interval measured across the jump */
	h->last_ts_ms = 0;
}

int det_host_feed(struct det_host *h, const struct sample *s, det_emit_fn emit, void *ctx)
{
	return det_host_feed_tuned(h, s, NULL, emit, ctx);
}

int det_host_feed_tuned(struct det_host *h, const struct sample *s, const struct ovr_set *ovr,
			det_emit_fn emit, void *ctx)
{
	int64_t ts = s->ts_ms;
	uint64_t boot = rate_boot_hash(s->boot_id);

	if (ts <= h->last_ts_ms)
		return 0;
	ovr_resolve(ovr, h->host, s->labels, &h->tune);

	int64_t iv = 0, ps_i = 4096;
	feat_meta(s, &iv, &ps_i);
	if (iv > 0)
		h->interval_meta_ms = iv;
	double ps = (double)ps_i;
	int64_t dt_ms = h->last_ts_ms ? ts - h->last_ts_ms : 0;
	bool rebooted = h->last_ts_ms && boot && h->boot_hash && boot != h->boot_hash;
	/* With no interval_s and no interval measured yet (interval_s is
	 * optional), there is nothing to call a gap against: the first
	 * interval is the measure (a 120 s agent would otherwise never get
	 * past the 60 s minimum) */
	bool gap = det_host_interval_ms(h) > 0 && dt_ms > rate_gap_limit_ms(det_host_interval_ms(h));
	if (dt_ms > 0 && !gap)
		h->interval_est_ms = rate_interval_estimate(h->interval_est_ms, dt_ms);

	if (rebooted) {
		for (size_t i = 0; i < h->nsc; i++) {
			if (resolve_all(h, &h->sc[i], ts, emit, ctx) < 0)
				return -1;
			scope_reset_prev(&h->sc[i]);
		}
	}

	/* pass 1a: host scope */
	for (size_t i = 0; i < h->nsc; i++) {
		h->sc[i].seen = false;
		memset(h->sc[i].from_window, 0, sizeof(h->sc[i].from_window));
	}
	struct scope *hs = &h->sc[0];
	feat_extract_host(&hs->cur, s);
	hs->seen = true;
	hs->valid = hs->prev_ts_ms > 0 && !gap && !rebooted;
	double dt = (double)(ts - hs->prev_ts_ms) / 1000.0;
	struct kver kv;
	kver_parse(&kv, s->kernel);
	if (hs->valid)
		host_view(&hs->view, hs, hs->prev, dt, ps, &kv);
	else
		host_view(&hs->view, hs, hs->prev, 1.0, ps, &kv);	/* gauges only; levels unused */

	/* pass 1b: cgroups (a v2 entry without memory.stat is a PSI twin) */
	for (size_t i = 0; i < s->ncg; i++) {
		const struct cgsample *cg = &s->cg[i];
		struct feat f;
		const struct cgsample *twin = NULL;
		if (cg->version == 1)
			twin = sample_find_cgroup(s, cg->path, 2);
		feat_extract_cgroup(&f, cg, twin);
		if (!f.has_mem)
			continue;
		struct scope *c = get_scope(h, cg->path);
		if (!c)
			continue;	/* over the scope cap or out of memory: skip this cgroup */
		hs = &h->sc[0];
		if (c->seen)
			continue;	/* both versions carry memory stats: first wins */
		c->cur = f;
		c->seen = true;
		c->last_seen_ms = ts;
	}
	hs = &h->sc[0];
	for (size_t i = 1; i < h->nsc; i++) {
		struct scope *c = &h->sc[i];
		if (!c->seen)
			continue;
		double cdt = (double)(ts - c->prev_ts_ms) / 1000.0;
		c->valid = hs->valid && c->prev_ts_ms == hs->prev_ts_ms && c->prev_ts_ms > 0;
		cgroup_view(&c->view, c, c->prev, &hs->view, c->valid ? cdt : 1.0, ps);
	}
	batch_windows(h, ts, ps, &kv);
	hs->view.ia_noswap = anon_noswap(h);
	for (size_t i = 0; i < h->nsc; i++) {
		struct scope *c = &h->sc[i];
		if (c->seen && c->valid)
			evaluate(c, &h->tune);
	}

	/* pass 2 */
	dedup(h);

	/* pass 3 */
	bool batch = batch_mode(h);
	bool push = !hs->valid || hs->nanc == 0 || ts - hs->anc[hs->nanc - 1].ts_ms >= DET_BATCH_WINDOW_MS / 2;
	for (size_t i = 0; i < h->nsc; i++) {
		struct scope *c = &h->sc[i];
		if (!c->seen)
			continue;
		for (int kind = 0; kind < NKIND; kind++)
			if (step(h, c, kind, c->valid ? (int)c->lv[kind] : -1, ts,
				 c->valid ? c->prev_ts_ms : ts, emit, ctx) < 0)
				return -1;
		save_prev(c, ts);
		note_anchor(c, ts, batch, push);
	}

	/* cgroups gone: resolve after a while, forget later */
	for (size_t i = 1; i < h->nsc;) {
		struct scope *c = &h->sc[i];
		if (!c->seen) {
			for (int kind = 0; kind < NKIND; kind++)
				if (c->k[kind].phase == PH_PENDING)
					kstate_idle(&c->k[kind]);
			scope_reset_prev(c);
			if (ts - c->last_seen_ms >= DET_CGROUP_GONE_MS && resolve_all(h, c, ts, emit, ctx) < 0)
				return -1;
			if (ts - c->last_seen_ms >= DET_CGROUP_FORGET_MS) {
				free(c->path);
				memmove(&h->sc[i], &h->sc[i + 1], (h->nsc - i - 1) * sizeof(*h->sc));
				h->nsc--;
				continue;
			}
		}
		i++;
	}
	h->last_ts_ms = ts;
	if (boot)
		h->boot_hash = boot;
	return 1;
}

/* --- persistence ---
 *
 * Version 4 (written) is version 3 plus, per scope, the batch window's
 * snapshots (a count, then each one's time and its counters as differences
 * from the previous sample's, under a mask of those present); a host
 * sampled every 10 s or less often has none (one byte). A version 3 state
 * loads with none: the window fills again within 15 s.
 * Version 3 is version 2 plus, per tracked kind, the start of
 * its critical run (the 20 s critical opening rule needs it) and, pending,
 * the time its hits and its other samples covered.
 * Version 2: varints, times as differences from the host's
 * last_ts_ms, each cgroup path as the length it shares with the previous
 * scope's path (scopes are sorted by path) plus the rest. A 20-cgroup host
 * takes about half the bytes of version 1 (fixed 8-byte numbers and whole
 * paths), which keeps its detector_state row small enough to stay inline
 * and be updated in place (schema/080_detector_state_hot.sql,
 * docs/scaling.md). Versions 1 and 2 are still read (rows written before)
 * and, for the tests that compare them, written by det_host_save_v1 and
 * det_host_save_v2. */

#define STATE_MAGIC "VDS"
#define STATE_VERSION 4

struct wbuf { unsigned char *p; size_t n, cap; bool oom; };

static void put(struct wbuf *w, const void *src, size_t len)
{
	if (w->oom || !len)
		return;
	if (w->n + len > w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 256;
		while (ncap < w->n + len)
			ncap *= 2;
		unsigned char *np = realloc(w->p, ncap);
		if (!np) {
			w->oom = true;
			return;
		}
		w->p = np;
		w->cap = ncap;
	}
	memcpy(w->p + w->n, src, len);
	w->n += len;
}

static void put_u8(struct wbuf *w, unsigned v) { unsigned char b = (unsigned char)v; put(w, &b, 1); }

static void put_u64(struct wbuf *w, uint64_t v)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put(w, b, 8);
}

static void put_i64(struct wbuf *w, int64_t v) { put_u64(w, (uint64_t)v); }

/* LEB128: 7 bits a byte, low first */
static void put_uv(struct wbuf *w, uint64_t v)
{
	unsigned char b[10];
	size_t n = 0;
	while (v >= 0x80) {
		b[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (unsigned char)v;
	put(w, b, n);
}

/* v - base, zigzagged (small of either sign: few bytes); modular, so any
 * pair of int64 round-trips */
static void put_sv(struct wbuf *w, int64_t v, int64_t base)
{
	uint64_t d = (uint64_t)v - (uint64_t)base;
	put_uv(w, (d << 1) ^ (0 - (d >> 63)));
}

/* The scopes' fields in version 1 or 2 (see above). */
static void put_scopes(struct wbuf *w, const struct det_host *h, int ver)
{
	const int64_t b = h->last_ts_ms;
	const char *prev = "";

	for (size_t i = 0; i < h->nsc; i++) {
		const struct scope *c = &h->sc[i];
		size_t pl = c->path ? strlen(c->path) : 0;
		if (ver == 1) {
			put_u64(w, pl);
			put(w, c->path, pl);
			put_i64(w, c->last_seen_ms);
			put_i64(w, c->prev_ts_ms);
		} else {
			size_t same = 0;
			while (same < pl && prev[same] == c->path[same])
				same++;
			put_uv(w, same);
			put_uv(w, pl - same);
			if (pl > same)
				put(w, c->path + same, pl - same);
			prev = c->path ? c->path : "";
			put_sv(w, c->last_seen_ms, b);
			put_sv(w, c->prev_ts_ms, b);
		}
		uint64_t mask = 0;
		for (int j = 0; j < NCTR; j++)
			if (c->prev[j] != RATE_ABSENT)
				mask |= 1ULL << j;
		ver == 1 ? put_u64(w, mask) : put_uv(w, mask);
		for (int j = 0; j < NCTR; j++)
			if (mask & (1ULL << j))
				ver == 1 ? put_i64(w, c->prev[j]) : put_sv(w, c->prev[j], 0);
		unsigned kmask = 0;
		for (int k = 0; k < NKIND; k++)
			if (c->k[k].phase != PH_IDLE)
				kmask |= 1u << k;
		put_u8(w, kmask);
		for (int k = 0; k < NKIND; k++) {
			const struct kstate *s = &c->k[k];
			if (!(kmask & (1u << k)))
				continue;
			put_u8(w, s->phase);
			put_u8(w, s->sev);
			put_u8(w, s->misses);
			put_u8(w, s->crit_run);
			const int64_t t[5] = { s->started_ms, s->since_ms, s->opened_ms, s->clear_since_ms,
					       s->last_hit_ms };
			if (ver == 1) {
				put_u64(w, ((uint64_t)s->hits << 16) | s->clear_hits);
				for (int q = 0; q < 5; q++)
					put_i64(w, t[q]);
				put_i64(w, s->alert_id);
			} else {
				put_uv(w, s->hits);
				put_uv(w, s->clear_hits);
				for (int q = 0; q < 5; q++)
					put_sv(w, t[q], b);
				put_sv(w, s->alert_id, 0);
				if (ver >= 3) {
					put_sv(w, s->crit_run ? s->crit_since_ms : b, b);
					put_uv(w, s->phase == PH_PENDING ? (uint64_t)s->hit_ms : 0);
					put_uv(w, s->phase == PH_PENDING ? (uint64_t)s->miss_ms : 0);
				}
			}
		}
		if (ver < 4)
			continue;
		put_u8(w, c->nanc);
		for (int a = 0; a < c->nanc; a++) {
			const struct anchor *an = &c->anc[a];
			uint64_t am = 0;
			for (int j = 0; j < NCTR; j++)
				if (an->c[j] != RATE_ABSENT)
					am |= 1ULL << j;
			put_sv(w, an->ts_ms, b);
			put_uv(w, am);
			for (int j = 0; j < NCTR; j++)
				if (am & (1ULL << j))
					put_sv(w, an->c[j], c->prev[j] != RATE_ABSENT ? c->prev[j] : 0);
		}
	}
}

static int save_version(const struct det_host *h, int ver, unsigned char **buf, size_t *len)
{
	struct wbuf w = { 0 };

	put(&w, STATE_MAGIC, 3);
	put_u8(&w, (unsigned)ver);
	if (ver == 1) {
		put_i64(&w, h->last_ts_ms);
		put_i64(&w, h->interval_est_ms);
		put_i64(&w, h->interval_meta_ms);
		put_u64(&w, h->boot_hash);
		put_u64(&w, h->nsc);
	} else {
		put_sv(&w, h->last_ts_ms, 0);
		put_sv(&w, h->interval_est_ms, 0);
		put_sv(&w, h->interval_meta_ms, 0);
		put_u64(&w, h->boot_hash);
		put_uv(&w, h->nsc);
	}
	put_scopes(&w, h, ver);
	if (w.oom) {
		free(w.p);
		return -1;
	}
	*buf = w.p;
	*len = w.n;
	return 0;
}

int det_host_save(const struct det_host *h, unsigned char **buf, size_t *len)
{
	return save_version(h, STATE_VERSION, buf, len);
}

int det_host_save_v1(const struct det_host *h, unsigned char **buf, size_t *len)
{
	return save_version(h, 1, buf, len);
}

int det_host_save_v2(const struct det_host *h, unsigned char **buf, size_t *len)
{
	return save_version(h, 2, buf, len);
}

int det_host_save_v3(const struct det_host *h, unsigned char **buf, size_t *len)
{
	return save_version(h, 3, buf, len);
}

struct rbuf { const unsigned char *p; size_t n, off; bool bad; };

static void get(struct rbuf *r, void *dst, size_t len)
{
	if (r->bad || r->n - r->off < len) {
		r->bad = true;
		memset(dst, 0, len);
		return;
	}
	memcpy(dst, r->p + r->off, len);
	r->off += len;
}

static unsigned get_u8(struct rbuf *r) { unsigned char b; get(r, &b, 1); return b; }

static uint64_t get_u64(struct rbuf *r)
{
	unsigned char b[8];
	uint64_t v = 0;
	get(r, b, 8);
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static int64_t get_i64(struct rbuf *r) { return (int64_t)get_u64(r); }

static uint64_t get_uv(struct rbuf *r)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (r->bad || r->off >= r->n) {
			r->bad = true;
			return 0;
		}
		unsigned char b = r->p[r->off++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;	/* more than 10 bytes */
	return 0;
}

static int64_t get_sv(struct rbuf *r, int64_t base)
{
	uint64_t z = get_uv(r);
	uint64_t d = (z >> 1) ^ (0 - (z & 1));
	return (int64_t)((uint64_t)base + d);
}

/* Reads the scopes of a version ver state into h (header already read).
 * Returns 0, -1 when corrupt (r->bad), -2 when out of memory. */
static int get_scopes(struct rbuf *r, struct det_host *h, int ver, uint64_t nsc)
{
	const int64_t b = h->last_ts_ms;
	char path[CGROUP_PATH_MAXLEN + 1];
	size_t plen = 0;	/* path holds the previous scope's path (version 2) */

	for (uint64_t i = 0; i < nsc && !r->bad; i++) {
		uint64_t same = ver == 1 ? 0 : get_uv(r);
		uint64_t rest = ver == 1 ? get_u64(r) : get_uv(r);
		if (r->bad || same > plen || rest > CGROUP_PATH_MAXLEN - same || (i == 0) != (same + rest == 0) ||
		    r->n - r->off < rest) {
			r->bad = true;
			break;
		}
		struct scope *c;
		get(r, path + same, (size_t)rest);
		plen = (size_t)(same + rest);
		path[plen] = '\0';
		if (i == 0) {
			c = &h->sc[0];
		} else {
			if (strlen(path) != plen) {	/* a NUL inside */
				r->bad = true;
				break;
			}
			if (!(c = get_scope(h, path)))
				return -2;
		}
		c->last_seen_ms = ver == 1 ? get_i64(r) : get_sv(r, b);
		c->prev_ts_ms = ver == 1 ? get_i64(r) : get_sv(r, b);
		uint64_t mask = ver == 1 ? get_u64(r) : get_uv(r);
		for (int j = 0; j < NCTR; j++)
			c->prev[j] = !(mask & (1ULL << j)) ? RATE_ABSENT : ver == 1 ? get_i64(r) : get_sv(r, 0);
		unsigned kmask = get_u8(r);
		for (int k = 0; k < NKIND; k++) {
			struct kstate *s = &c->k[k];
			if (!(kmask & (1u << k)))
				continue;
			s->phase = (uint8_t)get_u8(r);
			s->sev = (uint8_t)get_u8(r);
			s->misses = (uint8_t)get_u8(r);
			s->crit_run = (uint8_t)get_u8(r);
			int64_t *t[5] = { &s->started_ms, &s->since_ms, &s->opened_ms, &s->clear_since_ms,
					  &s->last_hit_ms };
			if (ver == 1) {
				uint64_t hc = get_u64(r);
				s->hits = (uint16_t)(hc >> 16);
				s->clear_hits = (uint16_t)hc;
				for (int q = 0; q < 5; q++)
					*t[q] = get_i64(r);
				s->alert_id = get_i64(r);
			} else {
				uint64_t hits = get_uv(r), clear = get_uv(r);
				if (hits > UINT16_MAX || clear > UINT16_MAX)
					r->bad = true;
				s->hits = (uint16_t)hits;
				s->clear_hits = (uint16_t)clear;
				for (int q = 0; q < 5; q++)
					*t[q] = get_sv(r, b);
				s->alert_id = get_sv(r, 0);
			}
			/* before version 3 a critical run was taken to start with
			 * the pending signature */
			s->crit_since_ms = ver >= 3 ? get_sv(r, b) : s->since_ms;
			if (!s->crit_run)
				s->crit_since_ms = 0;
			/* before version 3 a pending signature was taken to have
			 * covered all of its time */
			uint64_t hit = ver >= 3 ? get_uv(r) : (uint64_t)(s->last_hit_ms - s->since_ms);
			uint64_t miss = ver >= 3 ? get_uv(r) : 0;
			bool pending = s->phase == PH_PENDING;
			s->hit_ms = pending && hit < INT64_MAX ? (int64_t)hit : 0;
			s->miss_ms = pending && miss < INT64_MAX ? (int64_t)miss : 0;
			if (s->phase > PH_OPEN)
				r->bad = true;
		}
		/* before version 4 no batch window was kept */
		c->nanc = ver >= 4 ? (uint8_t)get_u8(r) : 0;
		if (c->nanc > NANCHOR) {
			r->bad = true;
			break;
		}
		for (int a = 0; a < c->nanc; a++) {
			struct anchor *an = &c->anc[a];
			an->ts_ms = get_sv(r, b);
			uint64_t am = get_uv(r);
			for (int j = 0; j < NCTR; j++)
				an->c[j] = !(am & (1ULL << j)) ? RATE_ABSENT
							       : get_sv(r, c->prev[j] != RATE_ABSENT ? c->prev[j] : 0);
		}
	}
	return r->bad ? -1 : 0;
}

struct det_host *det_host_load(const char *host, const unsigned char *buf, size_t len,
			       char *err, size_t errlen)
{
	struct rbuf r = { buf, len, 0, false };
	struct det_host *h = det_host_new(host);
	char magic[3];

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (len == 0)
		return h;
	get(&r, magic, 3);
	unsigned ver = get_u8(&r);
	if (r.bad || memcmp(magic, STATE_MAGIC, 3) != 0 || ver < 1 || ver > STATE_VERSION) {
		snprintf(err, errlen, "detector state of %s is not version 1 to %d", host, STATE_VERSION);
		goto bad;
	}
	uint64_t nsc;
	if (ver == 1) {
		h->last_ts_ms = get_i64(&r);
		h->interval_est_ms = get_i64(&r);
		h->interval_meta_ms = get_i64(&r);
		h->boot_hash = get_u64(&r);
		nsc = get_u64(&r);
	} else {
		h->last_ts_ms = get_sv(&r, 0);
		h->interval_est_ms = get_sv(&r, 0);
		h->interval_meta_ms = get_sv(&r, 0);
		h->boot_hash = get_u64(&r);
		nsc = get_uv(&r);
	}
	if (r.bad || nsc < 1 || nsc > DET_MAX_SCOPES) {
		snprintf(err, errlen, "detector state of %s: bad scope count", host);
		goto bad;
	}
	int rc = get_scopes(&r, h, (int)ver, nsc);
	if (rc == -2) {
		snprintf(err, errlen, "out of memory");
		goto bad;
	}
	if (rc < 0 || r.off != r.n) {
		snprintf(err, errlen, "detector state of %s is truncated or corrupt", host);
		goto bad;
	}
	return h;
bad:
	det_host_free(h);
	return NULL;
}
