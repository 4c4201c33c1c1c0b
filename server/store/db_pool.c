/* db_pool.c - fixed-size libpq connection pool (see db_pool.h). */
#include "db_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct slot {
	PGconn *c;
	bool busy;
};

struct db_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *conninfo;
	int size;
	struct slot *slots;
};

/* libpq error text ends with a newline; copy without it. */
static void copy_pq_error(char *err, size_t errlen, const char *what, const char *msg)
{
	if (!err || !errlen)
		return;
	size_t n = msg ? strlen(msg) : 0;
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	snprintf(err, errlen, "%s: %.*s", what, (int)n, msg ? msg : "");
}

PGconn *db_connect(const char *conninfo, char *err, size_t errlen)
{
	/* later keywords override what conninfo (expanded as dbname) sets, so
	 * only add connect_timeout when conninfo has none of its own */
	const char *keys[4] = { "dbname", NULL, NULL, NULL };
	const char *vals[4] = { conninfo, NULL, NULL, NULL };
	int k = 1;

	if (!strstr(conninfo, "connect_timeout")) {
		keys[k] = "connect_timeout";
		vals[k++] = "5";
	}
	if (!strstr(conninfo, "application_name")) {
		keys[k] = "application_name";
		vals[k++] = "vmscope-server";
	}
	PGconn *c = PQconnectdbParams(keys, vals, 1);
	if (!c) {
		snprintf(err, errlen, "could not connect to the database: out of memory");
		return NULL;
	}
	if (PQstatus(c) != CONNECTION_OK) {
		copy_pq_error(err, errlen, "could not connect to the database", PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	return c;
}

/* Pooled connections serve requests: a query stuck behind a lock must
 * not hold one forever. */
static PGconn *pool_connect(const char *conninfo, char *err, size_t errlen)
{
	PGconn *c = db_connect(conninfo, err, errlen);
	if (!c)
		return NULL;
	PGresult *r = PQexec(c, "SET statement_timeout = '60s'");
	bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	PQclear(r);
	if (!ok) {
		copy_pq_error(err, errlen, "could not set up a database connection", PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	return c;
}

struct db_pool *db_pool_new(const char *conninfo, int size)
{
	struct db_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (size < 1)
		size = 1;
	p->size = size;
	p->conninfo = strdup(conninfo);
	p->slots = calloc((size_t)size, sizeof(*p->slots));
	if (!p->conninfo || !p->slots) {
		free(p->conninfo);
		free(p->slots);
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	return p;
}

void db_pool_free(struct db_pool *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->size; i++)
		if (p->slots[i].c)
			PQfinish(p->slots[i].c);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->slots);
	free(p->conninfo);
	free(p);
}

/* Reserves a free slot, preferring one with an open connection. Returns
 * its index or -1 on timeout. Called with the mutex held. */
static int reserve(struct db_pool *p, const struct timespec *deadline)
{
	for (;;) {
		int pick = -1;
		for (int i = 0; i < p->size; i++) {
			if (p->slots[i].busy)
				continue;
			if (p->slots[i].c) {
				pick = i;
				break;
			}
			if (pick < 0)
				pick = i;
		}
		if (pick >= 0) {
			p->slots[pick].busy = true;
			return pick;
		}
		if (pthread_cond_timedwait(&p->cv, &p->mu, deadline) == ETIMEDOUT)
			return -1;
	}
}

PGconn *db_pool_get(struct db_pool *p, int timeout_ms, char *err, size_t errlen)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->mu);
	int i = reserve(p, &deadline);
	PGconn *c = i >= 0 ? p->slots[i].c : NULL;
	pthread_mutex_unlock(&p->mu);
	if (i < 0) {
		snprintf(err, errlen, "could not get a database connection: all %d busy for %d ms",
			 p->size, timeout_ms);
		return NULL;
	}
	/* connect outside the lock: it can take up to connect_timeout */
	if (c && PQstatus(c) != CONNECTION_OK) {
		/* a fresh connection rather than PQreset: session settings too */
		PQfinish(c);
		c = NULL;
	}
	if (!c && !(c = pool_connect(p->conninfo, err, errlen)))
		goto fail;
	pthread_mutex_lock(&p->mu);
	p->slots[i].c = c;
	pthread_mutex_unlock(&p->mu);
	return c;
fail:
	pthread_mutex_lock(&p->mu);
	p->slots[i].c = NULL;
	p->slots[i].busy = false;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void db_pool_put(struct db_pool *p, PGconn *c, bool broken)
{
	if (!c)
		return;
	if (!broken && PQstatus(c) != CONNECTION_OK)
		broken = true;
	if (!broken && PQtransactionStatus(c) != PQTRANS_IDLE) {
		PGresult *r = PQexec(c, "ROLLBACK");
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			broken = true;
		PQclear(r);
	}
	/* a broken connection usually means the server restarted: the idle
	 * ones are dead too, so they are reopened on their next use rather
	 * than failing a request each */
	pthread_mutex_lock(&p->mu);
	for (int i = 0; i < p->size; i++) {
		struct slot *sl = &p->slots[i];
		if (sl->c == c) {
			if (broken) {
				PQfinish(c);
				sl->c = NULL;
			}
			sl->busy = false;
		} else if (broken && sl->c && !sl->busy) {
			PQfinish(sl->c);
			sl->c = NULL;
		}
	}
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}
