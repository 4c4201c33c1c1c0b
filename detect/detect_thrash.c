/* detect_thrash.c - the working set does not fit: evicted pages are read
 * back (refaults) and the time lost shows in PSI.
 *
 * Refaults alone are not thrash (a streaming reader refaults harmlessly);
 * the evidence that it hurts is memory stall time. Without PSI (before 4.20
 * or booted psi=0) we ask for a higher refault rate and a sign that the
 * refaulting pages were part of the working set: workingset_activate (the
 * refault distance was within the active list, mm/workingset.c) or many
 * major faults. Under MGLRU workingset_activate means something else
 * (lru_gen_refault() counts it only for refaults taken in a page fault, not
 * through read()), so there the no-PSI path uses workingset_restore (the
 * page was in the working set when evicted), major faults and turnover.
 */
#include "detect_kinds.h"

#include <math.h>
#include <stdio.h>

void detect_thrash(const struct dview *v, struct det_result *out)
{
	double rf = v->r[C_REFAULT_ALL];
	double rfile = v->r[C_REFAULT_FILE], ranon = v->r[C_REFAULT_ANON];
	/* the share of refaults that were working set: activations, or under
	 * MGLRU restores */
	double act = v->mglru ? v->r[C_RESTORE_ALL] : v->r[C_ACTIVATE_ALL];
	double ws = (rf > 0 && !isnan(act)) ? fmin(1.0, act / rf) : NAN;
	double maj = v->r[C_MAJFAULT];
	/* Anon brought back from zram or zswap is decompressed in memory: its
	 * cost is CPU time, which PSI already counts, and running so is what
	 * compressed swap is for. Such refaults need twice the stall of a
	 * disk-bound refault to warn, and they do not count toward the
	 * turnover rule, which stands for time lost in read I/O. */
	bool mem_speed = (v->swap_zram || v->swap_zswap) && !isnan(ranon) && ranon >= 0.5 * rf;
	double io_rf = mem_speed ? det_nz(rfile) : rf;
	/* share of the scope's memory read back from disk per second */
	double turnover = (!isnan(v->mem_ref) && v->mem_ref > 0) ? io_rf / v->mem_ref : NAN;

	out->level = DL_CLEAR;
	if (isnan(rf))
		return;
	out->magnitude = rf;
	/* the stall PSI shows must be the refaults' (detect_kinds.h) */
	enum det_psi_owner owner = det_refault_psi(v, rf, io_rf);
	bool psi = owner == PSI_REFAULTS;
	double restore = v->r[C_RESTORE_ALL];
	bool restoring = !isnan(restore) && restore >= 0.05 * rf;
	/* refaults the kernel judged outside the working set (no activation,
	 * no restore: the refault distance exceeded what could stay resident,
	 * mm/workingset.c) wait for read I/O, which memory PSI does not
	 * count: a low stall then needs a re-read of half the memory per
	 * second (real-filethrash: 17x) to mean the working set is missing */
	bool outside_ws = !isnan(ws) && ws < 0.05 && !isnan(restore) && !restoring;
	if (owner == PSI_ELSEWHERE) {
		return;
	} else if (psi) {
		double some = v->psi_some, full = det_nz(v->psi_full);
		double to = det_nz(turnover);
		double to_warn = outside_ws ? 0.5 : 0.01;
		/* (full: a cgroup with one busy task stalls "full" whenever it
		 * stalls at all) */
		double warn = mem_speed ? 0.10 : 0.05, warn_full = mem_speed ? 0.10 : 0.02;
		double crit_full = mem_speed ? 0.25 : 0.10;
		if (rf >= 1 * MiB && (some >= 0.25 || full >= crit_full || (to >= 0.5 && some >= 0.01)))
			out->level = DL_CRITICAL;
		else if (rf >= 1 * MiB && (some >= warn || full >= warn_full || (to >= to_warn && some >= 0.01)))
			out->level = DL_WARNING;
		else if (rf >= 256 * 1024 && (some >= warn / 2.5 || (to >= to_warn / 2 && some >= 0.005)))
			out->level = DL_SUSTAIN;
	} else {
		bool hot = (!isnan(ws) && ws >= 0.3) || det_nz(maj) >= 100 || det_nz(turnover) >= 0.05;
		/* critical without PSI: working-set refaults at a rate that is
		 * also a share of the scope's memory (32 MiB/s is nothing to a
		 * 512 GiB host) */
		if (rf >= 32 * MiB && !isnan(ws) && ws >= 0.5 && det_nz(turnover) >= 0.01)
			out->level = DL_CRITICAL;
		else if (rf >= 4 * MiB && hot)
			out->level = DL_WARNING;
		else if (rf >= 1 * MiB)
			out->level = DL_SUSTAIN;
	}
	if (out->level == DL_CLEAR || !out->text)
		return;

	det_ev(out, "refault_bytes_per_s", rf);
	det_ev(out, "workingset_refault_file_per_s", rfile / v->page_size);
	det_ev(out, "workingset_refault_anon_per_s", ranon / v->page_size);
	det_ev(out, v->mglru ? "workingset_restore_ratio" : "workingset_activate_ratio", ws);
	det_ev(out, "pgmajfault_per_s", maj);
	det_ev(out, "psi_memory_some_pct", v->psi_some * 100);
	det_ev(out, "psi_memory_full_pct", v->psi_full * 100);
	det_ev(out, "memory_bytes", v->mem_ref);
	det_ev(out, "refault_turnover_per_s", turnover);
	out->hint = "the working set does not fit: give the workload more memory (raise memory.max / "
		    "memory.high or add RAM), protect it with memory.low, or shrink its cache footprint";

	char a[64], b[64], c[48];
	int n = snprintf(out->summary, DET_SUMMARY_MAX, "refaults %s",
			 det_fmt_rate(a, sizeof(a), rf, v->page_size));
	if (!isnan(rfile) && !isnan(ranon) && ranon > 0.05 * rf)
		n += snprintf(out->summary + n, (size_t)(DET_SUMMARY_MAX - n), " (anon %s/s)",
			      det_fmt_bytes(b, sizeof(b), ranon));
	if (!isnan(turnover) && turnover >= 0.01)
		n += snprintf(out->summary + n, (size_t)(DET_SUMMARY_MAX - n),
			      ", %.2fx its memory per second", turnover);
	if (psi)
		n += snprintf(out->summary + n, (size_t)(DET_SUMMARY_MAX - n),
			      "; tasks stalled on memory %.1f%% of the time%s", v->psi_some * 100,
			      v->psi_from_host ? " (host PSI)" : "");
	else if (!isnan(ws))
		n += snprintf(out->summary + n, (size_t)(DET_SUMMARY_MAX - n),
			      "; %.0f%% of them were part of the working set", ws * 100);
	if (!isnan(v->mem_ref) && n < DET_SUMMARY_MAX)
		snprintf(out->summary + n, (size_t)(DET_SUMMARY_MAX - n), " (%s %s)",
			 v->mem_ref_name ? v->mem_ref_name : "memory", det_fmt_bytes(c, sizeof(c), v->mem_ref));
}
