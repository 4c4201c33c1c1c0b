/* detect_mem.c - the in-memory engine of replay and tests (detect_mem.h). */
#include "detect_mem.h"

#include <stdlib.h>
#include <string.h>

#include "detect_engine.h"

struct detect_mem {
	struct det_host **hosts;
	size_t nhosts, caphosts;
	struct alert_rec *alerts;
	size_t nalerts, capalerts;
	const struct ovr_set *ovr;	/* borrowed; NULL: no overrides */
};

struct detect_mem *detect_mem_new(void)
{
	return calloc(1, sizeof(struct detect_mem));
}

void detect_mem_free(struct detect_mem *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nhosts; i++)
		det_host_free(m->hosts[i]);
	free(m->hosts);
	for (size_t i = 0; i < m->nalerts; i++)
		alert_rec_release(&m->alerts[i]);
	free(m->alerts);
	free(m);
}

/* The action callback: keeps the alert list in step with the engine. */
static int apply(void *ctx, struct det_action *a)
{
	struct detect_mem *m = ctx;

	if (a->type == DA_OPEN) {
		if (m->nalerts == m->capalerts) {
			size_t ncap = m->capalerts ? m->capalerts * 2 : 16;
			struct alert_rec *n = realloc(m->alerts, ncap * sizeof(*n));
			if (!n)
				return -1;
			m->alerts = n;
			m->capalerts = ncap;
		}
		struct alert_rec *r = &m->alerts[m->nalerts];
		memset(r, 0, sizeof(*r));
		r->id = (int64_t)m->nalerts + 1;
		r->host = strdup(a->host);
		r->cgroup = a->cgroup ? strdup(a->cgroup) : NULL;
		r->kind = strdup(a->kind);
		r->severity = strdup(a->severity);
		r->summary = strdup(a->summary);
		r->evidence = json_incref(a->evidence);
		r->open = 1;
		r->started_ms = a->started_ms;
		r->opened_ms = a->opened_ms;
		r->updated_ms = a->at_ms;
		if (!r->host || !r->kind || !r->severity || !r->summary || (a->cgroup && !r->cgroup)) {
			alert_rec_release(r);
			return -1;
		}
		m->nalerts++;
		a->alert_id = r->id;
		return 0;
	}
	if (a->alert_id < 1 || (size_t)a->alert_id > m->nalerts)
		return 0;	/* an alert this run never saw opened */
	struct alert_rec *r = &m->alerts[a->alert_id - 1];
	r->updated_ms = a->at_ms;
	if (a->type == DA_RESOLVE) {
		r->open = 0;
		r->ended_ms = a->at_ms;
		return 0;
	}
	char *sev = strdup(a->severity), *sum = strdup(a->summary);
	if (!sev || !sum) {
		free(sev);
		free(sum);
		return -1;
	}
	free(r->severity);
	free(r->summary);
	r->severity = sev;
	r->summary = sum;
	json_decref(r->evidence);
	r->evidence = json_incref(a->evidence);
	return 0;
}

static struct det_host *host_of(struct detect_mem *m, const char *host)
{
	/* Recent hosts are the likely ones: search from the end. */
	for (size_t i = m->nhosts; i-- > 0;)
		if (strcmp(det_host_name(m->hosts[i]), host) == 0)
			return m->hosts[i];
	if (m->nhosts == m->caphosts) {
		size_t ncap = m->caphosts ? m->caphosts * 2 : 8;
		struct det_host **n = realloc(m->hosts, ncap * sizeof(*n));
		if (!n)
			return NULL;
		m->hosts = n;
		m->caphosts = ncap;
	}
	struct det_host *h = det_host_new(host);
	if (h)
		m->hosts[m->nhosts++] = h;
	return h;
}

int detect_mem_feed(struct detect_mem *m, const struct sample *s)
{
	struct det_host *h = host_of(m, s->host);

	return h ? det_host_feed_tuned(h, s, m->ovr, apply, m) : -1;
}

void detect_mem_set_overrides(struct detect_mem *m, const struct ovr_set *ovr)
{
	m->ovr = ovr;
}

int detect_mem_roundtrip(struct detect_mem *m)
{
	for (size_t i = 0; i < m->nhosts; i++) {
		unsigned char *buf;
		size_t len;
		char err[128];
		if (det_host_save(m->hosts[i], &buf, &len) < 0)
			return -1;
		struct det_host *n = det_host_load(det_host_name(m->hosts[i]), buf, len, err, sizeof(err));
		free(buf);
		if (!n)
			return -1;
		det_host_free(m->hosts[i]);
		m->hosts[i] = n;
	}
	return 0;
}

size_t detect_mem_count(const struct detect_mem *m)
{
	return m->nalerts;
}

const struct alert_rec *detect_mem_alert(const struct detect_mem *m, size_t i)
{
	return i < m->nalerts ? &m->alerts[i] : NULL;
}

static int cmp_newest(const void *a, const void *b)
{
	const struct alert_rec *x = *(const struct alert_rec *const *)a, *y = *(const struct alert_rec *const *)b;
	if (x->started_ms != y->started_ms)
		return x->started_ms < y->started_ms ? 1 : -1;
	return (x->id < y->id) - (x->id > y->id);
}

json_t *detect_mem_alerts_json(const struct detect_mem *m)
{
	const struct alert_rec **v = malloc((m->nalerts + 1) * sizeof(*v));
	json_t *arr = json_array(), *o = NULL;

	if (!v || !arr)
		goto out;
	for (size_t i = 0; i < m->nalerts; i++)
		v[i] = &m->alerts[i];
	qsort(v, m->nalerts, sizeof(*v), cmp_newest);
	for (size_t i = 0; i < m->nalerts; i++) {
		json_t *a = alert_rec_to_json(v[i]);
		if (!a || json_array_append_new(arr, a) < 0)
			goto out;
	}
	o = json_pack("{s:O}", "alerts", arr);
out:
	free(v);
	json_decref(arr);
	return o;
}
