/* metrics_fleet.c - open alerts and derived host signals for /metrics (see
 * metrics_fleet.h). */
#include "metrics_fleet.h"

#include "log.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void tput(struct tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tput(struct tbuf *b, const char *fmt, ...)
{
	va_list ap;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap * 2 + (size_t)n + 256;
		char *g = realloc(b->p, cap);
		if (!g) {
			b->oom = true;
			return;
		}
		b->p = g;
		b->cap = cap;
	}
}

void metrics_label_escape(const char *v, char *out, size_t cap)
{
	size_t n = 0;

	for (; v && *v && n + 3 < cap; v++) {
		if (*v == '\\' || *v == '"') {
			out[n++] = '\\';
			out[n++] = *v;
		} else if (*v == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else {
			out[n++] = *v;
		}
	}
	if (cap)
		out[n] = '\0';
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* vmscope_alert_active: one series per open (host, cgroup, kind, severity),
 * sorted, duplicates merged (a series may appear once). */
static int put_alerts(struct tbuf *b, struct store *st, char *err, size_t errlen)
{
	struct alert_query q = { .state = "open", .since_ms = INT64_MIN, .until_ms = INT64_MAX, .limit = 10000 };
	json_t *out = NULL;
	char **lines = NULL;
	size_t n = 0;

	int rc = store_alerts(st, &q, &out, err, errlen);
	if (rc != STORE_OK)
		return -1;
	json_t *arr = json_object_get(out, "alerts");
	size_t cap = json_array_size(arr);
	if (cap && !(lines = calloc(cap, sizeof(*lines)))) {
		json_decref(out);
		b->oom = true;
		return 0;
	}
	for (size_t i = 0; i < cap; i++) {
		json_t *a = json_array_get(arr, i);
		char host[512], cg[8192], kind[128], sev[64];
		metrics_label_escape(json_string_value(json_object_get(a, "host")), host, sizeof(host));
		metrics_label_escape(json_string_value(json_object_get(a, "cgroup")), cg, sizeof(cg));
		metrics_label_escape(json_string_value(json_object_get(a, "kind")), kind, sizeof(kind));
		metrics_label_escape(json_string_value(json_object_get(a, "severity")), sev, sizeof(sev));
		if (asprintf(&lines[n], "vmscope_alert_active{host=\"%s\",cgroup=\"%s\",kind=\"%s\",severity=\"%s\"} 1\n",
			     host, cg, kind, sev) < 0) {
			lines[n] = NULL;
			b->oom = true;
			break;
		}
		n++;
	}
	json_decref(out);
	if (n > 1)
		qsort(lines, n, sizeof(*lines), cmp_str);
	tput(b, "# HELP vmscope_alert_active An open alert (host, cgroup \"\" for host-wide, kind, severity).\n"
		"# TYPE vmscope_alert_active gauge\n");
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(lines[i], lines[i - 1]) != 0)
			tput(b, "%s", lines[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	return 0;
}

struct family {
	const char *name, *help;
	size_t off;	/* offset of the double in struct host_signals */
};

static const struct family families[] = {
	{ "vmscope_host_refault_file_per_second",
	  "File pages refaulted per second (workingset_refault_file; workingset_refault before 5.9), newest two samples.",
	  offsetof(struct host_signals, refault_file_ps) },
	{ "vmscope_host_reclaim_efficiency",
	  "Pages reclaimed per page scanned (pgsteal / pgscan, kswapd + direct), newest two samples.",
	  offsetof(struct host_signals, reclaim_efficiency) },
	{ "vmscope_host_swap_in_per_second", "Pages swapped in per second (pswpin), newest two samples.",
	  offsetof(struct host_signals, swap_in_ps) },
	{ "vmscope_host_swap_out_per_second", "Pages swapped out per second (pswpout), newest two samples.",
	  offsetof(struct host_signals, swap_out_ps) },
};

static int put_signals(struct tbuf *b, struct store *st, int64_t now_ms, char *err, size_t errlen)
{
	struct host_signals *hs = NULL;
	size_t n = 0;

	if (store_host_signals(st, now_ms - METRICS_FLEET_ACTIVE_MS, &hs, &n, err, errlen) != STORE_OK)
		return -1;
	tput(b, "# HELP vmscope_host_last_sample_timestamp_seconds Time of the host's newest stored sample.\n"
		"# TYPE vmscope_host_last_sample_timestamp_seconds gauge\n");
	for (size_t i = 0; i < n; i++)
		tput(b, "vmscope_host_last_sample_timestamp_seconds{host=\"%s\"} %.3f\n", hs[i].host,
		     (double)hs[i].ts_ms / 1000.0);
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		tput(b, "# HELP %s %s\n# TYPE %s gauge\n", families[f].name, families[f].help, families[f].name);
		for (size_t i = 0; i < n; i++) {
			double v = *(const double *)((const char *)&hs[i] + families[f].off);
			if (isfinite(v))
				tput(b, "%s{host=\"%s\"} %.9g\n", families[f].name, hs[i].host, v);
		}
	}
	free(hs);
	return 0;
}

/* The --read-db standby: whether it answers and how far behind it is
 * (nothing without one). */
static void put_read_db(struct tbuf *b, struct store *st)
{
	char err[256];
	double secs, bytes;
	int rc = store_read_lag(st, &secs, &bytes, err, sizeof(err));

	if (rc == STORE_EINVAL && strcmp(err, "no --read-db") == 0)
		return;
	tput(b, "# HELP vmscope_read_db_up 1 when the --read-db standby answers as a standby.\n"
		"# TYPE vmscope_read_db_up gauge\nvmscope_read_db_up %d\n", rc == STORE_OK);
	if (rc != STORE_OK) {
		log_warn("/metrics: the --read-db standby: %s", err);
		return;
	}
	tput(b, "# HELP vmscope_read_db_lag_seconds How far the --read-db standby's replay is behind (0: "
		"it replayed all it received).\n# TYPE vmscope_read_db_lag_seconds gauge\n"
		"vmscope_read_db_lag_seconds %.3f\n", secs);
	tput(b, "# HELP vmscope_read_db_lag_bytes WAL written by the primary that the --read-db standby "
		"has not replayed.\n# TYPE vmscope_read_db_lag_bytes gauge\nvmscope_read_db_lag_bytes %.0f\n", bytes);
}

char *metrics_fleet_render(struct store *st, int64_t now_ms, char *err, size_t errlen)
{
	struct tbuf b = { 0 };

	tput(&b, "%s", "");
	put_read_db(&b, st);
	if (put_alerts(&b, st, err, errlen) < 0 || put_signals(&b, st, now_ms, err, errlen) < 0 || b.oom) {
		if (b.oom)
			snprintf(err, errlen, "out of memory");
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* The cache: the last rendered text and when (monotonic ms). */
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static char *cache_text;
static int64_t cache_at = INT64_MIN;
static const struct store *cache_store;

static int64_t mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int metrics_fleet_append(struct store *st, int64_t now_ms, char **buf, size_t *len)
{
	char err[256] = "";
	int rc = 0;

	if (!st)
		return 0;
	/* held while rebuilding: concurrent scrapes wait for one rebuild */
	pthread_mutex_lock(&cache_mu);
	int64_t t = mono_ms();
	if (cache_store != st || !cache_text || t - cache_at >= METRICS_FLEET_TTL_MS) {
		char *text = metrics_fleet_render(st, now_ms, err, sizeof(err));
		if (!text) {
			/* cached empty too, so a database outage costs one attempt per period */
			log_warn("/metrics: fleet metrics left out: %s", err);
			text = strdup("");
		}
		free(cache_text);
		cache_text = text;
		cache_store = st;
		cache_at = t;
	}
	if (cache_text) {
		size_t n = strlen(cache_text);
		char *g = realloc(*buf, *len + n + 1);
		if (g) {
			memcpy(g + *len, cache_text, n + 1);
			*buf = g;
			*len += n;
		} else {
			rc = -1;
		}
	}
	pthread_mutex_unlock(&cache_mu);
	return rc;
}
