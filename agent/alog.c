/* alog.c - leveled one-line messages on stderr. */
#include "alog.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static enum alog_level cur_level = ALOG_INFO;
static const char *const level_names[] = { "error", "warn", "info", "debug" };

void alog_set_level(enum alog_level lvl)
{
	cur_level = lvl;
}

int alog_parse_level(const char *s, enum alog_level *out)
{
	for (int i = 0; i <= ALOG_DEBUG; i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum alog_level)i;
			return 0;
		}
	}
	if (strcmp(s, "warning") == 0) {
		*out = ALOG_WARN;
		return 0;
	}
	return -1;
}

int alog_enabled(enum alog_level lvl)
{
	return lvl <= cur_level;
}

void alog_msg(enum alog_level lvl, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (lvl > cur_level)
		return;
	n = snprintf(line, sizeof(line), "vmscope-agent: %s: ", level_names[lvl]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	/* one write per line so concurrent writers do not interleave */
	strcat(line, "\n");
	fputs(line, stderr);
	fflush(stderr);
}
