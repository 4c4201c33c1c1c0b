/* store_signals.c - store_host_signals (store.h): a few derived reclaim
 * signals per active host, from its two newest stored samples, for the
 * Prometheus exposition (/metrics).
 *
 * One query fetches, for every host seen since a given time, the host-level
 * column of its rows from the delta chain's keyframe at or before the
 * second-newest row to the newest (at most one chain, ~64 rows of ~200
 * bytes); each row is decoded with the storage's own chain logic and only
 * the counters needed are kept. Cgroup columns are not read.
 */
#include "store_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Counters the signals need, vmstat names (pages or events). */
enum {
	C_REFAULT_FILE, C_REFAULT, C_SCAN_KSWAPD, C_SCAN_DIRECT, 
	C_STEAL_KSWAPD, C_STEAL_DIRECT, C_PSWPIN, C_PSWPOUT, C_N
};
static const char *const counter_names[C_N] = {
	"vmstat.workingset_refault_file", "vmstat.workingset_refault", "vmstat.pgscan_kswapd",
	"vmstat.pgscan_direct", "vmstat.pgsteal_kswapd",
	"vmstat.pgsteal_direct", "vmstat.pswpin", "vmstat.pswpout",
};

/* The counters of one decoded row. */
struct snap {
	int64_t ts;
	int boot;
	int64_t v[C_N];
	bool has[C_N];
};

static void take(const struct hstate *h, int64_t ts, int boot, const int32_t *ids, struct snap *o)
{
	o->ts = ts;
	o->boot = boot;
	for (int k = 0; k < C_N; k++) {
		int64_t v;
		o->has[k] = ids[k] > 0 && sset_get(&h->m, (uint32_t)ids[k], &v) == 1 && v != SAMPLE_NULL;
		o->v[k] = o->has[k] ? v : 0;
	}
}

/* Delta of counter k between a and b into *d; false when either lacks it
 * or it went backwards (a reset). */
static bool delta(const struct snap *a, const struct snap *b, int k, double *d)
{
	if (!a->has[k] || !b->has[k] || b->v[k] < a->v[k])
		return false;
	*d = (double)(b->v[k] - a->v[k]);
	return true;
}

/* Sum of the deltas of the counters present in both; false when none is. */
static bool delta_sum(const struct snap *a, const struct snap *b, const int *ks, int n, double *d)
{
	bool any = false;
	double x;

	*d = 0;
	for (int i = 0; i < n; i++) {
		if (delta(a, b, ks[i], &x)) {
			*d += x;
			any = true;
		}
	}
	return any;
}

static void signals_of(const struct snap *a, const struct snap *b, struct host_signals *o)
{
	/* kswapd + direct, as the fleet view's sparkline (docs/api.md) */
	static const int scan[] = { C_SCAN_KSWAPD, C_SCAN_DIRECT };
	static const int steal[] = { C_STEAL_KSWAPD, C_STEAL_DIRECT };
	double dt = (double)(b->ts - a->ts) / 1000.0, d, s;

	o->refault_file_ps = o->reclaim_efficiency = o->swap_in_ps = o->swap_out_ps = NAN;
	o->ts_ms = b->ts;
	if (dt <= 0 || a->boot != b->boot)
		return;
	/* kernels before 5.9 have only the combined workingset_refault */
	if (delta(a, b, C_REFAULT_FILE, &d) || delta(a, b, C_REFAULT, &d))
		o->refault_file_ps = d / dt;
	if (delta_sum(a, b, scan, 2, &s) && s > 0 && delta_sum(a, b, steal, 2, &d))
		o->reclaim_efficiency = d / s;
	if (delta(a, b, C_PSWPIN, &d))
		o->swap_in_ps = d / dt;
	if (delta(a, b, C_PSWPOUT, &d))
		o->swap_out_ps = d / dt;
}

static int resolve_ids(PGconn *c, int32_t *ids, char *err, size_t errlen)
{
	char arr[1024];
	size_t len = 0;
	PGresult *r;

	len += (size_t)snprintf(arr + len, sizeof(arr) - len, "{");
	for (int k = 0; k < C_N; k++)
		len += (size_t)snprintf(arr + len, sizeof(arr) - len, "%s\"%s\"", k ? "," : "", counter_names[k]);
	snprintf(arr + len, sizeof(arr) - len, "}");
	const char *prm[1] = { arr };
	int rc = store_q(c, "SELECT id, name FROM metric_names WHERE name = ANY($1::text[])", 1, prm, 0, &r,
			 "look up metric names", err, errlen);
	if (rc != STORE_OK)
		return rc;
	for (int k = 0; k < C_N; k++)
		ids[k] = 0;
	for (int i = 0; i < PQntuples(r); i++)
		for (int k = 0; k < C_N; k++)
			if (strcmp(PQgetvalue(r, i, 1), counter_names[k]) == 0)
				ids[k] = (int32_t)strtol(PQgetvalue(r, i, 0), NULL, 10);
	PQclear(r);
	return STORE_OK;
}

/* Rows of each active host: its newest row and every row back to the
 * keyframe at or before the one before it (within a day). */
static const char rows_sql[] =
	"SELECT h.name, s.ts_ms, s.boot, s.kf, s.d FROM hosts h CROSS JOIN LATERAL "
	"(SELECT ts_ms, boot, kf, d FROM samples x WHERE x.host_id = h.id AND x.ts_ms <= h.last_ts_ms "
	"AND x.ts_ms >= coalesce((SELECT max(k.ts_ms) FROM samples k WHERE k.host_id = h.id AND k.kf "
	"AND k.ts_ms < h.last_ts_ms AND k.ts_ms >= h.last_ts_ms - 86400000), h.last_ts_ms)) s "
	"WHERE h.samples > 0 AND h.last_ts_ms >= $1 ORDER BY h.name, s.ts_ms";

int store_host_signals(struct store *st, int64_t active_since_ms, struct host_signals **out, size_t *nout,
		       char *err, size_t errlen)
{
	int32_t ids[C_N];
	char since[24];
	const char *prm[1] = { since };
	PGresult *r = NULL;
	struct host_signals *res = NULL;
	size_t n = 0;
	struct hstate chain, tmp;
	struct snap prev, cur;
	int rc;

	*out = NULL;
	*nout = 0;
	int crc;
	PGconn *c = store_read_get(st, &crc, err, errlen);
	if (!c)
		return crc;
	hstate_init(&chain);
	hstate_init(&tmp);
	memset(&prev, 0, sizeof(prev));
	memset(&cur, 0, sizeof(cur));
	if ((rc = resolve_ids(c, ids, err, errlen)) != STORE_OK)
		goto out;
	snprintf(since, sizeof(since), "%lld", (long long)active_since_ms);
	if ((rc = store_q(c, rows_sql, 1, prm, 1, &r, "read the newest samples", err, errlen)) != STORE_OK)
		goto out;
	int nr = PQntuples(r);
	if (nr && !(res = calloc((size_t)nr, sizeof(*res)))) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
		goto out;
	}
	int nseen = 0;	/* rows of the current host decoded */
	for (int i = 0; i < nr; i++) {
		const char *name = PQgetvalue(r, i, 0);
		bool first = i == 0 || strcmp(name, PQgetvalue(r, i - 1, 0)) != 0;
		bool last = i == nr - 1 || strcmp(name, PQgetvalue(r, i + 1, 0)) != 0;
		int64_t ts = store_get_i64(r, i, 1);
		int boot = store_get_i16(r, i, 2);
		bool kf = store_get_bool(r, i, 3);
		const uint8_t *d = (const uint8_t *)PQgetvalue(r, i, 4);
		size_t dlen = (size_t)PQgetlength(r, i, 4);
		const uint8_t *p = d;
		uint64_t off;

		if (first) {
			hstate_reset(&chain);
			nseen = 0;
		}
		bool ok = codec_get_uvarint(&p, d + dlen, &off) == 0;
		struct hstate *h = off == 0 && !kf ? &tmp : &chain;
		if (ok && off != 0 && (chain.last_ts == INT64_MIN || (uint64_t)(ts - chain.last_ts) != off))
			ok = false;	/* base not read: cannot happen in a sound chain */
		if (ok && hstate_apply_row(h, d, dlen, NULL, 0) == 0) {
			h->last_ts = ts;
			prev = cur;
			take(h, ts, boot, ids, &cur);
			nseen++;
		} else {
			hstate_reset(&chain);
			nseen = 0;
		}
		if (!last)
			continue;
		struct host_signals *o = &res[n];
		snprintf(o->host, sizeof(o->host), "%s", name);
		o->refault_file_ps = o->reclaim_efficiency = o->swap_in_ps = o->swap_out_ps = NAN;
		o->ts_ms = ts;
		if (nseen >= 2)
			signals_of(&prev, &cur, o);
		n++;
	}
	*out = res;
	*nout = n;
	res = NULL;
out:
	PQclear(r);
	free(res);
	hstate_release(&chain);
	hstate_release(&tmp);
	store_read_put(st, c, rc);
	return rc;
}
