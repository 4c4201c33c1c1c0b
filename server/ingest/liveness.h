/* liveness.h - is a host still reporting, and is its clock right: the
 * rules behind host_silent and clock_skew (docs/reliability.md).
 *
 * Silence is judged by when samples arrive (the server's clock), not by
 * their timestamps: a host whose clock is behind posts samples that look
 * old and is not silent, a host whose clock is ahead goes silent as soon as
 * its samples stop. After the server starts, and after the database was
 * unavailable, no host is called silent for a grace period long enough for
 * every agent's backoff to bring its spool in.
 *
 * A host's clock offset is estimated from arrivals: the smallest
 * (arrival - ts) over a window of arrivals is the offset plus the shortest
 * delivery delay, which for an agent that is caught up is milliseconds.
 * A backlog delivered after an outage drains in well under a window, so it
 * does not count as skew. Samples refused for their timestamp (more than
 * 10 minutes ahead, or older than the retention) are recorded with the
 * host, which keeps such a host visible and raises clock_skew at once.
 *
 * Durations (struct liveness_cfg) are fixed for production; the
 * environment variable VMSCOPE_TEST_TIME_SCALE (a factor, e.g. 0.1) scales
 * them down for tests only, so that a 5-minute outage can be replayed in
 * 30 s with the same proportions. The agent reads the same variable for
 * its backoff.
 */
#ifndef VMSCOPE_LIVENESS_H
#define VMSCOPE_LIVENESS_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "liveness_store.h"

struct liveness_cfg {
	int64_t silent_min_ms;	/* 60 s: silent after max(3 x interval, this) without an arrival */
	int64_t grace_ms;	/* 90 s: after start or a database outage, nobody is silent */
	int64_t tick_ms;	/* 10 s: how often the server looks */
	int64_t window_ms;	/* 5 min: the clock offset's window of arrivals */
	int64_t skew_open_ms;	/* 60 s: an offset beyond this opens clock_skew (not scaled) */
	int64_t skew_clear_ms;	/* 30 s: an open clock_skew resolves below this (not scaled) */
	int64_t skew_hold_ms;	/* 2 min: ... and after this long with no skewed arrival or refusal */
};

/* The durations, scaled by VMSCOPE_TEST_TIME_SCALE when set (read once). */
const struct liveness_cfg *liveness_cfg(void);

/* Scales the defaults by factor (> 0; tests). */
void liveness_cfg_make(struct liveness_cfg *c, double factor);

/* The offset window of a host sampling every interval_ms: the configured
 * one, or three intervals of a host that samples rarely (else no window
 * would hold two arrivals). */
int64_t liveness_window(int64_t interval_ms);

/* One arrival at now_ms whose newest sample has ts newest_ms: the window,
 * the latest lag, and the time of the latest skewed arrival (a lag of
 * 30 s or more either way). */
void host_lag_observe(struct host_lag *l, int64_t now_ms, int64_t newest_ms, int64_t window_ms);

/* The offset estimate (server clock minus host clock, ms; > 0: the host is
 * behind) from the last complete window, when it is current: true and
 * *offset_ms set, false when unknown (no complete window yet, or no
 * arrival for a window). */
bool host_lag_offset(const struct host_lag *l, int64_t now_ms, int64_t window_ms, int64_t *offset_ms);

enum clock_verdict {
	CLOCK_OK,		/* resolve an open clock_skew */
	CLOCK_KEEP,		/* leave things as they are (unknown, or inside the hysteresis) */
	CLOCK_BEHIND,		/* samples accepted, the clock behind by *amount_ms */
	CLOCK_AHEAD,		/* samples accepted, the clock ahead by *amount_ms */
	CLOCK_REFUSED_AHEAD,	/* samples refused: more than 10 minutes ahead */
	CLOCK_REFUSED_OLD,	/* samples refused: older than the retention */
};

/* The verdict for one host at now_ms; *amount_ms the offset it names
 * (positive). Samples count as refused while the last refusal is newer
 * than the last stored sample and within the silence threshold. An open
 * alert resolves when the latest arrival's lag is under 30 s and no
 * skewed arrival or refusal came for skew_hold_ms; a critical one stays
 * critical for skew_hold_ms after the last refusal. An "ahead" alert
 * opens only while the latest arrival is still ahead (a corrected clock
 * leaves an old window behind it). */
enum clock_verdict clock_judge(const struct clock_obs *o, int64_t now_ms, const struct liveness_cfg *cfg,
			       int64_t *amount_ms);

/* The silence threshold of a host sampling every interval_ms. */
int64_t liveness_silent_after(int64_t interval_ms, const struct liveness_cfg *cfg);

/* "2 h 5 min", "15 min 3 s", "42 s": a duration for summaries. */
void liveness_fmt_duration(int64_t ms, char *out, size_t outlen);

/* The tick (outside any transaction): opens host_silent for hosts not
 * heard from (only when judge_silence: the grace period is over), and
 * opens, updates or resolves clock_skew. Returns 0, or -1 with err. */
int liveness_tick(PGconn *c, int64_t now_ms, bool judge_silence, char *err, size_t errlen);

#endif
