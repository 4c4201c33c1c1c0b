/* conn_watch.c - header deadlines for connections (see conn_watch.h).
 *
 * One list of watched connections under a mutex. libmicrohttpd reports
 * MHD_CONNECTION_NOTIFY_CLOSED before it closes the socket, and the entry
 * leaves the list under the mutex then, so the sweeper never shuts down a
 * descriptor that was closed (and perhaps reused by a new connection). */
#include "conn_watch.h"
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

struct conn_watch;

struct watched {
	struct conn_watch *w;
	int fd;
	int64_t deadline_us; /* 0: a request is in progress, or already shut down */
	struct watched *prev, *next;
};

struct conn_watch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	int stop;
	int64_t limit_us;
	struct watched list; /* sentinel of a circular list */
	unsigned long closed;
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Every half second: shut down the connections past their deadline. */
static void *sweeper(void *arg)
{
	struct conn_watch *w = arg;

	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 500000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->cv, &w->mu, &until);
		int64_t now = now_us();
		for (struct watched *e = w->list.next; e != &w->list; e = e->next) {
			if (e->deadline_us == 0 || now < e->deadline_us)
				continue;
			e->deadline_us = 0;
			if (shutdown(e->fd, SHUT_RDWR) == 0) {
				w->closed++;
				log_debug("closed a connection that sent no complete request header "
					  "within the timeout");
			}
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct conn_watch *conn_watch_start(unsigned limit_s)
{
	struct conn_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->limit_us = (int64_t)limit_s * 1000000;
	w->list.next = w->list.prev = &w->list;
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
	/* MHD_stop_daemon reported every connection closed: normally empty */
	while (w->list.next != &w->list) {
		struct watched *e = w->list.next;
		w->list.next = e->next;
		free(e);
	}
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

void conn_watch_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code)
{
	struct conn_watch *w = cls;
	struct watched *e;

	if (!w) {
		*socket_context = NULL;
		return;
	}
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = NULL;
		if (!ci || !(e = calloc(1, sizeof(*e))))
			return; /* unwatched: only the idle timeout applies */
		e->w = w;
		e->fd = ci->connect_fd;
		pthread_mutex_lock(&w->mu);
		e->deadline_us = now_us() + w->limit_us;
		e->next = w->list.next;
		e->prev = &w->list;
		w->list.next->prev = e;
		w->list.next = e;
		pthread_mutex_unlock(&w->mu);
		*socket_context = e;
		return;
	}
	e = *socket_context;
	if (!e)
		return;
	pthread_mutex_lock(&w->mu);
	e->prev->next = e->next;
	e->next->prev = e->prev;
	pthread_mutex_unlock(&w->mu);
	free(e);
	*socket_context = NULL;
}

/* Sets the deadline of c's entry (called on c's own libmicrohttpd thread,
 * so the entry cannot be freed meanwhile). */
static void set_deadline(struct MHD_Connection *c, int64_t after_us)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct watched *e;

	if (!ci || !(e = ci->socket_context))
		return;
	pthread_mutex_lock(&e->w->mu);
	e->deadline_us = after_us < 0 ? 0 : now_us() + e->w->limit_us;
	pthread_mutex_unlock(&e->w->mu);
}

void conn_watch_request_begins(struct MHD_Connection *c)
{
	set_deadline(c, -1);
}

void conn_watch_request_ends(struct MHD_Connection *c)
{
	set_deadline(c, 0);
}

unsigned long conn_watch_closed(const struct conn_watch *w)
{
	return w ? w->closed : 0;
}
