/* metric_kind.c - the counter/gauge table of metric names (see metric_kind.h). */
#include "metric_kind.h"

#include <stddef.h>
#include <string.h>

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

/* vmstat nr_* fields that only count up (events, not current values). */
static const char *const vmstat_nr_counters[] = {
	"nr_vmscan_write", "nr_vmscan_immediate_reclaim", "nr_dirtied", "nr_written",
	"nr_throttled_written", "nr_foll_pin_acquired", "nr_foll_pin_released",
	"nr_unaccepted_pages_accepted", NULL,
};

/* vmstat fields without the nr_ prefix that are current values. */
static const char *const vmstat_gauges[] = {
	"workingset_nodes", "nr_dirty_threshold", "nr_dirty_background_threshold",
	NULL,
};

/* vmstat event counters that count events rather than pages. */
static const char *const vmstat_event_prefixes[] = {
	"allocstall", "compact_stall", "compact_fail", "compact_success", "compact_daemon_wake",
	"pgfault", "pgmajfault", "pageoutrun", "kswapd_", "oom_kill", "drop_", "thp_",
	"htlb_buddy", "numa_hint", "numa_pte", "numa_huge", "balloon_", "direct_map_",
	"zone_reclaim_", "swap_ra", "pgreuse", "cow_ksm", NULL,
};

/* cgroup memory.stat event counters (everything else there is a size). */
static const char *const cgstat_counter_prefixes[] = {
	"pgfault", "pgmajfault", "workingset_refault", "workingset_activate", "workingset_restore",
	"workingset_nodereclaim", "pgscan", "pgsteal", "pgactivate", "pgdeactivate", "pglazyfree",
	"pgrefill", "pgpgin", "pgpgout", "pgdemote", "pgpromote", "thp_", "zswpin", "zswpout",
	"zswpwb", "numa_", "pgrotated", "total_pgfault", "total_pgmajfault", "total_pgpgin",
	"total_pgpgout", "total_workingset_", NULL,
};

static bool starts_any(const char *s, const char *const *prefixes)
{
	for (size_t i = 0; prefixes[i]; i++)
		if (starts(s, prefixes[i]))
			return true;
	return false;
}

static enum metric_kind vmstat_kind(const char *k)
{
	if (in_list(k, vmstat_nr_counters))
		return METRIC_COUNTER;
	if (starts(k, "nr_") || in_list(k, vmstat_gauges))
		return METRIC_GAUGE;
	return METRIC_COUNTER;
}

enum metric_kind metric_kind(const char *name, bool cgroup)
{
	if (cgroup) {
		if (starts(name, "stat."))
			return starts_any(name + 5, cgstat_counter_prefixes) ? METRIC_COUNTER : METRIC_GAUGE;
		if (starts(name, "events."))
			return METRIC_COUNTER;
		if (starts(name, "psi."))
			return ends(name, ".total") ? METRIC_COUNTER : METRIC_GAUGE;
		return METRIC_GAUGE;
	}
	if (starts(name, "vmstat."))
		return vmstat_kind(name + 7);
	if (starts(name, "psi."))
		return ends(name, ".total") ? METRIC_COUNTER : METRIC_GAUGE;
	if (starts(name, "agent."))
		return METRIC_COUNTER;	/* the agent's own counters since it started */
	return METRIC_GAUGE;	/* meminfo, settings, meta */
}

const char *metric_kind_word(enum metric_kind k)
{
	return k == METRIC_COUNTER ? "rate" : "gauge";
}

const char *metric_unit(const char *name, bool cgroup)
{
	enum metric_kind k = metric_kind(name, cgroup);

	if (starts(name, "psi."))
		return k == METRIC_COUNTER ? "us/s" : "%";
	if (cgroup) {
		if (starts(name, "stat.")) {
			if (k == METRIC_GAUGE)
				return "bytes";
			return starts(name, "stat.pgfault") || starts(name, "stat.pgmajfault") ||
			       starts(name, "stat.total_pgfault") || starts(name, "stat.total_pgmajfault")
			       ? "events/s" : "pages/s";
		}
		if (starts(name, "events."))
			return "events/s";
		if (strcmp(name, "memory_current") == 0 || strcmp(name, "memory_max") == 0 ||
		    strcmp(name, "swap_current") == 0)
			return "bytes";
		if (starts(name, "settings.memory.swappiness"))
			return "";
		if (starts(name, "settings."))
			return "bytes";
		return "";
	}
	if (starts(name, "vmstat.")) {
		if (k == METRIC_GAUGE)
			return "pages";
		return starts_any(name + 7, vmstat_event_prefixes) ? "events/s" : "pages/s";
	}
	if (starts(name, "agent."))
		return "events/s";
	if (starts(name, "meminfo.")) {
		if (starts(name, "meminfo.HugePages_"))
			return "pages";
		return "kB";
	}
	if (strcmp(name, "settings.vm.min_free_kbytes") == 0 || ends(name, "_kb"))
		return "kB";
	if (ends(name, "_bytes"))
		return "bytes";
	if (ends(name, "_ratio") || ends(name, "_percent"))
		return "%";
	if (strcmp(name, "meta.page_size") == 0)
		return "bytes";
	if (strcmp(name, "meta.interval_ms") == 0)
		return "ms";
	return "";
}

double metric_scale(const char *name, bool cgroup)
{
	(void)cgroup;
	if (starts(name, "psi.") && !ends(name, ".total"))
		return 0.01;
	return 1.0;
}
