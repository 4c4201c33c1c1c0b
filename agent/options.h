/* options.h - the agent's settings: command-line flags and the --config file.
 *
 * A config file holds "name = value" lines with the flag names without the
 * leading dashes (e.g. "server = http://10.0.0.5:8080", "label = role=db");
 * '#' starts a comment. Flags on the command line win over the file, except
 * repeatable ones (label, cgroup-include, cgroup-exclude), which add up.
 */
#ifndef VMSCOPE_AGENT_OPTIONS_H
#define VMSCOPE_AGENT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "names.h"

#define OPT_MAX_LABELS 64
#define OPT_MAX_GLOBS 32
#define OPT_MAX_STR 4096

struct label {
	char *key, *value;	/* owned */
};

struct agent_opts {
	char *server;		/* base URL, owned; NULL when unset */
	char *token;		/* owned; NULL when unset */
	char *token_file;	/* owned */
	char *cacert;		/* owned PEM CA bundle for https; NULL: the system's */
	double interval_s;	/* >= 0.1 */
	char host[HOST_NAME_MAXLEN + 1];
	struct label labels[OPT_MAX_LABELS];
	size_t nlabels;
	bool once, to_stdout;
	char *root;		/* owned; NULL: the live /proc and /sys */
	int cgroup_depth;	/* levels below the root reported; 0 reports none */
	char *include[OPT_MAX_GLOBS], *exclude[OPT_MAX_GLOBS];	/* owned globs */
	size_t ninclude, nexclude;
	int cgroup_max;
	int keep_open;		/* kernel files kept open between samples */
	char *spool;		/* owned spool directory */
	uint64_t spool_max_bytes;
	int batch_max;		/* samples per POST */
	double timeout_s;	/* per HTTP request */
	int log_level;		/* enum alog_level */
};

/* Fills defaults (the host name from gethostname, the spool directory from
 * the user: /var/lib/vmscope/spool for root, else $XDG_STATE_HOME-ish). */
void opts_init(struct agent_opts *o);

/* Frees what the options own. */
void opts_release(struct agent_opts *o);

/* Parses argv (and the --config file it names). Returns 0 to run, 1 when
 * --help or --version was printed (exit 0), -1 on a bad flag (a message
 * naming it was written into err). Validates the result (a server URL is
 * needed unless --once --stdout; the token comes from --token-file). */
int opts_parse(struct agent_opts *o, int argc, char **argv, char *err, size_t errlen);

/* Applies one "name" = "value" setting (flag name without dashes). Returns 0
 * or -1 with a message in err. Exposed for tests. */
int opts_set(struct agent_opts *o, const char *name, const char *value,
	     char *err, size_t errlen);

#endif
