/* store.h - the storage layer: PostgreSQL schema, connection pool, sample
 * encoding, and the queries behind the REST API.
 *
 * Design: docs/design.md. All SQL is parameterised. Every function is safe to
 * call from several threads at once (each takes a pooled connection).
 *
 * Errors: functions return STORE_OK (0) or a negative STORE_E* code and, when
 * given an err buffer, write a short lower-case message into it
 * ("could not connect to the database: ..."). STORE_EUNAVAIL means the
 * database could not be reached or the connection broke: the caller answers
 * 503 and the pool reconnects by itself on a later call.
 */
#ifndef VMSCOPE_STORE_H
#define VMSCOPE_STORE_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

enum {
	STORE_OK = 0,
	STORE_EUNAVAIL = -1,	/* database unreachable: retry later (HTTP 503) */
	STORE_EINVAL = -2,	/* the caller's request is wrong (HTTP 400) */
	STORE_ENOTFOUND = -3,	/* no such host / cgroup / metric (HTTP 404) */
	STORE_EINTERNAL = -4,	/* a bug or an unexpected database error (HTTP 500) */
	STORE_ENOMETRIC = -5,	/* the host (or cgroup) never reported that metric (HTTP 404) */
};

struct store;

struct store_config {
	const char *conninfo;	/* libpq conninfo or URI */
	const char *read_conninfo;	/* a streaming standby for the read API, or NULL */
	int pool_size;		/* connections kept open; default 8 */
	const char *schema_dir;	/* directory of NNN_name.sql migrations */
	int retention_days;	/* raw data kept; default 30 */
	int rollup_retention_days;	/* 5-minute rollups kept; default 400 */
	int checkpoint_ms;	/* owned hosts' state written back after this long; default 30 s */
};

/* Connects, applies pending migrations (idempotent, in a transaction each,
 * serialised by an advisory lock so several servers may start at once) and
 * returns a store in *out. On error returns a STORE_E* code, writes err and
 * leaves *out NULL: STORE_EINVAL when the conninfo names a database the
 * server must not use (a Citus worker node). The server retries while the
 * database is down at start. */
int store_open(struct store **out, const struct store_config *cfg, char *err, size_t errlen);

/* Closes every pooled connection and frees the store. NULL is a no-op. */
void store_close(struct store *st);

/* The standby of --read-db: how far its replay is behind the primary, in
 * seconds (0 when it has replayed everything it received) and in bytes of
 * WAL (the primary's current position minus the standby's replay
 * position). STORE_EINVAL when no standby is configured. */
int store_read_lag(struct store *st, double *seconds, double *bytes, char *err, size_t errlen);

/* True when a pooled connection answers `SELECT 1`. */
bool store_ping(struct store *st);

/* A host's clock offset window (hosts.lag_*, 090_liveness.sql): the
 * smallest arrival - ts over a window of arrivals. The rule is the hook's
 * (server/ingest/liveness.c); the store keeps it with the host it owns and
 * writes it with the host's row. LAG_NONE marks an absent minimum. */
#define LAG_NONE INT64_MIN
struct host_lag {
	int64_t win_ms;		/* start of the current window (server ms), 0: none */
	int64_t min_ms;		/* smallest arrival - ts in it, LAG_NONE when none */
	int64_t prev_ms;	/* smallest in the window before, LAG_NONE when none */
	int64_t last_ms;	/* arrival - ts of the latest arrival, LAG_NONE when none */
	int64_t bad_ms;		/* latest arrival whose lag was beyond the clear threshold, 0: none */
};

/* One host of an ingest transaction, as the hook sees it. */
struct store_hook_host {
	const char *host;
	int32_t host_id;
	void *state;		/* the hook's state of the host (load), NULL without one */
	const struct sample *const *fresh;	/* its newly stored samples, ts order */
	size_t n;
	bool silent;		/* hosts.silent: the tick opened host_silent for it */
	int64_t seen_ms;	/* when these samples arrived (the server's clock) */
};

/* What runs beside the storage of samples: the detector engine
 * (server/ingest/detect.c). The store keeps a state per host for it in
 * the memory of the server that owns the host (docs/design.md "Ingest"),
 * checkpoints the state with the host's rollups, and rebuilds it when it
 * takes a host over by loading the checkpoint and replaying the stored
 * samples after it. Every member may be NULL (no state, no feed).
 *
 * feed runs inside the ingest transaction after the sample rows were sent
 * and before COMMIT, so that samples and the alerts it writes commit
 * together; its first statement must go through store_q_prep /
 * store_q_prep_fmt or call store_pipe_finish (the rows may still be on
 * their way, store_sql.c). Returns 0, or -1 to roll everything back (err
 * written): the hosts' states are then dropped and rebuilt when next
 * used. ovr_version is detector_overrides_version.v (-1 unknown).
 *
 * replay feeds one stored sample of a host taken over, inside that
 * transaction: it must not write what the live feed wrote then (the
 * alerts exist), only look up what it needs (the ids of the alerts its
 * state refers to). */
struct store_hook {
	void *ctx;
	/* the host's state from a checkpoint (len 0: a new host); NULL with
	 * err written when out of memory */
	void *(*load)(void *ctx, const char *host, const unsigned char *buf, size_t len, char *err, size_t errlen);
	/* the checkpoint of a state (*buf malloc'd); -1 when out of memory */
	int (*save)(void *ctx, const void *state, unsigned char **buf, size_t *len, int64_t *interval_ms);
	void (*release)(void *ctx, void *state);
	int (*feed)(void *ctx, PGconn *conn, const struct store_hook_host *hosts, size_t nhosts,
		    int64_t ovr_version, char *err, size_t errlen);
	int (*replay)(void *ctx, PGconn *conn, void *state, int32_t host_id, const struct sample *s,
		      char *err, size_t errlen);
	/* samples up to newest_ts_ms arrived at now_ms: updates the host's
	 * clock window (state as load made it, NULL without one) */
	void (*arrive)(void *ctx, const void *state, int64_t now_ms, int64_t newest_ts_ms, struct host_lag *lag);
};

/* Sets the hook (copied) before the first store_put_samples. */
void store_set_hook(struct store *st, const struct store_hook *hook);

/* Stores n validated samples in one transaction and commits before
 * returning. A sample whose (host, ts to the millisecond) is already stored
 * counts as accepted and the stored copy stands. Creates partitions, hosts,
 * cgroups and metric names as needed and takes the hosts over from other
 * servers. *nfresh receives the number newly stored. Nothing of the
 * request is stored on error. */
int store_put_samples(struct store *st, const struct sample *s, size_t n, size_t *nfresh, char *err,
		      size_t errlen);

/* Checkpoints the owned hosts whose first sample after their checkpoint
 * is older than the checkpoint interval (all of them when all), and
 * forgets hosts unused for a while. Called every second by the server's
 * background thread, and at close. *nwritten receives the checkpoints
 * written. STORE_* code. */
int store_checkpoint(struct store *st, bool all, int *nwritten, char *err, size_t errlen);

/* GET /api/v1/hosts: *out = new reference to
 * {"hosts":[{"host","last_seen","last_seen_ts","boot_id","kernel",
 *            "agent_version","labels","cgroups":N,"samples":N}, ...]}
 * sorted by host (docs/api.md). */
int store_hosts(struct store *st, json_t **out, char *err, size_t errlen);

/* GET /api/v1/hosts/{host}: *out = one object as in store_hosts.
 * STORE_ENOTFOUND when the host never posted. */
int store_host(struct store *st, const char *host, json_t **out, char *err, size_t errlen);

/* GET /api/v1/hosts/{host}/cgroups: *out = {"host","cgroups":[{"path",
 * "version","last_seen","last_seen_ts"}]} sorted by path. */
int store_cgroups(struct store *st, const char *host, json_t **out, char *err, size_t errlen);

/* GET /api/v1/hosts/{host}/metrics: *out = {"host","cgroup","metrics":
 * [{"name","kind"}]} with the names of the newest sample that holds the
 * host (cgroup NULL) or the cgroup. A cgroup path present in both
 * hierarchies of a hybrid machine gives the names of both (and
 * "cgroup_versions": [1, 2]) unless version (1 or 2; 0: any) picks one. */
int store_metrics(struct store *st, const char *host, const char *cgroup, int version, json_t **out,
		  char *err, size_t errlen);

/* Drops raw partitions older than the retention and rollup month
 * partitions older than the rollup retention (never a big DELETE);
 * called periodically by the server. *ndropped receives the count. */
int store_drop_expired(struct store *st, int64_t now_ms, int *ndropped, char *err, size_t errlen);

/* The oldest ts (ms) the store accepts: now - retention. */
int64_t store_oldest_accepted_ms(const struct store *st, int64_t now_ms);

struct series_query {
	const char *host;
	const char *cgroup;	/* NULL: host level */
	const char *metric;	/* flattened name, e.g. "vmstat.pgscan_kswapd" */
	int64_t since_ms, until_ms;
	int points;		/* 0: every sample; else downsample to at most this many buckets */
	int source;		/* SERIES_AUTO (0), SERIES_RAW or SERIES_ROLLUP */
	int cgroup_version;	/* 1 or 2: that hierarchy's cgroup only; 0: both, merged by name */
};

/* Where a downsampled series comes from: AUTO reads the 5-minute rollups
 * for a rolled-up host-level metric over more than SERIES_ROLLUP_AFTER_MS
 * (when there are any), raw rows otherwise. */
enum { SERIES_AUTO = 0, SERIES_RAW = 1, SERIES_ROLLUP = 2 };
#define SERIES_ROLLUP_AFTER_MS (24LL * 3600 * 1000)

/* GET /api/v1/hosts/{host}/series: per-second rates for counters, values
 * for gauges (the storage layer keeps the counter/gauge table), correct
 * across counter resets and boot_id changes. *out = new reference to
 * {"host","cgroup","metric","kind":"rate"|"gauge","unit","points":[[ts_s, v|null], ...]}
 * or, when downsampled, points of [ts_s, avg, min, max] (docs/api.md).
 * Unknown host or cgroup: STORE_ENOTFOUND. A metric with no point in the
 * window: empty points when the host (cgroup) reported it at some time
 * (store_names_ever), else STORE_ENOMETRIC. A cgroup path present in both
 * hierarchies of a hybrid machine is read as one cgroup: each sample's
 * value comes from whichever of the two reported the name. */
int store_series(struct store *st, const struct series_query *q, json_t **out,
		 char *err, size_t errlen);

/* GET /api/v1/hosts/{host}/series_batch: up to SERIES_BATCH_MAX metrics of
 * one host (or cgroup) over one window. */
#define SERIES_BATCH_MAX 64
struct series_batch_query {
	const char *host;
	const char *cgroup;	/* NULL: host level */
	int cgroup_version;	/* as series_query's */
	const char *metrics[SERIES_BATCH_MAX];	/* flattened names (into namebuf, or borrowed) */
	int nmetrics;
	char namebuf[SERIES_BATCH_MAX * 129];	/* params_series_batch's copy of metrics= */
	int64_t since_ms, until_ms;
	int points;		/* as series_query.points */
	int failed;		/* out: index of the metric an error is about, -1 when none */
	bool columns;		/* layout=columns: the API writes each series as columns (api_read.c) */
};

/* *out = {"host","cgroup","since_ts","until_ts","series":[...]}: one
 * element per requested metric, in request order, each exactly the answer
 * store_series gives for it. Rolled-up host metrics over a rollup range
 * are read in one query (store_series_batch.c). Errors as store_series. */
int store_series_batch(struct store *st, struct series_batch_query *q, json_t **out,
		       char *err, size_t errlen);

/* GET /api/v1/fleet's sparklines (docs/api.md "Fleet"), every host's from
 * the 5-minute rollups in one query, as plain arrays: bucket k of host h's
 * sparkline s is state[(h * FLEET_NSPARK + s) * nb + k] (FLEET_ABSENT: no
 * samples in the bucket, FLEET_NULL: samples but no value, FLEET_VALUE:
 * v[...] holds it). Bucket k starts at since_ms + k * step_ms. */
enum { FLEET_PSI, FLEET_REFAULT, FLEET_EFF, FLEET_SWAPIN, FLEET_SWAPOUT, FLEET_NSPARK };
enum { FLEET_ABSENT = 0, FLEET_NULL = 1, FLEET_VALUE = 2 };
#define FLEET_MAX_BUCKETS 1000
extern const char *const fleet_spark_name[FLEET_NSPARK];	/* "psi_memory_some", ... */

struct fleet_sparks {
	int64_t since_ms, step_ms;
	int nb;			/* buckets per sparkline */
	size_t nhosts;		/* hosts with rollups in the range */
	char **host;		/* owned names, in the query's order */
	size_t *order;		/* indexes into host[], sorted by strcmp */
	double *v;		/* owned, nhosts * FLEET_NSPARK * nb */
	uint8_t *state;		/* owned, same shape: FLEET_ABSENT/NULL/VALUE */
};

/* Fills *out for buckets since_ms + k * step_ms up to until_ms (step_ms a
 * multiple of 5 minutes, at most FLEET_MAX_BUCKETS buckets; since aligned
 * to 5 minutes). Hosts without rollups in the range are absent. *out is
 * always initialised; release it with fleet_sparks_release. STORE_* code. */
int store_fleet_sparks(struct store *st, int64_t since_ms, int64_t until_ms, int64_t step_ms,
		       struct fleet_sparks *out, char *err, size_t errlen);
void fleet_sparks_release(struct fleet_sparks *fs);

/* Index into fs->host of a host name, -1 when absent (binary search). */
int fleet_sparks_find(const struct fleet_sparks *fs, const char *host);

struct alert_query {
	const char *host, *cgroup, *kind;	/* NULL: any */
	const char *state;	/* "open", "resolved" or "all" */
	int64_t since_ms, until_ms;	/* INT64_MIN / INT64_MAX: unbounded */
	int limit;		/* 1..10000 */
};

/* GET /api/v1/alerts as CONTRACT.md §3: *out = new reference to {"alerts":[...]}.
 * Implemented by the detectors (server/store/alert_store.c), which own the table. */
int store_alerts(struct store *st, const struct alert_query *q, json_t **out,
		 char *err, size_t errlen);

/* *yes when an alert of kind is stored (server/api/alert_api.c): a kind
 * the server no longer raises, or one written by hand, is still a kind
 * GET /api/v1/alerts filters on. */
int store_alert_kind_stored(struct store *st, const char *kind, bool *yes, char *err, size_t errlen);

/* Export (server/store/store_export.c): a host's stored samples with
 * since_ms <= ts <= until_ms, in ts order, decoded back whole (every field
 * as posted, unknown counters and nulls included; see the file for where
 * boot_id, kernel, agent_version and labels come from). Open returns the
 * cursor in *out (STORE_ENOTFOUND for a host that never posted). next
 * fills s (initialised by the caller; released and refilled) and returns
 * 1, 0 at the end, or a STORE_E* code with err written. The cursor holds
 * no connection between calls (one is borrowed per page of rows), so it
 * may live as long as a slow download. close frees it; NULL is a no-op. */
struct store_export;
int store_export_open(struct store *st, const char *host, int64_t since_ms, int64_t until_ms,
		      struct store_export **out, char *err, size_t errlen);
int store_export_next(struct store_export *x, struct sample *s, char *err, size_t errlen);
void store_export_close(struct store_export *x);

/* Derived reclaim signals of a host from its two newest stored samples
 * (server/store/store_signals.c), for /metrics. A value is NAN when it cannot be
 * computed (one sample, a reboot or counter reset between the two, the
 * counters missing, no pages scanned for the efficiency). */
struct host_signals {
	char host[HOST_NAME_MAXLEN + 1];
	int64_t ts_ms;			/* the newest sample */
	double refault_file_ps;		/* workingset_refault_file (or _refault before 5.9), pages/s */
	double reclaim_efficiency;	/* pages stolen / pages scanned (kswapd + direct) */
	double swap_in_ps, swap_out_ps;	/* pswpin / pswpout, pages/s */
};

/* One entry per host whose newest sample is at or after active_since_ms,
 * sorted by host, in *out (malloc'd array the caller frees; NULL when
 * none) and *n. One query; cost grows with the number of active hosts. */
int store_host_signals(struct store *st, int64_t active_since_ms, struct host_signals **out, size_t *n,
		       char *err, size_t errlen);

/* As store_conn_get / store_conn_put, for reads that a --read-db standby
 * may answer (the alerts and compare APIs): its pool when configured. */
PGconn *store_read_conn_get(struct store *st);
void store_read_conn_put(struct store *st, PGconn *conn, bool broken);

/* Sets known[i] for each names[i] that has posted samples before (hosts
 * with samples), in one query. Returns STORE_OK or STORE_E* with err. */
int store_hosts_known(struct store *st, const char *const *names, size_t n, bool *known,
		      char *err, size_t errlen);

/* Borrow a pooled connection for work outside these calls (the detector
 * engine loads its state at start). Returns NULL when the database is
 * unreachable. Give it back with store_conn_put; pass broken=true when a
 * query failed with a connection error so it is reconnected. */
PGconn *store_conn_get(struct store *st);
void store_conn_put(struct store *st, PGconn *conn, bool broken);

#endif
