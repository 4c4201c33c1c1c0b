/* conn_watch.c - request deadlines and the connection limit (see
 * conn_watch.h).
 *
 * One mutex guards everything. Waiting connections sit in one list in the
 * order they started waiting, so the oldest is at the head: the sweeper
 * shuts down from the head while deadlines have passed, and eviction takes
 * the head. A connection being served is off the list. libmicrohttpd
 * reports MHD_CONNECTION_NOTIFY_CLOSED before it closes the socket, and the
 * entry is freed under the mutex then, so nothing here ever shuts down a
 * descriptor that was closed (and perhaps reused by a new connection). */
#include "conn_watch.h"
#include "log.h"
#include "metrics.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

struct conn_watch;

struct watched {
	struct conn_watch *w;
	int fd;
	int64_t since_us;	/* waiting since (on the list) */
	bool closing;		/* shut down by us; libmicrohttpd will free it */
	struct watched *prev, *next;	/* the waiting list; self-linked when off it */
};

struct conn_watch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	int stop;
	int64_t limit_us;
	unsigned max;
	unsigned live;			/* connections not closing */
	struct watched waiting;		/* sentinel of the waiting list, oldest first */
	unsigned long timed_out, evicted;
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void unlink_entry(struct watched *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->prev = e->next = e;
}

/* Appends e (off the list) at the tail: it waits from now. Caller holds mu. */
static void wait_from_now(struct conn_watch *w, struct watched *e)
{
	e->since_us = now_us();
	e->prev = w->waiting.prev;
	e->next = &w->waiting;
	w->waiting.prev->next = e;
	w->waiting.prev = e;
}

/* Shuts e's socket down and takes it off the list. Caller holds mu. */
static void shut(struct conn_watch *w, struct watched *e)
{
	unlink_entry(e);
	e->closing = true;
	w->live--;
	shutdown(e->fd, SHUT_RDWR);
}

/* Every 200 ms: shut down the connections waiting past their deadline. */
static void *sweeper(void *arg)
{
	struct conn_watch *w = arg;

	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 200000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->cv, &w->mu, &until);
		int64_t now = now_us();
		while (w->waiting.next != &w->waiting && now - w->waiting.next->since_us >= w->limit_us) {
			shut(w, w->waiting.next);
			w->timed_out++;
			metrics_conn_timed_out();
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct conn_watch *conn_watch_start(unsigned limit_s, unsigned max)
{
	struct conn_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->limit_us = (int64_t)limit_s * 1000000;
	w->max = max;
	w->waiting.next = w->waiting.prev = &w->waiting;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->th, NULL, sweeper, w) != 0) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return NULL;
	}
	return w;
}

void conn_watch_stop(struct conn_watch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	/* MHD_stop_daemon reported every connection closed: nothing is left */
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

void conn_watch_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code)
{
	struct conn_watch *w = cls;
	struct watched *e;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = NULL;
		if (!ci || !(e = calloc(1, sizeof(*e)))) {
			/* cannot be watched or counted: not served either */
			if (ci)
				shutdown(ci->connect_fd, SHUT_RDWR);
			return;
		}
		e->w = w;
		e->fd = ci->connect_fd;
		pthread_mutex_lock(&w->mu);
		w->live++;
		wait_from_now(w, e);
		if (w->live > w->max) {
			/* the oldest waiting connection makes room; when every
			 * other one is being served that is the new one itself */
			struct watched *old = w->waiting.next;
			shut(w, old);
			w->evicted++;
			metrics_conn_evicted();
			if (old != e)
				log_debug("closed the connection waiting longest for a new one "
					  "(--max-connections %u)", w->max);
		}
		pthread_mutex_unlock(&w->mu);
		*socket_context = e;
		return;
	}
	e = *socket_context;
	if (!e)
		return;
	pthread_mutex_lock(&w->mu);
	if (!e->closing) {
		unlink_entry(e);
		w->live--;
	}
	pthread_mutex_unlock(&w->mu);
	free(e);
	*socket_context = NULL;
}

/* c's entry (called on c's own libmicrohttpd thread, so the entry cannot
 * be freed meanwhile), NULL when unwatched. */
static struct watched *entry_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void conn_watch_request_received(struct MHD_Connection *c)
{
	struct watched *e = entry_of(c);

	if (!e)
		return;
	pthread_mutex_lock(&e->w->mu);
	if (!e->closing)
		unlink_entry(e);
	pthread_mutex_unlock(&e->w->mu);
}

void conn_watch_request_ends(struct MHD_Connection *c)
{
	struct watched *e = entry_of(c);

	if (!e)
		return;
	pthread_mutex_lock(&e->w->mu);
	if (!e->closing) {
		unlink_entry(e);
		wait_from_now(e->w, e);
	}
	pthread_mutex_unlock(&e->w->mu);
}

unsigned long conn_watch_timed_out(const struct conn_watch *w)
{
	return w ? w->timed_out : 0;
}

unsigned long conn_watch_evicted(const struct conn_watch *w)
{
	return w ? w->evicted : 0;
}
