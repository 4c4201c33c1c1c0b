/* conn_watch.h - a deadline for request headers (slowloris defence).
 *
 * libmicrohttpd's MHD_OPTION_CONNECTION_TIMEOUT is an idle timeout: a
 * client that trickles one header byte a second is never idle, and
 * --max-connections such clients hold every slot for as long as they like,
 * starving the agents. conn_watch gives each connection a deadline: the
 * headers of its next request must be in within the limit of the
 * connection's start or of its previous request's end. A connection past
 * its deadline is shut down (shutdown(2) of its socket; libmicrohttpd then
 * sees the end of the stream and frees it as usual). An honest client
 * sends its headers at once, and an idle keep-alive connection reaches the
 * idle timeout at the same moment, so nothing else changes.
 *
 * Ownership: conn_watch_start returns a watcher with its own thread;
 * conn_watch_stop (after MHD_stop_daemon) joins and frees it. The callbacks
 * are called by libmicrohttpd's threads. */
#ifndef VMSCOPE_CONN_WATCH_H
#define VMSCOPE_CONN_WATCH_H

#include <microhttpd.h>

struct conn_watch;

/* Starts the sweeper thread; limit_s > 0. NULL when out of resources. */
struct conn_watch *conn_watch_start(unsigned limit_s);

/* Joins the thread and frees the watcher. NULL is a no-op. */
void conn_watch_stop(struct conn_watch *w);

/* MHD_OPTION_NOTIFY_CONNECTION callback; cls is the watcher (NULL: none). */
void conn_watch_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code);

/* A request's headers are in (no deadline until it ends). */
void conn_watch_request_begins(struct MHD_Connection *c);

/* A request ended: the next one's headers are due within the limit. */
void conn_watch_request_ends(struct MHD_Connection *c);

/* Connections shut down for a late header so far. */
unsigned long conn_watch_closed(const struct conn_watch *w);

#endif
