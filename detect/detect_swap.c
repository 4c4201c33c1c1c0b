/* detect_swap.c - reclaim pressure split wrongly between anon and file.
 *
 * Three shapes (CONTRACT.md §3, seeds 000, 002, 004):
 *  cold_anon_file_thrash  file cache refaults while a large inactive anon
 *                         list is never scanned, although swap is free and
 *                         swappiness > 0 (seed 000). "Never scanned" comes
 *                         from pgscan_anon vs pgscan_file (5.8+); before
 *                         5.8, from swap-out staying at zero; for a cgroup
 *                         without swap counters, from its swap usage staying
 *                         at zero with no anon refaults.
 *  anon_swap_churn        anon is swapped out and back in while plenty of
 *                         inactive file cache that nobody refaults sits
 *                         there (seed 004). Swap-ins come from pswpin (+
 *                         zswpin at host level; cgroup v2 on 6.14+) or anon
 *                         refaults (5.9+); swap-outs count zswpout too.
 *  lazyfree_backlog       MADV_FREE pages (pglazyfree) are not discarded
 *                         (pglazyfreed) while reclaim takes file cache that
 *                         refaults, on a swapless or swap-full machine (seed
 *                         002). The only shape that needs no free swap.
 */
#include "detect_kinds.h"

#include <math.h>
#include <stdio.h>

/* Pages swapped out per second, to disk (pswpout) or to zswap (zswpout);
 * NAN when neither is known. */
static double swap_out(const struct dview *v)
{
	if (isnan(v->r[C_PSWPOUT]) && isnan(v->r[C_ZSWPOUT]))
		return NAN;
	return det_nz(v->r[C_PSWPOUT]) + det_nz(v->r[C_ZSWPOUT]);
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
	bool swap_ok = !isnan(v->swap_free) && v->swap_free >= 64 * MiB && v->swappiness > 0;
	double ia_min = fmax(64 * MiB, isnan(v->mem_ref) ? 0 : 0.05 * v->mem_ref);
	if (!cold || !swap_ok || ia < ia_min)
		return;
	bool psi = !isnan(v->psi_some);
	bool pressure = psi ? v->psi_some >= 0.05 : rf >= 4 * MiB;
	if (rf >= 1 * MiB && pressure)
		o->level = (rf >= 16 * MiB || (psi && v->psi_some >= 0.25)) ? DL_CRITICAL : DL_WARNING;
	else if (rf >= 256 * 1024)
		o->level = DL_SUSTAIN;
	if (o->level == DL_CLEAR)
		return;
	o->shape = "cold_anon_file_thrash";
	o->magnitude = rf;
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
	o->hint = "reclaim takes only file cache: check vm.swappiness (and memory.swappiness / "
		  "memory.swap.max of the cgroup); a kernel with the refault-driven anon scanning "
		  "fix (5.3+, 'mm: vmscan: scan anonymous pages on file refaults') balances it";
	char a[64], b[32], c[32];
	snprintf(o->summary, DET_SUMMARY_MAX,
		 "file refaults %s while %s of inactive anon is never scanned (%s of swap free, swappiness %.0f%s)",
		 det_fmt_rate(a, sizeof(a), rf, v->page_size), det_fmt_bytes(b, sizeof(b), ia),
		 det_fmt_bytes(c, sizeof(c), v->swap_free), v->swappiness,
		 v->swappiness_known ? "" : " assumed");
}

static void swap_churn(const struct dview *v, struct det_result *o)
{
	double sin = v->r[C_PSWPIN], sout = swap_out(v);
	double ifile = v->g[G_INACTIVE_FILE], rfile = det_nz(v->r[C_REFAULT_FILE]);
	bool from_refault = false;

	o->level = DL_CLEAR;
	if (isnan(sin)) {
		sin = v->r[C_REFAULT_ANON];	/* anon refaults are swap-ins of recently evicted anon */
		from_refault = true;
	}
	if (isnan(sin) || isnan(ifile))
		return;
	double plenty = fmax(32 * MiB, isnan(v->mem_ref) ? 0 : 0.10 * v->mem_ref);
	bool out_ok = isnan(sout) || sout >= 0.25 * sin;
	bool file_cold = rfile <= 0.25 * sin;
	if (ifile < plenty || !file_cold || !out_ok)
		return;
	bool psi = !isnan(v->psi_some);
	if (sin >= 1 * MiB && (isnan(sout) || sout >= 1 * MiB))
		o->level = (sin >= 16 * MiB || (psi && v->psi_some >= 0.25)) ? DL_CRITICAL : DL_WARNING;
	else if (sin >= 256 * 1024)
		o->level = DL_SUSTAIN;
	if (o->level == DL_CLEAR)
		return;
	o->shape = "anon_swap_churn";
	o->magnitude = sin;
	det_ev(o, from_refault ? "workingset_refault_anon_per_s" : "swapin_per_s", sin / v->page_size);
	det_ev(o, "swapout_per_s", sout / v->page_size);
	det_ev(o, "inactive_file_bytes", ifile);
	det_ev(o, "workingset_refault_file_per_s", rfile / v->page_size);
	det_ev(o, "swap_current_bytes", v->g[G_SWAP_CURRENT]);
	det_ev(o, "psi_memory_some_pct", v->psi_some * 100);
	o->hint = "anon is swapped while cold file cache stays: lower swappiness for this workload, "
		  "or on a small cgroup check for scan-size round-up (fixed in 5.6, 'don't round up "
		  "scan size for online memory cgroup')";
	char a[64], b[32];
	snprintf(o->summary, DET_SUMMARY_MAX,
		 "anon swapped back in at %s while %s of inactive file cache is not refaulted",
		 det_fmt_rate(a, sizeof(a), sin, v->page_size), det_fmt_bytes(b, sizeof(b), ifile));
}

static void lazyfree(const struct dview *v, struct det_result *o)
{
	double lf = v->r[C_LAZYFREE], lfd = det_nz(v->r[C_LAZYFREED]);
	double rf = v->r[C_REFAULT_FILE];
	double st = v->g[G_SWAP_TOTAL];

	o->level = DL_CLEAR;
	if (isnan(lf) || isnan(rf))
		return;
	bool swapless = (!isnan(st) && st == 0) ||
			(!isnan(v->swap_free) && v->swap_free < fmax(1 * MiB, 0.01 * det_nz(st)));
	if (!swapless || lf < 1 * MiB || lfd > 0.1 * lf)
		return;
	bool psi = !isnan(v->psi_some);
	bool pressure = psi ? v->psi_some >= 0.02 : rf >= 4 * MiB;
	if (rf >= 512 * 1024 && pressure)
		o->level = (rf >= 16 * MiB || (psi && v->psi_some >= 0.25)) ? DL_CRITICAL : DL_WARNING;
	else if (rf >= 128 * 1024)
		o->level = DL_SUSTAIN;
	if (o->level == DL_CLEAR)
		return;
	o->shape = "lazyfree_backlog";
	o->magnitude = rf;
	det_ev(o, "pglazyfree_per_s", lf / v->page_size);
	det_ev(o, "pglazyfreed_per_s", lfd / v->page_size);
	det_ev(o, "workingset_refault_file_per_s", rf / v->page_size);
	det_ev(o, "swap_total_bytes", st);
	det_ev(o, "swap_free_bytes", v->swap_free);
	det_ev(o, "psi_memory_some_pct", v->psi_some * 100);
	o->hint = "MADV_FREE pages are not reclaimed without swap: use a kernel that reclaims lazily "
		  "freed pages on swapless systems (4.12+), or have the allocator use MADV_DONTNEED";
	char a[64], b[64];
	snprintf(o->summary, DET_SUMMARY_MAX,
		 "MADV_FREE marks %s but only %.0f%% are discarded while file refaults run at %s without usable swap",
		 det_fmt_rate(a, sizeof(a), lf, v->page_size), lf > 0 ? 100 * lfd / lf : 0,
		 det_fmt_rate(b, sizeof(b), rf, v->page_size));
}

void detect_swap_imbalance(const struct dview *v, struct det_result *out)
{
	struct det_result r[3] = { { 0 }, { 0 }, { 0 } };
	int best = 0;

	/* Host-level balance is only in question when machine-wide reclaim
	 * runs: if the reclaim is mostly cgroups hitting their own limits
	 * (5.8+ counters say so), the host's LRU lists are not what is being
	 * reclaimed and the signature belongs to those cgroups. */
	if (!v->is_cgroup && !isnan(v->global_share) && v->global_share < 0.25) {
		out->level = DL_CLEAR;
		return;
	}
	cold_anon(v, &r[0]);
	swap_churn(v, &r[1]);
	lazyfree(v, &r[2]);
	for (int i = 1; i < 3; i++)
		if (r[i].level > r[best].level)
			best = i;
	*out = r[best];
}
