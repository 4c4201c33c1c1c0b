/* detect_swap.c - reclaim pressure split wrongly between anon and file.
 *
 * Four shapes (CONTRACT.md §3, seeds 000, 002, 004):
 *  cold_anon_file_thrash  file cache refaults while a large inactive anon
 *                         list is never scanned, although swap is free and
 *                         swappiness > 0 (seed 000). "Never scanned" comes
 *                         from pgscan_anon vs pgscan_file (5.8+); before
 *                         5.8, from swap-out staying at zero; for a cgroup
 *                         without swap counters, from its swap usage staying
 *                         at zero with no anon refaults.
 *  over_swap              anon is swapped OUT in volume (swap in use grows)
 *                         while a large file cache stays and barely
 *                         refaults, with few swap-ins (seed 004: 784 MB of
 *                         swap used with 4 GB of cache kept; the fixed
 *                         kernel reclaimed the cache instead). Reclaim
 *                         takes at least as much anon as file; on 5.8+ anon
 *                         scanned far more than file is shown beside it.
 *  anon_swap_churn        anon is swapped out and back in while a file cache
 *                         that nobody refaults sits there, on the active or
 *                         the inactive list (a cache read twice, or high
 *                         swappiness: cache_trim_mode only looks at inactive
 *                         file). Needs stall evidence: swap-ins from zram or
 *                         zswap at memory speed are how those run.
 *  lazyfree_backlog       MADV_FREE pages (pglazyfree) are not discarded
 *                         (pglazyfreed) while anon that cannot be reclaimed
 *                         grows and file cache thrashes, on a swapless or
 *                         swap-full machine (seed 002). The only shape that
 *                         needs no free swap.
 * Every shape's critical level needs stall evidence (PSI); none goes
 * critical on a rate alone.
 */
#include "detect_kinds.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Swap-ins without PSI count only above what compressed swap (zram, zswap)
 * serves from memory: about a CPU's worth of lz4/zstd decompression. On a
 * host whose swap is known to be disk only, a disk-bound rate suffices. */
#define NOPSI_CHURN_ANY (256 * MiB)
#define NOPSI_CHURN_DISK (4 * MiB)

/* Bytes per second swapped out, to disk (pswpout) or to zswap (zswpout);
 * NAN when neither is known. A cgroup whose memory.stat has no pswpout
 * (before 6.x; v1 never) counts its swap usage growth, at least what
 * zswpout says. */
static double swap_out(const struct dview *v)
{
	double p = v->r[C_PSWPOUT], z = v->r[C_ZSWPOUT], grow = v->r[C_SWAP_USED];

	if (v->is_cgroup && isnan(p)) {
		if (isnan(grow))
			return z;
		return fmax(det_nz(z), fmax(0.0, grow));
	}
	if (isnan(p) && isnan(z))
		return NAN;
	return det_nz(p) + det_nz(z);
}

/* Bytes per second swapped in: pswpin + zswpin (a zswap load is a swap-in)
 * where pswpin is counted; else anon refaults (5.9+: an anon refault is a
 * swap-in of recently evicted anon, from disk or zswap alike); else zswpin
 * alone. So a kernel that adds pswpin to memory.stat gives the same
 * figure. *src names the figure used. */
static double swap_in(const struct dview *v, const char **src)
{
	if (!isnan(v->r[C_PSWPIN])) {
		*src = "swapin_per_s";
		return v->r[C_PSWPIN] + det_nz(v->r[C_ZSWPIN]);
	}
	if (!isnan(v->r[C_REFAULT_ANON])) {
		*src = "workingset_refault_anon_per_s";
		return v->r[C_REFAULT_ANON];
	}
	*src = "zswpin_per_s";
	return v->r[C_ZSWPIN];
}

static double file_cache(const struct dview *v)
{
	if (isnan(v->g[G_INACTIVE_FILE]) && isnan(v->g[G_ACTIVE_FILE]))
		return NAN;
	return det_nz(v->g[G_INACTIVE_FILE]) + det_nz(v->g[G_ACTIVE_FILE]);
}

static const char *swap_name(const struct dview *v)
{
	if (v->swap_zram && v->swap_zswap)
		return "zram and zswap";
	if (v->swap_zram)
		return "zram";
	if (v->swap_zswap)
		return "zswap";
	return NULL;
}

static bool compressed(const struct dview *v)
{
	return v->swap_zram || v->swap_zswap;
}

/* The memory stall share from which swapping is a problem: doubled when
 * the swap is compressed memory, whose swap-ins cost decompression (which
 * PSI counts) rather than a disk read (detect_thrash.c does the same). */
static double stall_warn(const struct dview *v)
{
	return compressed(v) ? 0.10 : 0.05;
}

/* Appends "; tasks stalled on memory N%" (or that PSI is missing). */
static int add_stall(const struct dview *v, char *s, int n)
{
	if (n >= DET_SUMMARY_MAX)
		return n;
	if (isnan(v->psi_some))
		return n + snprintf(s + n, (size_t)(DET_SUMMARY_MAX - n), "; no PSI on this kernel");
	return n + snprintf(s + n, (size_t)(DET_SUMMARY_MAX - n), "; tasks stalled on memory %.1f%% of the time%s",
			    v->psi_some * 100, v->psi_from_host ? " (host PSI)" : "");
}

static void cold_anon(const struct dview *v, struct det_result *o)
{
	double rf = v->r[C_REFAULT_FILE], ia = v->g[G_INACTIVE_ANON];
	double sa = v->r[C_SCAN_ANON], sf = v->r[C_SCAN_FILE];
	double anon_share = NAN;
	bool cold;

	o->level = DL_CLEAR;
	if (isnan(rf) || isnan(ia))
		return;
	if (!isnan(sa) && !isnan(sf) && !v->is_cgroup) {
		if (sf <= 0)
			return;
		anon_share = sa / (sa + sf);
		cold = anon_share < 0.01;
	} else if (!isnan(swap_out(v))) {
		cold = swap_out(v) < 0.01 * rf && det_nz(v->r[C_REFAULT_ANON]) < 0.01 * rf;
	} else if (!isnan(v->g[G_SWAP_CURRENT])) {
		/* a cgroup without swap counters: none of its anon is in swap and
		 * none comes back, so reclaim is not taking anon */
		cold = v->g[G_SWAP_CURRENT] <= fmax(1 * MiB, 0.01 * ia) &&
		       det_nz(v->r[C_REFAULT_ANON]) < 0.01 * rf;
	} else {
		return;	/* no way to tell whether anon is scanned */
	}
	/* anon in cgroups that may not swap is never scanned by design */
	if (!v->is_cgroup && v->ia_noswap > 0)
		ia = fmax(0.0, ia - v->ia_noswap);
	bool swap_ok = !isnan(v->swap_free) && v->swap_free >= 64 * MiB && v->swappiness > 0;
	double ia_min = fmax(64 * MiB, isnan(v->mem_ref) ? 0 : 0.05 * v->mem_ref);
	if (!cold || !swap_ok || ia < ia_min)
		return;
	/* the stall must be the refaults' (a trickle of refaults beside
	 * direct compaction is not the balance's fault) */
	enum det_psi_owner owner = det_refault_psi(v, rf, rf);
	bool psi = owner == PSI_REFAULTS;
	bool pressure = psi ? v->psi_some >= 0.05 : owner == PSI_NONE && rf >= 4 * MiB;
	if (rf >= 1 * MiB && pressure)
		o->level = (psi && (v->psi_some >= 0.25 || det_nz(v->psi_full) >= 0.10)) ? DL_CRITICAL : DL_WARNING;
	else if (rf >= 256 * 1024)
		o->level = DL_SUSTAIN;
	if (o->level == DL_CLEAR)
		return;
	o->shape = "cold_anon_file_thrash";
	o->magnitude = rf;
	if (!o->text)
		return;
	det_ev(o, "workingset_refault_file_per_s", rf / v->page_size);
	det_ev(o, "inactive_anon_bytes", ia);
	det_ev(o, "pgscan_anon_share", anon_share);
	det_ev(o, "pgscan_file_per_s", sf / v->page_size);
	det_ev(o, "pgscan_anon_per_s", sa / v->page_size);
	det_ev(o, "swapout_per_s", swap_out(v) / v->page_size);
	det_ev(o, "swap_current_bytes", v->g[G_SWAP_CURRENT]);
	det_ev(o, "swap_free_bytes", v->swap_free);
	det_ev(o, "swappiness", v->swappiness);
	det_ev(o, "psi_memory_some_pct", v->psi_some * 100);
	char kb[640];
	kbug_verdict(KB_COLD_ANON, &v->kernel, kb, sizeof(kb));
	const char *why = "";
	if (v->mglru)
		why = "; with the multi-gen LRU on, reclaim at the root goes to lru_gen_shrink_node() "
		      "(get_scan_count() and cache_trim_mode are not used): its anon/file balance follows "
		      "swappiness and the generations' refault tiers";
	else if (kver_known(&v->kernel) && kver_cmp(&v->kernel, 5, 5) >= 0)
		why = "; on this kernel file-only reclaim is cache_trim_mode (5.5+, b91ac374346b: inactive "
		      "file plentiful and no refault seen at the reclaim root), which use-once-looking "
		      "cache keeps on";
	else if (kver_known(&v->kernel) && kver_cmp(&v->kernel, 5, 3) >= 0)
		why = "; this kernel has the fix, so file refaults should have turned anon scanning on: "
		      "look at swappiness and the cgroup's swap limits first";
	snprintf(o->hint_buf, sizeof(o->hint_buf),
		 "reclaim takes only file cache: check vm.swappiness (and memory.swappiness / "
		 "memory.swap.max of the cgroup)%s; %s", why, kb);
	o->hint = o->hint_buf;
	char a[64], b[32], c[32];
	int n = snprintf(o->summary, DET_SUMMARY_MAX,
			 "file refaults %s while %s of inactive anon is never scanned (%s of swap free, swappiness %.0f%s)",
			 det_fmt_rate(a, sizeof(a), rf, v->page_size), det_fmt_bytes(b, sizeof(b), ia),
			 det_fmt_bytes(c, sizeof(c), v->swap_free), v->swappiness,
			 v->swappiness_known ? "" : " assumed");
	add_stall(v, o->summary, n);
}

/* Seed 004: swap-out volume while a large file cache stays. */
static void over_swap(const struct dview *v, struct det_result *o)
{
	const char *in_src;
	double so = swap_out(v), grow = v->r[C_SWAP_USED], sin = swap_in(v, &in_src);
	double file = file_cache(v), rfile = det_nz(v->r[C_REFAULT_FILE]);
	bool from_growth = false;

	o->level = DL_CLEAR;
	if (v->is_cgroup && isnan(v->r[C_PSWPOUT]) && !isnan(grow) && so == fmax(0.0, grow))
		from_growth = true;	/* v1 / older v2: swap usage growth is the net swap-out */
	if (isnan(so) || isnan(file) || so < 256 * 1024)
		return;
	double plenty = fmax(64 * MiB, isnan(v->mem_ref) ? 0 : 0.10 * v->mem_ref);
	if (file < plenty)
		return;
	/* the pages stay out (swap in use grows), few come back, the cache
	 * is cold (refaults small against the swap-out) */
	if (!isnan(grow) && !from_growth && grow < 0.5 * so)
		return;
	if (!isnan(sin) && sin > 0.25 * so)
		return;
	if (rfile > 0.25 * so)
		return;
	/* reclaim takes at least as much anon as file: pgsteal_anon vs
	 * pgsteal_file (5.8+), else swap-out vs all pages stolen */
	double sa = v->r[C_STEAL_ANON], sf = v->r[C_STEAL_FILE], steal = v->r[C_STEAL_ALL];
	double anon_share = NAN;
	if (!v->is_cgroup && !isnan(sa) && !isnan(sf) && sa + sf > 0)
		anon_share = sa / (sa + sf);
	else if (!isnan(steal) && steal > 0)
		anon_share = fmin(1.0, so / steal);
	if (!isnan(anon_share) && anon_share < 0.5)
		return;
	/* LRU reclaim did the swap-out: pgscan counts only in
	 * shrink_inactive_list(); proactive pageout (DAMON_RECLAIM, MADV_PAGEOUT:
	 * reclaim_pages() -> shrink_folio_list()) swaps out without a scan, and
	 * is the operator's choice, not reclaim's balance */
	double scan = v->r[C_SCAN_ALL];
	if (!isnan(scan) && scan < 0.5 * so)
		return;
	/* the cache is cold: reclaim frees the file pages it scans. Pages it
	 * scans and keeps (referenced, activated) are the file LRU's cost in
	 * lru_note_cost(lruvec, file, nr_pageout, nr_scanned - nr_reclaimed)
	 * and shrink_active_list()'s rotations (before 5.9 recent_rotated in
	 * get_scan_count()): a hot cache moves the pressure to cold anon by
	 * design. File pages kept (5.8+: pgscan_file - pgsteal_file) at least
	 * the swap-out, or all pages kept (before: anon rotations included, so
	 * twice) say the cache is in use. */
	double kept = NAN, kept_need = so;
	if (!isnan(v->r[C_SCAN_FILE]) && !isnan(sf) && !v->is_cgroup)
		kept = v->r[C_SCAN_FILE] - sf;
	else if (!isnan(scan) && !isnan(steal)) {
		kept = scan - steal;
		kept_need = 2 * so;
	}
	if (!isnan(kept) && kept >= kept_need)
		return;
	double scan_a = v->r[C_SCAN_ANON], scan_f = v->r[C_SCAN_FILE];
	double scan_ratio = (!v->is_cgroup && !isnan(scan_a) && !isnan(scan_f) && scan_f > 0) ? scan_a / scan_f : NAN;
	bool psi = !isnan(v->psi_some);
	bool stall = psi && v->psi_some >= stall_warn(v);
	bool stall_crit = psi && (v->psi_some >= 0.25 || det_nz(v->psi_full) >= 0.10);
	/* compressed swap takes anon at memory speed by design, and a
	 * swappiness above 100 asks reclaim to prefer anon: then only stalls
	 * make it a problem */
	bool by_design = compressed(v) || (v->swappiness_known && v->swappiness > 100);
	if (by_design && !stall)
		return;
	if (so >= 1 * MiB)
		o->level = stall_crit ? DL_CRITICAL : DL_WARNING;
	else
		o->level = DL_SUSTAIN;
	o->shape = "over_swap";
	o->magnitude = so;
	if (!o->text)
		return;
	det_ev(o, from_growth ? "swap_growth_bytes_per_s" : "swapout_per_s", from_growth ? so : so / v->page_size);
	if (!from_growth)
		det_ev(o, "swap_growth_bytes_per_s", grow);
	det_ev(o, in_src, sin / v->page_size);
	det_ev(o, "file_cache_bytes", file);
	det_ev(o, "active_file_bytes", v->g[G_ACTIVE_FILE]);
	det_ev(o, "workingset_refault_file_per_s", rfile / v->page_size);
	det_ev(o, "anon_reclaim_share", anon_share);
	det_ev(o, "pgscan_anon_to_file", scan_ratio);
	det_ev(o, "swap_current_bytes", v->g[G_SWAP_CURRENT]);
	det_ev(o, "swappiness", v->swappiness);
	det_ev(o, "psi_memory_some_pct", v->psi_some * 100);

	char kb[640];
	kbug_verdict(KB_SCAN_ROUNDUP, &v->kernel, kb, sizeof(kb));
	const char *cause;
	if (v->swappiness_known && v->swappiness > 100)
		cause = "vm.swappiness above 100 asks reclaim to prefer anon: lower it for this workload";
	else if (compressed(v))
		cause = "swapping to compressed memory stalls here: lower swappiness or give the workload memory";
	else if (v->mglru)
		cause = "reclaim prefers anon over a cold cache under the multi-gen LRU (no active/inactive "
			"lists, no cache_trim_mode): check swappiness (memory.swappiness of the cgroup) or "
			"memory.low/min protecting the cache";
	else if (kbug_inside(KB_SCAN_ROUNDUP, &v->kernel))
		cause = "on this kernel the scan-size round-up makes small anon lists of online memory "
			"cgroups eligible at every priority (seed 004: 64 KiB pages, THP)";
	else
		cause = "reclaim prefers anon over a cold cache: check swappiness (memory.swappiness of the "
			"cgroup), a cache read twice kept on the active list (cache_trim_mode looks at "
			"inactive file only), or memory.low/min protecting the cache";
	snprintf(o->hint_buf, sizeof(o->hint_buf), "%s; %s", cause, kb);
	o->hint = o->hint_buf;

	char a[64], b[32], c[32];
	const char *zn = swap_name(v);
	int n = snprintf(o->summary, DET_SUMMARY_MAX, "anon swapped out at %s%s%s",
			 det_fmt_rate(a, sizeof(a), so, v->page_size), zn ? " to " : "", zn ? zn : "");
	if (!isnan(grow) && n < DET_SUMMARY_MAX)
		n += snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n), " (swap in use +%s/s)",
			      det_fmt_bytes(b, sizeof(b), fmax(0.0, grow)));
	if (n < DET_SUMMARY_MAX)
		n += snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n),
			      " while %s of file cache stays and barely refaults", det_fmt_bytes(c, sizeof(c), file));
	if (!isnan(anon_share) && n < DET_SUMMARY_MAX)
		n += snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n), "; %.0f%% of reclaim is anon",
			      anon_share * 100);
	n = add_stall(v, o->summary, n);
	if (v->is_cgroup && v->mem_limited && n < DET_SUMMARY_MAX)
		snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n), " (%s %s)", v->mem_ref_name,
			 det_fmt_bytes(c, sizeof(c), v->mem_ref));
}

void detect_over_swap_window(const struct dview *win, const struct dview *older, const struct dview *newer,
			     struct det_result *o)
{
	double total = swap_out(win) * win->dt;
	double a = swap_out(older) * older->dt, b = swap_out(newer) * newer->dt;

	o->level = DL_CLEAR;
	if (isnan(total) || isnan(a) || isnan(b) || total <= 0 || a < 0.25 * total || b < 0.25 * total)
		return;
	if (!win->is_cgroup && !isnan(win->global_share) && win->global_share < 0.25)
		return;	/* the host's balance only where machine-wide reclaim runs (as per interval) */
	over_swap(win, o);
	if (o->level == DL_CLEAR || !o->text)
		return;
	det_ev(o, "window_s", round(win->dt));
	size_t n = strlen(o->summary);
	if (n < DET_SUMMARY_MAX)
		snprintf(o->summary + n, DET_SUMMARY_MAX - n, "; over the last %.0f s (reclaim swaps in batches)",
			 win->dt);
}

static void swap_churn(const struct dview *v, struct det_result *o)
{
	const char *in_src;
	double sin = swap_in(v, &in_src), sout = swap_out(v);
	double file = file_cache(v), rfile = det_nz(v->r[C_REFAULT_FILE]);

	/* a cgroup without pswpout: swap usage growth is the net of out and
	 * in, ~0 in churn, so the swap-out is unknown (zswpout, when it
	 * moves, is a lower bound) */
	if (v->is_cgroup && isnan(v->r[C_PSWPOUT]))
		sout = det_nz(v->r[C_ZSWPOUT]) > 0 ? v->r[C_ZSWPOUT] : NAN;
	o->level = DL_CLEAR;
	if (isnan(sin) || isnan(file))
		return;
	double plenty = fmax(32 * MiB, isnan(v->mem_ref) ? 0 : 0.10 * v->mem_ref);
	bool out_ok = isnan(sout) || sout >= 0.25 * sin;
	bool file_cold = rfile <= 0.25 * sin;
	if (file < plenty || !file_cold || !out_ok || sin < 256 * 1024)
		return;
	/* swap-ins are only a problem when tasks wait for them */
	bool psi = !isnan(v->psi_some);
	bool out_moving = isnan(sout) || sout >= 1 * MiB;
	if (psi) {
		if (sin >= 1 * MiB && out_moving && v->psi_some >= stall_warn(v))
			o->level = (v->psi_some >= 0.25 || det_nz(v->psi_full) >= 0.10) ? DL_CRITICAL : DL_WARNING;
		else if (v->psi_some >= 0.02)
			o->level = DL_SUSTAIN;
	} else {
		double need = v->swap_disk_only ? NOPSI_CHURN_DISK : NOPSI_CHURN_ANY;
		if (sin >= need && out_moving)
			o->level = DL_WARNING;
		else if (sin >= 0.5 * need)
			o->level = DL_SUSTAIN;
	}
	if (o->level == DL_CLEAR)
		return;
	o->shape = "anon_swap_churn";
	o->magnitude = sin;
	if (!o->text)
		return;
	det_ev(o, in_src, sin / v->page_size);
	det_ev(o, "swapout_per_s", sout / v->page_size);
	det_ev(o, "file_cache_bytes", file);
	det_ev(o, "active_file_bytes", v->g[G_ACTIVE_FILE]);
	det_ev(o, "inactive_file_bytes", v->g[G_INACTIVE_FILE]);
	det_ev(o, "workingset_refault_file_per_s", rfile / v->page_size);
	det_ev(o, "swap_current_bytes", v->g[G_SWAP_CURRENT]);
	det_ev(o, "swappiness", v->swappiness);
	det_ev(o, "psi_memory_some_pct", v->psi_some * 100);
	det_ev(o, "psi_memory_full_pct", v->psi_full * 100);
	const char *zn = swap_name(v);
	snprintf(o->hint_buf, sizeof(o->hint_buf),
		 "anon comes back from %s as fast as it goes while cold file cache stays: lower swappiness "
		 "for this workload (memory.swappiness / vm.swappiness %.0f%s); %s; or give the workload "
		 "memory (memory.max / memory.high)",
		 zn ? zn : "swap", v->swappiness, v->swappiness_known ? "" : " assumed",
		 v->mglru ? "the multi-gen LRU keeps the cache in the generations its refault tiers "
			    "protect (no cache_trim_mode there)"
			  : "a cache read twice sits on the active file list, which cache_trim_mode does not "
			    "trim first");
	o->hint = o->hint_buf;
	char a[64], b[32], c[32];
	int n = snprintf(o->summary, DET_SUMMARY_MAX,
			 "anon swapped back in at %s%s%s while %s of file cache (%s active) is not refaulted",
			 det_fmt_rate(a, sizeof(a), sin, v->page_size), zn ? " from " : "", zn ? zn : "",
			 det_fmt_bytes(b, sizeof(b), file), det_fmt_bytes(c, sizeof(c), det_nz(v->g[G_ACTIVE_FILE])));
	add_stall(v, o->summary, n);
}

/* Seed 002 on a kernel that has the fix (the counters came with it):
 * pglazyfree far above pglazyfreed is normal reuse; hinted pages piling up
 * unreclaimed under pressure is not. */
static void lazyfree(const struct dview *v, struct det_result *o)
{
	double lf = v->r[C_LAZYFREE], lfd = det_nz(v->r[C_LAZYFREED]);
	double rf = v->r[C_REFAULT_FILE];
	double st = v->g[G_SWAP_TOTAL];
	double anon_grow = v->r[C_ANON_LRU];

	o->level = DL_CLEAR;
	if (isnan(lf) || isnan(rf) || isnan(anon_grow))
		return;
	bool swapless = (!isnan(st) && st == 0) ||
			(!isnan(v->swap_free) && v->swap_free < fmax(1 * MiB, 0.01 * det_nz(st)));
	if (!swapless || lf < 1 * MiB || lfd > 0.1 * lf)
		return;
	/* the hinted pages pile up: anon that cannot be reclaimed grows by a
	 * good part of what is hinted and not discarded */
	bool piling = anon_grow >= fmax(256 * 1024, 0.25 * (lf - lfd));
	bool psi = !isnan(v->psi_some);
	bool pressure = psi ? v->psi_some >= 0.05 : rf >= 4 * MiB;
	if (piling && rf >= 512 * 1024 && pressure)
		o->level = (psi && (v->psi_some >= 0.25 || det_nz(v->psi_full) >= 0.10)) ? DL_CRITICAL : DL_WARNING;
	else if (anon_grow > 0 && rf >= 128 * 1024)
		o->level = DL_SUSTAIN;
	if (o->level == DL_CLEAR)
		return;
	o->shape = "lazyfree_backlog";
	o->magnitude = rf;
	if (!o->text)
		return;
	det_ev(o, "pglazyfree_per_s", lf / v->page_size);
	det_ev(o, "pglazyfreed_per_s", lfd / v->page_size);
	det_ev(o, "anon_growth_bytes_per_s", anon_grow);
	det_ev(o, "workingset_refault_file_per_s", rf / v->page_size);
	det_ev(o, "swap_total_bytes", st);
	det_ev(o, "swap_free_bytes", v->swap_free);
	det_ev(o, "psi_memory_some_pct", v->psi_some * 100);
	char kb[640];
	kbug_verdict(KB_LAZYFREE_SWAPLESS, &v->kernel, kb, sizeof(kb));
	snprintf(o->hint_buf, sizeof(o->hint_buf),
		 "this kernel reclaims MADV_FREE pages without swap (it counts pglazyfreed), yet hinted "
		 "memory keeps growing while the cache thrashes: the allocator re-dirties or holds what it "
		 "hints faster than reclaim reaches it; have it return memory with MADV_DONTNEED or a "
		 "shorter decay (jemalloc dirty/muzzy decay, glibc M_TRIM_THRESHOLD); %s",
		 kb);
	o->hint = o->hint_buf;
	char a[64], b[64], c[32];
	int n = snprintf(o->summary, DET_SUMMARY_MAX,
			 "MADV_FREE marks %s but only %.0f%% are discarded while anon grows %s/s and file refaults "
			 "run at %s without usable swap",
			 det_fmt_rate(a, sizeof(a), lf, v->page_size), lf > 0 ? 100 * lfd / lf : 0,
			 det_fmt_bytes(c, sizeof(c), fmax(0.0, anon_grow)), det_fmt_rate(b, sizeof(b), rf, v->page_size));
	add_stall(v, o->summary, n);
}

void detect_swap_imbalance(const struct dview *v, struct det_result *out)
{
	static void (*const shapes[])(const struct dview *, struct det_result *) = {
		cold_anon, over_swap, swap_churn, lazyfree,
	};
	enum { NSHAPE = sizeof(shapes) / sizeof(shapes[0]) };
	struct det_result r;
	int best = -1;
	bool text = out->text;

	/* Host-level balance is only in question when machine-wide reclaim
	 * runs: if the reclaim is mostly cgroups hitting their own limits
	 * (5.8+ counters say so), the host's LRU lists are not what is being
	 * reclaimed and the signature belongs to those cgroups. */
	out->level = DL_CLEAR;
	if (!v->is_cgroup && !isnan(v->global_share) && v->global_share < 0.25)
		return;

	for (int i = 0; i < NSHAPE; i++) {
		det_result_init(&r);
		r.text = text;
		shapes[i](v, &r);
		if (r.level > (best < 0 ? DL_CLEAR : out->level)) {
			bool own = r.hint == r.hint_buf;
			*out = r;
			if (own)
				out->hint = out->hint_buf;	/* the copy's own buffer */
			best = i;
		}
	}
}
