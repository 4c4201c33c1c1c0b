/* admit.c - host scopes, new-host and new-name budgets of an ingest
 * request (see admit.h). */
#include "admit.h"
#include "fnv.h"

#include "budget.h"
#include "metrics.h"
#include "timeparse.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KNOWN_MAX (1u << 18)	/* host names remembered as known; past it, asked again */

struct admit {
	struct budget *budget;
	pthread_mutex_t mu;	/* guards the known-host set */
	char **known;		/* open addressing, power-of-two slots */
	size_t nknown, cap;
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t hash_str(const char *s)
{
	return fnv1a(s, strlen(s));
}

struct admit *admit_new(void)
{
	struct admit *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->budget = budget_new();
	if (!a->budget) {
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->mu, NULL);
	return a;
}

void admit_free(struct admit *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->cap; i++)
		free(a->known[i]);
	free(a->known);
	budget_free(a->budget);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

/* Caller holds a->mu. */
static bool known_has(struct admit *a, const char *host)
{
	if (!a->cap)
		return false;
	for (size_t i = hash_str(host) & (a->cap - 1);; i = (i + 1) & (a->cap - 1)) {
		if (!a->known[i])
			return false;
		if (strcmp(a->known[i], host) == 0)
			return true;
	}
}

/* Caller holds a->mu. Best effort: a name not remembered is asked again. */
static void known_add(struct admit *a, const char *host)
{
	if (known_has(a, host) || a->nknown >= KNOWN_MAX)
		return;
	if ((a->nknown + 1) * 2 > a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 1024;
		char **t = calloc(ncap, sizeof(*t));
		if (!t)
			return;
		for (size_t i = 0; i < a->cap; i++) {
			if (!a->known[i])
				continue;
			size_t j = hash_str(a->known[i]) & (ncap - 1);
			while (t[j])
				j = (j + 1) & (ncap - 1);
			t[j] = a->known[i];
		}
		free(a->known);
		a->known = t;
		a->cap = ncap;
	}
	char *copy = strdup(host);
	if (!copy)
		return;
	size_t i = hash_str(host) & (a->cap - 1);
	while (a->known[i])
		i = (i + 1) & (a->cap - 1);
	a->known[i] = copy;
	a->nknown++;
}

static int refuse(struct admit_refusal *r, unsigned status, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int refuse(struct admit_refusal *r, unsigned status, const char *hint, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	snprintf(r->hint, sizeof(r->hint), "%s", hint ? hint : "");
	return -1;
}

/* 1: every host within the token's patterns. */
static int check_scope(const struct token_grant *g, const struct ingest_batch *b, struct admit_refusal *r)
{
	if (!g->hosts[0])
		return 0;
	for (size_t i = 0; i < b->n; i++) {
		if (token_hosts_match(g->hosts, b->s[i].host))
			continue;
		metrics_ingest_refusal(METRICS_REFUSED_HOST_SCOPE);
		snprintf(r->detail, sizeof(r->detail), "its hosts: %.150s", g->hosts);
		return refuse(r, 403, "post with a token whose --hosts patterns cover this host "
			      "(vmscope-server token add NAME --hosts PATTERN)",
			      "could not accept sample %zu: token %s may not post for host %s", i, g->name,
			      b->s[i].host);
	}
	return 0;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* 2: hosts that never posted, within the token's budget. Fills *took. */
static int check_new_hosts(struct admit *a, struct store *st, const struct token_grant *g,
			   const struct ingest_batch *b, struct admit_taken *took, struct admit_refusal *r)
{
	const char **hosts = NULL;
	bool *known = NULL;
	size_t nh = 0, nnew = 0;
	char err[256] = "";
	int rc = -1;

	if (!g->new_hosts_per_hour || !b->n)
		return 0;
	hosts = malloc(b->n * sizeof(*hosts));
	known = malloc(b->n * sizeof(*known));
	if (!hosts || !known) {
		refuse(r, 503, NULL, "out of memory");
		r->retry_after = 1;
		goto out;
	}
	/* the distinct hosts not known in this process */
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < b->n; i++)
		if (!known_has(a, b->s[i].host))
			hosts[nh++] = b->s[i].host;
	pthread_mutex_unlock(&a->mu);
	qsort(hosts, nh, sizeof(*hosts), cmp_str);
	size_t u = 0;
	for (size_t i = 0; i < nh; i++)
		if (!u || strcmp(hosts[u - 1], hosts[i]) != 0)
			hosts[u++] = hosts[i];
	nh = u;
	if (nh && store_hosts_known(st, hosts, nh, known, err, sizeof(err)) != STORE_OK) {
		refuse(r, 503, "retry later", "could not look up hosts: %s", err);
		r->retry_after = 5;
		goto out;
	}
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < nh; i++) {
		if (known[i])
			known_add(a, hosts[i]);
		else
			nnew++;
	}
	pthread_mutex_unlock(&a->mu);
	snprintf(took->key, sizeof(took->key), "h:%s", g->name);
	took->n = (uint32_t)nnew;
	took->per_hour = g->new_hosts_per_hour;
	struct budget_ask ask = { took->key, took->n, took->per_hour };
	if (nnew && budget_take(a->budget, &ask, 1, mono_ms()) >= 0) {
		took->n = 0;
		metrics_ingest_refusal(METRICS_REFUSED_NEW_HOSTS);
		long wait = (long)(3600.0 * (double)nnew / g->new_hosts_per_hour + 0.999);
		r->retry_after = (int)(wait < 1 ? 1 : wait > 3600 ? 3600 : wait);
		const char *first = NULL;
		for (size_t i = 0; i < nh && !first; i++)
			if (!known[i])
				first = hosts[i];
		snprintf(r->detail, sizeof(r->detail), "new here: %s%s", first ? first : "?",
			 nnew > 1 ? " and others" : "");
		refuse(r, 429, "hosts the server has seen keep posting; raise the budget with "
		       "`vmscope-server token add NAME --new-hosts-per-hour N` (a new token) or the "
		       "tokens file's new-hosts-per-hour=",
		       "token %s may bring at most %u new hosts per hour; this request brings %zu",
		       g->name, g->new_hosts_per_hour, nnew);
		goto out;
	}
	rc = 0;
out:
	free(hosts);
	free(known);
	return rc;
}

/* Per staged name, the index of the first sample that carries it. */
static void first_users(const struct ingest_batch *b, const struct dict_stage *stage, size_t *owner)
{
	for (uint32_t k = 0; k < stage->n; k++)
		owner[k] = SIZE_MAX;
	for (size_t i = 0; i < b->n; i++) {
		const struct sample *s = &b->s[i];
		for (size_t c = 0; c <= s->ncg; c++) {
			const struct sset *m = c == 0 ? &s->m : &s->cg[c - 1].m;
			for (size_t f = 0; f < m->n; f++) {
				uint32_t id = m->f[f].id;
				if (!dict_id_staged(id))
					continue;
				uint32_t k = (id & ~DICT_STAGED_BIT) - 1;
				if (k < stage->n && owner[k] == SIZE_MAX)
					owner[k] = i;
			}
		}
	}
}

struct host_count {
	const char *host;
	size_t first;	/* first sample of the host bringing a name */
	uint32_t n;
	char key[HOST_NAME_MAXLEN + 4];
};

static int cmp_hc(const void *x, const void *y)
{
	const struct host_count *a = x, *b = y;
	int c = strcmp(a->host, b->host);
	return c ? c : (a->first > b->first) - (a->first < b->first);
}

/* 3: new metric names within the budgets, then into the dictionary. */
static int admit_names(struct admit *a, const struct admit_limits *lim, const struct token_grant *g,
		       struct ingest_batch *b, struct dict_stage *stage, struct admit_refusal *r)
{
	size_t *owner = NULL;
	struct host_count *hc = NULL;
	struct budget_ask *asks = NULL;
	size_t nhc = 0, first_any = SIZE_MAX;
	uint32_t owned = 0;
	char tkey[TOKEN_NAME_MAX + 8];
	int rc = -1;

	if (!stage->n)
		return 0;
	owner = malloc(stage->n * sizeof(*owner));
	hc = calloc(stage->n, sizeof(*hc));
	asks = calloc(stage->n + 1, sizeof(*asks));
	if (!owner || !hc || !asks) {
		refuse(r, 503, NULL, "out of memory");
		r->retry_after = 1;
		goto out;
	}
	first_users(b, stage, owner);
	for (uint32_t k = 0; k < stage->n; k++) {
		if (owner[k] == SIZE_MAX)
			continue;	/* staged by a sample the parse then refused: not here */
		owned++;
		hc[nhc].host = b->s[owner[k]].host;
		hc[nhc].first = owner[k];
		hc[nhc++].n = 1;
		if (owner[k] < first_any)
			first_any = owner[k];
	}
	qsort(hc, nhc, sizeof(*hc), cmp_hc);
	size_t u = 0;
	for (size_t i = 0; i < nhc; i++) {
		if (u && strcmp(hc[u - 1].host, hc[i].host) == 0)
			hc[u - 1].n++;
		else
			hc[u++] = hc[i];
	}
	nhc = u;
	/* asks[0] the token, then one per host */
	snprintf(tkey, sizeof(tkey), "t:%s", g->name);
	asks[0] = (struct budget_ask){ tkey, owned, lim->new_names_per_token };
	for (size_t i = 0; i < nhc; i++) {
		snprintf(hc[i].key, sizeof(hc[i].key), "n:%s", hc[i].host);
		asks[i + 1] = (struct budget_ask){ hc[i].key, hc[i].n, lim->new_names_per_host };
	}
	long over = budget_take(a->budget, asks, nhc + 1, mono_ms());
	if (over == 0) {
		metrics_ingest_refusal(METRICS_REFUSED_NEW_NAMES_TOKEN);
		snprintf(r->detail, sizeof(r->detail), "first new name: %.120s", stage->names[0]);
		refuse(r, 400, "a kernel upgrade brings a few new counters; hundreds an hour is a "
		       "client inventing names (raise --max-new-names-per-token if yours are real)",
		       "could not accept sample %zu: token %s would bring %u new metric names within "
		       "the hour; at most %u per hour (--max-new-names-per-token)",
		       first_any == SIZE_MAX ? 0 : first_any, g->name, owned, lim->new_names_per_token);
		goto out;
	}
	if (over > 0) {
		const struct host_count *h = &hc[over - 1];
		metrics_ingest_refusal(METRICS_REFUSED_NEW_NAMES_HOST);
		refuse(r, 400, "a kernel upgrade brings a few new counters; hundreds an hour is a "
		       "client inventing names (raise --max-new-names-per-host if yours are real)",
		       "could not accept sample %zu: host %s would bring %u new metric names within the "
		       "hour; at most %u per hour (--max-new-names-per-host)", h->first, h->host, h->n,
		       lim->new_names_per_host);
		goto out;
	}
	if (dict_stage_commit(stage) < 0) {
		budget_give(a->budget, asks, nhc + 1, mono_ms());
		metrics_ingest_refusal(METRICS_REFUSED_NAMES_FULL);
		refuse(r, 400, "the server refuses names it has never seen until it restarts; "
		       "known names keep working",
		       "could not accept sample %zu: the server's dictionary of metric names is full "
		       "(%d names)", first_any == SIZE_MAX ? 0 : first_any, DICT_MAX_NAMES);
		goto out;
	}
	for (size_t i = 0; i < b->n; i++) {
		if (sample_commit_staged(&b->s[i], stage) < 0) {
			/* cannot happen after a commit; refuse rather than store staged ids */
			refuse(r, 500, NULL, "could not map new metric names");
			goto out;
		}
	}
	rc = 0;
out:
	free(owner);
	free(hc);
	free(asks);
	return rc;
}

int admit_batch(struct admit *a, const struct admit_limits *lim, struct store *st,
		const struct token_grant *g, struct ingest_batch *b, struct dict_stage *stage,
		struct admit_taken *took, struct admit_refusal *r)
{
	memset(took, 0, sizeof(*took));
	memset(r, 0, sizeof(*r));
	if (check_scope(g, b, r) < 0 || check_new_hosts(a, st, g, b, took, r) < 0)
		return -1;
	if (admit_names(a, lim, g, b, stage, r) < 0) {
		admit_refund(a, took);
		memset(took, 0, sizeof(*took));
		return -1;
	}
	return 0;
}

bool admit_may_record(struct admit *a, struct store *st, const struct token_grant *g, const char *host)
{
	struct sample one;
	struct ingest_batch b = { &one, 1 };
	struct admit_taken took;
	struct admit_refusal r;

	if (!token_hosts_match(g->hosts, host))
		return false;
	if (!g->new_hosts_per_hour)
		return true;
	sample_init(&one);
	snprintf(one.host, sizeof(one.host), "%s", host);
	return check_new_hosts(a, st, g, &b, &took, &r) == 0;
}

void admit_refund(struct admit *a, const struct admit_taken *took)
{
	if (!took->n)
		return;
	struct budget_ask ask = { took->key, took->n, took->per_hour };
	budget_give(a->budget, &ask, 1, mono_ms());
}

void admit_stored(struct admit *a, const struct token_grant *g, const struct ingest_batch *b)
{
	if (!g->new_hosts_per_hour)
		return;	/* only budgeted tokens look hosts up */
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < b->n; i++)
		known_add(a, b->s[i].host);
	pthread_mutex_unlock(&a->mu);
}

void admit_refuse_overflow(const struct admit_limits *lim, const struct token_grant *g,
			   const struct dict_stage *stage, const char *parse_error,
			   struct admit_refusal *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->detail, sizeof(r->detail), "%.190s", parse_error);
	if (lim->new_names_per_token && stage->n > lim->new_names_per_token) {
		metrics_ingest_refusal(METRICS_REFUSED_NEW_NAMES_TOKEN);
		refuse(r, 400, "a kernel upgrade brings a few new counters; thousands are a client "
		       "inventing names", "could not accept the body: token %s would bring more than %u "
		       "new metric names; at most %u per hour (--max-new-names-per-token)", g->name,
		       stage->n, lim->new_names_per_token);
		return;
	}
	metrics_ingest_refusal(METRICS_REFUSED_NAMES_FULL);
	refuse(r, 400, "the server refuses names it has never seen until it restarts; known names "
	       "keep working", "could not accept the body: the server's dictionary of metric names "
	       "has no room for %u more (%d names)", stage->n + 1, DICT_MAX_NAMES);
}
