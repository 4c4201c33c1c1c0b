/* host_allow.c - the Host header allow-list (see host_allow.h). */
#include "host_allow.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <fnmatch.h>
#include <string.h>
#include <strings.h>

#define NAME_MAX_LEN 253

void host_allow_init(struct host_allow *h, bool loopback, const char *patterns)
{
	h->loopback = loopback;
	h->patterns = patterns && *patterns ? patterns : NULL;
}

/* True when p is "" or ":" and up to 5 digits: the port part of a Host
 * value (RFC 9110 allows an empty one). */
static bool port_ok(const char *p)
{
	size_t n = 0;

	if (!*p)
		return true;
	if (*p++ != ':')
		return false;
	while (isdigit((unsigned char)p[n]))
		n++;
	return n <= 5 && p[n] == '\0';
}

/* The name part of a Host value into out (lower case, no port, no
 * brackets). False when it is malformed or too long, the port included
 * ("127.0.0.1:80@evil" names no host this server has). */
static bool host_name(const char *v, char out[NAME_MAX_LEN + 1])
{
	size_t n;

	if (v[0] == '[') {
		const char *close = strchr(v, ']');
		if (!close || !port_ok(close + 1))
			return false;
		v++;
		n = (size_t)(close - v);
	} else {
		n = strcspn(v, ":");	/* an IPv6 address must be in brackets: port_ok refuses its colons */
		if (!port_ok(v + n))
			return false;
	}
	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		if (!isalnum(c) && !strchr(".-_:", c))
			return false;
		out[i] = (char)tolower(c);
	}
	out[n] = '\0';
	return true;
}

static bool is_loopback_name(const char *name)
{
	struct in_addr a4;
	struct in6_addr a6;
	size_t n = strlen(name);

	if (strcmp(name, "localhost") == 0 || (n > 10 && strcmp(name + n - 10, ".localhost") == 0))
		return true;
	if (inet_pton(AF_INET, name, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, name, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return false;
}

static bool matches(const char *patterns, const char *name)
{
	char one[NAME_MAX_LEN + 1];

	for (const char *p = patterns; *p;) {
		size_t len = strcspn(p, ",");
		if (len && len <= NAME_MAX_LEN) {
			memcpy(one, p, len);
			one[len] = '\0';
			if (fnmatch(one, name, FNM_CASEFOLD) == 0)
				return true;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

bool host_allow_ok(const struct host_allow *h, const char *host_header)
{
	char name[NAME_MAX_LEN + 1];

	if (!host_header)
		return true;
	if (!host_name(host_header, name))
		return false;
	if (h->patterns && matches(h->patterns, name))
		return true;
	if (h->loopback)
		return is_loopback_name(name);
	return !h->patterns;
}
