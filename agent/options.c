/* options.c - flags and config file into struct agent_opts. */
#include "options.h"
#include "errf.h"
#include "alog.h"
#include "version.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
"usage: vmscope-agent --server URL [--token TOKEN | --token-file FILE] [options]\n"
"       vmscope-agent --once --stdout [options]\n"
"\n"
"Samples /proc/vmstat, /proc/meminfo, /proc/pressure/* and memory cgroups\n"
"every --interval seconds and posts them to a vmscope server, keeping\n"
"unsent samples in an on-disk spool.\n"
"\n"
"  --server URL            server base URL, e.g. http://10.0.0.5:8080\n"
"  --token TOKEN           ingest token (Authorization: Bearer)\n"
"  --token-file FILE       read the token from FILE (first line)\n"
"  --cacert FILE           trust the CA certificate(s) in FILE (PEM) for an\n"
"                          https server (default: the system's CAs; the server\n"
"                          certificate is always verified)\n"
"  --interval SECONDS      sampling interval (default 10): the first sample at\n"
"                          start, the next ones aligned to the clock\n"
"  --host NAME             host name sent (default: this machine's)\n"
"  --label KEY=VALUE       label added to every sample (repeatable)\n"
"  --once                  take one sample and exit\n"
"  --stdout                print samples on standard output instead of posting\n"
"  --root DIR              read DIR/proc and DIR/sys instead of /proc and /sys\n"
"  --cgroup-depth N        levels below the root cgroup reported (default 2)\n"
"  --cgroup-include GLOB   report only cgroups whose path matches (repeatable)\n"
"  --cgroup-exclude GLOB   skip cgroups whose path matches (repeatable)\n"
"  --cgroup-max N          at most N cgroup entries per sample (default 500)\n"
"  --keep-open N           keep up to N files open between samples and read\n"
"                          them again with one pread each: about 4 KiB of\n"
"                          kernel memory per kernel file for a third of the\n"
"                          system calls (default 2048; 0 opens every file every\n"
"                          time; a --root tree's files are opened again when\n"
"                          their directory's mtime or ctime changes). A kept\n"
"                          cgroup limit or setting (memory.max, memory.high,\n"
"                          ...) is read again only after an inotify event\n"
"                          says it was written, or after 64 samples from a copy\n"
"  --spool DIR             spool directory (default /var/lib/vmscope/spool as\n"
"                          root, else $HOME/.local/state/vmscope/spool)\n"
"  --spool-max-bytes N     spool size bound; the oldest samples go first\n"
"                          (default 67108864; suffixes k, M, G)\n"
"  --batch-max N           samples per POST (default 50)\n"
"  --timeout SECONDS       per-request HTTP timeout (default 10)\n"
"  --log-level LEVEL       error, warn, info or debug (default info)\n"
"  --config FILE           read \"name = value\" lines (flag names)\n"
"  --help, --version\n";

void opts_init(struct agent_opts *o)
{
	const char *home = getenv("HOME");
	char buf[OPT_MAX_STR];

	memset(o, 0, sizeof(*o));
	o->interval_s = 10;
	o->cgroup_depth = 2;
	o->cgroup_max = 500;
	o->keep_open = 2048;
	o->spool_max_bytes = 64ull << 20;
	o->batch_max = 50;
	o->timeout_s = 10;
	o->log_level = ALOG_INFO;
	if (gethostname(buf, sizeof(buf)) == 0) {
		buf[sizeof(buf) - 1] = '\0';
		/* keep the short name valid: drop characters the contract refuses */
		size_t n = 0;
		for (size_t i = 0; buf[i] && n < HOST_NAME_MAXLEN; i++)
			if (name_host_valid(&buf[i], 1))
				o->host[n++] = buf[i];
		o->host[n] = '\0';
	}
	if (!o->host[0])
		strcpy(o->host, "localhost");
	if (geteuid() == 0 || !home)
		o->spool = strdup("/var/lib/vmscope/spool");
	else if (snprintf(buf, sizeof(buf), "%s/.local/state/vmscope/spool", home) < (int)sizeof(buf))
		o->spool = strdup(buf);
}

void opts_release(struct agent_opts *o)
{
	free(o->server);
	free(o->token);
	free(o->token_file);
	free(o->cacert);
	free(o->root);
	free(o->spool);
	for (size_t i = 0; i < o->nlabels; i++) {
		free(o->labels[i].key);
		free(o->labels[i].value);
	}
	for (size_t i = 0; i < o->ninclude; i++)
		free(o->include[i]);
	for (size_t i = 0; i < o->nexclude; i++)
		free(o->exclude[i]);
	memset(o, 0, sizeof(*o));
}

static int set_str(char **dst, const char *v, const char *name, char *err, size_t errlen)
{
	char *c;

	if (!*v || strlen(v) >= OPT_MAX_STR)
		return errf(err, errlen, "--%s: expected a non-empty value of at most %d bytes",
			    name, OPT_MAX_STR - 1);
	c = strdup(v);
	if (!c)
		return errf(err, errlen, "--%s: out of memory", name);
	free(*dst);
	*dst = c;
	return 0;
}

static int parse_seconds(const char *v, double lo, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d) || d < lo || d > hi)
		return -1;
	*out = d;
	return 0;
}

static int parse_int(const char *v, long long lo, long long hi, long long *out)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

/* "64M", "1048576", "512k" -> bytes */
static int parse_bytes(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long n;
	uint64_t mul = 1;

	if (!isdigit((unsigned char)v[0]))
		return -1;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v)
		return -1;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	default: return -1;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || n > UINT64_MAX / mul)
		return -1;
	*out = n * mul;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!*v || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on"))
		*out = true;
	else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off"))
		*out = false;
	else
		return -1;
	return 0;
}

static int add_label(struct agent_opts *o, const char *v, char *err, size_t errlen)
{
	const char *eq = strchr(v, '=');
	size_t klen = eq ? (size_t)(eq - v) : 0;

	if (!eq || !name_metric_valid(v, klen))
		return errf(err, errlen, "--label: expected KEY=VALUE with KEY of 1 to 128 of "
			    "A-Za-z0-9_().:- (got \"%.64s\")", v);
	if (strlen(eq + 1) > 256 || !name_text_valid(eq + 1, strlen(eq + 1)))
		return errf(err, errlen, "--label %.*s: expected a value of at most 256 printable characters "
			    "(no bidirectional controls)",
			    (int)klen, v);
	/* a repeated key replaces the earlier value */
	for (size_t i = 0; i < o->nlabels; i++) {
		if (strlen(o->labels[i].key) == klen && !memcmp(o->labels[i].key, v, klen)) {
			char *nv = strdup(eq + 1);
			if (!nv)
				return errf(err, errlen, "--label: out of memory");
			free(o->labels[i].value);
			o->labels[i].value = nv;
			return 0;
		}
	}
	if (o->nlabels >= OPT_MAX_LABELS)
		return errf(err, errlen, "--label: at most %d labels", OPT_MAX_LABELS);
	struct label *l = &o->labels[o->nlabels];
	l->key = strndup(v, klen);
	l->value = strdup(eq + 1);
	if (!l->key || !l->value) {
		free(l->key);
		free(l->value);
		return errf(err, errlen, "--label: out of memory");
	}
	o->nlabels++;
	return 0;
}

static int add_glob(char **arr, size_t *n, const char *v, const char *name,
		    char *err, size_t errlen)
{
	if (*n >= OPT_MAX_GLOBS)
		return errf(err, errlen, "--%s: at most %d patterns", name, OPT_MAX_GLOBS);
	if (!*v || strlen(v) > 4096)
		return errf(err, errlen, "--%s: expected a glob on cgroup paths such as "
			    "/system.slice/*", name);
	arr[*n] = strdup(v);
	if (!arr[*n])
		return errf(err, errlen, "--%s: out of memory", name);
	(*n)++;
	return 0;
}

int opts_set(struct agent_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	double d;
	long long n;
	bool b;

	if (!strcmp(name, "server"))
		return set_str(&o->server, v, name, err, errlen);
	if (!strcmp(name, "token"))
		return set_str(&o->token, v, name, err, errlen);
	if (!strcmp(name, "token-file"))
		return set_str(&o->token_file, v, name, err, errlen);
	if (!strcmp(name, "cacert")) {
		/* a typo here would otherwise show up only as failed deliveries */
		if (access(v, R_OK) != 0)
			return errf(err, errlen, "--cacert %.200s: %s", v, strerror(errno));
		return set_str(&o->cacert, v, name, err, errlen);
	}
	if (!strcmp(name, "root"))
		return set_str(&o->root, v, name, err, errlen);
	if (!strcmp(name, "spool"))
		return set_str(&o->spool, v, name, err, errlen);
	if (!strcmp(name, "label"))
		return add_label(o, v, err, errlen);
	if (!strcmp(name, "cgroup-include"))
		return add_glob(o->include, &o->ninclude, v, name, err, errlen);
	if (!strcmp(name, "cgroup-exclude"))
		return add_glob(o->exclude, &o->nexclude, v, name, err, errlen);
	if (!strcmp(name, "host")) {
		if (!name_host_valid(v, strlen(v)))
			return errf(err, errlen, "--host: expected 1 to 253 characters of A-Za-z0-9._-");
		strcpy(o->host, v);
		return 0;
	}
	if (!strcmp(name, "interval")) {
		if (parse_seconds(v, 0.1, 86400, &d) < 0)
			return errf(err, errlen, "--interval: expected seconds from 0.1 to 86400");
		o->interval_s = d;
		return 0;
	}
	if (!strcmp(name, "timeout")) {
		if (parse_seconds(v, 0.1, 3600, &d) < 0)
			return errf(err, errlen, "--timeout: expected seconds from 0.1 to 3600");
		o->timeout_s = d;
		return 0;
	}
	if (!strcmp(name, "cgroup-depth")) {
		if (parse_int(v, 0, 64, &n) < 0)
			return errf(err, errlen, "--cgroup-depth: expected an integer from 0 to 64");
		o->cgroup_depth = (int)n;
		return 0;
	}
	if (!strcmp(name, "cgroup-max")) {
		if (parse_int(v, 0, 2000, &n) < 0)
			return errf(err, errlen, "--cgroup-max: expected an integer from 0 to 2000");
		o->cgroup_max = (int)n;
		return 0;
	}
	if (!strcmp(name, "keep-open")) {
		if (parse_int(v, 0, 65536, &n) < 0)
			return errf(err, errlen, "--keep-open: expected an integer from 0 to 65536");
		o->keep_open = (int)n;
		return 0;
	}
	if (!strcmp(name, "batch-max")) {
		if (parse_int(v, 1, 10000, &n) < 0)
			return errf(err, errlen, "--batch-max: expected an integer from 1 to 10000");
		o->batch_max = (int)n;
		return 0;
	}
	if (!strcmp(name, "spool-max-bytes")) {
		uint64_t by;
		if (parse_bytes(v, &by) < 0 || by < 4096)
			return errf(err, errlen, "--spool-max-bytes: expected a size of at least 4096 "
				    "bytes (suffixes k, M, G)");
		o->spool_max_bytes = by;
		return 0;
	}
	if (!strcmp(name, "log-level")) {
		enum alog_level l;
		if (alog_parse_level(v, &l) < 0)
			return errf(err, errlen, "--log-level: expected error, warn, info or debug");
		o->log_level = (int)l;
		return 0;
	}
	if (!strcmp(name, "once") || !strcmp(name, "stdout")) {
		if (parse_bool(v, &b) < 0)
			return errf(err, errlen, "%s: expected true or false", name);
		if (name[0] == 'o')
			o->once = b;
		else
			o->to_stdout = b;
		return 0;
	}
	return errf(err, errlen, "unknown option \"%.64s\" (see --help)", name);
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Applies a config file; the caller applies the command line afterwards. */
static int load_config(struct agent_opts *o, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[OPT_MAX_STR + 64];
	int lineno = 0;
	int rc = 0;

	if (!f)
		return errf(err, errlen, "could not open config %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, msg[512];
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			rc = errf(err, errlen, "%s:%d: line too long", path, lineno);
			break;
		}
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			rc = errf(err, errlen, "%s:%d: expected name = value", path, lineno);
			break;
		}
		*eq = '\0';
		char *name = trim(s), *val = trim(eq + 1);
		if (!strcmp(name, "config")) {
			rc = errf(err, errlen, "%s:%d: config files do not nest", path, lineno);
			break;
		}
		if (opts_set(o, name, val, msg, sizeof(msg)) < 0) {
			rc = errf(err, errlen, "%s:%d: %s", path, lineno, msg);
			break;
		}
	}
	if (rc == 0 && ferror(f))
		rc = errf(err, errlen, "could not read config %s", path);
	fclose(f);
	return rc;
}

static int read_token_file(struct agent_opts *o, char *err, size_t errlen)
{
	FILE *f = fopen(o->token_file, "r");
	char buf[OPT_MAX_STR];

	if (!f)
		return errf(err, errlen, "could not open token file %s: %s", o->token_file,
			    strerror(errno));
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	char *t = trim(buf);
	if (!*t)
		return errf(err, errlen, "token file %s is empty", o->token_file);
	return set_str(&o->token, t, "token-file", err, errlen);
}

static bool is_bool_flag(const char *name)
{
	return !strcmp(name, "once") || !strcmp(name, "stdout");
}

int opts_parse(struct agent_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	/* the config file first, so that flags override it */
	for (int i = 1; i < argc; i++) {
		const char *cfg = NULL;
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			cfg = argv[i + 1];
		else if (!strncmp(argv[i], "--config=", 9))
			cfg = argv[i] + 9;
		if (cfg && load_config(o, cfg, err, errlen) < 0)
			return -1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char name[64];
		const char *val;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return 1;
		}
		if (!strcmp(a, "--version")) {
			printf("vmscope-agent %s\n", VMSCOPE_VERSION);
			return 1;
		}
		if (strncmp(a, "--", 2) != 0)
			return errf(err, errlen, "unexpected argument \"%.64s\" (see --help)", a);
		const char *eq = strchr(a, '=');
		size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (nl == 0 || nl >= sizeof(name))
			return errf(err, errlen, "unknown option \"%.64s\" (see --help)", a);
		memcpy(name, a + 2, nl);
		name[nl] = '\0';
		if (eq) {
			val = eq + 1;
		} else if (is_bool_flag(name)) {
			val = "true";
		} else {
			if (i + 1 >= argc)
				return errf(err, errlen, "--%s: missing value", name);
			val = argv[++i];
		}
		if (!strcmp(name, "config"))
			continue;
		if (opts_set(o, name, val, err, errlen) < 0)
			return -1;
	}
	if (o->token_file && read_token_file(o, err, errlen) < 0)
		return -1;
	if (o->once && !o->to_stdout && !o->server)
		return errf(err, errlen, "--once needs --stdout or --server");
	if (!o->to_stdout && !o->server)
		return errf(err, errlen, "--server URL is needed (or --once --stdout)");
	if (!o->to_stdout && !o->spool)
		return errf(err, errlen, "--spool DIR is needed");
	return 0;
}
