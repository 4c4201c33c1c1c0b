/* metrics.h - the server's own counters, rendered for GET /metrics in the
 * Prometheus text format. Process-wide, lock-free (C11 atomics). */
#ifndef VMSCOPE_METRICS_H
#define VMSCOPE_METRICS_H

#include <stdbool.h>
#include <stddef.h>

/* One answered request with this HTTP status. */
void metrics_request(unsigned status);

/* One ingest request that stored `accepted` samples (of which `fresh` were
 * new) in `seconds`. */
void metrics_ingest_ok(size_t accepted, size_t fresh, double seconds);

/* One ingest request refused with 400. */
void metrics_ingest_refused(void);
/* An ingest request refused 503 for the in-flight byte budget. */
void metrics_ingest_busy(void);

/* Why an ingest request was refused by what its token may bring in
 * (ingest.c, admit.h), beyond a malformed body. */
enum metrics_refusal {
	METRICS_REFUSED_NEW_NAMES_HOST,		/* 400: --max-new-names-per-host */
	METRICS_REFUSED_NEW_NAMES_TOKEN,	/* 400: --max-new-names-per-token */
	METRICS_REFUSED_NAMES_FULL,		/* 400: the metric-name dictionary is full */
	METRICS_REFUSED_HOST_SCOPE,		/* 403: a host outside the token's patterns */
	METRICS_REFUSED_NEW_HOSTS,		/* 429: the token's new-hosts-per-hour */
	METRICS_REFUSED_N
};
void metrics_ingest_refusal(enum metrics_refusal why);

/* Connections the server closed: for a newer one when --max-connections
 * was reached, and for a request not in within --timeout. */
void metrics_conn_evicted(void);
void metrics_conn_timed_out(void);

/* A database error answered with 503 or 500. */
void metrics_db_error(void);

/* Notification outcomes, so an operator can alert on a receiver that keeps
 * failing (the log says which; this says how often). */
enum metrics_notify {
	METRICS_NOTIFY_SENT,		/* a receiver answered 2xx */
	METRICS_NOTIFY_RETRY,		/* an attempt failed and will be retried */
	METRICS_NOTIFY_GAVE_UP,		/* dropped: not retryable, or retries used up */
	METRICS_NOTIFY_HELD_BACK,	/* an event not sent: silenced, or its open was not sent */
	METRICS_NOTIFY_RESENT,		/* an Alertmanager re-send of the open alerts answered 2xx */
	METRICS_NOTIFY_RESEND_FAILED,	/* a re-send failed (the next one comes a period later) */
	METRICS_NOTIFY_N
};
void metrics_notify(enum metrics_notify what);

/* Renders the text exposition; returns a malloc'd string (caller frees) or
 * NULL when out of memory. */
char *metrics_render(bool db_up, size_t *len);

/* Zeroes every counter and records now as the start time (main, tests). */
void metrics_reset(void);

#endif
