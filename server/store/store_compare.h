/* store_compare.h - the reads behind GET /api/v1/compare (api_compare.c):
 * the hosts active in a window with their kernel and labels as of the
 * window, their open-alert intervals, and their 5-minute rollup buckets
 * (rollup_5m) reduced to per-bucket means of the metrics the comparison
 * figures are built from. A metric without a rollup slot (rollup_slot()
 * gives -1, e.g. a counter added to the rollups by a later migration) reads
 * as NAN in every bucket, never as an error. All SQL is parameterised.
 */
#ifndef VMSCOPE_STORE_COMPARE_H
#define VMSCOPE_STORE_COMPARE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* The host-level metrics read per bucket (flattened names in
 * cmp_src_metric). */
enum cmp_src {
	CMP_PSI_SOME, CMP_PSI_FULL, CMP_PSI_IO_SOME, CMP_PSI_IO_FULL,
	CMP_REFAULT_FILE, CMP_REFAULT, CMP_REFAULT_ANON,
	CMP_STEAL_K, CMP_STEAL_D, CMP_SCAN_K, CMP_SCAN_D,
	CMP_PSWPIN, CMP_PSWPOUT,
	CMP_VMSCAN_WRITE, CMP_IMMEDIATE,
	CMP_ALLOCSTALL,		/* before 4.10 the kernel's; rolled up as the zones' sum after */
	CMP_ALLOCSTALL_DMA, CMP_ALLOCSTALL_DMA32, CMP_ALLOCSTALL_NORMAL,
	CMP_ALLOCSTALL_MOVABLE, CMP_ALLOCSTALL_DEVICE,
	CMP_NSRC
};
extern const char *const cmp_src_metric[CMP_NSRC];

/* A host whose samples overlap the window. */
struct cmp_host {
	int32_t id;		/* hosts.id */
	char *name;		/* owned */
	char *kernel;		/* owned; NULL when never posted */
	json_t *labels;		/* owned reference to an object (maybe empty) */
	int64_t last_ts_ms;	/* its newest sample (ends a still-open alert) */
	int64_t from_ms;	/* 0; set by a caller of compare_new (compare.h) */
};

/* Hosts with first sample <= until and newest sample >= since, sorted by
 * id, with kernel and labels of their host_meta row in force at until (the
 * oldest row when all are later; hosts' own columns when there is none).
 * *out is a malloc'd array (NULL when n is 0) the caller frees with
 * store_compare_hosts_free. STORE_* code, err written on error. */
int store_compare_hosts(struct store *st, int64_t since_ms, int64_t until_ms,
			struct cmp_host **out, size_t *n, char *err, size_t errlen);
void store_compare_hosts_free(struct cmp_host *h, size_t n);

/* An interval during which an alert (host-wide or of a cgroup) was open. */
struct cmp_alert {
	int32_t host_id;
	char kind[40];
	int64_t from_ms;	/* opened_at */
	int64_t to_ms;		/* ended_at; INT64_MAX while open */
};

/* Alerts of the hosts ids[0..nids) open at some time in [since, until],
 * ordered by host id. *out malloc'd (free()), NULL when none. */
int store_compare_alerts(struct store *st, const int32_t *ids, size_t nids, int64_t since_ms,
			 int64_t until_ms, struct cmp_alert **out, size_t *n, char *err, size_t errlen);

/* Called once per (host, bucket) row; v[CMP_NSRC] holds the bucket's mean
 * of each source (rates per second, PSI in %), NAN when the bucket has no
 * value of it or it has no rollup slot. A non-zero return stops the read
 * and is passed back as STORE_EINTERNAL. */
typedef int (*cmp_row_fn)(void *ctx, int32_t host_id, int64_t bucket_ms, const double *v);

/* The rollup buckets of hosts ids[0..nids) starting in (since - 5 min,
 * until], in no particular order, streamed by a binary COPY and passed to
 * fn as they arrive, so that a 1,000-host day (~290,000 rows) never sits
 * in memory at once and the server works while PostgreSQL still reads. */
int store_compare_rows(struct store *st, const int32_t *ids, size_t nids, int64_t since_ms,
		       int64_t until_ms, cmp_row_fn fn, void *ctx, char *err, size_t errlen);

#endif
