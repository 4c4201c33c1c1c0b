/* sample.c - lifecycle and lookups of the flattened sample model. */
#include "sample.h"
#include "dict.h"

#include <stdlib.h>
#include <string.h>

void sample_init(struct sample *s)
{
	memset(s, 0, sizeof(*s));
}

void sset_release(struct sset *m)
{
	free(m->f);
	m->f = NULL;
	m->n = m->cap = 0;
}

void sample_release(struct sample *s)
{
	free(s->boot_id);
	free(s->kernel);
	free(s->agent_version);
	if (s->labels)
		json_decref(s->labels);
	sset_release(&s->m);
	for (size_t i = 0; i < s->ncg; i++) {
		free(s->cg[i].path);
		sset_release(&s->cg[i].m);
	}
	free(s->cg);
	sample_init(s);
}

int sset_add(struct sset *m, uint32_t id, int64_t v)
{
	if (m->n == m->cap) {
		if (m->cap >= SAMPLE_MAX_FIELDS)
			return -1;
		size_t ncap = m->cap ? m->cap * 2 : 64;
		if (ncap > SAMPLE_MAX_FIELDS)
			ncap = SAMPLE_MAX_FIELDS;
		struct sfield *nf = realloc(m->f, ncap * sizeof(*nf));
		if (!nf)
			return -1;
		m->f = nf;
		m->cap = ncap;
	}
	m->f[m->n].id = id;
	m->f[m->n].v = v;
	m->n++;
	return 0;
}

static int cmp_field(const void *a, const void *b)
{
	uint32_t x = ((const struct sfield *)a)->id, y = ((const struct sfield *)b)->id;
	return (x > y) - (x < y);
}

int sset_sort(struct sset *m)
{
	/* Agents send the same keys in the same order every time and ids are
	 * given in first-seen order, so a set is usually sorted already: a
	 * linear check saves the qsort (9% of ingest parsing, callgrind). */
	size_t k = 1;
	while (k < m->n && m->f[k].id > m->f[k - 1].id)
		k++;
	if (k >= m->n)
		return 0;
	qsort(m->f, m->n, sizeof(*m->f), cmp_field);
	for (size_t i = 1; i < m->n; i++)
		if (m->f[i].id == m->f[i - 1].id)
			return -1;
	return 0;
}

/* sample_commit_staged for one set. */
static int sset_commit_staged(struct sset *m, const struct dict_stage *st)
{
	bool any = false;

	for (size_t i = 0; i < m->n; i++) {
		if (!dict_id_staged(m->f[i].id))
			continue;
		uint32_t real = dict_stage_real(st, m->f[i].id);
		if (!real)
			return -1;
		m->f[i].id = real;
		any = true;
	}
	return any ? sset_sort(m) : 0;
}

int sample_commit_staged(struct sample *s, const struct dict_stage *st)
{
	if (sset_commit_staged(&s->m, st) < 0)
		return -1;
	for (size_t i = 0; i < s->ncg; i++)
		if (sset_commit_staged(&s->cg[i].m, st) < 0)
			return -1;
	return 0;
}

int sset_get(const struct sset *m, uint32_t id, int64_t *v)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->f[mid].id < id)
			lo = mid + 1;
		else if (m->f[mid].id > id)
			hi = mid;
		else {
			*v = m->f[mid].v;
			return 1;
		}
	}
	return 0;
}

struct cgsample *sample_add_cgroup(struct sample *s, char *path, int version)
{
	if (s->ncg == s->cgcap) {
		if (s->cgcap >= SAMPLE_MAX_CGROUPS) {
			free(path);
			return NULL;
		}
		size_t ncap = s->cgcap ? s->cgcap * 2 : 8;
		if (ncap > SAMPLE_MAX_CGROUPS)
			ncap = SAMPLE_MAX_CGROUPS;
		struct cgsample *n = realloc(s->cg, ncap * sizeof(*n));
		if (!n) {
			free(path);
			return NULL;
		}
		s->cg = n;
		s->cgcap = ncap;
	}
	struct cgsample *c = &s->cg[s->ncg++];
	memset(c, 0, sizeof(*c));
	c->path = path;
	c->version = version;
	return c;
}

const struct cgsample *sample_find_cgroup(const struct sample *s, const char *path, int version)
{
	for (size_t i = 0; i < s->ncg; i++)
		if (s->cg[i].version == version && strcmp(s->cg[i].path, path) == 0)
			return &s->cg[i];
	return NULL;
}

static int sset_copy(struct sset *dst, const struct sset *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src->n)
		return 0;
	dst->f = malloc(src->n * sizeof(*dst->f));
	if (!dst->f)
		return -1;
	memcpy(dst->f, src->f, src->n * sizeof(*dst->f));
	dst->n = dst->cap = src->n;
	return 0;
}

static int dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -1;
}

int sample_copy(struct sample *dst, const struct sample *src)
{
	sample_init(dst);
	memcpy(dst->host, src->host, sizeof(dst->host));
	dst->ts_ms = src->ts_ms;
	if (dup_str(&dst->boot_id, src->boot_id) || dup_str(&dst->kernel, src->kernel) ||
	    dup_str(&dst->agent_version, src->agent_version) || sset_copy(&dst->m, &src->m))
		goto fail;
	if (src->labels && !(dst->labels = json_deep_copy(src->labels)))
		goto fail;
	for (size_t i = 0; i < src->ncg; i++) {
		char *p = strdup(src->cg[i].path);
		struct cgsample *c = p ? sample_add_cgroup(dst, p, src->cg[i].version) : NULL;
		if (!c || sset_copy(&c->m, &src->cg[i].m))
			goto fail;
	}
	return 0;
fail:
	sample_release(dst);
	return -1;
}
