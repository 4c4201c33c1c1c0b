/* worker.c - see worker.h. */
#include "worker.h"

#include <time.h>

int worker_start(struct worker *w, void *(*fn)(void *), void *arg)
{
	pthread_condattr_t ca;

	w->stopping = false;
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&w->thread, NULL, fn, arg) != 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->mu);
		return -1;
	}
	return 0;
}

bool worker_nap(struct worker *w, int64_t ms)
{
	struct timespec until;
	bool stop;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->mu);
	while (!w->stopping && pthread_cond_timedwait(&w->cond, &w->mu, &until) == 0)
		;
	stop = w->stopping;
	pthread_mutex_unlock(&w->mu);
	return stop;
}

void worker_stop(struct worker *w)
{
	pthread_mutex_lock(&w->mu);
	w->stopping = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->mu);
}
