/* detect_feat.h - the numbers the detectors look at, taken from one sample
 * scope (the host, or one memory cgroup), independent of kernel version and
 * cgroup version.
 *
 * Why: counter names changed across kernels (per-zone names before 4.8,
 * workingset_refault without the _file/_anon split before 5.9, no
 * pgscan_anon/file before 5.8) and differ between /proc/vmstat, cgroup v1
 * and v2 memory.stat. feat_extract_* maps each to one fixed slot so that
 * the detectors never see a name. Counters keep their raw value (for rates
 * against the next sample); gauges are converted to bytes.
 */
#ifndef VMSCOPE_DETECT_FEAT_H
#define VMSCOPE_DETECT_FEAT_H

#include <stdbool.h>
#include <stdint.h>

#include "sample.h"

/* Cumulative counters, in pages or events (PSI in microseconds). */
enum feat_ctr {
	C_REFAULT_FILE, C_REFAULT_ANON, C_REFAULT_ALL,
	C_ACTIVATE_FILE, C_ACTIVATE_ALL, C_RESTORE_ALL,
	C_SCAN_ANON, C_SCAN_FILE, C_SCAN_ALL, C_STEAL_ALL,
	C_SCAN_GLOBAL, C_STEAL_GLOBAL, C_SCAN_DIRECT, C_STEAL_DIRECT,
	C_ALLOCSTALL, C_PGREFILL, C_VMSCAN_WRITE, C_IMMEDIATE, C_PGROTATED,
	C_LAZYFREE, C_LAZYFREED, C_PSWPIN, C_PSWPOUT, C_ZSWPOUT,
	C_OOM_KILL, C_MAJFAULT, C_COMPACT_STALL, C_COMPACT_FAIL,
	C_PSI_MEM_SOME, C_PSI_MEM_FULL, C_PSI_IO_SOME, C_PSI_IO_FULL,
	C_EV_HIGH, C_EV_MAX,
	/* appended after version 2 of the detector state: slots keep their
	 * numbers in a saved state's bitmap, so new ones only go at the end */
	C_SWAP_USED,	/* a gauge kept as the previous value for its growth: bytes of
			 * swap in use (host SwapTotal - SwapFree, cgroup swap_current) */
	C_ANON_LRU,	/* the same for anon on the LRU (active + inactive anon), bytes */
	C_ZSWPIN, C_STEAL_ANON, C_STEAL_FILE,
	C_PGPGIN,	/* pages read in: host vmstat pgpgin (kB, converted), v1 memcg
			 * charge events (pages) */
	NCTR
};

/* Current values; sizes in bytes, swappiness 0..200, PSI avg10 as a
 * fraction 0..1. NAN when absent. */
enum feat_gauge {
	G_MEM_TOTAL, G_MEM_AVAIL, G_SWAP_TOTAL, G_SWAP_FREE, G_SWAPPINESS,
	G_INACTIVE_ANON, G_ACTIVE_ANON, G_INACTIVE_FILE, G_ACTIVE_FILE,
	G_DIRTY, G_WRITEBACK, G_MEM_CURRENT, G_MEM_MAX, G_SWAP_CURRENT, G_SWAP_MAX,
	G_PSI_MEM_SOME10, G_PSI_MEM_FULL10, G_PSI_IO_FULL10,
	G_MEM_HIGH,		/* cgroup v2 memory.high (settings), bytes */
	G_MGLRU,		/* 1 when the multi-gen LRU is on (the sample's mglru) */
	G_SWAP_DEVICES,		/* active swap areas (settings swap.devices): the agent said */
	G_SWAP_ZRAM,		/* bytes of swap on zram devices (settings swap.zram.size_kb) */
	G_SWAP_OTHER,		/* bytes of swap on partitions and files (settings) */
	G_ZSWAP_ON,		/* 1 when zswap is enabled (settings zswap.enabled) */
	G_MEMSW_LIMIT,		/* cgroup v1 hierarchical memory+swap limit, bytes */
	G_MEM_LIMIT_HIER,	/* cgroup v1 hierarchical memory limit, bytes */
	NGAUGE
};

struct feat {
	int64_t c[NCTR];	/* RATE_ABSENT when the sample lacks it */
	double g[NGAUGE];	/* NAN when absent */
	bool has_mem;		/* the scope carries memory statistics at all */
	bool has_psi;		/* the scope (or, for a cgroup, its v2 twin) has PSI */
	int version;		/* 0 the host, 1 or 2 a cgroup's hierarchy */
};

/* Fills f from the host level of s. Cannot fail. */
void feat_extract_host(struct feat *f, const struct sample *s);

/* Fills f from one cgroup entry; psi_twin (may be NULL) is the v2 entry of
 * the same path on a hybrid machine, whose memory.pressure stands in for
 * the v1 entry's missing PSI. Cannot fail. */
void feat_extract_cgroup(struct feat *f, const struct cgsample *cg, const struct cgsample *psi_twin);

/* The sample's interval_s in ms (0 when absent) and page size (4096 when
 * absent). Cannot fail. */
void feat_meta(const struct sample *s, int64_t *interval_ms, int64_t *page_size);

/* Names of the slots, for state dumps and tests. */
const char *feat_ctr_name(enum feat_ctr c);

#endif
