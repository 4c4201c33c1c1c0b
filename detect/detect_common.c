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
