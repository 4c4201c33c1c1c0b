/* Unit tests for the contract's identifier rules (common/names.c). */
#include "harness.h"

#include <stdlib.h>

#include "names.h"

static int ok_host(const char *s) { return name_host_valid(s, strlen(s)); }
static int ok_path(const char *s) { return name_cgroup_path_valid(s, strlen(s)); }

int main(void)
{
	CHECK(ok_host("db-07"));
	CHECK(ok_host("a.b_c-D9"));
	CHECK(!ok_host(""));
	CHECK(!ok_host("db 07"));
	CHECK(!ok_host("db;drop table"));
	CHECK(!ok_host("x/y"));
	CHECK(!ok_host("web\xe2\x80\xae" "10"));	/* host names are ASCII: no bidi */
	/* free text: printable, no bidirectional controls (Trojan Source) */
	const char *rlo = "rack\xe2\x80\xae" "1a", *lri = "a\xe2\x81\xa6" "b", *alm = "a\xd8\x9c";
	CHECK(name_text_valid("caf\xc3\xa9 \xe2\x86\x92 r1", strlen("caf\xc3\xa9 \xe2\x86\x92 r1")));
	CHECK(!name_text_valid(rlo, strlen(rlo)));
	/* written out for notifications and logs */
	char *v = name_visible("/evil\xe2\x80\xae" "gnp.exe\x01 caf\xc3\xa9\xff\xe2\x81\xa6");
	CHECK(v && strcmp(v, "/evil\\u202Egnp.exe\\u0001 caf\xc3\xa9\\xFF\\u2066") == 0);
	free(v);
	CHECK(!name_text_valid(lri, strlen(lri)));
	CHECK(!name_text_valid(alm, strlen(alm)));
	CHECK(!name_text_valid("a\x01", 2));
	CHECK(name_printable_utf8(rlo, strlen(rlo)));	/* the cgroup-path rule keeps them */
	CHECK(name_cgroup_path_valid("/x\xe2\x80\xae", strlen("/x\xe2\x80\xae")));
	char big[300];
	memset(big, 'a', sizeof(big));
	CHECK(name_host_valid(big, 253));
	CHECK(!name_host_valid(big, 254));

	CHECK(ok_path("/system.slice"));
	CHECK(ok_path("/system.slice/nginx.service"));
	CHECK(ok_path("/system.slice/systemd-fsck@dev-disk-by\\x2duuid-1234.service"));
	CHECK(ok_path("/user.slice/user-1000.slice/user@1000.service/app.slice/a:b"));
	CHECK(ok_path("/caf\xc3\xa9"));
	CHECK(!ok_path("/"));
	CHECK(!ok_path("system.slice"));
	CHECK(!ok_path("/a/../b"));
	CHECK(!ok_path("/a/./b"));
	CHECK(!ok_path("/a//b"));
	CHECK(!ok_path("/a/"));
	CHECK(!ok_path("/a\nb"));
	CHECK(!ok_path("/bad\xff"));
	CHECK(!ok_path("/overlong\xc0\xaf"));
	CHECK(!name_cgroup_path_valid("/a\0b", 4));

	CHECK(name_metric_valid("Active(anon)", 12));
	CHECK(name_metric_valid("vm.swappiness", 13));
	CHECK(!name_metric_valid("a b", 3));
	CHECK(!name_metric_valid("", 0));
	return harness_report("test_names");
}
