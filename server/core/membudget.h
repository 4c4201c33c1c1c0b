/* membudget.h - one process-wide budget of bytes that requests may hold at
 * once (bodies being received, inflated gzip output, the parse of a body).
 *
 * Why: --max-body bounds one request, but a thousand connections each
 * uploading a body just under the limit, or a few bodies built to make the
 * JSON parser allocate ~20 bytes per byte of input (an array of one-digit
 * numbers), would otherwise take gigabytes. With a budget the server's
 * memory stays bounded by roughly budget + a constant; a request that finds
 * the budget spent is answered 503 with Retry-After, which agents retry.
 *
 * Thread-safe (C11 atomics). A budget is a plain struct owned by whoever
 * declares it (the app); nothing here allocates. */
#ifndef VMSCOPE_MEMBUDGET_H
#define VMSCOPE_MEMBUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct membudget {
	atomic_size_t used;
	size_t limit;		/* 0: unlimited */
	size_t lone;		/* the most one request alone may hold (membudget_set_lone) */
	atomic_size_t refused;	/* takes that failed, for /metrics */
};

void membudget_init(struct membudget *mb, size_t limit);

/* The most one request alone may come to hold (the server: a body of
 * --max-body and its parse). Small holders' room is counted past the
 * larger of it and the limit, so that one such request cannot shut them
 * out. 0 (the default): the limit. */
void membudget_set_lone(struct membudget *mb, size_t lone);

/* Reserves n more bytes for a holder that has `held` bytes reserved
 * already. True when used + n fits the limit; when the holder's own bytes
 * are all that is reserved (so that one request larger than the whole
 * budget still proceeds alone instead of never); or when the holder stays
 * small (held + n at most limit / 64: an agent's sample) and used + n fits
 * a quarter of the limit past the larger of the limit and the lone
 * request's size, so that one large request holding all of the budget, or
 * more, cannot make every agent's sample wait behind it. Memory stays
 * bounded by that, plus one lone request when it is larger. A NULL budget
 * always succeeds. */
bool membudget_take(struct membudget *mb, size_t n, size_t held);

/* membudget_take with another bound on what counts as small (small_max
 * bytes held after the take, instead of limit / 64): a body still
 * arriving passes limit / 1024, so that uploads stalled on purpose cannot
 * fill the small requests' room cheaply. */
bool membudget_take_small(struct membudget *mb, size_t n, size_t held, size_t small_max);

/* Reserves n more bytes whatever the limit: for memory a holder already
 * has under another reservation it is about to give back (a body's parsed
 * samples, before the body goes). */
void membudget_force(struct membudget *mb, size_t n);

/* Returns n bytes taken before (NULL: nothing). */
void membudget_give(struct membudget *mb, size_t n);

size_t membudget_used(const struct membudget *mb);

#endif
