/* alert_api.c - store_alerts (store.h): GET /api/v1/alerts on a pooled
 * connection; the query itself is alert_store_query. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "alert_store.h"
#include "store.h"

int store_alerts(struct store *st, const struct alert_query *q, json_t **out, char *err, size_t errlen)
{
	PGconn *c = store_read_conn_get(st);
	int rc;

	*out = NULL;
	if (!c) {
		snprintf(err, errlen, "could not connect to the database");
		return STORE_EUNAVAIL;
	}
	if (q->state && strcmp(q->state, "all") != 0 && strcmp(q->state, "open") != 0 &&
	    strcmp(q->state, "resolved") != 0) {
		store_read_conn_put(st, c, false);
		snprintf(err, errlen, "state: expected open, resolved or all");
		return STORE_EINVAL;
	}
	rc = alert_store_query(c, q, out, err, errlen);
	bool broken = rc < 0 && PQstatus(c) != CONNECTION_OK;
	store_read_conn_put(st, c, broken);
	if (rc < 0)
		return broken ? STORE_EUNAVAIL : STORE_EINTERNAL;
	return STORE_OK;
}

int store_alert_kind_stored(struct store *st, const char *kind, bool *yes, char *err, size_t errlen)
{
	PGconn *c = store_read_conn_get(st);
	const char *p[1] = { kind };

	*yes = false;
	if (!c) {
		snprintf(err, errlen, "could not connect to the database");
		return STORE_EUNAVAIL;
	}
	PGresult *r = PQexecParams(c, "SELECT 1 FROM alerts WHERE kind = $1 LIMIT 1", 1, NULL, p, NULL, NULL, 0);
	bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;
	if (ok)
		*yes = PQntuples(r) > 0;
	else
		snprintf(err, errlen, "could not look up the alert kind: %s", PQerrorMessage(c));
	PQclear(r);
	bool broken = !ok && PQstatus(c) != CONNECTION_OK;
	store_read_conn_put(st, c, broken);
	if (!ok)
		return broken ? STORE_EUNAVAIL : STORE_EINTERNAL;
	return STORE_OK;
}
