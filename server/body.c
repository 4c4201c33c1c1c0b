/* body.c - capped body buffer and capped gunzip (see body.h). */
#include "body.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

void body_init(struct body *b, size_t limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}

int body_append(struct body *b, const char *data, size_t len)
{
	if (b->too_big || len > b->limit - b->len) {
		b->too_big = true;
		return BODY_ETOOBIG;
	}
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 16384;
		while (cap < b->len + len + 1)
			cap *= 2;
		if (cap > b->limit + 1)
			cap = b->limit + 1;
		char *grown = realloc(b->buf, cap);
		if (!grown)
			return BODY_ENOMEM;
		b->buf = grown;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, data, len);
	b->len += len;
	b->buf[b->len] = '\0';
	return BODY_OK;
}

void body_release(struct body *b)
{
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

int body_gunzip(const char *in, size_t inlen, size_t limit, char **out, size_t *outlen)
{
	z_stream zs;
	size_t cap = inlen * 4 + 4096;
	char *buf;
	int rc, ret = BODY_OK;

	*out = NULL;
	*outlen = 0;
	if (cap > limit + 1)
		cap = limit + 1;
	buf = malloc(cap);
	if (!buf)
		return BODY_ENOMEM;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {	/* 16: gzip wrapper only */
		free(buf);
		return BODY_ENOMEM;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)0;
	size_t in_left = inlen;
	for (;;) {
		/* feed at most UINT_MAX at a time: avail_in is a uInt */
		if (zs.avail_in == 0 && in_left) {
			zs.avail_in = in_left > 1u << 30 ? 1u << 30 : (uInt)in_left;
			in_left -= zs.avail_in;
		}
		if (zs.total_out >= limit) {
			/* output is at the limit: one more byte means too big */
			char probe;
			zs.next_out = (Bytef *)&probe;
			zs.avail_out = 1;
			rc = inflate(&zs, Z_NO_FLUSH);
			if (zs.avail_out == 0) {
				ret = BODY_ETOOBIG;
				break;
			}
		} else {
			if (zs.total_out + 1 >= cap) {
				size_t ncap = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
				char *grown = realloc(buf, ncap);
				if (!grown) {
					ret = BODY_ENOMEM;
					break;
				}
				buf = grown;
				cap = ncap;
			}
			zs.next_out = (Bytef *)buf + zs.total_out;
			/* keep one byte for the NUL and never pass the limit */
			size_t room = cap - 1 - zs.total_out;
			if (room > limit - zs.total_out)
				room = limit - zs.total_out;
			zs.avail_out = (uInt)(room > 1u << 30 ? 1u << 30 : room);
			rc = inflate(&zs, Z_NO_FLUSH);
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
	size_t n = zs.total_out;
	inflateEnd(&zs);
	if (ret != BODY_OK) {
		free(buf);
		return ret;
	}
	buf[n] = '\0';
	*out = buf;
	*outlen = n;
	return BODY_OK;
}
