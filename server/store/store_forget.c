/* store_forget.c - forgetting a host in one transaction (see store_forget.h). */
#include "store_forget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overrides_store.h"
#include "store_internal.h"

/* Runs a DELETE with parameters; *count receives the rows removed. */
static int del(PGconn *c, const char *sql, const char *param, int64_t *count, const char *what,
	       char *err, size_t errlen)
{
	const char *p[1] = { param };
	PGresult *r = NULL;
	int rc = store_q(c, sql, 1, p, 0, &r, what, err, errlen);

	if (rc == STORE_OK) {
		*count = strtoll(PQcmdTuples(r), NULL, 10);
		PQclear(r);
	}
	return rc;
}

int store_forget_host(struct store *st, const char *host, struct forget_counts *n, char *err,
		      size_t errlen)
{
	PGconn *c = store_conn_get(st);
	PGresult *r = NULL;
	int64_t dummy = 0;
	char hid[16];
	int rc;

	memset(n, 0, sizeof(*n));
	if (!c) {
		snprintf(err, errlen, "could not connect to the database");
		return STORE_EUNAVAIL;
	}
	int32_t id;
	if ((rc = store_host_key(c, host, &id, err, errlen)) != STORE_OK)
		goto out;
	snprintf(hid, sizeof(hid), "%d", id);
	const char *ip[1] = { hid };
	/* the host's row locked (one shard on Citus): its ingest waits */
	rc = store_q_begin(c, "SELECT id FROM hosts WHERE id = $1::int FOR UPDATE", 1, ip, 0, &r,
			   "lock host", err, errlen);
	if (rc != STORE_OK)
		goto out;
	PQclear(r);
	if ((rc = del(c, "DELETE FROM detector_state WHERE host_id = $1::int", hid, &dummy,
		      "delete detector state", err, errlen)) != STORE_OK ||
	    (rc = del(c, "DELETE FROM samples WHERE host_id = $1::int", hid, &n->samples,
		      "delete samples", err, errlen)) != STORE_OK ||
	    (rc = del(c, "DELETE FROM rollup_5m WHERE host_id = $1::int", hid, &n->rollups,
		      "delete rollups", err, errlen)) != STORE_OK ||
	    (rc = del(c, "DELETE FROM notify_outbox WHERE host_id = $1::int", hid, &dummy,
		      "delete notifications", err, errlen)) != STORE_OK ||
	    (rc = del(c, "DELETE FROM alerts WHERE host_id = $1::int", hid, &n->alerts,
		      "delete alerts", err, errlen)) != STORE_OK ||
	    (rc = del(c, "DELETE FROM cgroups WHERE host_id = $1::int", hid, &n->cgroups,
		      "delete cgroups", err, errlen)) != STORE_OK ||
	    (rc = del(c, "DELETE FROM host_meta WHERE host_id = $1::int", hid, &n->meta,
		      "delete host history", err, errlen)) != STORE_OK ||
	    (rc = del(c, "DELETE FROM detector_overrides WHERE host = $1", host, &n->overrides,
		      "delete overrides", err, errlen)) != STORE_OK ||
	    (n->overrides && (rc = store_q(c, OVR_BUMP_SQL, 0, NULL, 0, NULL, "move the overrides version",
					   err, errlen)) != STORE_OK) ||
	    (rc = del(c, "DELETE FROM hosts WHERE id = $1::int", hid, &dummy,
		      "delete host", err, errlen)) != STORE_OK ||
	    (rc = del(c, "DELETE FROM host_names WHERE name = $1", host, &dummy,
		      "delete the host's name", err, errlen)) != STORE_OK)
		goto out;
	rc = store_q(c, "COMMIT", 0, NULL, 0, NULL, "commit", err, errlen);
	if (rc == STORE_OK)	/* this server's memory of rows that are gone */
		owntab_forget(st->own, host, st->hook.release, st->hook.ctx);
out:
	if (rc != STORE_OK && PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) != PQTRANS_IDLE)
		PQclear(PQexec(c, "ROLLBACK"));
	store_conn_put(st, c, PQstatus(c) != CONNECTION_OK);
	return rc;
}
