/* bulkload.c - fills the database with generated history through the
 * storage layer (store_put_samples, the same code path as ingest minus
 * HTTP and JSON), so that `make bench` can measure queries against a
 * fleet-sized history in minutes instead of the hour 8.6 million samples
 * would take over HTTP.
 *
 * Order: 5-minute chunks one after another (so day partitions fill one
 * after another, as they do live); inside a chunk each batch holds a group
 * of hosts with all their samples of the chunk, so that one transaction
 * writes each host's rollup row of that bucket once (time-major batches of
 * one sample per host made every 5-minute row be merged 30 times) and
 * encodes each host's samples as one delta chain. Several threads each own
 * a slice of the hosts; each batch is one transaction.
 *
 * Samples are made without JSON after each host's first (gen_host_refresh,
 * checked equal to the JSON path by tests/unit/test_gen_refresh.c): the JSON
 * round trip cost ~5 times the storage layer's own work.
 */
#include "detect.h"
#include "gen.h"
#include "store.h"

#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct job {
	struct store *st;
	struct detect_engine *eng;	/* NULL: detectors off */
	const char *prefix;
	const char *kernel[2];	/* --kernel-split: even / odd hosts' kernel; NULL: generated */
	int first, count, ncg, batch;
	int64_t start_ms, end_ms, step_ms;
	long long stored;
	int failed;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int flush(struct job *j, struct sample *batch, size_t *n)
{
	char err[512];
	size_t fresh = 0;
	struct store_tx_hook hook = { detect_store_hook, j->eng, true, detect_hosts_heard };
	int rc = store_put_samples(j->st, batch, *n, j->eng ? &hook : NULL, &fresh, err, sizeof(err));

	for (size_t i = 0; i < *n; i++)
		sample_release(&batch[i]);
	*n = 0;
	if (rc != STORE_OK) {
		fprintf(stderr, "bulkload: %s\n", err);
		return -1;
	}
	j->stored += (long long)fresh;
	return 0;
}

#define CHUNK_MS 300000	/* the rollup bucket */

/* The next chunk boundary after t: the next multiple of CHUNK_MS. */
static int64_t chunk_end(int64_t t)
{
	int64_t b = t / CHUNK_MS;
	if (t < 0 && t % CHUNK_MS)
		b--;
	return (b + 1) * CHUNK_MS;
}

static void *run(void *arg)
{
	struct job *j = arg;
	struct gen_host **h = calloc((size_t)j->count, sizeof(*h));
	struct sample *tmpl = calloc((size_t)j->count, sizeof(*tmpl));	/* each host's last sample */
	bool *have = calloc((size_t)j->count, sizeof(*have));
	struct sample *batch = calloc((size_t)j->batch, sizeof(*batch));
	size_t n = 0;

	if (!h || !tmpl || !have || !batch)
		goto oom;
	for (int i = 0; i < j->count; i++) {
		char name[96];
		snprintf(name, sizeof(name), "%s-%05d", j->prefix, j->first + i);
		if (!(h[i] = gen_host_new(name, j->ncg, (uint64_t)(j->first + i) * 7919 + 1)))
			goto oom;
	}
	for (int64_t c0 = j->start_ms; c0 < j->end_ms && !j->failed;) {
		int64_t c1 = chunk_end(c0);
		if (c1 > j->end_ms)
			c1 = j->end_ms;
		for (int i = 0; i < j->count && !j->failed; i++) {
			for (int64_t t = c0; t < c1; t += j->step_ms) {
				gen_host_step(h[i], j->step_ms);
				int64_t ts = t + i % 1000;
				if (have[i] ? gen_host_refresh(h[i], ts, &tmpl[i]) < 0
					    : gen_host_sample(h[i], ts, &tmpl[i]) < 0)
					goto oom;
				have[i] = true;
				if (sample_copy(&batch[n], &tmpl[i]) < 0)
					goto oom;
				if (j->kernel[0]) {
					/* two kernel releases for the compare benchmark */
					free(batch[n].kernel);
					if (!(batch[n].kernel = strdup(j->kernel[(j->first + i) % 2]))) {
						n++;
						goto oom;
					}
				}
				if (++n == (size_t)j->batch && flush(j, batch, &n) < 0) {
					j->failed = 1;
					break;
				}
			}
		}
		/* the steps of this chunk: the next starts where they stopped */
		int64_t steps = (c1 - c0 + j->step_ms - 1) / j->step_ms;
		c0 += steps * j->step_ms;
	}
	if (n && !j->failed && flush(j, batch, &n) < 0)
		j->failed = 1;
	goto out;
oom:
	fprintf(stderr, "bulkload: out of memory\n");
	j->failed = 1;
out:
	for (size_t i = 0; i < n; i++)
		sample_release(&batch[i]);
	for (int i = 0; h && i < j->count; i++) {
		gen_host_free(h[i]);
		if (have[i])
			sample_release(&tmpl[i]);
	}
	free(h);
	free(tmpl);
	free(have);
	free(batch);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: vmscope-bulkload --db CONNINFO [--schema DIR] [--prefix NAME] [--hosts N]\n"
		"       [--hours H] [--cgroups N] [--interval S] [--threads N] [--batch N] [--detect]\n"
		"       [--end-ago S] (history ends S seconds ago, default 60)\n"
		"       [--kernel-split A,B]  (even-numbered hosts run kernel A, odd ones B)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *db = NULL, *schema = "schema", *prefix = "bulk";
	int hosts = 1000, ncg = 0, threads = 2, batch = 500, detect = 0;
	double hours = 24, interval = 10, end_ago = 60;
	static const struct option lo[] = {
		{ "db", required_argument, 0, 'd' }, { "schema", required_argument, 0, 's' },
		{ "prefix", required_argument, 0, 'p' }, { "hosts", required_argument, 0, 'H' },
		{ "hours", required_argument, 0, 'h' }, { "cgroups", required_argument, 0, 'c' },
		{ "interval", required_argument, 0, 'i' }, { "threads", required_argument, 0, 't' },
		{ "batch", required_argument, 0, 'b' }, { "detect", no_argument, 0, 'D' },
		{ "end-ago", required_argument, 0, 'e' },
		{ "kernel-split", required_argument, 0, 'k' },
		{ 0, 0, 0, 0 },
	};
	int ch;
	char *ksplit = NULL, *kb = NULL;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'd': db = optarg; break;
		case 's': schema = optarg; break;
		case 'p': prefix = optarg; break;
		case 'H': hosts = atoi(optarg); break;
		case 'h': hours = atof(optarg); break;
		case 'c': ncg = atoi(optarg); break;
		case 'i': interval = atof(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'b': batch = atoi(optarg); break;
		case 'D': detect = 1; break;
		case 'e': end_ago = atof(optarg); break;
		case 'k':
			free(ksplit);
			ksplit = strdup(optarg);
			kb = ksplit ? strchr(ksplit, ',') : NULL;
			if (!kb || kb == ksplit || !kb[1])
				usage();
			*kb++ = '\0';
			break;
		default: usage();
		}
	}
	if (!db || hosts < 1 || hours <= 0 || interval <= 0 || threads < 1 || batch < 1)
		usage();
	if (threads > hosts)
		threads = hosts;

	char err[512];
	struct store *st = NULL;
	struct store_config cfg = { .conninfo = db, .pool_size = threads + 1, .schema_dir = schema,
				    .retention_days = 400 };
	if (store_open(&st, &cfg, err, sizeof(err)) != STORE_OK) {
		fprintf(stderr, "bulkload: %s\n", err);
		return 1;
	}
	struct detect_engine *eng = detect ? detect_engine_new() : NULL;
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	int64_t end_ms = (int64_t)wall.tv_sec * 1000 - (int64_t)(end_ago * 1000);
	int64_t step = (int64_t)(interval * 1000);
	int64_t start_ms = end_ms - (int64_t)(hours * 3600 * 1000);

	struct job *jobs = calloc((size_t)threads, sizeof(*jobs));
	pthread_t *tid = calloc((size_t)threads, sizeof(*tid));
	if (!jobs || !tid) {
		fprintf(stderr, "bulkload: out of memory\n");
		return 1;
	}
	double t0 = now_s();
	for (int i = 0, first = 0; i < threads; i++) {
		int cnt = hosts / threads + (i < hosts % threads);
		jobs[i] = (struct job){ st, eng, prefix, { ksplit, kb }, first, cnt, ncg, batch, start_ms, end_ms, step, 0, 0 };
		first += cnt;
		pthread_create(&tid[i], NULL, run, &jobs[i]);
	}
	long long total = 0;
	int failed = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		total += jobs[i].stored;
		failed |= jobs[i].failed;
	}
	double el = now_s() - t0;
	printf("{\"samples\":%lld,\"seconds\":%.1f,\"samples_per_s\":%.0f,\"hosts\":%d,\"hours\":%.1f,"
	       "\"cgroups\":%d}\n", total, el, total / el, hosts, hours, ncg);
	free(jobs);
	free(tid);
	detect_engine_free(eng);
	store_close(st);
	free(ksplit);
	return failed;
}
