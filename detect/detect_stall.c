/* detect_stall.c - allocations waiting on reclaim or compaction.
 *
 * direct_reclaim_stall: allocstall_* counts allocations that had to reclaim
 * themselves: free pages fell below the min watermark (the slow path's
 * ALLOC_WMARK_MIN; falling below low only wakes kswapd), so kswapd did not
 * keep up; with PSI we ask that the waiting is a real share of time.
 * These counters are machine-wide only (cgroup-limit reclaim never shows
 * there, RECLAIM-NOTES.md), so the detector runs at host level.
 *
 * compaction_stall: high-order allocations that stall in direct compaction
 * and mostly fail (fragmentation).
 */
#include "detect_kinds.h"

#include <math.h>
#include <stdio.h>

void detect_direct_reclaim_stall(const struct dview *v, struct det_result *o)
{
	double st = v->r[C_ALLOCSTALL], sd = v->r[C_SCAN_DIRECT];
	bool psi = !isnan(v->psi_some);

	o->level = DL_CLEAR;
	if (v->is_cgroup || isnan(st))
		return;
	if (psi) {
		double full = det_nz(v->psi_full);
		if (st >= 1 && (full >= 0.10 || v->psi_some >= 0.40))
			o->level = DL_CRITICAL;
		else if (st >= 1 && v->psi_some >= 0.10)
			o->level = DL_WARNING;
		else if (st >= 0.2 && v->psi_some >= 0.03)
			o->level = DL_SUSTAIN;
	} else {
		if (st >= 100 && det_nz(sd) >= 4 * MiB)
			o->level = DL_CRITICAL;
		else if (st >= 10 && det_nz(sd) >= 4 * MiB)
			o->level = DL_WARNING;
		else if (st >= 2)
			o->level = DL_SUSTAIN;
	}
	if (o->level == DL_CLEAR)
		return;
	o->magnitude = st;
	if (!o->text)
		return;
	double eff = (!isnan(sd) && sd > 0 && !isnan(v->r[C_STEAL_DIRECT])) ? v->r[C_STEAL_DIRECT] / sd : NAN;
	det_ev(o, "allocstall_per_s", st);
	det_ev(o, "pgscan_direct_per_s", sd / v->page_size);
	det_ev(o, "direct_reclaim_efficiency", eff);
	det_ev(o, "psi_memory_some_pct", v->psi_some * 100);
	det_ev(o, "psi_memory_full_pct", v->psi_full * 100);
	det_ev(o, "mem_available_bytes", v->g[G_MEM_AVAIL]);
	o->hint = "kswapd does not keep up: raise vm.watermark_scale_factor or vm.min_free_kbytes so "
		  "background reclaim starts earlier, or reduce allocation bursts";
	char a[64];
	int n = snprintf(o->summary, DET_SUMMARY_MAX, "%.1f direct reclaim stalls/s scanning %s",
			 st, det_fmt_rate(a, sizeof(a), det_nz(sd), v->page_size));
	if (psi)
		snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n),
			 "; tasks stalled on memory %.0f%% of the time (full %.0f%%)",
			 v->psi_some * 100, det_nz(v->psi_full) * 100);
}

void detect_compaction_stall(const struct dview *v, struct det_result *o)
{
	double cs = v->r[C_COMPACT_STALL], cf = v->r[C_COMPACT_FAIL];
	bool psi = !isnan(v->psi_some);

	o->level = DL_CLEAR;
	if (v->is_cgroup || isnan(cs) || isnan(cf))
		return;
	bool failing = cs >= 1 && cf >= 0.5 * cs;
	if (failing && (psi ? v->psi_some >= 0.05 : cs >= 10))
		o->level = (psi && v->psi_some >= 0.25) ? DL_CRITICAL : DL_WARNING;
	else if (cs >= 0.5 && cf >= 0.3 * cs)
		o->level = DL_SUSTAIN;
	if (o->level == DL_CLEAR)
		return;
	o->magnitude = cs;
	if (!o->text)
		return;
	det_ev(o, "compact_stall_per_s", cs);
	det_ev(o, "compact_fail_per_s", cf);
	det_ev(o, "psi_memory_some_pct", v->psi_some * 100);
	o->hint = "high-order allocations stall on fragmented memory: check THP defrag settings "
		  "(/sys/kernel/mm/transparent_hugepage/defrag) and vm.extfrag_threshold, or raise "
		  "vm.min_free_kbytes";
	snprintf(o->summary, DET_SUMMARY_MAX, "%.1f direct compaction stalls/s, %.0f%% of them failing",
		 cs, 100 * cf / cs);
}
