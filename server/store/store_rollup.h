/* store_rollup.h - 5-minute rollups (table rollup_5m, schema/020_rollup.sql):
 * per host and 5-minute bucket, count/sum/min/max of the values the series
 * endpoint would return (rates for counters, scaled gauges) for a fixed
 * list of metrics. Computed on ingest from the host's previous in-order
 * sample (which the storage holds anyway), kept in the owning server's
 * memory and merged into the table with the host's checkpoint
 * (store_ckpt.c), so the fleet view reads one small row per host and
 * bucket instead of decoding raw rows, and long series ranges read ~30x
 * fewer rows.
 * Internal to the store_*.c files (docs/design.md "Rollups").
 */
#ifndef VMSCOPE_STORE_ROLLUP_H
#define VMSCOPE_STORE_ROLLUP_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

struct store;

#define ROLLUP_STEP_MS 300000LL
#define ROLLUP_NSLOT 37	/* 020_rollup.sql: 0..9, 031_rollup_wide.sql: 10..32, 100_rollup_all_reclaim.sql: 33..36 */
#define ROLLUP_MAXPART 5	/* per-zone names a summed slot adds up */

/* The rolled-up metric of slot i (host level). What a slot holds when the
 * host's kernel does not report that exact name (per-zone reclaim
 * counters before 4.8, allocstall per zone since 4.10) is listed in
 * store_rollup.c; the value is always in the units GET .../series gives
 * for rollup_metric[i] (rates for counters, scaled gauges). */
extern const char *const rollup_metric[ROLLUP_NSLOT];

/* Slot of a host-level metric name, or -1 when it is not rolled up. */
int rollup_slot(const char *metric);

/* One (host, bucket): the values of the samples not merged into the table yet. */
struct rollup_cell {
	int32_t host_id;
	int64_t bucket_ms;
	int n;
	int cnt[ROLLUP_NSLOT];
	double sum[ROLLUP_NSLOT], lo[ROLLUP_NSLOT], hi[ROLLUP_NSLOT];
};

/* What rolling up needs to know of the slots: mid[] are their database
 * metric ids (0: not known yet). */
struct rollup_ctx {
	int32_t mid[ROLLUP_NSLOT];
	int32_t pmid[ROLLUP_NSLOT][ROLLUP_MAXPART];	/* the summed names' ids (0: none) */
	double scale[ROLLUP_NSLOT];
	bool counter[ROLLUP_NSLOT];
};

/* Resolves the slots' metric ids from the store's caches (no query: a
 * metric present in a batch was resolved before its transaction, one in
 * replayed rows when the rows' names were read). */
void rollup_ctx_init(struct rollup_ctx *x, struct store *st);

/* A host's cells of the in-order samples the table does not hold yet, in
 * bucket order (kept in memory between transactions, store_own.c). */
struct rollup_cells {
	struct rollup_cell *c;	/* owned */
	size_t n, cap;
};
void rollup_cells_release(struct rollup_cells *cs);

/* Adds one in-order sample: cur are its values (database ids, sorted),
 * prev the host's previous stored sample (NULL: unknown) at prev_ts with
 * boot number prev_boot. Same rules as store_series: a counter's rate
 * needs a previous value in the same boot that is not larger. -1: OOM. */
int rollup_cells_add(struct rollup_cells *cs, const struct rollup_ctx *x, int32_t host_id, int64_t ts, int boot,
		     const struct sset *cur, const struct sset *prev, int64_t prev_ts, int prev_boot);

/* Merges cells c[0..n) into rollup_5m (one statement: counts and sums
 * add up, minima and maxima combine), sent without waiting for its result
 * (store_q_prep_send). STORE_* code. */
int rollup_cells_write(const struct rollup_cell *c, size_t n, PGconn *conn, char *err, size_t errlen);
/* The same, one statement per cell when routed (on Citus: each routed to
 * the cell's host's shard). */
int rollup_cells_write_routed(const struct rollup_cell *c, size_t n, PGconn *conn, bool routed, char *err,
			      size_t errlen);

/* Creates the month partitions covering the given day numbers (outside a
 * transaction, like the raw day partitions). STORE_* code. */
int rollup_ensure_partitions(struct store *st, PGconn *c, const int64_t *days, size_t n,
			     char *err, size_t errlen);

/* The month holding day number day: *key = yyyymm, its first day and the
 * first day of the next month (cgroup_rollup_5m's partitions use it too). */
void rollup_month_span(int64_t day, int *key, int64_t *first_day, int64_t *end_day);
/* The first day of the month after month key (yyyymm, month 1..12). */
int64_t rollup_month_end_day(int key);

/* Drops month partitions wholly older than now - days. STORE_* code. */
int rollup_drop_expired(struct store *st, PGconn *c, int64_t now_ms, int days, int *ndropped,
			char *err, size_t errlen);

/* Reads host host_id's (0: every host's) rollups of buckets starting in
 * (since - 5 min, until], grouped into buckets k = (bucket_ms - since) / step
 * (k < 0 folded into 0). Result columns: host name, k, n, then for each
 * slot in slots[0..nslots): count, sum, min, max. Ordered by host, k.
 * *out owned by the caller (PQclear). STORE_* code. */
int rollup_read(PGconn *c, int32_t host_id, int64_t since, int64_t until, int64_t step,
		const int *slots, int nslots, PGresult **out, char *err, size_t errlen);

#endif
