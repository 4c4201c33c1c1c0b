/* body.c - capped body buffer and capped gunzip (see body.h). */
#include "body.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <zlib.h>

/* Buffers from this size up are mapped pages of their own rather than
 * malloc's: the server raises glibc's mmap threshold (malloc_tune.c), so a
 * multi-megabyte body would otherwise sit in an arena that keeps it after
 * free, and many bodies at once would leave the resident size at the sum
 * of every arena's peak. A mapping goes back to the kernel at release. */
#define BODY_MAP_FROM ((size_t)256 * 1024)

static bool mapped(size_t cap)
{
	return cap >= BODY_MAP_FROM;
}

/* Grows buf from cap to ncap bytes (ncap > cap), moving it between malloc
 * and a mapping when it crosses BODY_MAP_FROM. NULL on failure, buf
 * unchanged. */
static char *grow(char *buf, size_t len, size_t cap, size_t ncap)
{
	if (!mapped(ncap))
		return realloc(buf, ncap);
	if (mapped(cap)) {
		void *p = mremap(buf, cap, ncap, MREMAP_MAYMOVE);
		return p == MAP_FAILED ? NULL : p;
	}
	void *p = mmap(NULL, ncap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (len)
		memcpy(p, buf, len);
	free(buf);
	return p;
}

void body_init(struct body *b, size_t limit)
{
	body_init_budget(b, limit, NULL, 1);
}

void body_init_budget(struct body *b, size_t limit, struct membudget *mb, size_t per_byte)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
	b->mb = mb;
	b->per_byte = per_byte ? per_byte : 1;
}

void body_expect(struct body *b, const char *content_length)
{
	char *end;
	unsigned long long n;

	if (!content_length || *content_length < '0' || *content_length > '9')
		return;
	errno = 0;
	n = strtoull(content_length, &end, 10);
	if (errno == 0 && *end == '\0' && n <= b->limit)
		b->expect = (size_t)n;
}

int body_append(struct body *b, const char *data, size_t len)
{
	if (b->too_big || len > b->limit - b->len) {
		b->too_big = true;
		return BODY_ETOOBIG;
	}
	/* the bytes themselves are reserved, not the buffer's capacity: a
	 * client that stalls holds what it sent (a mapped buffer's unwritten
	 * pages are not resident; a small one's slack is under BODY_MAP_FROM) */
	size_t need = len * b->per_byte;
	size_t small = b->mb ? b->mb->limit / (b->per_byte == 1 ? 1024 : 64) : 0;
	if (!membudget_take_small(b->mb, need, b->held + b->also_held, small))
		return BODY_EBUSY;
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap
			     : b->expect >= 4096 && !mapped(b->expect + 1) ? b->expect + 1 : 4096;
		while (cap < b->len + len + 1)
			cap *= 2;
		if (cap > b->limit + 1)
			cap = b->limit + 1;
		char *grown = grow(b->buf, b->len, b->cap, cap);
		if (!grown) {
			membudget_give(b->mb, need);
			return BODY_ENOMEM;
		}
		b->buf = grown;
		b->cap = cap;
	}
	b->held += need;
	memcpy(b->buf + b->len, data, len);
	b->len += len;
	b->buf[b->len] = '\0';
	return BODY_OK;
}

bool body_reserve(struct body *b, size_t n)
{
	if (!membudget_take(b->mb, n, b->held + b->also_held))
		return false;
	b->held += n;
	return true;
}

void body_keep_reservation(struct body *b, size_t n)
{
	if (n > b->held)
		membudget_force(b->mb, n - b->held);
	else
		membudget_give(b->mb, b->held - n);
	if (b->buf && mapped(b->cap))
		munmap(b->buf, b->cap);
	else
		free(b->buf);
	b->buf = NULL;
	b->len = b->cap = 0;
	b->held = n;
}

void body_release(struct body *b)
{
	membudget_give(b->mb, b->held);
	if (b->buf && mapped(b->cap))
		munmap(b->buf, b->cap);
	else
		free(b->buf);
	memset(b, 0, sizeof(*b));
}

int body_check_content_length(const char *value, size_t limit)
{
	unsigned long long n = 0;

	if (!value)
		return BODY_OK;
	while (*value == ' ' || *value == '\t')
		value++;
	if (!isdigit((unsigned char)*value))
		return BODY_ECORRUPT;
	for (; isdigit((unsigned char)*value); value++) {
		n = n * 10 + (unsigned)(*value - '0');
		if (n > limit)
			return BODY_ETOOBIG;
	}
	while (*value == ' ' || *value == '\t')
		value++;
	return *value ? BODY_ECORRUPT : BODY_OK;
}

int body_encoding(const char *value)
{
	if (!value || !*value || strcasecmp(value, "identity") == 0)
		return 0;
	if (strcasecmp(value, "gzip") == 0 || strcasecmp(value, "x-gzip") == 0)
		return 1;
	return -1;
}

/* Inflates through a small stack buffer into body_append, so that the
 * output's limit and budget are enforced in one place. */
int body_gunzip(const char *in, size_t inlen, struct body *out)
{
	z_stream zs;
	unsigned char chunk[16384];
	int rc, ret = BODY_OK;
	bool busy = false;	/* the budget refused: count the rest, keep nothing */
	size_t total = 0;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)	/* 16: gzip wrapper only */
		return BODY_ENOMEM;
	zs.next_in = (Bytef *)in;
	zs.avail_in = 0;
	size_t in_left = inlen;
	for (;;) {
		/* feed at most 1 GiB at a time: avail_in is a uInt */
		if (zs.avail_in == 0 && in_left) {
			zs.avail_in = in_left > 1u << 30 ? 1u << 30 : (uInt)in_left;
			in_left -= zs.avail_in;
		}
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		rc = inflate(&zs, Z_NO_FLUSH);
		size_t got = sizeof(chunk) - zs.avail_out;
		total += got;
		if (busy && total > out->limit) {
			ret = BODY_ETOOBIG;
			out->too_big = true;
			break;
		}
		if (got && !busy) {
			ret = body_append(out, (const char *)chunk, got);
			if (ret == BODY_EBUSY)
				busy = true;
			else if (ret != BODY_OK)
				break;
		}
		if (rc == Z_STREAM_END) {
			if (zs.avail_in || in_left)
				ret = BODY_ECORRUPT;	/* trailing data after the gzip member */
			break;
		}
		if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0) {
			ret = BODY_ECORRUPT;	/* truncated */
			break;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			ret = rc == Z_MEM_ERROR ? BODY_ENOMEM : BODY_ECORRUPT;
			break;
		}
	}
	inflateEnd(&zs);
	if (ret == BODY_OK && !out->buf)
		ret = body_append(out, "", 0);	/* an empty stream: still a buffer */
	return ret;
}
