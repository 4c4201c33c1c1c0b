/* ratelimit.h - a token bucket per ingest token (--rate-limit N/s): each
 * bucket holds up to max(N, 1) requests and refills at N per second.
 * Thread-safe. */
#ifndef VMSCOPE_RATELIMIT_H
#define VMSCOPE_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ratelimit;

/* nkeys buckets (one per token; key 0 serves insecure mode). rate <= 0
 * means no limit. Returns NULL when out of memory. */
struct ratelimit *ratelimit_new(double rate, size_t nkeys);
void ratelimit_free(struct ratelimit *rl);

/* Takes one request from bucket key at now_ms. Returns true when allowed;
 * otherwise false with *retry_after_s set (whole seconds, at least 1). */
bool ratelimit_take(struct ratelimit *rl, size_t key, int64_t now_ms, int *retry_after_s);

#endif
