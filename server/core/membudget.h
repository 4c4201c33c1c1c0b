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
	atomic_size_t refused;	/* takes that failed, for /metrics */
};

void membudget_init(struct membudget *mb, size_t limit);

/* Reserves n more bytes for a holder that has `held` bytes reserved
 * already. True when used + n fits the limit, or when the holder's own
 * bytes are all that is reserved (so that one request larger than the
 * whole budget still proceeds alone instead of never). A NULL budget
 * always succeeds. */
bool membudget_take(struct membudget *mb, size_t n, size_t held);

/* Returns n bytes taken before (NULL: nothing). */
void membudget_give(struct membudget *mb, size_t n);

size_t membudget_used(const struct membudget *mb);

#endif
