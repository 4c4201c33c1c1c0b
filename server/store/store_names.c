/* store_names.c - which metric names a host, or one cgroup path of it,
 * reports: the names GET .../metrics lists, and whether a series of a name
 * with no points in its window is "reported, nothing in this window" (200)
 * or "never reported" (404, store_series).
 *
 * A cgroup path can stand for two cgroups ids: a hybrid machine mounts the
 * v1 memory controller and the v2 hierarchy side by side, and the agent
 * reports a directory present in both twice (CONTRACT.md §1), v1 with the
 * memory figures, v2 with memory.pressure. A controller is bound to one
 * hierarchy at a time, so at any instant a name comes from at most one of
 * the two: the readers merge them by name (docs/api.md "Cgroups").
 *
 * Calls store_state.c and store_sql.c only. */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_cgpath(PGconn *c, int32_t host_id, const char *host, const char *path, int version,
		 struct cgpath *out, char *err, size_t errlen)
{
	char hs[16], vs[8];
	const char *p[3] = { hs, path, vs };
	PGresult *r;

	memset(out, 0, sizeof(*out));
	snprintf(hs, sizeof(hs), "%d", host_id);
	snprintf(vs, sizeof(vs), "%d", version);
	int rc = store_q(c, "SELECT id, version, last_ts_ms FROM cgroups WHERE host_id = $1 AND path = $2 "
			 "AND ($3::int = 0 OR version = $3::int) ORDER BY version",
			 3, p, 0, &r, "look up the cgroup", err, errlen);
	if (rc != STORE_OK)
		return rc;
	for (int i = 0; i < PQntuples(r) && out->n < CGPATH_MAX; i++) {
		out->id[out->n] = (uint32_t)strtoul(PQgetvalue(r, i, 0), NULL, 10);
		out->version[out->n] = atoi(PQgetvalue(r, i, 1));
		out->last_ts[out->n] = strtoll(PQgetvalue(r, i, 2), NULL, 10);
		out->n++;
	}
	PQclear(r);
	if (out->n == 0) {
		if (version)
			snprintf(err, errlen, "no such cgroup on %s: %s (cgroup v%d)", host, path, version);
		else
			snprintf(err, errlen, "no such cgroup on %s: %s", host, path);
		return STORE_ENOTFOUND;
	}
	return STORE_OK;
}

int store_cgroups_at(PGconn *c, int32_t host_id, int64_t ts, uint32_t **ids, size_t *n, char *err,
		     size_t errlen)
{
	char hid[16], t[24];
	const char *p[2] = { hid, t };
	PGresult *r;

	*ids = NULL;
	*n = 0;
	snprintf(hid, sizeof(hid), "%d", host_id);
	snprintf(t, sizeof(t), "%lld", (long long)ts);
	int rc = store_q(c, "SELECT c FROM samples WHERE host_id = $1 AND ts_ms = $2", 2, p, 1, &r,
			 "read the last sample", err, errlen);
	if (rc != STORE_OK)
		return rc;
	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) {
		const uint8_t *cg = (const uint8_t *)PQgetvalue(r, 0, 0);
		size_t len = (size_t)PQgetlength(r, 0, 0), pos = 0, seclen, cap = 0;
		uint32_t id = 0;
		const uint8_t *sec;
		while (codec_cg_next(cg, len, &pos, &id, &sec, &seclen) == 1) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 32;
				uint32_t *t2 = realloc(*ids, cap * sizeof(**ids));
				if (!t2) {
					PQclear(r);
					free(*ids);
					*ids = NULL;
					*n = 0;
					snprintf(err, errlen, "out of memory");
					return STORE_EINTERNAL;
				}
				*ids = t2;
			}
			(*ids)[(*n)++] = id;
		}
	}
	PQclear(r);
	return STORE_OK;
}

void idset_release(struct idset *s)
{
	free(s->id);
	memset(s, 0, sizeof(*s));
}

static int idset_add(struct idset *s, const struct sset *m)
{
	if (s->n + m->n > s->cap) {
		size_t cap = s->cap ? s->cap : 64;
		while (cap < s->n + m->n)
			cap *= 2;
		uint32_t *t = realloc(s->id, cap * sizeof(*t));
		if (!t)
			return -1;
		s->id = t;
		s->cap = cap;
	}
	for (size_t i = 0; i < m->n; i++)
		s->id[s->n++] = m->f[i].id;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorts and drops repeats. */
static void idset_finish(struct idset *s)
{
	size_t k = 0;

	qsort(s->id, s->n, sizeof(*s->id), cmp_u32);
	for (size_t i = 0; i < s->n; i++)
		if (k == 0 || s->id[k - 1] != s->id[i])
			s->id[k++] = s->id[i];
	s->n = k;
}

bool idset_has(const struct idset *s, uint32_t id)
{
	return s->n && bsearch(&id, s->id, s->n, sizeof(*s->id), cmp_u32) != NULL;
}

/* Adds the names of h's host level (cg NULL) or of cg's cgroups in h. */
static int add_state(struct idset *s, const struct hstate *h, const struct cgpath *cg)
{
	if (!cg)
		return idset_add(s, &h->m);
	for (size_t k = 0; k < h->ncg; k++)
		for (size_t j = 0; j < cg->n; j++)
			if (h->cg[k].id == cg->id[j] && idset_add(s, &h->cg[k].m) < 0)
				return -1;
	return 0;
}

int store_names_now(PGconn *c, int32_t host_id, int64_t host_last, const struct cgpath *cg,
		    struct idset *out, char *err, size_t errlen)
{
	struct hstate h;
	int64_t at[CGPATH_MAX + 1];
	size_t nat = 0;
	int rc = STORE_OK;

	memset(out, 0, sizeof(*out));
	hstate_init(&h);
	at[nat++] = host_last;
	if (cg) {
		/* a cgroup absent from the host's newest sample: its own newest one */
		uint32_t *ids;
		size_t n;
		if ((rc = store_cgroups_at(c, host_id, host_last, &ids, &n, err, errlen)) != STORE_OK)
			return rc;
		nat = 0;
		for (size_t j = 0; j < cg->n; j++) {
			bool present = false, seen = false;
			for (size_t k = 0; k < n; k++)
				present |= ids[k] == cg->id[j];
			int64_t t = present ? host_last : cg->last_ts[j];
			for (size_t k = 0; k < nat; k++)
				seen |= at[k] == t;
			if (!seen)
				at[nat++] = t;
		}
		free(ids);
	}
	h.host_id = host_id;
	for (size_t k = 0; k < nat; k++) {
		if ((rc = store_load_state(c, host_id, at[k], &h, err, errlen)) != STORE_OK)
			goto out;
		if (add_state(out, &h, cg) < 0)
			goto oom;
	}
	idset_finish(out);
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
	rc = STORE_EINTERNAL;
out:
	hstate_release(&h);
	if (rc != STORE_OK)
		idset_release(out);
	return rc;
}

int store_names_ever(PGconn *c, int32_t host_id, int64_t host_last, int64_t oldest_ms, const struct cgpath *cg,
		     struct idset *out, char *err, size_t errlen)
{
	char hs[16], last[24], oldest[24];
	const char *p[3] = { hs, last, oldest };
	PGresult *r = NULL;
	struct hstate h;
	int rc;

	if ((rc = store_names_now(c, host_id, host_last, cg, out, err, errlen)) != STORE_OK)
		return rc;
	snprintf(hs, sizeof(hs), "%d", host_id);
	snprintf(last, sizeof(last), "%lld", (long long)host_last);
	snprintf(oldest, sizeof(oldest), "%lld", (long long)oldest_ms);
	/* every day's first in-order row is a keyframe (store_put.c): one
	 * self-contained row per day, found through the (host_id, ts_ms)
	 * index of that day's partition; from the host's first boot, but
	 * not before the raw retention (a host booted years ago would
	 * otherwise probe a day per day since, all dropped) */
	rc = store_q(c, "SELECT s.d, s.c FROM generate_series(greatest((SELECT min(first_ts_ms) FROM boots "
		     "WHERE host_id = $1), $3::bigint) / 86400000, $2::bigint / 86400000) AS g(day) "
		     "CROSS JOIN LATERAL (SELECT d, c FROM samples WHERE host_id = $1 AND kf "
		     "AND ts_ms >= g.day * 86400000 AND ts_ms < (g.day + 1) * 86400000 "
		     "ORDER BY ts_ms LIMIT 1) s",
		     3, p, 1, &r, "read the host's daily keyframes", err, errlen);
	if (rc != STORE_OK) {
		idset_release(out);
		return rc;
	}
	hstate_init(&h);
	h.host_id = host_id;
	for (int i = 0; i < PQntuples(r); i++) {
		const uint8_t *d = (const uint8_t *)PQgetvalue(r, i, 0);
		const uint8_t *cgc = PQgetisnull(r, i, 1) ? NULL : (const uint8_t *)PQgetvalue(r, i, 1);
		hstate_reset(&h);
		if (hstate_apply_row(&h, d, (size_t)PQgetlength(r, i, 0), cgc,
				     cgc ? (size_t)PQgetlength(r, i, 1) : 0) < 0)
			continue;	/* unreadable: the names of the others still count */
		if (add_state(out, &h, cg) < 0) {
			snprintf(err, errlen, "out of memory");
			rc = STORE_EINTERNAL;
			break;
		}
	}
	hstate_release(&h);
	PQclear(r);
	if (rc != STORE_OK)
		idset_release(out);
	else
		idset_finish(out);
	return rc;
}
