/* tokens.h - the ingest tokens a server accepts, kept only as SHA-256
 * hashes: those of --token / --tokens-file (hashed at start, the plaintext
 * is then wiped from the configuration) and the unrevoked rows of the
 * ingest_tokens table (schema/020_tokens.sql), re-read at most every
 * TOKENS_CACHE_MS so that `vmscope-server token revoke NAME` takes effect
 * on a running server within seconds. A presented token is hashed and
 * compared with every known hash in constant time.
 *
 * Ownership: tokens_new returns a set the caller frees with tokens_free;
 * it opens its own database connection (lazily, on the first check). The
 * set is safe to use from many threads at once; while one of them re-reads
 * the table the others check against the previous copy. */
#ifndef VMSCOPE_TOKENS_H
#define VMSCOPE_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "token_scope.h"

#define TOKENS_HASH_LEN 32		/* SHA-256 */
#define TOKENS_HEX_LEN (2 * TOKENS_HASH_LEN)
#define TOKENS_CACHE_MS 3000		/* how stale the table's copy may get */
#define TOKENS_DB_MAX 4096		/* table tokens held at once */

struct tokens;

/* A new set holding the hashes of static[0..n) (unscoped, named "--token
 * #1" ...). conninfo (copied; NULL: no table) is the database whose
 * ingest_tokens table is also consulted. Returns NULL when out of memory. */
struct tokens *tokens_new(char *const *statics, size_t n, const char *conninfo);

/* As tokens_new, from the configuration's definitions with their names
 * and scopes (copied; the caller wipes the secrets afterwards). */
struct tokens *tokens_new_defs(const struct token_def *defs, size_t n, const char *conninfo);
void tokens_free(struct tokens *t);

/* Checks a presented token. Returns a small key for rate limiting (the
 * index among the static tokens, then TOKENS_DB_KEY0 + the table row's
 * index), or -1 when the token is unknown or revoked. now_ms (monotonic)
 * decides whether the table copy is refreshed first. */
#define TOKENS_DB_KEY0 4096
int tokens_check(struct tokens *t, const char *tok, size_t len, int64_t now_ms);

/* As tokens_check, and on success fills *g with the token's name and
 * scope (table tokens: the row's name, hosts and new_hosts_per_hour). */
int tokens_check_grant(struct tokens *t, const char *tok, size_t len, int64_t now_ms,
		       struct token_grant *g);

/* The number of keys tokens_check may return (for the rate limiter). */
size_t tokens_nkeys(void);

/* SHA-256 of s[0..n) as 64 lowercase hex digits and a NUL in hex. */
void tokens_sha256_hex(const char *s, size_t n, char hex[TOKENS_HEX_LEN + 1]);

/* Constant-time comparison of two hashes. */
bool tokens_hash_equal(const unsigned char *a, const unsigned char *b);

/* `vmscope-server token add NAME | revoke NAME | list [--db CONNINFO]`:
 * argv[0] is "token". Applies the migrations first. Prints to stdout, errors
 * to stderr; returns the process exit status. */
int tokens_cli(int argc, char **argv);

#endif
