/* admit.h - what an ingest request may bring in besides its samples,
 * decided after its body parsed and before anything of it is stored:
 *
 *   1. every sample's host matches its token's host patterns (403 naming
 *      the host; token_scope.h);
 *   2. hosts that never posted before stay within the token's
 *      new-hosts-per-hour (429 with Retry-After; unlimited unless set);
 *   3. metric names new to the server (staged by the parse, dict.h) stay
 *      within --max-new-names-per-host and --max-new-names-per-token per
 *      hour and fit the dictionary (400 naming the budget); only then do
 *      they enter the dictionary and the samples get their real ids.
 *
 * A refused request leaves nothing behind: no name enters the dictionary
 * and no budget is spent. Budgets are counted in this server process's
 * memory (budget.h): servers behind a balancer count separately and a
 * restart forgets.
 *
 * Ownership: admit_new returns state the caller frees with admit_free.
 * Thread-safe. */
#ifndef VMSCOPE_ADMIT_H
#define VMSCOPE_ADMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dict.h"
#include "ingest.h"
#include "store.h"
#include "token_scope.h"

struct admit;

struct admit_limits {
	uint32_t new_names_per_host;	/* per hour; 0: unlimited */
	uint32_t new_names_per_token;
};

/* An answer for a refused request (ingest.c sends it). */
struct admit_refusal {
	unsigned status;	/* 400, 403, 429, 503 */
	int retry_after;	/* seconds, 429 and 503 */
	char error[400];
	char detail[200];
	char hint[240];
};

/* New hosts taken from a token's budget, given back by admit_refund when
 * the store then fails (the request is retried and would count them
 * twice). */
struct admit_taken {
	char key[TOKEN_NAME_MAX + 8];
	uint32_t n, per_hour;
};

/* NULL when out of memory. */
struct admit *admit_new(void);
void admit_free(struct admit *a);

/* Checks b against grant g as above. st answers which hosts posted before
 * (asked only for a token with a new-hosts budget). On success commits the
 * staged names of stage and maps b's samples to their real ids; returns 0
 * with *took filled. Otherwise returns -1 with *r filled, nothing
 * committed and nothing taken. */
int admit_batch(struct admit *a, const struct admit_limits *lim, struct store *st,
		const struct token_grant *g, struct ingest_batch *b, struct dict_stage *stage,
		struct admit_taken *took, struct admit_refusal *r);

/* The batch admitted with *took was not stored: gives back its new hosts. */
void admit_refund(struct admit *a, const struct admit_taken *took);

/* The batch admitted with *took was stored: its hosts are known from now
 * on (no database look-up for them again). */
void admit_stored(struct admit *a, const struct token_grant *g, const struct ingest_batch *b);

/* Whether a sample of host refused for its timestamp may be recorded (the
 * host is then listed with its clock and may get a clock_skew alert): only
 * for a host the token may speak for, and within its new-hosts budget (a
 * host listed this way counts as one it brought in). */
bool admit_may_record(struct admit *a, struct store *st, const struct token_grant *g, const char *host);

/* The refusal of a body whose parse ran out of room in stage (more new
 * names than the dictionary has room for) for sample idx: names the token
 * budget when the count is over it, else the dictionary. */
void admit_refuse_overflow(const struct admit_limits *lim, const struct token_grant *g,
			   const struct dict_stage *stage, const char *parse_error,
			   struct admit_refusal *r);

#endif
