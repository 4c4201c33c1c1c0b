/* urlenc.c - percent-encoding (see urlenc.h). */
#include "urlenc.h"

#include <stdbool.h>

size_t urlenc_append(char *out, size_t cap, size_t at, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			     c == '-' || c == '.' || c == '_' || c == '~';
		if (plain && at + 1 < cap) {
			out[at++] = (char)c;
		} else if (!plain && at + 3 < cap) {
			out[at++] = '%';
			out[at++] = hex[c >> 4];
			out[at++] = hex[c & 15];
		}
	}
	if (cap)
		out[at < cap ? at : cap - 1] = '\0';
	return at;
}
