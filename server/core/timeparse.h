/* timeparse.h - the time formats of the REST API: Unix seconds (fractional
 * allowed) or RFC 3339 in, RFC 3339 UTC out. Pure functions. */
#ifndef VMSCOPE_TIMEPARSE_H
#define VMSCOPE_TIMEPARSE_H

#include <stddef.h>
#include <stdint.h>

/* Parses "1764518400", "1764518400.125", "2026-11-30T10:00:00Z",
 * "2026-11-30T10:00:00.5+01:00" (also lower-case t/z and a space for T) into
 * Unix milliseconds. Returns 0, or -1 when s is anything else or out of the
 * years 1970..9999. */
int time_parse(const char *s, int64_t *ms);

/* Writes "2026-11-30T10:00:00.125Z" (milliseconds only when not zero) into
 * buf (at least 32 bytes). Returns buf. */
char *time_format(int64_t ms, char *buf, size_t len);

/* Wall clock in Unix milliseconds. */
int64_t time_now_ms(void);

#endif
