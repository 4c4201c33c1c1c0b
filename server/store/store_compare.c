/* store_compare.c - the reads behind GET /api/v1/compare (see
 * store_compare.h): hosts with kernel and labels as of the window, their
 * alert intervals, and their rollup buckets through a binary COPY. */
#include "store_compare.h"

#include "pgarr.h"
#include "pgcopy.h"
#include "store_internal.h"
#include "store_rollup.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cmp_src_metric[CMP_NSRC] = {
	[CMP_PSI_SOME] = "psi.memory.some.avg10",
	[CMP_PSI_FULL] = "psi.memory.full.avg10",
	[CMP_PSI_IO_SOME] = "psi.io.some.avg10",
	[CMP_PSI_IO_FULL] = "psi.io.full.avg10",
	[CMP_REFAULT_FILE] = "vmstat.workingset_refault_file",
	[CMP_REFAULT] = "vmstat.workingset_refault",
	[CMP_REFAULT_ANON] = "vmstat.workingset_refault_anon",
	[CMP_STEAL_K] = "vmstat.pgsteal_kswapd",
	[CMP_STEAL_D] = "vmstat.pgsteal_direct",
	[CMP_SCAN_K] = "vmstat.pgscan_kswapd",
	[CMP_SCAN_D] = "vmstat.pgscan_direct",
	[CMP_PSWPIN] = "vmstat.pswpin",
	[CMP_PSWPOUT] = "vmstat.pswpout",
	[CMP_VMSCAN_WRITE] = "vmstat.nr_vmscan_write",
	[CMP_IMMEDIATE] = "vmstat.nr_vmscan_immediate_reclaim",
	[CMP_ALLOCSTALL] = "vmstat.allocstall",
	[CMP_ALLOCSTALL_DMA] = "vmstat.allocstall_dma",
	[CMP_ALLOCSTALL_DMA32] = "vmstat.allocstall_dma32",
	[CMP_ALLOCSTALL_NORMAL] = "vmstat.allocstall_normal",
	[CMP_ALLOCSTALL_MOVABLE] = "vmstat.allocstall_movable",
	[CMP_ALLOCSTALL_DEVICE] = "vmstat.allocstall_device",
};

static char *dup_or_null(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : strdup(PQgetvalue(r, row, col));
}

void store_compare_hosts_free(struct cmp_host *h, size_t n)
{
	for (size_t i = 0; h && i < n; i++) {
		free(h[i].name);
		free(h[i].kernel);
		json_decref(h[i].labels);
	}
	free(h);
}

int store_compare_hosts(struct store *st, int64_t since_ms, int64_t until_ms,
			struct cmp_host **out, size_t *n, char *err, size_t errlen)
{
	char a[24], b[24];
	const char *prm[2] = { a, b };
	PGresult *r = NULL;
	PGconn *c;
	int rc;

	*out = NULL;
	*n = 0;
	snprintf(a, sizeof(a), "%" PRId64, since_ms);
	snprintf(b, sizeof(b), "%" PRId64, until_ms);
	if (!(c = store_read_conn_get(st))) {
		snprintf(err, errlen, "database unreachable");
		return STORE_EUNAVAIL;
	}
	/* the host_meta row in force at until: the newest at or before it,
	 * else the oldest after it (ordered by "after until", then distance) */
	rc = store_q(c,
		     "SELECT h.id, h.name, coalesce(m.kernel, h.kernel), coalesce(m.labels, h.labels)::text, "
		     "h.last_ts_ms FROM hosts h LEFT JOIN LATERAL (SELECT hm.kernel, hm.labels FROM host_meta hm "
		     "WHERE hm.host_id = h.id ORDER BY hm.ts_ms > $2::bigint, abs(hm.ts_ms - $2::bigint) LIMIT 1) m ON true "
		     "WHERE h.samples > 0 AND h.first_ts_ms <= $2::bigint AND h.last_ts_ms >= $1::bigint ORDER BY h.id",
		     2, prm, 0, &r, "list the hosts to compare", err, errlen);
	store_read_conn_put(st, c, rc == STORE_EUNAVAIL);
	if (rc != STORE_OK)
		return rc;
	int rows = PQntuples(r);
	struct cmp_host *h = rows ? calloc((size_t)rows, sizeof(*h)) : NULL;
	if (rows && !h) {
		PQclear(r);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	for (int i = 0; i < rows; i++) {
		h[i].id = (int32_t)strtol(PQgetvalue(r, i, 0), NULL, 10);
		h[i].name = strdup(PQgetvalue(r, i, 1));
		h[i].kernel = dup_or_null(r, i, 2);
		h[i].labels = PQgetisnull(r, i, 3) ? NULL : json_loads(PQgetvalue(r, i, 3), 0, NULL);
		if (!json_is_object(h[i].labels)) {
			json_decref(h[i].labels);
			h[i].labels = json_object();
		}
		h[i].last_ts_ms = strtoll(PQgetvalue(r, i, 4), NULL, 10);
		if (!h[i].name || !h[i].labels || (!PQgetisnull(r, i, 2) && !h[i].kernel)) {
			PQclear(r);
			store_compare_hosts_free(h, (size_t)rows);
			snprintf(err, errlen, "out of memory");
			return STORE_EINTERNAL;
		}
	}
	PQclear(r);
	*out = h;
	*n = (size_t)rows;
	return STORE_OK;
}

/* "{1,2,3}" of the ids into b (NUL-terminated); -1 when out of memory. */
static int id_array(struct cbuf *b, const int32_t *ids, size_t n)
{
	int bad = arr_begin(b);
	for (size_t i = 0; i < n && !bad; i++)
		bad |= arr_num(b, ids[i]);
	return bad | arr_end(b);
}

/* The three parameters both compare reads take ($1 the host ids as an
 * int[] literal built in *arr, $2 since, $3 until, as text in a and b) and
 * a pooled connection. On STORE_OK the caller releases arr and puts c back;
 * on failure nothing is held. */
static int range_params(struct store *st, struct cbuf *arr, const int32_t *ids, size_t nids,
			int64_t since_ms, int64_t until_ms, char a[24], char b[24],
			const char *prm[3], PGconn **c, char *err, size_t errlen)
{
	cbuf_init(arr);
	if (id_array(arr, ids, nids) < 0) {
		cbuf_release(arr);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	snprintf(a, 24, "%" PRId64, since_ms);
	snprintf(b, 24, "%" PRId64, until_ms);
	prm[0] = (const char *)arr->p;
	prm[1] = a;
	prm[2] = b;
	if (!(*c = store_read_conn_get(st))) {
		cbuf_release(arr);
		snprintf(err, errlen, "database unreachable");
		return STORE_EUNAVAIL;
	}
	return STORE_OK;
}

int store_compare_alerts(struct store *st, const int32_t *ids, size_t nids, int64_t since_ms,
			 int64_t until_ms, struct cmp_alert **out, size_t *n, char *err, size_t errlen)
{
	char a[24], b[24];
	struct cbuf arr;
	PGresult *r = NULL;
	PGconn *c;
	int rc;

	*out = NULL;
	*n = 0;
	if (!nids)
		return STORE_OK;
	const char *prm[3];
	if ((rc = range_params(st, &arr, ids, nids, since_ms, until_ms, a, b, prm, &c, err, errlen)) != STORE_OK)
		return rc;
	rc = store_q(c,
		     "SELECT a.host_id, a.kind, (extract(epoch FROM a.opened_at) * 1000)::bigint, "
		     "(extract(epoch FROM a.ended_at) * 1000)::bigint FROM alerts a "
		     "WHERE a.host_id = ANY($1::int[]) AND a.opened_at <= to_timestamp($3::float8 / 1000) "
		     "AND (a.ended_at IS NULL OR a.ended_at >= to_timestamp($2::float8 / 1000)) "
		     "ORDER BY a.host_id, a.opened_at",
		     3, prm, 0, &r, "read the alerts to compare", err, errlen);
	store_read_conn_put(st, c, rc == STORE_EUNAVAIL);
	cbuf_release(&arr);
	if (rc != STORE_OK)
		return rc;
	int rows = PQntuples(r);
	struct cmp_alert *al = rows ? calloc((size_t)rows, sizeof(*al)) : NULL;
	if (rows && !al) {
		PQclear(r);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	for (int i = 0; i < rows; i++) {
		al[i].host_id = (int32_t)strtol(PQgetvalue(r, i, 0), NULL, 10);
		snprintf(al[i].kind, sizeof(al[i].kind), "%s", PQgetvalue(r, i, 1));
		al[i].from_ms = strtoll(PQgetvalue(r, i, 2), NULL, 10);
		al[i].to_ms = PQgetisnull(r, i, 3) ? INT64_MAX : strtoll(PQgetvalue(r, i, 3), NULL, 10);
	}
	PQclear(r);
	*out = al;
	*n = (size_t)rows;
	return STORE_OK;
}

/* Decodes the binary COPY rows of store_compare_rows for its callback. */
struct rows_ctx {
	cmp_row_fn fn;
	void *ctx;
	int col_of[CMP_NSRC];	/* field of each source, -1 when not rolled up */
};

static int copy_row(void *ctx, const struct pgcopy_field *f, int nf)
{
	struct rows_ctx *rc = ctx;
	double v[CMP_NSRC];

	if (!f[0].p || f[0].len != 4 || !f[1].p || f[1].len != 8)
		return 2;
	for (int s = 0; s < CMP_NSRC; s++) {
		int k = rc->col_of[s];
		if (k < 0 || k >= nf || !f[k].p)
			v[s] = NAN;
		else if (f[k].len == 8)
			v[s] = pgcopy_f64(f[k].p);
		else
			return 2;
	}
	return rc->fn(rc->ctx, pgcopy_i32(f[0].p), pgcopy_i64(f[1].p), v) ? 1 : 0;
}

/* The rollup rows are read with COPY (SELECT ...) TO STDOUT (FORMAT
 * binary) (see pgcopy.h for why). COPY takes no bind parameters, so this
 * is the one statement whose values are written into its text: only
 * numbers the server formats itself (the host ids, as int32s, through
 * pgarr; since and until as int64s), never a client's text. Binding them
 * through set_config() and reading them back with current_setting() was
 * tried: the planner then cannot see the window or the hosts, and chose
 * index scans that cost PostgreSQL 25-60 % more CPU per answer than the
 * sequential scan it picks with the real values. JIT is off for the read:
 * with a month of rollups the plan's cost passes jit_above_cost, and
 * compiling the 16 means costs more than it saves on ~300,000 rows. */
int store_compare_rows(struct store *st, const int32_t *ids, size_t nids, int64_t since_ms,
		       int64_t until_ms, cmp_row_fn fn, void *ctx, char *err, size_t errlen)
{
	char a[24], b[24];
	struct rows_ctx rx = { .fn = fn, .ctx = ctx };
	int ncol = 2, rc;
	struct cbuf arr;
	PGconn *c;
	PGresult *r = NULL;

	if (!nids)
		return STORE_OK;
	const char *prm[3];
	if ((rc = range_params(st, &arr, ids, nids, since_ms, until_ms, a, b, prm, &c, err, errlen)) != STORE_OK)
		return rc;
	size_t cap = 4096 + arr.len, o = 0;
	char *sql = malloc(cap);
	if (!sql) {
		cbuf_release(&arr);
		store_read_conn_put(st, c, false);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	o += (size_t)snprintf(sql + o, cap - o, "COPY (SELECT r.host_id, r.bucket_ms");
	/* the zones' allocstall slots are only read when the summed
	 * vmstat.allocstall is not rolled up (compare.c sums them then) */
	bool summed = rollup_slot(cmp_src_metric[CMP_ALLOCSTALL]) >= 0;
	for (int s = 0; s < CMP_NSRC; s++) {
		int slot = rollup_slot(cmp_src_metric[s]);
		if (summed && s >= CMP_ALLOCSTALL_DMA && s <= CMP_ALLOCSTALL_DEVICE)
			slot = -1;
		rx.col_of[s] = slot < 0 ? -1 : ncol++;
		if (slot >= 0)
			o += (size_t)snprintf(sql + o, cap - o, ", r.s%d / nullif(r.n%d, 0)", slot, slot);
	}
	o += (size_t)snprintf(sql + o, cap - o,
			      " FROM rollup_5m r WHERE r.cgroup_id = 0 AND r.host_id = ANY('%s'::int[]) "
			      "AND r.bucket_ms > %s::bigint - %lld AND r.bucket_ms <= %s::bigint) TO STDOUT (FORMAT binary)",
			      (const char *)arr.p, a, (long long)ROLLUP_STEP_MS, b);
	cbuf_release(&arr);
	if (o >= cap) {
		free(sql);
		store_read_conn_put(st, c, false);
		snprintf(err, errlen, "compare query too long");
		return STORE_EINTERNAL;
	}
	rc = store_q(c, "BEGIN READ ONLY", 0, NULL, 0, NULL, "start the compare read", err, errlen);
	if (rc == STORE_OK)
		rc = store_q(c, "SET LOCAL jit = off", 0, NULL, 0, NULL, "start the compare read", err, errlen);
	if (rc == STORE_OK) {
		r = PQexec(c, sql);
		if (PQresultStatus(r) != PGRES_COPY_OUT) {
			rc = store_result(c, r, NULL, "read rollups to compare", err, errlen);
			if (rc == STORE_OK) {	/* not a COPY answer: cannot happen */
				snprintf(err, errlen, "could not read rollups to compare: no COPY data");
				rc = STORE_EINTERNAL;
			}
		} else {
			PQclear(r);
			int k = pgcopy_receive(c, ncol, copy_row, &rx, err, errlen);
			if (k == -2) {
				rc = STORE_EUNAVAIL;
			} else if (k == 1) {
				snprintf(err, errlen, "out of memory");
				rc = STORE_EINTERNAL;
			} else if (k == 2) {
				snprintf(err, errlen, "could not read rollups to compare: unexpected field");
				rc = STORE_EINTERNAL;
			} else if (k != 0) {
				rc = STORE_EINTERNAL;
			}
		}
	}
	free(sql);
	if (rc == STORE_OK) {
		rc = store_q(c, "COMMIT", 0, NULL, 0, NULL, "end the compare read", err, errlen);
	} else if (rc != STORE_EUNAVAIL) {
		char e2[64];
		if (store_q(c, "ROLLBACK", 0, NULL, 0, NULL, "roll back", e2, sizeof(e2)) == STORE_EUNAVAIL)
			rc = STORE_EUNAVAIL;
	}
	store_read_conn_put(st, c, rc == STORE_EUNAVAIL);
	return rc;
}
