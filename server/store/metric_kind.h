/* metric_kind.h - whether a flattened metric name is a counter (served as a
 * per-second rate) or a gauge (served as stored), its unit, and its scale.
 *
 * The table follows the kernel's semantics (RECLAIM-NOTES.md): most vmstat
 * nr_* fields are gauges but nr_vmscan_write, nr_dirtied, nr_written,
 * nr_foll_pin_* ... only count up; every other vmstat field counts events;
 * meminfo, PSI averages, settings and meta are gauges; PSI totals are
 * counters; cgroup memory.stat sizes are gauges, its events counters. Pure
 * functions, thread-safe, cannot fail.
 */
#ifndef VMSCOPE_METRIC_KIND_H
#define VMSCOPE_METRIC_KIND_H

#include <stdbool.h>

enum metric_kind { METRIC_GAUGE = 0, METRIC_COUNTER = 1 };

/* cgroup: true for the cgroup-level names (stat.*, events.*, ...). */
enum metric_kind metric_kind(const char *name, bool cgroup);

/* "rate" or "gauge", the word the REST API uses. */
const char *metric_kind_word(enum metric_kind k);

/* The unit of what the series endpoint returns for the metric: for
 * counters the unit of the rate ("pages/s", "events/s", "us/s",
 * "bytes/s"), for gauges that of the value ("pages", "kB", "bytes", "%",
 * "" for plain numbers). Never NULL. */
const char *metric_unit(const char *name, bool cgroup);

/* What the stored integer is multiplied by for the API: 0.01 for PSI
 * averages (stored as centi-percent), 1 otherwise. */
double metric_scale(const char *name, bool cgroup);

#endif
