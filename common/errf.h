/* errf.h - the one way a function writes its error message into a
 * caller's buffer (char *err, size_t errlen) and fails. */
#ifndef VMSCOPE_ERRF_H
#define VMSCOPE_ERRF_H

#include <stddef.h>

/* Formats into err (truncated to errlen) and returns -1, so that a failing
 * path is `return errf(err, errlen, "...", ...);`. */
int errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
