/* notify_receiver.c - parsing --webhook specs (see notify_receiver.h). */
#include "notify_receiver.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "tokens.h"

#define AM_PATH "/api/v2/alerts"

static int fail(struct notify_receiver *r, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct notify_receiver *r, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "--webhook: ");

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	notify_receiver_release(r);
	return -1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* kinds=a|b: each 1 to 64 of a-z and '_' (the detectors' kind names). */
static int parse_kinds(struct notify_receiver *r, const char *v, size_t len, char *err, size_t errlen)
{
	size_t i = 0;

	while (i <= len) {
		size_t j = i;
		while (j < len && v[j] != '|')
			j++;
		if (j == i || j - i > 64)
			return fail(r, err, errlen, "kinds: expected kind names separated by |");
		for (size_t k = i; k < j; k++)
			if (!((v[k] >= 'a' && v[k] <= 'z') || v[k] == '_'))
				return fail(r, err, errlen, "kinds: \"%.*s\" is not a kind name",
					    (int)(j - i), v + i);
		if (r->nkinds >= NOTIFY_MAX_KINDS)
			return fail(r, err, errlen, "kinds: at most %d", NOTIFY_MAX_KINDS);
		if (!(r->kinds[r->nkinds] = strndup(v + i, j - i)))
			return fail(r, err, errlen, "out of memory");
		r->nkinds++;
		i = j + 1;
	}
	return 0;
}

int notify_receiver_parse(const char *spec, struct notify_receiver *r, char *err, size_t errlen)
{
	const char *comma = strchr(spec, ',');
	size_t ulen = comma ? (size_t)(comma - spec) : strlen(spec);
	bool named = false;

	memset(r, 0, sizeof(*r));
	if (!((ulen > 7 && strncmp(spec, "http://", 7) == 0) ||
	      (ulen > 8 && strncmp(spec, "https://", 8) == 0)))
		return fail(r, err, errlen, "expected an http:// or https:// URL first, then "
			    ",format=alertmanager|json|slack ,kinds=K1|K2 ,severity=warning|critical ,name=NAME");
	for (size_t i = 0; i < ulen; i++)
		if ((unsigned char)spec[i] <= ' ' || (unsigned char)spec[i] >= 0x7f)
			return fail(r, err, errlen, "the URL holds a space or a control character");
	const char *p = comma;
	while (p) {
		const char *opt = p + 1;
		const char *next = strchr(opt, ',');
		size_t olen = next ? (size_t)(next - opt) : strlen(opt);
		const char *eq = memchr(opt, '=', olen);
		if (!eq)
			return fail(r, err, errlen, "\"%.*s\": expected KEY=VALUE", (int)olen, opt);
		size_t klen = (size_t)(eq - opt), vlen = olen - klen - 1;
		const char *v = eq + 1;
		if (klen == 6 && strncmp(opt, "format", 6) == 0) {
			if (vlen == 12 && strncmp(v, "alertmanager", 12) == 0)
				r->format = NOTIFY_ALERTMANAGER;
			else if (vlen == 4 && strncmp(v, "json", 4) == 0)
				r->format = NOTIFY_JSON;
			else if (vlen == 5 && strncmp(v, "slack", 5) == 0)
				r->format = NOTIFY_SLACK;
			else
				return fail(r, err, errlen, "format: expected alertmanager, json or slack");
		} else if (klen == 5 && strncmp(opt, "kinds", 5) == 0) {
			if (parse_kinds(r, v, vlen, err, errlen) < 0)
				return -1;
		} else if (klen == 8 && strncmp(opt, "severity", 8) == 0) {
			if (vlen == 7 && strncmp(v, "warning", 7) == 0)
				r->critical_only = false;
			else if (vlen == 8 && strncmp(v, "critical", 8) == 0)
				r->critical_only = true;
			else
				return fail(r, err, errlen, "severity: expected warning or critical "
					    "(the least severity sent)");
		} else if (klen == 4 && strncmp(opt, "name", 4) == 0) {
			if (!name_id_valid(v, vlen))
				return fail(r, err, errlen, "name: expected 1 to %d of A-Za-z0-9._-",
					    NOTIFY_NAME_MAX);
			memcpy(r->name, v, vlen);
			r->name[vlen] = '\0';
			named = true;
		} else {
			return fail(r, err, errlen, "unknown option \"%.*s\" (format, kinds, severity, name)",
				    (int)klen, opt);
		}
		p = next;
	}
	char *url = strndup(spec, ulen);
	if (!url)
		return fail(r, err, errlen, "out of memory");
	while (ulen > 8 && url[ulen - 1] == '/')
		url[--ulen] = '\0';
	if (r->format == NOTIFY_ALERTMANAGER && !ends_with(url, AM_PATH)) {
		r->url = malloc(ulen + sizeof(AM_PATH));
		if (r->url)
			snprintf(r->url, ulen + sizeof(AM_PATH), "%s%s", url, AM_PATH);
		free(url);
	} else {
		r->url = url;
	}
	if (!r->url)
		return fail(r, err, errlen, "out of memory");
	if (!named) {
		char hex[TOKENS_HEX_LEN + 1];
		tokens_sha256_hex(r->url, strlen(r->url), hex);
		static const char *const prefix[] = { [NOTIFY_ALERTMANAGER] = "am", [NOTIFY_JSON] = "json",
						      [NOTIFY_SLACK] = "slack" };
		snprintf(r->name, sizeof(r->name), "%s-%.8s", prefix[r->format], hex);
	}
	return 0;
}

void notify_receiver_release(struct notify_receiver *r)
{
	free(r->url);
	for (size_t i = 0; i < r->nkinds; i++)
		free(r->kinds[i]);
	memset(r, 0, sizeof(*r));
}

bool notify_receiver_matches(const struct notify_receiver *r, const char *kind, const char *severity)
{
	if (r->critical_only && strcmp(severity, "critical") != 0)
		return false;
	if (r->nkinds == 0)
		return true;
	for (size_t i = 0; i < r->nkinds; i++)
		if (strcmp(r->kinds[i], kind) == 0)
			return true;
	return false;
}
