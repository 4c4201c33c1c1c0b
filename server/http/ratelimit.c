/* ratelimit.c - token buckets (see ratelimit.h). */
#include "ratelimit.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

struct bucket {
	double level;
	int64_t last_ms;
};

struct ratelimit {
	double rate, burst;
	size_t n;
	pthread_mutex_t mu;
	struct bucket *b;
};

struct ratelimit *ratelimit_new(double rate, size_t nkeys)
{
	struct ratelimit *rl = calloc(1, sizeof(*rl));

	if (!rl)
		return NULL;
	rl->rate = rate;
	rl->burst = rate < 1 ? 1 : rate;
	rl->n = nkeys ? nkeys : 1;
	rl->b = calloc(rl->n, sizeof(*rl->b));
	if (!rl->b) {
		free(rl);
		return NULL;
	}
	for (size_t i = 0; i < rl->n; i++) {
		rl->b[i].level = rl->burst;
		rl->b[i].last_ms = INT64_MIN;
	}
	pthread_mutex_init(&rl->mu, NULL);
	return rl;
}

void ratelimit_free(struct ratelimit *rl)
{
	if (!rl)
		return;
	pthread_mutex_destroy(&rl->mu);
	free(rl->b);
	free(rl);
}

bool ratelimit_take(struct ratelimit *rl, size_t key, int64_t now_ms, int *retry_after_s)
{
	bool ok;

	if (!rl || rl->rate <= 0)
		return true;
	if (key >= rl->n)
		key = 0;
	pthread_mutex_lock(&rl->mu);
	struct bucket *b = &rl->b[key];
	if (b->last_ms != INT64_MIN && now_ms > b->last_ms) {
		b->level += (double)(now_ms - b->last_ms) / 1000.0 * rl->rate;
		if (b->level > rl->burst)
			b->level = rl->burst;
	}
	if (b->last_ms == INT64_MIN || now_ms > b->last_ms)
		b->last_ms = now_ms;
	ok = b->level >= 1.0;
	if (ok) {
		b->level -= 1.0;
	} else {
		double wait = (1.0 - b->level) / rl->rate;
		*retry_after_s = (int)ceil(wait) < 1 ? 1 : (int)ceil(wait);
	}
	pthread_mutex_unlock(&rl->mu);
	return ok;
}
