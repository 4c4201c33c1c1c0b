/* store_conn.c - lending the store's pooled connections to modules that
 * run their own statements (compare, forget, alerts, silences), so that
 * they need nothing from store.c. */
#include "store_internal.h"

PGconn *store_conn_get(struct store *st)
{
	char err[256];
	return db_pool_get(st->pool, STORE_POOL_WAIT_MS, err, sizeof(err));
}

void store_conn_put(struct store *st, PGconn *conn, bool broken)
{
	db_pool_put(st->pool, conn, broken);
}
