/* replay_main.c - bin/vmscope-replay: runs the detector engine over a
 * recording (JSON lines of contract samples, plain or gzip) without a server
 * or database, and prints the alerts a live server would have raised.
 *
 *   vmscope-replay [--format json|table] [--bench] [--persist]
 *                  [--overrides FILE] FILE|- ...
 *
 * Every line is validated with sample_from_json (the ingest validation);
 * a refused line is reported with its line number and skipped, and the exit
 * status is then 1. --persist saves and reloads the detector state after
 * every sample, as the server does per request (must not change a thing).
 * --bench reports the engine's cost per sample on stderr. --overrides reads
 * detector overrides in the GET /api/v1/overrides shape (overrides.h), so a
 * recording replays with the tuning the server had.
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "alert_json.h"
#include "detect_mem.h"
#include "overrides.h"
#include "sample.h"
#include "version.h"

#define LINE_MAX_BYTES (64u << 20)	/* one sample line at most 64 MiB */

struct opts {
	bool table, bench, persist;
	const char *overrides;	/* --overrides FILE, NULL: none */
};

static double clock_us(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static double now_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

/* This thread's CPU time: on a shared machine the wall clock also counts
 * the time other processes had the CPU. */
static double cpu_us(void)
{
	return clock_us(CLOCK_THREAD_CPUTIME_ID);
}

/* Reads one line into *buf (grown as needed, capped). Returns its length,
 * 0 at end of file, -1 on error or an over-long line. */
static long read_line(gzFile f, char **buf, size_t *cap)
{
	size_t n = 0;

	for (;;) {
		if (*cap - n < 2) {
			size_t ncap = *cap ? *cap * 2 : 65536;
			if (ncap > LINE_MAX_BYTES)
				return -1;
			char *nb = realloc(*buf, ncap);
			if (!nb)
				return -1;
			*buf = nb;
			*cap = ncap;
		}
		if (!gzgets(f, *buf + n, (int)(*cap - n))) {
			int e;
			gzerror(f, &e);
			if (e != Z_OK && e != Z_STREAM_END)
				return -1;
			return (long)n;
		}
		n += strlen(*buf + n);
		if (n > 0 && (*buf)[n - 1] == '\n')
			return (long)n;
	}
}

struct stats {
	size_t fed, skipped, refused;
	double engine_us, total_us, engine_cpu_us;
};

static int replay_file(struct detect_mem *m, const char *path, const struct opts *o, struct stats *st)
{
	gzFile f = strcmp(path, "-") == 0 ? gzdopen(0, "rb") : gzopen(path, "rb");
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	long n;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "vmscope-replay: could not open %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((n = read_line(f, &line, &cap)) > 0) {
		double t0 = now_us();
		json_error_t jerr;
		char err[SAMPLE_ERR_MAX];
		struct sample s;
		lineno++;
		if (strspn(line, " \t\r\n") == (size_t)n)
			continue;
		json_t *j = json_loadb(line, (size_t)n, 0, &jerr);
		if (!j) {
			fprintf(stderr, "%s:%zu: could not parse JSON: %s\n", path, lineno, jerr.text);
			st->refused++;
			continue;
		}
		int vr = sample_from_json(&s, j, err);
		json_decref(j);
		if (vr < 0) {
			fprintf(stderr, "%s:%zu: could not parse sample: %s\n", path, lineno, err);
			st->refused++;
			continue;
		}
		double t1 = now_us(), c1 = cpu_us();
		int fr = detect_mem_feed(m, &s);
		if (fr == 1 && o->persist && detect_mem_roundtrip(m) < 0)
			fr = -1;
		double t2 = now_us(), c2 = cpu_us();
		sample_release(&s);
		if (fr < 0) {
			fprintf(stderr, "%s:%zu: detector engine out of memory\n", path, lineno);
			rc = -1;
			break;
		}
		if (fr == 1)
			st->fed++;
		else
			st->skipped++;
		st->engine_us += t2 - t1;
		st->engine_cpu_us += c2 - c1;
		st->total_us += t2 - t0;
	}
	if (n < 0) {
		fprintf(stderr, "%s:%zu: could not read (I/O error, bad gzip or a line over %u bytes)\n",
			path, lineno + 1, LINE_MAX_BYTES);
		rc = -1;
	}
	free(line);
	gzclose(f);
	return rc;
}

static void print_table(const struct detect_mem *m)
{
	json_t *all = detect_mem_alerts_json(m);
	json_t *arr = json_object_get(all, "alerts");
	size_t i;
	json_t *a;

	printf("%-4s %-16s %-28s %-20s %-8s %-8s %-24s %-24s %-24s %s\n", "id", "host", "cgroup", "kind",
	       "severity", "state", "started_at", "opened_at", "ended_at", "summary");
	json_array_foreach(arr, i, a) {
		const char *cg = json_string_value(json_object_get(a, "cgroup"));
		const char *end = json_string_value(json_object_get(a, "ended_at"));
		printf("%-4lld %-16s %-28s %-20s %-8s %-8s %-24s %-24s %-24s %s\n",
		       (long long)json_integer_value(json_object_get(a, "id")),
		       json_string_value(json_object_get(a, "host")), cg ? cg : "-",
		       json_string_value(json_object_get(a, "kind")),
		       json_string_value(json_object_get(a, "severity")),
		       json_string_value(json_object_get(a, "state")),
		       json_string_value(json_object_get(a, "started_at")),
		       json_string_value(json_object_get(a, "opened_at")), end ? end : "-",
		       json_string_value(json_object_get(a, "summary")));
	}
	json_decref(all);
}

/* To stdout for --help (help2man reads it), to stderr after a bad flag. */
static void usage(FILE *f)
{
	fprintf(f, "usage: vmscope-replay [--format json|table] [--bench] [--persist]\n"
			"                      [--overrides FILE] FILE|- ...\n"
			"       vmscope-replay --help | --version\n"
			"  runs the vmscope detectors over JSON-lines samples (plain or gzip) and prints\n"
			"  the alerts as {\"alerts\":[...]} (CONTRACT.md section 3); --overrides FILE\n"
			"  applies detector overrides saved from GET /api/v1/overrides\n");
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct stats st = { 0 };
	int nfiles = 0, rc = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
			i++;
			if (strcmp(argv[i], "table") == 0) {
				o.table = true;
			} else if (strcmp(argv[i], "json") != 0) {
				usage(stderr);
				return 2;
			}
		} else if (strcmp(argv[i], "--overrides") == 0 && i + 1 < argc) {
			o.overrides = argv[++i];
		} else if (strcmp(argv[i], "--bench") == 0) {
			o.bench = true;
		} else if (strcmp(argv[i], "--persist") == 0) {
			o.persist = true;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("vmscope-replay %s\n", VMSCOPE_VERSION);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			usage(stderr);
			return 2;
		}
	}
	struct ovr_set ovr = { 0 };
	if (o.overrides) {
		char oerr[OVR_ERR_MAX + 64];
		if (ovr_set_load_file(&ovr, o.overrides, oerr, sizeof(oerr)) < 0) {
			fprintf(stderr, "vmscope-replay: %s\n", oerr);
			return 2;
		}
	}
	struct detect_mem *m = detect_mem_new();
	if (!m) {
		fprintf(stderr, "vmscope-replay: out of memory\n");
		ovr_set_release(&ovr);
		return 1;
	}
	detect_mem_set_overrides(m, &ovr);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--format") == 0 || strcmp(argv[i], "--overrides") == 0) {
			i++;
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1] != '\0')
			continue;
		nfiles++;
		if (replay_file(m, argv[i], &o, &st) < 0)
			rc = 1;
	}
	if (nfiles == 0) {
		usage(stderr);
		detect_mem_free(m);
		ovr_set_release(&ovr);
		return 2;
	}
	if (o.table) {
		print_table(m);
	} else {
		json_t *all = detect_mem_alerts_json(m);
		if (!all || json_dumpf(all, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) < 0) {
			fprintf(stderr, "vmscope-replay: could not print the alerts\n");
			rc = 1;
		}
		putchar('\n');
		json_decref(all);
	}
	if (o.bench && st.fed > 0)
		fprintf(stderr, "bench: %zu samples fed (%zu skipped); engine %.2f us/sample (CPU %.2f); "
				"parse+validate+engine %.2f us/sample\n",
			st.fed, st.skipped, st.engine_us / (double)st.fed, st.engine_cpu_us / (double)st.fed,
			st.total_us / (double)st.fed);
	if (st.refused) {
		fprintf(stderr, "vmscope-replay: %zu line(s) refused\n", st.refused);
		rc = 1;
	}
	detect_mem_free(m);
	ovr_set_release(&ovr);
	return rc;
}
