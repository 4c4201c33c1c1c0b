/* collect.h - reading one sample from /proc, /sys and the memory cgroups and
 * writing it as a contract JSON object (CONTRACT.md §1).
 *
 * The sample is streamed through a struct jw: nothing is built in memory,
 * read buffers are reused, so a sample costs a few file reads and no
 * allocation in the steady state. What the kernel does not have (no PSI, a
 * file that is empty, unreadable or gone) becomes an absent key, never null
 * or {}; the only nulls are the contract's: memory_max "max" and v1
 * swap_current without memsw accounting. Values above 2^63-1 are dropped and
 * logged (once per name at warn level, then at debug).
 */
#ifndef VMSCOPE_AGENT_COLLECT_H
#define VMSCOPE_AGENT_COLLECT_H

#include <stdint.h>

#include "cgroup.h"
#include "jsonw.h"
#include "options.h"
#include "procfs.h"

#define KEYSET_SLOTS 1024	/* distinct keys per map before dedup gives up */
#define LOGGED_SLOTS 256

struct keyslot {
	uint32_t gen, hash;
	const char *k;		/* borrowed from the read buffer during one map */
	uint32_t len;
};

/* Host-level files kept open between samples (live procfs/sysfs only). */
enum {
	HF_VMSTAT, HF_MEMINFO, HF_PSI, HF_SETTINGS = HF_PSI + 3, HF_MGLRU = HF_SETTINGS + 7,
	HF_V2CTL, HF_SWAPS, HF_ZSWAP, HF_N = HF_ZSWAP + 3
};

/* The agent's own counters since it started, reported in every sample it
 * posts as "agent": {"samples_taken": N, ...} (CONTRACT.md §1), so that a
 * sample dropped anywhere shows on the server too, with its reason. */
struct agent_counters {
	uint64_t taken;			/* samples read */
	uint64_t delivered;		/* answered 2xx */
	uint64_t refused;		/* answered 400/413 and dropped */
	uint64_t refused_clock;		/* of refused: for their timestamp */
	uint64_t dropped_spool_full;	/* oldest dropped: --spool-max-bytes or a full disk */
	uint64_t dropped_unspoolable;	/* neither spooled nor kept in memory (memq.h) */
	uint64_t kept_in_memory;	/* the spool could not take them (memq.h) */
	uint64_t spool_write_errors;	/* failed spool writes */
	uint64_t lost_spool_removed;	/* unsent in a spool directory removed under the agent */
	uint64_t duplicates;		/* of delivered: the server had their (host, ts) already */
};

struct collector {
	const struct agent_opts *o;	/* borrowed */
	const struct agent_counters *self;	/* borrowed; NULL: not reported (--stdout) */
	int rootfd;			/* "/" or --root DIR */
	long page_size;
	int64_t v1_nolimit;		/* PAGE_COUNTER_MAX x page size */
	struct rbuf rb, rb2;		/* reused read buffers */
	int hfd[HF_N];			/* kept host files, -1 when not */
	bool keep_proc, keep_sys;	/* /proc and /sys are the kernel's: keep files open */
	char boot_id[257], kernel[257];	/* read once: fixed while the agent runs; "" absent */
	int boot_id_len, kernel_len;
	struct cg_hiers hs;
	struct cg_walk wk;
	struct cg_select sel;
	bool v2_memory;			/* this sample: the v2 hierarchy has the memory
					 * controller (not so on a hybrid machine) */
	struct jw *w;			/* the writer of the sample in progress */
	int ncg;			/* cgroup entries written so far */
	struct keyslot keys[KEYSET_SLOTS];
	uint32_t keygen;
	uint32_t logged[LOGGED_SLOTS];	/* hashes of messages already at warn */
	unsigned long dropped;		/* values dropped in the last sample */
	unsigned long last_bad, last_truncated;
};

/* Opens the root, finds the cgroup hierarchies, reads the files that cannot
 * change while the machine runs (boot_id, kernel release). Unless --once,
 * up to o->keep_open kernel files stay open between samples (raising the
 * soft RLIMIT_NOFILE as far as needed and allowed). o is borrowed and must
 * outlive the collector. Returns 0, or -1 with a message logged (the root
 * directory cannot be opened, out of memory). */
int collector_init(struct collector *c, const struct agent_opts *o);

void collector_release(struct collector *c);

/* Writes one sample object to w (no trailing newline). Returns 0, or -1
 * when /proc/vmstat (required) cannot be read: then nothing was written.
 * A write error shows in w->err. */
int collector_sample(struct collector *c, struct jw *w);

#endif
