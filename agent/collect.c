/* collect.c - one sample from the kernel's files, streamed as JSON. */
#include "collect.h"
#include "alog.h"
#include "names.h"
#include "swaps.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const vm_settings[] = {
	"swappiness", "dirty_ratio", "dirty_background_ratio", "dirty_bytes",
	"dirty_background_bytes", "min_free_kbytes", "watermark_scale_factor",
};
#define N_VM_SETTINGS (sizeof(vm_settings) / sizeof(vm_settings[0]))

/* zswap's module parameters (sys/module/zswap/parameters/): whether swap
 * goes through a compressed pool first, how large the pool may grow, and
 * whether it writes cold compressed pages back to the swap device (6.8+).
 * The compressor is a name, not an integer: settings cannot carry it. */
enum { ZS_ENABLED, ZS_MAX_POOL_PERCENT, ZS_SHRINKER_ENABLED, N_ZSWAP };
static const char *const zswap_params[N_ZSWAP] = {
	"enabled", "max_pool_percent", "shrinker_enabled",
};

static const char *const psi_names[] = { "memory", "io", "cpu" };

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif
#ifndef SYSFS_MAGIC
#define SYSFS_MAGIC 0x62656572
#endif

/* Slots of a cgroup's kept files (struct cg_node.fd): v2 and v1 nodes are
 * different directories, so their numbers overlap. */
enum {
	F_PRESSURE, F_CURRENT, F_MAX, F_SWAP_CURRENT, F_SET0, F_STAT = F_SET0 + 3, F_EVENTS,
	F_V1_USAGE = F_CURRENT, F_V1_LIMIT = F_MAX, F_V1_MEMSW = F_SWAP_CURRENT,
	F_V1_SWAPPINESS = F_SET0,
};
_Static_assert(F_EVENTS < CG_SLOTS, "cgroup file slots");

static bool fs_is(int dirfd, const char *path, unsigned long magic)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct statfs sf;
	bool is;

	if (fd < 0)
		return false;
	is = fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == magic;
	close(fd);
	return is;
}

/* How many files may stay open: o->keep_open, within RLIMIT_NOFILE (its
 * soft limit raised towards the hard one when needed), leaving 64
 * descriptors for the spool, libcurl and the log. */
static int keep_budget(const struct agent_opts *o)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)o->keep_open + 64;

	if (o->once || o->keep_open <= 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rlim_t was = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			rl.rlim_cur = was;
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want)
		return rl.rlim_cur > 128 ? (int)(rl.rlim_cur - 128) : 0;
	return o->keep_open;
}

/* Reads a short file that cannot change while the machine runs into out
 * (trimmed first line, printable UTF-8); *len 0 when absent. */
static void read_fixed_string(struct collector *c, const char *path, char *out, size_t cap,
			      int *len)
{
	int n;

	*len = 0;
	out[0] = '\0';
	if (pf_read(&c->rb, c->rootfd, path) < 0)
		return;
	n = pf_first_line(&c->rb, out, cap);
	if (n <= 0 || !name_text_valid(out, (size_t)n)) {
		out[0] = '\0';
		return;
	}
	*len = n;
}

static uint32_t fnv1a(const char *s, size_t n, uint32_t h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* The characters name_metric_valid() accepts, as a table filled from it
 * once (collector_init): a key is checked in one lookup per character. */
static bool metric_chars[256];

static void metric_chars_init(void)
{
	for (int ch = 1; ch < 256; ch++) {
		char one = (char)ch;
		metric_chars[ch] = name_metric_valid(&one, 1);
	}
}

/* name_metric_valid(k, n), table-driven (the agent's hot loop). */
static bool metric_key(const char *k, size_t n)
{
	if (n == 0 || n > METRIC_NAME_MAXLEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!metric_chars[(unsigned char)k[i]])
			return false;
	return true;
}

/* A key's hash for the key set: its length and its first and last eight
 * bytes (two loads, not a loop over every byte; equal hashes are compared
 * in full anyway). */
static uint32_t key_hash(const char *k, size_t n)
{
	uint64_t a = 0, b = 0;

	if (n >= 8) {
		memcpy(&a, k, 8);
		memcpy(&b, k + n - 8, 8);
	} else {
		memcpy(&a, k, n);
	}
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^ n;
	return (uint32_t)(h ^ (h >> 32));
}

int collector_init(struct collector *c, const struct agent_opts *o)
{
	const char *root = o->root ? o->root : "/";

	memset(c, 0, sizeof(*c));
	c->o = o;
	metric_chars_init();
	c->rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->rootfd < 0) {
		alog_error("could not open root directory %s: %s", root, strerror(errno));
		return -1;
	}
	c->page_size = sysconf(_SC_PAGESIZE);
	if (c->page_size <= 0)
		c->page_size = 4096;
	c->v1_nolimit = (INT64_MAX / c->page_size) * c->page_size;
	for (int i = 0; i < HF_N; i++)
		c->hfd[i] = -1;
	c->wk.keep.budget = keep_budget(o);
	c->keep_proc = c->wk.keep.budget > 0 && fs_is(c->rootfd, "proc", PROC_SUPER_MAGIC);
	c->keep_sys = c->wk.keep.budget > 0 && fs_is(c->rootfd, "sys", SYSFS_MAGIC);
	read_fixed_string(c, "proc/sys/kernel/random/boot_id", c->boot_id, sizeof(c->boot_id),
			  &c->boot_id_len);
	read_fixed_string(c, "proc/sys/kernel/osrelease", c->kernel, sizeof(c->kernel),
			  &c->kernel_len);
	if (cg_discover(&c->hs, o->root) < 0) {
		alog_error("could not find cgroup hierarchies: out of memory");
		close(c->rootfd);
		return -1;
	}
	for (int i = 0; i < c->hs.n; i++)
		alog_info("memory cgroup v%d hierarchy at %s", c->hs.h[i].version, c->hs.h[i].mount);
	if (c->hs.n == 0)
		alog_info("no memory cgroup hierarchy found; reporting host-level data only");
	c->sel.depth = o->cgroup_depth;
	c->sel.max = o->cgroup_max;
	c->sel.include = o->include;
	c->sel.ninclude = o->ninclude;
	c->sel.exclude = o->exclude;
	c->sel.nexclude = o->nexclude;
	return 0;
}

void collector_release(struct collector *c)
{
	for (int i = 0; i < HF_N; i++)
		pf_keep_close(&c->wk.keep, &c->hfd[i]);
	if (c->rootfd >= 0)
		close(c->rootfd);
	rbuf_release(&c->rb);
	rbuf_release(&c->rb2);
	cg_hiers_release(&c->hs);
	cg_walk_release(&c->wk);
	c->rootfd = -1;
}

/* Logs a message at warn level the first time its text is seen, at debug
 * afterwards: a broken counter must not fill the journal every interval. */
static void log_once(struct collector *c, const char *msg)
{
	uint32_t h = fnv1a(msg, strlen(msg), 2166136261u) | 1;
	uint32_t slot = h % LOGGED_SLOTS;

	for (uint32_t i = 0; i < LOGGED_SLOTS; i++) {
		uint32_t *e = &c->logged[(slot + i) % LOGGED_SLOTS];
		if (*e == h)
			break;
		if (*e == 0) {
			*e = h;
			alog_warn("%s", msg);
			return;
		}
	}
	alog_debug("%s", msg);
}

static void note_dropped(struct collector *c, const char *where, const char *key, size_t klen)
{
	char msg[512];

	c->dropped++;
	snprintf(msg, sizeof(msg), "dropped %s.%.*s: value above 2^63-1", where,
		 (int)(klen > 128 ? 128 : klen), key);
	log_once(c, msg);
}

/* Starts a new key set (dedup of one map's keys); O(1). */
static void keyset_reset(struct collector *c)
{
	if (++c->keygen == 0) {
		memset(c->keys, 0, sizeof(c->keys));
		c->keygen = 1;
	}
}

/* True when key was already seen in the current map (and records it). */
static bool keyset_seen(struct collector *c, const char *k, size_t n)
{
	uint32_t h = key_hash(k, n);

	for (uint32_t i = 0; i < KEYSET_SLOTS; i++) {
		struct keyslot *s = &c->keys[(h + i) % KEYSET_SLOTS];
		if (s->gen != c->keygen) {
			s->gen = c->keygen;
			s->hash = h;
			s->k = k;
			s->len = (uint32_t)n;
			return false;
		}
		if (s->hash == h && s->len == n && !memcmp(s->k, k, n))
			return true;
	}
	return true;	/* table full: treat further keys as duplicates */
}

/* Writes `"name":{...}` from the "key value" (or meminfo) lines in rb, or
 * nothing at all when no line yields a value. Messages name the map as
 * `where`, followed by " name" when sub (a cgroup's maps): formatted only
 * when a message is logged, not for every map. Returns whether the map
 * was written (it is left out when no line was usable). */
static bool emit_kv_map(struct collector *c, const char *name, const char *where, bool sub,
			const struct rbuf *rb, bool colon)
{
	struct pf_iter it;
	struct pf_kv kv;
	enum pf_status st;
	bool open = false;
	char loc[300];

	keyset_reset(c);
	pf_iter_init(&it, rb);
	while ((st = pf_next_kv(&it, &kv, colon)) != PF_END) {
		if (st == PF_BAD || !metric_key(kv.key, kv.klen)) {
			char msg[400];
			snprintf(msg, sizeof(msg), "skipped a malformed line in %s%s%s: \"%.*s\"", where,
				 sub ? " " : "", sub ? name : "",
				 (int)(kv.klen > 64 ? 64 : kv.klen), kv.key);
			log_once(c, msg);
			continue;
		}
		if (st == PF_RANGE) {
			snprintf(loc, sizeof(loc), "%s%s%s", where, sub ? " " : "", sub ? name : "");
			note_dropped(c, loc, kv.key, kv.klen);
			continue;
		}
		if (keyset_seen(c, kv.key, kv.klen))
			continue;	/* first value of a repeated key stands */
		if (!open) {
			jw_keyz(c->w, name);
			jw_obj_begin(c->w);
			open = true;
		}
		/* valid names need no escaping; digits as printed need no formatting */
		if (kv.num)
			jw_key_num(c->w, kv.key, kv.klen, kv.num, kv.nlen);
		else
			jw_key_int(c->w, kv.key, kv.klen, kv.v);
	}
	if (open)
		jw_obj_end(c->w);
	return open;
}

static void emit_psi_line(struct jw *w, const char *kind, const struct psi_line *l)
{
	static const char *const avg_names[] = { "avg10", "avg60", "avg300" };

	jw_keyz(w, kind);
	jw_obj_begin(w);
	for (int a = 0; a < 3; a++) {
		if (!l->avg[a][0])
			continue;
		jw_keyz(w, avg_names[a]);
		jw_raw_number(w, l->avg[a], strlen(l->avg[a]));
	}
	if (l->has_total) {
		jw_keyz(w, "total");
		jw_int(w, l->total);
	}
	jw_obj_end(w);
}

static void emit_psi_res(struct jw *w, const struct psi_res *r)
{
	jw_obj_begin(w);
	if (r->some.present)
		emit_psi_line(w, "some", &r->some);
	if (r->full.present)
		emit_psi_line(w, "full", &r->full);
	jw_obj_end(w);
}

/* A pressure file read into c->rb with result rc: parsed, false when
 * absent (see read_psi). */
static bool psi_of_read(struct collector *c, int rc, const char *where, struct psi_res *out)
{
	bool range;

	if (rc < 0) {
		if (rc != -ENOENT)
			alog_debug("%s: %s (treated as absent)", where, strerror(-rc));
		return false;
	}
	if (pf_parse_psi(&c->rb, out, &range) < 0) {
		char msg[256];
		snprintf(msg, sizeof(msg), "could not parse %s (treated as absent)", where);
		log_once(c, msg);
		return false;
	}
	if (range)
		note_dropped(c, where, "total", 5);
	return true;
}

/* Reads and parses a pressure file; false when absent (no PSI, psi=0 gives
 * EOPNOTSUPP on read, unreadable, empty). */
static bool read_psi(struct collector *c, int dirfd, const char *path, int *slot,
		     const char *where, struct psi_res *out)
{
	return psi_of_read(c, pf_read_kept(&c->rb, dirfd, path, slot, &c->wk.keep), where, out);
}

enum scalar { SC_ABSENT, SC_VALUE, SC_MAX };

/* Reads a one-value file: SC_VALUE with *v, SC_MAX for "max", SC_ABSENT
 * when missing or unusable. *err gets the read error (0 when read and
 * parsed), -ERANGE for a value above 2^63-1, -EINVAL for garbage. */
static enum scalar parse_scalar(struct collector *c, const char *path, const char *where,
				bool hex, int64_t *v, int *err);

static enum scalar read_scalar(struct collector *c, int dirfd, const char *path, int *slot,
			       const char *where, bool hex, int64_t *v, int *err)
{
	int rc = pf_read_kept(&c->rb, dirfd, path, slot, &c->wk.keep);

	*err = rc;
	if (rc < 0)
		return SC_ABSENT;
	return parse_scalar(c, path, where, hex, v, err);
}

/* read_scalar for a file of a cgroup (cg_read: through its node, from the
 * node's copy when `cached`). */
static enum scalar cg_scalar(struct collector *c, struct cg_node *nd, int dirfd, const char *path,
			     int slot, bool cached, const char *where, int64_t *v, int *err)
{
	int rc = cg_read(&c->wk, nd, dirfd, path, slot, cached, &c->rb);

	*err = rc;
	if (rc < 0)
		return SC_ABSENT;
	return parse_scalar(c, path, where, false, v, err);
}

/* The value of a one-value file already in c->rb (see read_scalar). */
static enum scalar parse_scalar(struct collector *c, const char *path, const char *where,
				bool hex, int64_t *v, int *err)
{
	int rc = pf_parse_u63(&c->rb, hex, v);

	*err = 0;
	if (rc == 1)
		return SC_MAX;
	if (rc == -ERANGE) {
		*err = -ERANGE;
		note_dropped(c, where, path, strlen(path));
		return SC_ABSENT;
	}
	if (rc < 0) {
		*err = -EINVAL;
		char msg[256];
		snprintf(msg, sizeof(msg), "could not parse %s/%s (treated as absent)", where, path);
		log_once(c, msg);
		return SC_ABSENT;
	}
	return SC_VALUE;
}

/* A string read at start (boot_id, kernel) when it was usable. */
static void emit_fixed_string(struct jw *w, const char *key, const char *s, int len)
{
	if (len <= 0)
		return;
	jw_keyz(w, key);
	jw_str(w, s, (size_t)len);
}

static void emit_ts(struct jw *w, const struct timespec *ts)
{
	char buf[48];
	long ms = ts->tv_nsec / 1000000;
	int n = snprintf(buf, sizeof(buf), "%lld.%03ld", (long long)ts->tv_sec, ms);

	jw_keyz(w, "ts");
	jw_raw_number(w, buf, (size_t)n);
}

/* Seconds with up to millisecond precision, trailing zeros dropped. */
static void emit_seconds(struct jw *w, const char *key, double s)
{
	char buf[48];
	int n = snprintf(buf, sizeof(buf), "%.3f", s);

	while (n > 1 && buf[n - 1] == '0')
		n--;
	if (buf[n - 1] == '.')
		n--;
	jw_keyz(w, key);
	jw_raw_number(w, buf, (size_t)n);
}

static void emit_mglru(struct collector *c)
{
	int64_t v;
	int err;

	static const char path[] = "sys/kernel/mm/lru_gen/enabled";

	if (pf_read_kept(&c->rb, c->rootfd, path, c->keep_sys ? &c->hfd[HF_MGLRU] : NULL,
			 &c->wk.keep) < 0)
		return;
	if (c->rb.p[0] == 'y' || c->rb.p[0] == 'n') {
		jw_keyz(c->w, "mglru");
		jw_bool(c->w, c->rb.p[0] == 'y');
		return;
	}
	if (parse_scalar(c, path, "mglru", true, &v, &err) != SC_VALUE)
		return;
	jw_keyz(c->w, "mglru");
	jw_bool(c->w, v != 0);
}

/* The host's settings, read before any is written (each read reuses
 * c->rb). */
struct host_settings {
	int64_t vm[N_VM_SETTINGS];
	bool have_vm[N_VM_SETTINGS];
	bool have_swaps;
	struct swap_summary swaps;
	int64_t zswap[N_ZSWAP];
	bool have_zswap[N_ZSWAP];
};

/* /proc/swaps, every sample (the use changes; one pread of a short file):
 * absent on a kernel without swap support (CONFIG_SWAP=n). */
static void read_swaps(struct collector *c, struct host_settings *hs)
{
	int rc = pf_read_kept(&c->rb, c->rootfd, "proc/swaps",
			      c->keep_proc ? &c->hfd[HF_SWAPS] : NULL, &c->wk.keep);

	if (rc < 0) {
		if (rc != -ENOENT)
			alog_debug("proc/swaps: %s (treated as absent)", strerror(-rc));
		return;
	}
	swaps_parse(&c->rb, &hs->swaps);
	hs->have_swaps = true;
	if (hs->swaps.bad) {
		char msg[400];
		size_t n = hs->swaps.first_bad_len;
		snprintf(msg, sizeof(msg), "skipped a malformed line in proc/swaps: \"%.*s\"",
			 (int)(n > 120 ? 120 : n), hs->swaps.first_bad);
		log_once(c, msg);
	}
}

/* zswap's parameters: "enabled" every sample (absent: CONFIG_ZSWAP=n),
 * the others only while it is on (they say nothing about a swap that does
 * not go through zswap: two reads saved on most hosts). */
static void read_zswap(struct collector *c, struct host_settings *hs)
{
	char path[80];
	int err;

	for (int i = 0; i < N_ZSWAP; i++) {
		snprintf(path, sizeof(path), "sys/module/zswap/parameters/%s", zswap_params[i]);
		int rc = pf_read_kept(&c->rb, c->rootfd, path,
				      c->keep_sys ? &c->hfd[HF_ZSWAP + i] : NULL, &c->wk.keep);
		if (rc < 0) {
			if (i == ZS_ENABLED)
				return;
			continue;
		}
		if (i == ZS_MAX_POOL_PERCENT) {
			hs->have_zswap[i] = parse_scalar(c, path, "settings", false, &hs->zswap[i],
							 &err) == SC_VALUE;
		} else if (pf_parse_yn(&c->rb, &hs->zswap[i]) == 0) {
			hs->have_zswap[i] = true;
		} else {
			char msg[256];
			snprintf(msg, sizeof(msg), "could not parse %s (treated as absent)", path);
			log_once(c, msg);
		}
		if (i == ZS_ENABLED && !(hs->have_zswap[i] && hs->zswap[i] == 1))
			return;
	}
}

static void emit_setting(struct jw *w, const char *key, int64_t v)
{
	jw_keyz(w, key);
	jw_int(w, v);
}

/* swap.devices and, per kind with a device, swap.KIND.{devices,size_kb,
 * used_kb,priority} (CONTRACT.md §1). */
static void emit_swaps(struct jw *w, const struct swap_summary *sw)
{
	char key[64];

	emit_setting(w, "swap.devices", sw->devices);
	for (int i = 0; i < sw->nkinds; i++) {
		const struct swap_kind *k = &sw->kind[i];
		if (!k->devices)
			continue;
		snprintf(key, sizeof(key), "swap.%s.devices", k->name);
		emit_setting(w, key, k->devices);
		snprintf(key, sizeof(key), "swap.%s.size_kb", k->name);
		emit_setting(w, key, k->size_kb);
		snprintf(key, sizeof(key), "swap.%s.used_kb", k->name);
		emit_setting(w, key, k->used_kb);
		if (k->has_priority) {
			snprintf(key, sizeof(key), "swap.%s.priority", k->name);
			emit_setting(w, key, k->priority);
		}
	}
}

static void emit_settings(struct collector *c)
{
	struct host_settings hs;
	char path[64];
	bool any = false;
	int err;

	memset(&hs, 0, sizeof(hs));
	for (size_t i = 0; i < N_VM_SETTINGS; i++) {
		snprintf(path, sizeof(path), "proc/sys/vm/%s", vm_settings[i]);
		hs.have_vm[i] = read_scalar(c, c->rootfd, path,
					    c->keep_proc ? &c->hfd[HF_SETTINGS + i] : NULL,
					    "settings", false, &hs.vm[i], &err) == SC_VALUE;
		any = any || hs.have_vm[i];
	}
	read_swaps(c, &hs);
	read_zswap(c, &hs);
	for (int i = 0; i < N_ZSWAP; i++)
		any = any || hs.have_zswap[i];
	if (!any && !hs.have_swaps)
		return;
	jw_keyz(c->w, "settings");
	jw_obj_begin(c->w);
	for (size_t i = 0; i < N_VM_SETTINGS; i++) {
		if (!hs.have_vm[i])
			continue;
		snprintf(path, sizeof(path), "vm.%s", vm_settings[i]);
		emit_setting(c->w, path, hs.vm[i]);
	}
	if (hs.have_swaps)
		emit_swaps(c->w, &hs.swaps);
	for (int i = 0; i < N_ZSWAP; i++) {
		if (!hs.have_zswap[i])
			continue;
		snprintf(path, sizeof(path), "zswap.%s", zswap_params[i]);
		emit_setting(c->w, path, hs.zswap[i]);
	}
	jw_obj_end(c->w);
}

static void emit_host_psi(struct collector *c)
{
	struct psi_res r[3];
	bool have[3], any = false;
	char path[64], where[32];

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "proc/pressure/%s", psi_names[i]);
		snprintf(where, sizeof(where), "psi.%s", psi_names[i]);
		have[i] = read_psi(c, c->rootfd, path, c->keep_proc ? &c->hfd[HF_PSI + i] : NULL,
				   where, &r[i]);
		any = any || have[i];
	}
	if (!any)
		return;
	jw_keyz(c->w, "psi");
	jw_obj_begin(c->w);
	for (int i = 0; i < 3; i++) {
		if (!have[i])
			continue;
		jw_keyz(c->w, psi_names[i]);
		emit_psi_res(c->w, &r[i]);
	}
	jw_obj_end(c->w);
}

/* What one cgroup directory yielded; written only when something was read. */
struct cg_data {
	bool psi_ok;
	struct psi_res psi;
	enum scalar cur, max, swap;	/* swap SC_MAX here means JSON null */
	int64_t cur_v, max_v, swap_v;
	int nset;
	const char *set_name[4];
	int64_t set_v[4];
	bool stat_ok, events_ok;
	bool fresh;	/* a file never cached was read: the directory was there */
};

/* A cgroup's files are read in this order: memory.current (never
 * cached) before the limits and settings (cached: see cg_read). */
static void read_cg_v2(struct collector *c, int dfd, struct cg_node *nd, const char *where,
		       struct cg_data *d)
{
	static const char *const sets[] = { "memory.low", "memory.high", "memory.swap.max" };
	int err;
	int64_t v;

	d->psi_ok = psi_of_read(c, cg_read(&c->wk, nd, dfd, "memory.pressure", F_PRESSURE, false,
					   &c->rb), where, &d->psi);
	d->fresh = d->psi_ok;
	if (!c->v2_memory)
		return;	/* the controller's files cannot exist */
	d->cur = cg_scalar(c, nd, dfd, "memory.current", F_CURRENT, false, where, &d->cur_v, &err);
	if (d->cur == SC_MAX)
		d->cur = SC_ABSENT;	/* usage is never "max": garbage (fuzzing found it) */
	d->fresh = d->fresh || d->cur != SC_ABSENT;
	d->max = cg_scalar(c, nd, dfd, "memory.max", F_MAX, true, where, &d->max_v, &err);
	d->swap = cg_scalar(c, nd, dfd, "memory.swap.current", F_SWAP_CURRENT, false, where,
			    &d->swap_v, &err);
	if (d->swap == SC_MAX)
		d->swap = SC_ABSENT;
	d->fresh = d->fresh || d->swap != SC_ABSENT;
	for (int i = 0; i < 3; i++) {
		/* "max" (no limit) is left out: settings are name -> integer */
		if (cg_scalar(c, nd, dfd, sets[i], F_SET0 + i, true, where, &v, &err) == SC_VALUE) {
			d->set_name[d->nset] = sets[i];
			d->set_v[d->nset++] = v;
		}
	}
}

static void read_cg_v1(struct collector *c, int dfd, struct cg_node *nd, const char *where,
		       struct cg_data *d)
{
	int err, memsw_err;
	int64_t v, memsw;

	d->cur = cg_scalar(c, nd, dfd, "memory.usage_in_bytes", F_V1_USAGE, false, where, &d->cur_v,
			   &err);
	if (d->cur == SC_MAX)
		d->cur = SC_ABSENT;	/* as in v2: usage is never "max" */
	d->fresh = d->cur != SC_ABSENT;
	d->max = cg_scalar(c, nd, dfd, "memory.limit_in_bytes", F_V1_LIMIT, true, where, &d->max_v,
			   &err);
	if (d->max == SC_ABSENT && err == -ERANGE)
		d->max = SC_MAX;	/* a limit above 2^63-1 is no limit */
	if (d->max == SC_VALUE && d->max_v >= c->v1_nolimit)
		d->max = SC_MAX;
	enum scalar ms = cg_scalar(c, nd, dfd, "memory.memsw.usage_in_bytes", F_V1_MEMSW, false,
				   where, &memsw, &memsw_err);
	if (d->cur == SC_VALUE && ms == SC_VALUE) {
		d->swap = SC_VALUE;
		d->swap_v = memsw > d->cur_v ? memsw - d->cur_v : 0;
	} else if (d->cur == SC_VALUE && memsw_err == -ENOENT) {
		d->swap = SC_MAX;	/* null: no memsw accounting */
	}
	if (cg_scalar(c, nd, dfd, "memory.swappiness", F_V1_SWAPPINESS, true, where, &v, &err) ==
	    SC_VALUE) {
		d->set_name[d->nset] = "memory.swappiness";
		d->set_v[d->nset++] = v;
	}
}

static void emit_scalar(struct jw *w, const char *key, enum scalar s, int64_t v)
{
	if (s == SC_ABSENT)
		return;
	jw_keyz(w, key);
	if (s == SC_MAX)
		jw_null(w);
	else
		jw_int(w, v);
}

/* cg_walk callback: one cgroup entry. */
static void visit_cgroup(void *ctx, const struct cg_hier *h, int dfd, const char *path,
			 size_t pathlen, struct cg_node *nd)
{
	struct collector *c = ctx;
	struct cg_data d;
	char where[240];
	size_t wl = pathlen > 200 ? 200 : pathlen;

	memset(&d, 0, sizeof(d));
	/* "cgroup v2 /path" (at most 200 bytes of it) for messages, built
	 * without snprintf: this runs for every cgroup of every sample */
	memcpy(where, "cgroup v2 ", 10);
	where[8] = (char)('0' + h->version);
	memcpy(where + 10, path, wl);
	where[10 + wl] = '\0';
	if (h->version == 2)
		read_cg_v2(c, dfd, nd, where, &d);
	else
		read_cg_v1(c, dfd, nd, where, &d);
	/* the two maps last, one per buffer, so they can be streamed */
	d.stat_ok = (h->version == 1 || c->v2_memory) &&
		cg_read(&c->wk, nd, dfd, "memory.stat", F_STAT, false, &c->rb) == 0;
	d.events_ok = h->version == 2 && c->v2_memory &&
		cg_read(&c->wk, nd, dfd, "memory.events", F_EVENTS, false, &c->rb2) == 0;
	/* Nothing read afresh (the limits may come from copies, cg_read):
	 * report the directory anyway while it exists (a hybrid machine's v2
	 * twin with pressure files off still gives its entry, CONTRACT.md §1),
	 * skip it when it vanished mid-walk. Every cgroup directory, v1 or v2,
	 * has cgroup.procs. */
	if (!d.fresh && !d.stat_ok && !d.events_ok &&
	    faccessat(dfd, "cgroup.procs", F_OK, 0) < 0)
		return;

	struct jw *w = c->w;
	if (c->ncg == 0) {
		jw_keyz(w, "cgroups");
		jw_arr_begin(w);
	}
	c->ncg++;
	jw_obj_begin(w);
	jw_keyz(w, "path");
	jw_str(w, path, pathlen);
	jw_keyz(w, "version");
	jw_int(w, h->version);
	if (d.stat_ok)
		emit_kv_map(c, "memory_stat", where, true, &c->rb, false);
	if (d.events_ok)
		emit_kv_map(c, "events", where, true, &c->rb2, false);
	if (d.psi_ok) {
		jw_keyz(w, "psi");
		emit_psi_res(w, &d.psi);
	}
	emit_scalar(w, "memory_current", d.cur, d.cur_v);
	emit_scalar(w, "memory_max", d.max, d.max_v);
	emit_scalar(w, "swap_current", d.swap, d.swap_v);
	if (d.nset) {
		jw_keyz(w, "settings");
		jw_obj_begin(w);
		for (int i = 0; i < d.nset; i++) {
			jw_keyz(w, d.set_name[i]);
			jw_int(w, d.set_v[i]);
		}
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

/* Whether the v2 hierarchy offers the memory controller: a controller is
 * in a cgroup's cgroup.controllers only when its parent enabled it, so
 * without "memory" in the root's list no v2 cgroup has memory.stat,
 * memory.current, ... On a hybrid machine (memory bound to v1) that saves
 * eight failing opens per v2 cgroup and sample, leaving memory.pressure,
 * which PSI gives every cgroup. The list changes only when the v1 memory
 * hierarchy is unmounted, so it is read again each sample (one pread). A
 * tree without the file is taken to have the controller (read as before). */
static bool v2_has_memory(struct collector *c)
{
	for (int i = 0; i < c->hs.n; i++) {
		const struct cg_hier *h = &c->hs.h[i];
		char path[4200];

		if (h->version != 2)
			continue;
		if (snprintf(path, sizeof(path), "%s/cgroup.controllers", h->mount) >= (int)sizeof(path))
			return true;
		int rc = pf_read_kept(&c->rb, AT_FDCWD, path, h->kernfs ? &c->hfd[HF_V2CTL] : NULL,
				      &c->wk.keep);
		if (rc == -ENODATA)
			return false;	/* empty: no controller at all */
		if (rc < 0)
			return true;
		for (const char *p = c->rb.p; (p = strstr(p, "memory")); p += 6) {
			char after = p[6];
			if ((p == c->rb.p || p[-1] == ' ') &&
			    (after == '\0' || after == ' ' || after == '\n'))
				return true;
		}
		return false;
	}
	return true;
}

/* The agent's own counters (struct agent_counters), as of the sample
 * before this one. */
static void emit_self(struct collector *c)
{
	const struct agent_counters *a = c->self;

	if (!a)
		return;
	const struct { const char *k; uint64_t v; } f[] = {
		{ "samples_taken", a->taken },
		{ "samples_delivered", a->delivered },
		{ "samples_refused", a->refused },
		{ "samples_refused_clock", a->refused_clock },
		{ "samples_dropped_spool_full", a->dropped_spool_full },
		{ "samples_dropped_unspoolable", a->dropped_unspoolable },
		{ "samples_kept_in_memory", a->kept_in_memory },
		{ "spool_write_errors", a->spool_write_errors },
		{ "samples_lost_spool_removed", a->lost_spool_removed },
		{ "samples_duplicate", a->duplicates },
	};
	jw_keyz(c->w, "agent");
	jw_obj_begin(c->w);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		jw_key_int(c->w, f[i].k, strlen(f[i].k), (int64_t)f[i].v);
	jw_obj_end(c->w);
}

int collector_sample(struct collector *c, struct jw *w)
{
	const struct agent_opts *o = c->o;
	struct timespec ts;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	c->w = w;
	c->dropped = 0;
	c->ncg = 0;
	rc = pf_read_kept(&c->rb, c->rootfd, "proc/vmstat", c->keep_proc ? &c->hfd[HF_VMSTAT] : NULL,
			  &c->wk.keep);
	if (rc < 0) {
		alog_error("could not read %s/proc/vmstat: %s; no sample this interval",
			  o->root ? o->root : "", strerror(-rc));
		return -1;
	}
	jw_obj_begin(w);
	jw_keyz(w, "host");
	jw_str(w, o->host, strlen(o->host));
	emit_ts(w, &ts);
	emit_seconds(w, "interval_s", o->interval_s);
	if (!emit_kv_map(c, "vmstat", "vmstat", false, &c->rb, false)) {
		/* vmstat is required even when no line of it was usable
		 * (fuzzing found it): an empty map keeps the sample valid */
		jw_keyz(w, "vmstat");
		jw_obj_begin(w);
		jw_obj_end(w);
	}
	emit_fixed_string(w, "boot_id", c->boot_id, c->boot_id_len);
	emit_fixed_string(w, "kernel", c->kernel, c->kernel_len);
	jw_keyz(w, "page_size");
	jw_int(w, c->page_size);
	emit_mglru(c);
	jw_keyz(w, "agent_version");
	jw_str(w, VMSCOPE_VERSION, strlen(VMSCOPE_VERSION));
	emit_self(c);
	if (o->nlabels) {
		jw_keyz(w, "labels");
		jw_obj_begin(w);
		for (size_t i = 0; i < o->nlabels; i++) {
			jw_key(w, o->labels[i].key, strlen(o->labels[i].key));
			jw_str(w, o->labels[i].value, strlen(o->labels[i].value));
		}
		jw_obj_end(w);
	}
	emit_settings(c);
	if (pf_read_kept(&c->rb, c->rootfd, "proc/meminfo", c->keep_proc ? &c->hfd[HF_MEMINFO] : NULL,
			 &c->wk.keep) == 0)
		emit_kv_map(c, "meminfo", "meminfo", false, &c->rb, true);
	emit_host_psi(c);
	c->v2_memory = v2_has_memory(c);
	cg_walk(&c->wk, &c->hs, &c->sel, visit_cgroup, c);
	if (c->ncg)
		jw_arr_end(w);
	jw_obj_end(w);
	if (c->wk.skipped_bad && c->wk.skipped_bad != c->last_bad)
		alog_warn("skipped %lu cgroups whose path is not printable UTF-8 of at most 4096 bytes",
			 c->wk.skipped_bad);
	c->last_bad = c->wk.skipped_bad;
	if (c->wk.truncated && !c->last_truncated)
		alog_warn("more cgroups than --cgroup-max %d; reporting the first %d (breadth first)",
			 o->cgroup_max, c->ncg);
	c->last_truncated = c->wk.truncated;
	return 0;
}
