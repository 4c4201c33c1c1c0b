/* codec.c - varint delta encoding of sample values (see codec.h). */
#include "codec.h"

#include <stdlib.h>
#include <string.h>

void cbuf_init(struct cbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void cbuf_release(struct cbuf *b)
{
	free(b->p);
	cbuf_init(b);
}

static int cbuf_reserve(struct cbuf *b, size_t n)
{
	if (n > CODEC_MAX_BYTES || b->len > CODEC_MAX_BYTES - n)
		return -1;
	if (b->len + n <= b->cap)
		return 0;
	size_t ncap = b->cap ? b->cap : 256;
	while (ncap < b->len + n)
		ncap *= 2;
	uint8_t *np = realloc(b->p, ncap);
	if (!np)
		return -1;
	b->p = np;
	b->cap = ncap;
	return 0;
}

int cbuf_put(struct cbuf *b, const void *data, size_t n)
{
	if (n == 0)
		return 0;
	if (cbuf_reserve(b, n) < 0)
		return -1;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

int cbuf_put_uvarint(struct cbuf *b, uint64_t v)
{
	/* called for every changed value of every sample: the room check
	 * inline, the call only when the buffer must grow (or is at the cap) */
	if ((b->cap - b->len < 10 || b->len > CODEC_MAX_BYTES - 10) && cbuf_reserve(b, 10) < 0)
		return -1;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
	return 0;
}

int codec_get_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	const uint8_t *q = *p;

	for (int shift = 0; shift < 64; shift += 7) {
		if (q >= end)
			return -1;
		uint8_t c = *q++;
		if (shift == 63 && c > 1)
			return -1;
		r |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*p = q;
			*v = r;
			return 0;
		}
	}
	return -1;
}

static int put_entry(struct cbuf *out, uint32_t *last, uint32_t id, int tag)
{
	uint64_t key = ((uint64_t)(id - *last) << 2) | (uint64_t)tag;
	*last = id;
	return cbuf_put_uvarint(out, key);
}

/* Writes what turns base (has_b, bv) into the present value v. */
static int put_change(struct cbuf *out, uint32_t *last, uint32_t id, int has_b, int64_t bv, int64_t v)
{
	if (has_b && bv == v)
		return 0;
	if (v == SAMPLE_NULL)
		return put_entry(out, last, id, CODEC_NULL);
	uint64_t b = (has_b && bv != SAMPLE_NULL) ? (uint64_t)bv : 0;
	if (put_entry(out, last, id, CODEC_VALUE) < 0)
		return -1;
	return cbuf_put_uvarint(out, codec_zigzag((int64_t)((uint64_t)v - b)));
}

int codec_encode(struct cbuf *out, const struct sfield *cur, size_t ncur,
		 const struct sfield *base, size_t nbase)
{
	size_t i = 0, j = 0;
	uint32_t last = 0;

	while (i < ncur || j < nbase) {
		int rc;
		if (j == nbase || (i < ncur && cur[i].id < base[j].id)) {
			rc = put_change(out, &last, cur[i].id, 0, 0, cur[i].v);
			i++;
		} else if (i == ncur || base[j].id < cur[i].id) {
			rc = put_entry(out, &last, base[j].id, CODEC_REMOVED);
			j++;
		} else {
			rc = put_change(out, &last, cur[i].id, 1, base[j].v, cur[i].v);
			i++;
			j++;
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Reads one entry; returns 1 with id/tag/delta, 0 at the end, -1 when
 * malformed. */
static int next_entry(const uint8_t **p, const uint8_t *end, uint32_t *id, int *tag, int64_t *delta)
{
	uint64_t key, d;

	if (*p == end)
		return 0;
	if (codec_get_uvarint(p, end, &key) < 0)
		return -1;
	uint64_t nid = (uint64_t)*id + (key >> 2);
	if ((key >> 2) == 0 && *id != 0)
		return -1;	/* ids strictly increase */
	if (nid > UINT32_MAX || nid == 0)
		return -1;
	*id = (uint32_t)nid;
	*tag = (int)(key & 3);
	*delta = 0;
	if (*tag == CODEC_VALUE) {
		if (codec_get_uvarint(p, end, &d) < 0)
			return -1;
		*delta = codec_unzigzag(d);
	} else if (*tag != CODEC_NULL && *tag != CODEC_REMOVED) {
		return -1;
	}
	return 1;
}

int codec_apply(const uint8_t *p, size_t len, const struct sfield *base, size_t nbase,
		struct sset *out)
{
	const uint8_t *end = p + len;
	uint32_t id = 0;
	int tag = 0;
	int64_t delta = 0;
	size_t j = 0;
	int rc;

	out->n = 0;
	while ((rc = next_entry(&p, end, &id, &tag, &delta)) == 1) {
		for (; j < nbase && base[j].id < id; j++)
			if (sset_add(out, base[j].id, base[j].v) < 0)
				return -1;
		int has_b = j < nbase && base[j].id == id;
		int64_t bv = has_b ? base[j].v : 0;
		if (has_b)
			j++;
		if (tag == CODEC_REMOVED)
			continue;
		int64_t v = tag == CODEC_NULL ? SAMPLE_NULL : codec_resolve(has_b, bv, delta);
		if (sset_add(out, id, v) < 0)
			return -1;
	}
	if (rc < 0)
		return -1;
	for (; j < nbase; j++)
		if (sset_add(out, base[j].id, base[j].v) < 0)
			return -1;
	return 0;
}

int codec_find(const uint8_t *p, size_t len, uint32_t want, int64_t *delta)
{
	const uint8_t *end = p + len;
	uint32_t id = 0;
	int tag = 0;
	int rc;

	*delta = 0;
	while ((rc = next_entry(&p, end, &id, &tag, delta)) == 1) {
		if (id < want)
			continue;
		if (id > want)
			break;
		return tag == CODEC_VALUE ? CODEC_F_VALUE : tag == CODEC_NULL ? CODEC_F_NULL : CODEC_F_REMOVED;
	}
	if (rc < 0)
		return -1;
	*delta = 0;
	return CODEC_F_UNCHANGED;
}

int codec_cg_encode(struct cbuf *out, const struct codec_cgref *cur, size_t ncur,
		    const struct codec_cgref *base, size_t nbase)
{
	struct cbuf sec;
	uint32_t last = 0;
	size_t j = 0;
	int rc = 0;

	cbuf_init(&sec);
	for (size_t i = 0; i < ncur && rc == 0; i++) {
		while (j < nbase && base[j].id < cur[i].id)
			j++;
		int has_b = j < nbase && base[j].id == cur[i].id;
		sec.len = 0;
		rc = codec_encode(&sec, cur[i].f, cur[i].n, has_b ? base[j].f : NULL, has_b ? base[j].n : 0);
		if (rc == 0)
			rc = cbuf_put_uvarint(out, (uint64_t)(cur[i].id - last));
		if (rc == 0)
			rc = cbuf_put_uvarint(out, sec.len);
		if (rc == 0)
			rc = cbuf_put(out, sec.p, sec.len);
		last = cur[i].id;
	}
	cbuf_release(&sec);
	return rc;
}

int codec_cg_next(const uint8_t *p, size_t len, size_t *pos, uint32_t *id,
		  const uint8_t **sec, size_t *seclen)
{
	const uint8_t *q = p + *pos, *end = p + len;
	uint64_t d, n;

	if (*pos >= len)
		return 0;
	if (codec_get_uvarint(&q, end, &d) < 0 || codec_get_uvarint(&q, end, &n) < 0)
		return -1;
	if ((d == 0 && *pos != 0) || (uint64_t)*id + d > UINT32_MAX || (uint64_t)*id + d == 0)
		return -1;
	if (n > (uint64_t)(end - q))
		return -1;
	*id = (uint32_t)((uint64_t)*id + d);
	*sec = q;
	*seclen = (size_t)n;
	*pos = (size_t)(q + n - p);
	return 1;
}

int codec_cg_find(const uint8_t *p, size_t len, uint32_t want, const uint8_t **sec, size_t *seclen)
{
	size_t pos = 0;
	uint32_t id = 0;
	int rc;

	while ((rc = codec_cg_next(p, len, &pos, &id, sec, seclen)) == 1) {
		if (id == want)
			return 1;
		if (id > want)
			return 0;
	}
	return rc;
}
