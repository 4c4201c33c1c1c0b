/* detect_kinds.h - the individual reclaim-pathology detectors.
 *
 * Each detector is a pure function of one scope's view for one sample
 * interval (rates from the previous sample, current gauges) and says how
 * strongly its signature is present:
 *   DL_CLEAR     not present
 *   DL_SUSTAIN   weaker than the entry threshold but enough to keep an open
 *                alert open (hysteresis)
 *   DL_WARNING / DL_CRITICAL  present, with that severity
 * plus the evidence numbers, a summary naming them and a fix hint. The
 * engine (detect_engine.c) turns levels into alerts with minimum durations,
 * resolve delays and parent/child de-duplication; the detectors never see
 * time or state, so the same interval always gives the same answer.
 *
 * Units in struct dview: rates are per second (pages converted to bytes
 * with the sample's page size, so thresholds hold on 64 KiB-page kernels),
 * sizes in bytes, PSI as a fraction of wall time. NAN means "not known on
 * this kernel / cgroup version"; every detector works without PSI and
 * without the 5.8+ anon/file scan split.
 */
#ifndef VMSCOPE_DETECT_KINDS_H
#define VMSCOPE_DETECT_KINDS_H

#include <stdbool.h>

#include "detect_feat.h"
#include "kernel_bugs.h"

enum det_level { DL_CLEAR = 0, DL_SUSTAIN = 1, DL_WARNING = 2, DL_CRITICAL = 3 };

enum det_kind {
	K_THRASH, K_SWAP_IMBALANCE, K_WRITEBACK_STORM, K_DIRECT_RECLAIM_STALL,
	K_OOM_KILL, K_COMPACTION_STALL,
	NKIND
};

struct dview {
	bool is_cgroup;
	double dt;			/* seconds since the previous sample */
	double page_size;		/* bytes */
	double r[NCTR];			/* per second; page counters in bytes/s; PSI as a share 0..1 */
	double g[NGAUGE];		/* bytes, or as in detect_feat.h */
	double mem_ref;			/* the scope's memory: MemTotal, or the cgroup's limit */
	double swap_free;		/* bytes of swap this scope could still use (NAN unknown) */
	double swappiness;		/* effective, 60 when the sample does not say */
	bool swappiness_known;
	double psi_some, psi_full;	/* memory stall share of the interval, NAN without PSI */
	bool psi_from_host;		/* a cgroup without PSI of its own borrows the host's */
	double io_full;			/* io full stall share */
	double global_share;		/* machine-wide share of reclaim scans (NAN unknown) */
	bool refault_attributed;	/* a cgroup without refault counters: the host's refaults
					 * by its share of the host's major faults */
	bool swapin_attributed;		/* a cgroup without swap-in counters: the host's swap-ins
					 * by its share of the host's major faults */
	const char *mem_ref_name;	/* what mem_ref is: "MemTotal", "memory.max",
					 * "memory.high", "memory.limit_in_bytes" */
	bool mem_limited;		/* mem_ref is the cgroup's own limit */
	struct kver kernel;		/* the sample's release; unknown: all 0 */
	bool mglru;			/* multi-gen LRU on (the sample's mglru flag) */
	bool swap_zram;			/* swap on zram (agent settings) */
	bool swap_zswap;		/* zswap enabled (settings) or its counters moving */
	bool swap_disk_only;		/* known: swap on disk only, no zram, zswap off */
	double ia_noswap;		/* host: bytes of inactive anon in cgroups that may not
					 * swap (memory.swap.max reached, v1 memsw = limit) */
};

#define DET_MAX_EVIDENCE 16
#define DET_SUMMARY_MAX 320
#define DET_HINT_MAX 1200

struct det_result {
	enum det_level level;
	double magnitude;		/* the main rate, to compare a parent with its children */
	const char *shape;		/* sub-signature, or NULL */
	const char *hint;		/* what an operator would change: static text or hint_buf */
	int nev;
	struct { const char *key; double v; } ev[DET_MAX_EVIDENCE];
	char summary[DET_SUMMARY_MAX];
	char hint_buf[DET_HINT_MAX];	/* a hint built for this sample (kernel-aware) */
	bool text;			/* fill evidence, summary and hint (the level alone
					 * when false: the engine's pass over every scope) */
};

/* Empties r (level clear, no evidence). Cannot fail. */
void det_result_init(struct det_result *r);

typedef void (*det_fn)(const struct dview *v, struct det_result *out);

void detect_thrash(const struct dview *v, struct det_result *out);
void detect_swap_imbalance(const struct dview *v, struct det_result *out);
/* swap_imbalance's over_swap shape measured over a batch window
 * (detect_engine.c): win the whole window, older and newer its two parts
 * (rates only). Swap-out that came in one part alone is one reclaim batch,
 * not a rate: clear. */
void detect_over_swap_window(const struct dview *win, const struct dview *older, const struct dview *newer,
			     struct det_result *out);
void detect_writeback_storm(const struct dview *v, struct det_result *out);
void detect_direct_reclaim_stall(const struct dview *v, struct det_result *out);
void detect_oom_kill(const struct dview *v, struct det_result *out);
void detect_compaction_stall(const struct dview *v, struct det_result *out);

/* The contract name of a kind ("thrash", ...); NULL for an unknown one. */
const char *det_kind_name(enum det_kind k);
/* Reverse lookup; -1 when unknown. */
int det_kind_from_name(const char *name);

/* Whether a scope's memory stall can be laid on refaults of rf bytes/s
 * (io_rf of them read from disk rather than decompressed):
 *   PSI_REFAULTS   yes: working-set refaults (workingset_restore >= 5 %), or
 *                  refaults re-reading >= 1 % of the scope's memory a second
 *                  (reclaim to make room for them stalls)
 *   PSI_ELSEWHERE  the scope's own PSI, with refaults that the kernel says
 *                  did not stall (restore ~0) and re-read a negligible share
 *                  of memory: the stall is something else's (direct
 *                  compaction, writeback, another cgroup)
 *   PSI_NONE       no PSI, or host PSI borrowed by a cgroup whose refaults
 *                  do not show it is this cgroup's: judge as without PSI */
enum det_psi_owner { PSI_NONE, PSI_REFAULTS, PSI_ELSEWHERE };
enum det_psi_owner det_refault_psi(const struct dview *v, double rf, double io_rf);

/* Helpers shared by the detectors (detect_common.c). */
void det_ev(struct det_result *r, const char *key, double v);	/* skips NAN */
double det_nz(double x);	/* NAN -> 0 */
/* Human size: "1.9 GiB", "512 MiB", "64 KiB" into buf. */
const char *det_fmt_bytes(char *buf, int len, double bytes);
/* Human rate of bytes as pages of the page size: "4100 pages/s (16 MiB/s)". */
const char *det_fmt_rate(char *buf, int len, double bytes_per_s, double page_size);

#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * MiB)

#endif
