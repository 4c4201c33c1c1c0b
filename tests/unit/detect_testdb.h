/* detect_testdb.h - a fresh database for the detector tests, with the
 * detectors' migrations (schema/010_*.sql, 011_*.sql) applied.
 *
 * Connects to $VMSCOPE_TEST_DB (a throwaway cluster from scripts/test.sh),
 * creates "vmscope_det_<pid>" and returns a connection to it. FAILS (exit
 * 1) when VMSCOPE_TEST_DB is unset: no silent skip. Run from the source
 * tree's root (scripts/test.sh does). */
#ifndef VMSCOPE_DETECT_TESTDB_H
#define VMSCOPE_DETECT_TESTDB_H

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct det_testdb {
	char name[64];
	char admin[2048];
	char conninfo[2048];
};

static inline int det_testdb_exec(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
	if (!ok)
		fprintf(stderr, "testdb: %.80s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	return ok ? 0 : -1;
}

static inline int det_testdb_admin(const char *admin, const char *sql)
{
	PGconn *c = PQconnectdb(admin);
	int rc = PQstatus(c) == CONNECTION_OK ? det_testdb_exec(c, sql) : -1;
	if (PQstatus(c) != CONNECTION_OK)
		fprintf(stderr, "testdb: could not connect: %s", PQerrorMessage(c));
	PQfinish(c);
	return rc;
}

static inline int det_testdb_apply(PGconn *c, const char *path)
{
	FILE *f = fopen(path, "r");
	static char sql[1 << 16];
	size_t n;

	if (!f) {
		fprintf(stderr, "testdb: could not open %s (run from the source root)\n", path);
		return -1;
	}
	n = fread(sql, 1, sizeof(sql) - 1, f);
	fclose(f);
	sql[n] = '\0';
	return det_testdb_exec(c, sql);
}

/* Returns a connection to a new database with the detector tables. */
static inline PGconn *det_testdb_open(struct det_testdb *db)
{
	const char *base = getenv("VMSCOPE_TEST_DB");
	char sql[160];

	if (!base || !*base) {
		fprintf(stderr, "testdb: VMSCOPE_TEST_DB is not set: this test needs PostgreSQL "
				"(run it through `make test`, or start one with scripts/pg.sh)\n");
		exit(1);
	}
	snprintf(db->admin, sizeof(db->admin), "%s", base);
	snprintf(db->name, sizeof(db->name), "vmscope_det_%ld", (long)getpid());
	/* the same conninfo with another dbname: a later dbname keyword wins */
	snprintf(db->conninfo, sizeof(db->conninfo), "%s dbname=%s", base, db->name);
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", db->name);
	det_testdb_admin(db->admin, sql);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", db->name);
	if (det_testdb_admin(db->admin, sql) < 0)
		exit(1);
	PGconn *c = PQconnectdb(db->conninfo);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "testdb: could not connect to %s: %s", db->name, PQerrorMessage(c));
		exit(1);
	}
	if (det_testdb_apply(c, "schema/010_alerts.sql") < 0 ||
	    det_testdb_apply(c, "schema/011_detector_state.sql") < 0)
		exit(1);
	return c;
}

static inline void det_testdb_drop(struct det_testdb *db)
{
	char sql[160];
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", db->name);
	det_testdb_admin(db->admin, sql);
}

#endif
