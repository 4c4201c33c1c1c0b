/* store_state.c - the per-host encoding state, the cgroup id cache, and
 * rebuilding a state from stored rows. */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hstate_init(struct hstate *h)
{
	memset(h, 0, sizeof(*h));
	h->last_ts = INT64_MIN;
}

void hstate_release(struct hstate *h)
{
	free(h->boot_id);
	sset_release(&h->m);
	for (size_t i = 0; i < h->cgcap; i++)
		sset_release(&h->cg[i].m);
	free(h->cg);
	hstate_init(h);
}

void hstate_reset(struct hstate *h)
{
	int32_t id = h->host_id;
	hstate_release(h);
	h->host_id = id;
}

static int sset_copy_into(struct sset *dst, const struct sset *src)
{
	if (src->n > dst->cap) {
		struct sfield *f = realloc(dst->f, src->n * sizeof(*f));
		if (!f)
			return -1;
		dst->f = f;
		dst->cap = src->n;
	}
	if (src->n)
		memcpy(dst->f, src->f, src->n * sizeof(*src->f));
	dst->n = src->n;
	return 0;
}

int hstate_copy(struct hstate *dst, const struct hstate *src)
{
	if (sset_copy_into(&dst->m, &src->m) < 0)
		return -1;
	if (src->ncg > dst->cgcap) {
		struct cgstate *t = realloc(dst->cg, src->ncg * sizeof(*t));
		if (!t)
			return -1;
		memset(t + dst->cgcap, 0, (src->ncg - dst->cgcap) * sizeof(*t));
		dst->cg = t;
		dst->cgcap = src->ncg;
	}
	dst->ncg = 0;
	for (size_t k = 0; k < src->ncg; k++) {
		dst->cg[k].id = src->cg[k].id;
		if (sset_copy_into(&dst->cg[k].m, &src->cg[k].m) < 0)
			return -1;
		dst->ncg++;
	}
	dst->host_id = src->host_id;
	dst->last_ts = src->last_ts;
	dst->chain = src->chain;
	dst->boot = src->boot;
	return 0;
}

int hstate_apply_row(struct hstate *h, const uint8_t *d, size_t dlen, const uint8_t *c, size_t clen)
{
	const uint8_t *p = d, *end = d + dlen;
	uint64_t off;
	struct sset nm = { 0 };
	struct cgstate *ncg = NULL;
	size_t nn = 0, cap = 0, pos = 0;
	uint32_t cid = 0;
	const uint8_t *sec;
	size_t seclen;
	int rc;

	if (codec_get_uvarint(&p, end, &off) < 0)
		return -1;
	bool self = off == 0;
	if (codec_apply(p, (size_t)(end - p), self ? NULL : h->m.f, self ? 0 : h->m.n, &nm) < 0)
		goto fail;
	while (c && (rc = codec_cg_next(c, clen, &pos, &cid, &sec, &seclen)) == 1) {
		const struct cgstate *b = NULL;
		for (size_t j = 0; !self && j < h->ncg; j++)
			if (h->cg[j].id == cid)
				b = &h->cg[j];
		if (nn == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct cgstate *t = realloc(ncg, ncap * sizeof(*t));
			if (!t)
				goto fail;
			memset(t + cap, 0, (ncap - cap) * sizeof(*t));
			ncg = t;
			cap = ncap;
		}
		ncg[nn].id = cid;
		if (codec_apply(sec, seclen, b ? b->m.f : NULL, b ? b->m.n : 0, &ncg[nn].m) < 0) {
			nn++;
			goto fail;
		}
		nn++;
	}
	if (c && rc < 0)
		goto fail;
	/* swap in the new values */
	sset_release(&h->m);
	h->m = nm;
	for (size_t i = 0; i < h->cgcap; i++)
		sset_release(&h->cg[i].m);
	free(h->cg);
	h->cg = ncg;
	h->ncg = nn;
	h->cgcap = cap;
	return 0;
fail:
	sset_release(&nm);
	for (size_t i = 0; i < nn; i++)
		sset_release(&ncg[i].m);
	free(ncg);
	return -1;
}

/* ---- cgroup id cache ---- */

struct cgent {
	struct cgent *next;
	int32_t host_id;
	int version;
	uint32_t id;
	int64_t touched;
	char path[];
};

#define CG_BUCKETS 65536
struct cgcache {
	pthread_mutex_t mu;
	struct cgent **b;
	size_t n;
};

struct cgcache *cgcache_new(void)
{
	struct cgcache *cc = calloc(1, sizeof(*cc));
	if (!cc)
		return NULL;
	if (!(cc->b = calloc(CG_BUCKETS, sizeof(*cc->b)))) {
		free(cc);
		return NULL;
	}
	pthread_mutex_init(&cc->mu, NULL);
	return cc;
}

static void cgcache_clear_locked(struct cgcache *cc)
{
	for (size_t i = 0; i < CG_BUCKETS; i++) {
		while (cc->b[i]) {
			struct cgent *e = cc->b[i];
			cc->b[i] = e->next;
			free(e);
		}
	}
	cc->n = 0;
}

void cgcache_free(struct cgcache *cc)
{
	if (!cc)
		return;
	cgcache_clear_locked(cc);
	pthread_mutex_destroy(&cc->mu);
	free(cc->b);
	free(cc);
}

static uint32_t cg_hash(int32_t host_id, int version, const char *path)
{
	uint32_t h = 2166136261u ^ (uint32_t)host_id * 16777619u ^ (uint32_t)version;
	for (const char *p = path; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return h % CG_BUCKETS;
}

static struct cgent *cg_find_locked(struct cgcache *cc, int32_t host_id, int version, const char *path)
{
	for (struct cgent *e = cc->b[cg_hash(host_id, version, path)]; e; e = e->next)
		if (e->host_id == host_id && e->version == version && strcmp(e->path, path) == 0)
			return e;
	return NULL;
}

uint32_t cgcache_get(struct cgcache *cc, int32_t host_id, int version, const char *path, int64_t *touched)
{
	pthread_mutex_lock(&cc->mu);
	struct cgent *e = cg_find_locked(cc, host_id, version, path);
	uint32_t id = e ? e->id : 0;
	*touched = e ? e->touched : INT64_MIN;
	pthread_mutex_unlock(&cc->mu);
	return id;
}

void cgcache_set(struct cgcache *cc, int32_t host_id, int version, const char *path, uint32_t id, int64_t touched)
{
	pthread_mutex_lock(&cc->mu);
	struct cgent *e = cg_find_locked(cc, host_id, version, path);
	if (e) {
		e->id = id;
		if (touched > e->touched)
			e->touched = touched;
		pthread_mutex_unlock(&cc->mu);
		return;
	}
	if (cc->n >= STORE_CG_CACHE_MAX)
		cgcache_clear_locked(cc);
	size_t len = strlen(path);
	e = malloc(sizeof(*e) + len + 1);
	if (e) {
		e->host_id = host_id;
		e->version = version;
		e->id = id;
		e->touched = touched;
		memcpy(e->path, path, len + 1);
		uint32_t b = cg_hash(host_id, version, path);
		e->next = cc->b[b];
		cc->b[b] = e;
		cc->n++;
	}
	pthread_mutex_unlock(&cc->mu);
}

/* ---- rebuilding a state from the database ---- */

int store_load_state(PGconn *c, int32_t host_id, int64_t ts, struct hstate *h, char *err, size_t errlen)
{
	char hid[16], t[24], day0[24];
	const char *params[3] = { hid, t, day0 };
	PGresult *r = NULL;
	int rc;

	hstate_reset(h);
	snprintf(hid, sizeof(hid), "%d", host_id);
	snprintf(t, sizeof(t), "%lld", (long long)ts);
	snprintf(day0, sizeof(day0), "%lld", (long long)(store_day(ts) * STORE_DAY_MS));
	rc = store_q(c,
		     "SELECT ts_ms, kf, boot, d, c FROM samples WHERE host_id = $1 AND ts_ms <= $2 "
		     "AND ts_ms >= $3 AND ts_ms >= coalesce((SELECT max(ts_ms) FROM samples "
		     "WHERE host_id = $1 AND kf AND ts_ms <= $2 AND ts_ms >= $3), $3) ORDER BY ts_ms",
		     3, params, 1, &r, "read the host's last samples", err, errlen);
	if (rc != STORE_OK)
		return rc;
	int n = PQntuples(r);
	for (int i = 0; i < n; i++) {
		const uint8_t *d = (const uint8_t *)PQgetvalue(r, i, 3);
		size_t dlen = (size_t)PQgetlength(r, i, 3);
		const uint8_t *cg = PQgetisnull(r, i, 4) ? NULL : (const uint8_t *)PQgetvalue(r, i, 4);
		size_t clen = cg ? (size_t)PQgetlength(r, i, 4) : 0;
		int64_t rts = store_get_i64(r, i, 0);
		bool kf = store_get_bool(r, i, 1);
		const uint8_t *p = d;
		uint64_t off;

		if (codec_get_uvarint(&p, d + dlen, &off) < 0)
			goto unusable;
		if (off == 0 && !kf)
			continue;	/* a late row outside the chain */
		if (off != 0 && (h->last_ts == INT64_MIN || (uint64_t)(rts - h->last_ts) != off))
			goto unusable;
		if (hstate_apply_row(h, d, dlen, cg, clen) < 0)
			goto unusable;
		h->chain = kf ? 1 : h->chain + 1;
		h->last_ts = rts;
		h->boot = store_get_i16(r, i, 2);
	}
	PQclear(r);
	if (h->last_ts != ts)
		hstate_reset(h);
	return STORE_OK;
unusable:
	PQclear(r);
	hstate_reset(h);
	return STORE_OK;
}
