/* Unit tests for the sample value codec (server/store/codec.c): round trips of
 * keyframes and deltas, SAMPLE_NULL, extremes, removals, cgroup sections,
 * single-metric lookups, and malformed input. */
#include "harness.h"
#include "codec.h"
#include "pgarr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int same(const struct sset *a, const struct sfield *b, size_t nb)
{
	if (a->n != nb)
		return 0;
	for (size_t i = 0; i < nb; i++)
		if (a->f[i].id != b[i].id || a->f[i].v != b[i].v)
			return 0;
	return 1;
}

/* encode cur against base, decode against base, compare; also check
 * codec_find for every id of both */
static int roundtrip(const struct sfield *cur, size_t nc, const struct sfield *base, size_t nb)
{
	struct cbuf b;
	struct sset out = { 0 };
	int ok = 1;

	cbuf_init(&b);
	if (codec_encode(&b, cur, nc, base, nb) < 0)
		return 0;
	if (codec_apply(b.p, b.len, base, nb, &out) < 0 || !same(&out, cur, nc))
		ok = 0;
	for (size_t i = 0; ok && i < nc; i++) {
		int64_t delta, bv = 0;
		int has_b = 0;
		for (size_t j = 0; j < nb; j++)
			if (base[j].id == cur[i].id) {
				has_b = 1;
				bv = base[j].v;
			}
		int f = codec_find(b.p, b.len, cur[i].id, &delta);
		int64_t got = f == CODEC_F_UNCHANGED ? bv : f == CODEC_F_NULL ? SAMPLE_NULL
			      : codec_resolve(has_b, bv, delta);
		if (f < 0 || f == CODEC_F_REMOVED || (f == CODEC_F_UNCHANGED && !has_b) || got != cur[i].v)
			ok = 0;
	}
	sset_release(&out);
	cbuf_release(&b);
	return ok;
}

static void test_varint(void)
{
	uint64_t vals[] = { 0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, (uint64_t)INT64_MAX, UINT64_MAX };
	struct cbuf b;
	cbuf_init(&b);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		CHECK(cbuf_put_uvarint(&b, vals[i]) == 0);
	const uint8_t *p = b.p, *end = b.p + b.len;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint64_t v = 0;
		CHECK(codec_get_uvarint(&p, end, &v) == 0);
		CHECK(v == vals[i]);
	}
	CHECK(p == end);
	uint64_t v;
	const uint8_t trunc[] = { 0x80, 0x80 };
	p = trunc;
	CHECK(codec_get_uvarint(&p, trunc + 2, &v) < 0);
	const uint8_t over[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
	p = over;
	CHECK(codec_get_uvarint(&p, over + 10, &v) < 0);
	cbuf_release(&b);
	int64_t z[] = { 0, -1, 1, INT64_MIN, INT64_MAX, -123456789 };
	for (size_t i = 0; i < 6; i++)
		CHECK(codec_unzigzag(codec_zigzag(z[i])) == z[i]);
	CHECK_INT(codec_zigzag(-1), 1);
	CHECK_INT(codec_zigzag(1), 2);
}

static void test_extremes(void)
{
	struct sfield base[] = { { 1, 0 }, { 2, INT64_MAX }, { 3, SAMPLE_NULL }, { 5, 100 }, { 9, 7 } };
	struct sfield cur[] = { { 1, INT64_MAX }, { 2, 0 }, { 3, 5 }, { 4, SAMPLE_NULL }, { 5, 99 },
				{ 6, INT64_MAX }, { 10, 0 } };
	CHECK(roundtrip(cur, 7, base, 5));	/* includes removal of 9 */
	CHECK(roundtrip(cur, 7, NULL, 0));
	CHECK(roundtrip(base, 5, cur, 7));
	CHECK(roundtrip(NULL, 0, base, 5));	/* everything removed */
	struct sfield big[] = { { UINT32_MAX, INT64_MAX }, };
	CHECK(roundtrip(big, 1, base, 5));

	/* unchanged values cost nothing */
	struct cbuf b;
	cbuf_init(&b);
	CHECK(codec_encode(&b, base, 5, base, 5) == 0);
	CHECK_INT(b.len, 0);
	/* negative delta: one byte id, one byte value */
	struct sfield dec[] = { { 1, 0 }, { 2, INT64_MAX }, { 3, SAMPLE_NULL }, { 5, 99 }, { 9, 7 } };
	b.len = 0;
	CHECK(codec_encode(&b, dec, 5, base, 5) == 0);
	CHECK_INT(b.len, 2);
	int64_t delta;
	CHECK_INT(codec_find(b.p, b.len, 5, &delta), CODEC_F_VALUE);
	CHECK_INT(delta, -1);
	CHECK_INT(codec_find(b.p, b.len, 9, &delta), CODEC_F_UNCHANGED);
	CHECK_INT(codec_find(b.p, b.len, 77, &delta), CODEC_F_UNCHANGED);
	cbuf_release(&b);
}

static void test_fuzz_roundtrip(void)
{
	int bad = 0;
	for (int round = 0; round < 2000; round++) {
		struct sfield a[64], c[64];
		size_t na = 0, nc = 0;
		uint32_t id = 0;
		for (int i = 0; i < 64; i++) {
			id += 1 + (uint32_t)(rnd() % (round % 7 == 0 ? 100000 : 4));
			uint64_t r = rnd() % 10;
			int64_t v = r == 0 ? SAMPLE_NULL : r == 1 ? INT64_MAX : r == 2 ? 0
				    : (int64_t)(rnd() >> (rnd() % 63));
			if (rnd() % 4)
				a[na++] = (struct sfield){ id, v };
			if (rnd() % 4) {
				int64_t w = (rnd() % 3 == 0 && na && a[na - 1].id == id) ? a[na - 1].v
					    : (rnd() % 2 && v != SAMPLE_NULL) ? (int64_t)((uint64_t)v + rnd() % 1000 - 500) : v;
				if (w < 0 && w != SAMPLE_NULL)
					w = 0;
				c[nc++] = (struct sfield){ id, w };
			}
		}
		if (!roundtrip(c, nc, a, na) || !roundtrip(a, na, c, nc) || !roundtrip(c, nc, NULL, 0))
			bad++;
	}
	CHECK_INT(bad, 0);
}

static void test_cgroups(void)
{
	struct sfield x1[] = { { 1, 10 }, { 2, 20 } }, x2[] = { { 1, 11 }, { 2, 20 }, { 3, SAMPLE_NULL } };
	struct sfield y1[] = { { 1, 5 } }, z2[] = { { 4, 9 } };
	struct codec_cgref base[] = { { 3, x1, 2 }, { 7, y1, 1 } };
	struct codec_cgref cur[] = { { 3, x2, 3 }, { 9, z2, 1 } };	/* 7 gone, 9 new */
	struct cbuf b;
	const uint8_t *sec;
	size_t seclen;

	cbuf_init(&b);
	CHECK(codec_cg_encode(&b, cur, 2, base, 2) == 0);
	CHECK_INT(codec_cg_find(b.p, b.len, 7, &sec, &seclen), 0);
	CHECK_INT(codec_cg_find(b.p, b.len, 3, &sec, &seclen), 1);
	struct sset out = { 0 };
	CHECK(codec_apply(sec, seclen, x1, 2, &out) == 0);
	CHECK(same(&out, x2, 3));
	CHECK_INT(codec_cg_find(b.p, b.len, 9, &sec, &seclen), 1);
	CHECK(codec_apply(sec, seclen, NULL, 0, &out) == 0);	/* new cgroup: self-contained */
	CHECK(same(&out, z2, 1));
	size_t pos = 0, n = 0;
	uint32_t id = 0;
	while (codec_cg_next(b.p, b.len, &pos, &id, &sec, &seclen) == 1)
		n++;
	CHECK_INT(n, 2);
	/* a section length running past the end is refused */
	b.p[1] = 100;
	CHECK_INT(codec_cg_find(b.p, b.len, 3, &sec, &seclen), -1);
	sset_release(&out);
	cbuf_release(&b);
}

static void test_malformed(void)
{
	struct sset out = { 0 };
	int64_t d;
	const uint8_t trunc[] = { 0x04 };		/* id 1, VALUE, no value */
	CHECK(codec_apply(trunc, 1, NULL, 0, &out) < 0);
	const uint8_t badtag[] = { 0x07 };		/* tag 3 */
	CHECK(codec_apply(badtag, 1, NULL, 0, &out) < 0);
	CHECK(codec_find(badtag, 1, 1, &d) < 0);
	const uint8_t repeat[] = { 0x05, 0x01 };	/* id 1 NULL, then id+0 */
	CHECK(codec_apply(repeat, 2, NULL, 0, &out) < 0);
	/* random bytes never crash the decoder */
	for (int i = 0; i < 5000; i++) {
		uint8_t buf[32];
		size_t n = rnd() % sizeof(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = (uint8_t)rnd();
		(void)codec_apply(buf, n, NULL, 0, &out);
		(void)codec_find(buf, n, (uint32_t)(rnd() % 50), &d);
		const uint8_t *sec;
		size_t seclen;
		(void)codec_cg_find(buf, n, (uint32_t)(rnd() % 50), &sec, &seclen);
	}
	CHECK(1);
	sset_release(&out);
}

/* The array literals of pgarr.c, written without printf: integers at the
 * extremes, quoting, hex, and floats that must read back as the very same
 * double (strtod is what PostgreSQL's float8in uses). */
static void test_pgarr(void)
{
	struct cbuf b;

	cbuf_init(&b);
	CHECK(arr_begin(&b) == 0 && arr_num(&b, 0) == 0 && arr_num(&b, -7) == 0 &&
	      arr_num(&b, INT64_MAX) == 0 && arr_num(&b, INT64_MIN) == 0 && arr_end(&b) == 0);
	CHECK_STR((const char *)b.p, "{0,-7,9223372036854775807,-9223372036854775808}");
	CHECK(arr_begin(&b) == 0 && arr_text(&b, "a\"b\\c") == 0 && arr_text_or_null(&b, NULL) == 0 &&
	      arr_text(&b, "") == 0 && arr_bytea(&b, (const uint8_t *)"\x0a\xff", 2) == 0 && arr_end(&b) == 0);
	CHECK_STR((const char *)b.p, "{\"a\\\"b\\\\c\",NULL,\"\",\"\\\\x0aff\"}");
	/* a long bytea crosses the chunks */
	uint8_t big[700];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	CHECK(arr_begin(&b) == 0 && arr_bytea(&b, big, sizeof(big)) == 0 && arr_end(&b) == 0);
	CHECK_INT(strlen((const char *)b.p), 2 + 4 + 2 * sizeof(big) + 1);
	CHECK(memcmp(b.p + 5 + 2 * 699, "1d\"}", 4) == 0);	/* 699 * 7 = 0x131d */
	CHECK(arr_begin(&b) == 0 && arr_float8(&b, false, 12.5) == 0 && arr_float8(&b, true, 1) == 0 &&
	      arr_float8(&b, false, -0.001) == 0 && arr_float8(&b, false, 3) == 0 && arr_end(&b) == 0);
	CHECK_STR((const char *)b.p, "{12.5,NULL,-0.001,3}");
	int bad = 0;
	for (int i = 0; i < 200000; i++) {
		double v;
		uint64_t r = rnd();
		switch (i % 4) {
		case 0: v = (double)(r % 1000000) / 10.0; break;	/* rates over 10 s */
		case 1: v = (double)(int64_t)(r % 100000000) / 3.0; break;
		case 2: v = ldexp((double)(r >> 11), -(int)(r % 60)); break;
		default: memcpy(&v, &r, sizeof(v)); if (!isfinite(v)) v = 1.0 / 3; break;
		}
		CHECK(arr_begin(&b) == 0 && arr_float8(&b, false, v) == 0 && arr_end(&b) == 0);
		double back = strtod((const char *)b.p + 1, NULL);
		if (memcmp(&back, &v, sizeof(v)) != 0) {
			if (bad++ < 3)
				fprintf(stderr, "arr_float8 %.17g gave %s\n", v, (const char *)b.p);
		}
	}
	CHECK_INT(bad, 0);
	cbuf_release(&b);
}

int main(void)
{
	test_varint();
	test_extremes();
	test_fuzz_roundtrip();
	test_cgroups();
	test_malformed();
	test_pgarr();
	return harness_report("test_codec");
}
