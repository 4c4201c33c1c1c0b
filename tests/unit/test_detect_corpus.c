/* test_detect_corpus.c - properties of every alert the engine raises over
 * the whole trace corpus (every trace in tests/corpus and tests/corpus/derived,
 * plain or gzip), in several timings:
 * as recorded, every 5th sample lost, subsampled to 10 s and to 15 s, and
 * with timestamps jittered by up to a tenth of the interval. For every
 * action the engine emits:
 *   open    the sample it opens on is a hit (its level is warning or
 *           critical), opened_at is that sample's time, started_at is not
 *           after it, the evidence holds at least one number and the
 *           summary has numbers and is not just the kind's name
 *   update  happens on a critical sample
 *   resolve never on a sample that is a hit
 * Run from the source root. */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "detect_engine.h"
#include "detect_kinds.h"
#include "harness.h"
#include "sample.h"

#define MAX_SAMPLES 20000
#define MAX_HOSTS 16

struct trace {
	struct sample *s;
	size_t n;
};

/* Reads a JSON-lines file (plain or gzip) into samples; 0 or -1. */
static int load_trace(const char *path, struct trace *t)
{
	gzFile f = gzopen(path, "rb");
	static char line[1 << 21];

	t->s = calloc(MAX_SAMPLES, sizeof(*t->s));
	t->n = 0;
	if (!f || !t->s) {
		if (f)
			gzclose(f);
		return -1;
	}
	while (t->n < MAX_SAMPLES && gzgets(f, line, sizeof(line))) {
		json_error_t jerr;
		char err[SAMPLE_ERR_MAX];
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		json_t *j = json_loads(line, 0, &jerr);
		if (!j)
			continue;
		if (sample_from_json(&t->s[t->n], j, err) == 0)
			t->n++;
		json_decref(j);
	}
	gzclose(f);
	return 0;
}

static void free_trace(struct trace *t)
{
	for (size_t i = 0; i < t->n; i++)
		sample_release(&t->s[i]);
	free(t->s);
}

struct stats {
	long opens, updates, resolves;
	const char *trace, *variant;
};

static bool has_digit(const char *s)
{
	return strpbrk(s, "0123456789") != NULL;
}

static int check_action(void *ctx, struct det_action *a)
{
	struct stats *st = ctx;

	if (a->type == DA_OPEN) {
		st->opens++;
		a->alert_id = st->opens;
		bool ok = a->level >= DL_WARNING && a->opened_ms == a->at_ms && a->started_ms <= a->opened_ms;
		size_t numbers = 0;
		const char *key;
		json_t *v;
		json_object_foreach(a->evidence, key, v)
			numbers += json_is_number(v);
		ok = ok && numbers > 0 && a->summary && has_digit(a->summary) && strcmp(a->summary, a->kind) != 0;
		if (!ok)
			fprintf(stderr, "%s [%s]: %s %s opened at %lld on a sample of level %d: %s\n", st->trace,
				st->variant, a->kind, a->cgroup ? a->cgroup : "host", (long long)a->at_ms, a->level,
				a->summary ? a->summary : "(no summary)");
		CHECK(ok);
	} else if (a->type == DA_UPDATE) {
		st->updates++;
		CHECK_INT(a->level, DL_CRITICAL);
		CHECK(a->summary && has_digit(a->summary));
	} else {
		st->resolves++;
		CHECK(a->level < DL_WARNING);
	}
	return 0;
}

enum variant { V_ASIS, V_DROP, V_RETIME10, V_RETIME15, V_JITTER, NVARIANT };
static const char *const vname[NVARIANT] = { "asis", "drop", "retime10", "retime15", "jitter" };

/* Feeds t in one timing; the engine keeps one det_host per host. */
static void feed_variant(struct trace *t, enum variant v, struct stats *st)
{
	struct det_host *hosts[MAX_HOSTS] = { 0 };
	int64_t last_kept[MAX_HOSTS] = { 0 };
	unsigned rnd = 12345;

	st->variant = vname[v];
	for (size_t i = 0; i < t->n; i++) {
		struct sample *s = &t->s[i];
		int h = 0;
		while (h < MAX_HOSTS && hosts[h] && strcmp(det_host_name(hosts[h]), s->host) != 0)
			h++;
		if (h == MAX_HOSTS)
			continue;
		if (!hosts[h])
			hosts[h] = det_host_new(s->host);
		if (!hosts[h])
			break;
		int64_t keep_gap = v == V_RETIME10 ? 9500 : v == V_RETIME15 ? 14250 : 0;
		if (keep_gap && last_kept[h] && s->ts_ms - last_kept[h] < keep_gap)
			continue;
		if (v == V_DROP && i > 0 && i % 5 == 0)
			continue;
		int64_t ts = s->ts_ms;
		if (v == V_JITTER && i > 0 && i + 1 < t->n) {
			/* up to a tenth of the gap to the neighbours, either way */
			int64_t gap = (t->s[i + 1].ts_ms - s->ts_ms) / 10;
			rnd = rnd * 1103515245u + 12345u;
			s->ts_ms += gap > 0 ? (int64_t)(rnd % (unsigned)(2 * gap + 1)) - gap : 0;
		}
		last_kept[h] = s->ts_ms;
		CHECK(det_host_feed(hosts[h], s, check_action, st) >= 0);
		s->ts_ms = ts;
	}
	for (int h = 0; h < MAX_HOSTS; h++)
		det_host_free(hosts[h]);
}

static int is_trace(const char *name)
{
	size_t n = strlen(name);
	return (n > 6 && strcmp(name + n - 6, ".jsonl") == 0) || (n > 9 && strcmp(name + n - 9, ".jsonl.gz") == 0);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the trace files of dir (as "dir/name") to names; the count. */
static int list_traces(const char *dir, char **names, int nn, int cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	CHECK(d != NULL);
	if (!d) {
		fprintf(stderr, "%s: run from the source root\n", dir);
		return nn;
	}
	while ((e = readdir(d)) && nn < cap) {
		if (!is_trace(e->d_name))
			continue;
		size_t len = strlen(dir) + strlen(e->d_name) + 2;
		names[nn] = malloc(len);
		if (names[nn])
			snprintf(names[nn++], len, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	return nn;
}

int main(void)
{
	char *names[512];
	int nn = 0;
	long opens = 0, updates = 0, resolves = 0;

	nn = list_traces("tests/corpus", names, nn, 512);
	nn = list_traces("tests/corpus/derived", names, nn, 512);
	qsort(names, (size_t)nn, sizeof(names[0]), cmp_str);
	CHECK(nn >= 20);
	for (int i = 0; i < nn; i++) {
		const char *path = names[i];
		struct trace t;
		CHECK_INT(load_trace(path, &t), 0);
		CHECK(t.n > 0);
		for (int v = 0; v < NVARIANT; v++) {
			struct stats st = { .trace = names[i] };
			feed_variant(&t, (enum variant)v, &st);
			opens += st.opens;
			updates += st.updates;
			resolves += st.resolves;
		}
		free_trace(&t);
		free(names[i]);
	}
	/* the corpus raises alerts: the checks above ran on real actions */
	CHECK(opens >= 50);
	fprintf(stderr, "test_detect_corpus: %d traces x %d timings: %ld opened, %ld escalated, %ld resolved\n",
		nn, NVARIANT, opens, updates, resolves);
	return harness_report("test_detect_corpus");
}
