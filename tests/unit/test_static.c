/* Tests of the dashboard file server's pure parts (server/http/static.c): which
 * Accept-Encoding values get gzip, which types are compressed, that the
 * gzip output inflates back to the input, and that the ETag changes with
 * the file's size, mtime and encoding. */
#include "harness.h"

#include "static.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void test_accepts(void)
{
	CHECK(static_accepts_gzip("gzip"));
	CHECK(static_accepts_gzip("gzip, deflate, br"));
	CHECK(static_accepts_gzip("deflate, br, gzip"));
	CHECK(static_accepts_gzip("br;q=1.0, gzip;q=0.8"));
	CHECK(static_accepts_gzip("GZIP"));
	CHECK(static_accepts_gzip("x-gzip"));
	CHECK(!static_accepts_gzip(NULL));
	CHECK(!static_accepts_gzip(""));
	CHECK(!static_accepts_gzip("identity"));
	CHECK(!static_accepts_gzip("br, deflate"));
	CHECK(!static_accepts_gzip("gzip;q=0"));
	CHECK(!static_accepts_gzip("gzip;q=0.0, br"));
	CHECK(!static_accepts_gzip("gzipped"));

	CHECK(static_compressible("text/javascript; charset=utf-8"));
	CHECK(static_compressible("text/html; charset=utf-8"));
	CHECK(static_compressible("application/json"));
	CHECK(static_compressible("image/svg+xml"));
	CHECK(!static_compressible("image/png"));
	CHECK(!static_compressible("font/woff2"));
}

static void test_gzip(void)
{
	size_t len = 100000;
	char *in = malloc(len);
	CHECK(in != NULL);
	if (!in)
		return;
	for (size_t i = 0; i < len; i++)
		in[i] = "export function x() { return 42; }\n"[i % 36];
	unsigned char *gz = NULL;
	size_t gzlen = 0;
	CHECK_INT(static_gzip(in, len, &gz, &gzlen), 0);
	CHECK(gz && gzlen > 18 && gzlen < len / 10);
	CHECK(gz && gz[0] == 0x1f && gz[1] == 0x8b);	/* a gzip member */
	char *back = malloc(len + 16);
	z_stream z;
	memset(&z, 0, sizeof(z));
	CHECK_INT(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = (Bytef *)back;
	z.avail_out = (uInt)(len + 16);
	CHECK_INT(inflate(&z, Z_FINISH), Z_STREAM_END);
	CHECK_INT(z.total_out, len);
	CHECK(memcmp(back, in, len) == 0);
	inflateEnd(&z);
	free(back);
	free(gz);
	/* empty input still makes a valid member */
	CHECK_INT(static_gzip("", 0, &gz, &gzlen), 0);
	CHECK(gzlen >= 18);
	free(gz);
	free(in);
}

static void test_etag(void)
{
	char a[96], b[96], c[96], d[96];
	static_etag(1000, 1764518400, 5, false, a, sizeof(a));
	static_etag(1000, 1764518400, 5, true, b, sizeof(b));
	static_etag(1001, 1764518400, 5, false, c, sizeof(c));
	static_etag(1000, 1764518400, 6, false, d, sizeof(d));
	CHECK(a[0] == '"' && a[strlen(a) - 1] == '"');
	CHECK(strcmp(a, b) != 0);
	CHECK(strcmp(a, c) != 0);
	CHECK(strcmp(a, d) != 0);
	/* one tag never contains another (If-None-Match is matched by substring) */
	CHECK(strstr(b, a) == NULL);
}

int main(void)
{
	test_accepts();
	test_gzip();
	test_etag();
	return harness_report("test_static");
}
