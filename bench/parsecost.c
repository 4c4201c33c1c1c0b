/* parsecost.c - instructions per parsed sample, for callgrind.
 *
 * Renders N bodies of bench/gen.c hosts (20 cgroups: ~40 KB of JSON each)
 * and parses each with the libyajl path (ingest_parse, as the server does)
 * or the jansson reference (--jansson). Run under
 *   valgrind --tool=callgrind --toggle-collect=parse_one bin/vmscope-parsecost [--jansson]
 * and divide the instructions by N (docs/scaling.md). Prints the wall time
 * per parse too (noisy on a shared machine).
 */
#include "gen.h"
#include "ingest.h"
#include "sample_body.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 20

int parse_one(const char *buf, size_t len, int jansson);

/* not static: callgrind's --toggle-collect names it */
int parse_one(const char *buf, size_t len, int jansson)
{
	if (jansson) {
		struct sample *s;
		size_t n;
		struct sample_body_err e;
		if (sample_body_parse_jansson(buf, len, INGEST_MAX_DEPTH, &s, &n, &e) < 0)
			return -1;
		sample_body_free(s, n);
		return 0;
	}
	struct ingest_batch b;
	struct ingest_error e;
	if (ingest_parse(buf, len, 1764600000000LL, 0, 30, &b, &e) < 0)
		return -1;
	ingest_batch_release(&b);
	return 0;
}

int main(int argc, char **argv)
{
	int jansson = argc > 1 && strcmp(argv[1], "--jansson") == 0;
	int ncg = argc > 2 ? atoi(argv[2]) : 20;
	static char bufs[N][1 << 17];
	int lens[N];
	struct gen_host *h = gen_host_new("parse-01", ncg, 1);
	struct timespec t0, t1;

	if (!h)
		return 1;
	for (int i = 0; i < N; i++) {
		gen_host_step(h, 10000);
		lens[i] = gen_host_json(h, 1764518400000LL + i * 10000LL, bufs[i], sizeof(bufs[i]));
		if (lens[i] < 0)
			return 1;
	}
	gen_host_free(h);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < N; i++)
		if (parse_one(bufs[i], (size_t)lens[i], jansson) < 0) {
			fprintf(stderr, "parse %d failed\n", i);
			return 1;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s: %d bodies of %d bytes, %.3f ms per parse\n", jansson ? "jansson" : "yajl", N,
	       lens[0], ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / N);
	return 0;
}
