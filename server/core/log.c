/* log.c - leveled log lines on stderr (see log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static atomic_int log_min = LOG_INFO;
static const char *const level_name[] = { "debug", "info", "warn", "error" };

int log_level_parse(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, level_name[i]) == 0)
			return i;
	if (strcmp(s, "warning") == 0)
		return LOG_WARN;
	return -1;
}

void log_set_level(enum log_level lvl)
{
	atomic_store(&log_min, (int)lvl);
}

int log_enabled(enum log_level lvl)
{
	return (int)lvl >= atomic_load(&log_min);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	char line[2048], ts[32];
	struct timespec now;
	struct tm tm;
	va_list ap;

	if (!log_enabled(lvl))
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one event, one line: libpq messages hold newlines and tabs, and
	 * client-supplied text may hold anything */
	for (char *p = line; *p; p++) {
		if (*p == '\n' || *p == '\t' || *p == '\r')
			*p = ' ';
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
	/* one call per line so that lines from several threads do not interleave */
	fprintf(stderr, "%s.%03ldZ %s %s\n", ts, now.tv_nsec / 1000000, level_name[lvl], line);
}
