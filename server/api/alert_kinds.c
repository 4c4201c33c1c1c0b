/* alert_kinds.c - the kinds of alerts the server raises (see alert_kinds.h). */
#include "alert_kinds.h"

#include "detect_kinds.h"
#include "regress.h"

#include <stdio.h>
#include <string.h>

/* Raised by the server itself rather than by a detector: a host's silence
 * (liveness) and the fleet's kernel-regression watch. */
static const char *const server_kinds[] = { "host_silent", REGRESS_KIND };
#define NSERVER (sizeof(server_kinds) / sizeof(server_kinds[0]))

/* The i-th kind, i < NKIND + NSERVER. */
static const char *kind_at(size_t i)
{
	return i < (size_t)NKIND ? det_kind_name((enum det_kind)i) : server_kinds[i - NKIND];
}

bool alert_kind_known(const char *kind)
{
	for (size_t i = 0; i < (size_t)NKIND + NSERVER; i++)
		if (strcmp(kind_at(i), kind) == 0)
			return true;
	return false;
}

void alert_kinds_text(char *buf, size_t len)
{
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < (size_t)NKIND + NSERVER && at < len; i++) {
		int n = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", kind_at(i));
		if (n < 0)
			break;
		at += (size_t)n;
	}
}
