/* pgarr.c - PostgreSQL array literals for unnest($n::type[]) (see pgarr.h).
 *
 * Every ingest transaction formats a few arrays per sample (ids, times, the
 * encoded values as hex, 99 float8/real rollup figures per host), so the
 * elements are written without printf and with one reservation each. */
#include "pgarr.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int arr_begin(struct cbuf *b)
{
	b->len = 0;
	return cbuf_put(b, "{", 1);
}

/* A comma unless the element is the first after "{". */
int arr_sep(struct cbuf *b)
{
	if (b->len && b->p[b->len - 1] == '{')
		return 0;
	return cbuf_put(b, ",", 1);
}

/* The decimal text of v at the end of buf[24]; returns where it starts. */
static char *dec(char *end, long long v)
{
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do
		*--end = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--end = '-';
	return end;
}

int arr_num(struct cbuf *b, long long v)
{
	char num[24], *q = dec(num + sizeof(num), v);
	return arr_sep(b) | cbuf_put(b, q, (size_t)(num + sizeof(num) - q));
}

int arr_text(struct cbuf *b, const char *s)
{
	if (arr_sep(b) < 0 || cbuf_put(b, "\"", 1) < 0)
		return -1;
	/* runs without a quote or backslash go in one piece */
	while (*s) {
		size_t n = strcspn(s, "\"\\");
		if (n && cbuf_put(b, s, n) < 0)
			return -1;
		s += n;
		if (!*s)
			break;
		char esc[2] = { '\\', *s++ };
		if (cbuf_put(b, esc, 2) < 0)
			return -1;
	}
	return cbuf_put(b, "\"", 1);
}

int arr_text_or_null(struct cbuf *b, const char *s)
{
	if (!s)
		return arr_sep(b) | cbuf_put(b, "NULL", 4);
	return arr_text(b, s);
}

int arr_bytea(struct cbuf *b, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	if (!p)
		return arr_sep(b) | cbuf_put(b, "NULL", 4);
	if (arr_sep(b) < 0 || cbuf_put(b, "\"\\\\x", 4) < 0)
		return -1;
	/* hex digits written in chunks (a cbuf_put per byte was the cost) */
	char h[512];
	for (size_t i = 0; i < n;) {
		size_t k = 0;
		for (; i < n && k < sizeof(h); i++) {
			h[k++] = hex[p[i] >> 4];
			h[k++] = hex[p[i] & 15];
		}
		if (cbuf_put(b, h, k) < 0)
			return -1;
	}
	return cbuf_put(b, "\"", 1);
}

/* v as m / 10^k with m an integer of at most 15 digits and k <= 6, when
 * that is exactly v: then "m with k decimals" reads back as v (an exact
 * integer over an exact power of ten, one correctly rounded division, the
 * same rounding strtod does). 0 when v has no such form. */
static size_t short_decimal(double v, char *out)
{
	static const double p10[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6 };

	for (int k = 0; k <= 6; k++) {
		double s = v * p10[k];
		if (!(fabs(s) < 1e15))
			return 0;
		double m = nearbyint(s);
		if (m / p10[k] != v)
			continue;
		char num[32], *end = num + sizeof(num), *q = dec(end, (long long)fabs(m));
		size_t nd = (size_t)(end - q), o = 0;
		if (signbit(v))
			out[o++] = '-';
		if (k == 0) {
			memcpy(out + o, q, nd);
			return o + nd;
		}
		if (nd <= (size_t)k) {	/* 0.000ddd */
			out[o++] = '0';
			out[o++] = '.';
			for (size_t z = nd; z < (size_t)k; z++)
				out[o++] = '0';
			memcpy(out + o, q, nd);
			return o + nd;
		}
		memcpy(out + o, q, nd - (size_t)k);
		o += nd - (size_t)k;
		out[o++] = '.';
		memcpy(out + o, q + nd - k, (size_t)k);
		return o + (size_t)k;
	}
	return 0;
}

int arr_float8(struct cbuf *b, bool null, double v)
{
	char num[40];
	size_t n;

	if (null)
		return arr_sep(b) | cbuf_put(b, "NULL", 4);
	if (!isfinite(v) || !(n = short_decimal(v, num)))
		n = (size_t)snprintf(num, sizeof(num), "%.17g", v);
	return arr_sep(b) | cbuf_put(b, num, n);
}

int arr_end(struct cbuf *b)
{
	return cbuf_put(b, "}", 2);	/* with the terminating NUL */
}
