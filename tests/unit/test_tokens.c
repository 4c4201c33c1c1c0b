/* test_tokens.c - hashed ingest tokens (server/auth/tokens.c) and the TLS PEM
 * loader (server/http/tls.c): SHA-256 against known vectors, static tokens
 * found by hash, the table consulted with its cache (a row added shows up
 * only after TOKENS_CACHE_MS, a revoked one disappears), and PEM files
 * refused when they are not what the flag says. Needs VMSCOPE_TEST_DB. */
#include "harness.h"
#include "testdb.h"
#include "tls.h"
#include "tokens.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

static void test_sha256(void)
{
	char hex[TOKENS_HEX_LEN + 1];

	tokens_sha256_hex("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	tokens_sha256_hex("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

	unsigned char a[TOKENS_HASH_LEN], b[TOKENS_HASH_LEN];
	memset(a, 7, sizeof(a));
	memcpy(b, a, sizeof(b));
	CHECK(tokens_hash_equal(a, b));
	b[TOKENS_HASH_LEN - 1] ^= 1;
	CHECK(!tokens_hash_equal(a, b));
	b[TOKENS_HASH_LEN - 1] ^= 1;
	b[0] ^= 0x80;
	CHECK(!tokens_hash_equal(a, b));
}

static void test_statics(void)
{
	char *list[] = { "first-token-1", "second-token-2" };
	struct tokens *t = tokens_new(list, 2, NULL);

	CHECK(t != NULL);
	CHECK_INT(tokens_check(t, "first-token-1", 13, 0), 0);
	CHECK_INT(tokens_check(t, "second-token-2", 14, 0), 1);
	CHECK_INT(tokens_check(t, "second-token-", 13, 0), -1);
	CHECK_INT(tokens_check(t, "second-token-22", 15, 0), -1);
	CHECK_INT(tokens_check(t, "", 0, 0), -1);
	CHECK(tokens_nkeys() > TOKENS_DB_KEY0);
	tokens_free(t);
}

static int exec_ok(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK;

	if (!ok)
		fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	return ok;
}

static void test_table(void)
{
	struct testdb db;
	char hex[TOKENS_HEX_LEN + 1], sql[512];
	PGconn *c;

	testdb_create(&db);
	c = PQconnectdb(db.conninfo);
	CHECK(PQstatus(c) == CONNECTION_OK);
	char *list[] = { "static-token-0" };
	struct tokens *t = tokens_new(list, 1, db.conninfo);

	/* before the migration: no table, static tokens still work */
	CHECK_INT(tokens_check(t, "table-token-1", 13, 1000), -1);
	CHECK_INT(tokens_check(t, "static-token-0", 14, 1000), 0);
	CHECK(exec_ok(c, "CREATE TABLE ingest_tokens (name text PRIMARY KEY, sha256 text NOT NULL, "
			 "created_at timestamptz NOT NULL DEFAULT now(), revoked_at timestamptz)"));
	tokens_sha256_hex("table-token-1", 13, hex);
	snprintf(sql, sizeof(sql), "INSERT INTO ingest_tokens (name, sha256) VALUES ('one', '%s')", hex);
	CHECK(exec_ok(c, sql));
	/* the copy is fresh for TOKENS_CACHE_MS: not seen yet, then seen */
	CHECK_INT(tokens_check(t, "table-token-1", 13, 1000 + TOKENS_CACHE_MS - 1), -1);
	CHECK_INT(tokens_check(t, "table-token-1", 13, 1000 + TOKENS_CACHE_MS), TOKENS_DB_KEY0);
	CHECK_INT(tokens_check(t, "table-token-", 12, 1000 + TOKENS_CACHE_MS), -1);
	/* revoked: gone after the next refresh */
	CHECK(exec_ok(c, "UPDATE ingest_tokens SET revoked_at = now()"));
	CHECK_INT(tokens_check(t, "table-token-1", 13, 1000 + TOKENS_CACHE_MS + 1), TOKENS_DB_KEY0);
	CHECK_INT(tokens_check(t, "table-token-1", 13, 1000 + 2 * TOKENS_CACHE_MS), -1);
	/* a clock that went back refreshes rather than trusting the copy */
	CHECK(exec_ok(c, "UPDATE ingest_tokens SET revoked_at = NULL"));
	CHECK_INT(tokens_check(t, "table-token-1", 13, 10), TOKENS_DB_KEY0);
	/* a garbage hash in the table is ignored, not fatal */
	CHECK(exec_ok(c, "INSERT INTO ingest_tokens (name, sha256) VALUES ('bad', 'XYZ')"));
	CHECK_INT(tokens_check(t, "table-token-1", 13, 10 + TOKENS_CACHE_MS), TOKENS_DB_KEY0);
	/* scopes (093_token_scopes.sql): the grant carries the row's name,
	 * host patterns and new-host budget; a table without the columns
	 * (above) gave unscoped grants */
	struct token_grant g;
	CHECK_INT(tokens_check_grant(t, "table-token-1", 13, 10 + TOKENS_CACHE_MS, &g), TOKENS_DB_KEY0);
	CHECK_STR(g.name, "one");
	CHECK_STR(g.hosts, "");
	CHECK_INT(g.new_hosts_per_hour, 0);
	CHECK(exec_ok(c, "ALTER TABLE ingest_tokens ADD COLUMN hosts text, ADD COLUMN new_hosts_per_hour integer"));
	CHECK(exec_ok(c, "UPDATE ingest_tokens SET hosts = 'web-*,db-0?', new_hosts_per_hour = 7 "
			 "WHERE name = 'one'"));
	tokens_sha256_hex("table-token-2", 13, hex);
	snprintf(sql, sizeof(sql), "INSERT INTO ingest_tokens (name, sha256, hosts) VALUES ('two', '%s', 'a/b')", hex);
	CHECK(exec_ok(c, sql));
	CHECK_INT(tokens_check_grant(t, "table-token-1", 13, 10 + 2 * TOKENS_CACHE_MS, &g), TOKENS_DB_KEY0);
	CHECK_STR(g.hosts, "web-*,db-0?");
	CHECK_INT(g.new_hosts_per_hour, 7);
	/* a row whose patterns this build cannot read grants nothing */
	CHECK_INT(tokens_check(t, "table-token-2", 13, 10 + 2 * TOKENS_CACHE_MS), -1);
	/* static tokens are named by their place */
	CHECK_INT(tokens_check_grant(t, "static-token-0", 14, 10 + 2 * TOKENS_CACHE_MS, &g), 0);
	CHECK_STR(g.name, "--token #1");
	CHECK_STR(g.hosts, "");
	tokens_free(t);
	PQfinish(c);
	testdb_drop(&db);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_tls_load(void)
{
	struct tls_pem pem;
	char err[512], dir[] = "/tmp/vmscope-tls-XXXXXX", cert[64], key[64];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(cert, sizeof(cert), "%s/c.pem", dir);
	snprintf(key, sizeof(key), "%s/k.pem", dir);
	write_file(cert, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
	write_file(key, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
	CHECK_INT(tls_load(&pem, cert, key, err, sizeof(err)), 0);
	CHECK(pem.cert && strstr(pem.cert, "BEGIN CERTIFICATE"));
	tls_pem_release(&pem);
	CHECK(pem.cert == NULL && pem.key == NULL);
	/* swapped: each file is checked for its own kind */
	CHECK_INT(tls_load(&pem, key, cert, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--tls-cert");
	CHECK_INT(tls_load(&pem, cert, "/nonexistent/k.pem", err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--tls-key /nonexistent/k.pem");
	write_file(key, "not pem at all");
	CHECK_INT(tls_load(&pem, cert, key, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "not a PEM file");
	unlink(cert);
	unlink(key);
	rmdir(dir);
}

int main(void)
{
	test_sha256();
	test_statics();
	test_table();
	test_tls_load();
	return harness_report("test_tokens");
}
