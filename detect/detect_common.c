/* detect_common.c - kind names and the small formatting helpers shared by
 * the detectors (see detect_kinds.h). */
#include "detect_kinds.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const kind_names[NKIND] = {
	[K_THRASH] = "thrash",
	[K_SWAP_IMBALANCE] = "swap_imbalance",
	[K_WRITEBACK_STORM] = "writeback_storm",
	[K_DIRECT_RECLAIM_STALL] = "direct_reclaim_stall",
	[K_OOM_KILL] = "oom_kill",
	[K_COMPACTION_STALL] = "compaction_stall",
};

const char *det_kind_name(enum det_kind k)
{
	return (unsigned)k < NKIND ? kind_names[k] : NULL;
}

int det_kind_from_name(const char *name)
{
	for (int k = 0; k < NKIND; k++)
		if (strcmp(kind_names[k], name) == 0)
			return k;
	return -1;
}

void det_result_init(struct det_result *r)
{
	r->level = DL_CLEAR;
	r->magnitude = 0;
	r->shape = r->hint = NULL;
	r->nev = 0;
	r->summary[0] = '\0';
	r->hint_buf[0] = '\0';
	r->text = true;
}

void det_ev(struct det_result *r, const char *key, double v)
{
	if (isnan(v) || isinf(v) || r->nev >= DET_MAX_EVIDENCE)
		return;
	r->ev[r->nev].key = key;
	r->ev[r->nev].v = v;
	r->nev++;
}

double det_nz(double x)
{
	return isnan(x) ? 0.0 : x;
}

const char *det_fmt_bytes(char *buf, int len, double b)
{
	if (isnan(b))
		snprintf(buf, (size_t)len, "?");
	else if (b >= GiB)
		snprintf(buf, (size_t)len, "%.1f GiB", b / GiB);
	else if (b >= MiB)
		snprintf(buf, (size_t)len, "%.0f MiB", b / MiB);
	else
		snprintf(buf, (size_t)len, "%.0f KiB", b / 1024.0);
	return buf;
}

const char *det_fmt_rate(char *buf, int len, double bps, double page_size)
{
	char b[32];

	snprintf(buf, (size_t)len, "%.0f pages/s (%s/s)", bps / page_size,
		 det_fmt_bytes(b, sizeof(b), bps));
	return buf;
}

/* Whose stall PSI shows (see detect_kinds.h). A refault stalls in memory
 * (psi_memstall_enter in folio_wait_bit_common, swap_read_folio) only when
 * the folio had PG_workingset at eviction, which workingset_restore counts;
 * reclaim making room for refaults stalls too, in proportion to how much of
 * the scope's memory they re-read. */
enum det_psi_owner det_refault_psi(const struct dview *v, double rf, double io_rf)
{
	if (isnan(v->psi_some) || isnan(rf))
		return PSI_NONE;
	double restore = v->r[C_RESTORE_ALL];
	bool restoring = !isnan(restore) && restore >= 0.05 * rf;
	bool cycling = !isnan(v->mem_ref) && v->mem_ref > 0 && det_nz(io_rf) >= 0.01 * v->mem_ref;
	if (cycling)
		return PSI_REFAULTS;
	if (v->psi_from_host)
		return PSI_NONE;	/* the machine's stall, not shown to be this cgroup's */
	if (!isnan(restore) && !restoring)
		return PSI_ELSEWHERE;
	return PSI_REFAULTS;
}
