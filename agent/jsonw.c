/* jsonw.c - streaming JSON writer (see jsonw.h). */
#include "jsonw.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void jw_init(struct jw *w, char *buf, size_t cap, int fd)
{
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->cap = cap;
	w->fd = fd;
	w->first[0] = true;
}

int jw_flush(struct jw *w)
{
	size_t off = 0;

	if (w->err || (w->fd < 0 && !w->tee))
		return w->err;
	if (w->tee && w->len)
		w->tee(w->tee_ctx, w->buf, w->len);
	if (w->fd < 0) {	/* the tee is the only sink */
		w->len = 0;
		return 0;
	}
	while (off < w->len) {
		ssize_t n = write(w->fd, w->buf + off, w->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			w->err = -errno;
			return w->err;
		}
		off += (size_t)n;
	}
	w->len = 0;
	return 0;
}

static void put(struct jw *w, const char *s, size_t n)
{
	while (n && !w->err) {
		size_t room = w->cap - w->len;
		if (room == 0) {
			if (w->fd < 0 && !w->tee) {
				w->err = -ENOSPC;
				return;
			}
			if (jw_flush(w) < 0)
				return;
			continue;
		}
		size_t k = n < room ? n : room;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		w->total += k;
		s += k;
		n -= k;
	}
}

static void putc1(struct jw *w, char c)
{
	if (!w->err && w->len < w->cap) {
		w->buf[w->len++] = c;
		w->total++;
		return;
	}
	put(w, &c, 1);
}

/* Emits the separating comma before a value or key at the current depth. */
static void sep(struct jw *w)
{
	if (w->first[w->depth])
		w->first[w->depth] = false;
	else
		putc1(w, ',');
}

static void open_(struct jw *w, char c)
{
	putc1(w, c);
	if (w->depth + 1 >= JW_MAX_DEPTH) {
		w->err = w->err ? w->err : -E2BIG;
		return;
	}
	w->depth++;
	w->first[w->depth] = true;
}

static void close_(struct jw *w, char c)
{
	if (w->depth > 0)
		w->depth--;
	putc1(w, c);
}

void jw_obj_begin(struct jw *w)
{
	if (!w->after_key)
		sep(w);
	w->after_key = false;
	open_(w, '{');
}

void jw_obj_end(struct jw *w)
{
	close_(w, '}');
}

void jw_arr_begin(struct jw *w)
{
	if (!w->after_key)
		sep(w);
	w->after_key = false;
	open_(w, '[');
}

void jw_arr_end(struct jw *w)
{
	close_(w, ']');
}

static void put_escaped(struct jw *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	putc1(w, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		put(w, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': put(w, "\\\"", 2); break;
		case '\\': put(w, "\\\\", 2); break;
		case '\n': put(w, "\\n", 2); break;
		case '\t': put(w, "\\t", 2); break;
		case '\r': put(w, "\\r", 2); break;
		default: {
			char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			put(w, u, 6);
		}
		}
	}
	put(w, s + run, n - run);
	putc1(w, '"');
}

void jw_key(struct jw *w, const char *s, size_t n)
{
	sep(w);
	put_escaped(w, s, n);
	putc1(w, ':');
	w->after_key = true;
}

void jw_keyz(struct jw *w, const char *s)
{
	sep(w);
	putc1(w, '"');
	put(w, s, strlen(s));
	put(w, "\":", 2);
	w->after_key = true;
}

/* Common prologue of a scalar value. */
static void value(struct jw *w)
{
	if (!w->after_key)
		sep(w);
	w->after_key = false;
}

void jw_str(struct jw *w, const char *s, size_t n)
{
	value(w);
	put_escaped(w, s, n);
}

/* Formats v at the end of tmp[24]; returns where it starts. */
static size_t fmt_int(char tmp[24], int64_t v)
{
	size_t i = 24;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--i] = '-';
	return i;
}

void jw_int(struct jw *w, int64_t v)
{
	char tmp[24];
	size_t i = fmt_int(tmp, v);

	value(w);
	put(w, tmp + i, sizeof(tmp) - i);
}

void jw_key_num(struct jw *w, const char *k, size_t n, const char *num, size_t vn)
{
	/* ",\"" + key + "\":" + value: written in place when it fits */
	if (w->err || w->cap - w->len < n + vn + 4) {
		sep(w);
		putc1(w, '"');
		put(w, k, n);
		put(w, "\":", 2);
		w->after_key = false;
		put(w, num, vn);
		return;
	}
	char *o = w->buf + w->len;
	if (w->first[w->depth])
		w->first[w->depth] = false;
	else
		*o++ = ',';
	*o++ = '"';
	memcpy(o, k, n);
	o += n;
	*o++ = '"';
	*o++ = ':';
	memcpy(o, num, vn);
	o += vn;
	w->total += (size_t)(o - (w->buf + w->len));
	w->len = (size_t)(o - w->buf);
	w->after_key = false;
}

void jw_key_int(struct jw *w, const char *k, size_t n, int64_t v)
{
	char tmp[24];
	size_t i = fmt_int(tmp, v);

	jw_key_num(w, k, n, tmp + i, sizeof(tmp) - i);
}

void jw_null(struct jw *w)
{
	value(w);
	put(w, "null", 4);
}

void jw_bool(struct jw *w, bool b)
{
	value(w);
	if (b)
		put(w, "true", 4);
	else
		put(w, "false", 5);
}

void jw_raw_number(struct jw *w, const char *s, size_t n)
{
	value(w);
	put(w, s, n);
}

void jw_raw(struct jw *w, const char *s, size_t n)
{
	put(w, s, n);
}
