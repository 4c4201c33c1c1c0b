/* conn_watch.h - a deadline for each request and the connection limit,
 * enforced on libmicrohttpd's connections (slowloris and connection-flood
 * defence).
 *
 * Deadline: libmicrohttpd's MHD_OPTION_CONNECTION_TIMEOUT is an idle
 * timeout: a client that trickles one byte a second is never idle, so
 * --max-connections such clients would hold every slot for as long as
 * they like. Here a connection is "waiting" from its start, or from the
 * end of its previous request, until its next request has arrived whole
 * (headers and body); a connection still waiting after the limit is shut
 * down (shutdown(2) of its socket: libmicrohttpd then sees the end of the
 * stream and frees it as usual). While the server works on a request and
 * sends the answer the connection is not waiting and has no deadline.
 *
 * Limit: when a new connection would make more than max live
 * connections, the connection that has waited longest without completing
 * a request is shut down instead of refusing the new one: a flood of
 * idle or trickling sockets then costs its own oldest sockets, not the
 * agents' next connection. When every other connection is being served,
 * the new one is closed.
 *
 * Ownership: conn_watch_start returns a watcher with its own thread;
 * conn_watch_stop (after MHD_stop_daemon) joins and frees it. The other
 * calls come from libmicrohttpd's threads. */
#ifndef VMSCOPE_CONN_WATCH_H
#define VMSCOPE_CONN_WATCH_H

#include <microhttpd.h>

struct conn_watch;

/* Starts the sweeper thread; limit_s > 0, max > 0. NULL when out of
 * resources. */
struct conn_watch *conn_watch_start(unsigned limit_s, unsigned max);

/* Joins the thread and frees the watcher. NULL is a no-op. */
void conn_watch_stop(struct conn_watch *w);

/* MHD_OPTION_NOTIFY_CONNECTION callback; cls is the watcher. */
void conn_watch_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code);

/* c's request has arrived whole: no deadline until it is answered. */
void conn_watch_request_received(struct MHD_Connection *c);

/* c's request was answered: c waits for its next one from now. */
void conn_watch_request_ends(struct MHD_Connection *c);

/* Connections shut down so far: for a late request, for a new one. */
unsigned long conn_watch_timed_out(const struct conn_watch *w);
unsigned long conn_watch_evicted(const struct conn_watch *w);

#endif
