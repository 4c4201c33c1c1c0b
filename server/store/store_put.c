/* store_put.c - ingest: store_put_samples, one transaction per batch.
 *
 * Order of work inside the transaction (docs/design.md):
 *   1. lock the batch's host rows in name order (creating new hosts): this
 *      serialises the ingest of one host across threads and servers, so
 *      its encoding state and duplicate check cannot race
 *   2. drop duplicates (inside the batch, and against stored rows when a
 *      sample is not newer than the host's newest)
 *   3. resolve cgroup and boot ids (INSERT ... ON CONFLICT, sorted; metric
 *      names were resolved before the transaction, see resolve_metrics)
 *   4. encode each fresh sample against the host's previous in-order row
 *   5. insert all rows, update the host rows and refresh cgroup last-seen
 *      times with one statement, run the hook
 *   6. COMMIT; only then publish ids and encoding states to the caches
 *
 * Several callers' requests may share one transaction: store_gc.c.
 */
#include "store_internal.h"
#include "store_health.h"
#include "store_rollup.h"

#include "dict.h"
#include "pgarr.h"
#include "pgbin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item {
	const struct sample *s;
	size_t idx;		/* position in the combined batch: request order, then
				 * the caller's order, so the first copy stands */
	int req;		/* index of the request it came from */
	int host;		/* index into the batch's hosts */
	bool dup;
	int boot;
};

struct hreq {
	const char *name;
	int32_t id;
	int64_t max_ts;		/* newest stored ts; INT64_MIN: none */
	char *boot_id;		/* hosts.boot_id, owned */
	size_t first, end;	/* items[first..end) are this host's */
	struct hstate st;
	size_t nfresh;
	const struct sample *newest, *oldest;
};

struct cgpend {
	int32_t host_id;
	int version;
	const char *path;	/* borrowed from a sample */
	uint32_t id;
	int64_t touch;		/* newest ts it appeared in, to write; INT64_MIN: none */
};

struct put {
	struct store *st;
	PGconn *c;
	char *err;
	size_t errlen;
	struct item *items;
	size_t n;
	struct hreq *hosts;
	size_t nh;
	struct cgpend *cgs;	/* cgroups of fresh samples */
	size_t ncgs, capcgs;
	struct rollup_acc roll;	/* 5-minute rollups of the fresh in-order samples */
};

static int oom(struct put *p)
{
	snprintf(p->err, p->errlen, "out of memory");
	return STORE_EINTERNAL;
}

/* ---- 1. hosts ---- */

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = strcmp(x->s->host, y->s->host);
	if (c)
		return c;
	if (x->s->ts_ms != y->s->ts_ms)
		return x->s->ts_ms < y->s->ts_ms ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static struct hreq *find_host(struct put *p, const char *name)
{
	size_t lo = 0, hi = p->nh;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(p->hosts[mid].name, name);
		if (c == 0)
			return &p->hosts[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Begins the transaction and locks the rows of names (a text[] literal),
 * recording id, newest ts and boot_id. Returns how many rows were locked,
 * or -1 with *rc set. */
static int lock_hosts(struct put *p, const char *names, int *rc)
{
	PGresult *r;
	const char *prm[1] = { names };

	/* opens the transaction in the same round trip */
	*rc = store_q_begin(p->c, "SELECT id, name, last_ts_ms, boot_id FROM hosts WHERE name = ANY($1::text[]) "
			    "ORDER BY name COLLATE \"C\" FOR UPDATE", 1, prm, 0, &r, "lock hosts", p->err, p->errlen);
	if (*rc != STORE_OK)
		return -1;
	int n = PQntuples(r);
	for (int i = 0; i < n; i++) {
		struct hreq *h = find_host(p, PQgetvalue(r, i, 1));
		if (!h)
			continue;
		h->id = (int32_t)strtol(PQgetvalue(r, i, 0), NULL, 10);
		h->max_ts = PQgetisnull(r, i, 2) ? INT64_MIN : strtoll(PQgetvalue(r, i, 2), NULL, 10);
		free(h->boot_id);
		h->boot_id = NULL;
		if (!PQgetisnull(r, i, 3) && !(h->boot_id = strdup(PQgetvalue(r, i, 3)))) {
			PQclear(r);
			*rc = oom(p);
			return -1;
		}
	}
	PQclear(r);
	return n;
}

/* Begins the transaction and locks the batch's host rows. Hosts seen
 * for the first time are first added in a separate, autocommitted
 * statement and the transaction restarted: inserting them inside it
 * would lock new rows out of name order and deadlock against another
 * batch that locks them as existing rows. A host row without samples is
 * invisible to the API (samples = 0), so a failed request leaves nothing
 * anyone sees. */
static int resolve_hosts(struct put *p)
{
	struct cbuf all, missing;
	int rc = STORE_OK;

	cbuf_init(&all);
	cbuf_init(&missing);
	if (arr_begin(&all) < 0 || arr_begin(&missing) < 0)
		goto nomem;
	for (size_t i = 0; i < p->nh; i++)
		if (arr_text(&all, p->hosts[i].name) < 0)
			goto nomem;
	if (arr_end(&all) < 0)
		goto nomem;
	if (lock_hosts(p, (const char *)all.p, &rc) < 0)
		goto out;
	size_t nmiss = 0;
	for (size_t i = 0; i < p->nh; i++) {
		if (p->hosts[i].id)
			continue;
		if (arr_text(&missing, p->hosts[i].name) < 0)
			goto nomem;
		nmiss++;
	}
	if (!nmiss)
		goto out;
	if (arr_end(&missing) < 0)
		goto nomem;
	const char *prm[1] = { (const char *)missing.p };
	if ((rc = store_q(p->c, "ROLLBACK", 0, NULL, 0, NULL, "roll back", p->err, p->errlen)) != STORE_OK ||
	    (rc = store_q(p->c, "INSERT INTO hosts (name) SELECT x FROM unnest($1::text[]) AS x "
			  "WHERE NOT EXISTS (SELECT 1 FROM hosts h WHERE h.name = x) "
			  "ORDER BY x COLLATE \"C\" ON CONFLICT (name) DO NOTHING",
			  1, prm, 0, NULL, "add hosts", p->err, p->errlen)) != STORE_OK)
		goto out;
	for (size_t i = 0; i < p->nh; i++)
		p->hosts[i].id = 0;
	if (lock_hosts(p, (const char *)all.p, &rc) < 0)
		goto out;
	for (size_t i = 0; i < p->nh; i++) {
		if (!p->hosts[i].id) {
			snprintf(p->err, p->errlen, "could not add host %s", p->hosts[i].name);
			rc = STORE_EINTERNAL;
			goto out;
		}
	}
	goto out;
nomem:
	rc = oom(p);
out:
	cbuf_release(&all);
	cbuf_release(&missing);
	return rc;
}

/* ---- 2. duplicates already stored ---- */

static int check_stored(struct put *p)
{
	struct cbuf hids, tss;
	size_t nlate = 0;
	int rc = STORE_OK;
	PGresult *r = NULL;

	cbuf_init(&hids);
	cbuf_init(&tss);
	if (arr_begin(&hids) < 0 || arr_begin(&tss) < 0)
		goto nomem;
	for (size_t i = 0; i < p->n; i++) {
		struct item *it = &p->items[i];
		struct hreq *h = &p->hosts[it->host];
		if (it->dup || h->max_ts == INT64_MIN || it->s->ts_ms > h->max_ts)
			continue;
		if (arr_num(&hids, h->id) < 0 || arr_num(&tss, it->s->ts_ms) < 0)
			goto nomem;
		nlate++;
	}
	if (!nlate)
		goto out;
	if (arr_end(&hids) < 0 || arr_end(&tss) < 0)
		goto nomem;
	const char *prm[2] = { (const char *)hids.p, (const char *)tss.p };
	rc = store_q(p->c, "SELECT host_id, ts_ms FROM samples WHERE host_id = ANY($1::int[]) "
		     "AND ts_ms = ANY($2::bigint[])", 2, prm, 1, &r, "look for stored duplicates", p->err, p->errlen);
	if (rc != STORE_OK)
		goto out;
	for (int k = 0; k < PQntuples(r); k++) {
		int32_t hid = store_get_i32(r, k, 0);
		int64_t ts = store_get_i64(r, k, 1);
		for (size_t i = 0; i < p->n; i++) {
			struct item *it = &p->items[i];
			if (p->hosts[it->host].id == hid && it->s->ts_ms == ts)
				it->dup = true;
		}
	}
	PQclear(r);
	goto out;
nomem:
	rc = oom(p);
out:
	cbuf_release(&hids);
	cbuf_release(&tss);
	return rc;
}

/* ---- 3. ids ---- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Collects dict ids of m that have no database id yet. */
static int collect_missing(struct put *p, const struct sset *m, uint32_t **miss, size_t *n, size_t *cap)
{
	for (size_t i = 0; i < m->n; i++) {
		if (p->st->metric_db[m->f[i].id])
			continue;
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			uint32_t *t = realloc(*miss, ncap * sizeof(*t));
			if (!t)
				return -1;
			*miss = t;
			*cap = ncap;
		}
		(*miss)[(*n)++] = m->f[i].id;
	}
	return 0;
}

/* Gives every metric name of the batch a database id. Runs before the
 * ingest transaction, in its own short autocommitted statements: names are
 * a dictionary, not data, and committing them at once lets the ids be
 * published to the cache right away. New names are inserted in dictionary
 * order, so database ids usually grow with dictionary ids and translated
 * sets come out sorted without a sort. A race with another server
 * inserting the same names (unique violation, deadlock) is retried. */
static int resolve_metrics(struct put *p)
{
	uint32_t *miss = NULL;
	size_t n = 0, cap = 0;
	int rc = STORE_OK;
	struct cbuf names;
	PGresult *r = NULL;

	cbuf_init(&names);
	pthread_mutex_lock(&p->st->mu);
	for (size_t i = 0; i < p->n && rc == STORE_OK; i++) {
		const struct sample *s = p->items[i].s;
		if (p->items[i].dup)
			continue;
		if (collect_missing(p, &s->m, &miss, &n, &cap) < 0)
			rc = STORE_EINTERNAL;
		for (size_t k = 0; k < s->ncg && rc == STORE_OK; k++)
			if (collect_missing(p, &s->cg[k].m, &miss, &n, &cap) < 0)
				rc = STORE_EINTERNAL;
	}
	pthread_mutex_unlock(&p->st->mu);
	if (rc != STORE_OK)
		goto nomem;
	if (!n)
		goto out;
	qsort(miss, n, sizeof(*miss), cmp_u32);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || miss[u - 1] != miss[i])
			miss[u++] = miss[i];
	n = u;
	if (arr_begin(&names) < 0)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		const char *name = dict_name(miss[i]);
		if (!name || arr_text(&names, name) < 0)
			goto nomem;
	}
	if (arr_end(&names) < 0)
		goto nomem;
	const char *prm[1] = { (const char *)names.p };
	for (int attempt = 0;; attempt++) {
		rc = store_q(p->c, "INSERT INTO metric_names (name) SELECT u.x FROM unnest($1::text[]) "
			     "WITH ORDINALITY AS u(x, o) WHERE NOT EXISTS (SELECT 1 FROM metric_names m "
			     "WHERE m.name = u.x) ORDER BY u.o ON CONFLICT (name) DO NOTHING", 1, prm, 0, NULL,
			     "add metric names", p->err, p->errlen);
		if (rc != STORE_EINTERNAL || attempt == 2)
			break;
	}
	if (rc != STORE_OK)
		goto out;
	rc = store_q(p->c, "SELECT id, name FROM metric_names WHERE name = ANY($1::text[])", 1, prm, 0, &r,
		     "look up metric names", p->err, p->errlen);
	if (rc != STORE_OK)
		goto out;
	size_t found = 0;
	pthread_mutex_lock(&p->st->mu);
	for (int i = 0; i < PQntuples(r); i++) {
		uint32_t key = dict_lookup(PQgetvalue(r, i, 1));
		if (!key)
			continue;
		p->st->metric_db[key] = (int32_t)strtol(PQgetvalue(r, i, 0), NULL, 10);
		found++;
	}
	pthread_mutex_unlock(&p->st->mu);
	PQclear(r);
	if (found < n) {
		snprintf(p->err, p->errlen, "could not add metric names");
		rc = STORE_EINTERNAL;
	}
	goto out;
nomem:
	rc = oom(p);
out:
	free(miss);
	cbuf_release(&names);
	return rc;
}

static int cmp_cgpend(const void *a, const void *b)
{
	const struct cgpend *x = a, *y = b;
	if (x->host_id != y->host_id)
		return x->host_id < y->host_id ? -1 : 1;
	if (x->version != y->version)
		return x->version < y->version ? -1 : 1;
	return strcmp(x->path, y->path);
}

static struct cgpend *find_cg(struct put *p, int32_t host_id, int version, const char *path)
{
	struct cgpend key = { .host_id = host_id, .version = version, .path = path };
	return bsearch(&key, p->cgs, p->ncgs, sizeof(*p->cgs), cmp_cgpend);
}

/* Lists the distinct cgroups of fresh samples with their newest ts, then
 * resolves the ids that the cache does not know. */
static int resolve_cgroups(struct put *p)
{
	struct cbuf hid, ver, path, ts;
	size_t nmiss = 0;
	int rc = STORE_OK;
	PGresult *r = NULL;

	cbuf_init(&hid);
	cbuf_init(&ver);
	cbuf_init(&path);
	cbuf_init(&ts);
	for (size_t i = 0; i < p->n; i++) {
		const struct item *it = &p->items[i];
		if (it->dup)
			continue;
		for (size_t k = 0; k < it->s->ncg; k++) {
			if (p->ncgs == p->capcgs) {
				size_t ncap = p->capcgs ? p->capcgs * 2 : 64;
				struct cgpend *t = realloc(p->cgs, ncap * sizeof(*t));
				if (!t)
					goto nomem;
				p->cgs = t;
				p->capcgs = ncap;
			}
			p->cgs[p->ncgs++] = (struct cgpend){ p->hosts[it->host].id, it->s->cg[k].version,
							      it->s->cg[k].path, 0, it->s->ts_ms };
		}
	}
	if (!p->ncgs)
		goto out;
	qsort(p->cgs, p->ncgs, sizeof(*p->cgs), cmp_cgpend);
	size_t u = 0;
	for (size_t i = 0; i < p->ncgs; i++) {
		if (u && cmp_cgpend(&p->cgs[u - 1], &p->cgs[i]) == 0) {
			if (p->cgs[i].touch > p->cgs[u - 1].touch)
				p->cgs[u - 1].touch = p->cgs[i].touch;
			continue;
		}
		p->cgs[u++] = p->cgs[i];
	}
	p->ncgs = u;
	if (arr_begin(&hid) < 0 || arr_begin(&ver) < 0 || arr_begin(&path) < 0 ||
	    arr_begin(&ts) < 0)
		goto nomem;
	for (size_t i = 0; i < p->ncgs; i++) {
		struct cgpend *g = &p->cgs[i];
		int64_t touched;
		g->id = cgcache_get(p->st->cgs, g->host_id, g->version, g->path, &touched);
		if (g->id && touched >= g->touch - STORE_CG_TOUCH_MS)
			g->touch = INT64_MIN;	/* fresh enough */
		if (g->id)
			continue;
		if (arr_num(&hid, g->host_id) < 0 || arr_num(&ver, g->version) < 0 ||
		    arr_text(&path, g->path) < 0 || arr_num(&ts, g->touch) < 0)
			goto nomem;
		nmiss++;
	}
	if (!nmiss)
		goto out;
	if (arr_end(&hid) < 0 || arr_end(&ver) < 0 || arr_end(&path) < 0 || arr_end(&ts) < 0)
		goto nomem;
	const char *prm[4] = { (const char *)hid.p, (const char *)ver.p, (const char *)path.p, (const char *)ts.p };
	/* only rows that do not exist yet, so identity values are not burnt */
	rc = store_q(p->c, "INSERT INTO cgroups (host_id, version, path, first_ts_ms, last_ts_ms) "
		     "SELECT u.h, u.v, u.p, u.t, u.t FROM unnest($1::int[], $2::smallint[], $3::text[], $4::bigint[]) "
		     "AS u(h, v, p, t) WHERE NOT EXISTS (SELECT 1 FROM cgroups g WHERE g.host_id = u.h AND "
		     "g.version = u.v AND g.path = u.p) ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING",
		     4, prm, 0, NULL, "add cgroups", p->err, p->errlen);
	if (rc != STORE_OK)
		goto out;
	rc = store_q(p->c, "SELECT g.id, g.host_id, g.version, g.path, g.last_ts_ms FROM cgroups g "
		     "JOIN unnest($1::int[], $2::smallint[], $3::text[]) AS u(h, v, p) "
		     "ON g.host_id = u.h AND g.version = u.v AND g.path = u.p",
		     3, prm, 0, &r, "look up cgroups", p->err, p->errlen);
	if (rc != STORE_OK)
		goto out;
	for (int i = 0; i < PQntuples(r); i++) {
		struct cgpend *g = find_cg(p, (int32_t)strtol(PQgetvalue(r, i, 1), NULL, 10),
					   atoi(PQgetvalue(r, i, 2)), PQgetvalue(r, i, 3));
		if (!g)
			continue;
		g->id = (uint32_t)strtoul(PQgetvalue(r, i, 0), NULL, 10);
		if (strtoll(PQgetvalue(r, i, 4), NULL, 10) >= g->touch - STORE_CG_TOUCH_MS)
			g->touch = INT64_MIN;
	}
	PQclear(r);
	for (size_t i = 0; i < p->ncgs; i++) {
		if (!p->cgs[i].id) {
			snprintf(p->err, p->errlen, "could not add cgroup %s", p->cgs[i].path);
			rc = STORE_EINTERNAL;
			goto out;
		}
	}
	goto out;
nomem:
	rc = oom(p);
out:
	cbuf_release(&hid);
	cbuf_release(&ver);
	cbuf_release(&path);
	cbuf_release(&ts);
	return rc;
}

/* Boot number of boot_id for host h, creating it when new. */
static int resolve_boot(struct put *p, struct hreq *h, const char *boot_id, int64_t ts, int *boot)
{
	char hid[16], t[24];
	const char *prm[3] = { hid, boot_id, t };
	PGresult *r;

	if (!boot_id) {
		*boot = 0;
		return STORE_OK;
	}
	if (h->st.boot_id && strcmp(h->st.boot_id, boot_id) == 0) {
		*boot = h->st.boot;
		return STORE_OK;
	}
	snprintf(hid, sizeof(hid), "%d", h->id);
	snprintf(t, sizeof(t), "%lld", (long long)ts);
	int rc = store_q(p->c, "SELECT seq FROM boots WHERE host_id = $1 AND boot_id = $2", 2, prm, 0, &r,
			 "look up the boot", p->err, p->errlen);
	if (rc != STORE_OK)
		return rc;
	if (PQntuples(r) == 0) {
		/* numbered 1..32767 then around again: rates only need "differs
		 * from the previous sample's" */
		PQclear(r);
		rc = store_q(p->c, "INSERT INTO boots (host_id, boot_id, seq, first_ts_ms) "
			     "SELECT $1::int, $2::text, coalesce((SELECT seq FROM boots WHERE host_id = $1::int "
			     "ORDER BY first_ts_ms DESC LIMIT 1), 0) % 32767 + 1, $3::bigint RETURNING seq",
			     3, prm, 0, &r, "add a boot", p->err, p->errlen);
		if (rc != STORE_OK)
			return rc;
	}
	*boot = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	return STORE_OK;
}

/* ---- 4. encoding ---- */

static int cmp_field(const void *a, const void *b)
{
	uint32_t x = ((const struct sfield *)a)->id, y = ((const struct sfield *)b)->id;
	return (x > y) - (x < y);
}

/* Makes room for n fields in m (sample.h's growth rule aside: the store
 * fills sets of a known size). */
static int sset_reserve(struct sset *m, size_t n)
{
	if (n <= m->cap)
		return 0;
	struct sfield *f = realloc(m->f, n * sizeof(*f));
	if (!f)
		return -1;
	m->f = f;
	m->cap = n;
	return 0;
}

/* Translates m's dict ids to database ids into out (sorted by database
 * id). Called with st->mu held. Returns -1 when out of memory or a name
 * has no database id. */
static int translate(struct put *p, const struct sset *m, struct sset *out)
{
	bool sorted = true;

	out->n = 0;
	if (sset_reserve(out, m->n) < 0)
		return -1;
	for (size_t i = 0; i < m->n; i++) {
		int32_t id = p->st->metric_db[m->f[i].id];
		if (id <= 0)
			return -1;
		out->f[i].id = (uint32_t)id;
		out->f[i].v = m->f[i].v;
		sorted &= i == 0 || out->f[i - 1].id < (uint32_t)id;
	}
	out->n = m->n;
	if (!sorted)
		qsort(out->f, out->n, sizeof(*out->f), cmp_field);
	return 0;
}

static int cmp_cgstate(const void *a, const void *b)
{
	uint32_t x = ((const struct cgstate *)a)->id, y = ((const struct cgstate *)b)->id;
	return (x > y) - (x < y);
}

/* The sample s as a state (database ids), into cur (reusing its memory). */
static int sample_state(struct put *p, const struct hreq *h, const struct sample *s, struct hstate *cur)
{
	int rc = 0;

	pthread_mutex_lock(&p->st->mu);
	if (translate(p, &s->m, &cur->m) < 0)
		rc = -1;
	if (rc == 0 && s->ncg > cur->cgcap) {
		struct cgstate *t = realloc(cur->cg, s->ncg * sizeof(*t));
		if (t) {
			memset(t + cur->cgcap, 0, (s->ncg - cur->cgcap) * sizeof(*t));
			cur->cg = t;
			cur->cgcap = s->ncg;
		} else {
			rc = -1;
		}
	}
	cur->ncg = 0;
	for (size_t k = 0; rc == 0 && k < s->ncg; k++) {
		struct cgpend *g = find_cg(p, h->id, s->cg[k].version, s->cg[k].path);
		if (!g || translate(p, &s->cg[k].m, &cur->cg[k].m) < 0) {
			rc = -1;
			break;
		}
		cur->cg[k].id = g->id;
		cur->ncg++;
	}
	pthread_mutex_unlock(&p->st->mu);
	if (rc == 0 && cur->ncg > 1)
		qsort(cur->cg, cur->ncg, sizeof(*cur->cg), cmp_cgstate);
	return rc;
}

/* Encodes cur against base (NULL: self-contained) with the row header. */
static int encode_row(const struct hstate *cur, const struct hstate *base, uint64_t off,
		      struct cbuf *d, struct cbuf *c)
{
	struct codec_cgref stack[64], *cr = stack, *br = stack + 32;
	struct codec_cgref *heap = NULL;
	size_t nb = base ? base->ncg : 0;
	int rc = -1;

	d->len = 0;
	c->len = 0;
	if (cur->ncg > 32 || nb > 32) {
		if (!(heap = calloc(cur->ncg + nb + 1, sizeof(*heap))))
			return -1;
		cr = heap;
		br = heap + cur->ncg;
	}
	for (size_t i = 0; i < cur->ncg; i++)
		cr[i] = (struct codec_cgref){ cur->cg[i].id, cur->cg[i].m.f, cur->cg[i].m.n };
	for (size_t i = 0; i < nb; i++)
		br[i] = (struct codec_cgref){ base->cg[i].id, base->cg[i].m.f, base->cg[i].m.n };
	if (cbuf_put_uvarint(d, off) == 0 &&
	    codec_encode(d, cur->m.f, cur->m.n, base ? base->m.f : NULL, base ? base->m.n : 0) == 0 &&
	    codec_cg_encode(c, cr, cur->ncg, br, nb) == 0)
		rc = 0;
	free(heap);
	return rc;
}

static int sset_copy_into(struct sset *dst, const struct sset *src)
{
	if (sset_reserve(dst, src->n) < 0)
		return -1;
	if (src->n)
		memcpy(dst->f, src->f, src->n * sizeof(*src->f));
	dst->n = src->n;
	return 0;
}

/* Makes dst a copy of src's values (keeping host id, reusing memory). */
static int state_copy(struct hstate *dst, const struct hstate *src)
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
	return 0;
}

/* ---- 5. host rows and cgroup last-seen, written with the samples ---- */

/* Columns of the host-row update, one array each (see write_sql). */
enum { HU_ID, HU_FIRST, HU_LAST, HU_N, HU_NEWER, HU_BOOT, HU_KERNEL, HU_AGENT, HU_LABELS, HU_NCG, HU_COLS };

static int host_arrays(struct put *p, struct cbuf *a)
{
	for (size_t hi = 0; hi < p->nh; hi++) {
		struct hreq *h = &p->hosts[hi];
		if (!h->nfresh)
			continue;
		const struct sample *s = h->newest;
		char *labels = s->labels ? json_dumps(s->labels, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		/* newer: the newest fresh sample is the host's newest overall,
		 * so its descriptive fields win */
		bool newer = s->ts_ms == h->max_ts;
		int bad = arr_num(&a[HU_ID], h->id) | arr_num(&a[HU_FIRST], h->oldest->ts_ms) |
			  arr_num(&a[HU_LAST], s->ts_ms) | arr_num(&a[HU_N], (long long)h->nfresh) |
			  arr_sep(&a[HU_NEWER]) | cbuf_put(&a[HU_NEWER], newer ? "t" : "f", 1) |
			  arr_text_or_null(&a[HU_BOOT], s->boot_id) | arr_text_or_null(&a[HU_KERNEL], s->kernel) |
			  arr_text_or_null(&a[HU_AGENT], s->agent_version) |
			  arr_text(&a[HU_LABELS], labels ? labels : "{}") | arr_num(&a[HU_NCG], (long long)s->ncg);
		free(labels);
		if (bad || (s->labels && !labels))
			return -1;
	}
	return 0;
}

/* cgroups whose last_ts_ms is due for a refresh */
static int touch_arrays(struct put *p, struct cbuf *ids, struct cbuf *ts)
{
	for (size_t i = 0; i < p->ncgs; i++) {
		if (p->cgs[i].touch == INT64_MIN)
			continue;
		if (arr_num(ids, p->cgs[i].id) < 0 || arr_num(ts, p->cgs[i].touch) < 0)
			return -1;
	}
	return 0;
}

/* Every write of the transaction in one statement (one round trip): the
 * rows, the host rows, the cgroup last-seen times. */
static const char write_sql[] =
	"WITH s AS (INSERT INTO samples (host_id, boot, kf, ts_ms, d, c) SELECT * FROM "
	"unnest($1::int[], $2::smallint[], $3::bool[], $4::bigint[], $5::bytea[], $6::bytea[])), "
	"h AS (UPDATE hosts SET first_ts_ms = LEAST(coalesce(hosts.first_ts_ms, u.f), u.f), "
	"last_ts_ms = GREATEST(coalesce(hosts.last_ts_ms, u.l), u.l), samples = hosts.samples + u.n, "
	"boot_id = CASE WHEN u.newer THEN u.boot_id ELSE hosts.boot_id END, "
	"kernel = CASE WHEN u.newer THEN u.kernel ELSE hosts.kernel END, "
	"agent_version = CASE WHEN u.newer THEN u.agent_version ELSE hosts.agent_version END, "
	"labels = CASE WHEN u.newer THEN u.labels ELSE hosts.labels END, "
	"ncgroups = CASE WHEN u.newer THEN u.ncg ELSE hosts.ncgroups END "
	"FROM unnest($7::int[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bool[], $12::text[], "
	"$13::text[], $14::text[], $15::jsonb[], $16::int[]) "
	"AS u(id, f, l, n, newer, boot_id, kernel, agent_version, labels, ncg) WHERE hosts.id = u.id), "
	"g AS (UPDATE cgroups SET last_ts_ms = t.ts FROM unnest($17::int[], $18::bigint[]) AS t(id, ts) "
	"WHERE cgroups.id = t.id AND cgroups.last_ts_ms < t.ts) "
	"SELECT 1";

/* Encodes every fresh sample and writes the rows, the host rows and the
 * cgroup last-seen times with one statement. */
static int insert_rows(struct put *p)
{
	struct cbuf a_h, a_b, a_k, a_t, a_d, a_c, d, c;
	struct hstate cur;
	int rc = STORE_OK;
	size_t nrows = 0;

	struct cbuf more[HU_COLS + 2];	/* host update and cgroup touch arrays */

	hstate_init(&cur);
	struct cbuf *bufs[8] = { &a_h, &a_b, &a_k, &a_t, &a_d, &a_c, &d, &c };
	for (int i = 0; i < 8; i++)
		cbuf_init(bufs[i]);
	for (int i = 0; i < HU_COLS + 2; i++)
		cbuf_init(&more[i]);
	for (int i = 0; i < 4; i++)
		if (arr_begin(bufs[i]) < 0)
			goto nomem;
	/* the encoded rows go as binary bytea[] (pgbin.h) */
	if (pgbin_bytea_begin(&a_d) < 0 || pgbin_bytea_begin(&a_c) < 0)
		goto nomem;
	for (size_t hi = 0; hi < p->nh; hi++) {
		struct hreq *h = &p->hosts[hi];
		for (size_t i = h->first; i < h->end; i++) {
			struct item *it = &p->items[i];
			const struct sample *s = it->s;
			if (it->dup)
				continue;
			if ((rc = resolve_boot(p, h, s->boot_id, s->ts_ms, &it->boot)) != STORE_OK)
				goto out;
			if (sample_state(p, h, s, &cur) < 0)
				goto nomem;
			bool inorder = h->max_ts == INT64_MIN || s->ts_ms > h->max_ts;
			bool kf = false;
			const struct hstate *base = NULL;
			uint64_t off = 0;
			if (inorder) {
				kf = h->st.last_ts == INT64_MIN || h->st.last_ts != h->max_ts ||
				     h->st.chain >= STORE_KF_EVERY || store_day(h->st.last_ts) != store_day(s->ts_ms);
				if (!kf) {
					base = &h->st;
					off = (uint64_t)(s->ts_ms - h->st.last_ts);
				}
			}
			if (encode_row(&cur, base, off, &d, &c) < 0)
				goto nomem;
			if (arr_num(&a_h, h->id) < 0 || arr_num(&a_b, it->boot) < 0 ||
			    arr_sep(&a_k) < 0 || cbuf_put(&a_k, kf ? "t" : "f", 1) < 0 ||
			    arr_num(&a_t, s->ts_ms) < 0 || pgbin_bytea_add(&a_d, d.p, d.len) < 0 ||
			    pgbin_bytea_add(&a_c, s->ncg ? c.p : NULL, c.len) < 0)
				goto nomem;
			nrows++;
			h->nfresh++;
			if (!h->oldest || s->ts_ms < h->oldest->ts_ms)
				h->oldest = s;
			if (!h->newest || s->ts_ms > h->newest->ts_ms)
				h->newest = s;
			if (!inorder)
				continue;	/* late: not rolled up (docs/design.md "Rollups") */
			bool prev = h->st.last_ts != INT64_MIN && h->st.last_ts == h->max_ts;
			if (rollup_acc_add(&p->roll, h->id, s->ts_ms, it->boot, &cur.m, prev ? &h->st.m : NULL,
					   h->st.last_ts, h->st.boot) < 0)
				goto nomem;
			if (state_copy(&h->st, &cur) < 0)
				goto nomem;
			h->st.chain = kf ? 1 : h->st.chain + 1;
			h->st.last_ts = s->ts_ms;
			h->st.boot = it->boot;
			free(h->st.boot_id);
			h->st.boot_id = s->boot_id ? strdup(s->boot_id) : NULL;
			if (s->boot_id && !h->st.boot_id)
				goto nomem;
			h->max_ts = s->ts_ms;
		}
	}
	if (!nrows)
		goto out;
	for (int i = 0; i < HU_COLS + 2; i++)
		if (arr_begin(&more[i]) < 0)
			goto nomem;
	if (host_arrays(p, more) < 0 || touch_arrays(p, &more[HU_COLS], &more[HU_COLS + 1]) < 0)
		goto nomem;
	for (int i = 0; i < 4; i++)
		if (arr_end(bufs[i]) < 0)
			goto nomem;
	if (pgbin_bytea_end(&a_d) < 0 || pgbin_bytea_end(&a_c) < 0)
		goto nomem;
	for (int i = 0; i < HU_COLS + 2; i++)
		if (arr_end(&more[i]) < 0)
			goto nomem;
	const char *prm[6 + HU_COLS + 2] = { (const char *)a_h.p, (const char *)a_b.p, (const char *)a_k.p,
					     (const char *)a_t.p, (const char *)a_d.p, (const char *)a_c.p };
	int lens[6 + HU_COLS + 2] = { [4] = (int)a_d.len, [5] = (int)a_c.len };
	int fmts[6 + HU_COLS + 2] = { [4] = 1, [5] = 1 };
	for (int i = 0; i < HU_COLS + 2; i++)
		prm[6 + i] = (const char *)more[i].p;
	/* sent without waiting: the result comes back with the next statement
	 * (the detectors' lock) or COMMIT (store_sql.c) */
	rc = store_q_prep_send(p->c, STORE_PREP_WRITE, write_sql, 6 + HU_COLS + 2, prm, lens, fmts, 0,
			       "store samples", p->err, p->errlen);
	if (rc == STORE_OK)
		rc = rollup_acc_write(&p->roll, p->c, p->err, p->errlen);
	goto out;
nomem:
	rc = oom(p);
out:
	hstate_release(&cur);
	for (int i = 0; i < 8; i++)
		cbuf_release(bufs[i]);
	for (int i = 0; i < HU_COLS + 2; i++)
		cbuf_release(&more[i]);
	return rc;
}

/* ---- 6. publishing after COMMIT ---- */

static void publish(struct put *p)
{
	for (size_t i = 0; i < p->ncgs; i++) {
		const struct cgpend *g = &p->cgs[i];
		cgcache_set(p->st->cgs, g->host_id, g->version, g->path, g->id,
			    g->touch == INT64_MIN ? INT64_MIN : g->touch);
	}
	for (size_t hi = 0; hi < p->nh; hi++) {
		struct hreq *h = &p->hosts[hi];
		if (h->st.last_ts != INT64_MIN && h->st.last_ts == h->max_ts)
			hcache_put(p->st->hosts, &h->st);
	}
}

/* Loads each host's encoding state: from the cache when it matches the
 * newest stored row, else decoded from the database. */
static int load_states(struct put *p)
{
	for (size_t hi = 0; hi < p->nh; hi++) {
		struct hreq *h = &p->hosts[hi];
		bool any_new = false;
		for (size_t i = h->first; i < h->end; i++)
			any_new |= !p->items[i].dup && (h->max_ts == INT64_MIN || p->items[i].s->ts_ms > h->max_ts);
		hcache_take(p->st->hosts, h->id, &h->st);
		if (!any_new || h->max_ts == INT64_MIN || h->st.last_ts == h->max_ts)
			continue;
		int rc = store_load_state(p->c, h->id, h->max_ts, &h->st, p->err, p->errlen);
		if (rc != STORE_OK)
			return rc;
		if (h->st.last_ts != INT64_MIN && h->boot_id && !(h->st.boot_id = strdup(h->boot_id)))
			return oom(p);
	}
	return STORE_OK;
}

static int group_hosts(struct put *p)
{
	for (size_t i = 0; i < p->n; i++) {
		if (i == 0 || strcmp(p->items[i].s->host, p->items[i - 1].s->host) != 0) {
			struct hreq *h = &p->hosts[p->nh++];
			memset(h, 0, sizeof(*h));
			h->name = p->items[i].s->host;
			h->first = i;
			h->max_ts = INT64_MIN;
			hstate_init(&h->st);
		} else if (p->items[i].s->ts_ms == p->items[i - 1].s->ts_ms) {
			p->items[i].dup = true;	/* the first copy in the batch stands */
		}
		p->items[i].host = (int)(p->nh - 1);
		p->hosts[p->nh - 1].end = i + 1;
	}
	return STORE_OK;
}

static int collect_days(struct put *p, int64_t **days, size_t *nd)
{
	*days = malloc(p->n * sizeof(**days));
	*nd = 0;
	if (!*days)
		return oom(p);
	for (size_t i = 0; i < p->n; i++) {
		int64_t d = store_day(p->items[i].s->ts_ms);
		bool seen = false;
		for (size_t k = 0; k < *nd && !seen; k++)
			seen = (*days)[k] == d;
		if (!seen)
			(*days)[(*nd)++] = d;
	}
	return STORE_OK;
}

/* ---- one transaction over one or more requests ---- */

static bool same_hook(const struct store_tx_hook *a, const struct store_tx_hook *b)
{
	return a->fn == b->fn && a->ctx == b->ctx;
}

/* A hook says only -1: its statement's SQLSTATE tells a full disk or a
 * read-only database (retry later) from a bug. */
static int hook_failed(struct put *p)
{
	return PQstatus(p->c) == CONNECTION_OK && !store_unavailable_state(store_conn_fail_state(p->c))
		       ? STORE_EINTERNAL : STORE_EUNAVAIL;
}

/* Calls hk->heard with the hosts whose samples (of the requests carrying
 * hk) were all stored already. */
static int run_heard(struct put *p, struct putreq **reqs, const struct store_tx_hook *hk)
{
	const char **names = malloc((p->nh ? p->nh : 1) * sizeof(*names));
	size_t nh = 0;

	if (!names)
		return oom(p);

	for (size_t h = 0; h < p->nh; h++) {
		bool dup = false, fresh = false;
		for (size_t i = p->hosts[h].first; i < p->hosts[h].end; i++) {
			const struct store_tx_hook *ih = reqs[p->items[i].req]->hook;
			if (!ih || !same_hook(ih, hk))
				continue;
			dup |= p->items[i].dup;
			fresh |= !p->items[i].dup;
		}
		if (dup && !fresh)
			names[nh++] = p->hosts[h].name;
	}
	int rc = nh ? store_pipe_finish(p->c, NULL, p->err, p->errlen) : STORE_OK;
	if (nh && rc == STORE_OK && hk->heard(hk->ctx, p->c, names, nh, p->err, p->errlen) != 0)
		rc = hook_failed(p);
	free(names);
	return rc;
}

/* Calls each distinct hook once with the fresh samples of the requests
 * that carry it, in (host, ts) order. */
static int run_hooks(struct put *p, struct putreq **reqs, size_t nreq, const struct sample **fresh)
{
	for (size_t r = 0; r < nreq; r++) {
		const struct store_tx_hook *hk = reqs[r]->hook;
		bool seen = false;
		if (!hk || !hk->fn)
			continue;
		for (size_t q = 0; q < r && !seen; q++)
			seen = reqs[q]->hook && same_hook(reqs[q]->hook, hk);
		if (seen)
			continue;
		size_t nf = 0;
		for (size_t i = 0; i < p->n; i++) {
			const struct item *it = &p->items[i];
			const struct store_tx_hook *ih = reqs[it->req]->hook;
			if (!it->dup && ih && same_hook(ih, hk))
				fresh[nf++] = it->s;
		}
		int rc;
		if (!hk->pipelined && (rc = store_pipe_finish(p->c, NULL, p->err, p->errlen)) != STORE_OK)
			return rc;
		/* a hook says only -1: its statement's SQLSTATE tells a full
		 * disk or a read-only database (retry later) from a bug */
		if (nf && hk->fn(hk->ctx, p->c, fresh, nf, p->err, p->errlen) != 0)
			return hook_failed(p);
		if (hk->heard && (rc = run_heard(p, reqs, hk)) != STORE_OK)
			return rc;
	}
	return STORE_OK;
}

int store_run_tx(struct store *st, struct putreq **reqs, size_t nreq, bool *final, char *err, size_t errlen)
{
	struct put p = { .st = st, .err = err, .errlen = errlen };
	const struct sample **fresh = NULL;
	int64_t *days = NULL;
	size_t nd = 0;
	int rc;
	bool in_tx = false;

	*final = false;
	for (size_t r = 0; r < nreq; r++)
		p.n += reqs[r]->n;
	p.items = calloc(p.n, sizeof(*p.items));
	p.hosts = calloc(p.n, sizeof(*p.hosts));
	fresh = calloc(p.n, sizeof(*fresh));
	if (!p.items || !p.hosts || !fresh) {
		rc = oom(&p);
		goto out;
	}
	size_t k = 0;
	for (size_t r = 0; r < nreq; r++) {
		for (size_t i = 0; i < reqs[r]->n; i++, k++) {
			p.items[k].s = &reqs[r]->s[i];
			p.items[k].idx = k;
			p.items[k].req = (int)r;
		}
	}
	qsort(p.items, p.n, sizeof(*p.items), cmp_item);
	group_hosts(&p);
	if ((rc = collect_days(&p, &days, &nd)) != STORE_OK)
		goto out;
	if (!(p.c = db_pool_get(st->pool, STORE_POOL_WAIT_MS, err, errlen))) {
		*final = true;	/* no connection could be made: retrying now is pointless */
		rc = STORE_EUNAVAIL;
		goto out;
	}
	store_conn_fail_reset(p.c);
	if ((rc = store_ensure_partitions(st, p.c, days, nd, err, errlen)) != STORE_OK ||
	    (rc = rollup_ensure_partitions(st, p.c, days, nd, err, errlen)) != STORE_OK)
		goto out;
	if ((rc = resolve_metrics(&p)) != STORE_OK)
		goto out;
	rollup_acc_init(&p.roll, st);	/* after resolve_metrics: the batch's ids are known */
	in_tx = true;	/* resolve_hosts begins it */
	if ((rc = resolve_hosts(&p)) != STORE_OK || (rc = check_stored(&p)) != STORE_OK ||
	    (rc = load_states(&p)) != STORE_OK ||
	    (rc = resolve_cgroups(&p)) != STORE_OK || (rc = insert_rows(&p)) != STORE_OK ||
	    (rc = run_hooks(&p, reqs, nreq, fresh)) != STORE_OK)
		goto out;
	*final = true;	/* COMMIT sent: on failure its outcome is unknown */
	/* with the writes still in flight (store_sql.c): one round trip */
	rc = store_commit(p.c, err, errlen);
	in_tx = false;
	if (rc == STORE_OK) {
		publish(&p);
		for (size_t r = 0; r < nreq; r++)
			reqs[r]->nfresh = 0;
		for (size_t i = 0; i < p.n; i++)
			if (!p.items[i].dup)
				reqs[p.items[i].req]->nfresh++;
	}
out:
	if (p.c)
		store_pipe_finish(p.c, NULL, NULL, 0);	/* writes in flight when a step failed */
	/* /healthz and /metrics: do writes fail, and why (store_health.h) */
	store_health_note_write(rc, p.c ? store_conn_fail_state(p.c) : NULL, err);
	if (in_tx && PQstatus(p.c) == CONNECTION_OK && PQtransactionStatus(p.c) != PQTRANS_IDLE)
		PQclear(PQexec(p.c, "ROLLBACK"));
	if (p.c)
		db_pool_put(st->pool, p.c, rc == STORE_EUNAVAIL);
	for (size_t i = 0; p.hosts && i < p.nh; i++) {
		free(p.hosts[i].boot_id);
		hstate_release(&p.hosts[i].st);
	}
	free(p.items);
	free(p.hosts);
	free(p.cgs);
	rollup_acc_release(&p.roll);
	free(fresh);
	free(days);
	return rc;
}
