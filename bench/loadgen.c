/* loadgen.c - many simulated agents posting realistic samples to a server.
 *
 * Closed loop (default): --concurrency requests in flight, each the next
 * host's next sample, as fast as the server answers: measures sustained
 * samples/s. Open loop (--rate N): requests started at N samples/s whatever
 * the answers: measures latency at a given load. Prints a summary and, with
 * --json, one JSON line for scripts, with the generator's own CPU seconds.
 *
 * Cheap on purpose (it shares the machine's cores with the server and
 * PostgreSQL): each host's body stays rendered between its samples and only
 * the numbers that moved and the ts are rewritten in place (gen_body_render);
 * a request's body is one memcpy of it.
 *
 * Timestamps follow the clock, as a real agent's do: a host posts the
 * current time less a fixed offset of its own under 10 s (the fleet's
 * phases spread out), at least LG_MIN_STEP_MS after its previous sample,
 * and its counters move by the time that passed. (Timestamps that started
 * an hour back and advanced 10 s a post would keep every host far behind
 * the server's clock, and the server's host_silent tick would open and
 * resolve an alert for most of them all the time, work a real fleet does
 * not cause.)
 */
#include "gen.h"

#include <curl/curl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

struct opts {
	const char *server, *token;
	int hosts, cgroups, concurrency, batch;
	double duration, rate;
	int json;
	const char *timeline;	/* per-second latency file, or NULL */
	const char *prefix;	/* host names: PREFIX00000, ... */
};

struct slot {
	CURL *easy;
	struct curl_slist *hdr;
	char *body;
	size_t cap, len;
	double t0;
	int nsamples;
	int busy;
};

/* a host posting faster than this still moves its ts by this much */
#define LG_MIN_STEP_MS 200

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
	(void)p; (void)ud;
	return sz * n;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Writes one line per second of the run: second, answers completed in it,
 * their p50, p99 and max latency in ms. For finding what makes the tail
 * (a background job, a checkpoint, autovacuum) by when it happens. */
static int write_timeline(const char *path, const double *lat, const double *done_at, size_t n, double elapsed)
{
	FILE *f = fopen(path, "w");
	size_t nsec = (size_t)elapsed + 1;
	double *buf = malloc((n ? n : 1) * sizeof(*buf));

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return -1;
	}
	fprintf(f, "# second answers p50_ms p99_ms max_ms\n");
	for (size_t sec = 0; sec < nsec; sec++) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (done_at[i] >= (double)sec && done_at[i] < (double)sec + 1)
				buf[k++] = lat[i];
		qsort(buf, k, sizeof(*buf), cmp_d);
		if (k)
			fprintf(f, "%zu %zu %.1f %.1f %.1f\n", sec, k, buf[k / 2] * 1000, buf[(size_t)(k * 0.99)] * 1000,
				buf[k - 1] * 1000);
		else
			fprintf(f, "%zu 0 - - -\n", sec);
	}
	free(buf);
	return fclose(f) == 0 ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: vmscope-loadgen --server URL [--token T] [--hosts N] [--cgroups N]\n"
		"       [--duration S] [--concurrency N] [--batch N] [--rate SAMPLES_PER_S] [--json]\n"
		"       [--timeline FILE]   per second of the run: answers, p50, p99, max (ms)\n"
		"       [--prefix P]        host names P00000, P00001, ... (default bench-)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { NULL, NULL, 2000, 20, 16, 1, 30, 0, 0, NULL, "bench-" };
	static const struct option lo[] = {
		{ "server", required_argument, 0, 's' }, { "token", required_argument, 0, 't' },
		{ "hosts", required_argument, 0, 'H' }, { "cgroups", required_argument, 0, 'c' },
		{ "duration", required_argument, 0, 'd' }, { "concurrency", required_argument, 0, 'C' },
		{ "batch", required_argument, 0, 'b' }, { "rate", required_argument, 0, 'r' },
		{ "json", no_argument, 0, 'j' }, { "timeline", required_argument, 0, 'T' },
		{ "prefix", required_argument, 0, 'p' }, { 0, 0, 0, 0 },
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 's': o.server = optarg; break;
		case 't': o.token = optarg; break;
		case 'H': o.hosts = atoi(optarg); break;
		case 'c': o.cgroups = atoi(optarg); break;
		case 'd': o.duration = atof(optarg); break;
		case 'C': o.concurrency = atoi(optarg); break;
		case 'b': o.batch = atoi(optarg); break;
		case 'r': o.rate = atof(optarg); break;
		case 'j': o.json = 1; break;
		case 'T': o.timeline = optarg; break;
		case 'p': o.prefix = optarg; break;
		default: usage();
		}
	}
	if (!o.server || o.hosts < 1 || o.concurrency < 1 || o.batch < 1 || o.duration <= 0)
		usage();

	/* CURLOPT_NOSIGNAL below: libcurl then leaves SIGPIPE alone instead of
	 * two sigaction calls around every transfer (7% of our CPU, perf) */
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	char url[512];
	snprintf(url, sizeof(url), "%s/api/v1/samples", o.server);
	char auth[512];
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", o.token ? o.token : "");

	struct gen_host **hosts = calloc((size_t)o.hosts, sizeof(*hosts));
	struct gen_body **bodies = calloc((size_t)o.hosts, sizeof(*bodies));
	int64_t *last_ts = calloc((size_t)o.hosts, sizeof(*last_ts));	/* 0: none posted yet */
	if (!hosts || !bodies || !last_ts) {
		fprintf(stderr, "loadgen: out of memory\n");
		return 1;
	}
	for (int i = 0; i < o.hosts; i++) {
		char name[64];
		snprintf(name, sizeof(name), "%.40s%05d", o.prefix, i);
		hosts[i] = gen_host_new(name, o.cgroups, (uint64_t)i + 1);
		bodies[i] = gen_body_new();
		if (!hosts[i] || !bodies[i]) {
			fprintf(stderr, "loadgen: out of memory\n");
			return 1;
		}
	}

	CURLM *multi = curl_multi_init();
	struct slot *slots = calloc((size_t)o.concurrency, sizeof(*slots));
	size_t lat_cap = 1 << 20, nlat = 0;
	double *lat = malloc(lat_cap * sizeof(*lat));
	double *done_at = malloc(lat_cap * sizeof(*done_at));	/* seconds into the run */
	long long ok_samples = 0, bad = 0, sent = 0;
	int next_host = 0;
	for (int i = 0; i < o.concurrency; i++) {
		slots[i].easy = curl_easy_init();
		slots[i].cap = (size_t)o.batch * 64 * 1024 + 16;
		slots[i].body = malloc(slots[i].cap);
		slots[i].hdr = curl_slist_append(NULL, "Content-Type: application/json");
		slots[i].hdr = curl_slist_append(slots[i].hdr, auth);
		slots[i].hdr = curl_slist_append(slots[i].hdr, "Expect:");
		curl_easy_setopt(slots[i].easy, CURLOPT_URL, url);
		curl_easy_setopt(slots[i].easy, CURLOPT_HTTPHEADER, slots[i].hdr);
		curl_easy_setopt(slots[i].easy, CURLOPT_WRITEFUNCTION, sink);
		curl_easy_setopt(slots[i].easy, CURLOPT_PRIVATE, &slots[i]);
		curl_easy_setopt(slots[i].easy, CURLOPT_TIMEOUT, 30L);
		curl_easy_setopt(slots[i].easy, CURLOPT_NOSIGNAL, 1L);
	}

	/* Each body's first render writes all of it (~40 KB with 20 cgroups);
	 * later ones rewrite only what moved. Done lazily, the first pass over
	 * the hosts (2 s at 1,000/s for 2,000 hosts) put this set-up work on
	 * the cores the server needs, inside the measured window: its seconds
	 * had p99 60-100 ms against ~20 in the rest (the per-second timelines
	 * bench/run.sh writes).
	 * So every body is rendered once here, before the clock starts, and
	 * the CPU reported below is the run's, not this set-up's. */
	for (int h = 0; h < o.hosts; h++) {
		size_t n;
		if (!gen_body_render(bodies[h], hosts[h], wall_ms(), &n)) {
			fprintf(stderr, "loadgen: out of memory\n");
			return 1;
		}
	}
	struct rusage ru0;
	if (getrusage(RUSAGE_SELF, &ru0) != 0)
		memset(&ru0, 0, sizeof(ru0));

	double start = now_s(), end = start + o.duration;
	double next_start = start;	/* open loop: when the next request is due */
	for (;;) {
		double t = now_s();
		int running = 0;
		for (int i = 0; i < o.concurrency && t < end; i++) {
			struct slot *sl = &slots[i];
			if (sl->busy)
				continue;
			if (o.rate > 0 && t < next_start)
				break;
			/* build a batch of the next hosts' next samples */
			size_t len = 0;
			sl->body[len++] = '[';
			for (int b = 0; b < o.batch; b++) {
				int h = next_host;
				next_host = (next_host + 1) % o.hosts;
				int64_t ts = wall_ms() - h % 10000;
				if (last_ts[h] && ts < last_ts[h] + LG_MIN_STEP_MS)
					ts = last_ts[h] + LG_MIN_STEP_MS;
				gen_host_step(hosts[h], last_ts[h] ? ts - last_ts[h] : 10000);
				last_ts[h] = ts;
				size_t n;
				const char *text = gen_body_render(bodies[h], hosts[h], ts, &n);
				if (!text || n > sl->cap - len - 2) {
					fprintf(stderr, "loadgen: out of memory or sample too large\n");
					return 1;
				}
				memcpy(sl->body + len, text, n);
				len += n;
				sl->body[len++] = b + 1 < o.batch ? ',' : ']';
			}
			sl->len = len;
			sl->nsamples = o.batch;
			curl_easy_setopt(sl->easy, CURLOPT_POSTFIELDS, sl->body);
			curl_easy_setopt(sl->easy, CURLOPT_POSTFIELDSIZE, (long)sl->len);
			sl->t0 = now_s();
			sl->busy = 1;
			sent += o.batch;
			curl_multi_add_handle(multi, sl->easy);
			if (o.rate > 0)
				next_start += o.batch / o.rate;
		}
		curl_multi_perform(multi, &running);
		CURLMsg *m;
		int q, freed = 0;
		while ((m = curl_multi_info_read(multi, &q))) {
			if (m->msg != CURLMSG_DONE)
				continue;
			struct slot *sl;
			long code = 0;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&sl);
			curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
			if (m->data.result == CURLE_OK && code == 202) {
				ok_samples += sl->nsamples;
				if (nlat < lat_cap) {
					double tdone = now_s();
					done_at[nlat] = tdone - start;
					lat[nlat++] = tdone - sl->t0;
				}
			} else {
				if (bad < 5)
					fprintf(stderr, "loadgen: answer %ld (%s)\n", code,
						curl_easy_strerror(m->data.result));
				bad++;
			}
			curl_multi_remove_handle(multi, m->easy_handle);
			sl->busy = 0;
			freed++;
		}
		if (now_s() >= end && running == 0)
			break;
		/* a connection just came free: a closed loop (or an open-loop
		 * start already due) sends its next request now, not after the
		 * poll below, which with nothing else in flight waits its whole
		 * timeout (one request a second with one connection) */
		if (freed && now_s() < end && (o.rate <= 0 || next_start <= now_s()))
			continue;
		/* sleep until a socket is ready, the next open-loop start is due
		 * or the run ends: no wake-ups for nothing */
		double tn = now_s(), until = end;
		if (o.rate > 0 && next_start > tn && next_start < end)
			until = next_start;
		double wait_ms = (until - tn) * 1000;
		int tmo = wait_ms < 1 ? 1 : wait_ms > 1000 ? 1000 : (int)wait_ms;
		curl_multi_poll(multi, NULL, 0, tmo, NULL);
	}
	double elapsed = now_s() - start;
	if (o.timeline && write_timeline(o.timeline, lat, done_at, nlat, elapsed) < 0)
		fprintf(stderr, "loadgen: could not write %s\n", o.timeline);
	qsort(lat, nlat, sizeof(*lat), cmp_d);
	double p50 = nlat ? lat[nlat / 2] * 1000 : NAN, p99 = nlat ? lat[(size_t)(nlat * 0.99)] * 1000 : NAN;
	double rate = ok_samples / elapsed;
	/* its own CPU during the run (not the set-up above): it shares the cores
	 * with the server and PostgreSQL */
	struct rusage ru;
	double cpu = getrusage(RUSAGE_SELF, &ru) == 0 ?
		(double)(ru.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
		(ru.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
		(double)(ru.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		(ru.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6 : NAN;
	if (o.json)
		printf("{\"samples_ok\":%lld,\"requests_failed\":%lld,\"seconds\":%.2f,\"samples_per_s\":%.1f,"
		       "\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"batch\":%d,\"concurrency\":%d,\"target_rate\":%.0f,"
		       "\"cpu_s\":%.2f}\n",
		       ok_samples, bad, elapsed, rate, p50, p99, o.batch, o.concurrency, o.rate, cpu);
	else
		printf("accepted %lld samples in %.1f s: %.0f samples/s; %lld failed requests; "
		       "latency p50 %.2f ms, p99 %.2f ms (batch %d, concurrency %d); own CPU %.2f s\n",
		       ok_samples, elapsed, rate, bad, p50, p99, o.batch, o.concurrency, cpu);
	for (int i = 0; i < o.concurrency; i++) {
		curl_easy_cleanup(slots[i].easy);
		curl_slist_free_all(slots[i].hdr);
		free(slots[i].body);
	}
	for (int i = 0; i < o.hosts; i++) {
		gen_host_free(hosts[i]);
		gen_body_free(bodies[i]);
	}
	free(hosts);
	free(bodies);
	free(last_ts);
	free(slots);
	free(lat);
	free(done_at);
	curl_multi_cleanup(multi);
	curl_global_cleanup();
	(void)sent;
	return bad && !ok_samples ? 1 : 0;
}
