/* log.h - the agent's one-line log messages on stderr (journald keeps them).
 *
 * Messages follow the project's grammar: short, lower case, what failed and
 * where ("could not read /proc/vmstat: permission denied"). Levels below the
 * configured one are dropped. Cannot fail.
 */
#ifndef VMSCOPE_AGENT_LOG_H
#define VMSCOPE_AGENT_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Sets the lowest level printed (default LOG_INFO). */
void log_set_level(enum log_level lvl);

/* Parses "error", "warn", "info", "debug"; returns 0, or -1 when unknown. */
int log_parse_level(const char *s, enum log_level *out);

/* True when messages of lvl are printed (to skip building costly ones). */
int log_enabled(enum log_level lvl);

void log_msg(enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
