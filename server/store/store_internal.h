/* store_internal.h - what the store_*.c files share: the store struct, its
 * caches, SQL helpers and the per-host encoding state. Not for other
 * modules: they use store.h.
 *
 * Layers, calls going down only:
 *   store.c                       lifecycle, retention, small reads
 *   store_put.c, store_gc.c, store_series*.c, store_export.c, store_fleet.c,
 *   store_compare.c, store_forget.c, store_signals.c, store_cgrollup.c,
 *   store_rollup.c, alert_store.c  what the store does
 *   store_ckpt.c, store_take.c     checkpoints and take-overs of owned hosts
 *   store_own.c, store_state.c    owned hosts in memory, encoding state, caches
 *   store_names.c                 names a host or cgroup path reports
 *   store_partition.c, store_lookup.c, store_conn.c
 *   store_sql.c                   statements, results, pipelining
 *   codec.c, pgarr.c, pgbin.c, pgcopy.c, db_pool.c, metric_kind.c
 */
#ifndef VMSCOPE_STORE_INTERNAL_H
#define VMSCOPE_STORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "codec.h"
#include "db_pool.h"
#include "store.h"
#include "store_rollup.h"

#define STORE_DAY_MS 86400000LL
#define STORE_KF_EVERY 64		/* in-order rows per delta chain */
#define STORE_POOL_WAIT_MS 5000	/* longest wait for a free connection */
#define STORE_CG_TOUCH_MS 60000	/* cgroups.last_ts_ms refreshed at most this often */
#define STORE_GC_MAX_REQS 256		/* requests sharing one ingest transaction */
#define STORE_GC_MAX_SAMPLES 4000	/* samples in one, unless a single request has more */
#define STORE_CG_CACHE_MAX 500000
#define STORE_CKPT_BATCH 64		/* hosts checkpointed in one transaction */
#define STORE_OWN_IDLE_MS 600000	/* an owned host unused this long leaves memory */
#define STORE_OWN_MAX 50000		/* owned hosts kept in memory at most */

/* The encoding state of a host: the values of its newest in-order row,
 * which the next in-order row is encoded against. */
struct cgstate {
	uint32_t id;		/* cgroups.id */
	struct sset m;		/* database metric ids, sorted */
};

struct hstate {
	int32_t host_id;
	int64_t last_ts;	/* ts of the row these values are from; INT64_MIN: none */
	int chain;		/* rows in the chain so far, keyframe included */
	int boot;		/* boot number of that row */
	char *boot_id;		/* owned, NULL when absent */
	struct sset m;		/* host-level values, database ids, sorted */
	struct cgstate *cg;	/* owned, sorted by id */
	size_t ncg, cgcap;
};

void hstate_init(struct hstate *h);
void hstate_release(struct hstate *h);
/* Makes h the state of "no row": the next in-order row is a keyframe. */
void hstate_reset(struct hstate *h);

/* Makes dst a copy of src's values, ts, chain length and boot number
 * (not its boot_id), reusing dst's memory. -1 when out of memory. */
int hstate_copy(struct hstate *dst, const struct hstate *src);

/* Applies one stored row (d, c as in the samples table) on top of h,
 * which must hold the row's base when the row is a delta. Returns 0 or -1
 * on malformed data. */
int hstate_apply_row(struct hstate *h, const uint8_t *d, size_t dlen, const uint8_t *c, size_t clen);

/* Cache of cgroup ids keyed by (host id, version, path). */
struct cgcache;
struct cgcache *cgcache_new(void);
void cgcache_free(struct cgcache *cc);
/* Returns the id (>0) or 0 when unknown; *touched receives the last
 * last_ts_ms written for it. */
uint32_t cgcache_get(struct cgcache *cc, int32_t host_id, int version, const char *path, int64_t *touched);
void cgcache_set(struct cgcache *cc, int32_t host_id, int version, const char *path, uint32_t id, int64_t touched);

/* A host this server owns (store_own.c): what ingest needs of it between
 * transactions, kept in memory under the host's lease (hosts.lease,
 * schema/094_host_ownership.sql). Only the thread that checked the entry
 * out reads or writes its fields (besides name and the table's links).
 * Invariant while valid: the database holds every sample up to max_ts,
 * detector_state.last_ts_ms is ckpt_ts, rollup_5m holds the host's
 * in-order samples up to ckpt_ts and cells the ones after it, enc holds
 * the values of the newest in-order row, hs is the hook's state after the
 * in-order samples up to max_ts. Anything else (a failed transaction, a
 * lost lease) resets the entry, and the next transaction rebuilds it from
 * the database (store_take.c). */
/* A cgroup of an owned host's newest sample (store_put.c's shortcut). */
struct owncg {
	uint32_t id;
	int version;
	int64_t touched;	/* cgroups.last_ts_ms as last written or read */
	char *path;		/* owned */
};

struct own {
	struct own *next;	/* hash chain (store_own.c) */
	char name[HOST_NAME_MAXLEN + 1];
	int32_t host_id;	/* 0: not known yet */
	bool busy;		/* checked out */
	bool valid;
	int64_t max_ts;		/* newest stored ts, INT64_MIN: none */
	struct hstate enc;
	void *hs;		/* the hook's state of the host (store_hook.load), or NULL */
	int64_t ckpt_ts;
	struct host_lag lag;	/* the clock window as hosts.lag_* has it */
	struct rollup_cells cells;
	int64_t dirty_ms;	/* clock (ms) of the first sample after the checkpoint, 0: none */
	int64_t used_ms;	/* clock (ms) of the last check-in */
	struct owncg *cgs;	/* the cgroups of the newest sample, in its order */
	size_t ncgs;
	/* the descriptive fields of the newest sample as host_meta has them
	 * (labels as compact JSON with sorted keys, and parsed, to compare a
	 * sample's with); meta_known false: none yet */
	bool meta_known;
	char *kernel, *agent_version, *labels;
	json_t *labels_j;
};

struct owntab;
struct owntab *owntab_new(void);
/* Frees every entry (release: how to free a hook state). */
void owntab_free(struct owntab *t, void (*release)(void *ctx, void *hs), void *ctx);
/* Checks out the entries of names[0..n) (sorted by strcmp, distinct),
 * creating missing ones, into out[]; waits while one is checked out
 * elsewhere (in name order, so two callers never wait on each other).
 * Returns 0, or -1 when out of memory (nothing checked out). */
int owntab_checkout(struct owntab *t, const char *const *names, size_t n, struct own **out);
/* Checks out, without waiting, up to max valid entries with samples after
 * their checkpoint that came at or before dirty_before (ms, monotonic
 * clock); and drops entries unused since idle_before that have none. */
size_t owntab_checkout_dirty(struct owntab *t, int64_t dirty_before, int64_t idle_before, struct own **out,
			     size_t max, void (*release)(void *ctx, void *hs), void *ctx);
/* Checks the entries in again (wakes waiters). */
void owntab_checkin(struct owntab *t, struct own *const *e, size_t n);
/* Removes the entry of name if it is not checked out (a forgotten host);
 * an entry in use is reset by its user. */
void owntab_forget(struct owntab *t, const char *name, void (*release)(void *ctx, void *hs), void *ctx);
size_t owntab_count(struct owntab *t);

/* Frees and clears an entry's descriptive fields. */
void own_clear_meta(struct own *e);

/* Frees cgs[0..n) and the array; frees and clears an entry's. */
void own_free_cgs(struct owncg *cgs, size_t n);
void own_free_cgs_of(struct own *e);

/* Makes a checked-out entry invalid and frees its state (it is rebuilt
 * from the database when next used). */
void own_reset(struct store *st, struct own *e);

/* Monotonic clock in ms. */
int64_t store_clock_ms(void);

/* Inside the caller's transaction: takes host e over (hosts.lease set to
 * this server's, which locks the row until the transaction ends) and
 * rebuilds its entry from the database: the encoding state of its newest
 * in-order row, the hook's state from the checkpoint and the stored
 * samples after it, the rollup cells of those. e->host_id must be set.
 * STORE_ENOTFOUND when the host row is gone (forgotten meanwhile). */
int store_take(struct store *st, PGconn *c, struct own *e, char *err, size_t errlen);

/* Writes the checkpoints of the checked-out valid entries e[0..n) in one
 * transaction (store_ckpt.c); an entry whose checkpoint another server
 * moved meanwhile is reset. STORE_* code. */
int store_ckpt_write(struct store *st, PGconn *c, struct own *const *e, size_t n, char *err, size_t errlen);

struct store {
	struct db_pool *pool;
	struct db_pool *rpool;		/* --read-db's standby for the read API, or NULL */
	int retention_days;
	int rollup_retention_days;	/* rollup_5m months kept (store_rollup.c) */
	pthread_mutex_t mu;		/* guards the caches below */
	int32_t *metric_db;		/* dict id -> metric_names.id, 0 unknown */
	_Atomic uint32_t metric_upto;	/* every dict id in 1..metric_upto-1 has one */
	int64_t *days;			/* day numbers with a partition, sorted */
	size_t ndays, capdays;
	struct cgcache *cgs;
	int rollup_months[32];		/* yyyymm with a rollup partition */
	size_t nrollup_months;
	struct owntab *own;		/* hosts this server owns (store_own.c) */
	int64_t lease;			/* this store's hosts.lease value, random, not 0 */
	struct store_hook hook;		/* zeroed: none */
	int ckpt_ms;			/* --checkpoint-interval */
	bool citus;			/* the database is a Citus coordinator */
	/* group commit of store_put_samples (store_put.c) */
	pthread_mutex_t gc_mu;
	struct putreq *gc_head, *gc_tail;	/* waiting requests, FIFO */
	int gc_leaders, gc_max_leaders;	/* transactions running / allowed */
};

/* A caller's store_put_samples call waiting for a transaction. */
struct putreq {
	const struct sample *s;
	size_t n;
	size_t nfresh;
	int rc;
	char *err;		/* the caller's buffer */
	size_t errlen;
	bool done;
	pthread_cond_t cv;	/* signalled when done, or when it may lead (store_gc.c) */
	struct putreq *next;
};

/* Stores the samples of reqs[0..nreq) in one transaction (store_put.c).
 * Returns a STORE_E* code with err written. *final is set when a failure
 * must not be retried at once: COMMIT was sent (its outcome is unknown) or
 * no connection could be made. On success sets each request's nfresh. */
int store_run_tx(struct store *st, struct putreq **reqs, size_t nreq, bool *final, char *err, size_t errlen);

/* Runs sql with text parameters; result rows in binary when binary. On
 * success returns STORE_OK and *out (caller PQclears; may be NULL to
 * discard). On failure returns STORE_EUNAVAIL (connection trouble) or
 * STORE_EINTERNAL with "could not WHAT: message" in err. */
int store_q(PGconn *c, const char *sql, int nparams, const char *const *params, int binary,
	    PGresult **out, const char *what, char *err, size_t errlen);

/* store_q's handling of a result r of connection c (takes r). */
int store_result(PGconn *c, PGresult *r, PGresult **out, const char *what, char *err, size_t errlen);

/* Statements run as prepared statements (store_sql.c): the big ingest
 * ones, whose parse and plan cost PostgreSQL more than running them. */
enum store_prep_id {
	STORE_PREP_WRITE, STORE_PREP_ROLLUP, STORE_PREP_ROLLUP1,
	STORE_PREP_ROW1,	/* one sample's row as INSERT ... VALUES (Citus) */
	STORE_PREP_HOST,	/* an ingest transaction's lease-checked host row update */
	STORE_PREP_HEARD,	/* the same for a host whose samples were all stored already */
	STORE_PREP_CGTOUCH,	/* cgroups' last-seen times */
	STORE_PREP_META,	/* a host_meta row */
	STORE_PREP_CKPT,	/* a checkpoint's state update (store_ckpt.c), one host (Citus) */
	STORE_PREP_CKPTN,	/* the same for all the hosts of a checkpoint transaction */
	STORE_PREP_N
};

/* A connection for the read API: from the standby's pool when --read-db
 * is set, else the primary's. Give it back with store_read_put. */
PGconn *store_read_get(struct store *st, int *rc, char *err, size_t errlen);
void store_read_put(struct store *st, PGconn *c, int rc);

/* As store_q, but sql is prepared once per connection under id (the same
 * id must always come with the same sql) and then executed by name. */
int store_q_prep(PGconn *c, enum store_prep_id id, const char *sql, int nparams,
		 const char *const *params, int binary, PGresult **out, const char *what,
		 char *err, size_t errlen);

/* store_q_prep with per-parameter lengths and formats (1: binary), as
 * PQexecPrepared takes them; NULL for all text. */
int store_q_prep_fmt(PGconn *c, enum store_prep_id id, const char *sql, int nparams,
		     const char *const *params, const int *lengths, const int *formats, int binary,
		     PGresult **out, const char *what, char *err, size_t errlen);

/* Pipelined writes (store_sql.c): sends the prepared statement id without
 * waiting for its result (the connection enters libpq pipeline mode). The
 * result is read, and a failure reported, by the next store_q_prep or
 * store_q_prep_fmt on the connection (its statement joins the pipeline:
 * one round trip for all), by store_pipe_finish, or by store_commit. Any
 * other statement on the connection must come after store_pipe_finish
 * (store_q and store_q_begin call it). For statements whose result nobody
 * needs before COMMIT. */
int store_q_prep_send(PGconn *c, enum store_prep_id id, const char *sql, int nparams,
		      const char *const *params, const int *lengths, const int *formats, int binary,
		      const char *what, char *err, size_t errlen);

/* store_q_prep_send that also keeps the statement's result: the finish
 * that reads it stores it in *keep (the caller PQclears it), NULL when it
 * failed (*keep is set to NULL at once). */
int store_q_prep_keep(PGconn *c, enum store_prep_id id, const char *sql, int nparams,
		      const char *const *params, const int *lengths, const int *formats, int binary,
		      PGresult **keep, const char *what, char *err, size_t errlen);

/* An unprepared statement (text parameters and results) sent without
 * waiting, as store_q_prep_keep (keep may be NULL). */
int store_q_send(PGconn *c, const char *sql, int nparams, const char *const *params, PGresult **keep,
		 const char *what, char *err, size_t errlen);

/* store_q_send with per-parameter lengths and formats (1: binary). */
int store_q_send_fmt(PGconn *c, const char *sql, int nparams, const char *const *params, const int *lengths,
		     const int *formats, PGresult **keep, const char *what, char *err, size_t errlen);

/* Reads the results of the commands waiting on c and leaves pipeline mode
 * (a no-op when none wait). Returns the first failure's STORE_E* code with
 * "could not WHAT: message" in err (err may be NULL to discard). When last
 * is given, *last gets the final command's rows (caller PQclears). */
int store_pipe_finish(PGconn *c, PGresult **last, char *err, size_t errlen);

/* COMMIT, sent with the waiting writes when there are any (one round
 * trip); as store_q("COMMIT") otherwise. A failure of an earlier write is
 * reported as that write's (nothing was committed then). */
int store_commit(PGconn *c, char *err, size_t errlen);

/* SQLSTATEs that mean the database is away, busy, out of disk or memory,
 * or read-only (STORE_EUNAVAIL; the list: store_health.c). */
bool store_unavailable_state(const char *sqlstate);

/* The SQLSTATE of a connection's first failed statement since
 * store_conn_fail_reset, so that a caller who only got -1 (a transaction
 * hook, a pg_fail path) can still tell "retry later" from a bug. note
 * records r's state (store_q*, pg_fail call it); fail_state returns NULL
 * when nothing failed or the failure had no SQLSTATE (a lost connection). */
void store_conn_note_failure(PGconn *c, const PGresult *r);
void store_conn_fail_reset(PGconn *c);
const char *store_conn_fail_state(PGconn *c);

/* BEGIN and then sql in one round trip (libpq pipeline mode); as
 * store_q otherwise. sql must return rows. */
int store_q_begin(PGconn *c, const char *sql, int nparams, const char *const *params, int binary,
		  PGresult **out, const char *what, char *err, size_t errlen);

/* Result accessors for binary rows. */
int64_t store_get_i64(const PGresult *r, int row, int col);
int32_t store_get_i32(const PGresult *r, int row, int col);
int16_t store_get_i16(const PGresult *r, int row, int col);
bool store_get_bool(const PGresult *r, int row, int col);

/* Makes sure a partition exists for every day number in days[0..n)
 * (outside any transaction: DDL takes a strong lock on the parent). */
int store_ensure_partitions(struct store *st, PGconn *c, const int64_t *days, size_t n,
			    char *err, size_t errlen);

/* Drops the samples partitions whose whole day is before cutoff (ms) and
 * forgets them in the day cache; *ndropped counts them. */
int store_drop_partitions_before(struct store *st, PGconn *c, int64_t cutoff, int *ndropped,
				 char *err, size_t errlen);

static inline int64_t store_day(int64_t ts_ms)
{
	return ts_ms >= 0 ? ts_ms / STORE_DAY_MS : -((-ts_ms + STORE_DAY_MS - 1) / STORE_DAY_MS);
}

/* Loads the state of host_id's row at ts (decoding its chain). Returns
 * STORE_OK with h filled (h reset when no usable chain ends at ts: the
 * caller then writes a keyframe), or a STORE_E* code. */
int store_load_state(PGconn *c, int32_t host_id, int64_t ts, struct hstate *h, char *err, size_t errlen);

/* Database metric id of a name, resolved through the cache; 0 when the
 * name was never stored. Returns STORE_OK or a STORE_E* code. */
int store_metric_id(struct store *st, PGconn *c, const char *name, int32_t *id, char *err, size_t errlen);

/* The id of a host name (host_names), whether or not it has samples:
 * STORE_OK, STORE_ENOTFOUND or an error. */
int store_host_key(PGconn *c, const char *host, int32_t *id, char *err, size_t errlen);

/* Adding hosts, autocommitted: the names of a text[] ($1) get ids from
 * host_ids (two servers adding one name race on host_names' key, and one
 * id wins), then rows in hosts (ids $1, names $2), without samples until
 * ingest writes some (a host row without samples is invisible to the API). */
#define HOST_NAMES_ADD_SQL                                                                             \
	"INSERT INTO host_names (name, id) SELECT x, nextval('host_ids') FROM unnest($1::text[]) AS x "   \
	"ORDER BY x COLLATE \"C\" ON CONFLICT (name) DO NOTHING"
#define HOSTS_ADD_SQL                                                                                  \
	"INSERT INTO hosts (id, name) SELECT * FROM unnest($1::int[], $2::text[]) ON CONFLICT (id) DO NOTHING"

/* The id of host, adding the host (as above) when it has none. */
int store_host_add(PGconn *c, const char *host, int32_t *id, char *err, size_t errlen);

/* Host id by name, of a host with samples: STORE_OK, STORE_ENOTFOUND or an
 * error. */
int store_host_id(PGconn *c, const char *host, int32_t *id, int64_t *last_ts, char *err, size_t errlen);

/* A take-over's replay (store_export.c): a cursor like store_export_open's
 * on the caller's connection (kept for the cursor's life) for a host whose
 * id is known; store_export_next gives its samples, store_replay_row what
 * the row last given was (a late one, its values in database ids, the
 * in-order row before it) and store_replay_chain the newest in-order row's
 * state after the last one (chain length and boot number kept). */
struct store_export;
int store_replay_open(struct store *st, PGconn *c, const char *host, int32_t host_id, int64_t since_ms,
		      int64_t until_ms, struct store_export **out, char *err, size_t errlen);
void store_replay_row(const struct store_export *x, bool *late, const struct hstate **cur,
		      const struct hstate **prev);
struct hstate *store_replay_chain(struct store_export *x);

/* ---- store_names.c: which names a host or cgroup path reports ---- */

/* The cgroups behind one path of a host: on a hybrid machine the v1 memory
 * controller's and the v2 hierarchy's (docs/api.md "Cgroups"). */
#define CGPATH_MAX 2
struct cgpath {
	size_t n;
	uint32_t id[CGPATH_MAX];	/* cgroups.id, by version */
	int version[CGPATH_MAX];
	int64_t last_ts[CGPATH_MAX];	/* cgroups.last_ts_ms */
};

/* The cgroups of path on the host (version 1 or 2: only that one; 0:
 * both). STORE_ENOTFOUND ("no such cgroup on HOST: PATH" in err) when
 * there is none. */
int store_cgpath(PGconn *c, int32_t host_id, const char *host, const char *path, int version,
		 struct cgpath *out, char *err, size_t errlen);

/* Ids of the cgroups present in the host's row at ts (its c column);
 * *ids is the caller's to free. */
int store_cgroups_at(PGconn *c, int32_t host_id, int64_t ts, uint32_t **ids, size_t *n, char *err,
		     size_t errlen);

/* A sorted set of database metric ids; release with idset_release. */
struct idset {
	uint32_t *id;		/* owned */
	size_t n, cap;
};
void idset_release(struct idset *s);
bool idset_has(const struct idset *s, uint32_t id);

/* The names of the newest sample in which the host (cg NULL) or each
 * cgroup of cg was present: what GET .../metrics lists. *out is filled
 * (the caller releases it) on STORE_OK only. */
int store_names_now(PGconn *c, int32_t host_id, int64_t host_last, const struct cgpath *cg,
		    struct idset *out, char *err, size_t errlen);

/* store_names_now's names and those of each day's first sample within
 * retention (not before oldest_ms): what the host ever reported, but for a
 * name it reported only between two days' first samples and not in its
 * newest one. */
int store_names_ever(PGconn *c, int32_t host_id, int64_t host_last, int64_t oldest_ms, const struct cgpath *cg,
		     struct idset *out, char *err, size_t errlen);

/* ---- store_series.c: what the series of one request share ---- */

/* The host (or cgroup path) a request reads series of, looked up once,
 * and the names it reported, loaded only when an answer is empty. */
struct series_src {
	const char *host, *cgroup;	/* borrowed; cgroup NULL: host level */
	int32_t hid;
	int64_t last;		/* the host's newest sample */
	struct cgpath cg;	/* with cgroup */
	int names_known;	/* 0: names not loaded, 1: store_names_now's, 2: store_names_ever's */
	struct idset names;
};

/* Looks up the host and the cgroup path (version 0: both hierarchies).
 * STORE_ENOTFOUND for an unknown one. Release with series_src_release
 * whatever it returned. */
int series_src_open(PGconn *c, const char *host, const char *cgroup, int version, struct series_src *src,
		    char *err, size_t errlen);
void series_src_release(struct series_src *src);

/* store_series on connection c for a source already looked up (q->host
 * and q->cgroup are src's). */
int series_read(struct store *st, PGconn *c, struct series_src *src, const struct series_query *q, json_t **out,
		char *err, size_t errlen);

/* RFC 3339 UTC with milliseconds. */
void store_rfc3339(int64_t ts_ms, char *buf, size_t cap);

#endif
