/* config.c - command line and environment (see config.h). */
#include "config.h"
#include "errf.h"
#include "log.h"
#include "names.h"
#include "notify_receiver.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef VMSCOPE_WEB_DIR
#define VMSCOPE_WEB_DIR "web"
#endif
#ifndef VMSCOPE_SCHEMA_DIR
#define VMSCOPE_SCHEMA_DIR "schema"
#endif

enum {
	OPT_LISTEN = 256, OPT_DB, OPT_TOKEN, OPT_TOKENS_FILE, OPT_INSECURE, OPT_WEB,
	OPT_READ_TOKEN, OPT_SCHEMA, OPT_RETENTION, OPT_ROLLUP_RETENTION, OPT_MAX_BODY, OPT_THREADS,
	OPT_MAX_CONN, OPT_TIMEOUT, OPT_POOL, OPT_RATE, OPT_LOG_LEVEL, OPT_HELP, OPT_VERSION,
	OPT_TLS_CERT, OPT_TLS_KEY, OPT_DB_TOKENS, OPT_ADMIN_TOKEN_FILE, OPT_MAX_INFLIGHT,
	OPT_WEBHOOK, OPT_NOTIFY_RESEND, OPT_NOTIFY_TIMEOUT, OPT_NOTIFY_RETRIES, OPT_PUBLIC_URL,
	OPT_REG_EVERY, OPT_REG_WINDOW, OPT_REG_MIN_HOSTS, OPT_REG_STRATIFY,
	OPT_READ_TOKEN_FILE, OPT_MAX_CONN_PER_ADDR, OPT_ALLOWED_HOSTS, OPT_NEW_NAMES_HOST,
	OPT_NEW_NAMES_TOKEN,
};

struct opt_def {
	const char *name;
	int has_arg;
	int id;
	const char *env;	/* NULL: command line only */
};

static const struct opt_def opts[] = {
	{ "listen", 1, OPT_LISTEN, "VMSCOPE_LISTEN" },
	{ "db", 1, OPT_DB, "VMSCOPE_DB" },
	{ "token", 1, OPT_TOKEN, "VMSCOPE_TOKEN" },
	{ "tokens-file", 1, OPT_TOKENS_FILE, "VMSCOPE_TOKENS_FILE" },
	{ "insecure-no-auth", 0, OPT_INSECURE, "VMSCOPE_INSECURE_NO_AUTH" },
	{ "web", 1, OPT_WEB, "VMSCOPE_WEB" },
	{ "read-token", 1, OPT_READ_TOKEN, "VMSCOPE_READ_TOKEN" },
	{ "read-token-file", 1, OPT_READ_TOKEN_FILE, "VMSCOPE_READ_TOKEN_FILE" },
	{ "schema", 1, OPT_SCHEMA, "VMSCOPE_SCHEMA" },
	{ "retention-days", 1, OPT_RETENTION, "VMSCOPE_RETENTION_DAYS" },
	{ "rollup-retention-days", 1, OPT_ROLLUP_RETENTION, "VMSCOPE_ROLLUP_RETENTION_DAYS" },
	{ "max-body", 1, OPT_MAX_BODY, "VMSCOPE_MAX_BODY" },
	{ "max-inflight-bytes", 1, OPT_MAX_INFLIGHT, "VMSCOPE_MAX_INFLIGHT_BYTES" },
	{ "threads", 1, OPT_THREADS, "VMSCOPE_THREADS" },
	{ "max-connections", 1, OPT_MAX_CONN, "VMSCOPE_MAX_CONNECTIONS" },
	{ "max-connections-per-address", 1, OPT_MAX_CONN_PER_ADDR, "VMSCOPE_MAX_CONNECTIONS_PER_ADDRESS" },
	{ "allowed-hosts", 1, OPT_ALLOWED_HOSTS, "VMSCOPE_ALLOWED_HOSTS" },
	{ "max-new-names-per-host", 1, OPT_NEW_NAMES_HOST, "VMSCOPE_MAX_NEW_NAMES_PER_HOST" },
	{ "max-new-names-per-token", 1, OPT_NEW_NAMES_TOKEN, "VMSCOPE_MAX_NEW_NAMES_PER_TOKEN" },
	{ "timeout", 1, OPT_TIMEOUT, "VMSCOPE_TIMEOUT" },
	{ "pool", 1, OPT_POOL, "VMSCOPE_POOL" },
	{ "rate-limit", 1, OPT_RATE, "VMSCOPE_RATE_LIMIT" },
	{ "log-level", 1, OPT_LOG_LEVEL, "VMSCOPE_LOG_LEVEL" },
	{ "db-tokens", 0, OPT_DB_TOKENS, "VMSCOPE_DB_TOKENS" },
	{ "tls-cert", 1, OPT_TLS_CERT, "VMSCOPE_TLS_CERT" },
	{ "tls-key", 1, OPT_TLS_KEY, "VMSCOPE_TLS_KEY" },
	{ "admin-token-file", 1, OPT_ADMIN_TOKEN_FILE, "VMSCOPE_ADMIN_TOKEN_FILE" },
	{ "webhook", 1, OPT_WEBHOOK, "VMSCOPE_WEBHOOK" },
	{ "notify-resend", 1, OPT_NOTIFY_RESEND, "VMSCOPE_NOTIFY_RESEND" },
	{ "notify-timeout", 1, OPT_NOTIFY_TIMEOUT, "VMSCOPE_NOTIFY_TIMEOUT" },
	{ "notify-retries", 1, OPT_NOTIFY_RETRIES, "VMSCOPE_NOTIFY_RETRIES" },
	{ "public-url", 1, OPT_PUBLIC_URL, "VMSCOPE_PUBLIC_URL" },
	{ "regression-every", 1, OPT_REG_EVERY, "VMSCOPE_REGRESSION_EVERY" },
	{ "regression-window", 1, OPT_REG_WINDOW, "VMSCOPE_REGRESSION_WINDOW" },
	{ "regression-min-hosts", 1, OPT_REG_MIN_HOSTS, "VMSCOPE_REGRESSION_MIN_HOSTS" },
	{ "regression-stratify", 1, OPT_REG_STRATIFY, "VMSCOPE_REGRESSION_STRATIFY" },
	{ "help", 0, OPT_HELP, NULL },
	{ "version", 0, OPT_VERSION, NULL },
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

void config_usage(FILE *out)
{
	fputs("usage: vmscope-server [options]\n"
	      "Every option --foo-bar may also be set as VMSCOPE_FOO_BAR in the environment.\n"
	      "  --listen ADDR:PORT      listen address (default 127.0.0.1:8080)\n"
	      "  --db CONNINFO           PostgreSQL conninfo or URI (required)\n"
	      "  --token TOKEN           an ingest token (repeatable; env: whitespace-separated);\n"
	      "                          prefer --tokens-file: arguments show in ps\n"
	      "  --tokens-file FILE      ingest tokens, one a line (# comments), each optionally\n"
	      "                          followed by name=NAME hosts=PATTERN,... new-hosts-per-hour=N\n"
	      "  --db-tokens             start without --token: the database's tokens only\n"
	      "                          (vmscope-server token add; they are always accepted)\n"
	      "  --insecure-no-auth      accept ingest without a token (development only)\n"
	      "  --read-token-file FILE  require the token in FILE (first line) for reads (API,\n"
	      "                          /metrics); --read-token TOKEN gives it directly (shows in ps)\n"
	      "  --admin-token-file FILE the admin token (first line; # comments): needed to\n"
	      "                          change overrides, forget hosts and change silences\n"
	      "                          (silences also take the read token; without either\n"
	      "                          token every change is refused)\n"
	      "  --web DIR               dashboard files (default " VMSCOPE_WEB_DIR ")\n"
	      "  --schema DIR            SQL migrations (default " VMSCOPE_SCHEMA_DIR ")\n"
	      "  --retention-days N      raw samples kept (default 30)\n"
	      "  --rollup-retention-days N  5-minute rollups kept (default 400)\n"
	      "  --max-body BYTES        request body limit, compressed and inflated (default 8388608)\n"
	      "  --max-inflight-bytes BYTES  memory all requests' bodies and their parsing may\n"
	      "                          hold at once; past it ingest answers 503 + Retry-After\n"
	      "                          (default 268435456)\n"
	      "  --threads N             HTTP worker threads (default 96)\n"
	      "  --max-connections N     concurrent connections (default: from the open-file\n"
	      "                          limit); when full, the connection that has waited longest\n"
	      "                          without completing a request is closed for the new one\n"
	      "  --max-connections-per-address N  connections from one client address (default 0: no\n"
	      "                          limit; agents behind one NAT address share it)\n"
	      "  --timeout S             the most a request (headers and body) may take to arrive,\n"
	      "                          and the idle keep-alive time, in seconds (default 30)\n"
	      "  --allowed-hosts LIST    Host header names accepted (comma list, * wildcards); on a\n"
	      "                          loopback address only loopback names are accepted without it\n"
	      "  --max-new-names-per-host N   new metric names one host may bring in per hour\n"
	      "                          (default 1000; 0: unlimited)\n"
	      "  --max-new-names-per-token N  ... one ingest token (default 4000; 0: unlimited)\n"
	      "  --pool N                database connections (default 8)\n"
	      "  --rate-limit N          ingest requests per second per token (default 0: off)\n"
	      "  --log-level LEVEL       debug, info, warn or error (default info)\n"
	      "  --tls-cert FILE         serve HTTPS with this PEM certificate (chain)...\n"
	      "  --tls-key FILE          ...and this PEM private key\n"
	      "  --webhook URL[,format=alertmanager|json][,kinds=K1|K2][,severity=warning|critical][,name=N]\n"
	      "                          send alert open/resolve notifications (repeatable;\n"
	      "                          env: whitespace-separated); see docs/notify.md\n"
	      "  --notify-resend S       re-send open alerts to Alertmanager every S s (default 60)\n"
	      "  --notify-timeout S      time limit of one notification POST (default 10)\n"
	      "  --notify-retries N      attempts per notification and receiver (default 8)\n"
	      "  --public-url URL        the dashboard's URL in notifications (default http://LISTEN)\n"
	      "  --regression-every S    compare each kernel release with the baseline every S s\n"
	      "                          (default 300; 0: off); see docs/detectors.md\n"
	      "  --regression-window S   the hosts' last S s are compared (default 21600)\n"
	      "  --regression-min-hosts N  releases (and the baseline) need N hosts (default 5)\n"
	      "  --regression-stratify LABEL  compare within each value of this agent label\n"
	      "  --help, --version\n"
	      "Tokens kept in the database: vmscope-server token add|revoke|list --db CONNINFO\n"
	      "  (token add NAME [--hosts PATTERN,...] [--new-hosts-per-hour N])\n", out);
}

static int set_str(char **dst, const char *v, char *err, size_t errlen)
{
	char *copy = strdup(v);

	if (!copy)
		return errf(err, errlen, "out of memory");
	free(*dst);
	*dst = copy;
	return 0;
}

static int parse_long(const char *name, const char *v, long min, long max, long *out,
		      char *err, size_t errlen)
{
	char *end;

	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < min || x > max)
		return errf(err, errlen, "--%s: expected an integer from %ld to %ld, got \"%s\"",
			    name, min, max, v);
	*out = x;
	return 0;
}

/* A token: printable ASCII without spaces, at least CONFIG_MIN_TOKEN_LEN. */
static bool token_ok(const char *t)
{
	size_t n = strlen(t);

	if (n < CONFIG_MIN_TOKEN_LEN || n > 512)
		return false;
	for (size_t i = 0; i < n; i++)
		if (t[i] <= ' ' || t[i] > '~')
			return false;
	return true;
}

static void token_def_release(struct token_def *d)
{
	if (d->token)
		explicit_bzero(d->token, strlen(d->token));
	free(d->token);
	free(d->name);
	free(d->hosts);
	memset(d, 0, sizeof(*d));
}

/* Appends t[0..len) with the scope in *scope (whose strings it takes;
 * released on error). */
static int add_token(struct server_config *c, const char *t, size_t len, struct token_def *scope,
		     const char *from, char *err, size_t errlen)
{
	char *copy = strndup(t, len);
	struct token_def *grown;

	if (!copy) {
		token_def_release(scope);
		return errf(err, errlen, "out of memory");
	}
	scope->token = copy;
	if (!token_ok(copy)) {
		token_def_release(scope);
		return errf(err, errlen, "%s: a token must be %d to 512 printable characters "
			    "without spaces", from, CONFIG_MIN_TOKEN_LEN);
	}
	if (c->ntokens >= CONFIG_MAX_TOKENS) {
		token_def_release(scope);
		return errf(err, errlen, "%s: at most %d tokens", from, CONFIG_MAX_TOKENS);
	}
	grown = realloc(c->tokens, (c->ntokens + 1) * sizeof(*grown));
	if (!grown) {
		token_def_release(scope);
		return errf(err, errlen, "out of memory");
	}
	c->tokens = grown;
	c->tokens[c->ntokens++] = *scope;
	return 0;
}

/* The next whitespace-separated word at *p: its start in *word and length
 * in *len, *p moved past it. False at the end of the string. Environment
 * variables (VMSCOPE_TOKEN, VMSCOPE_WEBHOOK) may hold several values. */
static bool next_word(const char **p, const char **word, size_t *len)
{
	while (**p && isspace((unsigned char)**p))
		(*p)++;
	*word = *p;
	while (**p && !isspace((unsigned char)**p))
		(*p)++;
	*len = (size_t)(*p - *word);
	return *len > 0;
}

/* Whitespace-separated tokens (the VMSCOPE_TOKEN variable may hold several). */
static int add_token_list(struct server_config *c, const char *v, const char *from,
			  char *err, size_t errlen)
{
	const char *start;
	size_t len;

	while (next_word(&v, &start, &len)) {
		struct token_def scope = { 0 };
		if (add_token(c, start, len, &scope, from, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* The scope words after a token in a tokens file (name=NAME,
 * hosts=PATTERN,..., new-hosts-per-hour=N) into *d. */
static int parse_scope_word(struct token_def *d, const char *w, size_t len, const char *from,
			    char *err, size_t errlen)
{
	char buf[TOKEN_HOSTS_MAX + 32];

	if (len >= sizeof(buf))
		return errf(err, errlen, "%s: \"%.40s...\" is too long", from, w);
	memcpy(buf, w, len);
	buf[len] = '\0';
	if (strncmp(buf, "name=", 5) == 0) {
		if (!token_name_valid(buf + 5))
			return errf(err, errlen, "%s: name: expected 1 to %d of A-Za-z0-9._-", from,
				    TOKEN_NAME_MAX);
		free(d->name);
		return (d->name = strdup(buf + 5)) ? 0 : errf(err, errlen, "out of memory");
	}
	if (strncmp(buf, "hosts=", 6) == 0) {
		if (!token_hosts_valid(buf + 6))
			return errf(err, errlen, "%s: hosts: expected host name patterns (A-Za-z0-9._- "
				    "with * and ?) separated by commas", from);
		free(d->hosts);
		return (d->hosts = strdup(buf + 6)) ? 0 : errf(err, errlen, "out of memory");
	}
	if (strncmp(buf, "new-hosts-per-hour=", 19) == 0) {
		char *end;
		errno = 0;
		long x = strtol(buf + 19, &end, 10);
		if (errno || end == buf + 19 || *end || x < 1 || x > TOKEN_NEW_HOSTS_MAX)
			return errf(err, errlen, "%s: new-hosts-per-hour: expected an integer from 1 to %d",
				    from, TOKEN_NEW_HOSTS_MAX);
		d->new_hosts_per_hour = (uint32_t)x;
		return 0;
	}
	return errf(err, errlen, "%s: unknown token option \"%.60s\" (expected name=, hosts= or "
		    "new-hosts-per-hour=)", from, buf);
}

/* One token a line: TOKEN [name=NAME] [hosts=P,P] [new-hosts-per-hour=N]. */
static int read_tokens_file(struct server_config *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[2048], from[600];
	int lineno = 0, rc = 0;

	if (!f)
		return errf(err, errlen, "could not open tokens file %s: %s", path, strerror(errno));
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		const char *p = line, *tok, *w;
		size_t tlen, wlen;
		if (!next_word(&p, &tok, &tlen) || *tok == '#')
			continue;
		snprintf(from, sizeof(from), "%.500s:%d", path, lineno);
		struct token_def scope = { 0 };
		while (rc == 0 && next_word(&p, &w, &wlen))
			rc = parse_scope_word(&scope, w, wlen, from, err, errlen);
		if (rc == 0 && !scope.name && !(scope.name = strdup(from)))
			rc = errf(err, errlen, "out of memory");
		if (rc == 0)
			rc = add_token(c, tok, tlen, &scope, from, err, errlen);
		else
			token_def_release(&scope);
	}
	explicit_bzero(line, sizeof(line));
	if (rc == 0 && ferror(f))
		rc = errf(err, errlen, "could not read tokens file %s", path);
	fclose(f);
	return rc;
}

/* A secret from a file (the admin token, the read token): the first line
 * of FILE that is not blank or a comment, into *dst. A file (not a flag) so
 * that the token never shows in `ps`. what names it in messages. */
static int read_secret_file(char **dst, const char *what, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int rc = -2;	/* -2: nothing found yet */

	if (!f)
		return errf(err, errlen, "could not open %s file %s: %s", what, path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		while (n && isspace((unsigned char)line[n - 1]))
			line[--n] = '\0';
		const char *t = line;
		while (*t && isspace((unsigned char)*t))
			t++;
		if (!*t || *t == '#')
			continue;
		if (!token_ok(t))
			rc = errf(err, errlen, "%s: the %s must be %d to 512 printable "
				  "characters without spaces", path, what, CONFIG_MIN_TOKEN_LEN);
		else
			rc = set_str(dst, t, err, errlen);
		break;
	}
	if (rc == -2)
		rc = errf(err, errlen, "%s: no %s in the file", path, what);
	explicit_bzero(line, sizeof(line));
	fclose(f);
	return rc;
}

static bool env_true(const char *v)
{
	return v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 ||
		     strcasecmp(v, "yes") == 0 || strcasecmp(v, "on") == 0);
}

/* Whitespace-separated --webhook specs, each validated here so that a bad
 * one stops the start with a message. */
static int add_webhooks(struct server_config *c, const char *v, char *err, size_t errlen)
{
	const char *start;
	size_t len;

	while (next_word(&v, &start, &len)) {
		struct notify_receiver r;
		char *spec = strndup(start, len);
		if (!spec)
			return errf(err, errlen, "out of memory");
		if (notify_receiver_parse(spec, &r, err, errlen) < 0) {
			free(spec);
			return -1;
		}
		notify_receiver_release(&r);
		if (c->nwebhooks >= NOTIFY_MAX_RECEIVERS) {
			free(spec);
			return errf(err, errlen, "--webhook: at most %d receivers", NOTIFY_MAX_RECEIVERS);
		}
		char **grown = realloc(c->webhooks, (c->nwebhooks + 1) * sizeof(*grown));
		if (!grown) {
			free(spec);
			return errf(err, errlen, "out of memory");
		}
		c->webhooks = grown;
		c->webhooks[c->nwebhooks++] = spec;
	}
	return 0;
}

/* Applies one option value (from argv or the environment). */
static int apply(struct server_config *c, const struct opt_def *o, const char *v,
		 char *err, size_t errlen)
{
	long x;

	switch (o->id) {
	case OPT_LISTEN: {
		char addr[64];
		unsigned port;
		if (config_split_listen(v, addr, sizeof(addr), &port) < 0)
			return errf(err, errlen, "--listen: expected ADDR:PORT, got \"%s\"", v);
		return set_str(&c->listen, v, err, errlen);
	}
	case OPT_DB: return set_str(&c->db, v, err, errlen);
	case OPT_TOKEN: return add_token_list(c, v, "--token", err, errlen);
	case OPT_TOKENS_FILE: return read_tokens_file(c, v, err, errlen);
	case OPT_INSECURE: c->insecure_no_auth = v ? env_true(v) : true; return 0;
	case OPT_DB_TOKENS: c->db_tokens = v ? env_true(v) : true; return 0;
	case OPT_WEB: return set_str(&c->web_dir, v, err, errlen);
	case OPT_READ_TOKEN:
		if (!token_ok(v))
			return errf(err, errlen, "--read-token: a token must be %d to 512 printable "
				    "characters without spaces", CONFIG_MIN_TOKEN_LEN);
		return set_str(&c->read_token, v, err, errlen);
	case OPT_WEBHOOK: return add_webhooks(c, v, err, errlen);
	case OPT_NOTIFY_RESEND:
		if (parse_long(o->name, v, 1, 3600, &x, err, errlen) < 0)
			return -1;
		c->notify_resend_s = (int)x;
		return 0;
	case OPT_NOTIFY_TIMEOUT:
		if (parse_long(o->name, v, 1, 300, &x, err, errlen) < 0)
			return -1;
		c->notify_timeout_s = (int)x;
		return 0;
	case OPT_NOTIFY_RETRIES:
		if (parse_long(o->name, v, 1, 100, &x, err, errlen) < 0)
			return -1;
		c->notify_retries = (int)x;
		return 0;
	case OPT_PUBLIC_URL:
		if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
			return errf(err, errlen, "--public-url: expected an http:// or https:// URL");
		return set_str(&c->public_url, v, err, errlen);
	case OPT_REG_EVERY:
		if (parse_long(o->name, v, 0, 86400, &x, err, errlen) < 0)
			return -1;
		c->regression_every_s = (int)x;
		return 0;
	case OPT_REG_WINDOW:
		if (parse_long(o->name, v, 60, 7 * 86400, &x, err, errlen) < 0)
			return -1;
		c->regression_window_s = (int)x;
		return 0;
	case OPT_REG_MIN_HOSTS:
		if (parse_long(o->name, v, 2, 100000, &x, err, errlen) < 0)
			return -1;
		c->regression_min_hosts = (int)x;
		return 0;
	case OPT_REG_STRATIFY:
		if (!*v || strlen(v) > 128 || !name_printable_utf8(v, strlen(v)))
			return errf(err, errlen, "--regression-stratify: expected a label key (1 to 128 "
				    "printable characters)");
		return set_str(&c->regression_stratify, v, err, errlen);
	case OPT_SCHEMA: return set_str(&c->schema_dir, v, err, errlen);
	case OPT_TLS_CERT: return set_str(&c->tls_cert, v, err, errlen);
	case OPT_TLS_KEY: return set_str(&c->tls_key, v, err, errlen);
	case OPT_ADMIN_TOKEN_FILE: return read_secret_file(&c->admin_token, "admin token", v, err, errlen);
	case OPT_READ_TOKEN_FILE: return read_secret_file(&c->read_token, "read token", v, err, errlen);
	case OPT_ALLOWED_HOSTS:
		if (!config_allowed_hosts_valid(v))
			return errf(err, errlen, "--allowed-hosts: expected host names or addresses "
				    "(A-Za-z0-9.:- with * and ?) separated by commas");
		return set_str(&c->allowed_hosts, v, err, errlen);
	case OPT_MAX_CONN_PER_ADDR:
		if (parse_long(o->name, v, 0, 1000000, &x, err, errlen) < 0)
			return -1;
		c->max_conn_per_addr = (int)x;
		return 0;
	case OPT_NEW_NAMES_HOST:
	case OPT_NEW_NAMES_TOKEN:
		if (parse_long(o->name, v, 0, 1000000, &x, err, errlen) < 0)
			return -1;
		if (o->id == OPT_NEW_NAMES_HOST)
			c->new_names_per_host = (uint32_t)x;
		else
			c->new_names_per_token = (uint32_t)x;
		return 0;
	case OPT_RETENTION:
		if (parse_long(o->name, v, 1, 36500, &x, err, errlen) < 0)
			return -1;
		c->retention_days = (int)x;
		return 0;
	case OPT_ROLLUP_RETENTION:
		if (parse_long(o->name, v, 1, 36500, &x, err, errlen) < 0)
			return -1;
		c->rollup_retention_days = (int)x;
		return 0;
	case OPT_MAX_BODY:
		if (parse_long(o->name, v, 1024, 1L << 30, &x, err, errlen) < 0)
			return -1;
		c->max_body = (size_t)x;
		return 0;
	case OPT_MAX_INFLIGHT:
		if (parse_long(o->name, v, 1L << 20, 1L << 40, &x, err, errlen) < 0)
			return -1;
		c->max_inflight = (size_t)x;
		return 0;
	case OPT_THREADS:
		if (parse_long(o->name, v, 1, 256, &x, err, errlen) < 0)
			return -1;
		c->threads = (int)x;
		return 0;
	case OPT_MAX_CONN:
		if (parse_long(o->name, v, 1, 1000000, &x, err, errlen) < 0)
			return -1;
		c->max_connections = (int)x;
		return 0;
	case OPT_TIMEOUT:
		if (parse_long(o->name, v, 1, 3600, &x, err, errlen) < 0)
			return -1;
		c->timeout_s = (int)x;
		return 0;
	case OPT_POOL:
		if (parse_long(o->name, v, 1, 256, &x, err, errlen) < 0)
			return -1;
		c->pool = (int)x;
		return 0;
	case OPT_RATE: {
		char *end;
		errno = 0;
		double d = strtod(v, &end);
		if (errno || end == v || *end || !(d >= 0 && d <= 1e6))
			return errf(err, errlen, "--rate-limit: expected requests per second "
				    "from 0 (off) to 1000000, got \"%s\"", v);
		c->rate_limit = d;
		return 0;
	}
	case OPT_LOG_LEVEL: {
		int lvl = log_level_parse(v);
		if (lvl < 0)
			return errf(err, errlen, "--log-level: expected debug, info, warn or error, "
				    "got \"%s\"", v);
		c->log_level = lvl;
		return 0;
	}
	case OPT_HELP: c->help = true; return 0;
	case OPT_VERSION: c->version = true; return 0;
	}
	return errf(err, errlen, "unknown option");
}

/* An installed copy (<prefix>/share/vmscope/<what> beside <prefix>/bin)
 * wins over the source tree the binary was built in. */
static char *default_dir(const char *what, const char *built_in)
{
	char exe[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(cand, sizeof(cand), "%s/../share/vmscope/%s", exe, what);
			if (access(cand, R_OK | X_OK) == 0)
				return strdup(cand);
		}
	}
	return strdup(built_in);
}

int config_parse(struct server_config *c, int argc, char **argv, char *err, size_t errlen)
{
	struct option lopts[NOPTS + 1];
	bool seen[NOPTS] = { false };
	bool tokens_from_cli = false;

	memset(c, 0, sizeof(*c));
	c->retention_days = 30;
	c->rollup_retention_days = 400;
	c->max_body = 8u << 20;
	c->max_inflight = (size_t)256 << 20;
	/* a thread waiting for its request's commit holds up the other
	 * connections it serves; with 192 connections posting at once, 96
	 * threads put twice as many requests in each group commit as 32 and
	 * held 1.4x the rate (docs/scaling.md §1, "HTTP threads") */
	c->threads = 96;
	c->max_connections = 0;	/* from RLIMIT_NOFILE (http.c) */
	c->timeout_s = 30;
	/* a host brings ~300 names (~500 across kernels and cgroup
	 * versions), and only the first host of a kernel brings them */
	c->new_names_per_host = 1000;
	c->new_names_per_token = 4000;
	c->pool = 8;
	c->log_level = LOG_INFO;
	c->notify_resend_s = 60;
	c->notify_timeout_s = 10;
	c->notify_retries = 8;
	c->regression_every_s = 300;
	c->regression_window_s = 6 * 3600;
	c->regression_min_hosts = 5;
	if (set_str(&c->listen, "127.0.0.1:8080", err, errlen) < 0)
		goto fail;

	for (size_t i = 0; i < NOPTS; i++) {
		lopts[i].name = opts[i].name;
		lopts[i].has_arg = opts[i].has_arg ? required_argument : no_argument;
		lopts[i].flag = NULL;
		lopts[i].val = opts[i].id;
	}
	memset(&lopts[NOPTS], 0, sizeof(lopts[NOPTS]));

	optind = 1;
	opterr = 0;
	for (;;) {
		int idx = -1;
		int ch = getopt_long(argc, argv, "hV", lopts, &idx);
		if (ch == -1)
			break;
		if (ch == 'h')
			ch = OPT_HELP;
		if (ch == 'V')
			ch = OPT_VERSION;
		if (ch == '?' || ch == ':') {
			errf(err, errlen, "unknown option or missing value: %s",
			     optind > 0 && optind <= argc ? argv[optind - 1] : "?");
			goto fail;
		}
		for (size_t i = 0; i < NOPTS; i++) {
			if (opts[i].id != ch)
				continue;
			seen[i] = true;
			if (ch == OPT_TOKEN || ch == OPT_TOKENS_FILE)
				tokens_from_cli = true;
			if (apply(c, &opts[i], opts[i].has_arg ? optarg : NULL, err, errlen) < 0)
				goto fail;
		}
	}
	if (optind < argc) {
		errf(err, errlen, "unexpected argument: %s", argv[optind]);
		goto fail;
	}
	/* the environment fills what the command line left unset; tokens from
	 * the environment are ignored when the command line gave some */
	for (size_t i = 0; i < NOPTS; i++) {
		const char *v = opts[i].env ? getenv(opts[i].env) : NULL;
		if (seen[i] || !v || !*v)
			continue;
		if ((opts[i].id == OPT_TOKEN || opts[i].id == OPT_TOKENS_FILE) && tokens_from_cli)
			continue;
		if (apply(c, &opts[i], v, err, errlen) < 0) {
			size_t n = strlen(err);
			snprintf(err + n, errlen > n ? errlen - n : 0, " (from %s)", opts[i].env);
			goto fail;
		}
	}
	if (!c->web_dir)
		c->web_dir = default_dir("web", VMSCOPE_WEB_DIR);
	if (!c->schema_dir)
		c->schema_dir = default_dir("schema", VMSCOPE_SCHEMA_DIR);
	if (!c->web_dir || !c->schema_dir) {
		errf(err, errlen, "out of memory");
		goto fail;
	}
	return 0;
fail:
	config_release(c);
	return -1;
}

int config_check(const struct server_config *c, char *err, size_t errlen)
{
	if (!c->db || !*c->db)
		return errf(err, errlen, "no database: give --db CONNINFO or set VMSCOPE_DB");
	if (!c->tls_cert != !c->tls_key)
		return errf(err, errlen, "TLS needs both --tls-cert FILE and --tls-key FILE");
	for (size_t i = 0; i < c->ntokens; i++) {
		/* agents carry ingest tokens: one must never be an operator's */
		if ((c->read_token && strcmp(c->tokens[i].token, c->read_token) == 0) ||
		    (c->admin_token && strcmp(c->tokens[i].token, c->admin_token) == 0))
			return errf(err, errlen, "an ingest token is also the read or admin token; "
				    "give each its own");
	}
	if (c->admin_token && c->read_token && strcmp(c->admin_token, c->read_token) == 0)
		return errf(err, errlen, "the admin token is also the read token; give each its own");
	if (c->ntokens == 0 && !c->insecure_no_auth && !c->db_tokens)
		return errf(err, errlen, "no ingest token: give --token TOKEN or --tokens-file FILE "
			    "(or VMSCOPE_TOKEN / VMSCOPE_TOKENS_FILE), or --db-tokens to use only the tokens of "
			    "`vmscope-server token add`; --insecure-no-auth accepts "
			    "samples from anyone, for local development only");
	return 0;
}

void config_release(struct server_config *c)
{
	free(c->listen);
	free(c->db);
	for (size_t i = 0; i < c->ntokens; i++)
		token_def_release(&c->tokens[i]);
	free(c->tokens);
	free(c->allowed_hosts);
	if (c->read_token)
		explicit_bzero(c->read_token, strlen(c->read_token));
	free(c->read_token);
	if (c->admin_token)
		explicit_bzero(c->admin_token, strlen(c->admin_token));
	free(c->admin_token);
	free(c->web_dir);
	free(c->schema_dir);
	free(c->tls_cert);
	free(c->tls_key);
	for (size_t i = 0; i < c->nwebhooks; i++)
		free(c->webhooks[i]);
	free(c->webhooks);
	free(c->public_url);
	free(c->regression_stratify);
	memset(c, 0, sizeof(*c));
}

bool config_allowed_hosts_valid(const char *s)
{
	size_t n = strlen(s), run = 0;

	if (n == 0 || n > 4096)
		return false;
	for (size_t i = 0; i <= n; i++) {
		char ch = s[i];
		if (i == n || ch == ',') {
			if (run == 0 || run > 253)
				return false;
			run = 0;
		} else if (isalnum((unsigned char)ch) || strchr(".-_:*?", ch)) {
			run++;
		} else {
			return false;
		}
	}
	return true;
}

int config_split_listen(const char *listen, char *addr, size_t addrlen, unsigned *port)
{
	const char *colon;
	size_t alen;
	const char *a = listen;

	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');
		if (!close || close[1] != ':')
			return -1;
		a = listen + 1;
		alen = (size_t)(close - a);
		colon = close + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			return -1;
		alen = (size_t)(colon - listen);
	}
	if (alen == 0) {
		a = "0.0.0.0";
		alen = 7;
	}
	if (alen >= addrlen)
		return -1;
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	char *end;
	errno = 0;
	long p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 0 || p > 65535)
		return -1;
	*port = (unsigned)p;
	return 0;
}
