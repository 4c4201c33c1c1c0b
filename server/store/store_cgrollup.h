/* store_cgrollup.h - 5-minute rollups of cgroup metrics, built off the
 * ingest path (schema/070_cgroup_rollup.sql, docs/design.md "Cgroup
 * rollups").
 *
 * Host-level rollups are merged inside the ingest transaction; doing the
 * same for 20 cgroups per sample would add their cost to ingest, the
 * bottleneck of a fleet. Instead a background job (cgroup_rollup.c) takes
 * hosts whose buckets have closed, reads their raw rows once, and writes
 * one row per (cgroup, bucket) with count/avg/min/max of the values the
 * series endpoint returns (rates for counters, scaled gauges) for the
 * metrics the dashboard charts for cgroups. store_series reads those for
 * long ranges and raw rows for the buckets not rolled up yet.
 */
#ifndef VMSCOPE_STORE_CGROLLUP_H
#define VMSCOPE_STORE_CGROLLUP_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define CGROLL_NSLOT 24
#define CGROLL_STEP_MS 300000LL
#define CGROLL_CHUNK_BUCKETS 12	/* buckets of one host per job transaction (1 h) */
#define CGROLL_CLAIM_HOSTS 8	/* hosts per job transaction */

/* The rolled-up cgroup metric names (as GET .../series?cgroup= takes
 * them): what web/js/figures.js CGROUP_FIGURES draws, v2 and v1 names. */
extern const char *const cgroll_metric[CGROLL_NSLOT];

/* Slot of a cgroup-level metric name, or -1 when it is not rolled up. */
int cgroll_slot(const char *metric);

/* What one run did (added to by store_cgrollup_run). */
struct cgroll_stats {
	long txs;		/* transactions committed */
	long host_buckets;	/* (host, 5-minute bucket) pairs rolled up */
	long rows_read;	/* raw sample rows read */
	long cells;		/* (cgroup, bucket) rows written */
	long bytes;		/* sum of their v lengths */
};

/* Rolls up closed buckets: a bucket of a host is closed when the host's
 * newest sample is past its end and so is now_ms. A host is taken once
 * its oldest closed bucket not rolled up began min_pending buckets before
 * now's (1: at once): several buckets per transaction make reading the
 * delta chain from its keyframe cheap per bucket, and the series endpoint
 * reads the minutes not rolled up yet from raw rows anyway. Runs at most
 * max_tx transactions of up to CGROLL_CLAIM_HOSTS hosts x
 * CGROLL_CHUNK_BUCKETS buckets each; hosts another server is working on
 * are skipped. *more is set when work was left. STORE_* code. */
int store_cgrollup_run(struct store *st, int64_t now_ms, int min_pending, int max_tx, struct cgroll_stats *stats,
		       bool *more, char *err, size_t errlen);

/* ---- for the store_*.c files ---- */

/* Drops cgroup_rollup_5m month partitions wholly older than now - days. */
int cgroll_drop_expired(struct store *st, PGconn *c, int64_t now_ms, int days, int *ndropped, char *err,
			size_t errlen);

/* The first ms not rolled up for host_id (every bucket before is), 0 when
 * none is. STORE_* code. */
int cgroll_done_ms(PGconn *c, int32_t host_id, int64_t *done_ms, char *err, size_t errlen);

/* Rows (b5 as text, v binary... both columns text format) of cgroup cgid
 * for buckets starting in [from_ms, until_ms). *out owned by the caller. */
int cgroll_read(PGconn *c, int32_t host_id, uint32_t cgid, int64_t from_ms, int64_t until_ms, PGresult **out, char *err,
		size_t errlen);

/* One slot of a stored cell. */
struct cgroll_val {
	uint32_t cnt;	/* non-null values; 0: all null */
	double avg, lo, hi;
};

/* Decodes slot of cell v: 1 and *o when the cgroup reported the metric in
 * the bucket, 0 when not, -1 when v is malformed. */
int cgroll_cell_get(const uint8_t *v, size_t len, int slot, struct cgroll_val *o);

#endif
