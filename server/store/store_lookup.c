/* store_lookup.c - ids of metric names (through the store's cache) and of
 * hosts, for the readers (series, export, cgroup rollups), and which hosts
 * exist (ingest's new-host budget). Calls only store_sql.c. */
#include "store_internal.h"

#include "dict.h"
#include "pgarr.h"

#include <stdio.h>
#include <string.h>

int store_metric_id(struct store *st, PGconn *c, const char *name, int32_t *id, char *err, size_t errlen)
{
	uint32_t did = dict_lookup(name);
	PGresult *r;

	*id = 0;
	if (did) {
		pthread_mutex_lock(&st->mu);
		*id = st->metric_db[did];
		pthread_mutex_unlock(&st->mu);
		if (*id)
			return STORE_OK;
	}
	const char *p[1] = { name };
	int rc = store_q(c, "SELECT id FROM metric_names WHERE name = $1", 1, p, 1, &r,
			 "look up a metric", err, errlen);
	if (rc != STORE_OK)
		return rc;
	if (PQntuples(r) == 1)
		*id = store_get_i32(r, 0, 0);
	PQclear(r);
	return STORE_OK;
}

int store_host_id(PGconn *c, const char *host, int32_t *id, int64_t *last_ts, char *err, size_t errlen)
{
	const char *p[1] = { host };
	PGresult *r;
	int rc = store_q(c, "SELECT id, coalesce(last_ts_ms, 0) FROM hosts WHERE name = $1 AND samples > 0", 1, p, 1, &r,
			 "look up the host", err, errlen);
	if (rc != STORE_OK)
		return rc;
	if (PQntuples(r) != 1) {
		PQclear(r);
		snprintf(err, errlen, "no such host: %s", host);
		return STORE_ENOTFOUND;
	}
	*id = store_get_i32(r, 0, 0);
	if (last_ts)
		*last_ts = store_get_i64(r, 0, 1);
	PQclear(r);
	return STORE_OK;
}

int store_hosts_known(struct store *st, const char *const *names, size_t n, bool *known,
		      char *err, size_t errlen)
{
	struct cbuf arr;
	PGresult *r = NULL;
	int rc;

	for (size_t i = 0; i < n; i++)
		known[i] = false;
	if (!n)
		return STORE_OK;
	cbuf_init(&arr);
	if (arr_begin(&arr) < 0)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (arr_text(&arr, names[i]) < 0)
			goto nomem;
	if (arr_end(&arr) < 0)
		goto nomem;
	PGconn *c = store_conn_get(st);
	if (!c) {
		cbuf_release(&arr);
		snprintf(err, errlen, "database unreachable");
		return STORE_EUNAVAIL;
	}
	const char *p[1] = { (const char *)arr.p };
	rc = store_q(c, "SELECT name FROM hosts WHERE name = ANY($1::text[]) AND samples > 0", 1, p, 0, &r,
		     "look up hosts", err, errlen);
	store_conn_put(st, c, rc == STORE_EUNAVAIL);
	cbuf_release(&arr);
	if (rc != STORE_OK)
		return rc;
	for (int k = 0; k < PQntuples(r); k++)
		for (size_t i = 0; i < n; i++)
			if (strcmp(names[i], PQgetvalue(r, k, 0)) == 0)
				known[i] = true;
	PQclear(r);
	return STORE_OK;
nomem:
	cbuf_release(&arr);
	snprintf(err, errlen, "out of memory");
	return STORE_EINTERNAL;
}
