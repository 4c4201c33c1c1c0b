/* detect_writeback.c - reclaim runs into dirty and writeback pages faster
 * than the flushers clean them (seed 003).
 *
 * Host level, the direct signals are file pages written by reclaim itself
 * (nr_vmscan_write minus pswpout and zswpout: the counter includes swap-out,
 * RECLAIM-NOTES.md) and dirty pages tagged for immediate reclaim
 * (nr_vmscan_immediate_reclaim). One of them must be present, plus one
 * consequence: dirty+writeback pages crowding the inactive file list,
 * falling reclaim efficiency (pgsteal/pgscan), direct reclaim stalls or
 * memory PSI, or io full stall.
 *
 * Cgroup memory.stat has no immediate-reclaim counter: a cgroup gets the
 * host's immediate-reclaim rate in proportion to its share of the host's
 * dirty+writeback pages (they are what reclaim runs into). Its signature:
 * that attributed rate (or, only when the host's counter is unknown, a file
 * cache crowded with dirty pages at the cgroup's limit), with reclaim that
 * fails (efficiency, v2) or stalls (PSI). Dirty pages alone are not it: an
 * fsync-ing writer keeps half its memory under writeback with reclaim
 * finding only clean pages.
 *
 * MGLRU (the sample's mglru flag) takes dirty and writeback file folios out
 * of reclaim's way before isolation (sort_folio() moves them to a younger
 * generation), so nr_vmscan_immediate_reclaim and nr_vmscan_write stay flat
 * in a storm and the diverted folios count in pgrefill, not pgscan_*. There
 * the signature is what does move: dirty + writeback crowding the file LRU,
 * pgrefill against pgscan (pgrefill also counts promoted and protected
 * folios, so it is evidence beside dirty pages, never alone), and stalls;
 * streaming writes that do not stall are not a storm. pgrefill reaches
 * /proc/vmstat only for machine-wide reclaim; a cgroup-limit storm shows it
 * in v2 memory.stat (v1 has none).
 */
#include "detect_kinds.h"

#include <math.h>
#include <stdio.h>

static void summarize(const struct dview *v, struct det_result *o, double fwrite, double imm,
		      double dw, double eff, double sorted)
{
	char a[64], b[64], c[32];
	int n = snprintf(o->summary, DET_SUMMARY_MAX, "%s of dirty/writeback pages in reclaim's way",
			 det_fmt_bytes(c, sizeof(c), dw));
	if (fwrite >= 1024)
		n += snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n), "; reclaim writes %s itself",
			      det_fmt_rate(a, sizeof(a), fwrite, v->page_size));
	if (!isnan(imm) && imm >= 1024 && n < DET_SUMMARY_MAX)
		n += snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n), "; %s tagged for immediate reclaim",
			      det_fmt_rate(b, sizeof(b), imm, v->page_size));
	if (!isnan(sorted) && n < DET_SUMMARY_MAX)
		n += snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n),
			      "; pgrefill %.1fx pgscan (folios moved aside, not reclaimed)", sorted);
	if (!isnan(eff) && n < DET_SUMMARY_MAX)
		n += snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n), "; reclaim efficiency %.0f%%",
			      eff * 100);
	if (!isnan(v->r[C_ALLOCSTALL]) && v->r[C_ALLOCSTALL] >= 0.1 && n < DET_SUMMARY_MAX)
		n += snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n), "; %.1f direct reclaim stalls/s",
			      v->r[C_ALLOCSTALL]);
	if (!isnan(v->psi_some) && n < DET_SUMMARY_MAX)
		snprintf(o->summary + n, (size_t)(DET_SUMMARY_MAX - n), "; memory stall %.0f%%",
			 v->psi_some * 100);
}

/* MGLRU: dirty + writeback crowding the file LRU, folios sorted (pgrefill)
 * rather than isolated, and stalls. Returns the level; *sorted is pgrefill
 * against pgscan (NAN unknown). */
static enum det_level mglru_level(const struct dview *v, double dw, double eff, double *sorted)
{
	double file = det_nz(v->g[G_INACTIVE_FILE]) + det_nz(v->g[G_ACTIVE_FILE]);
	double refill = v->r[C_PGREFILL], scan = v->r[C_SCAN_ALL];
	bool psi = !isnan(v->psi_some);

	*sorted = (!isnan(refill) && !isnan(scan) && scan + refill >= 1 * MiB) ? refill / fmax(scan, 1.0) : NAN;
	bool crowded = dw >= 16 * MiB && file > 0 && dw >= 0.25 * file;
	/* io full stall stands for writeback only when swap is not doing
	 * block I/O itself (swap-ins are reads that stall io too) */
	bool swap_io = det_nz(v->r[C_PSWPIN]) + det_nz(v->r[C_PSWPOUT]) >= 1 * MiB;
	bool diverted = (!isnan(*sorted) && *sorted >= 0.5) || (!isnan(eff) && eff < 0.5) ||
			(!swap_io && !isnan(v->io_full) && v->io_full >= 0.10);
	bool stall = psi ? v->psi_some >= 0.10 : det_nz(v->r[C_ALLOCSTALL]) >= 1;
	if (v->is_cgroup) {
		double cur = v->g[G_MEM_CURRENT];
		bool at_limit = !isnan(cur) && v->mem_limited && cur >= 0.9 * v->mem_ref;
		crowded = crowded || (dw >= 16 * MiB && file > 0 && dw >= 0.1 * file && at_limit);
		/* v1 memory.stat has neither pgrefill nor pgscan: crowding at the
		 * limit with a stall is all there is */
		if (isnan(*sorted) && isnan(eff))
			diverted = at_limit;
	}
	if (crowded && diverted && stall)
		return (psi && (v->psi_some >= 0.25 || det_nz(v->psi_full) >= 0.10)) ? DL_CRITICAL : DL_WARNING;
	if (crowded && (diverted || (psi && v->psi_some >= 0.05)))
		return DL_SUSTAIN;
	return DL_CLEAR;
}

void detect_writeback_storm(const struct dview *v, struct det_result *o)
{
	double scan = v->r[C_SCAN_ALL], steal = v->r[C_STEAL_ALL];
	double eff = (!isnan(scan) && !isnan(steal) && scan >= 1 * MiB) ? fmin(1.0, steal / scan) : NAN;
	/* dirty and writeback pages are file pages: where the split is known
	 * (5.8+), the efficiency they lower is the file LRU's; anon reclaim
	 * that rotates referenced pages (swap thrash) is not theirs */
	double sf = v->r[C_SCAN_FILE], stf = v->r[C_STEAL_FILE];
	if (!isnan(sf) && !isnan(stf) && sf >= 1 * MiB)
		eff = fmin(1.0, stf / sf);
	/* immediate reclaim counts the dirty/writeback folios reclaim met and
	 * rotated (shrink_folio_list: folio_set_reclaim, "tagged for immediate
	 * reclaim"): as a share of what it scanned, how much of reclaim they
	 * blocked. 0.2 % of a streaming writer's 100k pages/s is reclaim
	 * meeting the tail of the dirty data, not a storm. */
	double imm_share = (!isnan(scan) && scan >= 1 * MiB) ? det_nz(v->r[C_IMMEDIATE]) / scan : NAN;
	double dw = det_nz(v->g[G_DIRTY]) + det_nz(v->g[G_WRITEBACK]);
	double ifile = v->g[G_INACTIVE_FILE];
	double fwrite = NAN, imm = v->r[C_IMMEDIATE];
	bool psi = !isnan(v->psi_some);

	o->level = DL_CLEAR;
	if (!isnan(v->r[C_VMSCAN_WRITE]))
		fwrite = fmax(0.0, v->r[C_VMSCAN_WRITE] - det_nz(v->r[C_PSWPOUT]) - det_nz(v->r[C_ZSWPOUT]));
	bool s_dirty = dw >= 16 * MiB && !isnan(ifile) && dw >= 0.25 * ifile;
	bool s_eff = !isnan(eff) && eff < 0.5;
	bool s_stall = det_nz(v->r[C_ALLOCSTALL]) >= 1 || (psi && v->psi_some >= 0.05);
	bool s_io = !isnan(v->io_full) && v->io_full >= 0.10;

	double sorted = NAN;
	if (v->mglru) {
		o->level = mglru_level(v, dw, eff, &sorted);
		o->magnitude = v->is_cgroup ? dw : det_nz(v->r[C_PGREFILL]);
	} else if (!v->is_cgroup) {
		bool s_write = det_nz(fwrite) >= 256 * 1024;
		bool s_imm = det_nz(imm) >= 256 * 1024 && (isnan(imm_share) || imm_share >= 0.01);
		int conseq = s_dirty + s_eff + s_stall + s_io;
		if ((s_write || s_imm) && conseq >= 1) {
			bool crit = (s_stall && !isnan(eff) && eff < 0.3) || (psi && v->psi_some >= 0.25) ||
				    det_nz(fwrite) >= 4 * MiB;
			o->level = crit ? DL_CRITICAL : DL_WARNING;
		} else if (s_write || s_imm || (s_dirty && s_eff)) {
			o->level = DL_SUSTAIN;
		}
		o->magnitude = det_nz(fwrite) + det_nz(imm);
	} else {
		double file = det_nz(v->g[G_INACTIVE_FILE]) + det_nz(v->g[G_ACTIVE_FILE]);
		double cur = v->g[G_MEM_CURRENT];
		bool at_limit = !isnan(cur) && v->mem_limited && cur >= 0.9 * v->mem_ref;
		bool dirty = dw >= 16 * MiB && file > 0 && dw >= 0.1 * file;
		bool crowded = dirty && dw >= 0.25 * file;
		bool s_imm = det_nz(imm) >= 256 * 1024;	/* the host's, by dirty share */
		bool pain = s_eff || (psi && v->psi_some >= 0.05);
		/* Reclaim that meets a dirty file page tags it for immediate
		 * reclaim (mm/vmscan.c, shrink_folio_list): that counter is the
		 * proof. When it is known and ~0, a cgroup crowded with dirty or
		 * writeback pages at its limit is a writer flushing its own data
		 * (fsync) while reclaim takes the clean pages behind it — heavy
		 * writeback, no storm (real-fsyncbig). Only without the counter
		 * do dirty pages at the limit stand in for it. */
		bool blind = isnan(imm);
		if (pain && ((s_imm && (dirty || at_limit)) || (blind && crowded && at_limit)))
			o->level = (psi && v->psi_some >= 0.25) || (!isnan(eff) && eff < 0.2) ?
				   DL_CRITICAL : DL_WARNING;
		else if (s_imm || (dirty && at_limit))
			o->level = DL_SUSTAIN;
		o->magnitude = dw;
	}
	if (o->level == DL_CLEAR || !o->text)
		return;
	det_ev(o, "dirty_writeback_bytes", dw);
	det_ev(o, "inactive_file_bytes", ifile);
	det_ev(o, "reclaim_file_write_per_s", fwrite / v->page_size);
	det_ev(o, "nr_vmscan_immediate_reclaim_per_s", imm / v->page_size);
	det_ev(o, "pgrotated_per_s", v->r[C_PGROTATED] / v->page_size);
	det_ev(o, "reclaim_efficiency", eff);
	det_ev(o, "pgrefill_per_s", v->r[C_PGREFILL] / v->page_size);
	det_ev(o, "pgrefill_to_pgscan", sorted);
	det_ev(o, "allocstall_per_s", v->r[C_ALLOCSTALL]);
	det_ev(o, "psi_memory_some_pct", v->psi_some * 100);
	det_ev(o, "psi_io_full_pct", v->io_full * 100);
	char kb[640];
	kbug_verdict(KB_KSWAPD_WRITEBACK, &v->kernel, kb, sizeof(kb));
	snprintf(o->hint_buf, sizeof(o->hint_buf),
		 "the flushers fall behind reclaim: lower vm.dirty_background_ratio / dirty_background_bytes "
		 "so writeback starts earlier, or give the writer more memory%s; %s",
		 v->mglru ? " (multi-gen LRU: dirty folios are moved to younger generations, not "
			    "written by reclaim)" : "", kb);
	o->hint = o->hint_buf;
	summarize(v, o, det_nz(fwrite), imm, dw, eff, sorted);
}
