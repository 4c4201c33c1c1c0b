/* Unit tests for the agent's parsers (agent/procfs.c, agent/swaps.c), cgroup selection
 * (agent/cgroup.c), JSON writer (agent/jsonw.c), options, spool, and the
 * agent's output on every kernel fixture validated by the server's own
 * parser (sample_from_json). Run from the repository root. */
#include "harness.h"

#include "alog.h"
#include "cgroup.h"
#include "collect.h"
#include "jsonw.h"
#include "memq.h"
#include "options.h"
#include "procfs.h"
#include "sample.h"
#include "spool.h"
#include "swaps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Fills rb with text as if read from a file. */
static void set_rb(struct rbuf *rb, const char *text)
{
	size_t n = strlen(text);

	free(rb->p);
	rb->p = malloc(n + 1);
	memcpy(rb->p, text, n + 1);
	rb->len = n;
	rb->cap = n + 1;
}

static void test_kv(void)
{
	struct rbuf rb = { 0 };
	struct pf_iter it;
	struct pf_kv kv;

	/* tabs, runs of spaces, a blank line, CRLF, no newline at the end, a
	 * value above 2^63-1, a malformed line, the largest legal value */
	set_rb(&rb, "  a 1\nb\t\t22  \n\nc 3\r\nbig 18446744073709551615\nbad x1\n"
		    "max 9223372036854775807\nover 9223372036854775808\nlast 7");
	pf_iter_init(&it, &rb);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(kv.klen == 1 && kv.key[0] == 'a' && kv.v == 1);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(kv.klen == 1 && kv.key[0] == 'b' && kv.v == 22);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(kv.klen == 1 && kv.key[0] == 'c' && kv.v == 3);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_RANGE);
	CHECK(kv.klen == 3 && !memcmp(kv.key, "big", 3));
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_BAD);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(kv.v == INT64_MAX);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_RANGE);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(kv.klen == 4 && kv.v == 7);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_END);

	/* the digits as printed are handed back when they are already JSON
	 * (no leading zero): the writer copies them instead of formatting v */
	set_rb(&rb, "a 0\nb 0042\nc 123456789012345678\nd 1234567890123456789\ne 12 \n");
	pf_iter_init(&it, &rb);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(kv.num && kv.nlen == 1 && kv.num[0] == '0' && kv.v == 0);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(!kv.num && kv.v == 42);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(kv.num && kv.nlen == 18 && kv.v == 123456789012345678);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(!kv.num && kv.v == 1234567890123456789);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(kv.num && kv.nlen == 2 && !memcmp(kv.num, "12", 2));
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_END);

	/* a NUL inside the text (the loops stop at the NUL that ends the
	 * buffer, not at this one): part of a key, or a malformed value */
	free(rb.p);
	rb.p = malloc(16);
	memcpy(rb.p, "a\0b 5\nc 1\0\nd 2", 15);
	rb.len = 14;
	rb.cap = 16;
	pf_iter_init(&it, &rb);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(kv.klen == 3 && !memcmp(kv.key, "a\0b", 3) && kv.v == 5);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_BAD);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_OK);
	CHECK(kv.klen == 1 && kv.key[0] == 'd' && kv.v == 2);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_END);

	/* meminfo: keys with parentheses, kB or no unit, odd spacing */
	set_rb(&rb, "MemTotal:       16314516 kB\nActive(anon):\t 5 kB\nHugePages_Total:       0\n"
		    "NoColon 5\nBadUnit: 5 MB\nDirectMap1G:  1048576 kB");
	pf_iter_init(&it, &rb);
	CHECK_INT(pf_next_kv(&it, &kv, true), PF_OK);
	CHECK(kv.klen == 8 && kv.v == 16314516);
	CHECK_INT(pf_next_kv(&it, &kv, true), PF_OK);
	CHECK(kv.klen == 12 && !memcmp(kv.key, "Active(anon)", 12) && kv.v == 5);
	CHECK_INT(pf_next_kv(&it, &kv, true), PF_OK);
	CHECK(kv.v == 0);
	CHECK_INT(pf_next_kv(&it, &kv, true), PF_BAD);
	CHECK_INT(pf_next_kv(&it, &kv, true), PF_BAD);
	CHECK_INT(pf_next_kv(&it, &kv, true), PF_OK);
	CHECK(kv.v == 1048576);
	CHECK_INT(pf_next_kv(&it, &kv, true), PF_END);

	/* empty buffer */
	set_rb(&rb, "");
	pf_iter_init(&it, &rb);
	CHECK_INT(pf_next_kv(&it, &kv, false), PF_END);
	rbuf_release(&rb);
}

static void test_psi_and_scalars(void)
{
	struct rbuf rb = { 0 };
	struct psi_res r;
	bool range;
	int64_t v;

	set_rb(&rb, "some avg10=1.25 avg60=0.00 avg300=100.00 total=12345\n"
		    "full avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551615");
	CHECK_INT(pf_parse_psi(&rb, &r, &range), 0);
	CHECK(r.some.present && r.full.present && range);
	CHECK_STR(r.some.avg[0], "1.25");
	CHECK_STR(r.some.avg[2], "100.00");
	CHECK(r.some.has_total && r.some.total == 12345);
	CHECK(!r.full.has_total);

	/* 5.4's cpu file: "some" only; a future token is ignored */
	set_rb(&rb, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0 future=1\n");
	CHECK_INT(pf_parse_psi(&rb, &r, &range), 0);
	CHECK(r.some.present && !r.full.present && !range);

	/* not PSI, or an average over 100 or not a number */
	set_rb(&rb, "garbage\n");
	CHECK_INT(pf_parse_psi(&rb, &r, &range), -1);
	set_rb(&rb, "some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n");
	CHECK_INT(pf_parse_psi(&rb, &r, &range), -1);
	set_rb(&rb, "some avg10=1e5 avg60=0.00 avg300=0.00 total=0\n");
	CHECK_INT(pf_parse_psi(&rb, &r, &range), -1);

	set_rb(&rb, "max\n");
	CHECK_INT(pf_parse_u63(&rb, false, &v), 1);
	set_rb(&rb, " 4096 ");
	CHECK_INT(pf_parse_u63(&rb, false, &v), 0);
	CHECK_INT(v, 4096);
	set_rb(&rb, "0x0007\n");
	CHECK_INT(pf_parse_u63(&rb, true, &v), 0);
	CHECK_INT(v, 7);
	CHECK_INT(pf_parse_u63(&rb, false, &v), -EINVAL);
	set_rb(&rb, "18446744073709551615\n");
	CHECK_INT(pf_parse_u63(&rb, false, &v), -ERANGE);
	set_rb(&rb, "-1\n");
	CHECK_INT(pf_parse_u63(&rb, false, &v), -EINVAL);

	char line[16];
	set_rb(&rb, "  6.1.0-18-amd64 \nx");
	CHECK_INT(pf_first_line(&rb, line, sizeof(line)), 14);
	CHECK_STR(line, "6.1.0-18-amd64");
	set_rb(&rb, "0123456789abcdefXYZ\n");
	CHECK_INT(pf_first_line(&rb, line, sizeof(line)), -1);
	rbuf_release(&rb);

	/* reading: an absent file, an empty file */
	CHECK_INT(pf_read(&rb, AT_FDCWD, "/nonexistent/vmscope"), -ENOENT);
	CHECK_INT(pf_read(&rb, AT_FDCWD, "tests/fixtures/k6.1/sys/fs/cgroup/system.slice/cgroup.procs"),
		  -ENODATA);
	CHECK_INT(pf_read(&rb, AT_FDCWD, "tests/fixtures/k6.1/proc/vmstat"), 0);
	CHECK(rb.len > 1000 && rb.p[rb.len] == '\0');
	rbuf_release(&rb);
}

/* The kind named name in sw, or NULL. */
static const struct swap_kind *swap_kind_named(const struct swap_summary *sw, const char *name)
{
	for (int i = 0; i < sw->nkinds; i++)
		if (!strcmp(sw->kind[i].name, name))
			return &sw->kind[i];
	return NULL;
}

static void test_swaps(void)
{
	struct rbuf rb = { 0 };
	struct swap_summary sw;
	const struct swap_kind *k;

	/* no swap: the header alone (also no newline, and nothing at all) */
	set_rb(&rb, "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
	swaps_parse(&rb, &sw);
	CHECK_INT(sw.devices, 0);
	CHECK_INT(sw.bad, 0);
	set_rb(&rb, "Filename Type Size Used Priority");
	swaps_parse(&rb, &sw);
	CHECK_INT(sw.devices, 0);
	CHECK_INT(sw.bad, 0);
	set_rb(&rb, "");
	swaps_parse(&rb, &sw);
	CHECK_INT(sw.devices + sw.bad, 0);

	/* zram by name (a partition to the kernel), priorities: the highest
	 * of those set (>= 0), none when every one is the kernel's (< 0) */
	set_rb(&rb, "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		    "/dev/zram0                              partition\t4194300\t\t100\t\t100\n"
		    "/dev/zram1                              partition\t1000\t\t1\t\t7\n"
		    "/swapfile                               file\t\t2097148\t\t0\t\t-2\n"
		    "/dev/vda3                               partition\t16777212\t0\t\t0\n"
		    "/dev/vda4 partition 10 5 -3\r\n"
		    "/var/swap\\040(deleted) file 20 20 -4\n");
	swaps_parse(&rb, &sw);
	CHECK_INT(sw.devices, 6);
	CHECK_INT(sw.bad, 0);
	k = swap_kind_named(&sw, "zram");
	CHECK(k && k->devices == 2 && k->size_kb == 4195300 && k->used_kb == 101 &&
	      k->has_priority && k->priority == 100);
	k = swap_kind_named(&sw, "partition");
	CHECK(k && k->devices == 2 && k->size_kb == 16777222 && k->used_kb == 5 &&
	      k->has_priority && k->priority == 0);
	k = swap_kind_named(&sw, "file");
	CHECK(k && k->devices == 2 && k->size_kb == 2097168 && k->used_kb == 20 && !k->has_priority);

	/* a file named like zram is a file; zram0p1, zram, xzram0 are not zram */
	CHECK(swaps_is_zram("/dev/zram12", 11));
	CHECK(swaps_is_zram("/dev/block/zram0", 16));
	CHECK(swaps_is_zram("zram3", 5));
	CHECK(!swaps_is_zram("/dev/zram", 9));
	CHECK(!swaps_is_zram("/dev/zram0p1", 12));
	CHECK(!swaps_is_zram("/dev/xzram0", 11));
	CHECK(!swaps_is_zram("/dev/zram0/", 11));
	set_rb(&rb, "/var/zram0 file 8 0 -2\n");
	swaps_parse(&rb, &sw);
	k = swap_kind_named(&sw, "file");
	CHECK(k && k->devices == 1);
	CHECK(swap_kind_named(&sw, "zram")->devices == 0);

	/* a type a later kernel may print is its own kind; a seventh kind,
	 * malformed lines and sums past 2^63-1 are skipped and counted */
	set_rb(&rb, "Filename Type Size Used Priority\n"
		    "/a vswap 1 0 -2\n/b kb 1 0 -2\n/c kc 1 0 -2\n/d kd 1 0 -2\n"
		    "not a swap line\n"
		    "/e partition 10 -1 -2\n"
		    "/f Partition 10 0 -2\n"
		    "/g partition 10 0 2147483648\n"
		    "partition 10 0 -2\n"
		    "/h partition 9223372036854775807 0 -2\n"
		    "/i file 1 0 -2147483648\n"
		    "/k partition 1 0 -2\n"
		    "/j partition 18446744073709551615 0 -2\n");
	swaps_parse(&rb, &sw);
	CHECK_INT(sw.nkinds, SWAP_KINDS_MAX);
	CHECK_INT(sw.devices, 5);
	CHECK_INT(sw.bad, 8);
	CHECK(sw.first_bad && sw.first_bad_len == 12 && !memcmp(sw.first_bad, "/d kd 1 0 -2", 12));
	k = swap_kind_named(&sw, "vswap");
	CHECK(k && k->devices == 1);
	k = swap_kind_named(&sw, "partition");
	CHECK(k && k->devices == 1 && k->size_kb == INT64_MAX);
	rbuf_release(&rb);

	/* zswap's bool parameters */
	int64_t v = -1;
	set_rb(&rb, "Y\n");
	CHECK_INT(pf_parse_yn(&rb, &v), 0);
	CHECK_INT(v, 1);
	set_rb(&rb, " N");
	CHECK_INT(pf_parse_yn(&rb, &v), 0);
	CHECK_INT(v, 0);
	set_rb(&rb, "1\n");
	CHECK_INT(pf_parse_yn(&rb, &v), 0);
	CHECK_INT(v, 1);
	set_rb(&rb, "yes\n");
	CHECK_INT(pf_parse_yn(&rb, &v), -EINVAL);
	set_rb(&rb, "\n");
	CHECK_INT(pf_parse_yn(&rb, &v), -EINVAL);
	rbuf_release(&rb);
}

static void test_select(void)
{
	char *inc[] = { "/system.slice/*" };
	char *exc[] = { "*/nginx*", "/system.slice/a\\*b" };
	struct cg_select sel = { .depth = 2, .max = 500 };

	CHECK(cg_path_selected(&sel, "/anything"));
	sel.include = inc;
	sel.ninclude = 1;
	CHECK(cg_path_selected(&sel, "/system.slice/sshd.service"));
	CHECK(!cg_path_selected(&sel, "/system.slice"));
	CHECK(!cg_path_selected(&sel, "/user.slice/x"));
	CHECK(cg_path_selected(&sel, "/system.slice/a/b"));	/* '*' crosses '/' */
	sel.exclude = exc;
	sel.nexclude = 2;
	CHECK(!cg_path_selected(&sel, "/system.slice/nginx.service"));
	CHECK(!cg_path_selected(&sel, "/system.slice/a*b"));
	CHECK(cg_path_selected(&sel, "/system.slice/axb"));
	CHECK(cg_path_selected(&sel, "/system.slice/getty@tty1.service"));
}

static void test_jsonw(void)
{
	char buf[256];
	struct jw w;
	/* a quote, a backslash, a tab, a newline, DEL, UTF-8, \x2d as systemd writes it */
	const char name[] = "/a\"b\\c\td\ne\x7f" "caf\xc3\xa9/x\\x2d";

	jw_init(&w, buf, sizeof(buf), -1);
	jw_obj_begin(&w);
	jw_keyz(&w, "path");
	jw_str(&w, name, sizeof(name) - 1);
	jw_keyz(&w, "n");
	jw_int(&w, INT64_MAX);
	jw_keyz(&w, "neg");
	jw_int(&w, INT64_MIN);
	jw_keyz(&w, "a");
	jw_arr_begin(&w);
	jw_null(&w);
	jw_bool(&w, true);
	jw_obj_begin(&w);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_obj_end(&w);
	CHECK_INT(w.err, 0);
	buf[w.len] = '\0';
	CHECK_STR(buf, "{\"path\":\"/a\\\"b\\\\c\\td\\ne\\u007fcaf\xc3\xa9/x\\\\x2d\","
		       "\"n\":9223372036854775807,\"neg\":-9223372036854775808,"
		       "\"a\":[null,true,{}]}");
	json_t *j = json_loads(buf, JSON_REJECT_DUPLICATES, NULL);
	CHECK(j && !strcmp(json_string_value(json_object_get(j, "path")), name));
	json_decref(j);

	/* a memory-only writer that is too small fails, stickily */
	char small[8];
	jw_init(&w, small, sizeof(small), -1);
	jw_obj_begin(&w);
	jw_keyz(&w, "long key");
	jw_int(&w, 1);
	CHECK_INT(w.err, -ENOSPC);

	/* flushing through a descriptor: output larger than the buffer */
	FILE *f = tmpfile();
	jw_init(&w, small, sizeof(small), fileno(f));
	jw_arr_begin(&w);
	for (int i = 0; i < 100; i++)
		jw_int(&w, i);
	jw_arr_end(&w);
	CHECK_INT(jw_flush(&w), 0);
	CHECK_INT(w.total, 291);
	fclose(f);
}

static void test_options(void)
{
	struct agent_opts o;
	char err[512];
	char *argv1[] = { "agent", "--once", "--stdout", "--interval", "2.5", "--label", "role=db",
			  "--label", "role=web", "--spool-max-bytes", "16M", "--host=h1", NULL };
	char *argv2[] = { "agent", "--interval", "0", NULL };
	char *argv3[] = { "agent", "--label", "bad key=1", "--once", "--stdout", NULL };
	char *argv4[] = { "agent", "--bogus", "1", NULL };
	char *argv5[] = { "agent", "--interval", "10", NULL };

	opts_init(&o);
	CHECK_INT(opts_parse(&o, 12, argv1, err, sizeof(err)), 0);
	CHECK(o.once && o.to_stdout && o.interval_s == 2.5);
	CHECK_INT(o.nlabels, 1);
	CHECK_STR(o.labels[0].value, "web");
	CHECK(o.spool_max_bytes == 16ull << 20);
	CHECK_STR(o.host, "h1");
	opts_release(&o);

	opts_init(&o);
	CHECK_INT(opts_parse(&o, 3, argv2, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--interval");
	opts_release(&o);
	opts_init(&o);
	CHECK_INT(opts_parse(&o, 5, argv3, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--label");
	opts_release(&o);
	opts_init(&o);
	CHECK_INT(opts_parse(&o, 3, argv4, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "unknown option");
	opts_release(&o);
	opts_init(&o);
	CHECK_INT(opts_parse(&o, 3, argv5, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--server");
	opts_release(&o);

	/* a config file; the command line wins, labels add up */
	char cfg[] = "/tmp/vmscope-agent-cfg.XXXXXX";
	int fd = mkstemp(cfg);
	const char *text = "# comment\nserver = http://10.0.0.5:8080\ninterval=30\n"
			   "label = dc=fra1\n  cgroup-exclude = /user.slice*  \n";
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	char *argv6[] = { "agent", "--config", cfg, "--interval", "5", "--label", "x=y", NULL };
	opts_init(&o);
	CHECK_INT(opts_parse(&o, 7, argv6, err, sizeof(err)), 0);
	CHECK_STR(o.server, "http://10.0.0.5:8080");
	CHECK(o.interval_s == 5);
	CHECK_INT(o.nlabels, 2);
	CHECK_INT(o.nexclude, 1);
	CHECK_STR(o.exclude[0], "/user.slice*");
	opts_release(&o);
	fd = open(cfg, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "intervall = 3\n", 14) == 14);
	close(fd);
	opts_init(&o);
	CHECK_INT(opts_parse(&o, 3, argv6, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, ":1: unknown option \"intervall\"");
	opts_release(&o);
	unlink(cfg);

	/* the shipped example parses, and names no server: an installed agent
	 * posts nowhere until one is set */
	char *argv7[] = { "agent", "--config", "deploy/agent.conf.example", "--server", "http://127.0.0.1:1", NULL };
	opts_init(&o);
	CHECK_INT(opts_parse(&o, 3, argv7, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "--server URL is needed");
	opts_release(&o);
	opts_init(&o);
	CHECK_INT(opts_parse(&o, 5, argv7, err, sizeof(err)), 0);
	CHECK(o.interval_s == 10 && o.spool_max_bytes == 64ull << 20);
	opts_release(&o);
}

static int collect_rec(void *ctx, const char *rec, size_t len)
{
	char *out = ctx;

	strncat(out, rec, len);
	strcat(out, ";");
	return 0;
}

static void append(struct spool *s, const char *rec)
{
	int fd = spool_append_begin(s);

	CHECK(fd >= 0);
	CHECK(write(fd, rec, strlen(rec)) == (ssize_t)strlen(rec));
	CHECK(spool_append_commit(s) >= 0);
}

static void test_spool(void)
{
	char dir[] = "/tmp/vmscope-spool-test.XXXXXX";
	char err[256], seen[512], path[600];
	struct spool s, s2;
	struct spool_pos ends[8];
	size_t n, bytes;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(spool_open(&s, dir, 1 << 20, err, sizeof(err)), 0);
	CHECK(spool_empty(&s));
	/* a second agent on the same spool is refused */
	CHECK_INT(spool_open(&s2, dir, 1 << 20, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "another agent");
	append(&s, "{\"a\":1}\n");
	append(&s, "{\"b\":2}\n");
	append(&s, "{\"c\":3}\n");
	seen[0] = '\0';
	CHECK_INT(spool_peek(&s, 2, 1 << 20, collect_rec, seen, ends, &n, &bytes), 0);
	CHECK_INT(n, 2);
	CHECK_STR(seen, "{\"a\":1};{\"b\":2};");
	CHECK_INT(spool_ack(&s, ends[0], 1), 0);
	/* a partial record, as a crash mid-write leaves it */
	int fd = spool_append_begin(&s);
	CHECK(write(fd, "{\"torn", 6) == 6);
	spool_close(&s);

	CHECK_INT(spool_open(&s, dir, 1 << 20, err, sizeof(err)), 0);
	seen[0] = '\0';
	CHECK_INT(spool_peek(&s, 8, 1 << 20, collect_rec, seen, ends, &n, &bytes), 0);
	CHECK_STR(seen, "{\"b\":2};{\"c\":3};");
	/* max_bytes stops a batch, but never below one record */
	CHECK_INT(spool_peek(&s, 8, 3, NULL, NULL, ends, &n, &bytes), 0);
	CHECK_INT(n, 1);
	CHECK_INT(spool_peek(&s, 8, 1 << 20, NULL, NULL, ends, &n, &bytes), 0);
	CHECK_INT(spool_ack(&s, ends[n - 1], n), 0);
	CHECK(spool_empty(&s));
	CHECK_INT(spool_pending_bytes(&s), 0);
	spool_close(&s);

	/* bounded: 4 KiB spool, 1 KiB records -> the oldest go, the newest stay */
	CHECK_INT(spool_open(&s, dir, 4096, err, sizeof(err)), 0);
	char rec[1024];
	long dropped = 0;
	for (int i = 0; i < 12; i++) {
		memset(rec, 'x', sizeof(rec));
		snprintf(rec, sizeof(rec), "{\"i\":%d", i);
		rec[strlen(rec)] = ' ';
		rec[sizeof(rec) - 2] = '}';
		rec[sizeof(rec) - 1] = '\n';
		fd = spool_append_begin(&s);
		CHECK(write(fd, rec, sizeof(rec)) == (ssize_t)sizeof(rec));
		long d = spool_append_commit(&s);
		CHECK(d >= 0);
		dropped += d;
	}
	CHECK(s.total <= 4096);
	CHECK_INT(spool_peek(&s, 8, 1 << 20, NULL, NULL, ends, &n, &bytes), 0);
	CHECK_INT((long)n + dropped, 12);
	CHECK_INT(s.dropped, dropped);
	spool_close(&s);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK_INT(system(path), 0);
}

/* Durability on demand: an appended record is unsynced until the server
 * accepts it (then it never needs a sync) or spool_sync makes it durable;
 * a new segment syncs the old one; the head is rewritten in place and
 * survives close and reopen. */
/* memq.h: records in order, the byte bound drops the oldest not in flight,
 * a record too big is refused and counted, the buffer is freed when empty,
 * and a writer with fd -1 and a tee streams a sample into it. */
static int first_chars(void *ctx, const char *rec, size_t len)
{
	char *out = ctx;
	size_t l = strlen(out);
	out[l] = len ? rec[0] : '-';
	out[l + 1] = '\0';
	return 0;
}

static bool memq_put(struct memq *q, const char *s, size_t n)
{
	memq_rec_begin(q);
	memq_rec_add(q, s, n);
	return memq_rec_end(q);
}

static void tee_memq(void *ctx, const char *p, size_t n)
{
	memq_rec_add(ctx, p, n);
}

static void test_memq(void)
{
	struct memq q;
	char seen[256] = "";
	size_t n;

	memq_init(&q);
	CHECK(memq_empty(&q));
	CHECK(memq_put(&q, "{\"a\":1}\n", 8));	/* the trailing newline is cut */
	CHECK(memq_put(&q, "{\"b\":2}", 7));
	CHECK_INT(memq_peek(&q, 10, SIZE_MAX, collect_rec, seen, &n), 0);
	CHECK_INT(n, 2);
	CHECK_STR(seen, "{\"a\":1};{\"b\":2};");
	memq_pop(&q, 2);
	CHECK(memq_empty(&q));
	CHECK(q.buf == NULL);	/* nothing kept, nothing held */

	/* records of a quarter of the bound: the fifth drops the oldest */
	size_t big = MEMQ_MAX_BYTES / 4 - 16;
	char *rec = malloc(MEMQ_MAX_BYTES + 1);
	for (int i = 0; i < 5; i++) {
		memset(rec, 'a' + i, big);
		CHECK(memq_put(&q, rec, big));
	}
	CHECK_INT(q.n, 4);
	CHECK_INT(q.dropped, 1);
	char firsts[8] = "";
	CHECK_INT(memq_peek(&q, 10, SIZE_MAX, first_chars, firsts, &n), 0);
	CHECK_STR(firsts, "bcde");
	/* the two oldest in flight: the next drop takes the third */
	q.pinned = 2;
	memset(rec, 'f', big);
	CHECK(memq_put(&q, rec, big));
	firsts[0] = '\0';
	CHECK_INT(memq_peek(&q, 10, SIZE_MAX, first_chars, firsts, &n), 0);
	CHECK_STR(firsts, "bcef");
	CHECK_INT(q.dropped, 2);
	/* bigger than the bound: refused and counted, and the unpinned ones
	 * went trying to make room; the ones in flight stay */
	memset(rec, 'z', MEMQ_MAX_BYTES);
	CHECK(!memq_put(&q, rec, MEMQ_MAX_BYTES));
	CHECK_INT(q.dropped, 5);
	firsts[0] = '\0';
	CHECK_INT(memq_peek(&q, 10, SIZE_MAX, first_chars, firsts, &n), 0);
	CHECK_STR(firsts, "bc");
	free(rec);
	memq_release(&q);

	/* a sample streamed into it through a memory-only writer */
	char buf[16];
	struct jw w;
	memq_init(&q);
	jw_init(&w, buf, sizeof(buf), -1);
	w.tee = tee_memq;
	w.tee_ctx = &q;
	memq_rec_begin(&q);
	jw_obj_begin(&w);
	jw_keyz(&w, "host");
	jw_str(&w, "a-long-host-name", 16);
	jw_obj_end(&w);
	jw_raw(&w, "\n", 1);
	CHECK_INT(jw_flush(&w), 0);
	CHECK(memq_rec_end(&q));
	seen[0] = '\0';
	CHECK_INT(memq_peek(&q, 1, SIZE_MAX, collect_rec, seen, &n), 0);
	CHECK_STR(seen, "{\"host\":\"a-long-host-name\"};");
	memq_release(&q);
}

static void test_spool_sync(void)
{
	char dir[] = "/tmp/vmscope-spool-sync.XXXXXX";
	char err[256], path[600], head[128];
	struct spool s;
	struct spool_pos ends[8];
	size_t n, bytes;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(spool_open(&s, dir, 1 << 20, err, sizeof(err)), 0);
	append(&s, "{\"a\":1}\n");
	CHECK(s.unsynced);
	append(&s, "{\"b\":2}\n");
	CHECK_INT(spool_peek(&s, 1, 1 << 20, NULL, NULL, ends, &n, &bytes), 0);
	CHECK_INT(spool_ack(&s, ends[0], 1), 0);
	CHECK(s.unsynced);	/* b is neither accepted nor synced */
	CHECK_INT(spool_peek(&s, 8, 1 << 20, NULL, NULL, ends, &n, &bytes), 0);
	CHECK_INT(spool_ack(&s, ends[n - 1], n), 0);
	CHECK(!s.unsynced);	/* accepted: no sync needed */
	CHECK_INT(spool_sync(&s), 0);
	CHECK_INT(s.syncs, 0);
	append(&s, "{\"c\":3}\n");
	CHECK_INT(spool_sync(&s), 0);
	CHECK_INT(s.syncs, 1);
	CHECK(!s.unsynced);
	CHECK_INT(spool_sync(&s), 0);
	CHECK_INT(s.syncs, 1);	/* nothing new: no second sync */
	/* the head file holds the acknowledged position, fixed width */
	snprintf(path, sizeof(path), "%s/head", dir);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK(fgets(head, sizeof(head), f) != NULL);
		fclose(f);
		CHECK_INT(strlen(head), 42);
	}
	struct spool_pos h = s.head;
	spool_close(&s);
	CHECK_INT(spool_open(&s, dir, 1 << 20, err, sizeof(err)), 0);
	CHECK(s.head.seq == h.seq && s.head.off == h.off);
	char seen[128] = "";
	CHECK_INT(spool_peek(&s, 8, 1 << 20, collect_rec, seen, ends, &n, &bytes), 0);
	CHECK_STR(seen, "{\"c\":3};");
	/* a new segment starts only after the old one is synced */
	append(&s, "{\"d\":4}\n");
	uint64_t before = s.syncs;
	s.segs[s.nsegs - 1].size = s.seg_target;	/* pretend the segment is full */
	int fd = spool_append_begin(&s);
	CHECK(fd >= 0);
	CHECK_INT(s.syncs, before + 1);
	CHECK(!s.unsynced);
	spool_append_abort(&s);
	spool_close(&s);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK_INT(system(path), 0);
}

/* A walk where a directory vanishes between listing and reading. */
struct vanish {
	const char *base;
	char seen[512];
};

static void visit_vanish(void *ctx, const struct cg_hier *h, int dirfd, const char *path,
			 size_t pathlen, struct cg_node *nd)
{
	struct vanish *v = ctx;
	char p[512];

	(void)h;
	(void)dirfd;
	(void)nd;
	strncat(v->seen, path, pathlen);
	strcat(v->seen, " ");
	if (!strcmp(path, "/a")) {
		snprintf(p, sizeof(p), "%s/b/x", v->base);
		rmdir(p);
		snprintf(p, sizeof(p), "%s/b", v->base);
		rmdir(p);
	}
}

static void test_walk_vanishing(void)
{
	char dir[] = "/tmp/vmscope-walk-test.XXXXXX", p[600];
	const char *sub[] = { "a", "a/y", "b", "b/x", "c", "c/d", "c/d/deep", "bad\nname" };
	struct cg_hiers hs = { 0 };
	struct cg_walk wk = { 0 };
	struct cg_select sel = { .depth = 2, .max = 500 };
	struct vanish v = { .base = dir, .seen = "" };

	CHECK(mkdtemp(dir) != NULL);
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, sub[i]);
		CHECK_INT(mkdir(p, 0755), 0);
	}
	hs.n = 1;
	hs.h[0].version = 2;
	hs.h[0].mount = dir;
	CHECK_INT(cg_walk(&wk, &hs, &sel, visit_vanish, &v), 4);
	/* /b vanished after /a was visited; the name with a newline is skipped */
	CHECK_STR(v.seen, "/a /c /a/y /c/d ");
	CHECK_INT(wk.skipped_bad, 1);
	CHECK(!wk.truncated);
	sel.max = 2;
	v.seen[0] = '\0';
	CHECK_INT(cg_walk(&wk, &hs, &sel, visit_vanish, &v), 2);
	CHECK(wk.truncated);
	cg_walk_release(&wk);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK_INT(system(p), 0);
}

/* pf_read_kept: a kept descriptor is read again from offset 0 (new content
 * of the same file shows), the budget is spent and given back, and a slot
 * whose descriptor went bad falls back to opening the file. */
static void test_read_kept(void)
{
	char dir[] = "/tmp/vmscope-keep-test.XXXXXX", p[600];
	struct rbuf rb = { 0 };
	struct pf_keep k = { .budget = 1 };
	int slot = -1, slot2 = -1, dfd;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	snprintf(p, sizeof(p), "%s/v", dir);
	f = fopen(p, "w");
	fputs("12\n", f);
	fclose(f);
	CHECK_INT(pf_read_kept(&rb, dfd, "v", &slot, &k), 0);
	CHECK_STR(rb.p, "12\n");
	CHECK(slot >= 0);
	CHECK_INT(k.budget, 0);
	CHECK_INT(k.kept, 1);
	/* rewritten in place (as the kernel regenerates a file): the kept
	 * descriptor shows the new text, shorter than the old */
	f = fopen(p, "w");
	fputs("7\n", f);
	fclose(f);
	int was = slot;
	CHECK_INT(pf_read_kept(&rb, dfd, "v", &slot, &k), 0);
	CHECK_STR(rb.p, "7\n");
	CHECK_INT(slot, was);
	/* no budget left: a second file is read but not kept */
	CHECK_INT(pf_read_kept(&rb, dfd, "v", &slot2, &k), 0);
	CHECK_INT(slot2, -1);
	/* a descriptor that went bad: closed, read afresh, kept again */
	close(slot);
	CHECK_INT(pf_read_kept(&rb, dfd, "v", &slot, &k), 0);
	CHECK_STR(rb.p, "7\n");
	CHECK(slot >= 0);
	CHECK_INT(k.kept, 1);
	/* an absent file leaves the slot empty and the budget as it was */
	pf_keep_close(&k, &slot);
	CHECK_INT(k.budget, 1);
	CHECK_INT(pf_read_kept(&rb, dfd, "absent", &slot, &k), -ENOENT);
	CHECK_INT(slot, -1);
	CHECK_INT(k.budget, 1);
	/* in a directory validated by its stamps (a recorded tree's) an absent
	 * file is remembered as absent, costing no descriptor, until the
	 * walker clears the slot (when the directory changed) */
	k.dir_stamped = true;
	CHECK_INT(pf_read_kept(&rb, dfd, "w", &slot, &k), -ENOENT);
	CHECK_INT(slot, PF_SLOT_ABSENT);
	CHECK_INT(k.budget, 1);
	snprintf(p, sizeof(p), "%s/w", dir);
	f = fopen(p, "w");
	fputs("5\n", f);
	fclose(f);
	CHECK_INT(pf_read_kept(&rb, dfd, "w", &slot, &k), -ENOENT);
	pf_keep_close(&k, &slot);
	CHECK_INT(slot, -1);
	CHECK_INT(k.budget, 1);
	CHECK_INT(pf_read_kept(&rb, dfd, "w", &slot, &k), 0);
	CHECK_STR(rb.p, "5\n");
	CHECK(slot >= 0);
	pf_keep_close(&k, &slot);
	/* ... and a file reached through a symbolic link is read, not kept:
	 * its target's directory is not the one watched */
	CHECK_INT(symlinkat("w", dfd, "link"), 0);
	CHECK_INT(pf_read_kept(&rb, dfd, "link", &slot, &k), 0);
	CHECK_STR(rb.p, "5\n");
	CHECK_INT(slot, -1);
	CHECK_INT(k.kept, 0);
	close(dfd);
	rbuf_release(&rb);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK_INT(system(p), 0);
}

/* Walk with kept descriptors: records what each visit got. */
struct keepvisit {
	char seen[512];
	int kept_dirs;		/* visits whose node was given */
	struct cg_walk *wk;
	bool cached;		/* read "v" as a cached file (cg_read) */
	struct cg_node *last;	/* the node of the last visit with one */
};

static void visit_keep(void *ctx, const struct cg_hier *h, int dirfd, const char *path,
		       size_t pathlen, struct cg_node *nd)
{
	struct keepvisit *v = ctx;
	struct rbuf rb = { 0 };

	(void)h;
	strncat(v->seen, path, pathlen);
	if (nd) {
		v->kept_dirs++;
		v->last = nd;
		/* "w" (never cached) first, as collect.c reads memory.current
		 * before the limits; then "v" through slot 0 */
		if (cg_read(v->wk, nd, dirfd, "w", 1, false, &rb) == 0)
			strncat(v->seen, rb.p, 1);
		if (cg_read(v->wk, nd, dirfd, "v", 0, v->cached, &rb) == 0)
			strncat(v->seen, rb.p, 1);
	}
	strcat(v->seen, " ");
	rbuf_release(&rb);
}

/* The node bookkeeping of a kept walk (as on kernfs): descriptors survive
 * between walks, a removed directory is forgotten and its descriptors
 * closed, one created again under the same name is opened afresh (a new
 * inode), and every descriptor is closed at release. */
static void test_walk_keep(void)
{
	char dir[] = "/tmp/vmscope-walkkeep.XXXXXX", p[600];
	struct cg_hiers hs = { 0 };
	struct cg_walk wk = { 0 };
	struct cg_select sel = { .depth = 2, .max = 500 };
	struct keepvisit v;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	const char *sub[] = { "a", "a/x", "b" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, sub[i]);
		CHECK_INT(mkdir(p, 0755), 0);
	}
	snprintf(p, sizeof(p), "%s/b/v", dir);
	f = fopen(p, "w");
	fputs("1\n", f);
	fclose(f);
	hs.n = 1;
	hs.h[0].version = 2;
	hs.h[0].mount = dir;
	hs.h[0].kernfs = true;	/* ext4 and tmpfs keep the link counts kernfs does */
	wk.keep.budget = 100;
	memset(&v, 0, sizeof(v));
	v.wk = &wk;
	CHECK_INT(cg_walk(&wk, &hs, &sel, visit_keep, &v), 3);
	CHECK_STR(v.seen, "/a /b1 /a/x ");
	CHECK_INT(v.kept_dirs, 3);
	CHECK_INT((int)wk.nnodes, 4);	/* the root too */
	int kept_before = wk.keep.kept;
	CHECK_INT(kept_before, 5);	/* 4 directories, b's file */
	/* the same tree again: nothing newly opened */
	memset(&v, 0, sizeof(v));
	v.wk = &wk;
	CHECK_INT(cg_walk(&wk, &hs, &sel, visit_keep, &v), 3);
	CHECK_STR(v.seen, "/a /b1 /a/x ");
	CHECK_INT(wk.keep.kept, kept_before);
	/* b made again with other content (the new one made before the old
	 * one goes, so the inode number differs for sure); a/x removed */
	snprintf(p, sizeof(p), "cd '%s' && mv b b.old && mkdir b && echo 2 > b/v && rm -rf b.old a/x",
		 dir);
	CHECK_INT(system(p), 0);
	memset(&v, 0, sizeof(v));
	v.wk = &wk;
	CHECK_INT(cg_walk(&wk, &hs, &sel, visit_keep, &v), 2);
	CHECK_STR(v.seen, "/a /b2 ");
	CHECK_INT((int)wk.nnodes, 3);
	CHECK_INT(wk.keep.kept, kept_before - 1);	/* a/x's directory closed, b's renewed */
	cg_walk_release(&wk);
	CHECK_INT(wk.keep.kept, 0);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK_INT(system(p), 0);
}

static void write_file(const char *dir, const char *name, const char *content)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

/* cg_read's copies of files only a write changes: taken from the second
 * read on (after the file's watch is in place), used while no event came,
 * dropped by a write (the next sample has the new content), read afresh
 * every CG_CACHE_REFRESH uses, and all dropped when a kept descriptor of
 * the directory fails. */
static void test_walk_cache(void)
{
	char dir[] = "/tmp/vmscope-walkcache.XXXXXX", sub[600];
	struct cg_hiers hs = { 0 };
	struct cg_walk wk = { 0 };
	struct cg_select sel = { .depth = 1, .max = 500 };
	struct keepvisit v;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	CHECK_INT(mkdir(sub, 0755), 0);
	write_file(sub, "v", "1\n");
	write_file(sub, "w", "w\n");
	hs.n = 1;
	hs.h[0].version = 2;
	hs.h[0].mount = dir;
	hs.h[0].kernfs = true;	/* kept, no directory watch: as on cgroupfs */
	wk.keep.budget = 100;
#define WALK(want)                                                      \
	do {                                                            \
		memset(&v, 0, sizeof(v));                               \
		v.wk = &wk;                                             \
		v.cached = true;                                        \
		CHECK_INT(cg_walk(&wk, &hs, &sel, visit_keep, &v), 1);  \
		CHECK_STR(v.seen, want);                                \
	} while (0)
	WALK("/aw1 ");
	CHECK(v.last != NULL);
	if (!v.last) {
		cg_walk_release(&wk);
		return;
	}
	CHECK_INT(v.last->ncache, 1);		/* watched after the first read */
	CHECK(!v.last->cache[0].valid);
	WALK("/aw1 ");
	CHECK(v.last->cache[0].valid);		/* the second read is kept */
	CHECK_INT(v.last->cache[0].uses, 0);
	WALK("/aw1 ");
	CHECK_INT(v.last->cache[0].uses, 1);	/* answered from the copy */
	write_file(sub, "v", "2\n");		/* a write: IN_MODIFY */
	WALK("/aw2 ");
	CHECK_INT(v.last->cache[0].uses, 0);
	WALK("/aw2 ");
	CHECK_INT(v.last->cache[0].uses, 1);
	/* bound on staleness: the copy is read afresh after CG_CACHE_REFRESH uses */
	for (int i = 1; i < CG_CACHE_REFRESH; i++)
		WALK("/aw2 ");
	CHECK_INT(v.last->cache[0].uses, CG_CACHE_REFRESH);
	WALK("/aw2 ");
	CHECK_INT(v.last->cache[0].uses, 0);
	/* "w"'s kept descriptor fails (made a directory's: EISDIR), as a
	 * removed cgroupfs file answers ENODEV: the node's copies go */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK(dup2(dfd, v.last->fd[1]) == v.last->fd[1]);
	close(dfd);
	unsigned long failed = wk.keep.failed;
	WALK("/aw2 ");
	CHECK(wk.keep.failed == failed + 1);
	CHECK_INT(v.last->ncache, 1);		/* watched afresh, */
	CHECK(!v.last->cache[0].valid);		/* copied from the next read */
	WALK("/aw2 ");
	CHECK(v.last->cache[0].valid);
	/* not cached: a file longer than CG_CACHED_MAX */
	write_file(sub, "v", "3 is a value far too long to keep a copy of\n");
	WALK("/aw3 ");
	WALK("/aw3 ");
	CHECK(!v.last->cache[0].valid);
	cg_walk_release(&wk);
	CHECK_INT(wk.keep.kept, 0);
#undef WALK
	snprintf(sub, sizeof(sub), "rm -rf '%s'", dir);
	CHECK_INT(system(sub), 0);
}

/* The agent's output on each fixture passes the server's validation. */
static void test_fixture_through_server_parser(const char *root, int want_cgroups)
{
	struct agent_opts o;
	struct collector c;
	static char buf[1 << 20];
	struct jw w;
	char err[SAMPLE_ERR_MAX];
	struct sample s;
	json_error_t je;

	opts_init(&o);
	o.root = strdup(root);
	strcpy(o.host, "fixture");
	o.nlabels = 1;
	o.labels[0].key = strdup("role");
	o.labels[0].value = strdup("db \"primary\"");
	CHECK_INT(collector_init(&c, &o), 0);
	jw_init(&w, buf, sizeof(buf) - 1, -1);
	CHECK_INT(collector_sample(&c, &w), 0);
	CHECK_INT(w.err, 0);
	buf[w.len] = '\0';
	json_t *j = json_loads(buf, JSON_REJECT_DUPLICATES, &je);
	CHECK(j != NULL);
	if (!j)
		fprintf(stderr, "%s: %s\n", root, je.text);
	int rc = sample_from_json(&s, j, err);
	CHECK_INT(rc, 0);
	if (rc == 0) {
		CHECK_STR(s.host, "fixture");
		CHECK_INT(s.ncg, want_cgroups);
		CHECK(s.m.n > 100);
		sample_release(&s);
	} else {
		fprintf(stderr, "%s: %s\n", root, err);
	}
	json_decref(j);
	collector_release(&c);
	opts_release(&o);
}

int main(void)
{
	alog_set_level(ALOG_ERROR);
	test_kv();
	test_psi_and_scalars();
	test_swaps();
	test_select();
	test_jsonw();
	test_options();
	test_spool();
	test_spool_sync();
	test_memq();
	test_walk_vanishing();
	test_read_kept();
	test_walk_keep();
	test_walk_cache();
	test_fixture_through_server_parser("tests/fixtures/k4.14", 7);
	test_fixture_through_server_parser("tests/fixtures/k5.4", 5);
	test_fixture_through_server_parser("tests/fixtures/k5.10", 7);
	test_fixture_through_server_parser("tests/fixtures/k6.1", 6);
	test_fixture_through_server_parser("tests/fixtures/k6.8-hybrid", 12);
	return harness_report("test_agent_parse");
}
