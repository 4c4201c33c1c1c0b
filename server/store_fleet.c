/* store_fleet.c - the fleet view's sparklines for every host from the
 * 5-minute rollups in one query (store_fleet_sparks in store.h). Replaces
 * ~8 raw series reads per host: with 1,000 hosts that was seconds. */
#include "store_internal.h"
#include "store_rollup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slots read, in result-column order after (name, k, n). */
enum { F_PSI, F_REFAULT_FILE, F_REFAULT, F_STEAL_K, F_STEAL_D, F_SCAN_K, F_SCAN_D, F_PSWPIN, F_PSWPOUT, F_N };

static const char *const fleet_metric[F_N] = {
	"psi.memory.some.avg10", "vmstat.workingset_refault_file", "vmstat.workingset_refault",
	"vmstat.pgsteal_kswapd", "vmstat.pgsteal_direct", "vmstat.pgscan_kswapd",
	"vmstat.pgscan_direct", "vmstat.pswpin", "vmstat.pswpout",
};

/* avg of slot f in row i (count, sum at columns 3 + 4f, 4 + 4f); false when
 * the bucket has no non-null value of it. */
static bool slot_avg(const PGresult *r, int i, int f, double *v)
{
	long cnt = strtol(PQgetvalue(r, i, 3 + 4 * f), NULL, 10);
	if (cnt <= 0)
		return false;
	*v = strtod(PQgetvalue(r, i, 4 + 4 * f), NULL) / (double)cnt;
	return true;
}

static json_t *point(double ts, bool ok, double v)
{
	return json_pack("[f, o]", ts, ok ? json_real(v) : json_null());
}

/* One host's spark object from its rows [from, to) of r. */
static json_t *host_spark(const PGresult *r, int from, int to, int64_t since, int64_t step)
{
	json_t *psi = json_array(), *rf = json_array(), *eff = json_array(), *swin = json_array(),
	       *swout = json_array();
	double v;

	/* refault_file falls back to workingset_refault (kernels before 5.9)
	 * only when the _file name has no value in the window, like the raw
	 * path's empty-series fallback */
	bool file = false, old = false;
	for (int i = from; i < to; i++) {
		file |= strtol(PQgetvalue(r, i, 3 + 4 * F_REFAULT_FILE), NULL, 10) > 0;
		old |= strtol(PQgetvalue(r, i, 3 + 4 * F_REFAULT), NULL, 10) > 0;
	}
	bool any_file = file || !old;
	for (int i = from; i < to && psi && rf && eff && swin && swout; i++) {
		double ts = (double)(since + strtoll(PQgetvalue(r, i, 1), NULL, 10) * step) / 1000.0;
		bool ok = slot_avg(r, i, F_PSI, &v);
		json_array_append_new(psi, point(ts, ok, v));
		ok = slot_avg(r, i, any_file ? F_REFAULT_FILE : F_REFAULT, &v);
		json_array_append_new(rf, point(ts, ok, v));
		/* efficiency = (avg steal_k + avg steal_d) / (avg scan_k + avg scan_d),
		 * as fleet_efficiency sums the four series per bucket */
		double steal = 0, scan = 0;
		bool seen = false;
		for (int f = F_STEAL_K; f <= F_SCAN_D; f++) {
			if (!slot_avg(r, i, f, &v))
				continue;
			seen = true;
			if (f <= F_STEAL_D)
				steal += v;
			else
				scan += v;
		}
		if (seen) {
			double e = scan > 0 ? steal / scan : 0;
			json_array_append_new(eff, point(ts, scan > 0, e < 0 ? 0 : e > 1 ? 1 : e));
		}
		ok = slot_avg(r, i, F_PSWPIN, &v);
		json_array_append_new(swin, point(ts, ok, v));
		ok = slot_avg(r, i, F_PSWPOUT, &v);
		json_array_append_new(swout, point(ts, ok, v));
	}
	return json_pack("{s:o*,s:o*,s:o*,s:o*,s:o*}", "psi_memory_some", psi, "refault_file", rf,
			 "reclaim_efficiency", eff, "swap_in", swin, "swap_out", swout);
}

int store_fleet_sparks(struct store *st, int64_t since_ms, int64_t until_ms, int64_t step_ms,
		       json_t **out, char *err, size_t errlen)
{
	int slots[F_N];
	PGresult *r = NULL;
	int rc;

	*out = NULL;
	if (step_ms < ROLLUP_STEP_MS || step_ms % ROLLUP_STEP_MS || until_ms < since_ms) {
		snprintf(err, errlen, "invalid fleet range");
		return STORE_EINVAL;
	}
	for (int f = 0; f < F_N; f++)
		slots[f] = rollup_slot(fleet_metric[f]);
	PGconn *c = db_pool_get(st->pool, STORE_POOL_WAIT_MS, err, errlen);
	if (!c)
		return STORE_EUNAVAIL;
	rc = rollup_read(c, 0, since_ms, until_ms, step_ms, slots, F_N, &r, err, errlen);
	if (rc == STORE_OK) {
		json_t *o = json_object();
		int n = PQntuples(r);
		for (int i = 0; o && i < n;) {
			int j = i;
			while (j < n && strcmp(PQgetvalue(r, j, 0), PQgetvalue(r, i, 0)) == 0)
				j++;
			json_t *sp = host_spark(r, i, j, since_ms, step_ms);
			if (!sp || json_object_set_new(o, PQgetvalue(r, i, 0), sp) < 0) {
				json_decref(o);
				o = NULL;
			}
			i = j;
		}
		PQclear(r);
		if (!o) {
			snprintf(err, errlen, "out of memory");
			rc = STORE_EINTERNAL;
		}
		*out = o;
	}
	db_pool_put(st->pool, c, rc == STORE_EUNAVAIL);
	return rc;
}
