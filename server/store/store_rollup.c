/* store_rollup.c - 5-minute rollups: accumulate on ingest, merge into
 * rollup_5m, month partitions and their retention, reads for the fleet
 * view and long series ranges (see store_rollup.h). */
#include "store_rollup.h"

#include "dict.h"
#include "metric_kind.h"
#include "pgarr.h"
#include "pgbin.h"
#include "store_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slots 0..9 (020_rollup.sql): the fleet view's metrics (docs/api.md
 * "Fleet") and the PSI pair the dashboard shows first. Slots 10..36
 * (031_rollup_wide.sql, 100_rollup_all_reclaim.sql): the rest of what the host view charts
 * (web/js/figures.js, host.js) and what GET /api/v1/compare reads.
 * Appending is fine; reordering needs a migration.
 *
 * What a slot holds on each kernel (RECLAIM-NOTES.md "Renames"):
 *  - workingset_refault_file/_anon, workingset_activate_file/_anon: 5.9+;
 *    before 5.9 they are empty and workingset_refault / workingset_activate
 *    (file and anon together) hold the figure. Never added together.
 *  - pgscan/pgsteal_kswapd/_direct: the per-node counter (4.8+); before
 *    4.8, where only per-zone names exist (pgscan_kswapd_normal, ...), the
 *    sum of the zones' rates. They count machine-wide reclaim only; the
 *    pgscan/pgsteal_anon/file family is not mixed in.
 *  - allocstall: the single counter before 4.10; since 4.10 the sum of
 *    allocstall_{dma,dma32,normal,movable,device} (whichever exist).
 *    allocstall_normal ... allocstall_device also have their own slots
 *    (the host view draws one line per zone).
 *  - meminfo.* and vmstat nr_dirty*, nr_writeback: gauges (kB and pages);
 *    swap used = SwapTotal - SwapFree of the same buckets' averages.
 *  - psi.*: avg10 in percent; empty before 4.20 or with psi=0.
 *  - nr_vmscan_write, nr_vmscan_immediate_reclaim, pgrotated, pswpin,
 *    pswpout: counters, as per-second rates, on every kernel.
 *  - pgscan/pgsteal_anon/_file (100_rollup_all_reclaim.sql): 5.8+, all
 *    reclaim (a cgroup's limit reclaim too); empty before 5.8. */
const char *const rollup_metric[ROLLUP_NSLOT] = {
	"psi.memory.some.avg10",	  "psi.memory.full.avg10",
	"vmstat.workingset_refault_file", "vmstat.workingset_refault",
	"vmstat.pgsteal_kswapd",	  "vmstat.pgsteal_direct",
	"vmstat.pgscan_kswapd",		  "vmstat.pgscan_direct",
	"vmstat.pswpin",		  "vmstat.pswpout",
	/* 10 */
	"vmstat.workingset_refault_anon", "vmstat.workingset_activate_file",
	"vmstat.workingset_activate_anon", "vmstat.workingset_activate",
	"vmstat.nr_vmscan_write",	  "vmstat.nr_vmscan_immediate_reclaim",
	"vmstat.pgrotated",		  "vmstat.nr_dirty",
	"vmstat.nr_writeback",		  "meminfo.Dirty",
	/* 20 */
	"meminfo.Writeback",		  "vmstat.nr_dirty_threshold",
	"vmstat.nr_dirty_background_threshold", "meminfo.SwapTotal",
	"meminfo.SwapFree",		  "psi.io.some.avg10",
	"psi.io.full.avg10",		  "vmstat.allocstall",
	"vmstat.allocstall_normal",	  "vmstat.allocstall_movable",
	/* 30 */
	"vmstat.allocstall_dma",	  "vmstat.allocstall_dma32",
	"vmstat.allocstall_device",	  "vmstat.pgscan_anon",
	"vmstat.pgscan_file",		  "vmstat.pgsteal_anon",
	"vmstat.pgsteal_file",
};

/* The names a slot sums when the host does not report rollup_metric[i]
 * itself (counters only; see above). */
#define ZONES(p) { p "_dma", p "_dma32", p "_normal", p "_movable", p "_high" }
static const char *const rollup_parts[ROLLUP_NSLOT][ROLLUP_MAXPART] = {
	[4] = ZONES("vmstat.pgsteal_kswapd"), [5] = ZONES("vmstat.pgsteal_direct"),
	[6] = ZONES("vmstat.pgscan_kswapd"),  [7] = ZONES("vmstat.pgscan_direct"),
	[27] = { "vmstat.allocstall_dma", "vmstat.allocstall_dma32", "vmstat.allocstall_normal",
		 "vmstat.allocstall_movable", "vmstat.allocstall_device" },
};

int rollup_slot(const char *metric)
{
	for (int i = 0; metric && i < ROLLUP_NSLOT; i++)
		if (strcmp(metric, rollup_metric[i]) == 0)
			return i;
	return -1;
}

/* What does not change of the slots, worked out once: whether each is a
 * counter, its scale, and the dictionary ids of its names (0 while a name
 * is not interned; looked up again then). rollup_ctx_init runs once per
 * ingest transaction, and classifying 33 names and hashing ~50 was 1.3% of
 * the server's instructions per one-sample transaction (callgrind). */
static struct {
	bool counter[ROLLUP_NSLOT];
	double scale[ROLLUP_NSLOT];
} slot_kind;
static _Atomic uint32_t slot_did[ROLLUP_NSLOT], part_did[ROLLUP_NSLOT][ROLLUP_MAXPART];
static pthread_once_t kind_once = PTHREAD_ONCE_INIT;

static void kind_init(void)
{
	for (int i = 0; i < ROLLUP_NSLOT; i++) {
		slot_kind.counter[i] = metric_kind(rollup_metric[i], false) == METRIC_COUNTER;
		slot_kind.scale[i] = metric_scale(rollup_metric[i], false);
	}
}

/* The dictionary id of name, cached in *did once known (a name's id never
 * changes). */
static uint32_t cached_did(_Atomic uint32_t *did, const char *name)
{
	uint32_t d = atomic_load_explicit(did, memory_order_relaxed);
	if (!d && (d = dict_lookup(name)))
		atomic_store_explicit(did, d, memory_order_relaxed);
	return d;
}

void rollup_ctx_init(struct rollup_ctx *a, struct store *st)
{
	uint32_t did[ROLLUP_NSLOT], pdid[ROLLUP_NSLOT][ROLLUP_MAXPART];

	pthread_once(&kind_once, kind_init);
	memset(a, 0, sizeof(*a));
	memset(pdid, 0, sizeof(pdid));
	for (int i = 0; i < ROLLUP_NSLOT; i++) {
		a->counter[i] = slot_kind.counter[i];
		a->scale[i] = slot_kind.scale[i];
		did[i] = cached_did(&slot_did[i], rollup_metric[i]);
		for (int k = 0; k < ROLLUP_MAXPART && a->counter[i] && rollup_parts[i][k]; k++)
			pdid[i][k] = cached_did(&part_did[i][k], rollup_parts[i][k]);
	}
	/* the database ids from the store's cache (0: unknown), in one hold */
	pthread_mutex_lock(&st->mu);
	for (int i = 0; i < ROLLUP_NSLOT; i++) {
		a->mid[i] = did[i] ? st->metric_db[did[i]] : 0;
		for (int k = 0; k < ROLLUP_MAXPART; k++)
			a->pmid[i][k] = pdid[i][k] ? st->metric_db[pdid[i][k]] : 0;
	}
	pthread_mutex_unlock(&st->mu);
}

void rollup_cells_release(struct rollup_cells *a)
{
	free(a->c);
	memset(a, 0, sizeof(*a));
}

static int64_t bucket_of(int64_t ts)
{
	int64_t b = ts / ROLLUP_STEP_MS;
	if (ts < 0 && ts % ROLLUP_STEP_MS)
		b--;
	return b * ROLLUP_STEP_MS;
}

/* The cell of (host, bucket): the last one when it matches (samples come
 * in (host, ts) order), else a new one. NULL when out of memory. */
static struct rollup_cell *cell_for(struct rollup_cells *a, int32_t host_id, int64_t bucket)
{
	if (a->n && a->c[a->n - 1].host_id == host_id && a->c[a->n - 1].bucket_ms == bucket)
		return &a->c[a->n - 1];
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		struct rollup_cell *t = realloc(a->c, cap * sizeof(*t));
		if (!t)
			return NULL;
		a->c = t;
		a->cap = cap;
	}
	struct rollup_cell *c = &a->c[a->n++];
	memset(c, 0, sizeof(*c));
	c->host_id = host_id;
	c->bucket_ms = bucket;
	return c;
}

enum { V_ABSENT, V_NULL, V_VALUE };

/* The value of metric mid in cur, as store_series' point_value gives it
 * (a counter's rate needs a previous value in the same boot that is not
 * larger). V_* code; *x set for V_VALUE. */
static int slot_value(int32_t mid, bool counter, double scale, int64_t ts, int boot, const struct sset *cur,
		      const struct sset *prev, int64_t prev_ts, int prev_boot, double *x)
{
	int64_t v, pv;

	if (!mid || !sset_get(cur, (uint32_t)mid, &v))
		return V_ABSENT;
	if (v == SAMPLE_NULL)
		return V_NULL;
	if (!counter) {
		*x = (double)v * scale;
		return V_VALUE;
	}
	if (!prev || !sset_get(prev, (uint32_t)mid, &pv) || pv == SAMPLE_NULL || prev_boot != boot || v < pv ||
	    ts <= prev_ts)
		return V_NULL;
	*x = (double)(v - pv) * scale * 1000.0 / (double)(ts - prev_ts);
	return V_VALUE;
}

int rollup_cells_add(struct rollup_cells *cs, const struct rollup_ctx *a, int32_t host_id, int64_t ts, int boot,
		     const struct sset *cur, const struct sset *prev, int64_t prev_ts, int prev_boot)
{
	struct rollup_cell *c = cell_for(cs, host_id, bucket_of(ts));

	if (!c)
		return -1;
	c->n++;
	for (int i = 0; i < ROLLUP_NSLOT; i++) {
		double x = 0;
		int st = slot_value(a->mid[i], a->counter[i], a->scale[i], ts, boot, cur, prev, prev_ts, prev_boot, &x);
		if (st == V_ABSENT && a->counter[i]) {
			/* the per-zone names this kernel has instead: their rates
			 * add up; one without a rate makes the sum unknown */
			int nval = 0, nnull = 0;
			for (int k = 0; k < ROLLUP_MAXPART; k++) {
				double y;
				int ps = slot_value(a->pmid[i][k], true, a->scale[i], ts, boot, cur, prev, prev_ts,
						    prev_boot, &y);
				nval += ps == V_VALUE;
				nnull += ps == V_NULL;
				if (ps == V_VALUE)
					x += y;
			}
			st = nnull ? V_NULL : nval ? V_VALUE : V_ABSENT;
		}
		if (st != V_VALUE)
			continue;
		if (!c->cnt[i] || x < c->lo[i])
			c->lo[i] = x;
		if (!c->cnt[i] || x > c->hi[i])
			c->hi[i] = x;
		c->sum[i] += x;
		c->cnt[i]++;
	}
	return 0;
}

/* A minimum or maximum as real: none (no value in the bucket) as NaN,
 * which the statement turns into NULL (an array without NULLs is
 * subscripted in constant time, one with NULLs by counting the bitmap up to
 * the element; rates and gauges are never NaN themselves). -1 when the
 * value is out of real's range, as PostgreSQL's own conversion refuses it. */
static int put_real(struct cbuf *b, bool none, double v)
{
	float f = none ? NAN : (float)v;
	if (!none && isinf(f) && !isinf(v))
		return -1;
	return pgbin_grid_f32(b, f);
}

/* The merge statement, built once. The cells travel as 8 parameters: 4
 * one-dimensional arrays (host, cgroup, bucket, n) and 4 two-dimensional
 * ones, one row of ROLLUP_NSLOT per cell (counts, sums, minima, maxima).
 * Not 4 + 4 * ROLLUP_NSLOT one-dimensional arrays: PostgreSQL looks up
 * the input function and parses an array literal per parameter, and with
 * one or a few cells per ingest transaction 136 such conversions would be
 * most of the statement's cost (pg_stat_statements, docs/scaling.md). */
static int write_cells(const struct rollup_cell *cells, size_t ncells, PGconn *c, enum store_prep_id id,
		       const char *sql, char *err, size_t errlen);

static char write_sql[32768];
/* On Citus: one cell per statement, VALUES of the same 8 parameters (one
 * row each of the 2-D arrays): an INSERT ... SELECT from unnest runs by
 * pulling the rows to the coordinator; VALUES is routed to the host's
 * shard. */
static char write1_sql[32768];
static pthread_once_t write_once = PTHREAD_ONCE_INIT;

static size_t put_merge(char *sql, size_t o, size_t cap)
{
	o += (size_t)snprintf(sql + o, cap - o,
			      " ON CONFLICT (host_id, cgroup_id, bucket_ms) DO UPDATE SET n = r.n + excluded.n");
	for (int i = 0; i < ROLLUP_NSLOT; i++)
		o += (size_t)snprintf(sql + o, cap - o,
				      ", n%d = r.n%d + excluded.n%d, s%d = r.s%d + excluded.s%d"
				      ", lo%d = least(r.lo%d, excluded.lo%d), hi%d = greatest(r.hi%d, excluded.hi%d)",
				      i, i, i, i, i, i, i, i, i, i, i, i);
	return o;
}

static void build_write1_sql(void)
{
	size_t o = 0, cap = sizeof(write1_sql);
	o += (size_t)snprintf(write1_sql + o, cap - o,
			      "INSERT INTO rollup_5m AS r (host_id, cgroup_id, bucket_ms, n");
	for (int i = 0; i < ROLLUP_NSLOT; i++)
		o += (size_t)snprintf(write1_sql + o, cap - o, ", n%d, s%d, lo%d, hi%d", i, i, i, i);
	o += (size_t)snprintf(write1_sql + o, cap - o,
			      ") VALUES (($1::int[])[1], ($2::int[])[1], ($3::bigint[])[1], ($4::int[])[1]");
	for (int i = 0; i < ROLLUP_NSLOT; i++)
		o += (size_t)snprintf(write1_sql + o, cap - o,
				      ", ($5::smallint[])[1][%d], ($6::float8[])[1][%d]"
				      ", nullif(($7::real[])[1][%d], 'NaN'), nullif(($8::real[])[1][%d], 'NaN')",
				      i + 1, i + 1, i + 1, i + 1);
	o += (size_t)snprintf(write1_sql + o, cap - o, ")");
	put_merge(write1_sql, o, cap);
}

static void build_write_sql(void)
{
	size_t o = 0, cap = sizeof(write_sql);
	build_write1_sql();
	o += (size_t)snprintf(write_sql + o, cap - o,
			      "INSERT INTO rollup_5m AS r (host_id, cgroup_id, bucket_ms, n");
	for (int i = 0; i < ROLLUP_NSLOT; i++)
		o += (size_t)snprintf(write_sql + o, cap - o, ", n%d, s%d, lo%d, hi%d", i, i, i, i);
	o += (size_t)snprintf(write_sql + o, cap - o, ") SELECT u.h, u.c, u.b, u.n");
	/* (a cell's slots: row u.o of the 2-D arrays) */
	for (int i = 0; i < ROLLUP_NSLOT; i++)
		o += (size_t)snprintf(write_sql + o, cap - o,
				      ", ($5::smallint[])[u.o::int][%d], ($6::float8[])[u.o::int][%d]"
				      ", nullif(($7::real[])[u.o::int][%d], 'NaN'), nullif(($8::real[])[u.o::int][%d], 'NaN')",
				      i + 1, i + 1, i + 1, i + 1);
	o += (size_t)snprintf(write_sql + o, cap - o,
			      " FROM unnest($1::int[], $2::int[], $3::bigint[], $4::int[]) WITH ORDINALITY "
			      "AS u(h, c, b, n, o)");
	put_merge(write_sql, o, cap);
}

int rollup_cells_write_routed(const struct rollup_cell *cells, size_t ncells, PGconn *c, bool routed, char *err,
			      size_t errlen)
{
	if (!routed)
		return rollup_cells_write(cells, ncells, c, err, errlen);
	pthread_once(&write_once, build_write_sql);
	for (size_t i = 0; i < ncells; i++) {
		int rc = write_cells(&cells[i], 1, c, STORE_PREP_ROLLUP1, write1_sql, err, errlen);
		if (rc != STORE_OK)
			return rc;
	}
	return STORE_OK;
}

int rollup_cells_write(const struct rollup_cell *cells, size_t ncells, PGconn *c, char *err, size_t errlen)
{
	if (!ncells)
		return STORE_OK;
	pthread_once(&write_once, build_write_sql);
	return write_cells(cells, ncells, c, STORE_PREP_ROLLUP, write_sql, err, errlen);
}

/* cells[0..ncells) as the 8 parameters of sql, sent without waiting: the
 * 1-D arrays as text, the counts, sums, minima and maxima as binary 2-D
 * arrays (pgbin.h; printing 99 doubles a cell with %.17g and PostgreSQL
 * parsing them back were most of a checkpoint's cost). */
static int write_cells(const struct rollup_cell *cells, size_t ncells, PGconn *c, enum store_prep_id id,
		       const char *sql, char *err, size_t errlen)
{
	enum { NCOL = 8, NTEXT = 4 };
	static const enum pgbin_elem grid_type[NCOL - NTEXT] = { PGBIN_INT2, PGBIN_FLOAT8, PGBIN_FLOAT4,
								 PGBIN_FLOAT4 };
	struct cbuf b[NCOL];
	const char *prm[NCOL];
	int lens[NCOL] = { 0 }, fmts[NCOL] = { 0 };
	int bad = 0, range = 0, rc;

	for (int k = 0; k < NCOL; k++) {
		cbuf_init(&b[k]);
		bad |= k < NTEXT ? arr_begin(&b[k]) : pgbin_grid_begin(&b[k], grid_type[k - NTEXT], ncells, ROLLUP_NSLOT);
	}
	for (size_t j = 0; j < ncells && !bad && !range; j++) {
		const struct rollup_cell *x = &cells[j];
		bad |= arr_num(&b[0], x->host_id) | arr_num(&b[1], 0) | arr_num(&b[2], x->bucket_ms) |
		       arr_num(&b[3], x->n);
		for (int i = 0; i < ROLLUP_NSLOT && !bad && !range; i++) {
			bool none = x->cnt[i] == 0;
			if (x->cnt[i] > INT16_MAX) {
				range = 1;
				break;
			}
			bad |= pgbin_grid_i16(&b[4], (int16_t)x->cnt[i]) | pgbin_grid_f64(&b[5], x->sum[i]);
			int lo = put_real(&b[6], none, x->lo[i]), hi = put_real(&b[7], none, x->hi[i]);
			range |= (lo < 0 || hi < 0) && !bad;
		}
	}
	for (int k = 0; k < NCOL; k++) {
		if (k < NTEXT)
			bad |= arr_end(&b[k]);
		else
			fmts[k] = 1;
		prm[k] = (const char *)b[k].p;
		lens[k] = (int)b[k].len;
	}
	if (range) {
		snprintf(err, errlen, "could not store rollups: a value is out of range");
		rc = STORE_EINTERNAL;
	} else if (bad) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
	} else {
		rc = store_q_prep_send(c, id, sql, NCOL, prm, lens, fmts, 0, "store rollups", err, errlen);
	}
	for (int k = 0; k < NCOL; k++)
		cbuf_release(&b[k]);
	return rc;
}

/* ---- month partitions ---- */

/* Year and month of a day number (days since 1970-01-01), and back: the
 * civil calendar algorithms of H. Hinnant ("chrono-compatible low-level
 * date algorithms"). */
static void civil_from_days(int64_t z, int *y, int *m)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	int mm = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (mm <= 2));
	*m = mm;
}

static int64_t days_from_civil(int y, int m)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void rollup_month_span(int64_t day, int *key, int64_t *first_day, int64_t *end_day)
{
	int y, m;
	civil_from_days(day, &y, &m);
	*key = y * 100 + m;
	*first_day = days_from_civil(y, m);
	*end_day = days_from_civil(m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1);
}

int64_t rollup_month_end_day(int key)
{
	int y = key / 100, m = key % 100;
	return days_from_civil(m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1);
}

static bool month_known_locked(const struct store *st, int key)
{
	for (size_t i = 0; i < st->nrollup_months; i++)
		if (st->rollup_months[i] == key)
			return true;
	return false;
}

int rollup_ensure_partitions(struct store *st, PGconn *c, const int64_t *days, size_t n,
			     char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		int y, m;
		civil_from_days(days[i], &y, &m);
		int key = y * 100 + m;
		pthread_mutex_lock(&st->mu);
		bool known = month_known_locked(st, key);
		pthread_mutex_unlock(&st->mu);
		if (known)
			continue;
		int ny = m == 12 ? y + 1 : y, nm = m == 12 ? 1 : m + 1;
		char name[64], sql[512];
		snprintf(name, sizeof(name), "rollup_5m_%06d", key);
		/* fillfactor 70: a bucket's row is rewritten by every batch of its
		 * 5 minutes (~30 times at 10 s); room left on the page makes those
		 * HOT updates, pruned in place, instead of dead rows that the
		 * fleet view's scan of the current month has to step over */
		snprintf(sql, sizeof(sql),
			 "DO $$BEGIN PERFORM set_config('lock_timeout', '10s', true); "
			 "PERFORM pg_advisory_xact_lock(7667); "
			 "IF to_regclass('%s') IS NULL THEN "
			 "CREATE TABLE %s PARTITION OF rollup_5m FOR VALUES FROM (%lld) TO (%lld) "
			 "WITH (fillfactor = 70); "
			 "END IF; END$$",
			 name, name, (long long)(days_from_civil(y, m) * STORE_DAY_MS),
			 (long long)(days_from_civil(ny, nm) * STORE_DAY_MS));
		int rc = store_q(c, sql, 0, NULL, 0, NULL, "create a rollup partition", err, errlen);
		if (rc != STORE_OK)
			return rc;
		pthread_mutex_lock(&st->mu);
		if (st->nrollup_months == sizeof(st->rollup_months) / sizeof(st->rollup_months[0]))
			st->nrollup_months = 0;	/* a replay of many months: forget, re-check */
		st->rollup_months[st->nrollup_months++] = key;
		pthread_mutex_unlock(&st->mu);
	}
	return STORE_OK;
}

int rollup_drop_expired(struct store *st, PGconn *c, int64_t now_ms, int days, int *ndropped,
			char *err, size_t errlen)
{
	PGresult *r;
	int64_t cutoff = now_ms - (int64_t)days * STORE_DAY_MS;
	int rc = store_q(c, "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
			 "WHERE i.inhparent = 'rollup_5m'::regclass", 0, NULL, 0, &r,
			 "list rollup partitions", err, errlen);

	*ndropped = 0;
	if (rc != STORE_OK)
		return rc;
	for (int i = 0; i < PQntuples(r); i++) {
		const char *name = PQgetvalue(r, i, 0);
		int key;
		char tail;
		if (sscanf(name, "rollup_5m_%6d%c", &key, &tail) != 1)
			continue;
		int y = key / 100, m = key % 100;
		if (m < 1 || m > 12)
			continue;
		int64_t end = days_from_civil(m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1) * STORE_DAY_MS;
		if (end > cutoff)
			continue;
		char sql[128];
		snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", name);
		if ((rc = store_q(c, sql, 0, NULL, 0, NULL, "drop an expired rollup partition", err, errlen)) != STORE_OK)
			break;
		pthread_mutex_lock(&st->mu);
		for (size_t k = 0; k < st->nrollup_months; k++) {
			if (st->rollup_months[k] == key) {
				st->rollup_months[k] = st->rollup_months[--st->nrollup_months];
				break;
			}
		}
		pthread_mutex_unlock(&st->mu);
		(*ndropped)++;
	}
	PQclear(r);
	return rc;
}

/* ---- reads ---- */

int rollup_read(PGconn *c, int32_t host_id, int64_t since, int64_t until, int64_t step,
		const int *slots, int nslots, PGresult **out, char *err, size_t errlen)
{
	char sql[8192], a[24], b[24], s[24], h[16];
	size_t o = 0, cap = sizeof(sql);

	*out = NULL;
	o += (size_t)snprintf(sql + o, cap - o, "SELECT h.name, GREATEST(0, (r.bucket_ms - $1::bigint) / $3::bigint) AS k, sum(r.n)");
	for (int j = 0; j < nslots; j++) {
		int i = slots[j];
		o += (size_t)snprintf(sql + o, cap - o, ", sum(r.n%d), sum(r.s%d), min(r.lo%d), max(r.hi%d)", i, i, i, i);
	}
	o += (size_t)snprintf(sql + o, cap - o,
			      " FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE r.cgroup_id = 0 "
			      "AND r.bucket_ms > $1::bigint - %lld AND r.bucket_ms <= $2::bigint %s GROUP BY 1, 2 ORDER BY 1, 2",
			      (long long)ROLLUP_STEP_MS, host_id ? "AND r.host_id = $4::int" : "");
	if (o >= cap) {
		snprintf(err, errlen, "rollup query too long");
		return STORE_EINTERNAL;
	}
	snprintf(a, sizeof(a), "%" PRId64, since);
	snprintf(b, sizeof(b), "%" PRId64, until);
	snprintf(s, sizeof(s), "%" PRId64, step);
	snprintf(h, sizeof(h), "%d", host_id);
	const char *prm[4] = { a, b, s, h };
	return store_q(c, sql, host_id ? 4 : 3, prm, 0, out, "read rollups", err, errlen);
}
