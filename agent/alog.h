/* alog.h - the agent's one-line log messages on stderr (journald keeps them).
 *
 * Messages follow the project's grammar: short, lower case, what failed and
 * where ("could not read /proc/vmstat: permission denied"). Levels below the
 * configured one are dropped. Cannot fail.
 */
#ifndef VMSCOPE_AGENT_ALOG_H
#define VMSCOPE_AGENT_ALOG_H

enum alog_level { ALOG_ERROR = 0, ALOG_WARN, ALOG_INFO, ALOG_DEBUG };

/* Sets the lowest level printed (default ALOG_INFO). */
void alog_set_level(enum alog_level lvl);

/* Parses "error", "warn", "info", "debug"; returns 0, or -1 when unknown. */
int alog_parse_level(const char *s, enum alog_level *out);

/* True when messages of lvl are printed (to skip building costly ones). */
int alog_enabled(enum alog_level lvl);

void alog_msg(enum alog_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define alog_error(...) alog_msg(ALOG_ERROR, __VA_ARGS__)
#define alog_warn(...) alog_msg(ALOG_WARN, __VA_ARGS__)
#define alog_info(...) alog_msg(ALOG_INFO, __VA_ARGS__)
#define alog_debug(...) alog_msg(ALOG_DEBUG, __VA_ARGS__)

#endif
