/* pgarr.c - PostgreSQL array literals for unnest($n::type[]) (see pgarr.h). */
#include "pgarr.h"

#include <stdio.h>

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

int arr_num(struct cbuf *b, long long v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%lld", v);
	return arr_sep(b) | cbuf_put(b, num, (size_t)n);
}

int arr_text(struct cbuf *b, const char *s)
{
	if (arr_sep(b) < 0 || cbuf_put(b, "\"", 1) < 0)
		return -1;
	for (; *s; s++) {
		if ((*s == '"' || *s == '\\') && cbuf_put(b, "\\", 1) < 0)
			return -1;
		if (cbuf_put(b, s, 1) < 0)
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
	for (size_t i = 0; i < n; i++) {
		char h[2] = { hex[p[i] >> 4], hex[p[i] & 15] };
		if (cbuf_put(b, h, 2) < 0)
			return -1;
	}
	return cbuf_put(b, "\"", 1);
}

int arr_end(struct cbuf *b)
{
	return cbuf_put(b, "}", 2);	/* with the terminating NUL */
}
