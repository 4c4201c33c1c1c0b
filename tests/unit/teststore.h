/* teststore.h - the store helpers the storage tests share: open a store
 * on a test database, read one integer back with plain SQL, store samples.
 * Each prints the store's or PostgreSQL's message on failure so the
 * test's own check says what went wrong. Header-only like testdb.h. */
#ifndef VMSCOPE_TESTSTORE_H
#define VMSCOPE_TESTSTORE_H

#include "sample.h"
#include "store.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>

/* A store with a pool of 2 on conninfo; NULL (message printed) on failure.
 * The caller closes it. */
static inline struct store *teststore_open(const char *conninfo, int retention, int rollup_retention)
{
	struct store_config cfg = { .conninfo = conninfo, .pool_size = 2, .retention_days = retention,
				    .rollup_retention_days = rollup_retention };
	char err[512];
	struct store *st = NULL;
	if (store_open(&st, &cfg, err, sizeof(err)) != STORE_OK)
		fprintf(stderr, "store_open: %s\n", err);
	return st;
}

/* The first column of the first row of sql as an integer; -1 when there
 * is none, it is NULL or the query failed. */
static inline long long teststore_q1(const char *conninfo, const char *sql)
{
	PGconn *c = PQconnectdb(conninfo);
	long long v = -1;
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	else if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fprintf(stderr, "q1: %s", PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	return v;
}

/* store_put_samples without a hook; returns its status. */
static inline int teststore_put(struct store *st, struct sample *s, size_t n)
{
	char err[512];
	size_t f = 0;
	int rc = store_put_samples(st, s, n, &f, err, sizeof(err));
	if (rc != STORE_OK)
		fprintf(stderr, "put: %s\n", err);
	return rc;
}

/* Writes every owned host's checkpoint now (rollups included). */
static inline int teststore_checkpoint(struct store *st)
{
	char err[512];
	int n = 0;
	int rc = store_checkpoint(st, true, &n, err, sizeof(err));
	if (rc != STORE_OK)
		fprintf(stderr, "checkpoint: %s\n", err);
	return rc;
}

/* teststore_put, then the checkpoint that brings the rollups to the table
 * (readers of rollup_5m see what the owning server checkpointed). */
static inline int teststore_put_ckpt(struct store *st, struct sample *s, size_t n)
{
	int rc = teststore_put(st, s, n);
	return rc == STORE_OK ? teststore_checkpoint(st) : rc;
}

#endif
