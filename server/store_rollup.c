/* store_rollup.c - 5-minute rollups: accumulate on ingest, merge into
 * rollup_5m, month partitions and their retention, reads for the fleet
 * view and long series ranges (see store_rollup.h). */
#include "store_rollup.h"

#include "dict.h"
#include "metric_kind.h"
#include "pgarr.h"
#include "store_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fleet view's metrics (docs/api.md "Fleet") and the PSI pair the
 * dashboard shows first. Appending is fine; reordering needs a migration. */
const char *const rollup_metric[ROLLUP_NSLOT] = {
	"psi.memory.some.avg10",	  "psi.memory.full.avg10",
	"vmstat.workingset_refault_file", "vmstat.workingset_refault",
	"vmstat.pgsteal_kswapd",	  "vmstat.pgsteal_direct",
	"vmstat.pgscan_kswapd",		  "vmstat.pgscan_direct",
	"vmstat.pswpin",		  "vmstat.pswpout",
};

int rollup_slot(const char *metric)
{
	for (int i = 0; metric && i < ROLLUP_NSLOT; i++)
		if (strcmp(metric, rollup_metric[i]) == 0)
			return i;
	return -1;
}

void rollup_acc_init(struct rollup_acc *a, struct store *st)
{
	memset(a, 0, sizeof(*a));
	for (int i = 0; i < ROLLUP_NSLOT; i++) {
		a->counter[i] = metric_kind(rollup_metric[i], false) == METRIC_COUNTER;
		a->scale[i] = metric_scale(rollup_metric[i], false);
		uint32_t did = dict_lookup(rollup_metric[i]);
		if (!did)
			continue;
		pthread_mutex_lock(&st->mu);
		a->mid[i] = st->metric_db[did];
		pthread_mutex_unlock(&st->mu);
	}
}

void rollup_acc_release(struct rollup_acc *a)
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
static struct rollup_cell *cell_for(struct rollup_acc *a, int32_t host_id, int64_t bucket)
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

int rollup_acc_add(struct rollup_acc *a, int32_t host_id, int64_t ts, int boot,
		   const struct sset *cur, const struct sset *prev, int64_t prev_ts, int prev_boot)
{
	struct rollup_cell *c = cell_for(a, host_id, bucket_of(ts));

	if (!c)
		return -1;
	c->n++;
	for (int i = 0; i < ROLLUP_NSLOT; i++) {
		int64_t v, pv;
		double x;
		if (!a->mid[i] || !sset_get(cur, (uint32_t)a->mid[i], &v) || v == SAMPLE_NULL)
			continue;
		if (!a->counter[i]) {
			x = (double)v * a->scale[i];
		} else {
			/* the rule of store_series' point_value */
			if (!prev || !sset_get(prev, (uint32_t)a->mid[i], &pv) || pv == SAMPLE_NULL ||
			    prev_boot != boot || v < pv || ts <= prev_ts)
				continue;
			x = (double)(v - pv) * a->scale[i] * 1000.0 / (double)(ts - prev_ts);
		}
		if (!c->cnt[i] || x < c->lo[i])
			c->lo[i] = x;
		if (!c->cnt[i] || x > c->hi[i])
			c->hi[i] = x;
		c->sum[i] += x;
		c->cnt[i]++;
	}
	return 0;
}

static int arr_dbl(struct cbuf *b, bool null, double v)
{
	char num[40];
	int n = null ? snprintf(num, sizeof(num), "NULL") : snprintf(num, sizeof(num), "%.17g", v);
	return arr_sep(b) | cbuf_put(b, num, (size_t)n);
}

/* The merge statement, built once: 4 + 4 * ROLLUP_NSLOT array parameters. */
static char write_sql[6144];
static pthread_once_t write_once = PTHREAD_ONCE_INIT;

static void build_write_sql(void)
{
	size_t o = 0, cap = sizeof(write_sql);
	o += (size_t)snprintf(write_sql + o, cap - o,
			      "INSERT INTO rollup_5m AS r (host_id, cgroup_id, bucket_ms, n");
	for (int i = 0; i < ROLLUP_NSLOT; i++)
		o += (size_t)snprintf(write_sql + o, cap - o, ", n%d, s%d, lo%d, hi%d", i, i, i, i);
	o += (size_t)snprintf(write_sql + o, cap - o,
			      ") SELECT * FROM unnest($1::int[], $2::int[], $3::bigint[], $4::int[]");
	for (int i = 0; i < ROLLUP_NSLOT; i++)
		o += (size_t)snprintf(write_sql + o, cap - o,
				      ", $%d::smallint[], $%d::float8[], $%d::real[], $%d::real[]",
				      5 + 4 * i, 6 + 4 * i, 7 + 4 * i, 8 + 4 * i);
	o += (size_t)snprintf(write_sql + o, cap - o,
			      ") ON CONFLICT (host_id, cgroup_id, bucket_ms) DO UPDATE SET n = r.n + excluded.n");
	for (int i = 0; i < ROLLUP_NSLOT; i++)
		o += (size_t)snprintf(write_sql + o, cap - o,
				      ", n%d = r.n%d + excluded.n%d, s%d = r.s%d + excluded.s%d"
				      ", lo%d = least(r.lo%d, excluded.lo%d), hi%d = greatest(r.hi%d, excluded.hi%d)",
				      i, i, i, i, i, i, i, i, i, i, i, i);
}

int rollup_acc_write(const struct rollup_acc *a, PGconn *c, char *err, size_t errlen)
{
	enum { NCOL = 4 + 4 * ROLLUP_NSLOT };
	struct cbuf b[NCOL];
	const char *prm[NCOL];
	int bad = 0, rc;

	if (!a->n)
		return STORE_OK;
	pthread_once(&write_once, build_write_sql);
	for (int k = 0; k < NCOL; k++) {
		cbuf_init(&b[k]);
		bad |= arr_begin(&b[k]);
	}
	for (size_t j = 0; j < a->n && !bad; j++) {
		const struct rollup_cell *x = &a->c[j];
		bad |= arr_num(&b[0], x->host_id) | arr_num(&b[1], 0) | arr_num(&b[2], x->bucket_ms) |
		       arr_num(&b[3], x->n);
		for (int i = 0; i < ROLLUP_NSLOT; i++) {
			bool none = x->cnt[i] == 0;
			bad |= arr_num(&b[4 + 4 * i], x->cnt[i]) | arr_dbl(&b[5 + 4 * i], false, x->sum[i]) |
			       arr_dbl(&b[6 + 4 * i], none, x->lo[i]) | arr_dbl(&b[7 + 4 * i], none, x->hi[i]);
		}
	}
	for (int k = 0; k < NCOL; k++) {
		bad |= arr_end(&b[k]);
		prm[k] = (const char *)b[k].p;
	}
	if (bad) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
	} else {
		rc = store_q(c, write_sql, NCOL, prm, 0, NULL, "store rollups", err, errlen);
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
		snprintf(sql, sizeof(sql),
			 "DO $$BEGIN PERFORM set_config('lock_timeout', '10s', true); "
			 "PERFORM pg_advisory_xact_lock(7667); "
			 "IF to_regclass('%s') IS NULL THEN "
			 "CREATE TABLE %s PARTITION OF rollup_5m FOR VALUES FROM (%lld) TO (%lld); "
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
	char sql[4096], a[24], b[24], s[24], h[16];
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
