/* test_pgcopy.c - server/store/pgcopy.c's parser of binary COPY data on byte
 * streams built by hand: the header with and without an extension, rows
 * of int4, int8, float8 and NULL fields, the trailer, and every way the
 * data can be cut short or be inconsistent (errors, never reads past the
 * buffer: run under ASan in make test). */
#include "pgcopy.h"
#include "harness.h"

#include <endian.h>
#include <math.h>
#include <string.h>

struct buf {
	uint8_t b[512];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void i16(struct buf *b, int16_t v)
{
	uint16_t u = htobe16((uint16_t)v);
	put(b, &u, 2);
}

static void i32(struct buf *b, int32_t v)
{
	uint32_t u = htobe32((uint32_t)v);
	put(b, &u, 4);
}

static void i64(struct buf *b, int64_t v)
{
	uint64_t u = htobe64((uint64_t)v);
	put(b, &u, 8);
}

static void f64(struct buf *b, double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	i64(b, (int64_t)u);
}

static void header(struct buf *b, int ext)
{
	put(b, "PGCOPY\n\377\r\n", 11);
	i32(b, 0);
	i32(b, ext);
	for (int i = 0; i < ext; i++)
		put(b, "x", 1);
}

/* a row (host id, bucket, value or NULL when isnan) */
static void row(struct buf *b, int32_t id, int64_t bucket, double v)
{
	i16(b, 3);
	i32(b, 4);
	i32(b, id);
	i32(b, 8);
	i64(b, bucket);
	if (isnan(v)) {
		i32(b, -1);
	} else {
		i32(b, 8);
		f64(b, v);
	}
}

struct seen {
	int rows;
	int32_t id[8];
	int64_t bucket[8];
	double v[8];
	int stop_at;	/* return 7 at this row (1-based), 0 never */
};

static int on_row(void *ctx, const struct pgcopy_field *f, int nf)
{
	struct seen *s = ctx;
	if (nf != 3 || s->rows >= 8)
		return 9;
	s->id[s->rows] = pgcopy_i32(f[0].p);
	s->bucket[s->rows] = pgcopy_i64(f[1].p);
	s->v[s->rows] = f[2].p ? pgcopy_f64(f[2].p) : NAN;
	s->rows++;
	return s->rows == s->stop_at ? 7 : 0;
}

static int parse(const struct buf *b, size_t len, struct seen *s, char *err)
{
	struct pgcopy_parser ps;
	pgcopy_init(&ps, 3);
	memset(s, 0, sizeof(*s));
	return pgcopy_parse(&ps, b->b, len, on_row, s, err, 128);
}

int main(void)
{
	struct buf b = { .n = 0 };
	struct seen s;
	char err[128];

	/* header (with a 3-byte extension) and two rows in the first message,
	 * a third row and the trailer in later ones, as PostgreSQL sends them */
	header(&b, 3);
	row(&b, 7, 1764547200000LL, 2.5);
	row(&b, -1, -300000LL, NAN);
	struct pgcopy_parser ps;
	pgcopy_init(&ps, 3);
	memset(&s, 0, sizeof(s));
	CHECK_INT(pgcopy_parse(&ps, b.b, b.n, on_row, &s, err, sizeof(err)), 0);
	CHECK_INT(s.rows, 2);
	CHECK_INT(s.id[0], 7);
	CHECK_INT(s.bucket[0], 1764547200000LL);
	CHECK(s.v[0] == 2.5);
	CHECK_INT(s.id[1], -1);
	CHECK_INT(s.bucket[1], -300000LL);
	CHECK(isnan(s.v[1]));
	struct buf m = { .n = 0 };
	row(&m, 1 << 30, INT64_MAX, -1e300);
	CHECK_INT(pgcopy_parse(&ps, m.b, m.n, on_row, &s, err, sizeof(err)), 0);
	CHECK_INT(s.rows, 3);
	CHECK_INT(s.id[2], 1 << 30);
	CHECK(s.bucket[2] == INT64_MAX);
	CHECK(s.v[2] == -1e300);
	CHECK(!ps.ended);
	m.n = 0;
	i16(&m, -1);
	CHECK_INT(pgcopy_parse(&ps, m.b, m.n, on_row, &s, err, sizeof(err)), 0);
	CHECK(ps.ended);
	/* nothing may follow the trailer */
	m.n = 0;
	row(&m, 1, 2, 3);
	CHECK_INT(pgcopy_parse(&ps, m.b, m.n, on_row, &s, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "after the trailer");

	/* every cut of the first message short of a whole row is an error,
	 * except at a row boundary; never a read past the end */
	b.n = 0;
	header(&b, 0);
	size_t h = b.n;
	row(&b, 7, 8, 9.0);
	for (size_t len = 0; len < b.n; len++) {
		int rc = parse(&b, len, &s, err);
		if (len == h) {
			CHECK_INT(rc, 0);
			CHECK_INT(s.rows, 0);
		} else {
			CHECK_INT(rc, -1);
		}
	}
	CHECK_INT(parse(&b, b.n, &s, err), 0);
	CHECK_INT(s.rows, 1);

	/* a wrong signature */
	b.b[5] = 'X';
	CHECK_INT(parse(&b, b.n, &s, err), -1);
	CHECK_CONTAINS(err, "signature");

	/* a header extension longer than the data */
	b.n = 0;
	header(&b, 0);
	b.n -= 4;
	i32(&b, 1000);
	CHECK_INT(parse(&b, b.n, &s, err), -1);
	CHECK_CONTAINS(err, "extension");

	/* a row with another number of fields */
	b.n = 0;
	header(&b, 0);
	i16(&b, 2);
	i32(&b, -1);
	i32(&b, -1);
	CHECK_INT(parse(&b, b.n, &s, err), -1);
	CHECK_CONTAINS(err, "field count");

	/* a field length past the end, and a negative one other than -1 */
	b.n = 0;
	header(&b, 0);
	i16(&b, 3);
	i32(&b, 4);
	i32(&b, 1);
	i32(&b, 0x7fffffff);
	CHECK_INT(parse(&b, b.n, &s, err), -1);
	CHECK_CONTAINS(err, "past the end");
	b.n -= 4;
	i32(&b, -2);
	CHECK_INT(parse(&b, b.n, &s, err), -1);

	/* the callback's non-zero return stops the rows and is passed back */
	b.n = 0;
	header(&b, 0);
	row(&b, 1, 1, 1);
	row(&b, 2, 2, 2);
	row(&b, 3, 3, 3);
	pgcopy_init(&ps, 3);
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	CHECK_INT(pgcopy_parse(&ps, b.b, b.n, on_row, &s, err, sizeof(err)), 7);
	CHECK_INT(s.rows, 2);

	/* more columns than a row can hold */
	pgcopy_init(&ps, PGCOPY_MAX_FIELDS + 1);
	CHECK_INT(pgcopy_parse(&ps, b.b, b.n, on_row, &s, err, sizeof(err)), -1);

	/* the decoders */
	uint8_t be[8] = { 0x80, 0, 0, 0, 0, 0, 0, 1 };
	CHECK(pgcopy_i32(be) == INT32_MIN);
	CHECK(pgcopy_i64(be) == INT64_MIN + 1);
	return harness_report("test_pgcopy");
}
