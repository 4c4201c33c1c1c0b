/* rates.h - per-second rates between two consecutive samples of one host,
 * and the rules that say when a rate must not be computed at all.
 *
 * Counters are raw kernel values (CONTRACT.md §1). A rate is only meaningful
 * between two samples of the same boot, over a normal sampling interval, for
 * a counter that did not go backwards. Everything here is pure and cannot
 * fail: "no rate" is NAN.
 */
#ifndef VMSCOPE_RATES_H
#define VMSCOPE_RATES_H

#include <stdint.h>

/* A counter value that the sample did not carry. */
#define RATE_ABSENT INT64_MIN

/* Longest accepted gap between two samples before the interval counts as an
 * outage: max(3 x the expected interval, 60 s). A delta over a longer gap is
 * an average over an unknown outage, not evidence of a current condition. */
#define RATE_GAP_MIN_MS 60000

/* (cur - prev) / dt_s, or NAN when either value is absent, the counter went
 * backwards (restart, cgroup recreated) or dt_s <= 0. */
double rate_counter(int64_t prev, int64_t cur, double dt_s);

/* Share of wall time (0..1) from a PSI `total` in microseconds, or NAN. */
double rate_psi_share(int64_t prev_us, int64_t cur_us, double dt_s);

/* The longest gap in ms after which rates are not computed, given the
 * expected interval (0 when unknown). */
int64_t rate_gap_limit_ms(int64_t expected_interval_ms);

/* Folds a newly observed interval into the running estimate (ms). Used when
 * the sample carries no interval_s. */
int64_t rate_interval_estimate(int64_t est_ms, int64_t dt_ms);

/* A stable 64-bit hash of a boot_id (FNV-1a); 0 for NULL. A change between
 * two samples means the counters restarted. */
uint64_t rate_boot_hash(const char *boot_id);

#endif
