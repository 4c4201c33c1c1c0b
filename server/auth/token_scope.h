/* token_scope.h - what an ingest token may do besides posting: the host
 * names it may speak for and how many hosts new to the server it may
 * bring in per hour (docs/security.md "Token scopes").
 *
 * Host patterns are a comma list of shell-style patterns over contract
 * host names (`web-*,db-0?`), matched with fnmatch(3); an empty list means
 * any host (unscoped, the default). Pure functions, no allocation. */
#ifndef VMSCOPE_TOKEN_SCOPE_H
#define VMSCOPE_TOKEN_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "names.h"

#define TOKEN_NAME_MAX NAME_ID_MAXLEN	/* a token's name, as `token add NAME` takes it */
#define TOKEN_HOSTS_MAX 1024		/* the pattern list */
#define TOKEN_NEW_HOSTS_MAX 1000000	/* --new-hosts-per-hour up to this */

/* What tokens_check_grant (tokens.h) says about the token presented. */
struct token_grant {
	int key;				/* the rate limiter's key */
	char name[TOKEN_NAME_MAX + 1];		/* for messages and budgets */
	char hosts[TOKEN_HOSTS_MAX + 1];	/* "": any host */
	uint32_t new_hosts_per_hour;		/* 0: unlimited */
};

/* A static token as the configuration gives it (--token, --tokens-file). */
struct token_def {
	char *token;			/* the secret; wiped once hashed */
	char *name;			/* NULL: named by its place ("--token #1", "FILE:LINE") */
	char *hosts;			/* NULL: any host */
	uint32_t new_hosts_per_hour;	/* 0: unlimited */
};

/* True when s is a valid pattern list: 1 to TOKEN_HOSTS_MAX bytes,
 * patterns of 1 to 253 characters of A-Za-z0-9._- plus * and ?, separated
 * by single commas. */
bool token_hosts_valid(const char *s);

/* True when host matches one pattern of the list (any host when the list
 * is empty or NULL). */
bool token_hosts_match(const char *patterns, const char *host);

/* A token name: 1 to TOKEN_NAME_MAX of A-Za-z0-9._- */
bool token_name_valid(const char *s);

#endif
