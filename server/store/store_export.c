/* store_export.c - reading a host's stored samples back whole (store.h,
 * store_export_*): every field of every sample, unknown counters, nulls and
 * cgroups included, decoded from the delta chains into struct sample.
 *
 * Rows are fetched in pages (EXPORT_PAGE rows, ts order) with a pooled
 * connection borrowed per page and given back at once, so a slow client
 * downloading a long range holds memory for one page and no connection
 * between pages. The chain state (the newest in-order row's values) is
 * carried from page to page. The first page starts at the delta chain's
 * keyframe at or before `since` (every UTC day's first in-order row is one,
 * docs/design.md), so every delta row read has its base.
 *
 * Strings beside the numbers: boot_id from the boots table (rows carry its
 * number), kernel, agent_version and labels from host_meta (schema
 * 020_host_meta.sql, one row per change), falling back to the hosts row.
 */
#include "store_internal.h"

#include "dict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT_PAGE 256

/* One host_meta row. */
struct xmeta {
	int64_t ts;
	char *kernel, *agent_version;	/* owned, NULL when absent */
	json_t *labels;			/* owned, NULL when absent or empty */
};

struct xboot {
	int seq;
	int64_t first_ts;
	char *boot_id;	/* owned */
};

struct xcg {
	uint32_t id;
	int version;
	char *path;	/* owned */
};

struct store_export {
	struct store *st;
	PGconn *conn;		/* the caller's connection (a take-over), or NULL: pooled */
	char host[HOST_NAME_MAXLEN + 1];
	int32_t hid;
	int64_t since, until;
	int64_t lower;		/* first page: rows at or after this */
	int64_t after;		/* later pages: rows after this ts */
	bool first_page, eof;
	/* database metric id -> name (index into names), reloaded when an
	 * unknown id shows up (ingest goes on while we read) */
	PGresult *names;
	int32_t *name_row;	/* by metric id; -1: unknown */
	uint32_t *dict_id;	/* by metric id; 0: not interned yet */
	size_t nids;
	struct xcg *cgs;	/* sorted by id */
	size_t ncgs;
	struct xboot *boots;
	size_t nboots;
	struct xmeta *meta;	/* sorted by ts */
	size_t nmeta;
	struct xmeta fallback;	/* the hosts row */
	/* the current page */
	PGresult *page;
	int row, nrows;
	struct hstate chain;	/* newest in-order row decoded so far (chain, boot kept) */
	struct hstate tmp;	/* a self-contained late row */
	bool keep_prev;		/* keep prev (a take-over's rollups need it) */
	struct hstate prev;	/* the in-order row before chain (last_ts INT64_MIN: none) */
	bool late;		/* the row last returned was a late one */
};

static int nomem(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return STORE_EINTERNAL;
}

static PGconn *conn_get(struct store_export *x, int *rc, char *err, size_t errlen)
{
	/* a take-over's replay reads on its transaction's connection; an
	 * export may read from the --read-db standby */
	if (x->conn) {
		*rc = STORE_OK;
		return x->conn;
	}
	return store_read_get(x->st, rc, err, errlen);
}

static void conn_put(struct store_export *x, PGconn *c, int rc)
{
	if (c != x->conn)
		store_read_put(x->st, c, rc);
}

static void xmeta_release(struct xmeta *m)
{
	free(m->kernel);
	free(m->agent_version);
	json_decref(m->labels);
	memset(m, 0, sizeof(*m));
}

/* Fills m from text columns k, a, l (labels as JSON text) of row i. */
static int xmeta_fill(struct xmeta *m, const PGresult *r, int i, int k, int a, int l)
{
	memset(m, 0, sizeof(*m));
	if (!PQgetisnull(r, i, k) && !(m->kernel = strdup(PQgetvalue(r, i, k))))
		return -1;
	if (!PQgetisnull(r, i, a) && !(m->agent_version = strdup(PQgetvalue(r, i, a))))
		return -1;
	if (!PQgetisnull(r, i, l)) {
		json_t *j = json_loads(PQgetvalue(r, i, l), 0, NULL);
		if (!j)
			return -1;
		if (json_is_object(j) && json_object_size(j) > 0)
			m->labels = j;
		else
			json_decref(j);
	}
	return 0;
}

static int load_names(struct store_export *x, PGconn *c, char *err, size_t errlen)
{
	PGresult *r;
	int rc = store_q(c, "SELECT id, name FROM metric_names ORDER BY id", 0, NULL, 0, &r,
			 "read metric names", err, errlen);
	if (rc != STORE_OK)
		return rc;
	int n = PQntuples(r);
	size_t maxid = n ? (size_t)strtoul(PQgetvalue(r, n - 1, 0), NULL, 10) : 0;
	int32_t *rows = malloc((maxid + 1) * sizeof(*rows));
	uint32_t *ids = calloc(maxid + 1, sizeof(*ids));
	if (!rows || !ids) {
		free(rows);
		free(ids);
		PQclear(r);
		return nomem(err, errlen);
	}
	for (size_t i = 0; i <= maxid; i++)
		rows[i] = -1;
	for (int i = 0; i < n; i++) {
		size_t id = (size_t)strtoul(PQgetvalue(r, i, 0), NULL, 10);
		if (id <= maxid)
			rows[id] = i;
	}
	PQclear(x->names);
	free(x->name_row);
	free(x->dict_id);
	x->names = r;
	x->name_row = rows;
	x->dict_id = ids;
	x->nids = maxid + 1;
	return STORE_OK;
}

static int cmp_xcg(const void *a, const void *b)
{
	uint32_t p = ((const struct xcg *)a)->id, q = ((const struct xcg *)b)->id;
	return (p > q) - (p < q);
}

static void free_cgs(struct store_export *x)
{
	for (size_t i = 0; i < x->ncgs; i++)
		free(x->cgs[i].path);
	free(x->cgs);
	x->cgs = NULL;
	x->ncgs = 0;
}

static void free_boots(struct store_export *x)
{
	for (size_t i = 0; i < x->nboots; i++)
		free(x->boots[i].boot_id);
	free(x->boots);
	x->boots = NULL;
	x->nboots = 0;
}

/* The host's cgroups and boots (small tables; reloaded when a row names one
 * created after the last load). */
static int load_host_tables(struct store_export *x, PGconn *c, char *err, size_t errlen)
{
	char hid[16];
	const char *prm[1] = { hid };
	PGresult *r;
	int rc;

	snprintf(hid, sizeof(hid), "%d", x->hid);
	rc = store_q(c, "SELECT id, version, path FROM cgroups WHERE host_id = $1", 1, prm, 0, &r,
		     "read the host's cgroups", err, errlen);
	if (rc != STORE_OK)
		return rc;
	free_cgs(x);
	int n = PQntuples(r);
	if (n && !(x->cgs = calloc((size_t)n, sizeof(*x->cgs)))) {
		PQclear(r);
		return nomem(err, errlen);
	}
	for (int i = 0; i < n; i++) {
		struct xcg *g = &x->cgs[x->ncgs];
		g->id = (uint32_t)strtoul(PQgetvalue(r, i, 0), NULL, 10);
		g->version = atoi(PQgetvalue(r, i, 1));
		if (!(g->path = strdup(PQgetvalue(r, i, 2)))) {
			PQclear(r);
			return nomem(err, errlen);
		}
		x->ncgs++;
	}
	PQclear(r);
	if (x->ncgs > 1)
		qsort(x->cgs, x->ncgs, sizeof(*x->cgs), cmp_xcg);

	rc = store_q(c, "SELECT seq, first_ts_ms, boot_id FROM boots WHERE host_id = $1 ORDER BY first_ts_ms",
		     1, prm, 0, &r, "read the host's boots", err, errlen);
	if (rc != STORE_OK)
		return rc;
	free_boots(x);
	n = PQntuples(r);
	if (n && !(x->boots = calloc((size_t)n, sizeof(*x->boots)))) {
		PQclear(r);
		return nomem(err, errlen);
	}
	for (int i = 0; i < n; i++) {
		struct xboot *b = &x->boots[x->nboots];
		b->seq = atoi(PQgetvalue(r, i, 0));
		b->first_ts = strtoll(PQgetvalue(r, i, 1), NULL, 10);
		if (!(b->boot_id = strdup(PQgetvalue(r, i, 2)))) {
			PQclear(r);
			return nomem(err, errlen);
		}
		x->nboots++;
	}
	PQclear(r);
	return STORE_OK;
}

static int load_meta(struct store_export *x, PGconn *c, char *err, size_t errlen)
{
	char hid[16];
	const char *prm[1] = { hid };
	PGresult *r;

	snprintf(hid, sizeof(hid), "%d", x->hid);
	int rc = store_q(c, "SELECT ts_ms, kernel, agent_version, labels::text FROM host_meta "
			 "WHERE host_id = $1 ORDER BY ts_ms", 1, prm, 0, &r, "read the host's history", err, errlen);
	if (rc != STORE_OK)
		return rc;
	int n = PQntuples(r);
	if (n && !(x->meta = calloc((size_t)n, sizeof(*x->meta)))) {
		PQclear(r);
		return nomem(err, errlen);
	}
	for (int i = 0; i < n; i++) {
		struct xmeta *m = &x->meta[x->nmeta++];
		if (xmeta_fill(m, r, i, 1, 2, 3) < 0) {
			PQclear(r);
			return nomem(err, errlen);
		}
		m->ts = strtoll(PQgetvalue(r, i, 0), NULL, 10);
	}
	PQclear(r);
	rc = store_q(c, "SELECT kernel, agent_version, labels::text FROM hosts WHERE id = $1", 1, prm, 0, &r,
		     "read the host", err, errlen);
	if (rc != STORE_OK)
		return rc;
	if (PQntuples(r) == 1 && xmeta_fill(&x->fallback, r, 0, 0, 1, 2) < 0) {
		PQclear(r);
		return nomem(err, errlen);
	}
	PQclear(r);
	return STORE_OK;
}

/* Opens a cursor on c (NULL: pooled connections) for host host_id. */
static int export_open(struct store *st, PGconn *conn, const char *host, int32_t host_id, int64_t since_ms,
		       int64_t until_ms, struct store_export **out, char *err, size_t errlen)
{
	struct store_export *x;
	int rc;

	*out = NULL;
	if (!host || strlen(host) > HOST_NAME_MAXLEN || until_ms < since_ms) {
		snprintf(err, errlen, "invalid export: need a host and since <= until");
		return STORE_EINVAL;
	}
	if (!(x = calloc(1, sizeof(*x))))
		return nomem(err, errlen);
	x->st = st;
	x->conn = conn;
	x->hid = host_id;
	snprintf(x->host, sizeof(x->host), "%s", host);
	x->since = since_ms;
	x->until = until_ms;
	x->first_page = true;
	hstate_init(&x->chain);
	hstate_init(&x->tmp);
	hstate_init(&x->prev);
	PGconn *c = conn_get(x, &rc, err, errlen);
	if (!c)
		goto fail;
	if ((!x->hid && (rc = store_host_id(c, host, &x->hid, NULL, err, errlen)) != STORE_OK) ||
	    (rc = load_names(x, c, err, errlen)) != STORE_OK ||
	    (rc = load_host_tables(x, c, err, errlen)) != STORE_OK ||
	    (rc = load_meta(x, c, err, errlen)) != STORE_OK)
		goto put;
	/* the chain's keyframe at or before since, within since's day */
	char hid[16], s[24], day0[24];
	const char *prm[3] = { hid, s, day0 };
	PGresult *r;
	snprintf(hid, sizeof(hid), "%d", x->hid);
	snprintf(s, sizeof(s), "%lld", (long long)since_ms);
	snprintf(day0, sizeof(day0), "%lld", (long long)(store_day(since_ms) * STORE_DAY_MS));
	rc = store_q(c, "SELECT coalesce((SELECT max(ts_ms) FROM samples WHERE host_id = $1 AND kf "
		     "AND ts_ms <= $2 AND ts_ms >= $3), $3)", 3, prm, 0, &r, "find the chain start", err, errlen);
	if (rc == STORE_OK) {
		x->lower = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		PQclear(r);
	}
put:
	conn_put(x, c, rc);
	if (rc == STORE_OK) {
		*out = x;
		return STORE_OK;
	}
fail:
	store_export_close(x);
	return rc;
}

int store_export_open(struct store *st, const char *host, int64_t since_ms, int64_t until_ms,
		      struct store_export **out, char *err, size_t errlen)
{
	return export_open(st, NULL, host, 0, since_ms, until_ms, out, err, errlen);
}

int store_replay_open(struct store *st, PGconn *c, const char *host, int32_t host_id, int64_t since_ms,
		      int64_t until_ms, struct store_export **out, char *err, size_t errlen)
{
	int rc = export_open(st, c, host, host_id, since_ms, until_ms, out, err, errlen);
	if (rc == STORE_OK)
		(*out)->keep_prev = true;
	return rc;
}

void store_replay_row(const struct store_export *x, bool *late, const struct hstate **cur,
		      const struct hstate **prev)
{
	*late = x->late;
	*cur = x->late ? &x->tmp : &x->chain;
	*prev = x->prev.last_ts != INT64_MIN ? &x->prev : NULL;
}

struct hstate *store_replay_chain(struct store_export *x)
{
	return &x->chain;
}

void store_export_close(struct store_export *x)
{
	if (!x)
		return;
	PQclear(x->names);
	PQclear(x->page);
	free(x->name_row);
	free(x->dict_id);
	free_cgs(x);
	free_boots(x);
	for (size_t i = 0; i < x->nmeta; i++)
		xmeta_release(&x->meta[i]);
	free(x->meta);
	xmeta_release(&x->fallback);
	hstate_release(&x->chain);
	hstate_release(&x->tmp);
	hstate_release(&x->prev);
	free(x);
}

/* Fetches the next page of rows into x->page. */
static int fetch_page(struct store_export *x, char *err, size_t errlen)
{
	char hid[16], lo[24], hi[24], lim[16];
	const char *prm[4] = { hid, lo, hi, lim };
	int rc;

	PQclear(x->page);
	x->page = NULL;
	x->row = x->nrows = 0;
	snprintf(hid, sizeof(hid), "%d", x->hid);
	snprintf(lo, sizeof(lo), "%lld", (long long)(x->first_page ? x->lower : x->after));
	snprintf(hi, sizeof(hi), "%lld", (long long)x->until);
	snprintf(lim, sizeof(lim), "%d", EXPORT_PAGE);
	PGconn *c = conn_get(x, &rc, err, errlen);
	if (!c)
		return rc;
	rc = store_q(c, x->first_page ? "SELECT ts_ms, boot, kf, d, c FROM samples WHERE host_id = $1 "
		     "AND ts_ms >= $2 AND ts_ms <= $3 ORDER BY ts_ms LIMIT $4"
		     : "SELECT ts_ms, boot, kf, d, c FROM samples WHERE host_id = $1 "
		     "AND ts_ms > $2 AND ts_ms <= $3 ORDER BY ts_ms LIMIT $4",
		     4, prm, 1, &x->page, "read samples", err, errlen);
	conn_put(x, c, rc);
	if (rc != STORE_OK)
		return rc;
	x->first_page = false;
	x->nrows = PQntuples(x->page);
	/* the end is an empty page, not a short one: rows stored meanwhile
	 * (a live host) are still read */
	if (x->nrows == 0)
		x->eof = true;
	if (x->nrows)
		x->after = store_get_i64(x->page, x->nrows - 1, 0);
	return STORE_OK;
}

/* Reloads the lookup tables after a row named something created since
 * they were read. */
static int reload(struct store_export *x, char *err, size_t errlen)
{
	int rc;
	PGconn *c = conn_get(x, &rc, err, errlen);
	if (!c)
		return rc;
	if ((rc = load_names(x, c, err, errlen)) == STORE_OK)
		rc = load_host_tables(x, c, err, errlen);
	conn_put(x, c, rc);
	return rc;
}

/* Process dictionary id of database metric id, 0 when unknown. */
static uint32_t dict_of(struct store_export *x, uint32_t mid)
{
	if (mid >= x->nids || x->name_row[mid] < 0)
		return 0;
	if (!x->dict_id[mid]) {
		const char *name = PQgetvalue(x->names, x->name_row[mid], 1);
		uint32_t did = dict_intern(name, strlen(name));
		x->dict_id[mid] = did;
		if (did) {	/* the store's cache learns it too (rollups of a take-over) */
			pthread_mutex_lock(&x->st->mu);
			x->st->metric_db[did] = (int32_t)mid;
			pthread_mutex_unlock(&x->st->mu);
		}
	}
	return x->dict_id[mid];
}

static const struct xcg *find_xcg(const struct store_export *x, uint32_t id)
{
	struct xcg key = { .id = id };
	return x->ncgs ? bsearch(&key, x->cgs, x->ncgs, sizeof(*x->cgs), cmp_xcg) : NULL;
}

/* The boot_id of boot number seq at ts: numbers wrap after 32767 boots, so
 * the newest boot with that number that began at or before ts (else the
 * oldest with it). NULL for 0 (no boot_id) or an unknown number. */
static const char *boot_of(const struct store_export *x, int seq, int64_t ts)
{
	const char *best = NULL;
	for (size_t i = 0; seq && i < x->nboots; i++) {
		if (x->boots[i].seq != seq)
			continue;
		if (!best || x->boots[i].first_ts <= ts)
			best = x->boots[i].boot_id;
	}
	return best;
}

static const struct xmeta *meta_of(const struct store_export *x, int64_t ts)
{
	if (!x->nmeta)
		return &x->fallback;
	size_t lo = 0, hi = x->nmeta;	/* first row after ts */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x->meta[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &x->meta[lo ? lo - 1 : 0];
}

static int dupstr(char **dst, const char *src)
{
	*dst = NULL;
	return src && !(*dst = strdup(src)) ? -1 : 0;
}

/* Translates database ids of m into dictionary ids into out. Returns 0,
 * 1 when an id is unknown (reload and retry), -1 when out of memory or
 * the set is malformed. */
static int put_set(struct store_export *x, const struct sset *m, struct sset *out)
{
	for (size_t i = 0; i < m->n; i++) {
		uint32_t id = dict_of(x, m->f[i].id);
		if (!id)
			return 1;
		if (sset_add(out, id, m->f[i].v) < 0)
			return -1;
	}
	return sset_sort(out) < 0 ? -1 : 0;
}

/* Builds the sample of state h at ts into s. Same return as put_set. */
static int to_sample(struct store_export *x, const struct hstate *h, int64_t ts, int boot, struct sample *s)
{
	int rc;

	sample_release(s);
	snprintf(s->host, sizeof(s->host), "%s", x->host);
	s->ts_ms = ts;
	const struct xmeta *m = meta_of(x, ts);
	if (dupstr(&s->boot_id, boot_of(x, boot, ts)) < 0 || dupstr(&s->kernel, m->kernel) < 0 ||
	    dupstr(&s->agent_version, m->agent_version) < 0)
		return -1;
	if (m->labels && !(s->labels = json_deep_copy(m->labels)))
		return -1;
	if ((rc = put_set(x, &h->m, &s->m)) != 0)
		return rc;
	for (size_t i = 0; i < h->ncg; i++) {
		const struct xcg *g = find_xcg(x, h->cg[i].id);
		char *path;
		if (!g)
			return 1;
		if (!(path = strdup(g->path)))
			return -1;
		struct cgsample *cg = sample_add_cgroup(s, path, g->version);
		if (!cg)
			return -1;
		if ((rc = put_set(x, &h->cg[i].m, &cg->m)) != 0)
			return rc;
	}
	return 0;
}

int store_export_next(struct store_export *x, struct sample *s, char *err, size_t errlen)
{
	int rc;

	for (;;) {
		if (x->row >= x->nrows) {
			if (x->eof)
				return 0;
			if ((rc = fetch_page(x, err, errlen)) != STORE_OK)
				return rc;
			continue;
		}
		int i = x->row++;
		int64_t ts = store_get_i64(x->page, i, 0);
		int boot = store_get_i16(x->page, i, 1);
		bool kf = store_get_bool(x->page, i, 2);
		const uint8_t *d = (const uint8_t *)PQgetvalue(x->page, i, 3);
		size_t dlen = (size_t)PQgetlength(x->page, i, 3);
		const uint8_t *cg = PQgetisnull(x->page, i, 4) ? NULL : (const uint8_t *)PQgetvalue(x->page, i, 4);
		size_t clen = cg ? (size_t)PQgetlength(x->page, i, 4) : 0;
		const uint8_t *p = d;
		uint64_t off;
		struct hstate *h;

		if (codec_get_uvarint(&p, d + dlen, &off) < 0)
			goto corrupt;
		x->late = off == 0 && !kf;
		if (x->late) {
			/* a late row: self-contained, not a base for anything */
			h = &x->tmp;
		} else {
			/* a keyframe, or a delta on the newest in-order row */
			if (off != 0 && (x->chain.last_ts == INT64_MIN || (uint64_t)(ts - x->chain.last_ts) != off))
				goto corrupt;
			h = &x->chain;
			if (x->keep_prev && hstate_copy(&x->prev, &x->chain) < 0) {
				sample_release(s);
				return nomem(err, errlen);
			}
			x->chain.chain = kf ? 1 : x->chain.chain + 1;
			x->chain.boot = boot;
		}
		if (hstate_apply_row(h, d, dlen, cg, clen) < 0)
			goto corrupt;
		h->last_ts = ts;
		if (ts < x->since)
			continue;
		for (int attempt = 0;; attempt++) {
			rc = to_sample(x, h, ts, boot, s);
			if (rc < 0) {
				sample_release(s);
				return nomem(err, errlen);
			}
			if (rc == 0)
				return 1;
			if (attempt == 1)
				goto corrupt;
			if ((rc = reload(x, err, errlen)) != STORE_OK)
				return rc;
		}
corrupt:
		sample_release(s);
		snprintf(err, errlen, "could not decode the stored sample of %s at %lld", x->host, (long long)ts);
		return STORE_EINTERNAL;
	}
}
