/* metrics.c - counters and their Prometheus text (see metrics.h). */
#include "metrics.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dict.h"

static const double lat_bounds[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };
#define NBUCKETS (sizeof(lat_bounds) / sizeof(lat_bounds[0]))

static atomic_ullong req_by_status[600];
static atomic_ullong samples_accepted, samples_fresh, requests_refused, db_errors, requests_busy;
static atomic_ullong lat_bucket[NBUCKETS + 1];	/* last: +Inf */
static atomic_ullong lat_sum_us, lat_count;
static atomic_llong start_time = 0;
static atomic_ullong notify_by[METRICS_NOTIFY_N];
static const char *const notify_names[METRICS_NOTIFY_N] = {
	"sent", "retry", "gave_up", "held_back", "resent", "resend_failed"
};
static atomic_ullong refused_by[METRICS_REFUSED_N];
static const char *const refusal_names[METRICS_REFUSED_N] = {
	"new_names_per_host", "new_names_per_token", "metric_names_full", "host_scope",
	"new_hosts_per_token"
};
static atomic_ullong conn_evicted, conn_timed_out;

void metrics_request(unsigned status)
{
	if (status < 600)
		atomic_fetch_add(&req_by_status[status], 1);
}

void metrics_ingest_ok(size_t accepted, size_t fresh, double seconds)
{
	size_t i = 0;

	atomic_fetch_add(&samples_accepted, accepted);
	atomic_fetch_add(&samples_fresh, fresh);
	while (i < NBUCKETS && seconds > lat_bounds[i])
		i++;
	atomic_fetch_add(&lat_bucket[i], 1);
	atomic_fetch_add(&lat_sum_us, (unsigned long long)(seconds * 1e6));
	atomic_fetch_add(&lat_count, 1);
}

void metrics_ingest_refused(void)
{
	atomic_fetch_add(&requests_refused, 1);
}

void metrics_ingest_busy(void)
{
	atomic_fetch_add(&requests_busy, 1);
}

void metrics_ingest_refusal(enum metrics_refusal why)
{
	if ((unsigned)why < METRICS_REFUSED_N)
		atomic_fetch_add(&refused_by[why], 1);
}

void metrics_conn_evicted(void)
{
	atomic_fetch_add(&conn_evicted, 1);
}

void metrics_conn_timed_out(void)
{
	atomic_fetch_add(&conn_timed_out, 1);
}

void metrics_db_error(void)
{
	atomic_fetch_add(&db_errors, 1);
}

void metrics_notify(enum metrics_notify what)
{
	if ((unsigned)what < METRICS_NOTIFY_N)
		atomic_fetch_add(&notify_by[what], 1);
}

void metrics_reset(void)
{
	for (size_t i = 0; i < METRICS_NOTIFY_N; i++)
		atomic_store(&notify_by[i], 0);
	for (size_t i = 0; i < METRICS_REFUSED_N; i++)
		atomic_store(&refused_by[i], 0);
	atomic_store(&conn_evicted, 0);
	atomic_store(&conn_timed_out, 0);
	for (size_t i = 0; i < 600; i++)
		atomic_store(&req_by_status[i], 0);
	for (size_t i = 0; i <= NBUCKETS; i++)
		atomic_store(&lat_bucket[i], 0);
	atomic_store(&samples_accepted, 0);
	atomic_store(&samples_fresh, 0);
	atomic_store(&requests_refused, 0);
	atomic_store(&requests_busy, 0);
	atomic_store(&db_errors, 0);
	atomic_store(&lat_sum_us, 0);
	atomic_store(&lat_count, 0);
	atomic_store(&start_time, (long long)time(NULL));
}

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->oom = true;
			return;
		}
		if ((size_t)n < o->cap - o->len)
			break;
		size_t cap = o->cap * 2 + (size_t)n;
		char *grown = realloc(o->buf, cap);
		if (!grown) {
			o->oom = true;
			return;
		}
		o->buf = grown;
		o->cap = cap;
	}
	o->len += (size_t)n;
}

/* One line per label value of a counter family: name{label="names[i]"} counts[i]. */
static void put_labelled(struct out *o, const char *name, const char *label, const char *const *names,
			 atomic_ullong *counts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(o, "%s{%s=\"%s\"} %llu\n", name, label, names[i], atomic_load(&counts[i]));
}

char *metrics_render(bool db_up, size_t *len)
{
	struct out o = { .cap = 4096 };
	unsigned long long cum = 0;

	o.buf = malloc(o.cap);
	if (!o.buf)
		return NULL;
	o.buf[0] = '\0';
	long long t0 = atomic_load(&start_time);
	put(&o, "# HELP vmscope_http_requests_total HTTP requests answered, by status code.\n"
		"# TYPE vmscope_http_requests_total counter\n");
	for (unsigned s = 100; s < 600; s++) {
		unsigned long long v = atomic_load(&req_by_status[s]);
		if (v)
			put(&o, "vmscope_http_requests_total{code=\"%u\"} %llu\n", s, v);
	}
	put(&o, "# HELP vmscope_ingest_samples_accepted_total Samples answered with 202 (duplicates included).\n"
		"# TYPE vmscope_ingest_samples_accepted_total counter\n"
		"vmscope_ingest_samples_accepted_total %llu\n", atomic_load(&samples_accepted));
	put(&o, "# HELP vmscope_ingest_samples_stored_total Samples newly stored (not duplicates).\n"
		"# TYPE vmscope_ingest_samples_stored_total counter\n"
		"vmscope_ingest_samples_stored_total %llu\n", atomic_load(&samples_fresh));
	put(&o, "# HELP vmscope_ingest_requests_refused_total Ingest requests refused with 400.\n"
		"# TYPE vmscope_ingest_requests_refused_total counter\n"
		"vmscope_ingest_requests_refused_total %llu\n", atomic_load(&requests_refused));
	put(&o, "# HELP vmscope_ingest_refusals_total Ingest requests refused for what their token "
		"may bring in: new metric names per host or token and hour, a full name dictionary, "
		"a host outside the token's patterns, new hosts per token and hour.\n"
		"# TYPE vmscope_ingest_refusals_total counter\n");
	put_labelled(&o, "vmscope_ingest_refusals_total", "reason", refusal_names, refused_by,
		     METRICS_REFUSED_N);
	put(&o, "# HELP vmscope_metric_names Metric names in the server's dictionary; at "
		"vmscope_metric_names_max a sample bringing a new name is refused (metric_names_full).\n"
		"# TYPE vmscope_metric_names gauge\n"
		"vmscope_metric_names %u\n"
		"# HELP vmscope_metric_names_max The dictionary's capacity.\n"
		"# TYPE vmscope_metric_names_max gauge\n"
		"vmscope_metric_names_max %u\n", (unsigned)dict_count(), (unsigned)DICT_MAX_NAMES);
	put(&o, "# HELP vmscope_http_connections_closed_total Connections the server closed: "
		"evicted (the oldest waiting one, for a new one past --max-connections) or timeout "
		"(a request not in within --timeout).\n"
		"# TYPE vmscope_http_connections_closed_total counter\n"
		"vmscope_http_connections_closed_total{reason=\"evicted\"} %llu\n"
		"vmscope_http_connections_closed_total{reason=\"timeout\"} %llu\n",
		atomic_load(&conn_evicted), atomic_load(&conn_timed_out));
	put(&o, "# HELP vmscope_ingest_requests_busy_total Ingest requests answered 503 because "
		"--max-inflight-bytes was held by other requests.\n"
		"# TYPE vmscope_ingest_requests_busy_total counter\n"
		"vmscope_ingest_requests_busy_total %llu\n", atomic_load(&requests_busy));
	put(&o, "# HELP vmscope_db_errors_total Requests that failed on the database (503 or 500).\n"
		"# TYPE vmscope_db_errors_total counter\n"
		"vmscope_db_errors_total %llu\n", atomic_load(&db_errors));
	put(&o, "# HELP vmscope_ingest_duration_seconds Time to validate and commit an ingest request.\n"
		"# TYPE vmscope_ingest_duration_seconds histogram\n");
	for (size_t i = 0; i < NBUCKETS; i++) {
		cum += atomic_load(&lat_bucket[i]);
		put(&o, "vmscope_ingest_duration_seconds_bucket{le=\"%g\"} %llu\n", lat_bounds[i], cum);
	}
	cum += atomic_load(&lat_bucket[NBUCKETS]);
	put(&o, "vmscope_ingest_duration_seconds_bucket{le=\"+Inf\"} %llu\n", cum);
	put(&o, "vmscope_ingest_duration_seconds_sum %.6f\n", (double)atomic_load(&lat_sum_us) / 1e6);
	put(&o, "vmscope_ingest_duration_seconds_count %llu\n", atomic_load(&lat_count));
	put(&o, "# HELP vmscope_notifications_total Notification attempts and events by outcome "
		"(sent, retry, gave_up, held_back, resent, resend_failed).\n"
		"# TYPE vmscope_notifications_total counter\n");
	put_labelled(&o, "vmscope_notifications_total", "result", notify_names, notify_by, METRICS_NOTIFY_N);
	put(&o, "# HELP vmscope_database_up 1 when a query to the database succeeds now.\n"
		"# TYPE vmscope_database_up gauge\n"
		"vmscope_database_up %d\n", db_up ? 1 : 0);
	put(&o, "# HELP vmscope_start_time_seconds When the server started (Unix seconds).\n"
		"# TYPE vmscope_start_time_seconds gauge\n"
		"vmscope_start_time_seconds %lld\n", t0);
	if (o.oom) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}
