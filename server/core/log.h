/* log.h - the server's log: one line per event on stderr, with a UTC
 * timestamp and a level. Thread-safe (one fprintf per line). */
#ifndef VMSCOPE_LOG_H
#define VMSCOPE_LOG_H

enum log_level { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 };

/* Parses "debug", "info", "warn" or "error"; returns -1 for anything else. */
int log_level_parse(const char *s);

/* Lines below this level are dropped. Default LOG_INFO. */
void log_set_level(enum log_level lvl);
int log_enabled(enum log_level lvl);

void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
