/* test_sample_body.c - the libyajl ingest parser against the jansson
 * reference (sample_body.h): same accept/refuse and identical samples on
 * realistic bodies (bench/gen.c, 0 to 20 cgroups), the fuzz seed corpus,
 * hand-picked hostile inputs (every place where yajl 2.1 is laxer than
 * jansson) and thousands of deterministic mutations of a full sample.
 * Also the messages of the new parser name the field. */
#include "harness.h"
#include "../fuzz/body_diff.h"
#include "dict.h"
#include "gen.h"

#include <dirent.h>
#include <stdlib.h>

#define DEPTH 32

static int same(const char *buf, size_t len, int want_accept)
{
	char why[512];
	int acc;
	int d = body_diff(buf, len, DEPTH, &acc, why, sizeof(why));

	if (d)
		fprintf(stderr, "differ on %.120s: %s\n", buf, why);
	CHECK(!d);
	if (want_accept >= 0 && acc != want_accept)
		fprintf(stderr, "%s: %.200s\n", acc ? "accepted" : "refused", buf);
	if (want_accept >= 0)
		CHECK_INT(acc, want_accept);
	return acc;
}

static void same_str(const char *s, int want_accept)
{
	same(s, strlen(s), want_accept);
}

static void test_generated(void)
{
	static char buf[1 << 17], batch[1 << 19];
	int ncgs[] = { 0, 2, 20 };

	for (size_t k = 0; k < 3; k++) {
		struct gen_host *h = gen_host_new("gen-01", ncgs[k], 42 + k);
		size_t bl = 1;
		batch[0] = '[';
		for (int step = 0; step < 4; step++) {
			gen_host_step(h, 10000);
			int len = gen_host_json(h, 1764518400000LL + step * 10000, buf, sizeof(buf));
			CHECK(len > 0);
			same(buf, (size_t)len, 1);
			if (bl + (size_t)len + 2 < sizeof(batch)) {
				if (bl > 1)
					batch[bl++] = ',';
				memcpy(batch + bl, buf, (size_t)len);
				bl += (size_t)len;
			}
		}
		batch[bl++] = ']';
		same(batch, bl, 1);
		gen_host_free(h);
	}
}

static void test_corpus(void)
{
	const char *dir = "tests/fuzz/corpus/sample_json";
	DIR *d = opendir(dir);
	struct dirent *de;
	int files = 0;

	CHECK(d != NULL);
	while (d && (de = readdir(d))) {
		char path[512];
		static char buf[1 << 20];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		FILE *f = fopen(path, "rb");
		CHECK(f != NULL);
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		same(buf, len, -1);
		files++;
	}
	if (d)
		closedir(d);
	CHECK(files >= 5);
}

#define S(x) "{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{\"a\":1}" x "}"

static void test_hostile(void)
{
	/* JSON-level: what yajl 2.1 would take but jansson refuses */
	same_str("", 0);
	same_str("[1,]", 0);
	same_str("{\"a\":1,}", 0);
	same_str(S("") "\f", 0);
	same_str("[\f]", 0);
	same_str("[\v]", 0);
	same_str(S("") " x", 0);
	same_str(S("") S(""), 0);
	/* a value followed by a token yajl starts but never finishes (a fuzzer
	 * find): an unterminated string, a number, a literal's start */
	same_str("[]\"}{+", 0);
	same_str(S("") "\"x]", 0);
	same_str("[] 1", 0);
	same_str("[] tr", 0);
	same_str("[] \t\r\n", 1);
	same_str(S("") " \n", 1);
	same_str(S(",\"x\":\"\\ud800\""), 0);
	same_str(S(",\"x\":\"\\udc00\""), 0);
	same_str(S(",\"x\":\"\\ud800\\u0041\""), 0);
	same_str(S(",\"x\":\"\\ud83d\\ude00\""), 1);	/* a valid pair */
	same_str(S(",\"labels\":{\"a\":\"\\ud83d\\ude00\"}"), 1);
	same_str(S(",\"x\":\"\\u0000\""), 0);
	same_str(S(",\"x\\u0000\":1"), 0);
	same_str(S(",\"x\":\"\xc0\x80\""), 0);
	same_str(S(",\"x\":\"\xf5\x80\x80\x80\""), 0);
	same_str(S(",\"x\":\"\xed\xa0\x80\""), 0);
	same_str(S(",\"x\":\"\xf4\x90\x80\x80\""), 0);
	same_str(S(",\"x\":\"\xe2\x82\xac\""), 1);
	same_str(S(",\"\xe2\x82\xac\":1"), 1);
	same_str(S(",\"\xc0\xaf\":1"), 0);
	same_str("[01]", 0);
	same_str("[-0]", 0);	/* a sample must be an object */
	same_str(S(",\"x\":-0"), 1);
	same_str(S(",\"x\":1e400"), 0);
	same_str(S(",\"x\":-1e400"), 0);
	same_str(S(",\"x\":1e-400"), 1);
	same_str(S(",\"x\":[9223372036854775808]"), 0);
	same_str(S(",\"x\":-9223372036854775808"), 1);
	same_str(S(",\"x\":-9223372036854775809"), 0);
	same_str(S(",\"x\":99999999999999999999999999"), 0);
	same_str(S(",\"x\":{\"y\":1,\"y\":2}"), 0);
	same_str(S(",\"\":1"), 1);
	same_str(S(",\"\":1,\"\":{}"), 0);
	same_str(S(",\"x\":{\"\":{\"\":[]}}"), 1);
	same_str(S(",\"x\":[{\"y\":1},{\"y\":2}]"), 1);
	same_str(S(",\"x\":{\"y\":{\"z\":1},\"z\":{\"y\":1}}"), 1);
	same_str("5", 0);
	same_str("\"s\"", 0);
	same_str("null", 0);
	same_str("[]", 1);
	same_str("[5]", 0);
	same_str("[[]]", 0);
	same_str("[{}]", 0);
	same_str("{\"host\":\"a\",\"ts\":NaN,\"vmstat\":{}}", 0);
	same_str("{\"host\":\"a\",\"ts\":Infinity,\"vmstat\":{}}", 0);
	same_str("{\"host\":\"a\",\"ts\":1764518400 /* c */,\"vmstat\":{}}", 0);
	same(S("") "\0", sizeof(S("") "\0") - 1, 0);
	/* jansson skips a NUL that ends a number (a fuzzer find): both accept */
	same(S(",\"x\":0.0\0,\"y\":1"), sizeof(S(",\"x\":0.0\0,\"y\":1")) - 1, 1);

	/* the sample's own checks */
	same_str("{\"ts\":1764518400,\"vmstat\":{}}", 0);
	same_str("{\"host\":\"a\",\"vmstat\":{}}", 0);
	same_str("{\"host\":\"a\",\"ts\":1764518400}", 0);
	same_str("{\"host\":\"a\",\"ts\":1764518400,\"vmstat\":{}}", 1);
	same_str("{\"host\":\"a\",\"ts\":1764518400,\"vmstat\":[]}", 0);
	same_str("{\"host\":\"a\",\"ts\":1764518400,\"vmstat\":null}", 0);
	same_str("{\"host\":\"a b\",\"ts\":1764518400,\"vmstat\":{}}", 0);
	same_str("{\"host\":\"a\",\"host\":\"a\",\"ts\":1764518400,\"vmstat\":{}}", 0);
	same_str("{\"host\":\"a\",\"ts\":0,\"vmstat\":{}}", 0);
	same_str("{\"host\":\"a\",\"ts\":1e11,\"vmstat\":{}}", 0);
	same_str("{\"host\":\"a\",\"ts\":99999999999.9,\"vmstat\":{}}", 1);
	same_str("{\"host\":\"a\",\"ts\":\"1764518400\",\"vmstat\":{}}", 0);
	same_str("{\"host\":\"a\",\"ts\":1764518400.0005,\"vmstat\":{}}", 1);
	same_str(S(",\"vmstat\":{}"), 0);
	same_str("{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{\"a\":1,\"a\":1}}", 0);
	same_str("{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{\"a\":-1}}", 0);
	same_str("{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{\"a\":1.0}}", 0);
	same_str("{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{\"a\":null}}", 0);
	same_str("{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{\"a\":{}}}", 0);
	same_str("{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{\"a b\":1}}", 0);
	same_str("{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{\"a\":9223372036854775807}}", 1);
	same_str(S(",\"settings\":{\"vm.swappiness\":null}"), 1);
	same_str(S(",\"meminfo\":{\"Active(anon)\":null}"), 0);
	same_str(S(",\"boot_id\":\"x\",\"kernel\":\"6.1\",\"agent_version\":\"0.1\""), 1);
	same_str(S(",\"boot_id\":\"\\t\""), 0);
	same_str(S(",\"boot_id\":null"), 0);
	same_str(S(",\"boot_id\":{}"), 0);
	same_str(S(",\"interval_s\":10.5,\"page_size\":4096,\"mglru\":true"), 1);
	same_str(S(",\"interval_s\":86401"), 0);
	same_str(S(",\"interval_s\":-1"), 0);
	same_str(S(",\"page_size\":511"), 0);
	same_str(S(",\"page_size\":4096.0"), 0);
	same_str(S(",\"mglru\":1"), 0);
	same_str(S(",\"mglru\":[]"), 0);
	same_str(S(",\"psi\":{\"memory\":{\"some\":{\"avg10\":1.25,\"avg60\":100,\"avg300\":0,\"total\":5},"
		   "\"full\":{\"avg10\":0.004,\"total\":0}},\"gpu\":{\"x\":[1,2]}}"), 1);
	same_str(S(",\"psi\":{\"memory\":{\"some\":{\"avg10\":100.01}}}"), 0);
	same_str(S(",\"psi\":{\"memory\":{\"some\":{\"avg10\":-0.0}}}"), 1);
	same_str(S(",\"psi\":{\"memory\":{\"some\":{\"avg10\":\"1\"}}}"), 0);
	same_str(S(",\"psi\":{\"memory\":{\"some\":{\"total\":1.5}}}"), 0);
	same_str(S(",\"psi\":{\"memory\":{\"some\":{\"other\":{}}}}"), 1);
	same_str(S(",\"psi\":{\"memory\":{\"some\":{\"other\":1,\"other\":1}}}"), 0);
	same_str(S(",\"psi\":{\"memory\":{\"some\":[]}}"), 0);
	same_str(S(",\"psi\":{\"memory\":[]}"), 0);
	same_str(S(",\"psi\":[]"), 0);
	same_str(S(",\"psi\":{\"memory\":{\"some\":{\"avg10\":1},\"some\":{}}}"), 0);
	same_str(S(",\"labels\":{\"team\":\"db\",\"env\":\"prod\"}"), 1);
	same_str(S(",\"labels\":{}"), 1);
	same_str(S(",\"labels\":{\"team\":\"db\",\"team\":\"x\"}"), 0);
	same_str(S(",\"labels\":{\"a b\":\"db\"}"), 0);
	same_str(S(",\"labels\":{\"a\":1}"), 0);
	same_str(S(",\"labels\":{\"a\":[]}"), 0);
	same_str(S(",\"labels\":[]"), 0);
	same_str(S(",\"cgroups\":[]"), 1);
	same_str(S(",\"cgroups\":{}"), 0);
	same_str(S(",\"cgroups\":[1]"), 0);
	same_str(S(",\"cgroups\":[[]]"), 0);
	same_str(S(",\"cgroups\":[{\"memory_stat\":{\"anon\":1},\"version\":2,\"path\":\"/a\","
		   "\"memory_max\":null,\"swap_current\":null,\"memory_current\":5,"
		   "\"events\":{\"oom\":0},\"settings\":{\"memory.high\":null},"
		   "\"psi\":{\"some\":{\"avg10\":0.5,\"total\":3}},\"other\":{\"x\":[]}}]"), 1);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2},{\"path\":\"/a\",\"version\":1}]"), 1);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2},{\"path\":\"/a\",\"version\":2}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\",\"version\":3}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\"}]"), 0);
	same_str(S(",\"cgroups\":[{\"version\":2}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":\"/a/../b\",\"version\":2}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":[],\"version\":2}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2.0}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2,\"memory_current\":null}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2,\"memory_max\":{}}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2,\"memory_stat\":{\"x\":null}}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2,\"psi\":{\"some\":{\"avg10\":101}}}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2,\"memory_stat\":{\"x\":1,\"x\":2}}]"), 0);
	same_str(S(",\"cgroups\":[{\"path\":\"/a\",\"path\":\"/b\",\"version\":2}]"), 0);

	/* exactly deep enough (32 levels), and one too deep */
	for (int levels = 31; levels <= 34; levels++) {
		char deep[256];
		size_t dl = (size_t)snprintf(deep, sizeof(deep),
					     "{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{},\"x\":");
		for (int i = 1; i < levels; i++)
			deep[dl++] = '[';
		for (int i = 1; i < levels; i++)
			deep[dl++] = ']';
		deep[dl++] = '}';
		same(deep, dl, levels <= DEPTH);
	}
}

/* The new parser's messages name the field, as the contract asks. */
static void test_messages(void)
{
	struct sample *s;
	size_t n;
	struct sample_body_err e;
	const char *b1 = "[{\"host\":\"a\",\"ts\":1764518400,\"vmstat\":{}},"
			 "{\"host\":\"b\",\"ts\":1764518400,\"vmstat\":{\"pgpgin\":-1}}]";

	CHECK_INT(sample_body_parse(b1, strlen(b1), DEPTH, &s, &n, &e), -1);
	CHECK_INT(e.kind, SB_SAMPLE);
	CHECK_INT(e.sample, 1);
	CHECK_STR(e.msg, "vmstat.pgpgin: expected an integer from 0 to 2^63-1");
	CHECK(s == NULL && n == 0);

	const char *b2 = S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2},"
			   "{\"path\":\"/b\",\"version\":2,\"memory_stat\":{\"anon\":\"x\"}}]");
	CHECK_INT(sample_body_parse(b2, strlen(b2), DEPTH, &s, &n, &e), -1);
	CHECK_STR(e.msg, "cgroups[1].memory_stat.anon: expected an integer from 0 to 2^63-1");
	const char *b3 = S(",\"psi\":{\"io\":{\"full\":{\"avg60\":300}}}");
	CHECK_INT(sample_body_parse(b3, strlen(b3), DEPTH, &s, &n, &e), -1);
	CHECK_STR(e.msg, "psi.io.full.avg60: expected a percentage from 0 to 100");
	const char *b4 = "{\"host\":\"a\",\"host\":\"b\",\"ts\":1764518400,\"vmstat\":{}}";
	CHECK_INT(sample_body_parse(b4, strlen(b4), DEPTH, &s, &n, &e), -1);
	CHECK_CONTAINS(e.msg, "duplicate key \"host\"");
	const char *b5 = "{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{\"pgpgin\":1,\"pgpgin\":1}}";
	CHECK_INT(sample_body_parse(b5, strlen(b5), DEPTH, &s, &n, &e), -1);
	CHECK_CONTAINS(e.msg, "duplicate key (field \"vmstat.pgpgin\" appears twice)");
	const char *b6 = "{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{\"pgpgin\": 9223372036854775808}}";
	CHECK_INT(sample_body_parse(b6, strlen(b6), DEPTH, &s, &n, &e), -1);
	CHECK_INT(e.kind, SB_TOOBIG);
	CHECK_STR(e.msg, "\"vmstat.pgpgin\"");
	const char *b6c = S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2,\"memory_stat\":{\"anon\":99999999999999999999}}]");
	CHECK_INT(sample_body_parse(b6c, strlen(b6c), DEPTH, &s, &n, &e), -1);
	CHECK_INT(e.kind, SB_TOOBIG);
	CHECK_STR(e.msg, "\"cgroups[0].memory_stat.anon\"");
	const char *b7 = "{\"host\":\"h\",\"ts\":1764518400,\"vmstat\":{}";
	CHECK_INT(sample_body_parse(b7, strlen(b7), DEPTH, &s, &n, &e), -1);
	CHECK_INT(e.kind, SB_SYNTAX);
	CHECK_CONTAINS(e.msg, "premature EOF");
	const char *b8 = S(",\"cgroups\":[{\"path\":\"/a\",\"version\":2},{\"path\":\"/a\",\"version\":2}]");
	CHECK_INT(sample_body_parse(b8, strlen(b8), DEPTH, &s, &n, &e), -1);
	CHECK_STR(e.msg, "cgroups[1].path: \"/a\" (version 2) appears twice");
	/* the agent's own counters: a map of integers like meminfo, both parsers alike */
	same_str(S(",\"agent\":{\"samples_taken\":12,\"samples_dropped_unspoolable\":3}"), 1);
	same_str(S(",\"agent\":{\"samples_taken\":-1}"), 0);
	same_str(S(",\"agent\":[1]"), 0);
	const char *b9 = S(",\"agent\":{\"samples_taken\":\"x\"}");
	CHECK_INT(sample_body_parse(b9, strlen(b9), DEPTH, &s, &n, &e), -1);
	CHECK_STR(e.msg, "agent.samples_taken: expected an integer from 0 to 2^63-1");
	const char *b10 = S(",\"agent\":{\"samples_taken\":12}");
	CHECK_INT(sample_body_parse(b10, strlen(b10), DEPTH, &s, &n, &e), 0);
	CHECK_INT(n, 1);
	bool found = false;
	for (size_t i = 0; n == 1 && i < s[0].m.n; i++)
		if (strcmp(dict_name(s[0].m.f[i].id), "agent.samples_taken") == 0)
			found = s[0].m.f[i].v == 12;
	CHECK(found);
	for (size_t i = 0; i < n; i++)
		sample_release(&s[i]);
	free(s);
}

/* xorshift64: deterministic mutations */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_mutations(void)
{
	static const char *const tokens[] = {
		"{", "}", "[", "]", ",", ":", "\"", "\\", "0", "-", ".", "e", "1e400", "null", "true",
		"9223372036854775808", "-1", "\"\\ud800\"", "\"\\u0000\"", "\f", "\xff", "\xc0\x80",
		"\"host\":\"x\",", "{}", "[]", "\"vmstat\":{},", "1.5", "\"a\":1,", "\"/a\"", "2",
		"\"\\ud83d\\ude00\"", " ", "\"ts\":1764518400,", "\"path\":\"/b\",", "\"\xe2\x82\xac\"",
	};
	struct gen_host *h = gen_host_new("mut-01", 2, 7);
	static char base[1 << 16], buf[1 << 17];
	int blen, accepted = 0, runs = 3000, bad = 0;

	gen_host_step(h, 10000);
	blen = gen_host_json(h, 1764518400000LL, base, sizeof(base));
	gen_host_free(h);
	CHECK(blen > 0 && (size_t)blen < sizeof(base) / 2);
	for (int r = 0; r < runs && blen > 0; r++) {
		size_t len = (size_t)blen;
		memcpy(buf, base, len);
		int nmut = 1 + (int)(rnd() % 3);
		for (int m = 0; m < nmut; m++) {
			size_t at = len ? (size_t)(rnd() % len) : 0;
			uint64_t op = rnd() % 3;
			if (op == 0 && len) {	/* delete a few bytes */
				size_t k = 1 + rnd() % 4;
				if (at + k > len)
					k = len - at;
				memmove(buf + at, buf + at + k, len - at - k);
				len -= k;
			} else {		/* insert (op 1) or overwrite (op 2) a token */
				const char *t = tokens[rnd() % (sizeof(tokens) / sizeof(tokens[0]))];
				size_t tl = strlen(t);
				if (op == 2 && at + tl <= len) {
					memcpy(buf + at, t, tl);
				} else if (len + tl < sizeof(buf)) {
					memmove(buf + at + tl, buf + at, len - at);
					memcpy(buf + at, t, tl);
					len += tl;
				}
			}
		}
		char why[512];
		int acc;
		if (body_diff(buf, len, DEPTH, &acc, why, sizeof(why))) {
			if (bad++ < 5)
				fprintf(stderr, "mutation %d differs: %s\n  %.*s\n", r, why, (int)len, buf);
		}
		accepted += acc;
	}
	CHECK_INT(bad, 0);
	/* the mutations reach both sides of the contract */
	CHECK(accepted > runs / 50 && accepted < runs - runs / 50);
	printf("mutations: %d runs, %d accepted by both\n", runs, accepted);
}

/* Both parsers stop a batch at SAMPLE_BODY_MAX_SAMPLES (the server answers
 * 413): the limit itself passes, one more sample is refused as SB_BATCH. */
static void test_batch_limit(void)
{
	const char *one = "{\"host\":\"b\",\"ts\":1,\"vmstat\":{\"x\":1}}";
	size_t olen = strlen(one), cap = (SAMPLE_BODY_MAX_SAMPLES + 1) * (olen + 1) + 2;
	char *buf = malloc(cap);
	CHECK(buf != NULL);
	for (int extra = 0; extra <= 1; extra++) {
		size_t len = 0, cnt = SAMPLE_BODY_MAX_SAMPLES + (size_t)extra;
		buf[len++] = '[';
		for (size_t i = 0; i < cnt; i++) {
			if (i)
				buf[len++] = ',';
			memcpy(buf + len, one, olen);
			len += olen;
		}
		buf[len++] = ']';
		for (int impl = 0; impl < 2; impl++) {
			struct sample *out = NULL;
			size_t n = 0;
			struct sample_body_err e;
			int rc = impl ? sample_body_parse_jansson(buf, len, 32, &out, &n, &e)
				      : sample_body_parse(buf, len, 32, &out, &n, &e);
			if (extra) {
				CHECK_INT(rc, -1);
				CHECK_INT(e.kind, SB_BATCH);
				CHECK(out == NULL);
			} else {
				CHECK_INT(rc, 0);
				CHECK_INT(n, SAMPLE_BODY_MAX_SAMPLES);
				sample_body_free(out, n);
			}
		}
	}
	free(buf);
}

/* The name cache (name_cache.h) remembers the key at each position of a
 * map: keys that change places, a key replaced by another, a map that
 * grows or shrinks, and the same layout under another map kind must all
 * still give each value to its own name. */
static void test_name_cache(void)
{
	static const char *const bodies[] = {
		"{\"host\":\"c\",\"ts\":1,\"vmstat\":{\"nc_a\":1,\"nc_b\":2,\"nc_c\":3}}",
		"{\"host\":\"c\",\"ts\":1,\"vmstat\":{\"nc_b\":1,\"nc_a\":2,\"nc_c\":3}}",
		"{\"host\":\"c\",\"ts\":1,\"vmstat\":{\"nc_b\":1,\"nc_d\":2}}",
		"{\"host\":\"c\",\"ts\":1,\"vmstat\":{\"nc_a\":1},\"meminfo\":{\"nc_a\":5,\"nc_b\":6}}",
		"{\"host\":\"c\",\"ts\":1,\"vmstat\":{\"nc_a\":1,\"nc_a\":2}}",	/* duplicate */
		"{\"host\":\"c\",\"ts\":1,\"vmstat\":{\"nc_b\":1,\"nc_a\":2,\"nc_c\":3}}",
	};
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
			same_str(bodies[i], i == 4 ? 0 : 1);
	/* and by value: after the layout a-b-c, b-a-c gives nc_a 2 */
	struct sample *s;
	size_t n;
	struct sample_body_err e;
	int64_t v = 0;
	CHECK_INT(sample_body_parse(bodies[0], strlen(bodies[0]), DEPTH, &s, &n, &e), 0);
	sample_body_free(s, n);
	CHECK_INT(sample_body_parse(bodies[1], strlen(bodies[1]), DEPTH, &s, &n, &e), 0);
	CHECK(n == 1 && sset_get(&s[0].m, dict_lookup("vmstat.nc_a"), &v) == 1);
	CHECK_INT(v, 2);
	sample_body_free(s, n);
	/* decimals converted without strtod must equal strtod's doubles */
	same_str("{\"host\":\"c\",\"ts\":1764518400.123,\"interval_s\":9.999,\"vmstat\":{},"
		 "\"psi\":{\"memory\":{\"some\":{\"avg10\":0.15,\"avg60\":99.99,\"avg300\":0.005,"
		 "\"total\":1},\"full\":{\"avg10\":-0.0,\"avg60\":12.345678901234,\"avg300\":"
		 "0.1234567890123456789,\"total\":2}}}}", 1);
}

/* The load generator's bodies patched in place (gen_body_render) are
 * always the text gen_host_json renders afresh, across widths changing. */
static void test_gen_body(void)
{
	static char want[1 << 17];
	struct gen_host *h = gen_host_new("patch-01", 20, 7);
	struct gen_body *b = gen_body_new();
	int bad = 0;

	CHECK(h && b);
	for (int step = 0; h && b && step < 300; step++) {
		size_t n = 0;
		int64_t ts = 1764518400000LL + step * 9999LL;
		const char *got = gen_body_render(b, h, ts, &n);
		int wl = gen_host_json(h, ts, want, sizeof(want));
		if (!got || wl < 0 || n != (size_t)wl || memcmp(got, want, n) != 0)
			bad++;
		gen_host_step(h, step % 7 == 0 ? 3600000 : 10000);	/* widths change now and then */
	}
	CHECK_INT(bad, 0);
	gen_body_free(b);
	gen_host_free(h);
}

int main(void)
{
	test_generated();
	test_corpus();
	test_hostile();
	test_messages();
	test_mutations();
	test_batch_limit();
	test_name_cache();
	test_gen_body();
	return harness_report("test_sample_body");
}
