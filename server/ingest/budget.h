/* budget.h - hourly allowances per key, kept in the server's memory: how
 * many new metric names a host or a token, or new hosts a token, may bring
 * in per hour (ingest.c). Each key has a leaky bucket: what was taken
 * drains at the key's allowance per hour, and a take that would overflow
 * the allowance is refused, so a key may take its whole allowance at once
 * and then again as it drains.
 *
 * Per server process: each server behind a balancer counts on its own, and
 * a restart forgets. A key whose bucket has drained is dropped, so the
 * table holds only keys that took something within the last hour.
 *
 * Ownership: budget_new returns a table the caller frees with budget_free.
 * Thread-safe (one mutex; takes are rare: only a request that brings
 * something new asks). */
#ifndef VMSCOPE_BUDGET_H
#define VMSCOPE_BUDGET_H

#include <stddef.h>
#include <stdint.h>

struct budget;

/* One thing a request asks of the budget. */
struct budget_ask {
	const char *key;	/* NUL-terminated, copied when recorded */
	uint32_t n;		/* units wanted */
	uint32_t per_hour;	/* the key's allowance; 0: unlimited (always granted, not recorded) */
};

/* NULL when out of memory. */
struct budget *budget_new(void);
void budget_free(struct budget *b);

/* Takes every ask of asks[0..n) or none of them. Returns -1 when all were
 * granted, else the index of the first ask that does not fit (nothing is
 * taken then). Out of memory counts as not fitting. now_ms is monotonic. */
long budget_take(struct budget *b, const struct budget_ask *asks, size_t n, int64_t now_ms);

/* Gives back what a budget_take of the same asks took (a request refused
 * afterwards for another reason). */
void budget_give(struct budget *b, const struct budget_ask *asks, size_t n, int64_t now_ms);

/* Keys recorded (for tests). */
size_t budget_keys(struct budget *b);

#endif
