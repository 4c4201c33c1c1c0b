/* sample_yajl.c - an ingest body parsed by libyajl callbacks straight into
 * struct sample (sample_body.h).
 *
 * Why: jansson builds a tree of ~1,700 objects per 20-cgroup sample and
 * reads through a per-character callback; that was 78% of ingest CPU
 * (docs/scaling.md). Here each value lands in its sset as it is read.
 *
 * The contract is the reference's (sample_body_parse_jansson: jansson with
 * duplicate keys refused + sample_from_json), check for check, and the
 * messages are the same "<field path>: <expected>". Where yajl 2.1 reads
 * more leniently than jansson, this file closes the gap:
 *   - UTF-8: yajl checks only the shape of multi-byte sequences; every
 *     string and key is checked strictly here (no overlongs, surrogates or
 *     code points over U+10FFFF), and a NUL (from \u0000) is refused;
 *   - numbers come as text (yajl_number) and are converted like jansson
 *     (strtoll / strtod): over 2^63-1 or a real overflow refuses the body;
 *   - duplicate keys: refused in every object (a small hash set; in the
 *     name -> integer maps the sample's own duplicate-id check does it);
 *   - nesting depth is counted in the callbacks;
 *   - yajl takes \v and \f as white space and decodes a lone or mismatched
 *     \u surrogate escape to '?' or a wrong character, and jansson skips a
 *     raw NUL byte after a number; a body holding any of these (agents never
 *     send them) goes to the jansson reference instead, which refuses or
 *     accepts it exactly as before.
 */
#include "sample_body.h"
#include "dict.h"
#include "name_cache.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#define INT_EXPECT "expected an integer from 0 to 2^63-1"

/* What the object or array being read is. */
enum ctx {
	X_BODY,		/* the top-level array of samples */
	X_SAMPLE,
	X_MAP,		/* name -> integer (vmstat, meminfo, memory_stat, ...) */
	X_PSI,		/* host psi: memory, io, cpu */
	X_PSI_RES,	/* some, full */
	X_PSI_LINE,	/* avg10, avg60, avg300, total */
	X_LABELS,
	X_CGROUPS,
	X_CGROUP,
	X_SKIP,		/* inside a value nobody reads (unknown key) */
};

/* Keys a frame knows; K_OTHER is ignored (its value still must be JSON
 * that jansson reads). */
enum key {
	K_OTHER = 0,
	/* sample */
	K_HOST, K_TS, K_BOOT_ID, K_KERNEL, K_AGENT_VERSION, K_INTERVAL, K_PAGE_SIZE, K_MGLRU,
	K_VMSTAT, K_MEMINFO, K_SETTINGS, K_PSI, K_LABELS, K_CGROUPS, K_AGENT,
	/* cgroup (K_SETTINGS, K_PSI shared) */
	K_PATH, K_VERSION, K_MEMORY_STAT, K_EVENTS, K_MEMORY_CURRENT, K_MEMORY_MAX, K_SWAP_CURRENT,
	/* psi */
	K_RES0,		/* + 0..2: memory, io, cpu */
	K_SOME = K_RES0 + 3, K_FULL,
	K_AVG0,		/* + 0..2: avg10, avg60, avg300 */
	K_TOTAL = K_AVG0 + 3,
	K_MAPKEY,	/* X_MAP / X_LABELS: the key is in p->key */
};

static const char *const psi_res[] = { "memory", "io", "cpu" };
static const char *const psi_kind[] = { "some", "full" };
static const char *const psi_avg[] = { "avg10", "avg60", "avg300" };

/* Fixed names' slots in the name cache (nc_fixed): meta.*, the cgroup
 * scalars, then PSI by ((resource 0..3) * 2 + some/full) * 4 + field. */
enum { FX_INTERVAL, FX_PAGE_SIZE, FX_MGLRU, FX_CG_SCALAR, FX_PSI = FX_CG_SCALAR + 3 };

struct frame {
	unsigned char kind;	/* enum ctx */
	unsigned char key;	/* enum key of the current member */
	unsigned char nullable;	/* X_MAP: null allowed (settings) */
	unsigned char res;	/* X_PSI_RES / X_PSI_LINE: 0..2 host resource, 3 cgroup */
	unsigned char line;	/* X_PSI_LINE: 0 some, 1 full */
	unsigned char mk;	/* X_MAP: enum nc_map (name_cache.h) */
	uint32_t pos;		/* X_MAP: keys read so far (the position in the name cache) */
	uint32_t obj;		/* object number for duplicate keys; 0 when not checked */
	uint32_t known;		/* bit k: known key k (enum key) seen in this object */
	const char *prefix;	/* X_MAP: "vmstat." */
	const char *name;	/* X_MAP: "vmstat", "memory_stat" (for messages) */
	/* set once when the frame is pushed, not per value (snprintf per value
	 * was half of the parse, callgrind): */
	char path[48];		/* X_MAP, X_CGROUP, X_PSI_*: "cgroups[3].memory_stat" */
	char lp[24];		/* X_PSI_LINE: the fields' prefix, "psi.memory.some." */
};

/* One key seen in an object: for duplicate keys. */
struct kslot {
	uint32_t obj, hash, off, len;	/* obj 0: empty; key at arena[off..off+len) */
};

struct yp {
	int max_depth, depth;
	struct frame *st;		/* st[0..depth) */
	struct sample *out;		/* finished samples (owned) */
	size_t n, cap;
	bool top_array, in_sample;
	size_t idx;			/* current sample's index */
	struct sample cur;
	unsigned seen;			/* of cur: 1 host, 2 ts, 4 vmstat */
	size_t ncg;			/* cgroups read in cur */
	/* the cgroup being read (fields come in any order) */
	char *cg_path;
	int cg_version;			/* 0 absent/invalid */
	bool cg_path_ok, cg_version_ok;
	struct sset cg_m;
	size_t nlabels;
	/* the last key, for messages and map fields */
	char key[METRIC_NAME_MAXLEN + 1];
	size_t keylen;
	bool key_ascii;			/* printable ASCII, at most 64: can be named */
	/* X_MAP: the key's id from the name cache (0: intern it) and its slot */
	uint32_t map_id;
	struct nc_slot *map_slot;
	/* duplicate keys */
	struct kslot *ks;
	size_t kcap, kn;
	char *arena;
	size_t alen, acap;
	uint32_t nobj;
	struct sample_body_err *e;
	yajl_handle h;
	size_t end;			/* bytes up to the end of the top-level value, 0 before */
};

static int failf(struct yp *p, enum sample_body_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int failf(struct yp *p, enum sample_body_kind kind, const char *fmt, ...)
{
	va_list ap;

	if (p->e->kind != SB_OK)
		return 0;
	p->e->kind = kind;
	p->e->sample = p->idx;
	va_start(ap, fmt);
	vsnprintf(p->e->msg, sizeof(p->e->msg), fmt, ap);
	va_end(ap);
	return 0;	/* yajl: stop */
}

/* --- strings --- */

/* Strict UTF-8 as jansson checks it, and no NUL byte (jansson refuses
 * \u0000 in strings and keys). */
static bool utf8_strict(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];
		if (c >= 0x01 && c < 0x80) {
			i++;
			continue;
		}
		size_t n;
		unsigned cp, min;
		if (c >= 0xC2 && c <= 0xDF) {
			n = 2; cp = c & 0x1F; min = 0x80;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 3; cp = c & 0x0F; min = 0x800;
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 4; cp = c & 0x07; min = 0x10000;
		} else {
			return false;	/* NUL, a continuation byte, C0/C1, F5.. */
		}
		if (len - i < n)
			return false;
		for (size_t k = 1; k < n; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += n;
	}
	return true;
}

/* name_metric_valid (names.h) by table: it runs for every counter name
 * (~1,500 per 20-cgroup sample) and its chain of comparisons was 6% of the
 * parse. Same rule: 1..128 bytes of A-Za-z0-9_().:- */
static const unsigned char metric_ch[256] = {
	['a' ... 'z'] = 1, ['A' ... 'Z'] = 1, ['0' ... '9'] = 1,
	['_'] = 1, ['('] = 1, [')'] = 1, ['.'] = 1, [':'] = 1, ['-'] = 1,
};

static bool metric_name_ok(const unsigned char *s, size_t len)
{
	if (len == 0 || len > METRIC_NAME_MAXLEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!metric_ch[s[i]])
			return false;
	return true;
}

/* Interns prefix + key[0..klen); 0 when the dictionary is full. */
static uint32_t intern2(const char *prefix, const char *key, size_t klen)
{
	char buf[256];
	size_t lp = strlen(prefix);

	if (lp + klen >= sizeof(buf))
		return 0;
	memcpy(buf, prefix, lp);
	memcpy(buf + lp, key, klen);
	buf[lp + klen] = '\0';
	return dict_intern(buf, lp + klen);
}

/* Adds (id, v) to m; id 0 means the dictionary refused the name. */
static int add_id(struct yp *p, struct sset *m, uint32_t id, int64_t v, const char *path)
{
	if (!id)
		return failf(p, SB_SAMPLE, "%s: no room for another new metric name", path);
	if (sset_add(m, id, v) < 0)
		return failf(p, SB_SAMPLE, "%s: too many fields (at most %d)", path, SAMPLE_MAX_FIELDS);
	return 1;
}

/* --- duplicate keys --- */

static uint32_t key_hash(uint32_t obj, const unsigned char *k, size_t len)
{
	uint32_t h = 2166136261u ^ obj * 0x9E3779B1u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 16777619u;
	return h;
}

static int ks_grow(struct yp *p)
{
	size_t ncap = p->kcap ? p->kcap * 2 : 256;
	struct kslot *t = calloc(ncap, sizeof(*t));

	if (!t)
		return -1;
	for (size_t i = 0; i < p->kcap; i++) {
		if (!p->ks[i].obj)
			continue;
		size_t j = p->ks[i].hash & (ncap - 1);
		while (t[j].obj)
			j = (j + 1) & (ncap - 1);
		t[j] = p->ks[i];
	}
	free(p->ks);
	p->ks = t;
	p->kcap = ncap;
	return 0;
}

/* 1 when key is new in object obj, 0 when seen, -1 when out of memory. */
static int ks_insert(struct yp *p, uint32_t obj, const unsigned char *k, size_t len)
{
	if ((p->kn + 1) * 2 > p->kcap && ks_grow(p) < 0)
		return -1;
	if (len > UINT32_MAX || p->alen + len > UINT32_MAX)
		return -1;
	uint32_t h = key_hash(obj, k, len);
	size_t j = h & (p->kcap - 1);
	for (; p->ks[j].obj; j = (j + 1) & (p->kcap - 1))
		if (p->ks[j].obj == obj && p->ks[j].hash == h && p->ks[j].len == len &&
		    memcmp(p->arena + p->ks[j].off, k, len) == 0)
			return 0;
	if (p->alen + len > p->acap || !p->arena) {
		size_t ncap = p->acap ? p->acap * 2 : 4096;
		while (ncap < p->alen + len)
			ncap *= 2;
		char *a = realloc(p->arena, ncap);
		if (!a)
			return -1;
		p->arena = a;
		p->acap = ncap;
	}
	memcpy(p->arena + p->alen, k, len);
	p->ks[j] = (struct kslot){ obj, h, (uint32_t)p->alen, (uint32_t)len };
	p->alen += len;
	p->kn++;
	return 1;
}

/* --- values --- */

enum vtype { V_NULL, V_BOOL, V_INT, V_REAL, V_STR };

struct val {
	enum vtype t;
	bool b;
	int64_t i;		/* V_INT (may be negative: JSON allows it) */
	double d;		/* V_INT and V_REAL: the number as jansson's json_number_value */
	const char *s;		/* V_STR, not NUL-terminated */
	size_t len;
};

static struct frame *top(struct yp *p)
{
	return p->depth ? &p->st[p->depth - 1] : NULL;
}

/* a + b into dst (cap bytes), cut to fit. Paths are set once per object,
 * and snprintf there was still ~2% of the parse. */
static void path_cat(char *dst, size_t cap, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la > cap - 1)
		la = cap - 1;
	memmove(dst, a, la);
	if (lb > cap - 1 - la)
		lb = cap - 1 - la;
	memcpy(dst + la, b, lb);
	dst[la + lb] = '\0';
}

/* a (at most 24 bytes of it, as "%.24s" did) + b + c; dst may be a. */
static void path_cat3(char *dst, size_t cap, const char *a, const char *b, const char *c)
{
	char t[64];

	path_cat(t, sizeof(t), b, c);
	size_t la = strnlen(a, 24);
	memmove(dst, a, la < cap - 1 ? la : cap - 1);
	dst[la < cap - 1 ? la : cap - 1] = '\0';
	path_cat(dst, cap, dst, t);
}

/* "cgroups[3]" for the cgroup being read. */
static const char *cg_name(struct yp *p, char *buf, size_t n)
{
	char num[24], *q = num + sizeof(num);
	size_t i = p->ncg - 1;

	*--q = '\0';
	*--q = ']';
	do
		*--q = (char)('0' + i % 10);
	while ((i /= 10) && q > num + 1);
	path_cat(buf, n, "cgroups[", q);
	return buf;
}

/* A non-negative integer (or null when nullable) into *v; false otherwise. */
static bool get_int(const struct val *v, bool nullable, int64_t *out)
{
	if (nullable && v->t == V_NULL) {
		*out = SAMPLE_NULL;
		return true;
	}
	if (v->t != V_INT || v->i < 0)
		return false;
	*out = v->i;
	return true;
}

static bool is_number(const struct val *v)
{
	return v->t == V_INT || v->t == V_REAL;
}

static int str_field(struct yp *p, const struct val *v, const char *key, char **out)
{
	if (v->t != V_STR || v->len > SAMPLE_MAX_STRING || !name_text_valid(v->s, v->len))
		return failf(p, SB_SAMPLE, "%s: expected a string of at most %d printable characters "
			     "(no bidirectional controls)",
			     key, SAMPLE_MAX_STRING);
	free(*out);	/* cannot be set: a duplicate key was refused */
	*out = strndup(v->s, v->len);
	return *out ? 1 : failf(p, SB_NOMEM, "out of memory");
}

/* A scalar member of the sample object. */
static int sample_scalar(struct yp *p, struct frame *f, const struct val *v)
{
	struct sample *s = &p->cur;

	switch (f->key) {
	case K_HOST:
		if (v->t != V_STR || !name_host_valid(v->s, v->len))
			return failf(p, SB_SAMPLE, "host: expected 1 to 253 characters of A-Za-z0-9._-");
		memcpy(s->host, v->s, v->len);
		s->host[v->len] = '\0';
		p->seen |= 1;
		return 1;
	case K_TS:
		if (!is_number(v) || !isfinite(v->d) || v->d <= 0 || v->d >= 1e11)
			return failf(p, SB_SAMPLE, "ts: expected Unix seconds (a positive number)");
		s->ts_ms = llround(v->d * 1000.0);
		p->seen |= 2;
		return 1;
	case K_BOOT_ID:
		return str_field(p, v, "boot_id", &s->boot_id);
	case K_KERNEL:
		return str_field(p, v, "kernel", &s->kernel);
	case K_AGENT_VERSION:
		return str_field(p, v, "agent_version", &s->agent_version);
	case K_INTERVAL:
		if (!is_number(v) || !isfinite(v->d) || v->d < 0 || v->d > 86400)
			return failf(p, SB_SAMPLE, "interval_s: expected a number of seconds from 0 to 86400");
		return add_id(p, &s->m, nc_fixed(FX_INTERVAL, "meta.interval_ms", 16),
			      llround(v->d * 1000.0), "interval_s");
	case K_PAGE_SIZE:
		if (v->t != V_INT || v->i < 512 || v->i > (1 << 30))
			return failf(p, SB_SAMPLE, "page_size: expected an integer number of bytes from 512 to 2^30");
		return add_id(p, &s->m, nc_fixed(FX_PAGE_SIZE, "meta.page_size", 14), v->i, "page_size");
	case K_MGLRU:
		if (v->t != V_BOOL)
			return failf(p, SB_SAMPLE, "mglru: expected true or false");
		return add_id(p, &s->m, nc_fixed(FX_MGLRU, "meta.mglru", 10), v->b, "mglru");
	case K_VMSTAT:
	case K_MEMINFO:
	case K_SETTINGS:
		return failf(p, SB_SAMPLE, "%s: expected an object of name -> integer",
			     f->key == K_VMSTAT ? "vmstat" : f->key == K_MEMINFO ? "meminfo" : "settings");
	case K_PSI:
		return failf(p, SB_SAMPLE, "psi: expected an object of memory, io, cpu");
	case K_AGENT:
		return failf(p, SB_SAMPLE, "agent: expected an object of name -> integer");
	case K_LABELS:
		return failf(p, SB_SAMPLE, "labels: expected an object of at most %d key -> string",
			     SAMPLE_MAX_LABELS);
	case K_CGROUPS:
		return failf(p, SB_SAMPLE, "cgroups: expected an array");
	default:
		return 1;
	}
}

static int cgroup_scalar(struct yp *p, struct frame *f, const struct val *v)
{
	char cn[32];
	static const char *const scal[] = { "memory_current", "memory_max", "swap_current" };

	switch (f->key) {
	case K_PATH:
		if (v->t == V_STR && name_cgroup_path_valid(v->s, v->len)) {
			free(p->cg_path);
			p->cg_path = strndup(v->s, v->len);
			if (!p->cg_path)
				return failf(p, SB_NOMEM, "out of memory");
			p->cg_path_ok = true;
		}
		return 1;	/* refused at the end of the cgroup when not ok */
	case K_VERSION:
		if (v->t == V_INT && (v->i == 1 || v->i == 2)) {
			p->cg_version = (int)v->i;
			p->cg_version_ok = true;
		}
		return 1;
	case K_MEMORY_STAT:
	case K_EVENTS:
	case K_SETTINGS:
		return failf(p, SB_SAMPLE, "%s.%s: expected an object of name -> integer",
			     cg_name(p, cn, sizeof(cn)), f->key == K_MEMORY_STAT ? "memory_stat" :
			     f->key == K_EVENTS ? "events" : "settings");
	case K_PSI:
		return failf(p, SB_SAMPLE, "%s.psi: expected an object with \"some\" and \"full\"",
			     cg_name(p, cn, sizeof(cn)));
	case K_MEMORY_CURRENT:
	case K_MEMORY_MAX:
	case K_SWAP_CURRENT: {
		size_t k = f->key - K_MEMORY_CURRENT;
		int64_t x;
		if (!get_int(v, k > 0, &x))
			return failf(p, SB_SAMPLE, "%s.%s: " INT_EXPECT "%s", cg_name(p, cn, sizeof(cn)),
				     scal[k], k > 0 ? " or null" : "");
		return add_id(p, &p->cg_m, nc_fixed(FX_CG_SCALAR + (unsigned)k, scal[k], strlen(scal[k])),
			      x, f->path);
	}
	default:
		return 1;
	}
}

static struct sset *psi_set(struct yp *p, const struct frame *f)
{
	return f->res < 3 ? &p->cur.m : &p->cg_m;
}

/* The id of a PSI field: fixed per (resource, some/full, field). */
static uint32_t psi_id(const struct frame *f, unsigned field, const char *lp, const char *name,
		       size_t len)
{
	char buf[48];
	size_t l = strlen(lp);

	memcpy(buf, lp, l);
	memcpy(buf + l, name, len);
	buf[l + len] = '\0';
	return nc_fixed(FX_PSI + ((unsigned)f->res * 2 + f->line) * 4 + field, buf, l + len);
}

static int psi_line_scalar(struct yp *p, struct frame *f, const struct val *v)
{
	const char *kind = psi_kind[f->line], *path = f->path, *lp = f->lp;

	if (f->key == K_OTHER)
		return 1;
	if (f->key == K_TOTAL) {
		int64_t x;
		if (!get_int(v, false, &x))
			return failf(p, SB_SAMPLE, "%s.%s.total: " INT_EXPECT, path, kind);
		return add_id(p, psi_set(p, f), psi_id(f, 3, lp, "total", 5), x, path);
	}
	const char *avg = psi_avg[f->key - K_AVG0];
	if (!is_number(v) || !isfinite(v->d) || v->d < 0 || v->d > 100.0)
		return failf(p, SB_SAMPLE, "%s.%s.%s: expected a percentage from 0 to 100", path, kind, avg);
	return add_id(p, psi_set(p, f), psi_id(f, (unsigned)(f->key - K_AVG0), lp, avg, strlen(avg)),
		      llround(v->d * 100.0), path);
}

/* A scalar value in the current context. Returns 1 to go on, 0 to stop. */
/* Integer x (or SAMPLE_NULL) as the value of the current key of map f. */
static int map_int(struct yp *p, struct frame *f, int64_t x)
{
	struct sset *m = f->res == 3 ? &p->cg_m : &p->cur.m;
	uint32_t id = p->map_id;

	if (!id) {
		id = intern2(f->prefix, p->key, p->keylen);
		nc_store(p->map_slot, p->key, p->keylen, id);
	}
	return add_id(p, m, id, x, f->path);
}

static int on_scalar(struct yp *p, const struct val *v)
{
	struct frame *f = top(p);

	if (!f)
		return failf(p, SB_TOP, "expected a sample object or an array of sample objects");
	switch (f->kind) {
	case X_BODY:
		p->idx = p->n;
		return failf(p, SB_SAMPLE, "sample: expected a JSON object");
	case X_SAMPLE:
		return sample_scalar(p, f, v);
	case X_CGROUP:
		return cgroup_scalar(p, f, v);
	case X_MAP: {
		int64_t x;
		if (!get_int(v, f->nullable, &x))
			return failf(p, SB_SAMPLE, "%s.%s: " INT_EXPECT, f->path, p->key);
		return map_int(p, f, x);
	}
	case X_PSI:
		if (f->key >= K_RES0 && f->key < K_RES0 + 3)
			return failf(p, SB_SAMPLE, "psi.%s: expected an object with \"some\" and \"full\"",
				     psi_res[f->key - K_RES0]);
		return 1;
	case X_PSI_RES:
		if (f->key == K_SOME || f->key == K_FULL)
			return failf(p, SB_SAMPLE, "%s.%s: expected an object",
				     f->path, psi_kind[f->key - K_SOME]);
		return 1;
	case X_PSI_LINE:
		return psi_line_scalar(p, f, v);
	case X_LABELS: {
		json_t *str;
		if (v->t != V_STR || v->len > SAMPLE_MAX_STRING || !name_text_valid(v->s, v->len))
			return failf(p, SB_SAMPLE, "labels.%s: expected a string of at most %d printable "
				     "characters (no bidirectional controls)",
				     p->key, SAMPLE_MAX_STRING);
		if (!(str = json_stringn(v->s, v->len)) ||
		    json_object_set_new(p->cur.labels, p->key, str) < 0)
			return failf(p, SB_NOMEM, "out of memory");
		return 1;
	}
	case X_CGROUPS: {
		char cn[32];
		p->ncg++;
		return failf(p, SB_SAMPLE, "%s: expected an object", cg_name(p, cn, sizeof(cn)));
	}
	default:
		return 1;	/* X_SKIP */
	}
}

/* --- containers --- */

static int push(struct yp *p, enum ctx kind, bool is_object)
{
	if (p->depth >= p->max_depth)
		return failf(p, SB_DEPTH, "nested deeper than %d levels", p->max_depth);
	struct frame *f = &p->st[p->depth++];
	memset(f, 0, sizeof(*f));
	f->kind = (unsigned char)kind;
	if (is_object && kind != X_MAP && kind != X_LABELS)
		f->obj = ++p->nobj;
	return 1;
}

static void cgroup_reset(struct yp *p)
{
	free(p->cg_path);
	p->cg_path = NULL;
	p->cg_version = 0;
	p->cg_path_ok = p->cg_version_ok = false;
	sset_release(&p->cg_m);
}

/* A container value in the current context: what it is (to push). Returns
 * 1 to go on, 0 to stop. */
static int on_container(struct yp *p, bool is_object)
{
	struct frame *f = top(p);
	char cn[32];

	if (!f) {
		if (!is_object) {
			p->top_array = true;
			return push(p, X_BODY, false);
		}
		goto new_sample;
	}
	switch (f->kind) {
	case X_BODY:
		if (!is_object) {
			p->idx = p->n;
			return failf(p, SB_SAMPLE, "sample: expected a JSON object");
		}
new_sample:
		p->idx = p->n;
		if (p->n == SAMPLE_BODY_MAX_SAMPLES)
			return failf(p, SB_BATCH, "more than %d", SAMPLE_BODY_MAX_SAMPLES);
		sample_init(&p->cur);
		p->in_sample = true;
		p->seen = 0;
		p->ncg = 0;
		return push(p, X_SAMPLE, true);
	case X_SAMPLE:
		switch (f->key) {
		case K_VMSTAT: case K_MEMINFO: case K_SETTINGS: {
			static const char *const pre[] = { "vmstat.", "meminfo.", "settings." };
			static const char *const nm[] = { "vmstat", "meminfo", "settings" };
			size_t k = f->key - K_VMSTAT;
			if (!is_object)
				return sample_scalar(p, f, &(struct val){ .t = V_NULL });
			if (!push(p, X_MAP, true))
				return 0;
			top(p)->prefix = pre[k];
			top(p)->name = nm[k];
			top(p)->mk = (unsigned char)(NC_VMSTAT + k);
			path_cat(top(p)->path, sizeof(top(p)->path), nm[k], "");
			top(p)->nullable = f->key == K_SETTINGS;
			if (f->key == K_VMSTAT)
				p->seen |= 4;
			return 1;
		}
		case K_PSI:
			if (!is_object)
				return sample_scalar(p, f, &(struct val){ .t = V_NULL });
			return push(p, X_PSI, true);
		case K_AGENT:	/* the agent's own counters: a map like meminfo */
			if (!is_object)
				return sample_scalar(p, f, &(struct val){ .t = V_NULL });
			if (!push(p, X_MAP, true))
				return 0;
			top(p)->prefix = "agent.";
			top(p)->name = "agent";
			top(p)->mk = NC_AGENT;
			path_cat(top(p)->path, sizeof(top(p)->path), "agent", "");
			top(p)->nullable = 0;
			return 1;
		case K_LABELS:
			if (!is_object)
				return sample_scalar(p, f, &(struct val){ .t = V_NULL });
			if (!(p->cur.labels = json_object()))
				return failf(p, SB_NOMEM, "out of memory");
			p->nlabels = 0;
			return push(p, X_LABELS, true);
		case K_CGROUPS:
			if (is_object)
				return sample_scalar(p, f, &(struct val){ .t = V_NULL });
			return push(p, X_CGROUPS, false);
		case K_OTHER:
			return push(p, X_SKIP, is_object);
		default:	/* a scalar field given a container */
			return sample_scalar(p, f, &(struct val){ .t = V_NULL });
		}
	case X_CGROUPS:
		if (p->ncg >= SAMPLE_MAX_CGROUPS)
			return failf(p, SB_SAMPLE, "cgroups: at most %d entries", SAMPLE_MAX_CGROUPS);
		if (!is_object) {
			p->ncg++;
			return failf(p, SB_SAMPLE, "%s: expected an object", cg_name(p, cn, sizeof(cn)));
		}
		p->ncg++;
		cgroup_reset(p);
		if (!push(p, X_CGROUP, true))
			return 0;
		cg_name(p, top(p)->path, sizeof(top(p)->path));
		return 1;
	case X_CGROUP:
		switch (f->key) {
		case K_MEMORY_STAT: case K_EVENTS: case K_SETTINGS: {
			static const char *const pre[] = { "stat.", "events.", "settings." };
			static const char *const nm[] = { "memory_stat", "events", "settings" };
			size_t k = f->key == K_MEMORY_STAT ? 0 : f->key == K_EVENTS ? 1 : 2;
			if (!is_object)
				return cgroup_scalar(p, f, &(struct val){ .t = V_NULL });
			if (!push(p, X_MAP, true))
				return 0;
			top(p)->prefix = pre[k];
			top(p)->name = nm[k];
			top(p)->mk = (unsigned char)(NC_CG_STAT + k);
			path_cat3(top(p)->path, sizeof(top(p)->path), f->path, ".", nm[k]);
			top(p)->nullable = k == 2;
			top(p)->res = 3;
			return 1;
		}
		case K_PSI:
			if (!is_object)
				return cgroup_scalar(p, f, &(struct val){ .t = V_NULL });
			if (!push(p, X_PSI_RES, true))
				return 0;
			top(p)->res = 3;
			path_cat3(top(p)->path, sizeof(top(p)->path), f->path, ".psi", "");
			return 1;
		case K_MEMORY_CURRENT: case K_MEMORY_MAX: case K_SWAP_CURRENT:
			return cgroup_scalar(p, f, &(struct val){ .t = V_STR });	/* wrong type */
		case K_PATH: case K_VERSION:
			return push(p, X_SKIP, is_object);	/* invalid: refused at the end */
		default:
			return push(p, X_SKIP, is_object);
		}
	case X_MAP:
		return on_scalar(p, &(struct val){ .t = V_STR, .s = "", .len = 0 });	/* wrong type */
	case X_LABELS:
		return on_scalar(p, &(struct val){ .t = V_NULL });	/* wrong type */
	case X_PSI:
		if (f->key >= K_RES0 && f->key < K_RES0 + 3) {
			unsigned char r = (unsigned char)(f->key - K_RES0);
			if (!is_object)
				return on_scalar(p, &(struct val){ .t = V_NULL });
			if (!push(p, X_PSI_RES, true))
				return 0;
			top(p)->res = r;
			path_cat(top(p)->path, sizeof(top(p)->path), "psi.", psi_res[r]);
			return 1;
		}
		return push(p, X_SKIP, is_object);
	case X_PSI_RES:
		if (f->key == K_SOME || f->key == K_FULL) {
			unsigned char res = f->res, line = (unsigned char)(f->key - K_SOME);
			if (!is_object)
				return on_scalar(p, &(struct val){ .t = V_NULL });
			if (!push(p, X_PSI_LINE, true))
				return 0;
			top(p)->res = res;
			top(p)->line = line;
			memcpy(top(p)->path, f->path, sizeof(f->path));
			if (res < 3)
				path_cat3(top(p)->lp, sizeof(top(p)->lp), "psi.", psi_res[res], ".");
			else
				path_cat(top(p)->lp, sizeof(top(p)->lp), "psi.", "");
			path_cat3(top(p)->lp, sizeof(top(p)->lp), top(p)->lp, psi_kind[line], ".");
			return 1;
		}
		return push(p, X_SKIP, is_object);
	case X_PSI_LINE:
		if (f->key == K_OTHER)
			return push(p, X_SKIP, is_object);
		return on_scalar(p, &(struct val){ .t = V_NULL });	/* wrong type */
	default:
		return push(p, X_SKIP, is_object);
	}
}

static int cb_start_map(void *ctx)
{
	return on_container(ctx, true);
}

static int cb_start_array(void *ctx)
{
	return on_container(ctx, false);
}

/* Finds and names a duplicate field of a sorted set that sset_sort refused. */
static int dup_field(struct yp *p, struct sset *m, const char *where)
{
	const char *name = "?";

	for (size_t i = 1; i < m->n; i++)
		if (m->f[i].id == m->f[i - 1].id) {
			name = dict_name(m->f[i].id);
			break;
		}
	return failf(p, SB_SAMPLE, "%s: duplicate key (field \"%s\" appears twice)", where, name);
}

static int end_cgroup(struct yp *p)
{
	char cn[32];

	cg_name(p, cn, sizeof(cn));
	if (!p->cg_path_ok)
		return failf(p, SB_SAMPLE, "%s.path: expected a cgroup path (printable UTF-8 starting "
			     "with /, no . or .. components, at most 4096 bytes)", cn);
	if (!p->cg_version_ok)
		return failf(p, SB_SAMPLE, "%s.version: expected 1 or 2", cn);
	if (sample_find_cgroup(&p->cur, p->cg_path, p->cg_version))
		return failf(p, SB_SAMPLE, "%s.path: \"%.200s\" (version %d) appears twice", cn,
			     p->cg_path, p->cg_version);
	struct cgsample *cg = sample_add_cgroup(&p->cur, p->cg_path, p->cg_version);
	p->cg_path = NULL;	/* owned by the sample now (or freed) */
	if (!cg)
		return failf(p, SB_SAMPLE, "%s: too many cgroups (at most %d)", cn, SAMPLE_MAX_CGROUPS);
	cg->m = p->cg_m;
	memset(&p->cg_m, 0, sizeof(p->cg_m));
	if (sset_sort(&cg->m) < 0)
		return dup_field(p, &cg->m, cn);
	return 1;
}

static int end_sample(struct yp *p)
{
	if (!(p->seen & 1))
		return failf(p, SB_SAMPLE, "host: missing (required)");
	if (!(p->seen & 2))
		return failf(p, SB_SAMPLE, "ts: missing (required)");
	if (!(p->seen & 4))
		return failf(p, SB_SAMPLE, "vmstat: missing (required)");
	if (sset_sort(&p->cur.m) < 0)
		return dup_field(p, &p->cur.m, "sample");
	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 1;
		struct sample *o = realloc(p->out, ncap * sizeof(*o));
		if (!o)
			return failf(p, SB_NOMEM, "out of memory");
		p->out = o;
		p->cap = ncap;
	}
	p->out[p->n++] = p->cur;	/* moved */
	sample_init(&p->cur);
	p->in_sample = false;
	return 1;
}

static int cb_end(void *ctx)
{
	struct yp *p = ctx;
	struct frame *f = top(p);
	int rc = 1;

	if (f->kind == X_CGROUP)
		rc = end_cgroup(p);
	else if (f->kind == X_SAMPLE)
		rc = end_sample(p);
	if (--p->depth == 0)
		p->end = yajl_get_bytes_consumed(p->h);
	return rc;
}

static unsigned char classify(unsigned char kind, const unsigned char *k, size_t len);
_Static_assert(K_TOTAL < 32, "known keys fit the per-object bit set");

static int cb_key(void *ctx, const unsigned char *k, size_t len)
{
	struct yp *p = ctx;
	struct frame *f = top(p);

	if (f->kind == X_MAP || f->kind == X_LABELS) {
		/* the map's own checks: a valid name is plain ASCII; a duplicate
		 * gives a duplicate field id (X_MAP) or is looked up (X_LABELS) */
		const char *where = f->kind == X_LABELS ? "labels" : f->path;
		if (f->kind == X_LABELS && ++p->nlabels > SAMPLE_MAX_LABELS)
			return failf(p, SB_SAMPLE, "labels: expected an object of at most %d key -> string",
				     SAMPLE_MAX_LABELS);
		p->map_id = 0;
		p->map_slot = NULL;
		if (f->kind == X_MAP) {
			p->map_slot = nc_slot((enum nc_map)f->mk, f->pos++);
			p->map_id = nc_hit(p->map_slot, (const char *)k, len);
		}
		/* a key found in the name cache passed this check when it was stored */
		if (!p->map_id && !metric_name_ok(k, len)) {
			if (!utf8_strict(k, len))	/* jansson refuses it as JSON */
				return failf(p, SB_SYNTAX, "invalid UTF-8 or NUL in an object key");
			if (f->kind == X_LABELS)
				return failf(p, SB_SAMPLE, "labels: \"%.*s\" is not a valid label key",
					     len > 64 ? 64 : (int)len, (const char *)k);
			return failf(p, SB_SAMPLE, "%s: \"%.*s\" is not a valid counter name "
				     "(1 to 128 of A-Za-z0-9_().:-)", where, len > 64 ? 64 : (int)len,
				     (const char *)k);
		}
		memcpy(p->key, k, len);
		p->key[len] = '\0';
		p->keylen = len;
		p->key_ascii = len <= 64;
		if (f->kind == X_LABELS && json_object_get(p->cur.labels, p->key))
			return failf(p, SB_SAMPLE, "labels: duplicate key \"%s\"", p->key);
		f->key = K_MAPKEY;
		return 1;
	}
	/* a known key is plain lower-case ASCII: it needs neither check below */
	unsigned char key = classify(f->kind, k, len);
	if (key == K_OTHER && !utf8_strict(k, len))
		return failf(p, SB_SYNTAX, "invalid UTF-8 or NUL in an object key");
	int r;
	if (key != K_OTHER) {
		/* a known key: one bit per object instead of the hash set */
		r = !(f->known & (1u << key));
		f->known |= 1u << key;
	} else {
		r = ks_insert(p, f->obj, k, len);
		if (r < 0)
			return failf(p, SB_NOMEM, "out of memory");
	}
	/* remember a short printable key, for naming an over-large integer */
	p->key_ascii = len <= 64;
	for (size_t i = 0; key == K_OTHER && i < len && p->key_ascii; i++)
		p->key_ascii = k[i] >= 0x20 && k[i] < 0x7f && k[i] != '\\';
	if (p->key_ascii) {
		memcpy(p->key, k, len);
		p->key[len] = '\0';
		p->keylen = len;
	}
	if (r == 0)
		return failf(p, p->in_sample ? SB_SAMPLE : SB_SYNTAX, "duplicate key \"%.64s\"",
			     p->key_ascii ? p->key : "(not printable)");
	f->key = key;
	return 1;
}

/* Which known key k[0..len) is in an object of this kind; K_OTHER if none. */
static unsigned char classify(unsigned char kind, const unsigned char *k, size_t len)
{
#define IS(lit) (len == sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)
	unsigned char key = K_OTHER;
	switch (kind) {
	case X_SAMPLE:
		if (IS("host")) key = K_HOST;
		else if (IS("ts")) key = K_TS;
		else if (IS("boot_id")) key = K_BOOT_ID;
		else if (IS("kernel")) key = K_KERNEL;
		else if (IS("agent_version")) key = K_AGENT_VERSION;
		else if (IS("interval_s")) key = K_INTERVAL;
		else if (IS("page_size")) key = K_PAGE_SIZE;
		else if (IS("mglru")) key = K_MGLRU;
		else if (IS("vmstat")) key = K_VMSTAT;
		else if (IS("meminfo")) key = K_MEMINFO;
		else if (IS("settings")) key = K_SETTINGS;
		else if (IS("psi")) key = K_PSI;
		else if (IS("labels")) key = K_LABELS;
		else if (IS("cgroups")) key = K_CGROUPS;
		else if (IS("agent")) key = K_AGENT;
		break;
	case X_CGROUP:
		if (IS("path")) key = K_PATH;
		else if (IS("version")) key = K_VERSION;
		else if (IS("memory_stat")) key = K_MEMORY_STAT;
		else if (IS("events")) key = K_EVENTS;
		else if (IS("settings")) key = K_SETTINGS;
		else if (IS("psi")) key = K_PSI;
		else if (IS("memory_current")) key = K_MEMORY_CURRENT;
		else if (IS("memory_max")) key = K_MEMORY_MAX;
		else if (IS("swap_current")) key = K_SWAP_CURRENT;
		break;
	case X_PSI:
		for (unsigned i = 0; i < 3; i++)
			if (len == strlen(psi_res[i]) && memcmp(k, psi_res[i], len) == 0)
				key = (unsigned char)(K_RES0 + i);
		break;
	case X_PSI_RES:
		if (IS("some")) key = K_SOME;
		else if (IS("full")) key = K_FULL;
		break;
	case X_PSI_LINE:
		if (IS("avg10")) key = K_AVG0;
		else if (IS("avg60")) key = K_AVG0 + 1;
		else if (IS("avg300")) key = K_AVG0 + 2;
		else if (IS("total")) key = K_TOTAL;
		break;
	default:
		break;
	}
#undef IS
	return key;
}

static int cb_null(void *ctx)
{
	return on_scalar(ctx, &(struct val){ .t = V_NULL });
}

static int cb_bool(void *ctx, int b)
{
	return on_scalar(ctx, &(struct val){ .t = V_BOOL, .b = b != 0 });
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	if (!utf8_strict(s, len))
		return failf(ctx, SB_SYNTAX, "invalid UTF-8 or NUL in a string");
	return on_scalar(ctx, &(struct val){ .t = V_STR, .s = (const char *)s, .len = len });
}

/* A number as jansson reads it: an integer when the text has no '.', 'e' or
 * 'E' (strtoll: over 2^63-1 refuses the body), else a real (strtod:
 * overflow refuses the body, underflow does not). */
static int cb_number(void *ctx, const char *s, size_t len)
{
	struct yp *p = ctx;
	struct val v = { .t = V_INT };
	/* yajl checked the grammar: -?[0-9]+ then maybe .[0-9]+ and [eE][+-]?[0-9]+ */
	bool neg = s[0] == '-', real = false;
	uint64_t u = 0;
	size_t i = neg;
	/* 19 digits cannot overflow 64 bits: no check per digit up to there */
	size_t fast = len - i <= 19 ? len : i + 19;
	for (; i < fast; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9) {
			real = true;	/* '.', 'e' or 'E' */
			break;
		}
		u = u * 10 + d;
	}
	for (; !real && i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9) {
			real = true;
			break;
		}
		if (u > UINT64_MAX / 10 || u * 10 > UINT64_MAX - d)
			u = UINT64_MAX;	/* saturate: over 2^63 either way */
		else
			u = u * 10 + d;
	}
	if (!real) {
		/* the usual number: a counter of a name -> integer map, taken
		 * as on_scalar would take it, without the general value */
		struct frame *mf = top(p);
		if (!neg && u <= (uint64_t)INT64_MAX && mf && mf->kind == X_MAP)
			return map_int(p, mf, (int64_t)u);
		if (!neg && u > (uint64_t)INT64_MAX) {
			struct frame *f = top(p);
			bool keyed = f && f->kind != X_BODY && f->kind != X_CGROUPS &&
				     !(f->kind == X_SKIP && !f->obj);
			/* a field of a known map is named by its whole path
			 * (CONTRACT §2); other keys by themselves */
			if (keyed && p->key_ascii && f->kind == X_MAP && f->path[0])
				return failf(p, SB_TOOBIG, "\"%s.%s\"", f->path, p->key);
			return failf(p, SB_TOOBIG, "%s%s%s", keyed && p->key_ascii ? "\"" : "",
				     keyed && p->key_ascii ? p->key : "a number",
				     keyed && p->key_ascii ? "\"" : "");
		}
		if (neg && u > (uint64_t)INT64_MAX + 1)
			return failf(p, SB_SYNTAX, "too big negative integer");
		v.i = neg ? (int64_t)(0 - u) : (int64_t)u;
		v.d = (double)v.i;
		return on_scalar(p, &v);
	}
	/* "12.34": at most 15 significant digits and no exponent is an exact
	 * integer divided by an exact power of ten, one correctly rounded
	 * operation: the very double strtod gives (PSI averages, ts). */
	if (s[i] == '.') {
		static const double p10[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
					      1e11, 1e12, 1e13, 1e14, 1e15 };
		size_t intd = i - neg, j = i + 1;
		uint64_t m = u;
		for (; j < len && s[j] >= '0' && s[j] <= '9'; j++)
			m = m * 10 + (unsigned)(s[j] - '0');
		size_t fracd = j - i - 1;
		/* a leading zero of the integer part is not a significant digit,
		 * but counting it keeps the bound simple (and safe) */
		if (j == len && intd + fracd <= 15) {
			v.t = V_REAL;
			v.d = (double)m / p10[fracd];
			if (neg)
				v.d = -v.d;
			return on_scalar(p, &v);
		}
	}
	char small[64], *t = len < sizeof(small) ? small : malloc(len + 1);
	if (!t)
		return failf(p, SB_NOMEM, "out of memory");
	memcpy(t, s, len);
	t[len] = '\0';
	errno = 0;
	v.t = V_REAL;
	v.d = strtod(t, NULL);
	if (t != small)
		free(t);
	if ((v.d == HUGE_VAL || v.d == -HUGE_VAL) && errno == ERANGE)
		return failf(p, SB_SYNTAX, "real number overflow");
	return on_scalar(p, &v);
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_bool,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_key,
	.yajl_end_map = cb_end,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end,
};

/* True when the body holds what yajl 2.1 reads more leniently than jansson:
 * a \v or \f byte (white space to yajl, refused by jansson), a \u escape
 * of a UTF-16 surrogate (yajl does not check the pairing), or a NUL byte
 * (jansson 2.14 skips one that ends a number: "1\0," reads as "1,"; a
 * fuzzer find). An escaped backslash before "uD8.." is a harmless false
 * positive. */
static bool needs_reference(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	if (memchr(buf, '\v', len) || memchr(buf, '\f', len) || memchr(buf, '\0', len))
		return true;
	while ((p = memchr(p, '\\', (size_t)(end - p))) && end - p >= 4) {
		if (p[1] == 'u' && (p[2] == 'd' || p[2] == 'D') &&
		    strchr("89abcdefABCDEF", p[3]) && p[3])
			return true;
		p++;
	}
	return false;
}

int sample_body_parse(const char *buf, size_t len, int max_depth, struct sample **out,
		      size_t *n, struct sample_body_err *e)
{
	struct yp p = { .max_depth = max_depth, .e = e };
	yajl_handle h;
	yajl_status st;

	memset(e, 0, sizeof(*e));
	*out = NULL;
	*n = 0;
	if (needs_reference(buf, len))
		return sample_body_parse_jansson(buf, len, max_depth, out, n, e);
	sample_init(&p.cur);
	if (max_depth < 1 || !(p.st = calloc((size_t)max_depth, sizeof(*p.st)))) {
		e->kind = SB_NOMEM;
		snprintf(e->msg, sizeof(e->msg), "out of memory");
		return -1;
	}
	h = p.h = yajl_alloc(&callbacks, NULL, &p);
	if (!h) {
		free(p.st);
		e->kind = SB_NOMEM;
		snprintf(e->msg, sizeof(e->msg), "out of memory");
		return -1;
	}
	st = yajl_parse(h, (const unsigned char *)buf, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	if (st != yajl_status_ok && e->kind == SB_OK) {
		/* yajl's own error: the text is not JSON */
		unsigned char *msg = yajl_get_error(h, 0, (const unsigned char *)buf, len);
		size_t at = yajl_get_bytes_consumed(h);
		e->kind = SB_SYNTAX;
		snprintf(e->msg, sizeof(e->msg), "%s", msg ? (const char *)msg : "invalid JSON");
		/* "parse error: ...\n": drop the trailing newline */
		size_t ml = strlen(e->msg);
		while (ml && (e->msg[ml - 1] == '\n' || e->msg[ml - 1] == ' '))
			e->msg[--ml] = '\0';
		snprintf(e->detail, sizeof(e->detail), "near byte %zu", at);
		if (msg)
			yajl_free_error(h, msg);
	}
	yajl_free(h);
	if (e->kind == SB_OK && st != yajl_status_ok) {
		e->kind = SB_SYNTAX;
		snprintf(e->msg, sizeof(e->msg), "invalid JSON");
	}
	/* yajl 2.1 accepts a body whose value is followed by the start of a
	 * token it never finishes ("[]\"x": an unterminated string): only
	 * white space may follow the value */
	for (size_t i = p.end; e->kind == SB_OK && i < len; i++) {
		if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r') {
			e->kind = SB_SYNTAX;
			snprintf(e->msg, sizeof(e->msg), "parse error: trailing garbage");
			snprintf(e->detail, sizeof(e->detail), "near byte %zu", i);
		}
	}
	free(p.st);
	free(p.ks);
	free(p.arena);
	free(p.cg_path);
	sset_release(&p.cg_m);
	sample_release(&p.cur);
	if (e->kind != SB_OK) {
		sample_body_free(p.out, p.n);
		return -1;
	}
	*out = p.out;
	*n = p.n;
	return 0;
}
