/* tokens.c - hashed ingest tokens from the configuration and from the
 * ingest_tokens table, with a short-lived copy of the table (see tokens.h). */
#include "tokens.h"

#include "log.h"

#include <libpq-fe.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct hashes {
	unsigned char (*h)[TOKENS_HASH_LEN];	/* owned */
	size_t n;
};

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

struct tokens *tokens_new(char *const *statics, size_t n, const char *conninfo)
{
	struct tokens *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->mu, NULL);
	pthread_rwlock_init(&t->rw, NULL);
	if (n && !(t->statics.h = calloc(n, sizeof(*t->statics.h))))
		goto fail;
	for (size_t i = 0; i < n; i++)
		sha256(statics[i], strlen(statics[i]), t->statics.h[i]);
	t->statics.n = n;
	if (conninfo && !(t->conninfo = strdup(conninfo)))
		goto fail;
	return t;
fail:
	tokens_free(t);
	return NULL;
}

void tokens_free(struct tokens *t)
{
	if (!t)
		return;
	if (t->conn)
		PQfinish(t->conn);
	free(t->statics.h);
	free(t->db.h);
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
	struct hashes fresh = { NULL, 0 };

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
	r = PQexecParams(t->conn,
			 "SELECT sha256 FROM ingest_tokens WHERE revoked_at IS NULL "
			 "ORDER BY created_at, name LIMIT $1::int",
			 1, NULL, (const char *const[]){ "4096" }, NULL, NULL, 0);
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
	if (rows && !(fresh.h = calloc(rows, sizeof(*fresh.h)))) {
		PQclear(r);
		return;
	}
	for (size_t i = 0; i < rows; i++)
		if (parse_hex(PQgetvalue(r, (int)i, 0), fresh.h[fresh.n]) == 0)
			fresh.n++;
	PQclear(r);
	pthread_rwlock_wrlock(&t->rw);
	struct hashes old = t->db;
	t->db = fresh;
	pthread_rwlock_unlock(&t->rw);
	free(old.h);
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
	unsigned char h[TOKENS_HASH_LEN];
	int i;

	sha256(tok, len, h);
	i = find(&t->statics, h);
	if (i >= 0)
		return i;
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
	pthread_rwlock_unlock(&t->rw);
	return i < 0 ? -1 : TOKENS_DB_KEY0 + i;
}
