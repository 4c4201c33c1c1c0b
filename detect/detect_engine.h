/* detect_engine.h - the detector engine core: pure C over struct sample, no
 * database, so that the server (detect.c) and bin/vmscope-replay run exactly
 * the same logic.
 *
 * One struct det_host holds everything the detectors remember about a host:
 * the previous sample's counters per scope (host and each memory cgroup),
 * the expected interval and boot_id, and per scope and kind the hysteresis
 * state (pending / open, hit counts, the id of the open alert). Feeding a
 * sample turns detector levels into alert actions through a callback:
 *   open     on a hit, after critical evidence held for DET_CRIT_HITS
 *            consecutive samples spanning 2/3 of the hold (20 s), or
 *            warning evidence for DET_MIN_HITS samples spanning the hold
 *            (DET_MIN_SPAN_MS, 30 s); a tenth of the interval is forgiven
 *            for timestamp jitter (oom_kill: at once)
 *   update   severity escalated warning -> critical (the critical rule above)
 *   resolve  after the signature was clear for DET_CLEAR_HITS samples
 *            spanning DET_CLEAR_SPAN_MS, or at a reboot, or when a cgroup is
 *            gone for DET_CGROUP_GONE_MS
 * Alert times are sample times (CONTRACT.md §3): replay = live.
 *
 * The state serialises to a compact versioned byte string (det_host_save /
 * det_host_load) that the server keeps in the detector_state table, so a
 * restart loses nothing and an ongoing condition is not re-alerted.
 *
 * Ownership: det_host_new / det_host_load return a host the caller frees
 * with det_host_free. A det_host is not thread-safe; the server serialises
 * a host by a row lock.
 */
#ifndef VMSCOPE_DETECT_ENGINE_H
#define VMSCOPE_DETECT_ENGINE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

#define DET_MIN_HITS 2		/* warning: hits spanning the hold (DET_MIN_SPAN_MS) */
#define DET_MIN_SPAN_MS 30000
#define DET_CRIT_HITS 2		/* critical: consecutive critical samples spanning 2/3 of the hold */
#define DET_PENDING_MISS_MS 20000	/* a pending signature is dropped after 2 misses and this long */
#define DET_CLEAR_HITS 3
#define DET_CLEAR_SPAN_MS 60000
#define DET_OOM_QUIET_MS 300000
#define DET_CGROUP_GONE_MS 60000
#define DET_CGROUP_FORGET_MS 600000
#define DET_MAX_SCOPES (SAMPLE_MAX_CGROUPS + 1)
#define DET_BATCH_WINDOW_MS 10000	/* over-swap is also measured over this window when the
					 * host samples at most every half of it (reclaim batches) */

enum det_action_type { DA_OPEN, DA_UPDATE, DA_RESOLVE };

/* One change to an alert. Strings and evidence are borrowed for the call. */
struct det_action {
	enum det_action_type type;
	int64_t alert_id;	/* DA_OPEN: the callback stores the new id here */
	const char *host;
	const char *cgroup;	/* NULL: host-wide */
	const char *kind;
	const char *severity;	/* "warning" / "critical" */
	int level;		/* the detector level (detect_kinds.h) of this sample, after
				 * de-duplication and overrides: DA_OPEN and DA_UPDATE
				 * happen only on a hit (warning or critical) */
	int64_t started_ms, opened_ms;
	int64_t at_ms;		/* the sample time of this action (ended_at for DA_RESOLVE) */
	const char *summary;	/* DA_OPEN, DA_UPDATE */
	json_t *evidence;	/* DA_OPEN, DA_UPDATE */
};

/* Returns 0, or -1 to abort the feed (the caller then discards the host
 * state, which is why the server rolls the transaction back). */
typedef int (*det_emit_fn)(void *ctx, struct det_action *a);

struct det_host;

/* NULL when out of memory. */
struct det_host *det_host_new(const char *host);
void det_host_free(struct det_host *h);

/* Feeds one sample of h's host. Samples at or before the last fed ts are
 * skipped (returns 0): they are stored but never reopen alerts. Returns 1
 * when fed, -1 when out of memory or emit failed (h is then inconsistent:
 * free it and reload). */
int det_host_feed(struct det_host *h, const struct sample *s, det_emit_fn emit, void *ctx);

/* As det_host_feed, with the operator's overrides (overrides.h; borrowed
 * for the call, NULL: none) resolved for this host and the sample's labels
 * and applied to the detector levels and the opening span. */
struct ovr_set;
int det_host_feed_tuned(struct det_host *h, const struct sample *s, const struct ovr_set *ovr,
			det_emit_fn emit, void *ctx);

/* Re-anchors h's time line at ts, for a state that a sample from the
 * future (a wrong clock) put ahead of the samples that keep arriving: the
 * next sample is fed as after a gap (it starts a new series of rates, no
 * alert is resolved), pending detections restart, and times of h later
 * than ts are brought back to ts. The caller decides when (the server: a
 * state ahead of its own clock, CONTRACT.md §2). */
void det_host_reanchor(struct det_host *h, int64_t ts);

/* The host name (borrowed). */
const char *det_host_name(const struct det_host *h);

/* Ts (ms) of the last sample fed, 0 when none. */
int64_t det_host_last_ts(const struct det_host *h);
/* The expected sampling interval in ms (from interval_s, else measured), 0 unknown. */
int64_t det_host_interval_ms(const struct det_host *h);

/* Serialises h into a malloc'd buffer the caller frees. Returns 0 or -1
 * (out of memory). */
int det_host_save(const struct det_host *h, unsigned char **buf, size_t *len);

/* The same state in the previous formats (version 1, fixed-width numbers;
 * version 2, without the critical run's start; version 3, without the
 * batch window's snapshots), which det_host_load still reads: for the
 * tests that check they carry the same state. */
int det_host_save_v1(const struct det_host *h, unsigned char **buf, size_t *len);
int det_host_save_v2(const struct det_host *h, unsigned char **buf, size_t *len);
int det_host_save_v3(const struct det_host *h, unsigned char **buf, size_t *len);

/* Rebuilds a host from det_host_save (or det_host_save_v1) output. An empty buffer gives a fresh
 * host. Returns NULL when out of memory or the buffer is not a state of a
 * version this build reads (err says which); the caller then starts fresh. */
struct det_host *det_host_load(const char *host, const unsigned char *buf, size_t len,
			       char *err, size_t errlen);

#endif
