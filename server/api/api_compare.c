/* api_compare.c - GET /api/v1/compare (see api_compare.h): parameters,
 * grouping of the hosts (kernel at the window, or a label), and the
 * answer; the figures come from compare.c, the data from store_compare.c
 * (three queries whatever the fleet size). */
#include "api_compare.h"
#include "errf.h"

#include "api_read.h"
#include "compare.h"
#include "respond.h"
#include "store_compare.h"
#include "timeparse.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HINT "see docs/api.md \"Compare\": group_by=kernel|label:KEY, a, b, since, until, label=KEY:VALUE"

/* A value of the query; -1 when it holds an encoded NUL. */
static int get(const struct param_src *src, const char *name, const char **v, char *err, size_t errlen)
{
	size_t len = 0;
	*v = src->get(src->ctx, name, &len);
	if (*v && strlen(*v) != len)
		return errf(err, errlen, "%s: must not contain a NUL byte", name);
	return 0;
}

/* Unix ms (>= 10^11), Unix seconds or RFC 3339. */
static int get_time(const struct param_src *src, const char *name, int64_t *ms, bool *given,
		    char *err, size_t errlen)
{
	const char *v;
	*given = false;
	if (get(src, name, &v, err, errlen) < 0)
		return -1;
	if (!v)
		return 0;
	size_t n = strlen(v), i = 0;
	while (i < n && isdigit((unsigned char)v[i]))
		i++;
	if (n && i == n && n <= 15) {
		long long x = strtoll(v, NULL, 10);
		if (x >= 100000000000LL) {
			*ms = x;
			*given = true;
			return 0;
		}
	}
	if (time_parse(v, ms) < 0)
		return errf(err, errlen, "%s: expected Unix milliseconds, Unix seconds or an RFC 3339 time", name);
	*given = true;
	return 0;
}

int compare_params(const struct param_src *src, const char *const *labels, size_t nlabels,
		   int64_t now_ms, struct compare_params *p, char *err, size_t errlen)
{
	const char *g;
	bool hs, hu;

	memset(p, 0, sizeof(*p));
	if (get(src, "group_by", &g, err, errlen) < 0)
		return -1;
	if (!g || !*g)
		return errf(err, errlen, "group_by: required (kernel or label:KEY)");
	if (strcmp(g, "kernel") == 0) {
		p->label_key = NULL;
	} else if (strncmp(g, "label:", 6) == 0 && g[6]) {
		p->label_key = g + 6;
		p->label_key_len = strlen(g + 6);
	} else {
		return errf(err, errlen, "group_by: expected kernel or label:KEY");
	}
	if (get(src, "a", &p->a, err, errlen) < 0 || get(src, "b", &p->b, err, errlen) < 0)
		return -1;
	if (p->a && !p->b)
		return errf(err, errlen, "b: required with a");
	if (p->b && !p->a)
		return errf(err, errlen, "a: required with b");
	if (p->a && strcmp(p->a, p->b) == 0)
		return errf(err, errlen, "b: must differ from a");
	if (get_time(src, "until", &p->until_ms, &hu, err, errlen) < 0 ||
	    get_time(src, "since", &p->since_ms, &hs, err, errlen) < 0)
		return -1;
	if (!hu)
		p->until_ms = now_ms;
	if (!hs)
		p->since_ms = p->until_ms - COMPARE_DEFAULT_WINDOW_MS;
	if (p->since_ms >= p->until_ms)
		return errf(err, errlen, "since: must be before until");
	if (p->until_ms - p->since_ms > COMPARE_MAX_WINDOW_MS)
		return errf(err, errlen, "since: the window may span at most 31 days");
	if (nlabels > COMPARE_MAX_FILTERS)
		return errf(err, errlen, "label: at most %d filters", COMPARE_MAX_FILTERS);
	for (size_t i = 0; i < nlabels; i++) {
		const char *colon = labels[i] ? strchr(labels[i], ':') : NULL;
		if (!colon || colon == labels[i])
			return errf(err, errlen, "label: expected KEY:VALUE");
		p->fkey[i] = labels[i];
		p->fkey_len[i] = (size_t)(colon - labels[i]);
		p->fval[i] = colon + 1;
	}
	p->nfilter = nlabels;
	return 0;
}

/* The host's group value (borrowed), NULL when it has none. */
static const char *group_of(const struct cmp_host *h, const struct compare_params *p)
{
	if (!p->label_key)
		return h->kernel;
	return json_string_value(json_object_getn(h->labels, p->label_key, p->label_key_len));
}

static bool passes(const struct cmp_host *h, const struct compare_params *p)
{
	for (size_t i = 0; i < p->nfilter; i++) {
		const char *v = json_string_value(json_object_getn(h->labels, p->fkey[i], p->fkey_len[i]));
		if (!v || strcmp(v, p->fval[i]) != 0)
			return false;
	}
	return true;
}

/* Collects the label=... arguments. */
struct label_args {
	const char *v[COMPARE_MAX_FILTERS + 1];
	size_t n;
	bool nul;
};

static enum MHD_Result label_iter(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
				  const char *value, size_t value_size)
{
	struct label_args *la = cls;
	(void)kind;
	if (key_size != 5 || memcmp(key, "label", 5) != 0)
		return MHD_YES;
	if (!value || strlen(value) != value_size) {
		la->nul = true;
		return MHD_YES;
	}
	if (la->n <= COMPARE_MAX_FILTERS)
		la->v[la->n++] = value;
	return MHD_YES;
}

struct group_count {
	const char *value;
	int hosts;
};

static int by_hosts(const void *x, const void *y)
{
	const struct group_count *a = x, *b = y;
	if (a->hosts != b->hosts)
		return b->hosts - a->hosts;
	return strcmp(a->value, b->value);
}

static json_t *group_list(const struct cmp_host *h, size_t n, const struct compare_params *p)
{
	struct group_count *g = calloc(n ? n : 1, sizeof(*g));
	size_t ng = 0;
	json_t *arr = json_array();

	if (!g || !arr) {
		free(g);
		json_decref(arr);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *v = passes(&h[i], p) ? group_of(&h[i], p) : NULL;
		if (!v)
			continue;
		size_t k = 0;
		while (k < ng && strcmp(g[k].value, v) != 0)
			k++;
		if (k == ng)
			g[ng++] = (struct group_count){ v, 0 };
		g[k].hosts++;
	}
	qsort(g, ng, sizeof(*g), by_hosts);
	for (size_t k = 0; k < ng; k++)
		json_array_append_new(arr, json_pack("{s:s,s:i}", "value", g[k].value, "hosts", g[k].hosts));
	free(g);
	return arr;
}

/* The group_by string as given ("kernel" or "label:KEY"). */
static json_t *group_by_json(const struct compare_params *p)
{
	if (!p->label_key)
		return json_string("kernel");
	char *s = malloc(p->label_key_len + 7);
	if (!s)
		return NULL;
	memcpy(s, "label:", 6);
	memcpy(s + 6, p->label_key, p->label_key_len);
	s[6 + p->label_key_len] = '\0';
	json_t *j = json_stringn(s, 6 + p->label_key_len);
	free(s);
	return j;
}

/* The comparison of p->a and p->b over hosts h[0..n). STORE_* code. */
static int run_compare(struct store *st, const struct cmp_host *h, size_t n, const struct compare_params *p,
		       json_t **out, char *err, size_t errlen)
{
	int *side = calloc(n ? n : 1, sizeof(*side));
	int na = 0, nb = 0, rc;
	struct compare *c = NULL;
	json_t *figs = NULL;

	*out = NULL;
	if (!side) {
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *v = passes(&h[i], p) ? group_of(&h[i], p) : NULL;
		side[i] = !v ? -1 : strcmp(v, p->a) == 0 ? 0 : strcmp(v, p->b) == 0 ? 1 : -1;
		na += side[i] == 0;
		nb += side[i] == 1;
	}
	rc = compare_load(st, h, side, n, p->since_ms, p->until_ms, &c, err, errlen);
	if (rc == STORE_OK && !(figs = compare_figures(c, COMPARE_ALPHA))) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
	}
	if (rc == STORE_OK)
		*out = json_pack("{s:o*,s:s,s:s,s:I,s:I,s:f,s:f,s:i,s:{s:i,s:i},s:f,s:o}",
				 "group_by", group_by_json(p), "a", p->a, "b", p->b,
				 "since", (json_int_t)p->since_ms, "until", (json_int_t)p->until_ms,
				 "since_ts", (double)p->since_ms / 1000.0, "until_ts", (double)p->until_ms / 1000.0,
				 "interval_s", 300, "hosts", "a", na, "b", nb, "alpha", COMPARE_ALPHA,
				 "figures", figs);
	if (rc == STORE_OK && !*out) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
	}
	compare_free(c);
	free(side);
	return rc;
}

enum MHD_Result api_compare(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct param_src src = api_params(rq);
	struct label_args la = { .n = 0 };
	struct compare_params p;
	struct cmp_host *h = NULL;
	size_t n = 0;
	json_t *out = NULL;
	char err[256] = "";
	int rc;

	MHD_get_connection_values_n(rq->conn, MHD_GET_ARGUMENT_KIND, label_iter, &la);
	if (la.nul)
		return respond_error(rq, 400, "label: must not contain a NUL byte", NULL, HINT);
	if (compare_params(&src, la.v, la.n, time_now_ms(), &p, err, sizeof(err)) < 0)
		return respond_error(rq, 400, err, NULL, HINT);
	if (!st)
		return respond_unavailable(rq);
	rc = store_compare_hosts(st, p.since_ms, p.until_ms, &h, &n, err, sizeof(err));
	if (rc != STORE_OK)
		return respond_store_error(rq, rc, err);
	if (!p.a) {
		json_t *groups = group_list(h, n, &p);
		out = groups ? json_pack("{s:o*,s:I,s:I,s:f,s:f,s:o}", "group_by", group_by_json(&p),
					 "since", (json_int_t)p.since_ms, "until", (json_int_t)p.until_ms,
					 "since_ts", (double)p.since_ms / 1000.0, "until_ts", (double)p.until_ms / 1000.0,
					 "groups", groups)
			     : NULL;
	} else {
		rc = run_compare(st, h, n, &p, &out, err, sizeof(err));
	}
	store_compare_hosts_free(h, n);
	if (rc != STORE_OK)
		return respond_store_error(rq, rc, err);
	return respond_json(rq, 200, out);
}
