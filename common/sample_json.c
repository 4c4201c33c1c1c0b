/* sample_json.c - contract JSON <-> flattened sample.
 *
 * Validation lives here, once, so that the server's ingest, the replay tool
 * and the tests refuse exactly the same inputs with the same messages. Every
 * error names the field by its path in the sample ("cgroups[2].memory_stat.anon").
 */
#include "sample.h"
#include "sample_body.h"
#include "dict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INT_EXPECT "expected an integer from 0 to 2^63-1"

static const char *const psi_res[] = { "memory", "io", "cpu" };
static const char *const psi_kind[] = { "some", "full" };
static const char *const psi_avg[] = { "avg10", "avg60", "avg300" };

static int fail(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, SAMPLE_ERR_MAX, fmt, ap);
	va_end(ap);
	return -1;
}

/* Interns prefix + key ("vmstat." + "pgpgin"); 0 when the dictionary is full. */
static uint32_t intern2(const char *prefix, const char *key)
{
	char buf[256];
	size_t lp = strlen(prefix), lk = strlen(key);

	/* memcpy, not snprintf: this runs ~1,500 times per 20-cgroup sample
	 * and snprintf was 12% of ingest parsing (callgrind) */
	if (lp + lk >= sizeof(buf))
		return 0;
	memcpy(buf, prefix, lp);
	memcpy(buf + lp, key, lk);
	buf[lp + lk] = '\0';
	return dict_intern(buf, lp + lk);
}

static int add_field(struct sset *m, const char *prefix, const char *key, int64_t v,
		     const char *path, char *err)
{
	uint32_t id = intern2(prefix, key);

	if (!id)
		return fail(err, "%s: no room for another new metric name", path);
	if (sset_add(m, id, v) < 0)
		return fail(err, "%s: too many fields (at most %d)", path, SAMPLE_MAX_FIELDS);
	return 0;
}

/* An integer 0..2^63-1 (or null when allow_null), into *v. */
static int get_int(const json_t *j, bool allow_null, int64_t *v)
{
	if (allow_null && json_is_null(j)) {
		*v = SAMPLE_NULL;
		return 0;
	}
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return -1;
	*v = (int64_t)json_integer_value(j);
	return 0;
}

/* An object of name -> integer, flattened under prefix. */
static int parse_int_map(struct sset *m, const json_t *obj, const char *prefix,
			 const char *path, bool allow_null, char *err)
{
	const char *key;
	const json_t *val;

	if (!json_is_object(obj))
		return fail(err, "%s: expected an object of name -> integer", path);
	json_object_foreach((json_t *)obj, key, val) {
		int64_t v;
		if (!name_metric_valid(key, strlen(key)))
			return fail(err, "%s: \"%.64s\" is not a valid counter name "
				    "(1 to 128 of A-Za-z0-9_().:-)", path, key);
		if (get_int(val, allow_null, &v) < 0)
			return fail(err, "%s.%s: " INT_EXPECT, path, key);
		if (add_field(m, prefix, key, v, path, err) < 0)
			return -1;
	}
	return 0;
}

/* One PSI resource {"some": {...}, "full": {...}} flattened under prefix. */
static int parse_psi_res(struct sset *m, const json_t *obj, const char *prefix,
			 const char *path, char *err)
{
	if (!json_is_object(obj))
		return fail(err, "%s: expected an object with \"some\" and \"full\"", path);
	for (size_t k = 0; k < 2; k++) {
		const json_t *line = json_object_get(obj, psi_kind[k]);
		char lp[96];
		if (!line)
			continue;
		snprintf(lp, sizeof(lp), "%s%s.", prefix, psi_kind[k]);
		if (!json_is_object(line))
			return fail(err, "%s.%s: expected an object", path, psi_kind[k]);
		for (size_t a = 0; a < 3; a++) {
			const json_t *j = json_object_get(line, psi_avg[a]);
			if (!j)
				continue;
			double d = json_number_value(j);
			if (!json_is_number(j) || !isfinite(d) || d < 0 || d > 100.0)
				return fail(err, "%s.%s.%s: expected a percentage from 0 to 100",
					    path, psi_kind[k], psi_avg[a]);
			if (add_field(m, lp, psi_avg[a], llround(d * 100.0), path, err) < 0)
				return -1;
		}
		const json_t *t = json_object_get(line, "total");
		int64_t v;
		if (t) {
			if (get_int(t, false, &v) < 0)
				return fail(err, "%s.%s.total: " INT_EXPECT, path, psi_kind[k]);
			if (add_field(m, lp, "total", v, path, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* An optional string of 1..SAMPLE_MAX_STRING printable bytes, duplicated. */
static int get_string(const json_t *obj, const char *key, char **out, char *err)
{
	const json_t *j = json_object_get(obj, key);

	*out = NULL;
	if (!j)
		return 0;
	if (!json_is_string(j) || json_string_length(j) > SAMPLE_MAX_STRING ||
	    !name_text_valid(json_string_value(j), json_string_length(j)))
		return fail(err, "%s: expected a string of at most %d printable characters "
			    "(no bidirectional controls)",
			    key, SAMPLE_MAX_STRING);
	*out = strdup(json_string_value(j));
	return *out ? 0 : fail(err, "%s: out of memory", key);
}

static int parse_labels(struct sample *s, const json_t *j, char *err)
{
	const char *key;
	const json_t *val;

	if (!json_is_object(j) || json_object_size(j) > SAMPLE_MAX_LABELS)
		return fail(err, "labels: expected an object of at most %d key -> string",
			    SAMPLE_MAX_LABELS);
	json_object_foreach((json_t *)j, key, val) {
		if (!name_metric_valid(key, strlen(key)))
			return fail(err, "labels: \"%.64s\" is not a valid label key", key);
		if (!json_is_string(val) || json_string_length(val) > SAMPLE_MAX_STRING ||
		    !name_text_valid(json_string_value(val), json_string_length(val)))
			return fail(err, "labels.%s: expected a string of at most %d printable "
				    "characters (no bidirectional controls)",
				    key, SAMPLE_MAX_STRING);
	}
	s->labels = json_deep_copy(j);
	return s->labels ? 0 : fail(err, "labels: out of memory");
}

static int parse_cgroup(struct sample *s, const json_t *c, size_t idx, char *err)
{
	char path[64];
	const json_t *j;
	int64_t v;

	snprintf(path, sizeof(path), "cgroups[%zu]", idx);
	if (!json_is_object(c))
		return fail(err, "%s: expected an object", path);
	j = json_object_get(c, "path");
	if (!json_is_string(j) ||
	    !name_cgroup_path_valid(json_string_value(j), json_string_length(j)))
		return fail(err, "%s.path: expected a cgroup path (printable UTF-8 starting "
			    "with /, no . or .. components, at most 4096 bytes)", path);
	j = json_object_get(c, "version");
	if (!json_is_integer(j) || (json_integer_value(j) != 1 && json_integer_value(j) != 2))
		return fail(err, "%s.version: expected 1 or 2", path);
	int version = (int)json_integer_value(j);
	const char *p = json_string_value(json_object_get(c, "path"));
	if (sample_find_cgroup(s, p, version))
		return fail(err, "%s.path: \"%.200s\" (version %d) appears twice", path, p, version);
	char *pcopy = strdup(p);
	struct cgsample *cg = pcopy ? sample_add_cgroup(s, pcopy, version) : NULL;
	if (!cg)
		return fail(err, "%s: too many cgroups (at most %d)", path, SAMPLE_MAX_CGROUPS);

	static const struct { const char *key, *prefix; bool nullable; } maps[] = {
		{ "memory_stat", "stat.", false },
		{ "events", "events.", false },
		{ "settings", "settings.", true },
	};
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		char fp[96];
		if (!(j = json_object_get(c, maps[i].key)))
			continue;
		snprintf(fp, sizeof(fp), "%s.%s", path, maps[i].key);
		if (parse_int_map(&cg->m, j, maps[i].prefix, fp, maps[i].nullable, err) < 0)
			return -1;
	}
	if ((j = json_object_get(c, "psi"))) {
		char fp[96];
		snprintf(fp, sizeof(fp), "%s.psi", path);
		if (parse_psi_res(&cg->m, j, "psi.", fp, err) < 0)
			return -1;
	}
	static const struct { const char *key; bool nullable; } scalars[] = {
		{ "memory_current", false }, { "memory_max", true }, { "swap_current", true },
	};
	for (size_t i = 0; i < 3; i++) {
		if (!(j = json_object_get(c, scalars[i].key)))
			continue;
		if (get_int(j, scalars[i].nullable, &v) < 0)
			return fail(err, "%s.%s: " INT_EXPECT "%s", path, scalars[i].key,
				    scalars[i].nullable ? " or null" : "");
		if (add_field(&cg->m, "", scalars[i].key, v, path, err) < 0)
			return -1;
	}
	if (sset_sort(&cg->m) < 0)
		return fail(err, "%s: a field appears twice", path);
	return 0;
}

static int parse_sample(struct sample *s, const json_t *obj, char *err)
{
	const json_t *j;

	if (!json_is_object(obj))
		return fail(err, "sample: expected a JSON object");

	j = json_object_get(obj, "host");
	if (!j)
		return fail(err, "host: missing (required)");
	if (!json_is_string(j) || !name_host_valid(json_string_value(j), json_string_length(j)))
		return fail(err, "host: expected 1 to 253 characters of A-Za-z0-9._-");
	memcpy(s->host, json_string_value(j), json_string_length(j) + 1);

	j = json_object_get(obj, "ts");
	if (!j)
		return fail(err, "ts: missing (required)");
	double ts = json_number_value(j);
	if (!json_is_number(j) || !isfinite(ts) || ts <= 0 || ts >= 1e11)
		return fail(err, "ts: expected Unix seconds (a positive number)");
	s->ts_ms = llround(ts * 1000.0);

	if (get_string(obj, "boot_id", &s->boot_id, err) < 0 ||
	    get_string(obj, "kernel", &s->kernel, err) < 0 ||
	    get_string(obj, "agent_version", &s->agent_version, err) < 0)
		return -1;

	if ((j = json_object_get(obj, "interval_s"))) {
		double iv = json_number_value(j);
		if (!json_is_number(j) || !isfinite(iv) || iv < 0 || iv > 86400)
			return fail(err, "interval_s: expected a number of seconds from 0 to 86400");
		if (add_field(&s->m, "meta.", "interval_ms", llround(iv * 1000.0), "interval_s", err) < 0)
			return -1;
	}
	if ((j = json_object_get(obj, "page_size"))) {
		if (!json_is_integer(j) || json_integer_value(j) < 512 ||
		    json_integer_value(j) > (1 << 30))
			return fail(err, "page_size: expected an integer number of bytes from 512 to 2^30");
		if (add_field(&s->m, "meta.", "page_size", json_integer_value(j), "page_size", err) < 0)
			return -1;
	}
	if ((j = json_object_get(obj, "mglru"))) {
		if (!json_is_boolean(j))
			return fail(err, "mglru: expected true or false");
		if (add_field(&s->m, "meta.", "mglru", json_is_true(j), "mglru", err) < 0)
			return -1;
	}

	j = json_object_get(obj, "vmstat");
	if (!j)
		return fail(err, "vmstat: missing (required)");
	if (parse_int_map(&s->m, j, "vmstat.", "vmstat", false, err) < 0)
		return -1;
	if ((j = json_object_get(obj, "meminfo")) &&
	    parse_int_map(&s->m, j, "meminfo.", "meminfo", false, err) < 0)
		return -1;
	if ((j = json_object_get(obj, "settings")) &&
	    parse_int_map(&s->m, j, "settings.", "settings", true, err) < 0)
		return -1;
	if ((j = json_object_get(obj, "agent")) &&
	    parse_int_map(&s->m, j, "agent.", "agent", false, err) < 0)
		return -1;
	if ((j = json_object_get(obj, "psi"))) {
		if (!json_is_object(j))
			return fail(err, "psi: expected an object of memory, io, cpu");
		for (size_t r = 0; r < 3; r++) {
			const json_t *res = json_object_get(j, psi_res[r]);
			char prefix[32], path[32];
			if (!res)
				continue;
			snprintf(prefix, sizeof(prefix), "psi.%s.", psi_res[r]);
			snprintf(path, sizeof(path), "psi.%s", psi_res[r]);
			if (parse_psi_res(&s->m, res, prefix, path, err) < 0)
				return -1;
		}
	}
	if ((j = json_object_get(obj, "labels")) && parse_labels(s, j, err) < 0)
		return -1;
	if ((j = json_object_get(obj, "cgroups"))) {
		size_t i;
		const json_t *c;
		if (!json_is_array(j))
			return fail(err, "cgroups: expected an array");
		if (json_array_size(j) > SAMPLE_MAX_CGROUPS)
			return fail(err, "cgroups: at most %d entries", SAMPLE_MAX_CGROUPS);
		json_array_foreach((json_t *)j, i, c)
			if (parse_cgroup(s, c, i, err) < 0)
				return -1;
	}
	if (sset_sort(&s->m) < 0)
		return fail(err, "sample: a field appears twice");
	return 0;
}

int sample_from_json(struct sample *s, const json_t *obj, char err[SAMPLE_ERR_MAX])
{
	sample_init(s);
	err[0] = '\0';
	if (parse_sample(s, obj, err) < 0) {
		sample_release(s);
		return -1;
	}
	return 0;
}

/* --- a whole body, the jansson way (the reference of sample_yajl.c) --- */

bool sample_json_depth_ok(const char *buf, size_t len, int max_depth)
{
	int depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (in_str) {
			if (c == '\\')
				i++;	/* skip the escaped character */
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if (c == '[' || c == '{') {
			if (++depth > max_depth)
				return false;
		} else if (c == ']' || c == '}') {
			depth--;
		}
	}
	return true;
}

void sample_json_key_before(const char *buf, size_t pos, char *key, size_t keylen)
{
	size_t i = pos, end, start;

	key[0] = '\0';
	/* back to the ':' that introduced the value, past the value itself */
	while (i > 0 && buf[i - 1] != ':') {
		if (buf[i - 1] == ',' || buf[i - 1] == '{' || buf[i - 1] == '[' || buf[i - 1] == '"')
			return;	/* an array element or a string: no key */
		i--;
	}
	if (i == 0)
		return;
	i--;
	while (i > 0 && (buf[i - 1] == ' ' || buf[i - 1] == '\t' || buf[i - 1] == '\n' ||
			 buf[i - 1] == '\r'))
		i--;
	if (i == 0 || buf[i - 1] != '"')
		return;
	end = i - 1;
	start = end;
	while (start > 0 && buf[start - 1] != '"' && end - start < 64)
		start--;
	if (start == 0 || buf[start - 1] != '"' || (start >= 2 && buf[start - 2] == '\\'))
		return;	/* no opening quote, or an escaped one: give up */
	for (size_t k = start; k < end; k++)
		if ((unsigned char)buf[k] < 0x20 || (unsigned char)buf[k] >= 0x7f || buf[k] == '\\')
			return;	/* keep the message plain ASCII */
	size_t n = end - start < keylen - 1 ? end - start : keylen - 1;
	memcpy(key, buf + start, n);
	key[n] = '\0';
}

void sample_body_free(struct sample *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sample_release(&s[i]);
	free(s);
}

static int body_fail(struct sample_body_err *e, enum sample_body_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int body_fail(struct sample_body_err *e, enum sample_body_kind kind, const char *fmt, ...)
{
	va_list ap;

	e->kind = kind;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int sample_body_parse_jansson(const char *buf, size_t len, int max_depth, struct sample **out,
			      size_t *n, struct sample_body_err *e)
{
	json_error_t jerr;
	json_t *root;
	size_t cnt;
	struct sample *s = NULL;
	char err[SAMPLE_ERR_MAX];

	memset(e, 0, sizeof(*e));
	*out = NULL;
	*n = 0;
	if (!sample_json_depth_ok(buf, len, max_depth))
		return body_fail(e, SB_DEPTH, "nested deeper than %d levels", max_depth);
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(e->detail, sizeof(e->detail), "line %d, column %d", jerr.line, jerr.column);
		if (strncmp(jerr.text, "too big integer", 15) == 0) {
			/* name the key, the only field path the parser can give */
			char key[72];
			sample_json_key_before(buf, (size_t)jerr.position <= len ?
					       (size_t)jerr.position : len, key, sizeof(key));
			return body_fail(e, SB_TOOBIG, "%s%s%s", *key ? "\"" : "",
					 *key ? key : "a number", *key ? "\"" : "");
		}
		return body_fail(e, SB_SYNTAX, "%s", jerr.text);
	}
	if (json_is_object(root)) {
		cnt = 1;
	} else if (json_is_array(root)) {
		cnt = json_array_size(root);
	} else {
		json_decref(root);
		return body_fail(e, SB_TOP, "expected a sample object or an array of sample objects");
	}
	if (cnt && !(s = calloc(cnt, sizeof(*s)))) {
		json_decref(root);
		return body_fail(e, SB_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < cnt; i++) {
		const json_t *obj = json_is_array(root) ? json_array_get(root, i) : root;
		if (i == SAMPLE_BODY_MAX_SAMPLES) {
			/* where the streaming parser stops too */
			sample_body_free(s, i);
			json_decref(root);
			return body_fail(e, SB_BATCH, "more than %d", SAMPLE_BODY_MAX_SAMPLES);
		}
		if (sample_from_json(&s[i], obj, err) < 0) {
			sample_body_free(s, i);
			json_decref(root);
			e->sample = i;
			return body_fail(e, SB_SAMPLE, "%s", err);
		}
	}
	json_decref(root);
	*out = s;
	*n = cnt;
	return 0;
}

/* --- emission --- */

/* Returns obj[key], creating an empty object there when absent. Borrowed. */
static json_t *child(json_t *obj, const char *key)
{
	json_t *c = json_object_get(obj, key);

	if (!c) {
		c = json_object();
		if (!c || json_object_set_new(obj, key, c) < 0)
			return NULL;
	}
	return c;
}

static json_t *int_or_null(int64_t v)
{
	return v == SAMPLE_NULL ? json_null() : json_integer(v);
}

/* Places a PSI field "some.avg10" (rest after the "psi.<res>." prefix) into res. */
static int put_psi(json_t *res, const char *rest, int64_t v)
{
	const char *dot = strchr(rest, '.');
	char kind[8];

	if (!dot || (size_t)(dot - rest) >= sizeof(kind))
		return -1;
	memcpy(kind, rest, (size_t)(dot - rest));
	kind[dot - rest] = '\0';
	json_t *line = child(res, kind);
	if (!line)
		return -1;
	json_t *val = strcmp(dot + 1, "total") == 0 ? json_integer(v) : json_real((double)v / 100.0);
	return json_object_set_new(line, dot + 1, val);
}

/* Places one flattened field into a contract object; top says host level. */
static int put_field(json_t *o, const char *name, int64_t v, bool top)
{
	static const struct { const char *prefix, *key; } maps[] = {
		{ "vmstat.", "vmstat" }, { "meminfo.", "meminfo" }, { "settings.", "settings" },
		{ "agent.", "agent" }, { "stat.", "memory_stat" }, { "events.", "events" },
	};
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		size_t pl = strlen(maps[i].prefix);
		if (strncmp(name, maps[i].prefix, pl) == 0) {
			json_t *c = child(o, maps[i].key);
			return c ? json_object_set_new(c, name + pl, int_or_null(v)) : -1;
		}
	}
	if (strncmp(name, "psi.", 4) == 0) {
		json_t *psi = child(o, "psi");
		if (!psi)
			return -1;
		if (!top)
			return put_psi(psi, name + 4, v);
		const char *dot = strchr(name + 4, '.');
		char res[16];
		if (!dot || (size_t)(dot - name - 4) >= sizeof(res))
			return -1;
		memcpy(res, name + 4, (size_t)(dot - name - 4));
		res[dot - name - 4] = '\0';
		json_t *r = child(psi, res);
		return r ? put_psi(r, dot + 1, v) : -1;
	}
	if (strcmp(name, "meta.interval_ms") == 0)
		return json_object_set_new(o, "interval_s", v % 1000 == 0 ?
					   json_integer(v / 1000) : json_real((double)v / 1000.0));
	if (strcmp(name, "meta.page_size") == 0)
		return json_object_set_new(o, "page_size", json_integer(v));
	if (strcmp(name, "meta.mglru") == 0)
		return json_object_set_new(o, "mglru", json_boolean(v));
	return json_object_set_new(o, name, int_or_null(v));
}

static int put_set(json_t *o, const struct sset *m, bool top)
{
	for (size_t i = 0; i < m->n; i++) {
		const char *name = dict_name(m->f[i].id);
		if (!name || put_field(o, name, m->f[i].v, top) < 0)
			return -1;
	}
	return 0;
}

json_t *sample_to_json(const struct sample *s)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (json_object_set_new(o, "host", json_string(s->host)) < 0 ||
	    json_object_set_new(o, "ts", json_real((double)s->ts_ms / 1000.0)) < 0)
		goto fail;
	if (s->boot_id && json_object_set_new(o, "boot_id", json_string(s->boot_id)) < 0)
		goto fail;
	if (s->kernel && json_object_set_new(o, "kernel", json_string(s->kernel)) < 0)
		goto fail;
	if (s->agent_version &&
	    json_object_set_new(o, "agent_version", json_string(s->agent_version)) < 0)
		goto fail;
	if (s->labels && json_object_set(o, "labels", s->labels) < 0)
		goto fail;
	if (!child(o, "vmstat") || put_set(o, &s->m, true) < 0)
		goto fail;
	if (s->ncg) {
		json_t *arr = json_array();
		if (!arr || json_object_set_new(o, "cgroups", arr) < 0)
			goto fail;
		for (size_t i = 0; i < s->ncg; i++) {
			json_t *c = json_object();
			if (!c || json_array_append_new(arr, c) < 0 ||
			    json_object_set_new(c, "path", json_string(s->cg[i].path)) < 0 ||
			    json_object_set_new(c, "version", json_integer(s->cg[i].version)) < 0 ||
			    put_set(c, &s->cg[i].m, false) < 0)
				goto fail;
		}
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}
