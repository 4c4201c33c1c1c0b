/* db_pool.h - a fixed-size pool of libpq connections.
 *
 * Connections are opened lazily and reopened when they broke, so a database
 * that was down at start or restarted later is picked up again without a
 * server restart. db_pool_get blocks while every connection is lent out, up
 * to a timeout, so a burst of requests queues instead of opening more
 * connections than PostgreSQL allows. Thread-safe.
 */
#ifndef VMSCOPE_DB_POOL_H
#define VMSCOPE_DB_POOL_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

struct db_pool;

/* A pool of size connections to conninfo (copied). Opens none yet. NULL
 * when out of memory. Free with db_pool_free once every connection is back. */
struct db_pool *db_pool_new(const char *conninfo, int size);
void db_pool_free(struct db_pool *p);

/* Lends a connection that was healthy when last used (reconnecting a
 * broken or unopened one). Returns NULL with err written when no
 * connection was free within timeout_ms or the database is unreachable. */
PGconn *db_pool_get(struct db_pool *p, int timeout_ms, char *err, size_t errlen);

/* Gives a connection back. broken: a query failed in a way that may have
 * left the connection unusable; it is closed and reopened on a later get.
 * A connection whose status is bad is treated as broken anyway, and one
 * left inside a transaction is rolled back. Giving back a broken one also
 * closes the idle ones (after a server restart they are dead too). */
void db_pool_put(struct db_pool *p, PGconn *c, bool broken);

/* Opens one connection outside any pool (migrations, tests): conninfo may
 * be a keyword string or a URI; a 5 s connect timeout applies unless it
 * sets its own. Returns NULL with err written on failure. */
PGconn *db_connect(const char *conninfo, char *err, size_t errlen);

#endif
