/* store_conn.c - lending the store's pooled connections to modules that
 * run their own statements (compare, forget, alerts, silences), so that
 * they need nothing from store.c; and the read API's connections, from
 * the --read-db standby when there is one. */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>

PGconn *store_conn_get(struct store *st)
{
	char err[256];
	return db_pool_get(st->pool, STORE_POOL_WAIT_MS, err, sizeof(err));
}

void store_conn_put(struct store *st, PGconn *conn, bool broken)
{
	db_pool_put(st->pool, conn, broken);
}

PGconn *store_read_get(struct store *st, int *rc, char *err, size_t errlen)
{
	PGconn *c = db_pool_get(st->rpool ? st->rpool : st->pool, STORE_POOL_WAIT_MS, err, errlen);
	*rc = c ? STORE_OK : STORE_EUNAVAIL;
	return c;
}

void store_read_put(struct store *st, PGconn *c, int rc)
{
	db_pool_put(st->rpool ? st->rpool : st->pool, c, rc == STORE_EUNAVAIL);
}

PGconn *store_read_conn_get(struct store *st)
{
	char err[256];
	int rc;
	return store_read_get(st, &rc, err, sizeof(err));
}

void store_read_conn_put(struct store *st, PGconn *conn, bool broken)
{
	store_read_put(st, conn, broken ? STORE_EUNAVAIL : STORE_OK);
}

/* An LSN ("16/B374D848") as a number, 0 when malformed. */
static double lsn_of(const char *s)
{
	unsigned long hi, lo;
	return sscanf(s, "%lx/%lx", &hi, &lo) == 2 ? (double)hi * 4294967296.0 + (double)lo : 0;
}

int store_read_lag(struct store *st, double *seconds, double *bytes, char *err, size_t errlen)
{
	PGresult *r = NULL;
	int rc;

	*seconds = *bytes = 0;
	if (!st->rpool) {
		snprintf(err, errlen, "no --read-db");
		return STORE_EINVAL;
	}
	PGconn *c = store_read_get(st, &rc, err, errlen);
	if (!c)
		return rc;
	rc = store_q(c, "SELECT pg_last_wal_replay_lsn()::text, CASE WHEN pg_last_wal_receive_lsn() = "
		     "pg_last_wal_replay_lsn() THEN 0 ELSE coalesce(extract(epoch FROM now() - "
		     "pg_last_xact_replay_timestamp()), 0) END, pg_is_in_recovery()", 0, NULL, 0, &r,
		     "read the standby's replay position", err, errlen);
	store_read_put(st, c, rc);
	if (rc != STORE_OK)
		return rc;
	if (PQgetvalue(r, 0, 2)[0] != 't' || PQgetisnull(r, 0, 0)) {
		PQclear(r);
		snprintf(err, errlen, "--read-db is not a standby (not in recovery)");
		return STORE_EINVAL;
	}
	double replay = lsn_of(PQgetvalue(r, 0, 0));
	*seconds = strtod(PQgetvalue(r, 0, 1), NULL);
	PQclear(r);
	if (!(c = store_conn_get(st))) {
		snprintf(err, errlen, "could not connect to the database");
		return STORE_EUNAVAIL;
	}
	rc = store_q(c, "SELECT pg_current_wal_lsn()::text", 0, NULL, 0, &r, "read the primary's WAL position", err,
		     errlen);
	store_conn_put(st, c, rc == STORE_EUNAVAIL);
	if (rc != STORE_OK)
		return rc;
	double cur = lsn_of(PQgetvalue(r, 0, 0));
	PQclear(r);
	*bytes = cur > replay ? cur - replay : 0;
	return STORE_OK;
}
