/* test_http_util.c - the HTTP layer's pure parts: time parsing, query
 * parameters, routing and URL decoding, body limits and gzip, tokens, rate
 * limits, ingest parsing, static paths, configuration, fleet efficiency. */
#include "harness.h"
#include "testparams.h"

#include "alert_kinds.h"
#include "api_fleet.h"
#include "auth.h"
#include "body.h"
#include "config.h"
#include "ingest.h"
#include "metrics.h"
#include "params.h"
#include "ratelimit.h"
#include "route.h"
#include "static.h"
#include "suggest.h"
#include "timeparse.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static void test_timeparse(void)
{
	int64_t ms = 0;
	char buf[40];

	CHECK_INT(time_parse("1764518400", &ms), 0);
	CHECK_INT(ms, 1764518400000LL);
	CHECK_INT(time_parse("1764518400.125", &ms), 0);
	CHECK_INT(ms, 1764518400125LL);
	CHECK_INT(time_parse("1764518400.1259", &ms), 0);
	CHECK_INT(ms, 1764518400125LL);
	CHECK_INT(time_parse("2025-11-30T16:00:00Z", &ms), 0);
	CHECK_INT(ms, 1764518400000LL);
	CHECK_INT(time_parse("2025-11-30T17:00:00.5+01:00", &ms), 0);
	CHECK_INT(ms, 1764518400500LL);
	CHECK_INT(time_parse("2025-11-30t16:00:00z", &ms), 0);
	CHECK_INT(time_parse("2025-11-30 16:00:00Z", &ms), 0);
	CHECK_INT(time_parse("2024-02-29T00:00:00Z", &ms), 0);
	CHECK_INT(time_parse("1970-01-01T00:00:00Z", &ms), 0);
	CHECK_INT(ms, 0);
	/* refused */
	CHECK_INT(time_parse("2023-02-29T00:00:00Z", &ms), -1);
	CHECK_INT(time_parse("2025-13-01T00:00:00Z", &ms), -1);
	CHECK_INT(time_parse("2025-11-30T24:00:00Z", &ms), -1);
	CHECK_INT(time_parse("2025-11-30T16:00:00", &ms), -1);
	CHECK_INT(time_parse("2025-11-30", &ms), -1);
	CHECK_INT(time_parse("", &ms), -1);
	CHECK_INT(time_parse("-5", &ms), -1);
	CHECK_INT(time_parse("1e9", &ms), -1);
	CHECK_INT(time_parse("12abc", &ms), -1);
	CHECK_INT(time_parse("1.", &ms), -1);
	CHECK_INT(time_parse("99999999999999999999", &ms), -1);
	CHECK_INT(time_parse("NaN", &ms), -1);
	CHECK_INT(time_parse("1969-12-31T23:59:59Z", &ms), -1);
	CHECK_STR(time_format(1764518400000LL, buf, sizeof(buf)), "2025-11-30T16:00:00Z");
	CHECK_STR(time_format(1764518400125LL, buf, sizeof(buf)), "2025-11-30T16:00:00.125Z");
	CHECK(time_now_ms() > 1700000000000LL);
}

static int alerts_with(const char *const *pairs, struct alert_query *q, char *err)
{
	struct kv kv = { pairs };
	struct param_src src = { kv_get, &kv };
	return params_alerts(&src, q, err, 256);
}

static int series_with(const char *const *pairs, struct series_query *q, char *err)
{
	struct kv kv = { pairs };
	struct param_src src = { kv_get, &kv };
	return params_series(&src, 1764518400000LL, q, err, 256);
}

static void test_params(void)
{
	struct alert_query aq;
	struct series_query sq;
	char err[256];
	long x;

	CHECK_INT(param_parse_int("10", 1, 10, &x), 0);
	CHECK_INT(x, 10);
	CHECK_INT(param_parse_int("11", 1, 10, &x), -1);
	CHECK_INT(param_parse_int("+5", 1, 10, &x), -1);
	CHECK_INT(param_parse_int("5x", 1, 10, &x), -1);
	CHECK_INT(param_parse_int("", 1, 10, &x), -1);

	const char *none[] = { NULL };
	CHECK_INT(alerts_with(none, &aq, err), 0);
	CHECK_STR(aq.state, "all");
	CHECK_INT(aq.limit, 100);
	CHECK(aq.since_ms == INT64_MIN && aq.until_ms == INT64_MAX);
	CHECK(aq.host == NULL && aq.cgroup == NULL && aq.kind == NULL);

	const char *full[] = { "host", "db-07", "cgroup", "/system.slice/pg.service", "kind", "thrash",
			       "state", "open", "since", "1764518400", "until",
			       "2025-11-30T17:00:00Z", "limit", "10000", NULL };
	CHECK_INT(alerts_with(full, &aq, err), 0);
	CHECK_STR(aq.host, "db-07");
	CHECK_STR(aq.cgroup, "/system.slice/pg.service");
	CHECK_STR(aq.kind, "thrash");
	CHECK_STR(aq.state, "open");
	CHECK_INT(aq.since_ms, 1764518400000LL);
	CHECK_INT(aq.until_ms, 1764522000000LL);
	CHECK_INT(aq.limit, 10000);

	const char *bad_limit[] = { "limit", "10001", NULL };
	CHECK_INT(alerts_with(bad_limit, &aq, err), -1);
	CHECK_CONTAINS(err, "limit:");
	const char *zero_limit[] = { "limit", "0", NULL };
	CHECK_INT(alerts_with(zero_limit, &aq, err), -1);
	const char *two_states[] = { "state", "open,resolved", NULL };
	CHECK_INT(alerts_with(two_states, &aq, err), 0);
	CHECK_STR(aq.state, "all");
	const char *one_state[] = { "state", "resolved", NULL };
	CHECK_INT(alerts_with(one_state, &aq, err), 0);
	CHECK_STR(aq.state, "resolved");
	const char *trailing[] = { "state", "open,", NULL };
	CHECK_INT(alerts_with(trailing, &aq, err), -1);
	const char *mixed[] = { "state", "open,closed", NULL };
	CHECK_INT(alerts_with(mixed, &aq, err), -1);
	const char *bad_state[] = { "state", "closed", NULL };
	CHECK_INT(alerts_with(bad_state, &aq, err), -1);
	CHECK_CONTAINS(err, "state:");
	const char *bad_since[] = { "since", "yesterday", NULL };
	CHECK_INT(alerts_with(bad_since, &aq, err), -1);
	CHECK_CONTAINS(err, "since:");
	const char *bad_until[] = { "until", "2025-02-30T00:00:00Z", NULL };
	CHECK_INT(alerts_with(bad_until, &aq, err), -1);
	CHECK_CONTAINS(err, "until:");
	const char *reversed[] = { "since", "2000", "until", "1000", NULL };
	CHECK_INT(alerts_with(reversed, &aq, err), -1);
	CHECK_CONTAINS(err, "until:");
	const char *bad_host[] = { "host", "db 07'; DROP TABLE alerts;--", NULL };
	CHECK_INT(alerts_with(bad_host, &aq, err), -1);
	CHECK_CONTAINS(err, "host:");
	const char *bad_cg[] = { "cgroup", "/a/../b", NULL };
	CHECK_INT(alerts_with(bad_cg, &aq, err), -1);
	CHECK_CONTAINS(err, "cgroup:");
	const char *bad_kind[] = { "kind", "Thrash!", NULL };
	CHECK_INT(alerts_with(bad_kind, &aq, err), -1);
	CHECK_CONTAINS(err, "kind:");
	const char *empty[] = { "state", "", NULL };
	CHECK_INT(alerts_with(empty, &aq, err), -1);

	/* series */
	const char *s_min[] = { "metric", "vmstat.pgscan_kswapd", NULL };
	CHECK_INT(series_with(s_min, &sq, err), 0);
	CHECK_INT(sq.until_ms, 1764518400000LL);
	CHECK_INT(sq.since_ms, 1764518400000LL - 3600000);
	CHECK_INT(sq.points, 0);
	CHECK(sq.cgroup == NULL);
	CHECK_INT(series_with(none, &sq, err), -1);
	CHECK_CONTAINS(err, "metric:");
	const char *s_bad_metric[] = { "metric", "vmstat.x;y", NULL };
	CHECK_INT(series_with(s_bad_metric, &sq, err), -1);
	CHECK_CONTAINS(err, "metric:");
	const char *s_points[] = { "metric", "meminfo.Active(anon)", "points", "10001", NULL };
	CHECK_INT(series_with(s_points, &sq, err), -1);
	CHECK_CONTAINS(err, "points:");
	const char *s_range[] = { "metric", "vmstat.a", "since", "0", "until", "1764518400", NULL };
	CHECK_INT(series_with(s_range, &sq, err), -1);
	CHECK_CONTAINS(err, "400 days");
	const char *s_ok[] = { "metric", "stat.anon", "cgroup", "/user.slice", "since", "1764510000",
			       "until", "1764518000", "points", "100", NULL };
	CHECK_INT(series_with(s_ok, &sq, err), 0);
	CHECK_STR(sq.cgroup, "/user.slice");
	CHECK_INT(sq.points, 100);
	CHECK_INT(sq.since_ms, 1764510000000LL);
	CHECK_INT(sq.cgroup_version, 0);
	const char *s_ver[] = { "metric", "stat.anon", "cgroup", "/user.slice", "cgroup_version", "1", NULL };
	CHECK_INT(series_with(s_ver, &sq, err), 0);
	CHECK_INT(sq.cgroup_version, 1);
	const char *s_ver3[] = { "metric", "stat.anon", "cgroup", "/user.slice", "cgroup_version", "3", NULL };
	CHECK_INT(series_with(s_ver3, &sq, err), -1);
	CHECK_CONTAINS(err, "cgroup_version:");
	const char *s_ver_alone[] = { "metric", "stat.anon", "cgroup_version", "2", NULL };
	CHECK_INT(series_with(s_ver_alone, &sq, err), -1);
	CHECK_CONTAINS(err, "only with cgroup");

	/* fleet: as many points as the 5-minute rollups give, or a 400
	 * naming the allowed ones */
	int w, p;
	struct kv kv = { none };
	struct param_src src = { kv_get, &kv };
	CHECK_INT(params_fleet(&src, &w, &p, err, sizeof(err)), 0);
	CHECK_INT(w, 3600);
	CHECK_INT(p, 13);
	CHECK_INT(params_fleet_max_points(86400), 289);
	CHECK_INT(params_fleet_max_points(60), 2);
	const char *f_13[] = { "points", "13", NULL };
	kv.pairs = f_13;
	CHECK_INT(params_fleet(&src, &w, &p, err, sizeof(err)), 0);
	CHECK_INT(p, 13);
	const char *f_60[] = { "points", "60", NULL };
	kv.pairs = f_60;
	CHECK_INT(params_fleet(&src, &w, &p, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "points: expected 1 to 13 for window=3600");
	const char *f_day[] = { "window", "86400", "points", "60", NULL };
	kv.pairs = f_day;
	CHECK_INT(params_fleet(&src, &w, &p, err, sizeof(err)), 0);
	CHECK_INT(p, 60);
	const char *f_bad[] = { "window", "86401", NULL };
	kv.pairs = f_bad;
	CHECK_INT(params_fleet(&src, &w, &p, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "window:");
	const char *f_badp[] = { "window", "86400", "points", "290", NULL };
	kv.pairs = f_badp;
	CHECK_INT(params_fleet(&src, &w, &p, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "points:");
}

/* A value with an encoded NUL: the length differs from strlen. */
static const char *nul_get(void *ctx, const char *name, size_t *len)
{
	(void)ctx;
	if (strcmp(name, "host") != 0)
		return NULL;
	*len = 6;	/* "db\0x07" */
	return "db";
}

static void test_params_nul(void)
{
	struct param_src src = { nul_get, NULL };
	struct alert_query q;
	char err[256];

	CHECK_INT(params_alerts(&src, &q, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "host:");
}

static void test_route(void)
{
	struct route r;
	char s[128];

	route_match("/healthz", &r);
	CHECK_INT(r.id, ROUTE_HEALTHZ);
	route_match("/metrics", &r);
	CHECK_INT(r.id, ROUTE_METRICS);
	route_match("/api/v1/samples", &r);
	CHECK_INT(r.id, ROUTE_SAMPLES);
	route_match("/api/v1/samples/", &r);
	CHECK_INT(r.id, ROUTE_SAMPLES);
	route_match("/api/v1/hosts", &r);
	CHECK_INT(r.id, ROUTE_HOSTS);
	route_match("/api/v1/hosts/db-07", &r);
	CHECK_INT(r.id, ROUTE_HOST);
	CHECK_STR(r.host, "db-07");
	route_match("/api/v1/hosts/db-07/series", &r);
	CHECK_INT(r.id, ROUTE_HOST_SERIES);
	CHECK_STR(r.host, "db-07");
	route_match("/api/v1/hosts/db-07/series_batch", &r);
	CHECK_INT(r.id, ROUTE_HOST_SERIES_BATCH);
	CHECK_STR(r.host, "db-07");
	route_match("/api/v1/hosts/db-07/series_batchx", &r);
	CHECK_INT(r.id, ROUTE_NOT_FOUND);
	route_match("/api/v1/hosts/db-07/cgroups", &r);
	CHECK_INT(r.id, ROUTE_HOST_CGROUPS);
	route_match("/api/v1/hosts/db-07/metrics/", &r);
	CHECK_INT(r.id, ROUTE_HOST_METRICS);
	route_match("/api/v1/hosts/db-07/other", &r);
	CHECK_INT(r.id, ROUTE_NOT_FOUND);
	route_match("/api/v1/hosts/db'07/series", &r);
	CHECK_INT(r.id, ROUTE_HOST_SERIES);
	CHECK(r.bad_host);
	route_match("/api/v1/hosts/a/b/series", &r);
	CHECK_INT(r.id, ROUTE_NOT_FOUND);
	route_match("/api/v1/alerts", &r);
	CHECK_INT(r.id, ROUTE_ALERTS);
	route_match("/api/v1/fleet", &r);
	CHECK_INT(r.id, ROUTE_FLEET);
	route_match("/api/v2/hosts", &r);
	CHECK_INT(r.id, ROUTE_NOT_FOUND);
	route_match("/api", &r);
	CHECK_INT(r.id, ROUTE_NOT_FOUND);
	route_match("/", &r);
	CHECK_INT(r.id, ROUTE_STATIC);
	route_match("/vendor/uPlot.min.js", &r);
	CHECK_INT(r.id, ROUTE_STATIC);

	CHECK(route_method_ok(ROUTE_SAMPLES, "POST"));
	CHECK(!route_method_ok(ROUTE_SAMPLES, "GET"));
	CHECK(route_method_ok(ROUTE_HOSTS, "HEAD"));
	CHECK(!route_method_ok(ROUTE_HOSTS, "PUT"));
	CHECK_STR(route_allow(ROUTE_SAMPLES), "POST");
	CHECK_STR(route_allow(ROUTE_ALERTS), "GET, HEAD");
	route_match("/api/v1/regression", &r);
	CHECK_INT(r.id, ROUTE_REGRESSION);
	route_match("/api/v1/regression/baseline/", &r);
	CHECK_INT(r.id, ROUTE_REGRESSION_BASELINE);
	route_match("/api/v1/regression/other", &r);
	CHECK_INT(r.id, ROUTE_NOT_FOUND);
	CHECK(route_method_ok(ROUTE_REGRESSION_BASELINE, "PUT"));
	CHECK(!route_method_ok(ROUTE_REGRESSION, "PUT"));
	CHECK(!route_method_ok(ROUTE_REGRESSION_BASELINE, "DELETE"));
	CHECK_STR(route_allow(ROUTE_REGRESSION_BASELINE), "GET, HEAD, PUT");

	strcpy(s, "/system.slice%2Fpg%40x.service");
	CHECK_INT(route_unescape(s), 26);
	CHECK_STR(s, "/system.slice/pg@x.service");
	strcpy(s, "a%00b%zz%4");
	route_unescape(s);
	CHECK_STR(s, "a%00b%zz%4");	/* NUL and bad escapes stay encoded */
	strcpy(s, "a+b%2e%2E");
	route_unescape(s);
	CHECK_STR(s, "a+b..");
}

static int gzip_buf(const char *in, size_t len, char **out, size_t *outlen)
{
	z_stream zs;
	size_t cap = compressBound(len) + 64;

	memset(&zs, 0, sizeof(zs));
	*out = malloc(cap);
	if (!*out || deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)*out;
	zs.avail_out = (uInt)cap;
	int rc = deflate(&zs, Z_FINISH);
	*outlen = zs.total_out;
	deflateEnd(&zs);
	return rc == Z_STREAM_END ? 0 : -1;
}

static void test_body(void)
{
	struct body b;
	char *gz;
	size_t gzlen;

	body_init(&b, 10);
	CHECK_INT(body_append(&b, "hello", 5), BODY_OK);
	CHECK_INT(body_append(&b, "world", 5), BODY_OK);
	CHECK_INT(b.len, 10);
	CHECK_STR(b.buf, "helloworld");
	CHECK_INT(body_append(&b, "!", 1), BODY_ETOOBIG);
	CHECK(b.too_big);
	CHECK_INT(b.len, 10);
	CHECK_INT(body_append(&b, "", 0), BODY_ETOOBIG);	/* stays refused */
	body_release(&b);

	CHECK_INT(body_check_content_length(NULL, 100), BODY_OK);
	CHECK_INT(body_check_content_length("100", 100), BODY_OK);
	CHECK_INT(body_check_content_length("101", 100), BODY_ETOOBIG);
	CHECK_INT(body_check_content_length("99999999999999999999999999", 100), BODY_ETOOBIG);
	CHECK_INT(body_check_content_length("-1", 100), BODY_ECORRUPT);
	CHECK_INT(body_check_content_length("12x", 100), BODY_ECORRUPT);

	CHECK_INT(body_encoding(NULL), 0);
	CHECK_INT(body_encoding("identity"), 0);
	CHECK_INT(body_encoding("gzip"), 1);
	CHECK_INT(body_encoding("GZIP"), 1);
	CHECK_INT(body_encoding("x-gzip"), 1);
	CHECK_INT(body_encoding("br"), -1);
	CHECK_INT(body_encoding("gzip, deflate"), -1);

	struct body z;
	const char *text = "{\"host\":\"a\",\"ts\":1}";
	CHECK_INT(gzip_buf(text, strlen(text), &gz, &gzlen), 0);
	body_init(&z, 1000);
	CHECK_INT(body_gunzip(gz, gzlen, &z), BODY_OK);
	CHECK_INT(z.len, strlen(text));
	CHECK_STR(z.buf, text);
	body_release(&z);
	/* exactly at the limit passes, one byte less refuses */
	body_init(&z, strlen(text));
	CHECK_INT(body_gunzip(gz, gzlen, &z), BODY_OK);
	body_release(&z);
	body_init(&z, strlen(text) - 1);
	CHECK_INT(body_gunzip(gz, gzlen, &z), BODY_ETOOBIG);
	body_release(&z);
	/* truncated and trailing garbage */
	body_init(&z, 1000);
	CHECK_INT(body_gunzip(gz, gzlen - 4, &z), BODY_ECORRUPT);
	body_release(&z);
	char *trail = malloc(gzlen + 3);
	memcpy(trail, gz, gzlen);
	memcpy(trail + gzlen, "xyz", 3);
	body_init(&z, 1000);
	CHECK_INT(body_gunzip(trail, gzlen + 3, &z), BODY_ECORRUPT);
	body_release(&z);
	free(trail);
	body_init(&z, 1000);
	CHECK_INT(body_gunzip("not gzip at all", 15, &z), BODY_ECORRUPT);
	body_release(&z);
	/* an empty gzip stream inflates to an empty, NUL-terminated body */
	char *egz;
	size_t egzlen;
	CHECK_INT(gzip_buf("", 0, &egz, &egzlen), 0);
	body_init(&z, 1000);
	CHECK_INT(body_gunzip(egz, egzlen, &z), BODY_OK);
	CHECK(z.buf != NULL && z.len == 0 && z.buf[0] == '\0');
	body_release(&z);
	free(egz);

	/* the in-flight budget: a body holds the bytes it received reserved
	 * (not its buffer's capacity), a second body that would pass the
	 * budget is refused unless it stays small (limit / 64 for a parse,
	 * limit / 1024 for an upload, within a quarter past the limit), and
	 * everything is given back on release */
	struct membudget mb;
	struct body b1, b2;
	membudget_init(&mb, 40000);
	body_init_budget(&b1, 1u << 20, &mb, 1);
	body_init_budget(&b2, 1u << 20, &mb, 1);
	char kb[20000];
	memset(kb, 'x', sizeof(kb));
	CHECK_INT(body_append(&b1, kb, 1), BODY_OK);
	CHECK_INT(membudget_used(&mb), 1);	/* one byte sent, one reserved */
	CHECK_INT(body_append(&b1, kb, sizeof(kb) - 1), BODY_OK);
	CHECK_INT(body_append(&b1, kb, sizeof(kb)), BODY_OK);
	CHECK_INT(membudget_used(&mb), 40000);
	CHECK_INT(body_append(&b2, kb, 1000), BODY_EBUSY);	/* not small: refused */
	CHECK(b2.buf == NULL);
	/* an upload is small up to limit / 1024 (39 bytes here) */
	CHECK_INT(body_append(&b2, kb, 30), BODY_OK);	/* small: the lane */
	CHECK_INT(body_append(&b2, kb, 20), BODY_EBUSY);	/* no longer small */
	body_release(&b2);
	/* gunzip into a budgeted body is refused the same way (20 bytes at 33
	 * a byte: not small) */
	body_init_budget(&b2, 1u << 20, &mb, 33);
	CHECK_INT(body_gunzip(gz, gzlen, &b2), BODY_EBUSY);
	body_release(&b2);
	body_release(&b1);
	CHECK_INT(membudget_used(&mb), 0);
	/* alone, a request larger than the whole budget still proceeds, and
	 * keeps growing while it is the only holder; a small one beside it
	 * still passes, up to a quarter past the limit */
	CHECK(membudget_take(&mb, 100000, 0));
	CHECK(membudget_take(&mb, 100000, 100000));
	CHECK(!membudget_take(&mb, 1000, 0));	/* someone else, not small: refused */
	CHECK(!membudget_take(&mb, 1, 0));	/* 200000 is past the lane's 50000 too */
	membudget_give(&mb, 200000);
	CHECK(membudget_take(&mb, 45000, 0));
	CHECK(membudget_take(&mb, 600, 0));
	CHECK(!membudget_take(&mb, 600, 600));	/* 1200 held: not small */
	membudget_give(&mb, 45600);
	CHECK_INT(membudget_used(&mb), 0);
	/* per_byte: an inflated body reserves its parse with its bytes */
	body_init_budget(&b1, 1u << 20, &mb, 3);
	CHECK_INT(body_append(&b1, kb, 100), BODY_OK);
	CHECK_INT(membudget_used(&mb), 300);
	body_release(&b1);
	CHECK_INT(membudget_used(&mb), 0);
	/* a whole body reserves its parse on top of its bytes, which another
	 * holder can make fail (then nothing is reserved); the reservation
	 * goes back with the body; body_keep_reservation frees the buffer and
	 * keeps what the parsed samples need, more or less than was held */
	membudget_init(&mb, 100000);
	body_init_budget(&b1, 1u << 20, &mb, 1);
	body_init_budget(&b2, 1u << 20, &mb, 1);
	CHECK_INT(body_append(&b1, kb, 5000), BODY_OK);
	CHECK_INT(body_append(&b2, kb, 5000), BODY_OK);
	CHECK(body_reserve(&b1, 50000));
	CHECK_INT(membudget_used(&mb), 60000);
	CHECK(!body_reserve(&b2, 50000));
	CHECK_INT(membudget_used(&mb), 60000);
	body_keep_reservation(&b1, 7000);
	CHECK(b1.buf == NULL);
	CHECK_INT(membudget_used(&mb), 12000);
	body_keep_reservation(&b2, 9000);
	CHECK_INT(membudget_used(&mb), 16000);
	body_release(&b1);
	body_release(&b2);
	CHECK_INT(membudget_used(&mb), 0);
	/* a buffer past the size where it is mapped rather than malloc'd keeps
	 * its bytes while it grows and is released like any other */
	body_init(&b1, 4u << 20);
	for (int k = 0; k < 100; k++)
		CHECK_INT(body_append(&b1, kb, sizeof(kb)), BODY_OK);
	CHECK_INT(b1.len, 100 * sizeof(kb));
	CHECK(b1.buf[0] == 'x' && b1.buf[b1.len - 1] == 'x' && b1.buf[b1.len] == '\0');
	body_release(&b1);
	CHECK(membudget_take(NULL, 1u << 30, 0));
	free(gz);

	/* a bomb: 64 MiB of zeros compress to ~64 KiB; refused at 1 MiB */
	size_t big = 64u << 20;
	char *zeros = calloc(1, big);
	CHECK(zeros != NULL);
	CHECK_INT(gzip_buf(zeros, big, &gz, &gzlen), 0);
	free(zeros);
	CHECK(gzlen < 200000);
	body_init(&z, 1u << 20);
	CHECK_INT(body_gunzip(gz, gzlen, &z), BODY_ETOOBIG);
	CHECK(z.len <= 1u << 20);
	body_release(&z);
	free(gz);
}

static void test_auth(void)
{
	size_t len = 0;
	const char *t;
	char *tokens[] = { "first-token-1", "second-token-2" };

	t = auth_bearer("Bearer abc123", &len);
	CHECK(t && len == 6 && memcmp(t, "abc123", 6) == 0);
	t = auth_bearer("bearer   abc123  ", &len);
	CHECK(t && len == 6);
	CHECK(auth_bearer("Basic abc", &len) == NULL);
	CHECK(auth_bearer("Bearer", &len) == NULL);
	CHECK(auth_bearer("Bearer ", &len) == NULL);
	CHECK(auth_bearer("Bearerabc", &len) == NULL);
	CHECK(auth_bearer(NULL, &len) == NULL);

	CHECK(auth_token_equal("secret", 6, "secret"));
	CHECK(!auth_token_equal("secreT", 6, "secret"));
	CHECK(!auth_token_equal("secre", 5, "secret"));
	CHECK(!auth_token_equal("secrets", 7, "secret"));
	CHECK(!auth_token_equal("", 0, "secret"));
	CHECK_INT(auth_find("second-token-2", 14, tokens, 2), 1);
	CHECK_INT(auth_find("first-token-1", 13, tokens, 2), 0);
	CHECK_INT(auth_find("first-token-", 12, tokens, 2), -1);
}

static void test_ratelimit(void)
{
	struct ratelimit *rl = ratelimit_new(2, 2);
	int retry = 0;

	CHECK(rl != NULL);
	CHECK(ratelimit_take(rl, 0, 1000, &retry));
	CHECK(ratelimit_take(rl, 0, 1000, &retry));
	CHECK(!ratelimit_take(rl, 0, 1000, &retry));
	CHECK_INT(retry, 1);
	CHECK(ratelimit_take(rl, 1, 1000, &retry));	/* another token has its own bucket */
	CHECK(ratelimit_take(rl, 0, 1500, &retry));	/* refilled 1 after 0.5 s */
	CHECK(!ratelimit_take(rl, 0, 1500, &retry));
	ratelimit_free(rl);

	rl = ratelimit_new(0, 1);	/* off */
	for (int i = 0; i < 100; i++)
		CHECK(ratelimit_take(rl, 0, 1000, &retry));
	ratelimit_free(rl);
}

#define NOW 1764518400000LL
#define OLDEST (NOW - 30LL * 86400000)

static int parse(const char *body, struct ingest_error *e, size_t *n)
{
	struct ingest_batch b;
	int rc = ingest_parse(body, strlen(body), NOW, OLDEST, 30, &b, e);

	*n = b.n;
	ingest_batch_release(&b);
	return rc;
}

static void test_ingest_parse(void)
{
	struct ingest_error e;
	size_t n = 99;
	char buf[512];

	CHECK_INT(parse("{\"host\":\"db-07\",\"ts\":1764518400.125,\"vmstat\":{\"pgpgin\":1}}", &e, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(parse("[{\"host\":\"a\",\"ts\":1764518400,\"vmstat\":{}},"
			"{\"host\":\"b\",\"ts\":1764518401,\"vmstat\":{}}]", &e, &n), 0);
	CHECK_INT(n, 2);
	CHECK_INT(parse("[]", &e, &n), 0);
	CHECK_INT(n, 0);

	/* the bad sample is named by index and field path; nothing kept */
	CHECK_INT(parse("[{\"host\":\"a\",\"ts\":1764518400,\"vmstat\":{}},"
			"{\"host\":\"b\",\"ts\":1764518400,\"vmstat\":{\"pgpgin\":-1}}]", &e, &n), -1);
	CHECK_STR(e.error, "could not parse sample 1: vmstat.pgpgin: expected an integer from 0 to 2^63-1");
	CHECK_INT(n, 0);
	CHECK_INT(parse("{\"ts\":1764518400,\"vmstat\":{}}", &e, &n), -1);
	CHECK_CONTAINS(e.error, "sample 0: host");

	/* hostile JSON */
	CHECK_INT(parse("{\"host\":\"a\",\"host\":\"b\",\"ts\":1764518400,\"vmstat\":{}}", &e, &n), -1);
	CHECK_CONTAINS(e.error, "duplicate");
	CHECK_INT(parse("{\"host\":\"a\",\"ts\":1764518400,\"vmstat\":{\"pgpgin\": 9223372036854775808}}", &e, &n), -1);
	CHECK_STR(e.error, "could not parse JSON: \"vmstat.pgpgin\": expected an integer from 0 to 2^63-1");
	CHECK_INT(parse("[99999999999999999999999]", &e, &n), -1);
	CHECK_STR(e.error, "could not parse JSON: a number: expected an integer from 0 to 2^63-1");
	char key[72];
	const char *doc = "{\"a\" : 123456";
	ingest_key_before(doc, strlen(doc), key, sizeof(key));
	CHECK_STR(key, "a");
	ingest_key_before(doc, 9, key, sizeof(key));
	CHECK_STR(key, "a");
	ingest_key_before("[1,2", 4, key, sizeof(key));
	CHECK_STR(key, "");
	ingest_key_before("{\"a\\\"b\":1", 8, key, sizeof(key));
	CHECK_STR(key, "");
	ingest_key_before("1234", 4, key, sizeof(key));
	CHECK_STR(key, "");
	CHECK_INT(parse("{\"host\":\"a\",\"ts\":1764518400,\"vmstat\":{\"x\":9223372036854775807}}", &e, &n), 0);
	CHECK_INT(parse("{\"host\":\"a\",\"ts\":NaN,\"vmstat\":{}}", &e, &n), -1);
	CHECK_INT(parse("{\"host\":\"a\xff\",\"ts\":1764518400,\"vmstat\":{}}", &e, &n), -1);
	CHECK_INT(parse("{\"host\":\"a\\u0000b\",\"ts\":1764518400,\"vmstat\":{}}", &e, &n), -1);
	CHECK_INT(parse("{\"host\":\"a'; DROP TABLE samples;--\",\"ts\":1764518400,\"vmstat\":{}}", &e, &n), -1);
	CHECK_CONTAINS(e.error, "sample 0: host");
	CHECK_INT(parse("\"just a string\"", &e, &n), -1);
	CHECK_INT(parse("", &e, &n), -1);
	CHECK_INT(parse("{} {}", &e, &n), -1);
	char *deep = malloc(200001);
	memset(deep, '[', 100000);
	memset(deep + 100000, ']', 100000);
	deep[200000] = '\0';
	CHECK_INT(parse(deep, &e, &n), -1);	/* [[ is no sample object: refused at once */
	memcpy(deep, "{\"x\":", 5);	/* {"x":[[[...: refused for its depth */
	CHECK_INT(parse(deep, &e, &n), -1);
	CHECK_CONTAINS(e.error, "nested deeper");
	free(deep);
	CHECK(ingest_depth_ok("[[\"[[[[[[\"]]", 12, 2));
	CHECK(!ingest_depth_ok("[[[1]]]", 7, 2));
	CHECK(ingest_depth_ok("[\"\\\"[[[\"]", 9, 1));

	/* clock skew and retention */
	snprintf(buf, sizeof(buf), "{\"host\":\"a\",\"ts\":%.3f,\"vmstat\":{}}", (NOW + 601000) / 1000.0);
	CHECK_INT(parse(buf, &e, &n), -1);
	CHECK_CONTAINS(e.error, "clock skew");
	CHECK_CONTAINS(e.error, "sample 0: ts");
	snprintf(buf, sizeof(buf), "{\"host\":\"a\",\"ts\":%.3f,\"vmstat\":{}}", (NOW + 599000) / 1000.0);
	CHECK_INT(parse(buf, &e, &n), 0);
	snprintf(buf, sizeof(buf), "[{\"host\":\"a\",\"ts\":%.3f,\"vmstat\":{}},"
		 "{\"host\":\"a\",\"ts\":%.3f,\"vmstat\":{}}]", NOW / 1000.0, (OLDEST - 1000) / 1000.0);
	CHECK_INT(parse(buf, &e, &n), -1);
	CHECK_CONTAINS(e.error, "sample 1: ts");
	CHECK_CONTAINS(e.error, "retention (30 days)");
}

static void test_static(void)
{
	CHECK(static_path_ok("/"));
	CHECK(static_path_ok("/index.html"));
	CHECK(static_path_ok("/vendor/uPlot.min.js"));
	CHECK(!static_path_ok("/../etc/passwd"));
	CHECK(!static_path_ok("/vendor/../../x"));
	CHECK(!static_path_ok("/./x"));
	CHECK(!static_path_ok("/a//b"));
	CHECK(!static_path_ok("/a\\..\\b"));
	CHECK(!static_path_ok("/a\nb"));
	CHECK(!static_path_ok("relative"));
	CHECK(!static_path_ok("/..hidden"));	/* no dotfiles at all */
	CHECK(!static_path_ok("/.env"));
	CHECK(!static_path_ok("/.git/config"));
	CHECK(!static_path_ok("/vendor/.npmrc"));
	CHECK(static_path_ok("/vendor/a.b.js"));
	CHECK_STR(static_mime("/a/app.js"), "text/javascript; charset=utf-8");
	CHECK_STR(static_mime("x.CSS"), "text/css; charset=utf-8");
	CHECK_STR(static_mime("logo.svg"), "image/svg+xml");
	CHECK_STR(static_mime("uPlot.min.js.map"), "application/json");
	CHECK_STR(static_mime("data.json"), "application/json");
	CHECK_STR(static_mime("index.html"), "text/html; charset=utf-8");
	CHECK_STR(static_mime("noext"), "application/octet-stream");
	CHECK_STR(static_mime("dir.d/noext"), "application/octet-stream");

	/* the vendored chart library, present or not */
	char dir[] = "/tmp/vmscope-web-XXXXXX", path[256];
	CHECK(mkdtemp(dir) != NULL);
	CHECK_STR(static_missing_vendor(dir), "vendor/uPlot.min.esm.js");
	snprintf(path, sizeof(path), "%s/vendor", dir);
	CHECK_INT(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/vendor/uPlot.min.esm.js", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK_STR(static_missing_vendor(dir), "vendor/uPlot.min.css");
	char css[256];
	snprintf(css, sizeof(css), "%s/vendor/uPlot.min.css", dir);
	f = fopen(css, "w");
	if (f)
		fclose(f);
	CHECK(static_missing_vendor(dir) == NULL);
	unlink(css);
	unlink(path);
	snprintf(path, sizeof(path), "%s/vendor", dir);
	rmdir(path);
	rmdir(dir);
}

static void test_config(void)
{
	struct server_config c;
	char err[512], addr[64];
	unsigned port;

	CHECK_INT(config_split_listen("127.0.0.1:8080", addr, sizeof(addr), &port), 0);
	CHECK_STR(addr, "127.0.0.1");
	CHECK_INT(port, 8080);
	CHECK_INT(config_split_listen("[::1]:9000", addr, sizeof(addr), &port), 0);
	CHECK_STR(addr, "::1");
	CHECK_INT(port, 9000);
	CHECK_INT(config_split_listen(":80", addr, sizeof(addr), &port), 0);
	CHECK_STR(addr, "0.0.0.0");
	CHECK_INT(config_split_listen("localhost", addr, sizeof(addr), &port), -1);
	CHECK_INT(config_split_listen("1.2.3.4:99999", addr, sizeof(addr), &port), -1);
	CHECK_INT(config_split_listen("1.2.3.4:", addr, sizeof(addr), &port), -1);

	unsetenv("VMSCOPE_LISTEN");
	unsetenv("VMSCOPE_TOKEN");
	unsetenv("VMSCOPE_DB");
	char *argv1[] = { "vmscope-server", "--db", "dbname=x", "--token", "aaaaaaaa1",
			  "--token", "bbbbbbbb2", "--max-body", "2048", "--rate-limit", "5", NULL };
	CHECK_INT(config_parse(&c, 11, argv1, err, sizeof(err)), 0);
	CHECK_STR(c.listen, "127.0.0.1:8080");
	CHECK_STR(c.db, "dbname=x");
	CHECK_INT(c.ntokens, 2);
	CHECK_INT(c.max_body, 2048);
	CHECK_INT(c.retention_days, 30);
	CHECK(c.rate_limit == 5.0);
	CHECK(c.web_dir != NULL && c.schema_dir != NULL);
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	config_release(&c);

	/* environment fills in; the command line wins */
	setenv("VMSCOPE_LISTEN", "0.0.0.0:9999", 1);
	setenv("VMSCOPE_DB", "dbname=fromenv", 1);
	char *argv2[] = { "vmscope-server", "--listen", "127.0.0.1:1234", NULL };
	CHECK_INT(config_parse(&c, 3, argv2, err, sizeof(err)), 0);
	CHECK_STR(c.listen, "127.0.0.1:1234");
	CHECK_STR(c.db, "dbname=fromenv");
	CHECK_INT(config_check(&c, err, sizeof(err)), -1);	/* no token */
	CHECK_CONTAINS(err, "no ingest token");
	config_release(&c);
	unsetenv("VMSCOPE_LISTEN");
	unsetenv("VMSCOPE_DB");

	char *argv3[] = { "vmscope-server", "--db", "x", "--insecure-no-auth", NULL };
	CHECK_INT(config_parse(&c, 4, argv3, err, sizeof(err)), 0);
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	config_release(&c);

	char *argv4[] = { "vmscope-server", "--threads", "0", NULL };
	CHECK_INT(config_parse(&c, 3, argv4, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--threads");
	/* the kernel-regression watch: defaults, settings, refusals naming the flag */
	char *argv4b[] = { "vmscope-server", "--db", "x", NULL };
	CHECK_INT(config_parse(&c, 3, argv4b, err, sizeof(err)), 0);
	CHECK_INT(c.regression_every_s, 300);
	CHECK_INT(c.regression_window_s, 21600);
	CHECK_INT(c.regression_min_hosts, 5);
	CHECK(c.regression_stratify == NULL);
	config_release(&c);
	char *argv4c[] = { "vmscope-server", "--regression-every", "0", "--regression-window", "900",
			   "--regression-min-hosts", "3", "--regression-stratify", "role", NULL };
	CHECK_INT(config_parse(&c, 9, argv4c, err, sizeof(err)), 0);
	CHECK_INT(c.regression_every_s, 0);
	CHECK_INT(c.regression_window_s, 900);
	CHECK_INT(c.regression_min_hosts, 3);
	CHECK_STR(c.regression_stratify, "role");
	config_release(&c);
	char *argv4d[] = { "vmscope-server", "--regression-window", "10", NULL };
	CHECK_INT(config_parse(&c, 3, argv4d, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--regression-window");
	char *argv4e[] = { "vmscope-server", "--regression-min-hosts", "1", NULL };
	CHECK_INT(config_parse(&c, 3, argv4e, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--regression-min-hosts");
	char *argv4f[] = { "vmscope-server", "--regression-stratify", "", NULL };
	CHECK_INT(config_parse(&c, 3, argv4f, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--regression-stratify");
	char *argv5[] = { "vmscope-server", "--bogus", NULL };
	CHECK_INT(config_parse(&c, 2, argv5, err, sizeof(err)), -1);
	char *argv6[] = { "vmscope-server", "--token", "short", NULL };
	CHECK_INT(config_parse(&c, 3, argv6, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--token");
	char *argv7[] = { "vmscope-server", "--tokens-file", "/nonexistent/tokens", NULL };
	CHECK_INT(config_parse(&c, 3, argv7, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "/nonexistent/tokens");

	char path[] = "/tmp/vmscope-test-tokens-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("# agents\n\n  token-one-1  \ntoken-two-2\n"
	      "token-web-3 name=web hosts=web-*,db-0? new-hosts-per-hour=20\n", f);
	fclose(f);
	char *argv8[] = { "vmscope-server", "--tokens-file", path, NULL };
	CHECK_INT(config_parse(&c, 3, argv8, err, sizeof(err)), 0);
	CHECK_INT(c.ntokens, 3);
	CHECK_STR(c.tokens[0].token, "token-one-1");
	CHECK(c.tokens[0].hosts == NULL && c.tokens[0].new_hosts_per_hour == 0);
	CHECK_CONTAINS(c.tokens[0].name, ":3");	/* FILE:LINE */
	CHECK_STR(c.tokens[1].token, "token-two-2");
	CHECK_STR(c.tokens[2].token, "token-web-3");
	CHECK_STR(c.tokens[2].name, "web");
	CHECK_STR(c.tokens[2].hosts, "web-*,db-0?");
	CHECK_INT(c.tokens[2].new_hosts_per_hour, 20);
	config_release(&c);
	/* a bad scope stops the start naming the line and the option */
	f = fopen(path, "w");
	fputs("token-one-1\ntoken-web-3 hosts=web/*\n", f);
	fclose(f);
	CHECK_INT(config_parse(&c, 3, argv8, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, ":2: hosts:");
	f = fopen(path, "w");
	fputs("token-web-3 new-hosts-per-hour=0\n", f);
	fclose(f);
	CHECK_INT(config_parse(&c, 3, argv8, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "new-hosts-per-hour: expected an integer from 1");
	f = fopen(path, "w");
	fputs("token-web-3 colour=blue\n", f);
	fclose(f);
	CHECK_INT(config_parse(&c, 3, argv8, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "unknown token option");
	/* the read token from a file (never on the command line) */
	f = fopen(path, "w");
	fputs("# read token\nread-token-from-file\n", f);
	fclose(f);
	char *argv9[] = { "vmscope-server", "--read-token-file", path, NULL };
	CHECK_INT(config_parse(&c, 3, argv9, err, sizeof(err)), 0);
	CHECK_STR(c.read_token, "read-token-from-file");
	config_release(&c);
	unlink(path);
}

static void test_fleet_efficiency(void)
{
	json_t *sk = json_loads("[[0.0, 50.0, 0, 0],[6.0, 10.0, 0, 0],[12.0, null, null, null]]", 0, NULL);
	json_t *sd = json_loads("[[0.0, 30.0, 0, 0]]", 0, NULL);
	json_t *ck = json_loads("[[0.0, 100.0, 0, 0],[6.0, 5.0, 0, 0],[18.0, 0.0, 0, 0]]", 0, NULL);
	json_t *e = fleet_efficiency(sk, sd, ck, NULL);
	char *s = json_dumps(e, JSON_COMPACT);

	/* 80/100; steal > scan clamps to 1; nothing scanned is null */
	CHECK_STR(s, "[[0.0,0.80000000000000004],[6.0,1.0],[18.0,null]]");
	free(s);
	json_decref(e);
	json_decref(sk);
	json_decref(sd);
	json_decref(ck);
	e = fleet_efficiency(NULL, NULL, NULL, NULL);
	CHECK_INT(json_array_size(e), 0);
	json_decref(e);
}

static void test_metrics(void)
{
	size_t len;
	char *text;

	metrics_reset();
	metrics_request(202);
	metrics_request(202);
	metrics_request(400);
	metrics_ingest_ok(3, 2, 0.02);
	text = metrics_render(true, &len);
	CHECK(text != NULL);
	CHECK_CONTAINS(text, "vmscope_http_requests_total{code=\"202\"} 2\n");
	CHECK_CONTAINS(text, "vmscope_http_requests_total{code=\"400\"} 1\n");
	CHECK_CONTAINS(text, "vmscope_ingest_samples_accepted_total 3\n");
	CHECK_CONTAINS(text, "vmscope_ingest_duration_seconds_bucket{le=\"0.01\"} 0\n");
	CHECK_CONTAINS(text, "vmscope_ingest_duration_seconds_bucket{le=\"0.025\"} 1\n");
	CHECK_CONTAINS(text, "vmscope_ingest_duration_seconds_count 1\n");
	CHECK_CONTAINS(text, "vmscope_database_up 1\n");
	CHECK_INT(strlen(text), len);
	free(text);
}

/* "did you mean" for a metric name a host never reported */
static void test_suggest(void)
{
	static const char *const names[] = {
		"vmstat.workingset_refault_anon", "vmstat.workingset_refault_file", "vmstat.pgscan_kswapd",
		"vmstat.pgscan_direct", "vmstat.pgsteal_kswapd", "psi.memory.some.avg10", "meminfo.Dirty",
	};
	const size_t n = sizeof(names) / sizeof(names[0]);
	const char *out[SUGGEST_MAX];

	/* the pre-5.9 name on a 6.x host: its two successors */
	size_t k = suggest_names("vmstat.workingset_refault", names, n, out, SUGGEST_MAX);
	CHECK_INT(k, 2);
	CHECK_STR(out[0], "vmstat.workingset_refault_anon");
	CHECK_STR(out[1], "vmstat.workingset_refault_file");
	/* a typo: the closest first */
	k = suggest_names("vmstat.pgscan_kswpad", names, n, out, SUGGEST_MAX);
	CHECK(k >= 1);
	CHECK_STR(out[0], "vmstat.pgscan_kswapd");
	k = suggest_names("psi.memory.some.avg", names, n, out, 1);
	CHECK_INT(k, 1);
	CHECK_STR(out[0], "psi.memory.some.avg10");
	/* nothing close */
	CHECK_INT(suggest_names("settings.vm.swappiness", names, n, out, SUGGEST_MAX), 0);
	CHECK_INT(suggest_names("meminfo.Dirty", names, n, out, SUGGEST_MAX), 0);	/* itself is not a suggestion */
	CHECK_INT(suggest_names("x", names, 0, out, SUGGEST_MAX), 0);
}

static void test_alert_kinds(void)
{
	char buf[400];

	CHECK(alert_kind_known("thrash"));
	CHECK(alert_kind_known("host_silent"));
	CHECK(alert_kind_known("compaction_stall"));
	CHECK(!alert_kind_known("trash"));
	CHECK(!alert_kind_known(""));
	alert_kinds_text(buf, sizeof(buf));
	CHECK_CONTAINS(buf, "thrash, swap_imbalance");
	CHECK_CONTAINS(buf, "host_silent");
	alert_kinds_text(buf, 10);
	CHECK_INT(strlen(buf), 9);
}

int main(void)
{
	test_timeparse();
	test_suggest();
	test_alert_kinds();
	test_params();
	test_params_nul();
	test_route();
	test_body();
	test_auth();
	test_ratelimit();
	test_ingest_parse();
	test_static();
	test_config();
	test_fleet_efficiency();
	test_metrics();
	return harness_report("test_http_util");
}
