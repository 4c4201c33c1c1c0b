/* auth.h - Bearer token checks for ingest and (optionally) reads.
 * Comparisons take the same time wherever the presented token differs, so
 * that response timing does not reveal a token's prefix. Pure functions. */
#ifndef VMSCOPE_AUTH_H
#define VMSCOPE_AUTH_H

#include <stdbool.h>
#include <stddef.h>

/* Extracts the token of an "Authorization: Bearer TOKEN" header value (the
 * scheme is case-insensitive). Returns a pointer into header and its length
 * in *len, or NULL when header is NULL or not a Bearer credential. */
const char *auth_bearer(const char *header, size_t *len);

/* Constant-time (for a given expected length) equality of tok[0..len) and
 * the NUL-terminated expected. */
bool auth_token_equal(const char *tok, size_t len, const char *expected);

/* Checks tok against every token of the list (always all of them). Returns
 * the index of the match, or -1. */
int auth_find(const char *tok, size_t len, char *const *tokens, size_t ntokens);

#endif
