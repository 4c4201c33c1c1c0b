/* token_cli.c - `vmscope-server token add|revoke|list`: manages the
 * ingest_tokens table that running servers consult (tokens.h). A new token
 * is printed once and only its SHA-256 is stored, so it cannot be shown
 * again: a lost token is revoked and replaced. */
#include "config.h"
#include "migrate.h"
#include "token_scope.h"
#include "tokens.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/random.h>

#define TOKEN_RANDOM_BYTES 24	/* 192 bits */

static void cli_usage(FILE *out)
{
	fputs("usage: vmscope-server token add NAME [--hosts PATTERN,...] [--new-hosts-per-hour N]\n"
	      "                                          create a token (printed once); --hosts:\n"
	      "                                          the host names it may post for (* and ?\n"
	      "                                          wildcards; default any); --new-hosts-per-hour:\n"
	      "                                          hosts never seen it may bring in per hour\n"
	      "                                          and server process (default unlimited)\n"
	      "       vmscope-server token revoke NAME   revoke it (servers notice within "
	      "seconds)\n"
	      "       vmscope-server token list          names, scopes, creation and revocation times\n"
	      "options: --db CONNINFO (or VMSCOPE_DB), --schema DIR\n", out);
}

/* A new random token "vms_" + 48 hex digits into out (at least 53 bytes).
 * Returns 0 or -1 when the kernel gives no randomness. */
static int new_token(char *out)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char r[TOKEN_RANDOM_BYTES];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	memcpy(out, "vms_", 4);
	for (size_t i = 0; i < sizeof(r); i++) {
		out[4 + 2 * i] = digits[r[i] >> 4];
		out[4 + 2 * i + 1] = digits[r[i] & 15];
	}
	out[4 + 2 * sizeof(r)] = '\0';
	explicit_bzero(r, sizeof(r));
	return 0;
}

/* hosts NULL: any host; new_hosts NULL: unlimited (a decimal string). */
static int cmd_add(PGconn *c, const char *name, const char *hosts, const char *new_hosts)
{
	char tok[4 + 2 * TOKEN_RANDOM_BYTES + 1], hex[TOKENS_HEX_LEN + 1];
	const char *params[4] = { name, hex, hosts, new_hosts };
	PGresult *r;
	int rc = 1;

	if (new_token(tok) < 0) {
		fprintf(stderr, "vmscope-server token: no randomness from the kernel\n");
		return 1;
	}
	tokens_sha256_hex(tok, strlen(tok), hex);
	r = PQexecParams(c, "INSERT INTO ingest_tokens (name, sha256, hosts, new_hosts_per_hour) "
			 "VALUES ($1, $2, $3, $4::integer) ON CONFLICT (name) DO NOTHING", 4, NULL, params,
			 NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		fprintf(stderr, "vmscope-server token: %s", PQresultErrorMessage(r));
	else if (strcmp(PQcmdTuples(r), "1") != 0)
		fprintf(stderr, "vmscope-server token: a token named %s exists already "
			"(names are never reused; pick another)\n", name);
	else {
		printf("%s\n", tok);
		fflush(stdout);
		fprintf(stderr, "token %s created; it is shown only now: give it to the agent "
			"(--token-file)\n", name);
		rc = 0;
	}
	PQclear(r);
	explicit_bzero(tok, sizeof(tok));
	return rc;
}

static int cmd_revoke(PGconn *c, const char *name)
{
	const char *params[1] = { name };
	PGresult *r;
	int rc = 1;

	r = PQexecParams(c, "UPDATE ingest_tokens SET revoked_at = now() "
			 "WHERE name = $1 AND revoked_at IS NULL", 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		fprintf(stderr, "vmscope-server token: %s", PQresultErrorMessage(r));
	else if (strcmp(PQcmdTuples(r), "1") != 0)
		fprintf(stderr, "vmscope-server token: no unrevoked token named %s\n", name);
	else {
		fprintf(stderr, "token %s revoked; running servers refuse it within %d s\n", name,
			(TOKENS_CACHE_MS + 999) / 1000);
		rc = 0;
	}
	PQclear(r);
	return rc;
}

static int cmd_list(PGconn *c)
{
	PGresult *r = PQexec(c, "SELECT name, "
			     "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
			     "coalesce(to_char(revoked_at AT TIME ZONE 'UTC', "
			     "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '-'), coalesce(hosts, '*'), "
			     "coalesce(new_hosts_per_hour::text, '-') "
			     "FROM ingest_tokens ORDER BY created_at, name");

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "vmscope-server token: %s", PQresultErrorMessage(r));
		PQclear(r);
		return 1;
	}
	printf("%-24s %-20s %-20s %-8s %-14s %s\n", "NAME", "CREATED", "REVOKED", "STATE",
	       "NEW-HOSTS/H", "HOSTS");
	for (int i = 0; i < PQntuples(r); i++) {
		const char *rev = PQgetvalue(r, i, 2);
		printf("%-24s %-20s %-20s %-8s %-14s %s\n", PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), rev,
		       strcmp(rev, "-") ? "revoked" : "active", PQgetvalue(r, i, 4), PQgetvalue(r, i, 3));
	}
	PQclear(r);
	return 0;
}

int tokens_cli(int argc, char **argv)
{
	struct server_config cfg;
	char err[1024];
	const char *sub = argc > 1 ? argv[1] : NULL, *name = NULL, *hosts = NULL, *new_hosts = NULL;
	int first_opt = 2, rc = 1;
	PGconn *c = NULL;

	if (!sub || !strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		cli_usage(sub ? stdout : stderr);
		return sub ? 0 : 2;
	}
	if (!strcmp(sub, "add") || !strcmp(sub, "revoke")) {
		if (argc < 3 || !token_name_valid(argv[2])) {
			fprintf(stderr, "vmscope-server token %s: give a NAME of 1 to 64 letters, "
				"digits, '.', '_' or '-'\n", sub);
			return 2;
		}
		name = argv[2];
		first_opt = 3;
	} else if (strcmp(sub, "list") != 0) {
		fprintf(stderr, "vmscope-server token: unknown command %s\n", sub);
		cli_usage(stderr);
		return 2;
	}
	/* token add's own options first; they are taken out of argv */
	int w = first_opt;
	for (int i = first_opt; i < argc; i++) {
		bool is_hosts = !strcmp(argv[i], "--hosts"), is_new = !strcmp(argv[i], "--new-hosts-per-hour");
		if (!is_hosts && !is_new) {
			argv[w++] = argv[i];
			continue;
		}
		if (strcmp(sub, "add") != 0 || i + 1 >= argc) {
			fprintf(stderr, "vmscope-server token: %s goes with token add and takes a value\n",
				argv[i]);
			return 2;
		}
		const char *v = argv[++i];
		if (is_hosts && !token_hosts_valid(v)) {
			fprintf(stderr, "vmscope-server token add: --hosts: expected host name patterns "
				"(A-Za-z0-9._- with * and ?) separated by commas\n");
			return 2;
		}
		if (is_new) {
			char *end;
			long x = strtol(v, &end, 10);
			if (end == v || *end || x < 1 || x > TOKEN_NEW_HOSTS_MAX) {
				fprintf(stderr, "vmscope-server token add: --new-hosts-per-hour: expected an "
					"integer from 1 to %d\n", TOKEN_NEW_HOSTS_MAX);
				return 2;
			}
		}
		*(is_hosts ? &hosts : &new_hosts) = v;
	}
	argc = w;
	/* the remaining flags are the server's own (--db, --schema) */
	argv[first_opt - 1] = argv[0];
	if (config_parse(&cfg, argc - first_opt + 1, argv + first_opt - 1, err, sizeof(err)) < 0) {
		fprintf(stderr, "vmscope-server token: %s\n", err);
		return 2;
	}
	if (!cfg.db || !*cfg.db) {
		fprintf(stderr, "vmscope-server token: no database: give --db CONNINFO or set "
			"VMSCOPE_DB\n");
		config_release(&cfg);
		return 2;
	}
	c = PQconnectdb(cfg.db);
	if (!c || PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "vmscope-server token: could not connect: %s",
			c ? PQerrorMessage(c) : "out of memory\n");
		goto out;
	}
	if (migrate_apply(c, cfg.schema_dir, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "vmscope-server token: %s\n", err);
		goto out;
	}
	if (!strcmp(sub, "add"))
		rc = cmd_add(c, name, hosts, new_hosts);
	else if (!strcmp(sub, "revoke"))
		rc = cmd_revoke(c, name);
	else
		rc = cmd_list(c);
out:
	if (c)
		PQfinish(c);
	config_release(&cfg);
	return rc;
}
