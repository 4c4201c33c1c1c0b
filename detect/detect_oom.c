/* detect_oom.c - the OOM killer ran: vmstat oom_kill (4.13+) at host level,
 * memory.events oom_kill (v2) for a cgroup. Every kill is critical; the
 * engine opens the alert on the first sample and resolves it after a quiet
 * period (a burst of kills is one alert). */
#include "detect_kinds.h"

#include <math.h>
#include <stdio.h>

void detect_oom_kill(const struct dview *v, struct det_result *o)
{
	double k = v->r[C_OOM_KILL];

	o->level = DL_CLEAR;
	if (isnan(k) || k <= 0)
		return;
	double n = round(k * v->dt);
	o->level = DL_CRITICAL;
	o->magnitude = n;
	if (!o->text)
		return;
	det_ev(o, "oom_kills", n);
	det_ev(o, "interval_s", v->dt);
	det_ev(o, "memory_current_bytes", v->g[G_MEM_CURRENT]);
	det_ev(o, "memory_max_bytes", v->g[G_MEM_MAX]);
	det_ev(o, "mem_available_bytes", v->g[G_MEM_AVAIL]);
	o->hint = "a process was killed for memory: raise the limit or find the growth (memory.stat, "
		  "the kernel log names the victim)";
	snprintf(o->summary, DET_SUMMARY_MAX, "%.0f OOM kill%s in %.0f s", n, n == 1 ? "" : "s", v->dt);
}
