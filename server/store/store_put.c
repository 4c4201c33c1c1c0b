/* store_put.c - ingest: store_put_samples, one transaction per batch.
 *
 * The hosts of a batch are owned by this server (store_own.c): their
 * encoding state, detector state and rollup cells are in memory. A
 * transaction (docs/design.md "Ingest"):
 *   1. checks the hosts' entries out (another transaction of this server
 *      with one of them waits); hosts the server does not hold, or lost to
 *      another server, are taken over and rebuilt from the database
 *      (store_take.c)
 *   2. drops duplicates (inside the batch, and against stored rows when a
 *      sample is not newer than the host's newest)
 *   3. updates each host's row WHERE its lease is this server's: that
 *      locks the row (one host at a time across servers) and proves that
 *      nobody wrote the host since this server's memory of it; a host
 *      another server took meanwhile rolls the transaction back, is taken
 *      back and the transaction runs again
 *   4. resolves cgroup and boot ids (INSERT ... ON CONFLICT, sorted; metric
 *      names were resolved before the transaction, see resolve_metrics)
 *   5. encodes each fresh sample against the host's previous in-order row,
 *      adds it to the host's rollup cells, inserts the rows, runs the hook
 *      (the detectors, on their in-memory state)
 *   6. COMMIT. A failure after step 5 began drops the hosts' memory: it is
 *      rebuilt from the database on next use.
 * The common case costs two round trips: the host updates (with BEGIN),
 * then the rows with COMMIT.
 *
 * Several callers' requests may share one transaction: store_gc.c.
 */
#include "store_internal.h"
#include "store_health.h"
#include "timeparse.h"

#include "dict.h"
#include "pgarr.h"
#include "pgbin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PUT_RETRY 1	/* store_run_tx's own code: run the transaction again */
#define PUT_TRIES 3

struct item {
	const struct sample *s;
	size_t idx;		/* position in the combined batch: request order, then
				 * the caller's order, so the first copy stands */
	int req;		/* index of the request it came from */
	int host;		/* index into the batch's hosts */
	bool dup_batch;		/* an earlier copy of (host, ts) is in the batch */
	bool dup;		/* not fresh: dup_batch, or stored already */
	int boot;
	uint32_t *cgid;		/* its cgroups' ids (into put.cgids) */
};

struct hreq {
	const char *name;
	struct own *e;		/* checked out */
	int32_t id;		/* e->host_id for this transaction */
	size_t first, end;	/* items[first..end) are this host's */
	size_t nfresh;
	const struct sample *newest, *oldest;	/* of the fresh samples */
	bool taken;		/* taken over in this try */
	bool newid;		/* its entry had no id yet */
	const struct item *last_in;	/* its newest in-order fresh sample, NULL: none */
	bool silent;
	struct host_lag lag;	/* e->lag after this transaction's arrival */
	PGresult *upd;		/* its row update's answer */
	char *labels;		/* the newest fresh sample's labels as compact JSON, sorted */
	bool meta;		/* its descriptive fields are new: a host_meta row was sent */
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
	struct own **owned;	/* the hosts' entries, in host order */
	struct cgpend *cgs;	/* cgroups of fresh samples the host's entry did not know */
	size_t ncgs, capcgs;
	uint32_t *cgids;	/* the items' cgroup ids */
	struct rollup_ctx rx;	/* the rollup slots' metric ids */
	bool mutated;		/* entries changed: a failure resets them */
	int64_t now_ms;		/* the samples' arrival (the server's clock) */
	int64_t ovr_version;	/* detector_overrides_version.v, -1 unknown */
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

/* Looks up the ids of the named hosts (a text[] literal) into their
 * entries; returns how many were found, or -1 with *rc set. */
static int lookup_ids(struct put *p, const char *names, int *rc)
{
	PGresult *r;
	const char *prm[1] = { names };

	*rc = store_q(p->c, "SELECT id, name FROM host_names WHERE name = ANY($1::text[])", 1, prm, 0, &r,
		      "look up hosts", p->err, p->errlen);
	if (*rc != STORE_OK)
		return -1;
	int n = PQntuples(r);
	for (int i = 0; i < n; i++) {
		struct hreq *h = find_host(p, PQgetvalue(r, i, 1));
		if (h)
			h->e->host_id = (int32_t)strtol(PQgetvalue(r, i, 0), NULL, 10);
	}
	PQclear(r);
	return n;
}

/* Gives every host of the batch whose entry has no id yet its id, adding
 * the hosts seen for the first time (autocommitted, before the
 * transaction: a host row without samples is invisible to the API, so a
 * failed request leaves nothing anyone sees). */
static int resolve_ids(struct put *p)
{
	struct cbuf names;
	size_t nmiss = 0;
	int rc = STORE_OK;

	cbuf_init(&names);
	if (arr_begin(&names) < 0)
		goto nomem;
	for (size_t i = 0; i < p->nh; i++) {
		if (p->hosts[i].e->host_id)
			continue;
		if (arr_text(&names, p->hosts[i].name) < 0)
			goto nomem;
		nmiss++;
	}
	if (!nmiss)
		goto out;
	if (arr_end(&names) < 0)
		goto nomem;
	for (size_t i = 0; i < p->nh; i++)
		p->hosts[i].newid = !p->hosts[i].e->host_id;
	int found = lookup_ids(p, (const char *)names.p, &rc);
	if (found < 0)
		goto out;
	/* the names seen for the first time get ids (two servers adding the
	 * same name race on host_names' key: one id wins) */
	const char *prm[1] = { (const char *)names.p };
	if ((size_t)found < nmiss &&
	    ((rc = store_q(p->c, HOST_NAMES_ADD_SQL, 1, prm, 0, NULL, "add hosts", p->err, p->errlen)) != STORE_OK ||
	     lookup_ids(p, (const char *)names.p, &rc) < 0))
		goto out;
	/* their rows, unless there (a host this server had not seen yet) */
	struct cbuf ids, nm;
	cbuf_init(&ids);
	cbuf_init(&nm);
	int bad = arr_begin(&ids) | arr_begin(&nm);
	for (size_t i = 0; i < p->nh && !bad; i++)
		if (p->hosts[i].newid && p->hosts[i].e->host_id)
			bad |= arr_num(&ids, p->hosts[i].e->host_id) | arr_text(&nm, p->hosts[i].name);
	bad |= arr_end(&ids) | arr_end(&nm);
	if (!bad) {
		const char *hp[2] = { (const char *)ids.p, (const char *)nm.p };
		rc = store_q(p->c, HOSTS_ADD_SQL, 2, hp, 0, NULL, "add hosts", p->err, p->errlen);
	}
	cbuf_release(&ids);
	cbuf_release(&nm);
	if (bad)
		goto nomem;
	if (rc != STORE_OK)
		goto out;
	for (size_t i = 0; i < p->nh; i++) {
		if (!p->hosts[i].e->host_id) {
			snprintf(p->err, p->errlen, "could not add host %s", p->hosts[i].name);
			rc = STORE_EINTERNAL;
			goto out;
		}
	}
	goto out;
nomem:
	rc = oom(p);
out:
	cbuf_release(&names);
	return rc;
}

/* Takes over the hosts whose entries are not valid (a host new to this
 * server, or one another server took meanwhile); the transaction is open. */
static int take_hosts(struct put *p)
{
	for (size_t i = 0; i < p->nh; i++) {
		struct hreq *h = &p->hosts[i];
		if (h->e->valid)
			continue;
		h->taken = true;
		int rc = store_take(p->st, p->c, h->e, p->err, p->errlen);
		if (rc == STORE_ENOTFOUND) {
			h->e->host_id = 0;	/* forgotten meanwhile: added again on the next try */
			return PUT_RETRY;
		}
		if (rc != STORE_OK)
			return rc;
	}
	return STORE_OK;
}

/* ---- 2. duplicates already stored ---- */

static int check_stored(struct put *p)
{
	struct cbuf hids, tss;
	size_t nlate = 0;
	int rc = STORE_OK;
	PGresult *r = NULL;

	for (size_t i = 0; i < p->n; i++)
		p->items[i].dup = p->items[i].dup_batch;
	cbuf_init(&hids);
	cbuf_init(&tss);
	if (arr_begin(&hids) < 0 || arr_begin(&tss) < 0)
		goto nomem;
	for (size_t i = 0; i < p->n; i++) {
		struct item *it = &p->items[i];
		struct hreq *h = &p->hosts[it->host];
		if (it->dup || h->e->max_ts == INT64_MIN || it->s->ts_ms > h->e->max_ts)
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

/* ---- 3. the host rows, under the lease ---- */

/* Each host's row gets its newest values WHERE the lease is ours, one
 * statement per host (a statement on Citus must stay on its host's shard;
 * on one PostgreSQL a set-based UPDATE ... FROM unnest got a plan 5 times
 * as costly per host as these). RETURNING silent for the hook, and the
 * overrides version (read here rather than by a statement of its own). */
static const char host_sql[] =
	"UPDATE hosts SET first_ts_ms = LEAST(coalesce(first_ts_ms, $3::bigint), $3::bigint), "
	"last_ts_ms = GREATEST(coalesce(last_ts_ms, $4::bigint), $4::bigint), samples = samples + $5::bigint, "
	"boot_id = CASE WHEN $6::bool THEN $7::text ELSE boot_id END, "
	"kernel = CASE WHEN $6::bool THEN $8::text ELSE kernel END, "
	"agent_version = CASE WHEN $6::bool THEN $9::text ELSE agent_version END, "
	"labels = coalesce($10::jsonb, labels), "
	"ncgroups = CASE WHEN $6::bool THEN $11::int ELSE ncgroups END, "
	"seen_ms = $12::bigint, lag_win_ms = $13::bigint, lag_min_ms = $14::bigint, lag_prev_ms = $15::bigint, "
	"lag_last_ms = $16::bigint, clock_bad_ms = $17::bigint "
	"WHERE id = $2::int AND lease = $1::bigint "
	"RETURNING silent, (SELECT v FROM detector_overrides_version)";

/* The arrival of a host whose samples were all stored already. */
static const char heard_sql[] =
	"UPDATE hosts SET seen_ms = greatest(seen_ms, $3::bigint) WHERE id = $2::int AND lease = $1::bigint "
	"RETURNING silent, (SELECT v FROM detector_overrides_version)";

static bool str_differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

/* Whether a sample's labels (NULL: none) are the ones the entry recorded:
 * compared as JSON, so that the usual sample (the same labels) costs no
 * serialisation. */
static bool labels_same(const struct own *e, const json_t *labels)
{
	if (!e->meta_known || !e->labels_j)
		return false;
	return labels ? json_equal(e->labels_j, (json_t *)labels) : json_object_size(e->labels_j) == 0;
}

static const char meta_sql[] =
	"INSERT INTO host_meta (host_id, ts_ms, kernel, agent_version, labels) "
	"VALUES ($1::int, $2::bigint, $3::text, $4::text, $5::jsonb) ON CONFLICT (host_id, ts_ms) DO UPDATE "
	"SET kernel = excluded.kernel, agent_version = excluded.agent_version, labels = excluded.labels";

/* Sends host h's row update (its result kept in h->upd), and a host_meta
 * row when its newest sample's descriptive fields differ from the last
 * ones recorded (a new kernel, agent or labels: rare). */
static int send_host(struct put *p, struct hreq *h, const char *lease)
{
	char id[16], first[24], last[24], n[24], ncg[16], seen[24], lw[24], lm[24], lp[24], ll[24], lb[24];
	const struct sample *s = h->newest;

	h->nfresh = 0;
	h->newest = h->oldest = NULL;
	for (size_t i = h->first; i < h->end; i++) {
		const struct sample *x = p->items[i].s;
		if (p->items[i].dup)
			continue;
		h->nfresh++;
		if (!h->oldest || x->ts_ms < h->oldest->ts_ms)
			h->oldest = x;
		if (!h->newest || x->ts_ms > h->newest->ts_ms)
			h->newest = x;
	}
	if (!h->nfresh) {
		/* every sample stored already (a re-post, a clock stepped back
		 * onto stored timestamps): the host was heard from all the
		 * same, or it would look silent while it posts; its clock
		 * window moves only with stored samples */
		snprintf(id, sizeof(id), "%d", h->id);
		snprintf(seen, sizeof(seen), "%lld", (long long)p->now_ms);
		const char *hp[3] = { lease, id, seen };
		return store_q_prep_keep(p->c, STORE_PREP_HEARD, heard_sql, 3, hp, NULL, NULL, 0, &h->upd,
					 "record the host's arrival", p->err, p->errlen);
	}
	s = h->newest;
	/* newer: the newest fresh sample is the host's newest overall, so its
	 * descriptive fields win */
	bool newer = h->e->max_ts == INT64_MIN || s->ts_ms > h->e->max_ts;
	const struct own *e = h->e;
	h->meta = newer && (!e->meta_known || str_differs(e->kernel, s->kernel) ||
			    str_differs(e->agent_version, s->agent_version) || !labels_same(e, s->labels));
	/* the labels as text only when they are recorded (rare): the row
	 * keeps its labels otherwise ($10 NULL) */
	free(h->labels);
	h->labels = NULL;
	if (h->meta && !(h->labels = s->labels ? json_dumps(s->labels, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}")))
		return oom(p);
	snprintf(id, sizeof(id), "%d", h->id);
	snprintf(first, sizeof(first), "%lld", (long long)h->oldest->ts_ms);
	snprintf(last, sizeof(last), "%lld", (long long)s->ts_ms);
	snprintf(n, sizeof(n), "%zu", h->nfresh);
	snprintf(ncg, sizeof(ncg), "%zu", s->ncg);
	/* the arrival: host_silent and clock_skew go by it (liveness.h) */
	h->lag = h->e->lag;
	if (p->st->hook.arrive)
		p->st->hook.arrive(p->st->hook.ctx, h->e->hs, p->now_ms, s->ts_ms, &h->lag);
	snprintf(seen, sizeof(seen), "%lld", (long long)p->now_ms);
	snprintf(lw, sizeof(lw), "%lld", (long long)h->lag.win_ms);
	snprintf(lm, sizeof(lm), "%lld", (long long)h->lag.min_ms);
	snprintf(lp, sizeof(lp), "%lld", (long long)h->lag.prev_ms);
	snprintf(ll, sizeof(ll), "%lld", (long long)h->lag.last_ms);
	snprintf(lb, sizeof(lb), "%lld", (long long)h->lag.bad_ms);
	const char *prm[17] = { lease, id, first, last, n, newer ? "t" : "f", s->boot_id, s->kernel,
				s->agent_version, h->labels, ncg, seen, lw,
				h->lag.min_ms == LAG_NONE ? NULL : lm, h->lag.prev_ms == LAG_NONE ? NULL : lp,
				h->lag.last_ms == LAG_NONE ? NULL : ll, lb };
	int rc = store_q_prep_keep(p->c, STORE_PREP_HOST, host_sql, 17, prm, NULL, NULL, 0, &h->upd,
				   "update the host", p->err, p->errlen);
	if (rc == STORE_OK && h->meta) {
		const char *mp[5] = { id, last, s->kernel, s->agent_version, h->labels };
		rc = store_q_prep_keep(p->c, STORE_PREP_META, meta_sql, 5, mp, NULL, NULL, 0, NULL,
				       "record the host's fields", p->err, p->errlen);
	}
	return rc;
}

/* Sends the hosts' row updates (with BEGIN when the transaction is not
 * open yet) and reads their answers: a host whose lease another server
 * holds now (or that was forgotten) gets its entry reset and the
 * transaction is run again (PUT_RETRY). */
static int update_hosts(struct put *p, bool begun)
{
	char lease[24];
	int rc;

	if (!begun && (rc = store_q_send(p->c, "BEGIN", 0, NULL, NULL, "begin", p->err, p->errlen)) != STORE_OK)
		return rc;
	snprintf(lease, sizeof(lease), "%lld", (long long)p->st->lease);
	for (size_t hi = 0; hi < p->nh; hi++)
		if ((rc = send_host(p, &p->hosts[hi], lease)) != STORE_OK)
			return rc;
	if ((rc = store_pipe_finish(p->c, NULL, p->err, p->errlen)) != STORE_OK)
		return rc;
	bool lost = false;
	for (size_t hi = 0; hi < p->nh; hi++) {
		struct hreq *h = &p->hosts[hi];
		if (!h->upd || PQntuples(h->upd) != 1) {
			/* another server took the host (or it was forgotten) */
			own_reset(p->st, h->e);
			lost = true;
			continue;
		}
		h->silent = PQgetvalue(h->upd, 0, 0)[0] == 't';
		if (!PQgetisnull(h->upd, 0, 1))
			p->ovr_version = strtoll(PQgetvalue(h->upd, 0, 1), NULL, 10);
	}
	return lost ? PUT_RETRY : STORE_OK;
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

/* True when m has a dict id at or above upto: one that may lack a
 * database id. A pass over the ids alone, without the lock. */
static bool sset_reaches(const struct sset *m, uint32_t upto)
{
	uint32_t max = 0;
	for (size_t i = 0; i < m->n; i++)
		max = m->f[i].id > max ? m->f[i].id : max;
	return max >= upto;
}

/* Moves st->metric_upto past the dict ids that have database ids now
 * (st->mu held). */
static void advance_upto(struct store *st)
{
	uint32_t u = atomic_load(&st->metric_upto), top = dict_count();
	if (u == 0)
		u = 1;
	while (u <= top && st->metric_db[u])
		u++;
	atomic_store(&st->metric_upto, u);
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
	/* usually every name is known: the ids alone say so (every id below
	 * metric_upto has a database id), without the lock or a look-up each */
	uint32_t upto = atomic_load(&p->st->metric_upto);
	bool reach = false;
	for (size_t i = 0; i < p->n && !reach; i++) {
		const struct sample *s = p->items[i].s;
		if (p->items[i].dup_batch)
			continue;
		reach = sset_reaches(&s->m, upto);
		for (size_t k = 0; k < s->ncg && !reach; k++)
			reach = sset_reaches(&s->cg[k].m, upto);
	}
	if (!reach)
		goto out;
	pthread_mutex_lock(&p->st->mu);
	advance_upto(p->st);
	upto = atomic_load(&p->st->metric_upto);
	for (size_t i = 0; i < p->n && rc == STORE_OK; i++) {
		const struct sample *s = p->items[i].s;
		if (p->items[i].dup_batch)
			continue;
		if (sset_reaches(&s->m, upto) && collect_missing(p, &s->m, &miss, &n, &cap) < 0)
			rc = STORE_EINTERNAL;
		for (size_t k = 0; k < s->ncg && rc == STORE_OK; k++)
			if (sset_reaches(&s->cg[k].m, upto) && collect_missing(p, &s->cg[k].m, &miss, &n, &cap) < 0)
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
			     "WITH ORDINALITY AS u(x, o) ORDER BY u.o ON CONFLICT (name) DO NOTHING", 1, prm, 0, NULL,
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
	advance_upto(p->st);
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

static int add_pend(struct put *p, struct cgpend g)
{
	if (p->ncgs == p->capcgs) {
		size_t ncap = p->capcgs ? p->capcgs * 2 : 64;
		struct cgpend *t = realloc(p->cgs, ncap * sizeof(*t));
		if (!t)
			return -1;
		p->cgs = t;
		p->capcgs = ncap;
	}
	p->cgs[p->ncgs++] = g;
	return 0;
}

/* Gives every cgroup of the fresh samples its id. Agents send a host's
 * cgroups in the same order every time, so the host's entry remembers
 * those of its newest sample (own.cgs) and a cgroup at the same position
 * with the same path takes its id there. The others are listed (distinct,
 * with their newest ts) and resolved through the cache and the database;
 * so are those whose last-seen time is due for a refresh. */
static int resolve_cgroups(struct put *p)
{
	struct cbuf hid, ver, path, ts;
	size_t nmiss = 0, tot = 0, pos = 0;
	int rc = STORE_OK;
	PGresult *r = NULL;

	cbuf_init(&hid);
	cbuf_init(&ver);
	cbuf_init(&path);
	cbuf_init(&ts);
	for (size_t i = 0; i < p->n; i++)
		if (!p->items[i].dup)
			tot += p->items[i].s->ncg;
	free(p->cgids);
	if (!(p->cgids = calloc(tot ? tot : 1, sizeof(*p->cgids))))
		goto nomem;
	for (size_t i = 0; i < p->n; i++) {
		struct item *it = &p->items[i];
		const struct own *e = p->hosts[it->host].e;
		if (it->dup)
			continue;
		it->cgid = p->cgids + pos;
		pos += it->s->ncg;
		for (size_t k = 0; k < it->s->ncg; k++) {
			const struct cgsample *cg = &it->s->cg[k];
			struct cgpend g = { p->hosts[it->host].id, cg->version, cg->path, 0, it->s->ts_ms };
			if (k < e->ncgs && e->cgs[k].version == cg->version && strcmp(e->cgs[k].path, cg->path) == 0) {
				it->cgid[k] = e->cgs[k].id;
				if (e->cgs[k].touched >= it->s->ts_ms - STORE_CG_TOUCH_MS)
					continue;
				g.id = it->cgid[k];	/* known, but its last-seen time is due */
			}
			if (add_pend(p, g) < 0)
				goto nomem;
		}
	}
	if (!p->ncgs)
		goto fill;
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
		if (g->id)
			continue;	/* the entry's, with a refresh due */
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
		goto fill;
	if (arr_end(&hid) < 0 || arr_end(&ver) < 0 || arr_end(&path) < 0 || arr_end(&ts) < 0)
		goto nomem;
	const char *prm[4] = { (const char *)hid.p, (const char *)ver.p, (const char *)path.p, (const char *)ts.p };
	/* the ones stored already (by another server), then the rest added and
	 * read (no NOT EXISTS over unnest: Citus refuses the correlated
	 * subquery; an identity value burnt on a race is harmless, bigint) */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			rc = store_q(p->c, "INSERT INTO cgroups (host_id, version, path, first_ts_ms, last_ts_ms) "
				     "SELECT u.h, u.v, u.p, u.t, u.t FROM unnest($1::int[], $2::smallint[], $3::text[], "
				     "$4::bigint[]) AS u(h, v, p, t) ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING",
				     4, prm, 0, NULL, "add cgroups", p->err, p->errlen);
			if (rc != STORE_OK)
				goto out;
		}
		rc = store_q(p->c, "SELECT g.id, g.host_id, g.version, g.path, g.last_ts_ms FROM cgroups g "
			     "JOIN unnest($1::int[], $2::smallint[], $3::text[]) AS u(h, v, p) "
			     "ON g.host_id = u.h AND g.version = u.v AND g.path = u.p WHERE g.host_id = ANY($1::int[])",
			     3, prm, 0, &r, "look up cgroups", p->err, p->errlen);
		if (rc != STORE_OK)
			goto out;
		int found = PQntuples(r);
		if (pass == 1 || (size_t)found == nmiss)
			break;
		PQclear(r);
	}
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
	goto fill;
nomem:
	rc = oom(p);
	goto out;
fill:
	for (size_t i = 0; i < p->n; i++) {
		struct item *it = &p->items[i];
		for (size_t k = 0; !it->dup && k < it->s->ncg; k++) {
			if (it->cgid[k])
				continue;
			struct cgpend *g = find_cg(p, p->hosts[it->host].id, it->s->cg[k].version, it->s->cg[k].path);
			if (!g) {
				snprintf(p->err, p->errlen, "could not add cgroup %s", it->s->cg[k].path);
				rc = STORE_EINTERNAL;
				goto out;
			}
			it->cgid[k] = g->id;
		}
	}
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
	if (h->e->enc.boot_id && strcmp(h->e->enc.boot_id, boot_id) == 0) {
		*boot = h->e->enc.boot;
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
static int sample_state(struct put *p, const struct item *it, struct hstate *cur)
{
	const struct sample *s = it->s;
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
		if (translate(p, &s->cg[k].m, &cur->cg[k].m) < 0) {
			rc = -1;
			break;
		}
		cur->cg[k].id = it->cgid[k];
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

/* Swaps the values of two states (not their host, chain or boot). */
static void swap_values(struct hstate *a, struct hstate *b)
{
	struct sset m = a->m;
	struct cgstate *cg = a->cg;
	size_t ncg = a->ncg, cap = a->cgcap;
	a->m = b->m;
	a->cg = b->cg;
	a->ncg = b->ncg;
	a->cgcap = b->cgcap;
	b->m = m;
	b->cg = cg;
	b->ncg = ncg;
	b->cgcap = cap;
}

/* ---- 5. the rows ---- */

/* cgroups whose last_ts_ms is due for a refresh */
/* One host's cgroups due for a last-seen refresh, as id and ts arrays;
 * *n gets how many. */
static int touch_arrays(const struct put *p, int32_t host_id, struct cbuf *ids, struct cbuf *ts, size_t *n)
{
	*n = 0;
	cbuf_init(ids);
	cbuf_init(ts);
	if (arr_begin(ids) < 0 || arr_begin(ts) < 0)
		return -1;
	for (size_t i = 0; i < p->ncgs; i++) {
		if (p->cgs[i].touch == INT64_MIN || p->cgs[i].host_id != host_id)
			continue;
		if (arr_num(ids, p->cgs[i].id) < 0 || arr_num(ts, p->cgs[i].touch) < 0)
			return -1;
		(*n)++;
	}
	return arr_end(ids) < 0 || arr_end(ts) < 0 ? -1 : 0;
}

static const char rows_sql[] =
	"INSERT INTO samples (host_id, boot, kf, ts_ms, d, c) SELECT * FROM "
	"unnest($1::int[], $2::smallint[], $3::bool[], $4::bigint[], $5::bytea[], $6::bytea[])";

/* On Citus the rows go as INSERT ... VALUES: an INSERT ... SELECT from
 * unnest is executed by pulling the rows to the coordinator and copying
 * them to the shard (several round trips to the worker); VALUES is routed
 * to the host's shard in one. ROWS_PER_VALUES rows a statement. */
#define ROWS_PER_VALUES 32

struct vrow {
	int32_t host;
	int boot;
	bool kf;
	int64_t ts;
	uint8_t *d, *c;		/* owned; c NULL without cgroups */
	size_t dlen, clen;
};

static int send_values(struct put *p, const struct vrow *r, size_t n)
{
	struct cbuf sql;
	const char *prm[6 * ROWS_PER_VALUES];
	int lens[6 * ROWS_PER_VALUES], fmts[6 * ROWS_PER_VALUES];
	char num[4 * ROWS_PER_VALUES][24];
	int rc = STORE_OK;

	for (size_t from = 0; from < n && rc == STORE_OK; from += ROWS_PER_VALUES) {
		size_t k = n - from < ROWS_PER_VALUES ? n - from : ROWS_PER_VALUES;
		cbuf_init(&sql);
		static const char head[] = "INSERT INTO samples (host_id, boot, kf, ts_ms, d, c) VALUES ";
		int bad = cbuf_put(&sql, head, sizeof(head) - 1);
		for (size_t i = 0; i < k && !bad; i++) {
			const struct vrow *x = &r[from + i];
			int b = (int)(6 * i);
			char tup[160];
			snprintf(tup, sizeof(tup), "%s($%d::int, $%d::smallint, $%d::bool, $%d::bigint, $%d::bytea, $%d::bytea)",
				 i ? ", " : "", b + 1, b + 2, b + 3, b + 4, b + 5, b + 6);
			bad |= cbuf_put(&sql, tup, strlen(tup));
			snprintf(num[4 * i], 24, "%d", x->host);
			snprintf(num[4 * i + 1], 24, "%d", x->boot);
			snprintf(num[4 * i + 2], 24, "%s", x->kf ? "t" : "f");
			snprintf(num[4 * i + 3], 24, "%lld", (long long)x->ts);
			for (int j = 0; j < 4; j++) {
				prm[b + j] = num[4 * i + (size_t)j];
				lens[b + j] = 0;
				fmts[b + j] = 0;
			}
			prm[b + 4] = (const char *)x->d;
			lens[b + 4] = (int)x->dlen;
			fmts[b + 4] = 1;
			prm[b + 5] = (const char *)x->c;
			lens[b + 5] = (int)x->clen;
			fmts[b + 5] = 1;
		}
		bad |= cbuf_put(&sql, "", 1);
		if (bad)
			rc = oom(p);
		else if (k == 1)	/* the usual one: prepared */
			rc = store_q_prep_send(p->c, STORE_PREP_ROW1, (const char *)sql.p, 6, prm, lens, fmts, 0,
					       "store samples", p->err, p->errlen);
		else
			rc = store_q_send_fmt(p->c, (const char *)sql.p, (int)(6 * k), prm, lens, fmts, NULL,
					      "store samples", p->err, p->errlen);
		cbuf_release(&sql);
	}
	return rc;
}

/* One statement per host, naming it (on Citus a statement without the
 * host's id would update every shard, in two-phase commits). */
static const char touch_sql[] =
	"UPDATE cgroups SET last_ts_ms = t.ts FROM unnest($2::bigint[], $3::bigint[]) AS t(id, ts) "
	"WHERE cgroups.host_id = $1::int AND cgroups.id = t.id AND cgroups.last_ts_ms < t.ts";

/* Sends the cgroup last-seen refreshes that are due, host by host. */
static int send_touches(struct put *p)
{
	int rc = STORE_OK;

	for (size_t hi = 0; hi < p->nh && rc == STORE_OK; hi++) {
		struct cbuf ids, ts;
		size_t n;
		char hid[16];
		if (touch_arrays(p, p->hosts[hi].id, &ids, &ts, &n) < 0) {
			rc = oom(p);
		} else if (n) {
			snprintf(hid, sizeof(hid), "%d", p->hosts[hi].id);
			const char *tp[3] = { hid, (const char *)ids.p, (const char *)ts.p };
			rc = store_q_prep_send(p->c, STORE_PREP_CGTOUCH, touch_sql, 3, tp, NULL, NULL, 0,
					       "refresh cgroups", p->err, p->errlen);
		}
		cbuf_release(&ids);
		cbuf_release(&ts);
	}
	return rc;
}

/* Encodes every fresh sample against its host's newest in-order row and
 * sends the rows and the cgroup last-seen times without waiting; moves the
 * hosts' entries on (encoding state, rollup cells, newest ts). */
static int insert_rows(struct put *p)
{
	struct cbuf a_h, a_b, a_k, a_t, a_d, a_c, d, c;
	struct hstate cur;
	int rc = STORE_OK;
	size_t nrows = 0;
	struct vrow *vr = p->st->citus ? calloc(p->n, sizeof(*vr)) : NULL;

	if (p->st->citus && !vr)
		return oom(p);
	int64_t now = store_clock_ms();

	hstate_init(&cur);
	struct cbuf *bufs[8] = { &a_h, &a_b, &a_k, &a_t, &a_d, &a_c, &d, &c };
	for (int i = 0; i < 8; i++)
		cbuf_init(bufs[i]);
	for (int i = 0; i < 4; i++)
		if (arr_begin(bufs[i]) < 0)
			goto nomem;
	/* the encoded rows go as binary bytea[] (pgbin.h) */
	if (pgbin_bytea_begin(&a_d) < 0 || pgbin_bytea_begin(&a_c) < 0)
		goto nomem;
	p->mutated = true;
	for (size_t hi = 0; hi < p->nh; hi++) {
		struct hreq *h = &p->hosts[hi];
		struct own *e = h->e;
		for (size_t i = h->first; i < h->end; i++) {
			struct item *it = &p->items[i];
			const struct sample *s = it->s;
			if (it->dup)
				continue;
			if ((rc = resolve_boot(p, h, s->boot_id, s->ts_ms, &it->boot)) != STORE_OK)
				goto out;
			if (sample_state(p, it, &cur) < 0)
				goto nomem;
			bool inorder = e->max_ts == INT64_MIN || s->ts_ms > e->max_ts;
			bool kf = false;
			const struct hstate *base = NULL;
			uint64_t off = 0;
			if (inorder) {
				kf = e->enc.last_ts == INT64_MIN || e->enc.last_ts != e->max_ts ||
				     e->enc.chain >= STORE_KF_EVERY || store_day(e->enc.last_ts) != store_day(s->ts_ms);
				if (!kf) {
					base = &e->enc;
					off = (uint64_t)(s->ts_ms - e->enc.last_ts);
				}
			}
			if (encode_row(&cur, base, off, &d, &c) < 0)
				goto nomem;
			if (vr) {
				struct vrow *x = &vr[nrows];
				*x = (struct vrow){ h->id, it->boot, kf, s->ts_ms, malloc(d.len ? d.len : 1), NULL, d.len, 0 };
				if (!x->d)
					goto nomem;
				memcpy(x->d, d.p, d.len);
				if (s->ncg) {
					if (!(x->c = malloc(c.len ? c.len : 1)))
						goto nomem;
					memcpy(x->c, c.p, c.len);
					x->clen = c.len;
				}
			} else if (arr_num(&a_h, h->id) < 0 || arr_num(&a_b, it->boot) < 0 ||
				   arr_sep(&a_k) < 0 || cbuf_put(&a_k, kf ? "t" : "f", 1) < 0 ||
				   arr_num(&a_t, s->ts_ms) < 0 || pgbin_bytea_add(&a_d, d.p, d.len) < 0 ||
				   pgbin_bytea_add(&a_c, s->ncg ? c.p : NULL, c.len) < 0) {
				goto nomem;
			}
			nrows++;
			if (!inorder)
				continue;	/* late: not rolled up (docs/design.md "Rollups") */
			bool prev = e->enc.last_ts != INT64_MIN && e->enc.last_ts == e->max_ts;
			if (rollup_cells_add(&e->cells, &p->rx, h->id, s->ts_ms, it->boot, &cur.m, prev ? &e->enc.m : NULL,
					     e->enc.last_ts, e->enc.boot) < 0)
				goto nomem;
			swap_values(&e->enc, &cur);	/* cur keeps the old memory for the next sample */
			e->enc.chain = kf ? 1 : e->enc.chain + 1;
			e->enc.last_ts = s->ts_ms;
			e->enc.boot = it->boot;
			free(e->enc.boot_id);
			e->enc.boot_id = s->boot_id ? strdup(s->boot_id) : NULL;
			if (s->boot_id && !e->enc.boot_id)
				goto nomem;
			e->max_ts = s->ts_ms;
			h->last_in = it;
			if (!e->dirty_ms)
				e->dirty_ms = now;
		}
	}
	if (!nrows)
		goto out;
	for (int i = 0; i < 4; i++)
		if (arr_end(bufs[i]) < 0)
			goto nomem;
	if (pgbin_bytea_end(&a_d) < 0 || pgbin_bytea_end(&a_c) < 0)
		goto nomem;
	const char *prm[6] = { (const char *)a_h.p, (const char *)a_b.p, (const char *)a_k.p,
			       (const char *)a_t.p, (const char *)a_d.p, (const char *)a_c.p };
	int lens[6] = { [4] = (int)a_d.len, [5] = (int)a_c.len };
	int fmts[6] = { [4] = 1, [5] = 1 };
	/* sent without waiting: the results come back with the hook's first
	 * statement or COMMIT (store_sql.c) */
	rc = vr ? send_values(p, vr, nrows)
		: store_q_prep_send(p->c, STORE_PREP_WRITE, rows_sql, 6, prm, lens, fmts, 0, "store samples",
				    p->err, p->errlen);
	if (rc == STORE_OK)
		rc = send_touches(p);
	goto out;
nomem:
	rc = oom(p);
out:
	for (size_t i = 0; vr && i < p->n; i++) {
		free(vr[i].d);
		free(vr[i].c);
	}
	free(vr);
	hstate_release(&cur);
	for (int i = 0; i < 8; i++)
		cbuf_release(bufs[i]);
	return rc;
}

/* ---- 6. after COMMIT ---- */

/* The host's entry remembers the cgroups of its newest sample, in the
 * sample's order, with their ids and last-seen times (resolve_cgroups). */
static int remember_cgroups(struct put *p, struct hreq *h)
{
	const struct item *it = h->last_in;
	struct own *e = h->e;
	size_t n = it->s->ncg;
	bool same = e->ncgs == n;

	for (size_t k = 0; same && k < n; k++)
		same = e->cgs[k].id == it->cgid[k];
	if (!same) {
		struct owncg *cgs = calloc(n ? n : 1, sizeof(*cgs));
		if (!cgs)
			return -1;
		for (size_t k = 0; k < n; k++) {
			cgs[k] = (struct owncg){ it->cgid[k], it->s->cg[k].version, it->s->ts_ms,
						 strdup(it->s->cg[k].path) };
			for (size_t j = 0; j < e->ncgs; j++)
				if (e->cgs[j].id == cgs[k].id)
					cgs[k].touched = e->cgs[j].touched;
			if (!cgs[k].path) {
				own_free_cgs(cgs, k);
				return -1;
			}
		}
		own_free_cgs(e->cgs, e->ncgs);
		e->cgs = cgs;
		e->ncgs = n;
	}
	/* what was written now, or found fresh in the table */
	for (size_t i = 0; i < p->ncgs; i++) {
		const struct cgpend *g = &p->cgs[i];
		if (g->host_id != h->id)
			continue;
		for (size_t k = 0; k < e->ncgs; k++)
			if (e->cgs[k].id == g->id)
				e->cgs[k].touched = g->touch == INT64_MIN ? it->s->ts_ms : g->touch;
	}
	return 0;
}

static void publish(struct put *p)
{
	for (size_t i = 0; i < p->ncgs; i++) {
		const struct cgpend *g = &p->cgs[i];
		cgcache_set(p->st->cgs, g->host_id, g->version, g->path, g->id,
			    g->touch == INT64_MIN ? INT64_MIN : g->touch);
	}
	for (size_t i = 0; i < p->nh; i++) {
		struct hreq *h = &p->hosts[i];
		if (h->nfresh)
			h->e->lag = h->lag;
		if (h->last_in && remember_cgroups(p, h) < 0)
			own_free_cgs_of(h->e);	/* only a shortcut: resolved again next time */
		if (h->meta) {
			struct own *e = h->e;
			own_clear_meta(e);
			const struct sample *s = h->newest;
			e->kernel = s->kernel ? strdup(s->kernel) : NULL;
			e->agent_version = s->agent_version ? strdup(s->agent_version) : NULL;
			e->labels = strdup(h->labels);
			e->labels_j = s->labels ? json_deep_copy(s->labels) : json_object();
			/* out of memory: unknown, so the next sample records them again */
			e->meta_known = e->labels && e->labels_j && (e->kernel || !s->kernel) &&
					(e->agent_version || !s->agent_version);
		}
	}
}

static void group_hosts(struct put *p)
{
	for (size_t i = 0; i < p->n; i++) {
		if (i == 0 || strcmp(p->items[i].s->host, p->items[i - 1].s->host) != 0) {
			struct hreq *h = &p->hosts[p->nh++];
			memset(h, 0, sizeof(*h));
			h->name = p->items[i].s->host;
			h->first = i;
		} else if (p->items[i].s->ts_ms == p->items[i - 1].s->ts_ms) {
			p->items[i].dup_batch = true;	/* the first copy in the batch stands */
		}
		p->items[i].host = (int)(p->nh - 1);
		p->hosts[p->nh - 1].end = i + 1;
	}
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

/* Calls the hook with the hosts' fresh samples, in (host, ts) order. */
static int run_hook(struct put *p, const struct sample **fresh, struct store_hook_host *hh)
{
	const struct store_hook *hk = &p->st->hook;
	size_t nh = 0, nf = 0;

	if (!hk->feed)
		return STORE_OK;
	for (size_t hi = 0; hi < p->nh; hi++) {
		struct hreq *h = &p->hosts[hi];
		/* a host with only stored samples is fed nothing, but its
		 * host_silent resolves at this arrival all the same */
		if (!h->nfresh && !h->silent)
			continue;
		hh[nh] = (struct store_hook_host){ .host = h->name, .host_id = h->id, .state = h->e->hs,
						   .fresh = &fresh[nf], .silent = h->silent, .seen_ms = p->now_ms };
		for (size_t i = h->first; i < h->end; i++)
			if (!p->items[i].dup)
				fresh[nf++] = p->items[i].s;
		hh[nh].n = (size_t)(&fresh[nf] - hh[nh].fresh);
		nh++;
	}
	if (!nh)
		return STORE_OK;
	/* a hook says only -1: its statement's SQLSTATE tells a full disk or a
	 * read-only database (retry later) from a bug */
	if (hk->feed(hk->ctx, p->c, hh, nh, p->ovr_version, p->err, p->errlen) != 0)
		return PQstatus(p->c) == CONNECTION_OK && !store_unavailable_state(store_conn_fail_state(p->c))
			       ? STORE_EINTERNAL : STORE_EUNAVAIL;
	return STORE_OK;
}

/* Clears what one try left in the hosts' requests. */
static void try_release(struct put *p)
{
	for (size_t i = 0; i < p->nh; i++) {
		PQclear(p->hosts[i].upd);
		p->hosts[i].upd = NULL;
		p->hosts[i].taken = false;
		p->hosts[i].silent = false;
		p->hosts[i].last_in = NULL;
		p->hosts[i].meta = false;
		free(p->hosts[i].labels);
		p->hosts[i].labels = NULL;
	}
	p->ovr_version = -1;
	p->ncgs = 0;
	p->mutated = false;
}

/* One try of the transaction. *final as store_run_tx's. */
static int run_once(struct put *p, const struct sample **fresh, struct store_hook_host *hh, bool *final)
{
	int rc;
	bool begun = false;

	p->now_ms = time_now_ms();
	for (size_t i = 0; i < p->nh; i++)
		p->hosts[i].id = p->hosts[i].e->host_id;
	if ((rc = resolve_ids(p)) != STORE_OK)
		return rc;
	for (size_t i = 0; i < p->nh; i++)
		p->hosts[i].id = p->hosts[i].e->host_id;
	for (size_t i = 0; i < p->nh && !begun; i++) {
		if (!p->hosts[i].e->valid) {
			if ((rc = store_q_send(p->c, "BEGIN", 0, NULL, NULL, "begin", p->err, p->errlen)) != STORE_OK)
				return rc;
			begun = true;
		}
	}
	if ((begun && (rc = take_hosts(p)) != STORE_OK) || (rc = check_stored(p)) != STORE_OK ||
	    (rc = update_hosts(p, begun)) != STORE_OK)
		goto fail;
	rollup_ctx_init(&p->rx, p->st);	/* after resolve_metrics and take_hosts: their ids are known */
	if ((rc = resolve_cgroups(p)) != STORE_OK || (rc = insert_rows(p)) != STORE_OK ||
	    (rc = run_hook(p, fresh, hh)) != STORE_OK)
		goto fail;
	*final = true;	/* COMMIT sent: on failure its outcome is unknown */
	/* with the writes still in flight (store_sql.c): one round trip */
	if ((rc = store_commit(p->c, p->err, p->errlen)) != STORE_OK)
		goto fail;
	publish(p);
	return STORE_OK;
fail:
	store_pipe_finish(p->c, NULL, NULL, 0);	/* writes in flight when a step failed */
	if (PQstatus(p->c) == CONNECTION_OK && PQtransactionStatus(p->c) != PQTRANS_IDLE)
		PQclear(PQexec(p->c, "ROLLBACK"));
	/* what this try changed in memory is not in the database */
	for (size_t i = 0; i < p->nh; i++)
		if (p->mutated || p->hosts[i].taken)
			own_reset(p->st, p->hosts[i].e);
	return rc;
}

int store_run_tx(struct store *st, struct putreq **reqs, size_t nreq, bool *final, char *err, size_t errlen)
{
	struct put p = { .st = st, .err = err, .errlen = errlen };
	const struct sample **fresh = NULL;
	struct store_hook_host *hh = NULL;
	const char **names = NULL;
	int64_t *days = NULL;
	size_t nd = 0;
	int rc;
	bool out_checked = false;

	*final = false;
	for (size_t r = 0; r < nreq; r++)
		p.n += reqs[r]->n;
	p.items = calloc(p.n, sizeof(*p.items));
	p.hosts = calloc(p.n, sizeof(*p.hosts));
	p.owned = calloc(p.n, sizeof(*p.owned));
	names = calloc(p.n, sizeof(*names));
	fresh = calloc(p.n, sizeof(*fresh));
	hh = calloc(p.n, sizeof(*hh));
	if (!p.items || !p.hosts || !p.owned || !names || !fresh || !hh) {
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
	for (size_t i = 0; i < p.n; i++)
		p.items[i].dup = p.items[i].dup_batch;
	if ((rc = collect_days(&p, &days, &nd)) != STORE_OK)
		goto out;
	for (size_t i = 0; i < p.nh; i++)
		names[i] = p.hosts[i].name;
	if (owntab_checkout(st->own, names, p.nh, p.owned) < 0) {
		rc = oom(&p);
		goto out;
	}
	out_checked = true;
	for (size_t i = 0; i < p.nh; i++)
		p.hosts[i].e = p.owned[i];
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
	for (int t = 0; t < PUT_TRIES; t++) {
		try_release(&p);
		rc = run_once(&p, fresh, hh, final);
		if (rc != PUT_RETRY)
			break;
	}
	if (rc == PUT_RETRY) {
		snprintf(err, errlen, "could not store the samples: their hosts moved between servers repeatedly");
		rc = STORE_EUNAVAIL;
	}
	if (rc == STORE_OK) {
		for (size_t r = 0; r < nreq; r++)
			reqs[r]->nfresh = 0;
		for (size_t i = 0; i < p.n; i++)
			if (!p.items[i].dup)
				reqs[p.items[i].req]->nfresh++;
	}
out:
	/* /healthz and /metrics: do writes fail, and why (store_health.h) */
	store_health_note_write(rc, p.c ? store_conn_fail_state(p.c) : NULL, err);
	if (p.c)
		db_pool_put(st->pool, p.c, rc == STORE_EUNAVAIL);
	try_release(&p);
	if (out_checked)
		owntab_checkin(st->own, p.owned, p.nh);
	free(p.items);
	free(p.hosts);
	free(p.owned);
	free(names);
	free(p.cgs);
	free(p.cgids);
	free(fresh);
	free(hh);
	free(days);
	return rc;
}
