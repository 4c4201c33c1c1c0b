/* worker.h - a server thread that sleeps between rounds of work and stops
 * promptly when asked: the background jobs (background.c, cgroup_rollup.c)
 * share it. The owner embeds a struct worker (so the thread can use it
 * from its first instruction) and calls worker_stop before freeing it. */
#ifndef VMSCOPE_WORKER_H
#define VMSCOPE_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct worker {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;	/* on CLOCK_MONOTONIC: wall-clock steps don't stretch naps */
	bool stopping;
};

/* Starts fn(arg) on a new thread. Returns 0, or -1 (nothing to stop) when
 * the thread could not be created. */
int worker_start(struct worker *w, void *(*fn)(void *), void *arg);

/* Sleeps up to ms or until worker_stop; returns true when stopping. */
bool worker_nap(struct worker *w, int64_t ms);

/* Wakes the thread, waits for fn to return and releases the worker. */
void worker_stop(struct worker *w);

#endif
