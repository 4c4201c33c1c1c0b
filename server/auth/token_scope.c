/* token_scope.c - host patterns of ingest tokens (see token_scope.h). */
#include "token_scope.h"

#include <fnmatch.h>
#include <string.h>

#include "names.h"

static bool pattern_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '-' || c == '*' || c == '?';
}

bool token_hosts_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0, run = 0;

	if (n == 0 || n > TOKEN_HOSTS_MAX)
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == ',') {
			if (run == 0 || run > HOST_NAME_MAXLEN)
				return false;
			run = 0;
		} else if (!pattern_char(s[i])) {
			return false;
		} else {
			run++;
		}
	}
	return true;
}

bool token_hosts_match(const char *patterns, const char *host)
{
	char one[HOST_NAME_MAXLEN + 1];

	if (!patterns || !*patterns)
		return true;
	for (const char *p = patterns; *p;) {
		size_t len = strcspn(p, ",");
		if (len <= HOST_NAME_MAXLEN) {
			memcpy(one, p, len);
			one[len] = '\0';
			if (fnmatch(one, host, 0) == 0)
				return true;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

bool token_name_valid(const char *s)
{
	return name_id_valid(s, strlen(s));
}
