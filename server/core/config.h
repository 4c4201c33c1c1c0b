/* config.h - the server's settings from its command line and environment
 * (CONTRACT.md §4). Every flag --foo-bar also comes from VMSCOPE_FOO_BAR; a
 * flag given on the command line wins over the environment.
 *
 * Ownership: config_parse fills a struct server_config whose strings it
 * owns; config_release frees them. */
#ifndef VMSCOPE_CONFIG_H
#define VMSCOPE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "token_scope.h"

#define CONFIG_MAX_TOKENS 4096
#define CONFIG_MIN_TOKEN_LEN 8

struct server_config {
	char *listen;		/* "ADDR:PORT" or "[V6ADDR]:PORT" */
	char *db;		/* libpq conninfo */
	struct token_def *tokens;	/* ingest tokens with their names and scopes (owned) */
	size_t ntokens;
	bool insecure_no_auth;
	bool db_tokens;		/* may start without static tokens (tokens.h) */
	char *read_token;	/* --read-token(-file); NULL: reads are open */
	char *admin_token;	/* --admin-token-file; NULL: admin endpoints answer 403 */
	char *web_dir;
	char *schema_dir;
	int retention_days;	/* default 30 */
	int rollup_retention_days;	/* 5-minute rollups; default 400 */
	size_t max_body;	/* bytes, compressed and inflated; default 8 MiB */
	size_t max_inflight;	/* bytes all requests' bodies and parses may hold
				 * at once (membudget.h); default 256 MiB */
	int threads;		/* MHD thread pool; default 96 */
	int max_connections;	/* 0: from RLIMIT_NOFILE (http.c) */
	int max_conn_per_addr;	/* per client address; 0: no limit */
	char *allowed_hosts;	/* --allowed-hosts: comma list of Host names; NULL: see http_host.h */
	int timeout_s;		/* a request's headers and body, and idle keep-alive; default 30 */
	uint32_t new_names_per_host;	/* new metric names per host and hour; 0: unlimited */
	uint32_t new_names_per_token;	/* ... per ingest token and hour */
	int pool;		/* database connections; default 8 */
	double rate_limit;	/* requests/s per ingest token; 0 = off */
	int log_level;		/* enum log_level */
	char *tls_cert, *tls_key;	/* PEM files; NULL: plain HTTP */
	char **webhooks;	/* --webhook specs (notify_receiver.h), validated */
	size_t nwebhooks;
	int notify_resend_s;	/* Alertmanager re-send interval; default 60 */
	int notify_timeout_s;	/* per notification POST; default 10 */
	int notify_retries;	/* attempts per event and receiver; default 8 */
	char *public_url;	/* the dashboard's URL in notifications; NULL: from --listen */
	/* the kernel-regression watch (server/regress/regress_watch.h) */
	int regression_every_s;	/* default 300; 0: off */
	int regression_window_s;	/* default 21600 */
	int regression_min_hosts;	/* default 5 */
	char *regression_stratify;	/* a label key; NULL: none */
	bool help, version;
};

/* Parses argv (and the environment through getenv) into *c, filling
 * defaults first. Returns 0, or -1 with a message in err (the caller prints
 * it with the usage hint and exits 2). Reads --tokens-file. On error *c is
 * released. Does not check that tokens exist (config_check does). */
int config_parse(struct server_config *c, int argc, char **argv, char *err, size_t errlen);

/* Checks the combination of settings a server can start with: a database,
 * ingest tokens unless insecure_no_auth. Returns 0 or -1 with err. */
int config_check(const struct server_config *c, char *err, size_t errlen);

/* Frees what config_parse allocated; safe on a zeroed struct. */
void config_release(struct server_config *c);

void config_usage(FILE *out);

/* True when s is a valid --allowed-hosts list: names or addresses (IPv6
 * without brackets) of A-Za-z0-9._:- with * and ? wildcards, separated by
 * commas. */
bool config_allowed_hosts_valid(const char *s);

/* Splits "host:port" / "[v6]:port" into addr (a numeric address, buffer of
 * at least 64) and port. Returns 0 or -1 when malformed. ":8080" means all
 * IPv4 addresses. */
int config_split_listen(const char *listen, char *addr, size_t addrlen, unsigned *port);

#endif
