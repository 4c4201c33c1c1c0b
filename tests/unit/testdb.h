/* testdb.h - a fresh, uniquely named database per test program.
 *
 * testdb_create connects to $VMSCOPE_TEST_DB (set by scripts/test.sh to a
 * throwaway cluster), creates "vmscope_t_<pid>_<n>" and returns its
 * conninfo; testdb_drop removes it again. A test needing PostgreSQL FAILS
 * when VMSCOPE_TEST_DB is unset (house rule: no silent skips): testdb_create
 * prints why and exits with status 1.
 */
#ifndef VMSCOPE_TESTDB_H
#define VMSCOPE_TESTDB_H

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct testdb {
	char name[64];
	char conninfo[2048];	/* of the new database */
	char admin[2048];	/* of $VMSCOPE_TEST_DB, to drop it */
};

/* Rebuilds conninfo (keyword string or URI) with dbname replaced. */
static inline int testdb_with_dbname(const char *conninfo, const char *dbname, char *out, size_t cap)
{
	char *perr = NULL;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &perr);
	size_t len = 0;

	if (!opts) {
		fprintf(stderr, "testdb: bad VMSCOPE_TEST_DB: %s\n", perr ? perr : "?");
		PQfreemem(perr);
		return -1;
	}
	out[0] = '\0';
	for (PQconninfoOption *o = opts; o->keyword; o++) {
		const char *v = strcmp(o->keyword, "dbname") == 0 ? dbname : o->val;
		if (!v)
			continue;
		int n = snprintf(out + len, cap - len, "%s%s='", len ? " " : "", o->keyword);
		if (n < 0 || (size_t)n >= cap - len)
			goto toolong;
		len += (size_t)n;
		for (const char *p = v; *p; p++) {
			if (len + 3 >= cap)
				goto toolong;
			if (*p == '\'' || *p == '\\')
				out[len++] = '\\';
			out[len++] = *p;
		}
		out[len++] = '\'';
		out[len] = '\0';
	}
	PQconninfoFree(opts);
	return 0;
toolong:
	PQconninfoFree(opts);
	fprintf(stderr, "testdb: conninfo too long\n");
	return -1;
}

static inline int testdb_admin_exec(const char *admin, const char *sql)
{
	PGconn *c = PQconnectdb(admin);
	int rc = -1;

	PQclear(PQexec(c, "SET client_min_messages = warning"));
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "testdb: could not connect: %s", PQerrorMessage(c));
	} else {
		PGresult *r = PQexec(c, sql);
		if (PQresultStatus(r) == PGRES_COMMAND_OK)
			rc = 0;
		else
			fprintf(stderr, "testdb: %s: %s", sql, PQresultErrorMessage(r));
		PQclear(r);
	}
	PQfinish(c);
	return rc;
}

/* Creates a fresh database; exits(1) when VMSCOPE_TEST_DB is unset or the
 * database cannot be created. */
static inline void testdb_create(struct testdb *db)
{
	static int seq;
	const char *base = getenv("VMSCOPE_TEST_DB");
	char sql[128];

	if (!base || !*base) {
		fprintf(stderr, "testdb: VMSCOPE_TEST_DB is not set: this test needs PostgreSQL "
			"(run it through `make test`, or start one with scripts/pg.sh)\n");
		exit(1);
	}
	snprintf(db->admin, sizeof(db->admin), "%s", base);
	snprintf(db->name, sizeof(db->name), "vmscope_t_%ld_%d", (long)getpid(), seq++);
	if (testdb_with_dbname(base, db->name, db->conninfo, sizeof(db->conninfo)) < 0)
		exit(1);
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", db->name);
	testdb_admin_exec(db->admin, sql);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", db->name);
	if (testdb_admin_exec(db->admin, sql) < 0)
		exit(1);
}

/* Drops the database (closing any connection still open to it). */
static inline void testdb_drop(struct testdb *db)
{
	char sql[128];
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", db->name);
	testdb_admin_exec(db->admin, sql);
}

#endif
