/* memq.c - a bounded in-memory queue of samples (see memq.h). */
#include "memq.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HDR sizeof(uint32_t)

void memq_init(struct memq *q)
{
	memset(q, 0, sizeof(*q));
	q->rec = SIZE_MAX;
}

void memq_release(struct memq *q)
{
	free(q->buf);
	memq_init(q);
}

bool memq_empty(const struct memq *q)
{
	return q->n == 0;
}

static uint32_t rec_len(const struct memq *q, size_t off)
{
	uint32_t l;

	memcpy(&l, q->buf + off, HDR);
	return l;
}

void memq_pop(struct memq *q, size_t k)
{
	while (k-- > 0 && q->n > 0) {
		q->head += HDR + rec_len(q, q->head);
		q->n--;
		if (q->pinned)
			q->pinned--;
	}
	if (q->n == 0 && q->rec == SIZE_MAX) {
		free(q->buf);	/* nothing kept: give the memory back */
		q->buf = NULL;
		q->head = q->len = 0;
	}
}

/* Makes room for need more bytes at the end: moves the live bytes to the
 * front, then drops the oldest records not in flight. Returns false when
 * the room cannot be made. */
static bool make_room(struct memq *q, size_t need)
{
	if (!q->buf && !(q->buf = malloc(MEMQ_MAX_BYTES)))
		return false;
	while (q->len + need > MEMQ_MAX_BYTES) {
		if (q->head > 0) {
			memmove(q->buf, q->buf + q->head, q->len - q->head);
			q->len -= q->head;
			if (q->rec != SIZE_MAX)
				q->rec -= q->head;
			q->head = 0;
			continue;
		}
		if (q->n <= q->pinned)
			return false;	/* only the record being added, or records in flight */
		/* the oldest record not in flight goes: after the pinned ones */
		size_t off = 0;
		for (size_t i = 0; i < q->pinned; i++)
			off += HDR + rec_len(q, off);
		size_t l = HDR + rec_len(q, off);
		memmove(q->buf + off, q->buf + off + l, q->len - off - l);
		q->len -= l;
		if (q->rec != SIZE_MAX)
			q->rec -= l;
		q->n--;
		q->dropped++;
	}
	return true;
}

void memq_rec_begin(struct memq *q)
{
	q->rec_failed = !make_room(q, HDR);
	if (q->rec_failed)
		return;
	q->rec = q->len;
	q->len += HDR;
}

void memq_rec_add(struct memq *q, const char *p, size_t n)
{
	if (q->rec_failed || n == 0)
		return;
	if (!make_room(q, n)) {
		q->rec_failed = true;
		return;
	}
	memcpy(q->buf + q->len, p, n);
	q->len += n;
}

void memq_rec_cancel(struct memq *q)
{
	if (q->rec != SIZE_MAX)
		q->len = q->rec;
	q->rec = SIZE_MAX;
	q->rec_failed = false;
	memq_pop(q, 0);
}

bool memq_rec_end(struct memq *q)
{
	if (q->rec_failed || q->rec == SIZE_MAX) {
		if (q->rec != SIZE_MAX)
			q->len = q->rec;	/* cut what was added */
		q->rec = SIZE_MAX;
		q->rec_failed = false;
		q->dropped++;
		memq_pop(q, 0);	/* frees the buffer when nothing else is kept */
		return false;
	}
	size_t l = q->len - q->rec - HDR;
	if (l > 0 && q->buf[q->len - 1] == '\n') {
		l--;
		q->len--;
	}
	uint32_t l32 = (uint32_t)l;
	memcpy(q->buf + q->rec, &l32, HDR);
	q->rec = SIZE_MAX;
	q->n++;
	return true;
}

int memq_peek(const struct memq *q, size_t max_n, size_t max_bytes,
	      int (*fn)(void *ctx, const char *rec, size_t len), void *ctx, size_t *n)
{
	size_t off = q->head, bytes = 0;

	*n = 0;
	while (*n < q->n && *n < max_n) {
		uint32_t l = rec_len(q, off);
		if (*n > 0 && bytes + l > max_bytes)
			break;
		if (fn(ctx, q->buf + off + HDR, l) < 0)
			return -1;
		bytes += l;
		off += HDR + l;
		(*n)++;
	}
	return 0;
}
