/* tokens.c - hashed ingest tokens from the configuration and from the
 * ingest_tokens table, with a short-lived copy of the table (see tokens.h). */
#include "tokens.h"

#include "log.h"

#include <libpq-fe.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Known tokens: hash i belongs to grant i. */
struct hashes {
	unsigned char (*h)[TOKENS_HASH_LEN];	/* owned */
	struct token_grant *g;			/* owned, n of them */
	size_t n;
};

static void hashes_release(struct hashes *hs)
{
	free(hs->h);
	free(hs->g);
	hs->h = NULL;
	hs->g = NULL;
	hs->n = 0;
}

/* Room for n tokens in hs (empty); -1 when out of memory. */
static int hashes_alloc(struct hashes *hs, size_t n)
{
	hs->n = 0;
	hs->h = n ? calloc(n, sizeof(*hs->h)) : NULL;
	hs->g = n ? calloc(n, sizeof(*hs->g)) : NULL;
	if (n && (!hs->h || !hs->g)) {
		hashes_release(hs);
		return -1;
	}
	return 0;
}

/* One thread at a time refreshes the table copy, outside any lock the
 * other requests wait for: they keep checking against the previous copy
 * meanwhile, so a slow or unreachable database never stalls ingest here. */
struct tokens {
	struct hashes statics;		/* immutable after tokens_new */
	char *conninfo;			/* owned; NULL: no table */
	pthread_rwlock_t rw;		/* guards db */
	struct hashes db;		/* the table's unrevoked tokens */
	pthread_mutex_t mu;		/* guards the three below */
	int64_t db_at_ms;		/* when db was last refreshed (or tried) */
	bool db_tried;
	bool refreshing;		/* a thread is in refresh(); it owns conn */
	PGconn *conn;			/* owned; used only by the refreshing thread */
};

static void sha256(const char *s, size_t n, unsigned char out[TOKENS_HASH_LEN])
{
	struct sha256_ctx ctx;

	sha256_init(&ctx);
	sha256_update(&ctx, n, (const uint8_t *)s);
	sha256_digest(&ctx, TOKENS_HASH_LEN, out);
}

void tokens_sha256_hex(const char *s, size_t n, char hex[TOKENS_HEX_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char h[TOKENS_HASH_LEN];

	sha256(s, n, h);
	for (size_t i = 0; i < TOKENS_HASH_LEN; i++) {
		hex[2 * i] = digits[h[i] >> 4];
		hex[2 * i + 1] = digits[h[i] & 15];
	}
	hex[TOKENS_HEX_LEN] = '\0';
}

bool tokens_hash_equal(const unsigned char *a, const unsigned char *b)
{
	volatile unsigned char diff = 0;

	for (size_t i = 0; i < TOKENS_HASH_LEN; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

static int unhex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Parses 64 lowercase hex digits. Returns 0 or -1. */
static int parse_hex(const char *s, unsigned char out[TOKENS_HASH_LEN])
{
	if (strlen(s) != TOKENS_HEX_LEN)
		return -1;
	for (size_t i = 0; i < TOKENS_HASH_LEN; i++) {
		int hi = unhex(s[2 * i]), lo = unhex(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

struct tokens *tokens_new_defs(const struct token_def *defs, size_t n, const char *conninfo)
{
	struct tokens *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->mu, NULL);
	pthread_rwlock_init(&t->rw, NULL);
	if (hashes_alloc(&t->statics, n) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		struct token_grant *g = &t->statics.g[i];
		sha256(defs[i].token, strlen(defs[i].token), t->statics.h[i]);
		g->key = (int)i;
		if (defs[i].name)
			snprintf(g->name, sizeof(g->name), "%s", defs[i].name);
		else
			snprintf(g->name, sizeof(g->name), "--token #%zu", i + 1);
		snprintf(g->hosts, sizeof(g->hosts), "%s", defs[i].hosts ? defs[i].hosts : "");
		g->new_hosts_per_hour = defs[i].new_hosts_per_hour;
	}
	t->statics.n = n;
	if (conninfo && !(t->conninfo = strdup(conninfo)))
		goto fail;
	return t;
fail:
	tokens_free(t);
	return NULL;
}

struct tokens *tokens_new(char *const *statics, size_t n, const char *conninfo)
{
	struct token_def *defs = n ? calloc(n, sizeof(*defs)) : NULL;

	if (n && !defs)
		return NULL;
	for (size_t i = 0; i < n; i++)
		defs[i].token = statics[i];
	struct tokens *t = tokens_new_defs(defs, n, conninfo);
	free(defs);
	return t;
}

void tokens_free(struct tokens *t)
{
	if (!t)
		return;
	if (t->conn)
		PQfinish(t->conn);
	hashes_release(&t->statics);
	hashes_release(&t->db);
	free(t->conninfo);
	pthread_mutex_destroy(&t->mu);
	pthread_rwlock_destroy(&t->rw);
	free(t);
}

size_t tokens_nkeys(void)
{
	return TOKENS_DB_KEY0 + TOKENS_DB_MAX;
}

/* Re-reads the table into t->db; called by the one refreshing thread,
 * without t->mu. On a database
 * error the previous copy stays (a table that cannot be read revokes
 * nothing and adds nothing) and the error is logged. */
static void refresh(struct tokens *t)
{
	PGresult *r;
	struct hashes fresh = { NULL, NULL, 0 };

	if (!t->conn || PQstatus(t->conn) != CONNECTION_OK) {
		if (t->conn)
			PQreset(t->conn);
		else
			t->conn = PQconnectdb(t->conninfo);
		if (!t->conn || PQstatus(t->conn) != CONNECTION_OK) {
			log_warn("ingest tokens: database unreachable, using the last copy: %s",
				 t->conn ? PQerrorMessage(t->conn) : "out of memory");
			return;
		}
	}
	/* before the scope columns exist (093_token_scopes.sql not applied
	 * yet, a server upgrading) no token has a scope */
	static const char *const sql[2] = {
		"SELECT sha256, name, coalesce(hosts, ''), coalesce(new_hosts_per_hour, 0) "
		"FROM ingest_tokens WHERE revoked_at IS NULL ORDER BY created_at, name LIMIT $1::int",
		"SELECT sha256, name, '', 0 "
		"FROM ingest_tokens WHERE revoked_at IS NULL ORDER BY created_at, name LIMIT $1::int",
	};
	for (int k = 0; k < 2; k++) {
		r = PQexecParams(t->conn, sql[k], 1, NULL, (const char *const[]){ "4096" }, NULL, NULL, 0);
		const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		if (PQresultStatus(r) == PGRES_TUPLES_OK || k == 1 || !state || strcmp(state, "42703") != 0)
			break;
		PQclear(r);
	}
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		/* before the migrations ran the table does not exist yet: quiet */
		const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		if (!state || strcmp(state, "42P01") != 0)
			log_warn("ingest tokens: could not read the table: %s",
				 PQresultErrorMessage(r));
		PQclear(r);
		return;
	}
	size_t rows = (size_t)PQntuples(r);
	if (hashes_alloc(&fresh, rows) < 0) {
		PQclear(r);
		return;
	}
	for (size_t i = 0; i < rows; i++) {
		const char *hosts = PQgetvalue(r, (int)i, 2);
		struct token_grant *g = &fresh.g[fresh.n];
		/* a row the table's checks let through but this build cannot
		 * read is skipped, not granted more than it says */
		if (parse_hex(PQgetvalue(r, (int)i, 0), fresh.h[fresh.n]) < 0 ||
		    (*hosts && !token_hosts_valid(hosts)))
			continue;
		g->key = TOKENS_DB_KEY0 + (int)fresh.n;
		snprintf(g->name, sizeof(g->name), "%s", PQgetvalue(r, (int)i, 1));
		snprintf(g->hosts, sizeof(g->hosts), "%s", hosts);
		g->new_hosts_per_hour = (uint32_t)strtoul(PQgetvalue(r, (int)i, 3), NULL, 10);
		fresh.n++;
	}
	PQclear(r);
	pthread_rwlock_wrlock(&t->rw);
	struct hashes old = t->db;
	t->db = fresh;
	pthread_rwlock_unlock(&t->rw);
	hashes_release(&old);
}

/* Index of the match among hs (every entry compared), or -1. */
static int find(const struct hashes *hs, const unsigned char *h)
{
	int found = -1;

	for (size_t i = 0; i < hs->n; i++)
		if (tokens_hash_equal(hs->h[i], h) && found < 0)
			found = (int)i;
	return found;
}

int tokens_check(struct tokens *t, const char *tok, size_t len, int64_t now_ms)
{
	return tokens_check_grant(t, tok, len, now_ms, NULL);
}

int tokens_check_grant(struct tokens *t, const char *tok, size_t len, int64_t now_ms,
		       struct token_grant *g)
{
	unsigned char h[TOKENS_HASH_LEN];
	int i;

	sha256(tok, len, h);
	i = find(&t->statics, h);
	if (i >= 0) {
		if (g)
			*g = t->statics.g[i];
		return i;
	}
	if (!t->conninfo)
		return -1;
	bool mine = false;
	pthread_mutex_lock(&t->mu);
	if (!t->refreshing && (!t->db_tried || now_ms - t->db_at_ms >= TOKENS_CACHE_MS ||
			       now_ms < t->db_at_ms)) {
		t->refreshing = mine = true;
		t->db_tried = true;
		t->db_at_ms = now_ms;
	}
	pthread_mutex_unlock(&t->mu);
	if (mine) {
		refresh(t);
		pthread_mutex_lock(&t->mu);
		t->refreshing = false;
		pthread_mutex_unlock(&t->mu);
	}
	pthread_rwlock_rdlock(&t->rw);
	i = find(&t->db, h);
	if (i >= 0 && g)
		*g = t->db.g[i];	/* a copy: the table's copy may be replaced */
	pthread_rwlock_unlock(&t->rw);
	return i < 0 ? -1 : TOKENS_DB_KEY0 + i;
}
