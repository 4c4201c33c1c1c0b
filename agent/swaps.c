/* swaps.c - /proc/swaps summed per kind of swap device (see swaps.h). */
#include "swaps.h"

#include <string.h>

#define MAX_FIELDS 5	/* NAME TYPE SIZE USED PRIORITY */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

bool swaps_is_zram(const char *name, size_t len)
{
	const char *base = name;
	size_t n;

	for (size_t i = 0; i < len; i++)
		if (name[i] == '/')
			base = name + i + 1;
	n = (size_t)(name + len - base);
	if (n < 5 || memcmp(base, "zram", 4) != 0)
		return false;
	for (size_t i = 4; i < n; i++)
		if (base[i] < '0' || base[i] > '9')
			return false;
	return true;
}

/* Decimal digits [s, s+n) into *v, at most 2^63-1; false otherwise. */
static bool parse_u63(const char *s, size_t n, int64_t *v)
{
	uint64_t x = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (x > ((uint64_t)INT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	*v = (int64_t)x;
	return true;
}

/* A priority as swap_show prints it (%d): an optional '-', digits, within
 * an int. */
static bool parse_priority(const char *s, size_t n, int64_t *v)
{
	bool neg = n > 0 && s[0] == '-';
	int64_t x;

	if (!parse_u63(s + neg, n - neg, &x) || x > 2147483648LL || (!neg && x > 2147483647LL))
		return false;
	*v = neg ? -x : x;
	return true;
}

static bool is_type_word(const char *s, size_t n)
{
	if (n == 0 || n > SWAP_KIND_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 'a' || s[i] > 'z')
			return false;
	return true;
}

/* The kind named name[0..n), added when there is room; NULL when full. */
static struct swap_kind *kind_of(struct swap_summary *s, const char *name, size_t n)
{
	for (int i = 0; i < s->nkinds; i++)
		if (strlen(s->kind[i].name) == n && !memcmp(s->kind[i].name, name, n))
			return &s->kind[i];
	if (s->nkinds == SWAP_KINDS_MAX)
		return NULL;
	struct swap_kind *k = &s->kind[s->nkinds++];
	memcpy(k->name, name, n);
	k->name[n] = '\0';
	return k;
}

/* One device line [p, e): true when it was understood and counted. */
static bool parse_line(struct swap_summary *s, const char *p, const char *e)
{
	const char *f[MAX_FIELDS];	/* the last fields, right to left */
	size_t fl[MAX_FIELDS];
	int nf = 0;
	const char *name_end = e;
	int64_t size, used, prio;

	/* right to left: PRIORITY USED SIZE TYPE, then the rest is NAME
	 * (escaped by the kernel, but a recorded tree may hold blanks) */
	while (e > p && nf < MAX_FIELDS - 1) {
		while (e > p && is_blank(e[-1]))
			e--;
		const char *b = e;
		while (b > p && !is_blank(b[-1]))
			b--;
		if (b == e)
			break;
		f[nf] = b;
		fl[nf++] = (size_t)(e - b);
		e = b;
		name_end = b;
	}
	while (p < name_end && is_blank(*p))
		p++;
	while (name_end > p && is_blank(name_end[-1]))
		name_end--;
	if (nf < MAX_FIELDS - 1 || name_end == p)
		return false;
	if (!parse_priority(f[0], fl[0], &prio) || !parse_u63(f[1], fl[1], &used) ||
	    !parse_u63(f[2], fl[2], &size) || !is_type_word(f[3], fl[3]))
		return false;

	struct swap_kind *k;
	if (fl[3] == 9 && !memcmp(f[3], "partition", 9) &&
	    swaps_is_zram(p, (size_t)(name_end - p)))
		k = kind_of(s, "zram", 4);
	else
		k = kind_of(s, f[3], fl[3]);
	if (!k)
		return false;
	int64_t size_sum, used_sum;
	if (__builtin_add_overflow(k->size_kb, size, &size_sum) ||
	    __builtin_add_overflow(k->used_kb, used, &used_sum))
		return false;
	k->size_kb = size_sum;
	k->used_kb = used_sum;
	k->devices++;
	s->devices++;
	if (prio >= 0 && (!k->has_priority || prio > k->priority)) {
		k->priority = prio;
		k->has_priority = true;
	}
	return true;
}

void swaps_parse(const struct rbuf *rb, struct swap_summary *out)
{
	static const char *const known[] = { "partition", "file", "zram" };
	const char *p = rb->p ? rb->p : "", *end = p + (rb->p ? rb->len : 0);
	bool first = true;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		kind_of(out, known[i], strlen(known[i]));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		const char *q = p;

		while (q < e && is_blank(*q))
			q++;
		bool header = first && (size_t)(e - q) >= 8 && !memcmp(q, "Filename", 8);
		first = false;
		if (q < e && !header && !parse_line(out, q, e)) {
			if (!out->bad) {
				out->first_bad = q;
				out->first_bad_len = (size_t)(e - q);
			}
			out->bad++;
		}
		p = nl ? nl + 1 : end;
	}
}
