/* names.c - identifier rules of the contract, shared by agent and server. */
#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool name_host_valid(const char *s, size_t len)
{
	if (len == 0 || len > HOST_NAME_MAXLEN)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
		if (!ok)
			return false;
	}
	return true;
}

/* Decodes one UTF-8 sequence at s[i]; returns its length or 0 when it is
 * malformed, overlong, a surrogate or beyond U+10FFFF. */
static size_t utf8_seq(const unsigned char *s, size_t i, size_t len, unsigned *cp)
{
	unsigned c = s[i];
	size_t n;
	unsigned min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xE0) == 0xC0) {
		n = 2; min = 0x80; c &= 0x1F;
	} else if ((c & 0xF0) == 0xE0) {
		n = 3; min = 0x800; c &= 0x0F;
	} else if ((c & 0xF8) == 0xF0) {
		n = 4; min = 0x10000; c &= 0x07;
	} else {
		return 0;
	}
	if (i + n > len)
		return 0;
	for (size_t k = 1; k < n; k++) {
		if ((s[i + k] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i + k] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return n;
}

bool name_id_valid(const char *s, size_t len)
{
	if (len == 0 || len > NAME_ID_MAXLEN)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

bool name_printable_utf8(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t n = utf8_seq(u, i, len, &cp);

		if (n == 0 || cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
			return false;
		i += n;
	}
	return true;
}

static bool is_bidi_control(unsigned cp)
{
	return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

bool name_text_valid(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t n = utf8_seq(u, i, len, &cp);

		if (n == 0 || cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || is_bidi_control(cp))
			return false;
		i += n;
	}
	return true;
}

char *name_visible(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s);
	char *out = malloc(len * 6 + 1), *w = out;	/* "\uXXXX" for 1..3 bytes at most */

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t n = utf8_seq(u, i, len, &cp);

		if (n == 0) {
			w += sprintf(w, "\\x%02X", u[i]);
			i++;
			continue;
		}
		if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || is_bidi_control(cp))
			w += sprintf(w, "\\u%04X", cp);
		else {
			memcpy(w, s + i, n);
			w += n;
		}
		i += n;
	}
	*w = '\0';
	return out;
}

bool name_cgroup_path_valid(const char *s, size_t len)
{
	if (len < 2 || len > CGROUP_PATH_MAXLEN || s[0] != '/')
		return false;
	if (memchr(s, '\0', len) || !name_printable_utf8(s, len))
		return false;
	/* walk components between slashes */
	size_t start = 1;
	for (size_t i = 1; i <= len; i++) {
		if (i == len || s[i] == '/') {
			size_t clen = i - start;
			if (clen == 0)
				return false;
			if (clen == 1 && s[start] == '.')
				return false;
			if (clen == 2 && s[start] == '.' && s[start + 1] == '.')
				return false;
			start = i + 1;
		}
	}
	return true;
}

bool name_metric_valid(const char *s, size_t len)
{
	if (len == 0 || len > METRIC_NAME_MAXLEN)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '(' || c == ')' ||
			  c == '.' || c == ':' || c == '-';
		if (!ok)
			return false;
	}
	return true;
}
