/* pgbin.c - binary array parameters (see pgbin.h). */
#include "pgbin.h"

#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

/* Header of a one-dimensional array: ndim, has-nulls flag, element type,
 * then (size, lower bound) of the dimension. Size and flag are patched by
 * pgbin_bytea_end/add. */
enum { H_NDIM, H_FLAGS, H_TYPE, H_SIZE, H_LBOUND, H_N };
#define BYTEA_OID 17
#define PARAM_MAX (1u << 30)

static void put_at(struct cbuf *b, int field, uint32_t v)
{
	uint32_t x = htonl(v);
	memcpy(b->p + field * 4, &x, 4);
}

static uint32_t get_at(const struct cbuf *b, int field)
{
	uint32_t x;
	memcpy(&x, b->p + field * 4, 4);
	return ntohl(x);
}

int pgbin_bytea_begin(struct cbuf *b)
{
	uint32_t h[H_N] = { htonl(1), 0, htonl(BYTEA_OID), 0, htonl(1) };
	b->len = 0;
	return cbuf_put(b, h, sizeof(h));
}

int pgbin_bytea_add(struct cbuf *b, const uint8_t *p, size_t n)
{
	if (b->len < H_N * 4 || n > PARAM_MAX || b->len + n + 4 > PARAM_MAX)
		return -1;
	uint32_t len = htonl(p ? (uint32_t)n : 0xffffffffu);	/* -1: NULL */
	if (cbuf_put(b, &len, 4) < 0 || (p && n && cbuf_put(b, p, n) < 0))
		return -1;
	put_at(b, H_SIZE, get_at(b, H_SIZE) + 1);
	if (!p)
		put_at(b, H_FLAGS, 1);
	return 0;
}

int pgbin_bytea_end(struct cbuf *b)
{
	if (b->len < H_N * 4)
		return -1;
	if (get_at(b, H_SIZE) == 0)
		b->len = 12;	/* an empty array: ndim 0, flags, type and nothing else */
	if (b->len == 12)
		put_at(b, H_NDIM, 0);
	return 0;
}

int pgbin_grid_begin(struct cbuf *b, enum pgbin_elem type, size_t rows, size_t cols)
{
	if (!rows || !cols || rows > INT32_MAX / cols)
		return -1;
	/* ndim, no NULLs, element type, then (size, lower bound) per dimension */
	uint32_t h[7] = { htonl(2), 0, htonl((uint32_t)type), htonl((uint32_t)rows), htonl(1),
			  htonl((uint32_t)cols), htonl(1) };
	size_t elem = type == PGBIN_INT2 ? 2 : type == PGBIN_FLOAT4 ? 4 : 8;
	if (sizeof(h) + rows * cols * (4 + elem) > PARAM_MAX)
		return -1;
	b->len = 0;
	return cbuf_put(b, h, sizeof(h));
}

/* One element: its length, then its bytes in network order. */
static int grid_put(struct cbuf *b, const void *be, uint32_t n)
{
	uint32_t len = htonl(n);
	return cbuf_put(b, &len, 4) < 0 || cbuf_put(b, be, n) < 0 ? -1 : 0;
}

int pgbin_grid_i16(struct cbuf *b, int16_t v)
{
	uint16_t x = htons((uint16_t)v);
	return grid_put(b, &x, 2);
}

int pgbin_grid_f32(struct cbuf *b, float v)
{
	uint32_t x;
	memcpy(&x, &v, 4);
	x = htonl(x);
	return grid_put(b, &x, 4);
}

int pgbin_grid_f64(struct cbuf *b, double v)
{
	uint64_t x;
	memcpy(&x, &v, 8);
	x = htobe64(x);
	return grid_put(b, &x, 8);
}
