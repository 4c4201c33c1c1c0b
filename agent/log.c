/* log.c - leveled one-line messages on stderr. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static enum log_level cur_level = LOG_INFO;
static const char *const level_names[] = { "error", "warn", "info", "debug" };

void log_set_level(enum log_level lvl)
{
	cur_level = lvl;
}

int log_parse_level(const char *s, enum log_level *out)
{
	for (int i = 0; i <= LOG_DEBUG; i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	if (strcmp(s, "warning") == 0) {
		*out = LOG_WARN;
		return 0;
	}
	return -1;
}

int log_enabled(enum log_level lvl)
{
	return lvl <= cur_level;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
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
