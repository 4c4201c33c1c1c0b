/* auth.c - Bearer tokens, compared in constant time (see auth.h). */
#include "auth.h"

#include <string.h>
#include <strings.h>

const char *auth_bearer(const char *header, size_t *len)
{
	const char *p;

	if (!header || strncasecmp(header, "Bearer", 6) != 0 || (header[6] != ' ' && header[6] != '\t'))
		return NULL;
	p = header + 6;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strlen(p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n == 0)
		return NULL;
	*len = n;
	return p;
}

bool auth_token_equal(const char *tok, size_t len, const char *expected)
{
	size_t elen = strlen(expected);
	volatile unsigned char diff = (unsigned char)(len != elen);

	/* walk the expected token in full whatever was presented: the time
	 * depends only on the expected length */
	for (size_t i = 0; i < elen; i++) {
		unsigned char c = i < len ? (unsigned char)tok[i] : 0;
		diff |= c ^ (unsigned char)expected[i];
	}
	return diff == 0;
}

int auth_find(const char *tok, size_t len, char *const *tokens, size_t ntokens)
{
	int found = -1;

	for (size_t i = 0; i < ntokens; i++)
		if (auth_token_equal(tok, len, tokens[i]) && found < 0)
			found = (int)i;
	return found;
}
