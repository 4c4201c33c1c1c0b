/* main.c - vmscope-agent: sample on schedule, spool, deliver. */
#include "collect.h"
#include "jsonw.h"
#include "alog.h"
#include "options.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char outbuf[64 * 1024];

static int run_stdout(struct collector *col, const struct agent_opts *o)
{
	struct jw w;

	jw_init(&w, outbuf, sizeof(outbuf), STDOUT_FILENO);
	if (collector_sample(col, &w) < 0)
		return 1;
	jw_raw(&w, "\n", 1);
	if (jw_flush(&w) < 0) {
		alog_error("could not write to standard output: %s", strerror(-w.err));
		return 1;
	}
	(void)o;
	return 0;
}

int main(int argc, char **argv)
{
	struct agent_opts o;
	struct collector col;
	char err[1024];
	int rc;

	opts_init(&o);
	rc = opts_parse(&o, argc, argv, err, sizeof(err));
	if (rc != 0) {
		if (rc < 0)
			fprintf(stderr, "vmscope-agent: %s\n", err);
		opts_release(&o);
		return rc < 0 ? 2 : 0;
	}
	alog_set_level((enum alog_level)o.log_level);
	if (collector_init(&col, &o) < 0) {
		opts_release(&o);
		return 1;
	}
	rc = run_stdout(&col, &o);
	collector_release(&col);
	opts_release(&o);
	return rc;
}
