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
 */
#include "detect_kinds.h"

#include <math.h>
#include <stdio.h>

static void summarize(const struct dview *v, struct det_result *o, double fwrite, double imm,
		      double dw, double eff)
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

void detect_writeback_storm(const struct dview *v, struct det_result *o)
{
	double scan = v->r[C_SCAN_ALL], steal = v->r[C_STEAL_ALL];
	double eff = (!isnan(scan) && !isnan(steal) && scan >= 1 * MiB) ? fmin(1.0, steal / scan) : NAN;
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

	if (!v->is_cgroup) {
		bool s_write = det_nz(fwrite) >= 256 * 1024;
		bool s_imm = det_nz(imm) >= 256 * 1024;
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
		double cur = v->g[G_MEM_CURRENT], max = v->g[G_MEM_MAX];
		bool at_limit = !isnan(cur) && !isnan(max) && max > 0 && cur >= 0.9 * max;
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
	if (o->level == DL_CLEAR)
		return;
	det_ev(o, "dirty_writeback_bytes", dw);
	det_ev(o, "inactive_file_bytes", ifile);
	det_ev(o, "reclaim_file_write_per_s", fwrite / v->page_size);
	det_ev(o, "nr_vmscan_immediate_reclaim_per_s", imm / v->page_size);
	det_ev(o, "pgrotated_per_s", v->r[C_PGROTATED] / v->page_size);
	det_ev(o, "reclaim_efficiency", eff);
	det_ev(o, "allocstall_per_s", v->r[C_ALLOCSTALL]);
	det_ev(o, "psi_memory_some_pct", v->psi_some * 100);
	det_ev(o, "psi_io_full_pct", v->io_full * 100);
	o->hint = "the flushers fall behind reclaim: lower vm.dirty_background_ratio / dirty_bytes so "
		  "writeback starts earlier, give the writer more memory, or use a kernel that keeps "
		  "dirty pages out of reclaim's way (4.11+, 'fix kswapd writeback regression')";
	summarize(v, o, det_nz(fwrite), imm, dw, eff);
}
