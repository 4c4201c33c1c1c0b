/* store_cgrollup.c - the cgroup rollup job's storage side: which hosts have
 * closed buckets, reading their raw rows once, rates per cgroup, the packed
 * cells, month partitions and their retention, and reads for the series
 * endpoint (see store_cgrollup.h).
 *
 * A cell (one cgroup, one bucket; column v) is:
 *   uvarint(seen)  bit i: the cgroup reported slot i's metric in the bucket
 *   then for each seen slot, in slot order:
 *     uvarint(cnt << 2 | form)  cnt: non-null values
 *       form 0: no payload; every value 0 (cnt = 0: all null)
 *       form 1: float4 v        every value equal to v
 *       form 2: float4 avg, lo, hi
 *   float4 little-endian. Most slots of a quiet cgroup are form 0 or 1, so
 *   a v2 cgroup's cell is ~60-110 bytes instead of 24 x 18.
 */
#include "store_cgrollup.h"

#include "metric_kind.h"
#include "pgarr.h"
#include "store_internal.h"
#include "store_rollup.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* web/js/figures.js CGROUP_FIGURES: each line's v2 name and its v1 (or
 * pre-5.9) alternative. Appending is fine; reordering changes what stored
 * cells mean. */
const char *const cgroll_metric[CGROLL_NSLOT] = {
	"stat.workingset_refault_file", "stat.workingset_refault", "stat.workingset_refault_anon",
	"stat.workingset_activate_file", "stat.workingset_activate", "stat.workingset_activate_anon",
	"stat.pgscan", "stat.pgsteal", "stat.file_dirty", "stat.dirty", "stat.file_writeback",
	"stat.writeback", "memory_current", "memory_max", "swap_current", "stat.anon", "stat.rss",
	"stat.file", "stat.cache", "psi.some.avg10", "psi.full.avg10", "events.high", "events.max",
	"events.oom_kill",
};

int cgroll_slot(const char *metric)
{
	for (int i = 0; metric && i < CGROLL_NSLOT; i++)
		if (strcmp(metric, cgroll_metric[i]) == 0)
			return i;
	return -1;
}

/* ---- cells ---- */

struct cell {
	uint32_t cgid;
	int32_t b5;
	uint32_t seen;
	uint32_t cnt[CGROLL_NSLOT];
	double sum[CGROLL_NSLOT], lo[CGROLL_NSLOT], hi[CGROLL_NSLOT];
};

static int put_f4(struct cbuf *b, double x)
{
	float f = (float)x;
	uint32_t u;
	uint8_t o[4];
	memcpy(&u, &f, 4);
	for (int i = 0; i < 4; i++)
		o[i] = (uint8_t)(u >> (8 * i));
	return cbuf_put(b, o, 4);
}

static int get_f4(const uint8_t **p, const uint8_t *end, double *x)
{
	uint32_t u = 0;
	float f;
	if (end - *p < 4)
		return -1;
	for (int i = 0; i < 4; i++)
		u |= (uint32_t)(*p)[i] << (8 * i);
	*p += 4;
	memcpy(&f, &u, 4);
	*x = f;
	return 0;
}

static int encode_cell(const struct cell *c, struct cbuf *b)
{
	int bad = cbuf_put_uvarint(b, c->seen);
	for (int i = 0; i < CGROLL_NSLOT && !bad; i++) {
		if (!(c->seen >> i & 1))
			continue;
		uint64_t cnt = c->cnt[i];
		if (!cnt || (c->lo[i] == 0 && c->hi[i] == 0)) {
			bad |= cbuf_put_uvarint(b, cnt << 2);
		} else if ((float)c->lo[i] == (float)c->hi[i]) {
			bad |= cbuf_put_uvarint(b, cnt << 2 | 1) | put_f4(b, c->lo[i]);
		} else {
			bad |= cbuf_put_uvarint(b, cnt << 2 | 2) | put_f4(b, c->sum[i] / (double)cnt) |
			       put_f4(b, c->lo[i]) | put_f4(b, c->hi[i]);
		}
	}
	return bad ? -1 : 0;
}

int cgroll_cell_get(const uint8_t *v, size_t len, int slot, struct cgroll_val *o)
{
	const uint8_t *p = v, *end = v + len;
	uint64_t seen, h;

	if (slot < 0 || slot >= CGROLL_NSLOT || codec_get_uvarint(&p, end, &seen) < 0)
		return -1;
	if (!(seen >> slot & 1))
		return 0;
	for (int i = 0; i <= slot; i++) {
		if (!(seen >> i & 1))
			continue;
		if (codec_get_uvarint(&p, end, &h) < 0 || h >> 2 > UINT32_MAX)
			return -1;
		double a = 0, lo = 0, hi = 0;
		switch (h & 3) {
		case 0:
			break;
		case 1:
			if (get_f4(&p, end, &a) < 0)
				return -1;
			lo = hi = a;
			break;
		case 2:
			if (get_f4(&p, end, &a) < 0 || get_f4(&p, end, &lo) < 0 || get_f4(&p, end, &hi) < 0)
				return -1;
			break;
		default:
			return -1;
		}
		if (i == slot) {
			o->cnt = (uint32_t)(h >> 2);
			o->avg = a;
			o->lo = lo;
			o->hi = hi;
		}
	}
	return 1;
}

/* ---- reading a host's raw rows ---- */

/* The slot values of one cgroup in one row. */
struct cgvals {
	uint32_t cgid;
	uint32_t present, isnull;	/* bit per slot */
	int64_t v[CGROLL_NSLOT];
};

/* One decoded row: its cgroups, sorted by id. */
struct rowvals {
	int64_t ts;
	int boot;
	struct cgvals *cg;	/* owned */
	size_t n, cap;
};

/* What the job needs about the metrics: database ids, kind, scale. */
struct slotinfo {
	int32_t mid[CGROLL_NSLOT];
	bool counter[CGROLL_NSLOT];
	double scale[CGROLL_NSLOT];
};

static int cmp_cgvals(const void *a, const void *b)
{
	uint32_t x = ((const struct cgvals *)a)->cgid, y = ((const struct cgvals *)b)->cgid;
	return x < y ? -1 : x > y;
}

/* Fills rv with the slot values of every cgroup of state h. -1: OOM. */
static int extract(const struct hstate *h, const struct slotinfo *si, int64_t ts, int boot, struct rowvals *rv)
{
	rv->ts = ts;
	rv->boot = boot;
	rv->n = 0;
	if (h->ncg > rv->cap) {
		struct cgvals *t = realloc(rv->cg, h->ncg * sizeof(*t));
		if (!t)
			return -1;
		rv->cg = t;
		rv->cap = h->ncg;
	}
	for (size_t j = 0; j < h->ncg; j++) {
		struct cgvals *o = &rv->cg[rv->n++];
		o->cgid = h->cg[j].id;
		o->present = o->isnull = 0;
		for (int i = 0; i < CGROLL_NSLOT; i++) {
			int64_t v;
			if (!si->mid[i] || !sset_get(&h->cg[j].m, (uint32_t)si->mid[i], &v))
				continue;
			o->present |= 1u << i;
			if (v == SAMPLE_NULL)
				o->isnull |= 1u << i;
			o->v[i] = v;
		}
	}
	qsort(rv->cg, rv->n, sizeof(*rv->cg), cmp_cgvals);
	return 0;
}

static const struct cgvals *find_cg(const struct rowvals *rv, uint32_t cgid)
{
	struct cgvals key = { .cgid = cgid };
	return rv->n ? bsearch(&key, rv->cg, rv->n, sizeof(*rv->cg), cmp_cgvals) : NULL;
}

/* Cells of one host's chunk, in (bucket, cgroup) order of creation. */
struct cells {
	struct cell *c;	/* owned */
	size_t n, cap;
	size_t bucket_start;	/* first cell of the current bucket */
};

static struct cell *cell_for(struct cells *cs, uint32_t cgid, int32_t b5)
{
	if (cs->n && cs->c[cs->n - 1].b5 != b5)
		cs->bucket_start = cs->n;
	for (size_t k = cs->bucket_start; k < cs->n; k++)
		if (cs->c[k].cgid == cgid && cs->c[k].b5 == b5)
			return &cs->c[k];
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 64;
		struct cell *t = realloc(cs->c, cap * sizeof(*t));
		if (!t)
			return NULL;
		cs->c = t;
		cs->cap = cap;
	}
	struct cell *c = &cs->c[cs->n++];
	memset(c, 0, sizeof(*c));
	c->cgid = cgid;
	c->b5 = b5;
	return c;
}

/* Adds row cur (with its predecessor prev, NULL for none) to the cells,
 * by store_series' point_value rules: a gauge's value scaled; a counter's
 * per-second rate against the previous row when that has a value in the
 * same boot that is not larger, else null. -1: OOM. */
static int add_row(struct cells *cs, const struct slotinfo *si, const struct rowvals *cur,
		   const struct rowvals *prev)
{
	int32_t b5 = (int32_t)(cur->ts / CGROLL_STEP_MS);

	for (size_t j = 0; j < cur->n; j++) {
		const struct cgvals *g = &cur->cg[j];
		if (!g->present)
			continue;
		struct cell *c = cell_for(cs, g->cgid, b5);
		if (!c)
			return -1;
		const struct cgvals *pg = prev ? find_cg(prev, g->cgid) : NULL;
		for (int i = 0; i < CGROLL_NSLOT; i++) {
			uint32_t bit = 1u << i;
			if (!(g->present & bit))
				continue;
			c->seen |= bit;
			if (g->isnull & bit)
				continue;
			double x;
			if (!si->counter[i]) {
				x = (double)g->v[i] * si->scale[i];
			} else {
				if (!pg || !(pg->present & bit) || (pg->isnull & bit) || prev->boot != cur->boot ||
				    g->v[i] < pg->v[i] || cur->ts <= prev->ts)
					continue;
				x = (double)(g->v[i] - pg->v[i]) * si->scale[i] * 1000.0 / (double)(cur->ts - prev->ts);
			}
			if (!c->cnt[i] || x < c->lo[i])
				c->lo[i] = x;
			if (!c->cnt[i] || x > c->hi[i])
				c->hi[i] = x;
			c->sum[i] += x;
			c->cnt[i]++;
		}
	}
	return 0;
}

/* Reads host hid's rows up to to_ms (exclusive) from the chain start at
 * or before from_ms - 1 (so the first row in range has its predecessor:
 * the same rows store_series reads), decodes each whole row once and adds
 * the rows in [from_ms, to_ms) to cs. *nin: rows in range. */
static int roll_host(PGconn *c, const struct slotinfo *si, int32_t hid, int64_t from_ms, int64_t to_ms,
		     struct cells *cs, long *nread, long *nin, char *err, size_t errlen)
{
	char h[16], f[24], u[24], day0[24];
	const char *prm[4] = { h, f, u, day0 };
	PGresult *r;
	int64_t from1 = from_ms - 1;

	snprintf(h, sizeof(h), "%d", hid);
	snprintf(f, sizeof(f), "%" PRId64, from1);
	snprintf(u, sizeof(u), "%" PRId64, to_ms);
	snprintf(day0, sizeof(day0), "%" PRId64, (int64_t)(store_day(from1) * STORE_DAY_MS));
	int rc = store_q(c, "SELECT ts_ms, boot, kf, d, c FROM samples WHERE host_id = $1 AND ts_ms < $3 "
			 "AND ts_ms >= coalesce((SELECT max(ts_ms) FROM samples WHERE host_id = $1 AND kf "
			 "AND ts_ms <= $2 AND ts_ms >= $4), $4) ORDER BY ts_ms",
			 4, prm, 1, &r, "read samples to roll up", err, errlen);
	if (rc != STORE_OK)
		return rc;
	struct hstate chain, late;
	struct rowvals rv[2] = { { 0 }, { 0 } };
	int cur = 0;
	bool have_prev = false;

	hstate_init(&chain);
	hstate_init(&late);
	*nread += PQntuples(r);
	for (int i = 0; i < PQntuples(r) && rc == STORE_OK; i++) {
		int64_t ts = store_get_i64(r, i, 0);
		int boot = store_get_i16(r, i, 1);
		bool kf = store_get_bool(r, i, 2);
		const uint8_t *d = (const uint8_t *)PQgetvalue(r, i, 3), *p = d;
		size_t dlen = (size_t)PQgetlength(r, i, 3);
		const uint8_t *cg = PQgetisnull(r, i, 4) ? NULL : (const uint8_t *)PQgetvalue(r, i, 4);
		size_t clen = cg ? (size_t)PQgetlength(r, i, 4) : 0;
		uint64_t off;
		const struct hstate *vals = NULL;

		/* a keyframe or a delta continues the chain; a self-contained row
		 * that is not a keyframe is a late sample, a base for nothing */
		if (codec_get_uvarint(&p, d + dlen, &off) == 0) {
			if (off == 0 && !kf) {
				hstate_reset(&late);
				if (hstate_apply_row(&late, d, dlen, cg, clen) == 0)
					vals = &late;
			} else if (off == 0 || (chain.last_ts != INT64_MIN && chain.last_ts == ts - (int64_t)off)) {
				if (hstate_apply_row(&chain, d, dlen, cg, clen) == 0) {
					chain.last_ts = ts;
					vals = &chain;
				} else {
					hstate_reset(&chain);
				}
			}
		}
		struct rowvals *now = &rv[cur];
		if (vals) {
			if (extract(vals, si, ts, boot, now) < 0)
				rc = STORE_EINTERNAL;
		} else {
			now->ts = ts;	/* undecodable: present in nothing */
			now->boot = boot;
			now->n = 0;
		}
		if (rc == STORE_OK && ts >= from_ms) {
			(*nin)++;
			if (add_row(cs, si, now, have_prev ? &rv[cur ^ 1] : NULL) < 0)
				rc = STORE_EINTERNAL;
		}
		have_prev = true;
		cur ^= 1;
	}
	if (rc == STORE_EINTERNAL)
		snprintf(err, errlen, "out of memory");
	PQclear(r);
	hstate_release(&chain);
	hstate_release(&late);
	free(rv[0].cg);
	free(rv[1].cg);
	return rc;
}

/* ---- month partitions ---- */

static int ensure_months(PGconn *c, int64_t from_ms, int64_t to_ms, char *err, size_t errlen)
{
	PGresult *r;
	int rc = store_q(c, "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
			 "WHERE i.inhparent = 'cgroup_rollup_5m'::regclass", 0, NULL, 0, &r,
			 "list cgroup rollup partitions", err, errlen);
	if (rc != STORE_OK)
		return rc;
	for (int64_t day = store_day(from_ms); rc == STORE_OK && day <= store_day(to_ms);) {
		int key;
		int64_t first, end;
		char name[64];
		rollup_month_span(day, &key, &first, &end);
		snprintf(name, sizeof(name), "cgroup_rollup_5m_%06d", key);
		bool known = false;
		for (int i = 0; i < PQntuples(r) && !known; i++)
			known = strcmp(PQgetvalue(r, i, 0), name) == 0;
		if (!known) {
			char sql[512];
			snprintf(sql, sizeof(sql),
				 "DO $$BEGIN PERFORM set_config('lock_timeout', '10s', true); "
				 "PERFORM pg_advisory_xact_lock(7668); "
				 "IF to_regclass('%s') IS NULL THEN "
				 "CREATE TABLE %s PARTITION OF cgroup_rollup_5m FOR VALUES FROM (%lld) TO (%lld); "
				 "END IF; END$$",
				 name, name, (long long)(first * (STORE_DAY_MS / CGROLL_STEP_MS)),
				 (long long)(end * (STORE_DAY_MS / CGROLL_STEP_MS)));
			rc = store_q(c, sql, 0, NULL, 0, NULL, "create a cgroup rollup partition", err, errlen);
		}
		day = end;
	}
	PQclear(r);
	return rc;
}

int cgroll_drop_expired(struct store *st, PGconn *c, int64_t now_ms, int days, int *ndropped, char *err,
			size_t errlen)
{
	PGresult *r;
	int64_t cutoff = now_ms - (int64_t)days * STORE_DAY_MS;
	int rc = store_q(c, "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
			 "WHERE i.inhparent = 'cgroup_rollup_5m'::regclass", 0, NULL, 0, &r,
			 "list cgroup rollup partitions", err, errlen);

	(void)st;
	*ndropped = 0;
	if (rc != STORE_OK)
		return rc;
	for (int i = 0; i < PQntuples(r); i++) {
		const char *name = PQgetvalue(r, i, 0);
		int key;
		char tail;
		if (sscanf(name, "cgroup_rollup_5m_%6d%c", &key, &tail) != 1 || key % 100 < 1 || key % 100 > 12)
			continue;
		if (rollup_month_end_day(key) * STORE_DAY_MS > cutoff)
			continue;
		char sql[128];
		snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", name);
		if ((rc = store_q(c, sql, 0, NULL, 0, NULL, "drop an expired cgroup rollup partition", err,
				  errlen)) != STORE_OK)
			break;
		(*ndropped)++;
	}
	PQclear(r);
	return rc;
}

/* ---- the job ---- */

static int resolve_slots(struct store *st, PGconn *c, struct slotinfo *si, char *err, size_t errlen)
{
	for (int i = 0; i < CGROLL_NSLOT; i++) {
		int rc = store_metric_id(st, c, cgroll_metric[i], &si->mid[i], err, errlen);
		if (rc != STORE_OK)
			return rc;
		si->counter[i] = metric_kind(cgroll_metric[i], true) == METRIC_COUNTER;
		si->scale[i] = metric_scale(cgroll_metric[i], true);
	}
	return STORE_OK;
}

/* Writes host host_id's cells and moves its next_b5 to next, inside the
 * transaction that holds its cgroup_rollup_done row (statements on the
 * host's shard only, on Citus). */
static int write_host(PGconn *c, int32_t host_id, const struct cells *cs, int32_t next, struct cgroll_stats *stats,
		      char *err, size_t errlen)
{
	struct cbuf b[3];
	int bad = 0, rc = STORE_OK;
	struct cbuf v;
	char hid[16], nx[16];

	snprintf(hid, sizeof(hid), "%d", host_id);
	snprintf(nx, sizeof(nx), "%d", next);
	cbuf_init(&v);
	for (int k = 0; k < 3; k++) {
		cbuf_init(&b[k]);
		bad |= arr_begin(&b[k]);
	}
	for (size_t j = 0; j < cs->n && !bad; j++) {
		v.len = 0;
		bad |= encode_cell(&cs->c[j], &v) | arr_num(&b[0], cs->c[j].cgid) | arr_num(&b[1], cs->c[j].b5) |
		       arr_bytea(&b[2], v.p, v.len);
		stats->bytes += (long)v.len;
	}
	for (int k = 0; k < 3; k++)
		bad |= arr_end(&b[k]);
	if (bad) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
	}
	if (rc == STORE_OK && cs->n) {
		const char *prm[4] = { hid, (const char *)b[0].p, (const char *)b[1].p, (const char *)b[2].p };
		rc = store_q(c, "INSERT INTO cgroup_rollup_5m (host_id, cgroup_id, b5, v) "
			     "SELECT $1::int, u.g, u.b, u.v FROM unnest($2::bigint[], $3::int[], $4::bytea[]) AS u(g, b, v)",
			     4, prm, 0, NULL, "store cgroup rollups", err, errlen);
	}
	if (rc == STORE_OK) {
		const char *prm[2] = { hid, nx };
		rc = store_q(c, "UPDATE cgroup_rollup_done SET next_b5 = $2::int WHERE host_id = $1::int",
			     2, prm, 0, NULL, "move the cgroup rollup mark", err, errlen);
	}
	if (rc == STORE_OK)
		stats->cells += (long)cs->n;
	for (int k = 0; k < 3; k++)
		cbuf_release(&b[k]);
	cbuf_release(&v);
	return rc;
}

/* One transaction: claims up to claim hosts with closed buckets, the
 * oldest waiting at least min_pending buckets, one by one (the candidates
 * are read first, then each host's row locked FOR UPDATE SKIP LOCKED: a
 * host another server holds is skipped, and no statement locks rows of
 * several hosts), rolls up to CGROLL_CHUNK_BUCKETS buckets of each, writes
 * and commits. *nclaimed: hosts taken (0: nothing to do). */
static int run_tx(PGconn *c, const struct slotinfo *si, int64_t now_ms, int min_pending, int64_t oldest_b5,
		  int claim, struct cgroll_stats *stats, int *nclaimed, char *err, size_t errlen)
{
	char nb[24], lim[16], mp[16];
	const char *prm[3] = { nb, lim, mp };
	PGresult *r, *cand = NULL;
	struct cells cs = { 0 };
	int nh = 0;
	long buckets = 0;

	*nclaimed = 0;
	snprintf(nb, sizeof(nb), "%" PRId64, (int64_t)(now_ms / CGROLL_STEP_MS));
	snprintf(lim, sizeof(lim), "%d", 4 * claim);
	snprintf(mp, sizeof(mp), "%d", min_pending);
	int rc = store_q(c, "SELECT d.host_id, d.next_b5 FROM cgroup_rollup_done d JOIN hosts h ON h.id = d.host_id "
			 "WHERE d.next_b5 < least(h.last_ts_ms / 300000, $1::bigint) "
			 "AND d.next_b5 <= $1::bigint - $3::int ORDER BY d.next_b5 LIMIT $2::int",
			 3, prm, 0, &cand, "find hosts to roll up", err, errlen);
	if (rc != STORE_OK)
		return rc;
	if (PQntuples(cand) == 0) {
		PQclear(cand);
		return STORE_OK;
	}
	rc = store_q(c, "BEGIN", 0, NULL, 0, NULL, "begin", err, errlen);
	for (int i = 0; rc == STORE_OK && i < PQntuples(cand) && nh < claim; i++) {
		const char *cp[3] = { PQgetvalue(cand, i, 0), PQgetvalue(cand, i, 1), nb };
		rc = store_q(c, "SELECT d.next_b5, least(h.last_ts_ms / 300000, $3::bigint) FROM cgroup_rollup_done d "
			     "JOIN hosts h ON h.id = d.host_id WHERE d.host_id = $1::int AND h.id = $1::int "
			     "AND d.next_b5 = $2::int FOR UPDATE OF d SKIP LOCKED", 3, cp, 0, &r,
			     "claim a host to roll up", err, errlen);
		if (rc != STORE_OK)
			break;
		if (PQntuples(r) != 1) {	/* another server has it, or did it */
			PQclear(r);
			continue;
		}
		int32_t hid = (int32_t)strtol(cp[0], NULL, 10);
		int64_t from = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		int64_t closed = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
		PQclear(r);
		if (from < oldest_b5)
			from = oldest_b5;	/* older than rollup retention: not kept */
		int64_t to = from + CGROLL_CHUNK_BUCKETS < closed ? from + CGROLL_CHUNK_BUCKETS : closed;
		long nin = 0;
		cs.n = 0;
		cs.bucket_start = 0;
		if (from < to) {
			rc = roll_host(c, si, hid, from * CGROLL_STEP_MS, to * CGROLL_STEP_MS, &cs,
				       &stats->rows_read, &nin, err, errlen);
			if (rc != STORE_OK)
				break;
		}
		if (nin == 0 && to < closed) {
			/* a gap (host silent, raw rows expired): jump to its next row */
			char h[16], t[24];
			const char *p2[2] = { h, t };
			PGresult *g;
			snprintf(h, sizeof(h), "%d", hid);
			snprintf(t, sizeof(t), "%" PRId64, (int64_t)(to * CGROLL_STEP_MS));
			rc = store_q(c, "SELECT min(ts_ms) / 300000 FROM samples WHERE host_id = $1::int "
				     "AND ts_ms >= $2::bigint", 2, p2, 0, &g, "find the next sample", err, errlen);
			if (rc != STORE_OK)
				break;
			if (!PQgetisnull(g, 0, 0)) {
				int64_t nx = strtoll(PQgetvalue(g, 0, 0), NULL, 10);
				to = nx < closed ? nx : closed;
			}
			PQclear(g);
		}
		if (from < to)
			buckets += (long)(to - from);
		if ((rc = write_host(c, hid, &cs, (int32_t)to, stats, err, errlen)) != STORE_OK)
			break;
		nh++;
	}
	PQclear(cand);
	if (rc == STORE_OK)
		rc = store_q(c, "COMMIT", 0, NULL, 0, NULL, "commit cgroup rollups", err, errlen);
	if (rc != STORE_OK)
		goto fail;
	free(cs.c);
	*nclaimed = nh;
	if (nh) {
		stats->txs++;
		stats->host_buckets += buckets;
	}
	return STORE_OK;
fail:
	free(cs.c);
	if (PQstatus(c) == CONNECTION_OK)
		PQclear(PQexec(c, "ROLLBACK"));
	return rc;
}

/* Starts the cgroup rollups of hosts with cgroups that have none yet, at
 * their oldest raw row (within retention): the candidates first, then one
 * statement per host (on its shard). */
static int start_new_hosts(PGconn *c, int64_t oldest_b5, char *err, size_t errlen)
{
	PGresult *r;
	char cut[24];

	snprintf(cut, sizeof(cut), "%" PRId64, oldest_b5);
	int rc = store_q(c, "SELECT h.id FROM hosts h LEFT JOIN cgroup_rollup_done d ON d.host_id = h.id "
			 "WHERE h.ncgroups > 0 AND h.samples > 0 AND d.host_id IS NULL LIMIT 1000", 0, NULL, 0, &r,
			 "find new hosts with cgroups", err, errlen);
	if (rc != STORE_OK)
		return rc;
	for (int i = 0; rc == STORE_OK && i < PQntuples(r); i++) {
		const char *prm[2] = { PQgetvalue(r, i, 0), cut };
		rc = store_q(c, "INSERT INTO cgroup_rollup_done (host_id, next_b5) "
			     "SELECT $1::int, greatest($2::bigint, min(ts_ms) / 300000) FROM samples "
			     "WHERE host_id = $1::int HAVING min(ts_ms) IS NOT NULL ON CONFLICT DO NOTHING",
			     2, prm, 0, NULL, "start cgroup rollups of a new host", err, errlen);
	}
	PQclear(r);
	return rc;
}

int store_cgrollup_run(struct store *st, int64_t now_ms, int min_pending, int max_tx, struct cgroll_stats *stats,
		       bool *more, char *err, size_t errlen)
{
	struct slotinfo si;
	PGresult *r;
	int64_t oldest_b5 = (now_ms - (int64_t)st->rollup_retention_days * STORE_DAY_MS) / CGROLL_STEP_MS;

	*more = false;
	PGconn *c = db_pool_get(st->pool, STORE_POOL_WAIT_MS, err, errlen);
	if (!c)
		return STORE_EUNAVAIL;
	int rc = resolve_slots(st, c, &si, err, errlen);
	/* new hosts first: the oldest-row probe, one per day partition, runs
	 * for them only, not for the whole fleet every 10 s */
	if (rc == STORE_OK)
		rc = start_new_hosts(c, oldest_b5, err, errlen);
	/* partitions from the oldest bucket waiting to now, outside transactions */
	if (rc == STORE_OK)
		rc = store_q(c, "SELECT min(next_b5) FROM cgroup_rollup_done", 0, NULL, 0, &r,
			     "find the oldest bucket to roll up", err, errlen);
	if (rc == STORE_OK) {
		int64_t from_b5 = PQgetisnull(r, 0, 0) ? now_ms / CGROLL_STEP_MS : strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		PQclear(r);
		if (from_b5 < oldest_b5)
			from_b5 = oldest_b5;
		rc = ensure_months(c, from_b5 * CGROLL_STEP_MS, now_ms, err, errlen);
	}
	for (int t = 0; rc == STORE_OK && t < max_tx; t++) {
		int n = 0;
		/* one host per transaction on Citus: a transaction on one shard */
		rc = run_tx(c, &si, now_ms, min_pending, oldest_b5, st->citus ? 1 : CGROLL_CLAIM_HOSTS, stats, &n,
			    err, errlen);
		if (n == 0)
			break;
		if (t == max_tx - 1)
			*more = true;
	}
	db_pool_put(st->pool, c, rc == STORE_EUNAVAIL);
	return rc;
}

/* ---- reads ---- */

int cgroll_done_ms(PGconn *c, int32_t host_id, int64_t *done_ms, char *err, size_t errlen)
{
	char h[16];
	const char *prm[1] = { h };
	PGresult *r;

	*done_ms = 0;
	snprintf(h, sizeof(h), "%d", host_id);
	int rc = store_q(c, "SELECT next_b5 FROM cgroup_rollup_done WHERE host_id = $1::int", 1, prm, 0, &r,
			 "read the cgroup rollup mark", err, errlen);
	if (rc != STORE_OK)
		return rc;
	if (PQntuples(r) == 1)
		*done_ms = strtoll(PQgetvalue(r, 0, 0), NULL, 10) * CGROLL_STEP_MS;
	PQclear(r);
	return STORE_OK;
}

int cgroll_read(PGconn *c, int32_t host_id, uint32_t cgid, int64_t from_ms, int64_t until_ms, PGresult **out,
		char *err, size_t errlen)
{
	char h[16], g[16], a[24], b[24];
	const char *prm[4] = { g, a, b, h };

	snprintf(h, sizeof(h), "%d", host_id);
	snprintf(g, sizeof(g), "%u", cgid);
	/* buckets starting in [from, until): b5 * 300000 >= from */
	snprintf(a, sizeof(a), "%" PRId64, (int64_t)((from_ms + CGROLL_STEP_MS - 1) / CGROLL_STEP_MS));
	snprintf(b, sizeof(b), "%" PRId64, (int64_t)((until_ms + CGROLL_STEP_MS - 1) / CGROLL_STEP_MS));
	return store_q(c, "SELECT b5, v FROM cgroup_rollup_5m WHERE host_id = $4::int AND cgroup_id = $1::bigint "
		       "AND b5 >= $2::int AND b5 < $3::int ORDER BY b5", 4, prm, 1, out, "read cgroup rollups", err,
		       errlen);
}
