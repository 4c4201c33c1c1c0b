/* fuzz_agent_parse.c - libFuzzer target for the agent's /proc and cgroup
 * parsers.
 *
 * The input is split at "@@\n" into up to NFILES pieces, each the content of
 * one kernel file of a fake --root tree (vmstat, meminfo, pressure, the
 * cgroup v2 root's and a child cgroup's memory.stat / memory.events /
 * memory.max / memory.current / memory.pressure ..., /proc/swaps, zswap's
 * parameters). Two checks:
 *  - every piece goes straight through the low-level parsers (pf_next_kv
 *    with and without colons, pf_parse_psi, pf_parse_u63, pf_parse_yn,
 *    pf_first_line, swaps_parse),
 *    whose results must stay inside the buffer and within range;
 *  - the tree is sampled by the real collector (collector_sample, as the
 *    agent does), and the JSON it writes must parse and pass the server's
 *    validator (sample_from_json): whatever the kernel files say, the agent
 *    must never send a sample the server refuses. A refusal is a crash.
 * The tree lives in a private temporary directory made once per process.
 */
#include "alog.h"
#include "collect.h"
#include "jsonw.h"
#include "options.h"
#include "procfs.h"
#include "sample.h"
#include "swaps.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the files an input fills, in order; a missing piece leaves the file out */
static const char *const files[] = {
	"proc/vmstat",
	"proc/meminfo",
	"proc/pressure/memory",
	"sys/fs/cgroup/memory.stat",
	"sys/fs/cgroup/memory.events",
	"sys/fs/cgroup/memory.current",
	"sys/fs/cgroup/memory.pressure",
	"sys/fs/cgroup/a.slice/memory.stat",
	"sys/fs/cgroup/a.slice/memory.events",
	"sys/fs/cgroup/a.slice/memory.max",
	"sys/fs/cgroup/a.slice/memory.current",
	"sys/fs/cgroup/a.slice/memory.swap.max",
	"sys/fs/cgroup/a.slice/memory.swap.current",
	"sys/fs/cgroup/a.slice/memory.pressure",
	"sys/fs/cgroup/a.slice/memory.min",
	"sys/fs/cgroup/a.slice/memory.low",
	"sys/fs/cgroup/a.slice/memory.high",
	"proc/pressure/io",
	"proc/sys/vm/swappiness",
	"proc/swaps",
	"sys/module/zswap/parameters/enabled",
	"sys/module/zswap/parameters/max_pool_percent",
	"sys/module/zswap/parameters/shrinker_enabled",
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char root[256];
static struct agent_opts opts;
static struct collector col;
static char outbuf[1 << 20];

static void die(const char *what)
{
	fprintf(stderr, "fuzz_agent_parse: %s: %s\n", what, strerror(errno));
	abort();
}

static void put_file(const char *rel, const uint8_t *p, size_t n)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path);
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die(path);
		}
		p += w;
		n -= (size_t)w;
	}
	close(fd);
}

static void mkdirs(void)
{
	static const char *const dirs[] = {
		"proc", "proc/pressure", "proc/sys", "proc/sys/vm", "sys", "sys/fs",
		"sys/fs/cgroup", "sys/fs/cgroup/a.slice", "sys/module", "sys/module/zswap",
		"sys/module/zswap/parameters",
	};
	char path[512];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			die(path);
	}
	put_file("sys/fs/cgroup/cgroup.controllers", (const uint8_t *)"cpu memory\n", 11);
	put_file("sys/fs/cgroup/a.slice/cgroup.controllers", (const uint8_t *)"memory\n", 7);
}

static void cleanup(void)
{
	char path[512];

	collector_release(&col);
	opts_release(&opts);
	for (size_t i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/cgroup.controllers", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/a.slice/cgroup.controllers", root);
	unlink(path);
	static const char *const dirs[] = {
		"sys/module/zswap/parameters", "sys/module/zswap", "sys/module",
		"sys/fs/cgroup/a.slice", "sys/fs/cgroup", "sys/fs", "sys", "proc/sys/vm",
		"proc/sys", "proc/pressure", "proc",
	};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		rmdir(path);
	}
	rmdir(root);
}

static void setup(void)
{
	char err[256];
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/vmscope-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		die("mkdtemp");
	mkdirs();
	opts_init(&opts);
	if (opts_set(&opts, "root", root, err, sizeof(err)) < 0 ||
	    opts_set(&opts, "host", "fuzz", err, sizeof(err)) < 0 ||
	    opts_set(&opts, "cgroup-depth", "2", err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_agent_parse: %s\n", err);
		abort();
	}
	if (collector_init(&col, &opts) < 0) {
		fprintf(stderr, "fuzz_agent_parse: collector_init failed\n");
		abort();
	}
	alog_set_level(ALOG_ERROR);	/* the warnings about garbage would drown the log */
	atexit(cleanup);
}

/* The parsers on one piece, in an exactly sized buffer (plus the NUL that
 * pf_read always adds) so that ASan sees any read beyond it. */
static void parse_direct(const uint8_t *p, size_t n)
{
	struct rbuf rb = { malloc(n + 1), n, n + 1 };
	struct pf_iter it;
	struct pf_kv kv;
	struct psi_res psi;
	enum pf_status st;
	char line[64];
	bool range;
	int64_t v;

	if (!rb.p)
		return;
	memcpy(rb.p, p, n);
	rb.p[n] = '\0';
	for (int colon = 0; colon < 2; colon++) {
		pf_iter_init(&it, &rb);
		while ((st = pf_next_kv(&it, &kv, colon)) != PF_END) {
			if (st == PF_OK || st == PF_RANGE) {
				if (kv.klen == 0 || kv.key < rb.p || kv.key + kv.klen > rb.p + n)
					abort();
			}
			if (st == PF_OK && kv.v < 0)
				abort();
		}
	}
	if (pf_parse_psi(&rb, &psi, &range) == 0) {
		const struct psi_line *ls[2] = { &psi.some, &psi.full };
		for (int i = 0; i < 2; i++) {
			for (int a = 0; a < 3; a++)
				if (memchr(ls[i]->avg[a], '\0', sizeof(ls[i]->avg[a])) == NULL)
					abort();
			if (ls[i]->has_total && ls[i]->total < 0)
				abort();
		}
	}
	if (pf_parse_u63(&rb, false, &v) == 0 && v < 0)
		abort();
	if (pf_parse_u63(&rb, true, &v) == 0 && v < 0)
		abort();
	if (pf_first_line(&rb, line, sizeof(line)) >= 0 && strlen(line) >= sizeof(line))
		abort();
	if (pf_parse_yn(&rb, &v) == 0 && v != 0 && v != 1)
		abort();

	struct swap_summary sw;
	int64_t devices = 0;
	swaps_parse(&rb, &sw);
	if (sw.nkinds > SWAP_KINDS_MAX || sw.devices < 0 || sw.bad < 0)
		abort();
	if (sw.bad && (sw.first_bad < rb.p || sw.first_bad + sw.first_bad_len > rb.p + n))
		abort();
	for (int i = 0; i < sw.nkinds; i++) {
		const struct swap_kind *k = &sw.kind[i];
		size_t nl = strnlen(k->name, sizeof(k->name));
		if (nl == 0 || nl > SWAP_KIND_LEN || k->size_kb < 0 || k->used_kb < 0 ||
		    k->devices < 0 || (k->has_priority && k->priority < 0))
			abort();
		devices += k->devices;
	}
	if (devices != sw.devices)
		abort();
	rbuf_release(&rb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	const uint8_t *pieces[NFILES];
	size_t lens[NFILES], n = 0;
	const uint8_t *p = data, *end = data + size;
	char path[512];
	struct jw w;

	if (!ready) {
		setup();
		ready = 1;
	}
	while (n < NFILES && p <= end) {
		const uint8_t *sep = (const uint8_t *)memmem(p, (size_t)(end - p), "@@\n", 3);
		const uint8_t *stop = sep ? sep : end;
		pieces[n] = p;
		lens[n] = (size_t)(stop - p);
		n++;
		if (!sep)
			break;
		p = sep + 3;
	}
	for (size_t i = 0; i < NFILES; i++) {
		if (i < n) {
			parse_direct(pieces[i], lens[i]);
			put_file(files[i], pieces[i], lens[i]);
		} else {
			snprintf(path, sizeof(path), "%s/%s", root, files[i]);
			unlink(path);
		}
	}

	jw_init(&w, outbuf, sizeof(outbuf), -1);
	if (collector_sample(&col, &w) < 0 || w.err)
		return 0;	/* refusing to produce a sample is allowed */

	json_error_t je;
	char err[SAMPLE_ERR_MAX];
	struct sample s;
	json_t *j = json_loadb(w.buf, w.len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		fprintf(stderr, "agent wrote invalid JSON: %s\n%.*s\n", je.text, (int)w.len, w.buf);
		abort();
	}
	if (sample_from_json(&s, j, err) < 0) {
		fprintf(stderr, "the server would refuse the agent's sample: %s\n%.*s\n", err,
			(int)w.len, w.buf);
		abort();
	}
	sample_release(&s);
	json_decref(j);
	return 0;
}
