/* store_partition.c - the samples table's day partitions: created on
 * demand (serialised across servers with an advisory lock) and remembered
 * in the store's sorted day cache. Below the writers (store_put.c) and the
 * store's lifecycle (store.c); calls only store_sql.c. */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void partition_name(int64_t day, char *buf, size_t cap)
{
	time_t t = (time_t)(day * 86400);
	struct tm tm;
	gmtime_r(&t, &tm);
	snprintf(buf, cap, "samples_%04d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

/* Day number of a partition name, or INT64_MIN when not one of ours. */
static int64_t partition_day(const char *name)
{
	int y, m, d;
	char tail;
	if (sscanf(name, "samples_%4d%2d%2d%c", &y, &m, &d, &tail) != 3)
		return INT64_MIN;
	struct tm tm = { .tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d };
	time_t t = timegm(&tm);
	return t == (time_t)-1 ? INT64_MIN : (int64_t)t / 86400;
}

static bool day_known_locked(const struct store *st, int64_t day)
{
	size_t lo = 0, hi = st->ndays;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (st->days[mid] == day)
			return true;
		if (st->days[mid] < day)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static void day_add_locked(struct store *st, int64_t day)
{
	if (day_known_locked(st, day))
		return;
	if (st->ndays == st->capdays) {
		size_t ncap = st->capdays ? st->capdays * 2 : 64;
		int64_t *nd = realloc(st->days, ncap * sizeof(*nd));
		if (!nd)
			return;	/* only a cache: the partition is checked again next time */
		st->days = nd;
		st->capdays = ncap;
	}
	size_t i = st->ndays;
	while (i > 0 && st->days[i - 1] > day) {
		st->days[i] = st->days[i - 1];
		i--;
	}
	st->days[i] = day;
	st->ndays++;
}

int store_ensure_partitions(struct store *st, PGconn *c, const int64_t *days, size_t n,
			    char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		pthread_mutex_lock(&st->mu);
		bool known = day_known_locked(st, days[i]);
		pthread_mutex_unlock(&st->mu);
		if (known)
			continue;
		char name[64], sql[512];
		partition_name(days[i], name, sizeof(name));
		/* serialised with other servers creating the same partition:
		 * IF NOT EXISTS alone races */
		snprintf(sql, sizeof(sql),
			 "DO $$BEGIN PERFORM set_config('lock_timeout', '10s', true); "
			 "PERFORM pg_advisory_xact_lock(7666); "
			 "IF to_regclass('%s') IS NULL THEN "
			 "CREATE TABLE %s PARTITION OF samples FOR VALUES FROM (%lld) TO (%lld); "
			 "END IF; END$$",
			 name, name, (long long)(days[i] * STORE_DAY_MS),
			 (long long)((days[i] + 1) * STORE_DAY_MS));
		int rc = store_q(c, sql, 0, NULL, 0, NULL, "create a partition", err, errlen);
		if (rc != STORE_OK)
			return rc;
		pthread_mutex_lock(&st->mu);
		day_add_locked(st, days[i]);
		pthread_mutex_unlock(&st->mu);
	}
	return STORE_OK;
}

int store_drop_partitions_before(struct store *st, PGconn *c, int64_t cutoff, int *ndropped,
				 char *err, size_t errlen)
{
	PGresult *r = NULL;
	int rc;

	rc = store_q(c, "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
		     "WHERE i.inhparent = 'samples'::regclass", 0, NULL, 0, &r, "list partitions", err, errlen);
	if (rc != STORE_OK)
		return rc;
	for (int i = 0; i < PQntuples(r); i++) {
		const char *name = PQgetvalue(r, i, 0);
		int64_t day = partition_day(name);
		if (day == INT64_MIN || (day + 1) * STORE_DAY_MS > cutoff)
			continue;
		char sql[128];
		snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", name);
		if ((rc = store_q(c, sql, 0, NULL, 0, NULL, "drop an expired partition", err, errlen)) != STORE_OK)
			break;
		pthread_mutex_lock(&st->mu);
		for (size_t k = 0; k < st->ndays; k++) {
			if (st->days[k] == day) {
				memmove(st->days + k, st->days + k + 1, (st->ndays - k - 1) * sizeof(*st->days));
				st->ndays--;
				break;
			}
		}
		pthread_mutex_unlock(&st->mu);
		(*ndropped)++;
	}
	PQclear(r);
	return rc;
}
