/* body_diff.h - runs both ingest body parsers (sample_body.h: libyajl
 * streaming and the jansson reference) over one input and says whether they
 * agree: the same accept/refuse, and on accept identical samples (host, ts,
 * strings, labels, every field and cgroup). A refusal must say why (kind and
 * a message). Shared by tests/unit/test_sample_body.c and the libFuzzer
 * target tests/fuzz/fuzz_sample_body.c. Header-only: the fuzz build links
 * common/ only. */
#ifndef VMSCOPE_BODY_DIFF_H
#define VMSCOPE_BODY_DIFF_H

#include "sample_body.h"

#include <stdio.h>
#include <string.h>

static int body_diff_str(const char *a, const char *b)
{
	if (!a || !b)
		return a == b ? 0 : 1;
	return strcmp(a, b) != 0;
}

static int body_diff_sset(const struct sset *a, const struct sset *b)
{
	if (a->n != b->n)
		return 1;
	for (size_t i = 0; i < a->n; i++)
		if (a->f[i].id != b->f[i].id || a->f[i].v != b->f[i].v)
			return 1;
	return 0;
}

/* Names the first difference between two samples in why; 0 when identical. */
static int body_diff_sample(const struct sample *a, const struct sample *b, char *why, size_t n)
{
	if (strcmp(a->host, b->host) != 0 || a->ts_ms != b->ts_ms)
		return snprintf(why, n, "host/ts differ: %.60s %lld vs %.60s %lld", a->host,
				(long long)a->ts_ms, b->host, (long long)b->ts_ms), 1;
	if (body_diff_str(a->boot_id, b->boot_id) || body_diff_str(a->kernel, b->kernel) ||
	    body_diff_str(a->agent_version, b->agent_version))
		return snprintf(why, n, "boot_id/kernel/agent_version differ"), 1;
	if ((a->labels == NULL) != (b->labels == NULL) ||
	    (a->labels && !json_equal(a->labels, b->labels)))
		return snprintf(why, n, "labels differ"), 1;
	if (body_diff_sset(&a->m, &b->m))
		return snprintf(why, n, "host fields differ (%zu vs %zu)", a->m.n, b->m.n), 1;
	if (a->ncg != b->ncg)
		return snprintf(why, n, "cgroup count %zu vs %zu", a->ncg, b->ncg), 1;
	for (size_t i = 0; i < a->ncg; i++)
		if (strcmp(a->cg[i].path, b->cg[i].path) != 0 || a->cg[i].version != b->cg[i].version ||
		    body_diff_sset(&a->cg[i].m, &b->cg[i].m))
			return snprintf(why, n, "cgroup %zu differs", i), 1;
	return 0;
}

/* 0 when both parsers agree on buf[0..len); else 1 with why filled.
 * *accepted says what they decided. */
static int body_diff(const char *buf, size_t len, int max_depth, int *accepted, char *why, size_t n)
{
	struct sample *ys = NULL, *js = NULL;
	size_t yn = 0, jn = 0;
	struct sample_body_err ye, je;
	int yr = sample_body_parse(buf, len, max_depth, &ys, &yn, &ye);
	int jr = sample_body_parse_jansson(buf, len, max_depth, &js, &jn, &je);
	int rc = 0;

	why[0] = '\0';
	*accepted = yr == 0;
	if (yr != jr) {
		snprintf(why, n, "yajl %s (%.100s), jansson %s (%.100s)", yr ? "refuses" : "accepts",
			 yr ? ye.msg : "", jr ? "refuses" : "accepts", jr ? je.msg : "");
		rc = 1;
	} else if (yr != 0) {
		if (ye.kind == SB_OK || !ye.msg[0] || je.kind == SB_OK || !je.msg[0]) {
			snprintf(why, n, "a refusal without a reason");
			rc = 1;
		}
	} else if (yn != jn) {
		snprintf(why, n, "yajl %zu samples, jansson %zu", yn, jn);
		rc = 1;
	} else {
		for (size_t i = 0; i < yn && !rc; i++)
			rc = body_diff_sample(&ys[i], &js[i], why, n);
	}
	if (yr == 0)
		sample_body_free(ys, yn);
	if (jr == 0)
		sample_body_free(js, jn);
	return rc;
}

#endif
