/* store.c - the top of the store: its lifecycle (open, migrations, close),
 * retention, and the small read queries (hosts, cgroups, metrics). Ingest
 * is in store_put.c, series in store_series.c, encoding state in
 * store_state.c. Calls go down only: store.c calls the other store_*.c
 * files, which call store_sql.c, store_partition.c and store_lookup.c at
 * the bottom and never store.c. Design: docs/design.md.
 */
#include "store_internal.h"
#include "liveness_store.h"
#include "store_rollup.h"
#include "store_cgrollup.h"

#include "dict.h"
#include "metric_kind.h"
#include "migrate.h"

#include <arpa/inet.h>
#include <endian.h>
#include <sys/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef VMSCOPE_SCHEMA_DIR
#define VMSCOPE_SCHEMA_DIR "schema"
#endif

void store_rfc3339(int64_t ts_ms, char *buf, size_t cap)
{
	time_t t = (time_t)(store_day(ts_ms) * 86400 + (ts_ms - store_day(ts_ms) * STORE_DAY_MS) / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	int ms = (int)(((ts_ms % 1000) + 1000) % 1000);
	snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

int store_open(struct store **out, const struct store_config *cfg, char *err, size_t errlen)
{
	struct store *st;
	PGconn *c;
	int rc;

	*out = NULL;
	if (!cfg || !cfg->conninfo) {
		snprintf(err, errlen, "no database conninfo given");
		return STORE_EINVAL;
	}
	if (!(c = db_connect(cfg->conninfo, err, errlen)))
		return STORE_EUNAVAIL;
	const char *dir = cfg->schema_dir ? cfg->schema_dir : VMSCOPE_SCHEMA_DIR;
	int mrc = migrate_apply(c, dir, NULL, err, errlen);
	if (mrc < 0) {
		/* a Citus worker: pointing at it again will not help */
		rc = mrc == MIGRATE_WRONG_NODE ? STORE_EINVAL
		     : PQstatus(c) == CONNECTION_OK ? STORE_EINTERNAL : STORE_EUNAVAIL;
		PQfinish(c);
		return rc;
	}
	if (!(st = calloc(1, sizeof(*st)))) {
		PQfinish(c);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	/* a Citus coordinator: transactions stay on one host's shard (store_gc.c) */
	PGresult *cr = PQexec(c, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')");
	st->citus = PQresultStatus(cr) == PGRES_TUPLES_OK && PQgetvalue(cr, 0, 0)[0] == 't';
	PQclear(cr);
	pthread_mutex_init(&st->mu, NULL);
	pthread_mutex_init(&st->gc_mu, NULL);
	st->gc_max_leaders = cfg->pool_size > 0 ? cfg->pool_size : 8;
	st->retention_days = cfg->retention_days > 0 ? cfg->retention_days : 30;
	st->rollup_retention_days = cfg->rollup_retention_days > 0 ? cfg->rollup_retention_days : 400;
	st->pool = db_pool_new(cfg->conninfo, cfg->pool_size > 0 ? cfg->pool_size : 8);
	if (cfg->read_conninfo && !(st->rpool = db_pool_new(cfg->read_conninfo, cfg->pool_size > 0 ? cfg->pool_size : 8))) {
		PQfinish(c);
		store_close(st);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	st->ckpt_ms = cfg->checkpoint_ms > 0 ? cfg->checkpoint_ms : 30000;
	st->metric_db = calloc(DICT_MAX_NAMES + 1, sizeof(*st->metric_db));
	st->own = owntab_new();
	st->cgs = cgcache_new();
	/* this process's lease on the hosts it owns: random, so that a
	 * restarted server does not mistake its old memory for its own */
	while (st->lease == 0) {
		uint64_t v;
		if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v)) {
			PQfinish(c);
			store_close(st);
			snprintf(err, errlen, "could not read random bytes: %m");
			return STORE_EINTERNAL;
		}
		st->lease = (int64_t)(v >> 1);
	}
	if (!st->pool || !st->metric_db || !st->own || !st->cgs) {
		PQfinish(c);
		store_close(st);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	/* today and tomorrow exist before the first sample arrives */
	int64_t today = store_day((int64_t)time(NULL) * 1000);
	int64_t days[2] = { today, today + 1 };
	rc = store_ensure_partitions(st, c, days, 2, err, errlen);
	if (rc == STORE_OK)
		rc = rollup_ensure_partitions(st, c, days, 2, err, errlen);
	PQfinish(c);
	if (rc != STORE_OK) {
		store_close(st);
		return rc;
	}
	*out = st;
	return STORE_OK;
}

void store_set_hook(struct store *st, const struct store_hook *hook)
{
	st->hook = *hook;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	if (st->own && st->pool) {
		/* what lives only in memory goes to the database (a kill -9
		 * loses nothing either: the next owner replays the samples) */
		char err[256];
		int n;
		if (store_checkpoint(st, true, &n, err, sizeof(err)) != STORE_OK)
			fprintf(stderr, "vmscope: could not write the last checkpoints: %s\n", err);
	}
	owntab_free(st->own, st->hook.release, st->hook.ctx);
	db_pool_free(st->pool);
	db_pool_free(st->rpool);
	cgcache_free(st->cgs);
	free(st->metric_db);
	free(st->days);
	pthread_mutex_destroy(&st->mu);
	pthread_mutex_destroy(&st->gc_mu);
	free(st);
}

bool store_ping(struct store *st)
{
	char err[256];
	PGconn *c = db_pool_get(st->pool, STORE_POOL_WAIT_MS, err, sizeof(err));
	if (!c)
		return false;
	int rc = store_q(c, "SELECT 1", 0, NULL, 0, NULL, "ping", err, sizeof(err));
	db_pool_put(st->pool, c, rc == STORE_EUNAVAIL);
	return rc == STORE_OK;
}

int64_t store_oldest_accepted_ms(const struct store *st, int64_t now_ms)
{
	return now_ms - (int64_t)st->retention_days * STORE_DAY_MS;
}


/* Gets a connection or fails with STORE_EUNAVAIL. */
static PGconn *get_conn(struct store *st, int *rc, char *err, size_t errlen)
{
	PGconn *c = db_pool_get(st->pool, STORE_POOL_WAIT_MS, err, errlen);
	*rc = c ? STORE_OK : STORE_EUNAVAIL;
	return c;
}

static void put_conn(struct store *st, PGconn *c, int rc)
{
	db_pool_put(st->pool, c, rc == STORE_EUNAVAIL);
}

#define HOST_COLS "name, coalesce(last_ts_ms, 0), boot_id, kernel, agent_version, labels::text, ncgroups, samples"

/* One host object from a text row of HOST_COLS. NULL when out of memory. */
static json_t *host_json(const PGresult *r, int i)
{
	char when[40];
	int64_t last = strtoll(PQgetvalue(r, i, 1), NULL, 10);
	json_error_t je;
	json_t *labels = json_loads(PQgetvalue(r, i, 5), 0, &je);

	store_rfc3339(last, when, sizeof(when));
	json_t *o = json_object();
	if (!o) {
		json_decref(labels);
		return NULL;
	}
	int bad = 0;
	bad |= json_object_set_new(o, "host", json_string(PQgetvalue(r, i, 0)));
	bad |= json_object_set_new(o, "last_seen", json_string(when));
	bad |= json_object_set_new(o, "last_seen_ts", json_real((double)last / 1000.0));
	for (int col = 2; col <= 4; col++) {
		static const char *const keys[] = { NULL, NULL, "boot_id", "kernel", "agent_version" };
		bad |= json_object_set_new(o, keys[col],
					   PQgetisnull(r, i, col) ? json_null() : json_string(PQgetvalue(r, i, col)));
	}
	bad |= json_object_set_new(o, "labels", labels ? labels : json_object());
	bad |= json_object_set_new(o, "cgroups", json_integer(strtoll(PQgetvalue(r, i, 6), NULL, 10)));
	bad |= json_object_set_new(o, "samples", json_integer(strtoll(PQgetvalue(r, i, 7), NULL, 10)));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int store_hosts(struct store *st, json_t **out, char *err, size_t errlen)
{
	int rc;
	PGresult *r = NULL;
	PGconn *c = store_read_get(st, &rc, err, errlen);

	*out = NULL;
	if (!c)
		return rc;
	rc = store_q(c, "SELECT " HOST_COLS " FROM hosts WHERE samples > 0 ORDER BY name COLLATE \"C\"",
		     0, NULL, 0, &r, "list hosts", err, errlen);
	if (rc != STORE_OK) {
		store_read_put(st, c, rc);
		return rc;
	}
	json_t *arr = json_array();
	for (int i = 0; arr && i < PQntuples(r); i++) {
		json_t *h = host_json(r, i);
		if (!h || json_array_append_new(arr, h) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	PQclear(r);
	/* each host's clock, and the hosts whose every sample was refused */
	if (arr && (rc = liveness_store_add_clocks(c, arr, NULL, err, errlen)) != STORE_OK) {
		json_decref(arr);
		store_read_put(st, c, rc);
		return rc;
	}
	store_read_put(st, c, rc);
	*out = arr ? json_pack("{s:o}", "hosts", arr) : NULL;
	if (!*out) {
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	return STORE_OK;
}

int store_host(struct store *st, const char *host, json_t **out, char *err, size_t errlen)
{
	int rc;
	PGresult *r = NULL;
	PGconn *c = store_read_get(st, &rc, err, errlen);
	char hid[16];
	const char *p[1] = { hid };
	int32_t id;

	*out = NULL;
	if (!c)
		return rc;
	if ((rc = store_host_key(c, host, &id, err, errlen)) != STORE_OK) {
		store_read_put(st, c, rc);
		return rc;
	}
	snprintf(hid, sizeof(hid), "%d", id);
	rc = store_q(c, "SELECT " HOST_COLS " FROM hosts WHERE id = $1::int AND samples > 0", 1, p, 0, &r,
		     "read the host", err, errlen);
	if (rc != STORE_OK) {
		store_read_put(st, c, rc);
		return rc;
	}
	/* as a one-host list, for its clock (or a host whose every sample was refused) */
	json_t *one = json_array();
	json_t *h = PQntuples(r) == 1 ? host_json(r, 0) : NULL;
	bool oom = !one || (PQntuples(r) == 1 && (!h || json_array_append_new(one, h) < 0));
	PQclear(r);
	if (!oom)
		rc = liveness_store_add_clocks(c, one, host, err, errlen);
	store_read_put(st, c, rc);
	if (oom || rc != STORE_OK) {
		json_decref(one);
		if (oom)
			snprintf(err, errlen, "out of memory");
		return oom ? STORE_EINTERNAL : rc;
	}
	if (json_array_size(one) != 1) {
		json_decref(one);
		snprintf(err, errlen, "no such host: %s", host);
		return STORE_ENOTFOUND;
	}
	*out = json_incref(json_array_get(one, 0));
	json_decref(one);
	return STORE_OK;
}

int store_cgroups(struct store *st, const char *host, json_t **out, char *err, size_t errlen)
{
	int rc;
	PGresult *r = NULL;
	PGconn *c = store_read_get(st, &rc, err, errlen);
	int32_t hid;
	int64_t last;
	uint32_t *now_ids = NULL;
	size_t nnow = 0;

	*out = NULL;
	if (!c)
		return rc;
	if ((rc = store_host_id(c, host, &hid, &last, err, errlen)) != STORE_OK)
		goto out;
	if ((rc = store_cgroups_at(c, hid, last, &now_ids, &nnow, err, errlen)) != STORE_OK)
		goto out;
	char hs[16];
	snprintf(hs, sizeof(hs), "%d", hid);
	const char *p[1] = { hs };
	rc = store_q(c, "SELECT id, path, version, last_ts_ms FROM cgroups WHERE host_id = $1 "
		     "ORDER BY path COLLATE \"C\", version", 1, p, 0, &r, "list cgroups", err, errlen);
	if (rc != STORE_OK)
		goto out;
	json_t *arr = json_array();
	for (int i = 0; arr && i < PQntuples(r); i++) {
		uint32_t id = (uint32_t)strtoul(PQgetvalue(r, i, 0), NULL, 10);
		int64_t seen = strtoll(PQgetvalue(r, i, 3), NULL, 10);
		for (size_t k = 0; k < nnow; k++)
			if (now_ids[k] == id && last > seen)
				seen = last;
		char when[40];
		store_rfc3339(seen, when, sizeof(when));
		json_t *o = json_pack("{s:s, s:i, s:s, s:f}", "path", PQgetvalue(r, i, 1), "version",
				      atoi(PQgetvalue(r, i, 2)), "last_seen", when, "last_seen_ts",
				      (double)seen / 1000.0);
		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	PQclear(r);
	*out = arr ? json_pack("{s:s, s:o}", "host", host, "cgroups", arr) : NULL;
	if (!*out) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
	}
out:
	free(now_ids);
	store_read_put(st, c, rc);
	return rc;
}

/* Builds [{"name","kind"}] for the metric ids, sorted by name. */
static int metrics_json(PGconn *c, const struct idset *ids, bool cgroup, json_t **arr, char *err,
			size_t errlen)
{
	struct cbuf lst;
	PGresult *r;
	char num[16];
	int rc;

	cbuf_init(&lst);
	*arr = NULL;
	if (cbuf_put(&lst, "{", 1) < 0)
		goto oom;
	for (size_t i = 0; i < ids->n; i++) {
		int len = snprintf(num, sizeof(num), "%s%u", i ? "," : "", ids->id[i]);
		if (cbuf_put(&lst, num, (size_t)len) < 0)
			goto oom;
	}
	if (cbuf_put(&lst, "}", 2) < 0)
		goto oom;
	const char *p[1] = { (const char *)lst.p };
	rc = store_q(c, "SELECT name FROM metric_names WHERE id = ANY($1::int[]) ORDER BY name COLLATE \"C\"",
		     1, p, 0, &r, "read metric names", err, errlen);
	cbuf_release(&lst);
	if (rc != STORE_OK)
		return rc;
	*arr = json_array();
	for (int i = 0; *arr && i < PQntuples(r); i++) {
		const char *name = PQgetvalue(r, i, 0);
		json_t *o = json_pack("{s:s, s:s}", "name", name, "kind", metric_kind_word(metric_kind(name, cgroup)));
		if (!o || json_array_append_new(*arr, o) < 0) {
			json_decref(*arr);
			*arr = NULL;
		}
	}
	PQclear(r);
	if (*arr)
		return STORE_OK;
	snprintf(err, errlen, "out of memory");
	return STORE_EINTERNAL;
oom:
	cbuf_release(&lst);
	snprintf(err, errlen, "out of memory");
	return STORE_EINTERNAL;
}

int store_metrics(struct store *st, const char *host, const char *cgroup, int version, json_t **out,
		  char *err, size_t errlen)
{
	int rc;
	PGconn *c = store_read_get(st, &rc, err, errlen);
	int32_t hid;
	int64_t last;
	struct cgpath cg;
	struct idset ids = { 0 };
	json_t *arr = NULL, *versions = NULL;

	*out = NULL;
	if (!c)
		return rc;
	if ((rc = store_host_id(c, host, &hid, &last, err, errlen)) != STORE_OK)
		goto out;
	if (cgroup && (rc = store_cgpath(c, hid, host, cgroup, version, &cg, err, errlen)) != STORE_OK)
		goto out;
	if ((rc = store_names_now(c, hid, last, cgroup ? &cg : NULL, &ids, err, errlen)) != STORE_OK)
		goto out;
	if ((rc = metrics_json(c, &ids, cgroup != NULL, &arr, err, errlen)) != STORE_OK)
		goto out;
	if (cgroup) {
		versions = json_array();
		for (size_t k = 0; versions && k < cg.n; k++)
			if (json_array_append_new(versions, json_integer(cg.version[k])) < 0) {
				json_decref(versions);
				versions = NULL;
			}
	}
	*out = cgroup ? json_pack("{s:s, s:s, s:o*, s:o}", "host", host, "cgroup", cgroup, "cgroup_versions", versions,
				  "metrics", arr)
		      : json_pack("{s:s, s:n, s:o}", "host", host, "cgroup", "metrics", arr);
	versions = NULL;
	arr = NULL;
	if (!*out) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
	}
out:
	json_decref(arr);
	idset_release(&ids);
	store_read_put(st, c, rc);
	return rc;
}

int store_drop_expired(struct store *st, int64_t now_ms, int *ndropped, char *err, size_t errlen)
{
	int rc;
	PGconn *c = get_conn(st, &rc, err, errlen);

	*ndropped = 0;
	if (!c)
		return rc;
	/* keep partitions ready ahead of the data */
	int64_t today = store_day(now_ms);
	int64_t ahead[2] = { today, today + 1 };
	if ((rc = store_ensure_partitions(st, c, ahead, 2, err, errlen)) != STORE_OK)
		goto out;
	rc = store_drop_partitions_before(st, c, store_oldest_accepted_ms(st, now_ms), ndropped, err, errlen);
	if (rc == STORE_OK) {
		int nroll = 0;
		if ((rc = rollup_ensure_partitions(st, c, ahead, 2, err, errlen)) == STORE_OK)
			rc = rollup_drop_expired(st, c, now_ms, st->rollup_retention_days, &nroll, err, errlen);
		*ndropped += nroll;
	}
	if (rc == STORE_OK) {
		int ncg = 0;
		rc = cgroll_drop_expired(st, c, now_ms, st->rollup_retention_days, &ncg, err, errlen);
		*ndropped += ncg;
	}
out:
	put_conn(st, c, rc);
	return rc;
}
