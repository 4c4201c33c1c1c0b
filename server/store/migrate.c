/* migrate.c - versioned schema migrations (see migrate.h). */
#include "migrate.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MIGRATE_LOCK_KEY 0x766d73636f7065LL	/* "vmscope" */
#define MIGRATE_MAX_FILES 1000
#define MIGRATE_MAX_BYTES (4 << 20)

static void pq_err(char *err, size_t errlen, const char *what, PGconn *c, PGresult *r)
{
	const char *m = r ? PQresultErrorMessage(r) : PQerrorMessage(c);
	size_t n = strlen(m);
	while (n && (m[n - 1] == '\n' || m[n - 1] == ' '))
		n--;
	snprintf(err, errlen, "%s: %.*s", what, (int)n, m);
}

/* Runs sql expecting no rows; returns 0 or -1 with err written. */
static int exec_ok(PGconn *c, const char *sql, const char *what, char *err, size_t errlen)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType s = PQresultStatus(r);
	int rc = (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) ? 0 : -1;
	if (rc < 0)
		pq_err(err, errlen, what, c, r);
	PQclear(r);
	return rc;
}

static bool is_migration_name(const char *n)
{
	size_t len = strlen(n);
	return len > 8 && n[0] >= '0' && n[0] <= '9' && n[1] >= '0' && n[1] <= '9' &&
	       n[2] >= '0' && n[2] <= '9' && n[3] == '_' && strcmp(n + len - 4, ".sql") == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists migration file names in dir, sorted. Returns the count or -1. */
static int list_files(const char *dir, char ***out, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	int n = 0;

	*out = NULL;
	if (!d) {
		snprintf(err, errlen, "could not open schema directory %s: %m", dir);
		return -1;
	}
	names = calloc(MIGRATE_MAX_FILES, sizeof(*names));
	if (!names) {
		closedir(d);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d)) && n < MIGRATE_MAX_FILES) {
		if (!is_migration_name(e->d_name))
			continue;
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	*out = names;
	return n;
}

static char *read_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	struct stat stb;

	if (!f) {
		snprintf(err, errlen, "could not open %s: %m", path);
		return NULL;
	}
	if (fstat(fileno(f), &stb) < 0 || stb.st_size > MIGRATE_MAX_BYTES) {
		snprintf(err, errlen, "could not read %s: missing or over %d bytes", path, MIGRATE_MAX_BYTES);
		goto out;
	}
	buf = malloc((size_t)stb.st_size + 1);
	if (!buf || fread(buf, 1, (size_t)stb.st_size, f) != (size_t)stb.st_size) {
		snprintf(err, errlen, "could not read %s", path);
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[stb.st_size] = '\0';
out:
	fclose(f);
	return buf;
}

static int is_applied(PGconn *c, const char *name, char *err, size_t errlen)
{
	const char *p[1] = { name };
	PGresult *r = PQexecParams(c, "SELECT 1 FROM schema_migrations WHERE name = $1", 1, NULL, p,
				   NULL, NULL, 0);
	int rc;
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		pq_err(err, errlen, "could not read schema_migrations", c, r);
		rc = -1;
	} else {
		rc = PQntuples(r) > 0;
	}
	PQclear(r);
	return rc;
}

/* Applies one migration file in a transaction. */
static int apply_one(PGconn *c, const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4096], what[512];
	char *sql;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(sql = read_file(path, err, errlen)))
		return -1;
	snprintf(what, sizeof(what), "could not apply %s", name);
	if (exec_ok(c, "BEGIN", what, err, errlen) < 0)
		goto out;
	if (exec_ok(c, sql, what, err, errlen) < 0)
		goto rollback;
	const char *p[1] = { name };
	PGresult *r = PQexecParams(c, "INSERT INTO schema_migrations (name) VALUES ($1)", 1, NULL, p,
				   NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		pq_err(err, errlen, what, c, r);
		PQclear(r);
		goto rollback;
	}
	PQclear(r);
	rc = exec_ok(c, "COMMIT", what, err, errlen);
	goto out;
rollback:
	PQclear(PQexec(c, "ROLLBACK"));
out:
	free(sql);
	return rc;
}

/* 1 when the database has the citus extension and this node is not its
 * coordinator (a worker: group 0 is the coordinator's), 0 otherwise, -1 on
 * error. */
static int citus_worker(PGconn *c, char *err, size_t errlen)
{
	PGresult *r = PQexec(c, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')");
	int rc;
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		pq_err(err, errlen, "could not look for the citus extension", c, r);
		PQclear(r);
		return -1;
	}
	rc = PQgetvalue(r, 0, 0)[0] == 't';
	PQclear(r);
	if (!rc)
		return 0;
	r = PQexec(c, "SELECT groupid FROM pg_dist_local_group");
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		pq_err(err, errlen, "could not read the Citus node's group", c, r);
		PQclear(r);
		return -1;
	}
	rc = PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "0") != 0;
	PQclear(r);
	return rc;
}

/* Places the tables on Citus when the function exists (096_citus.sql). */
static int distribute(PGconn *c, char *err, size_t errlen)
{
	PGresult *r = PQexec(c, "SELECT to_regproc('vmscope_distribute') IS NOT NULL");
	bool have = PQresultStatus(r) == PGRES_TUPLES_OK && PQgetvalue(r, 0, 0)[0] == 't';
	PQclear(r);
	if (!have)
		return 0;
	return exec_ok(c, "SELECT vmscope_distribute()", "could not distribute the tables over the Citus workers",
		       err, errlen);
}

int migrate_apply(PGconn *c, const char *dir, int *napplied, char *err, size_t errlen)
{
	char **names = NULL;
	char sql[128];
	int n, applied = 0, rc = -1;

	if (napplied)
		*napplied = 0;
	if ((n = list_files(dir, &names, err, errlen)) < 0)
		return -1;
	if (n == 0) {
		snprintf(err, errlen, "could not find migrations (NNN_name.sql) in %s", dir);
		goto out;
	}
	int w = citus_worker(c, err, errlen);
	if (w != 0) {
		if (w > 0) {
			snprintf(err, errlen, "this database is a Citus worker node: point --db at the "
				 "coordinator, which holds the schema and routes every query to the workers");
			rc = MIGRATE_WRONG_NODE;
		}
		goto out;
	}
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_lock(%lld)", MIGRATE_LOCK_KEY);
	if (exec_ok(c, sql, "could not take the migration lock", err, errlen) < 0)
		goto out;
	if (exec_ok(c, "SET client_min_messages = warning", "could not set up migrations", err, errlen) < 0 ||
	    exec_ok(c, "CREATE TABLE IF NOT EXISTS schema_migrations ("
		    "name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
		    "could not create schema_migrations", err, errlen) < 0)
		goto unlock;
	for (int i = 0; i < n; i++) {
		int a = is_applied(c, names[i], err, errlen);
		if (a < 0)
			goto unlock;
		if (a)
			continue;
		if (apply_one(c, dir, names[i], err, errlen) < 0)
			goto unlock;
		applied++;
	}
	if (distribute(c, err, errlen) < 0)
		goto unlock;
	rc = 0;
unlock:
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_unlock(%lld)", MIGRATE_LOCK_KEY);
	PQclear(PQexec(c, sql));
	PQclear(PQexec(c, "RESET client_min_messages"));
out:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (napplied)
		*napplied = applied;
	return rc;
}
