/* overrides.c - parsing, printing and resolving detector overrides (see
 * overrides.h). No database and no clock: the server and the replay tool
 * resolve the same rules the same way. */
#include "overrides.h"
#include "errf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_engine.h"
#include "names.h"

#define HOLD_MAX_S 86400.0

static const char *const param_names[NOVR_PARAM] = {
	[OP_ENABLED] = "enabled",
	[OP_MIN_SEVERITY] = "min_severity",
	[OP_MIN_MAGNITUDE] = "min_magnitude",
	[OP_HOLD_S] = "hold_s",
};

void ovr_tuning_default(struct ovr_tuning *t)
{
	for (int k = 0; k < NKIND; k++) {
		t->k[k].enabled = true;
		t->k[k].critical_only = false;
		t->k[k].min_magnitude = 0;
		t->k[k].hold_ms = DET_MIN_SPAN_MS;
	}
}

void ovr_rule_release(struct ovr_rule *r)
{
	free(r->host);
	free(r->label_key);
	free(r->label_value);
	free(r->note);
	free(r->updated_at);
	memset(r, 0, sizeof(*r));
}

void ovr_set_release(struct ovr_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		ovr_rule_release(&set->r[i]);
	free(set->r);
	set->r = NULL;
	set->n = 0;
}

static int dup_str(char **dst, const char *s, char *err, size_t errlen)
{
	*dst = strdup(s);
	return *dst ? 0 : errf(err, errlen, "out of memory");
}

static int parse_params(struct ovr_rule *r, const json_t *p, char *err, size_t errlen)
{
	const char *key;
	const json_t *v;

	if (!json_is_object(p) || json_object_size(p) == 0)
		return errf(err, errlen, "params: expected an object with at least one of enabled, "
			    "min_severity, min_magnitude, hold_s");
	json_object_foreach((json_t *)p, key, v) {
		int id = -1;
		for (int i = 0; i < NOVR_PARAM; i++)
			if (strcmp(key, param_names[i]) == 0)
				id = i;
		switch (id) {
		case OP_ENABLED:
			if (!json_is_boolean(v))
				return errf(err, errlen, "params.enabled: expected true or false");
			r->p.enabled = json_is_true(v);
			break;
		case OP_MIN_SEVERITY: {
			const char *s = json_string_value(v);
			if (!s || (strcmp(s, "warning") != 0 && strcmp(s, "critical") != 0))
				return errf(err, errlen, "params.min_severity: expected \"warning\" or \"critical\"");
			r->p.critical_only = strcmp(s, "critical") == 0;
			break;
		}
		case OP_MIN_MAGNITUDE: {
			double x = json_number_value(v);
			if (!json_is_number(v) || !isfinite(x) || x < 0)
				return errf(err, errlen, "params.min_magnitude: expected a number >= 0");
			r->p.min_magnitude = x;
			break;
		}
		case OP_HOLD_S: {
			double x = json_number_value(v);
			if (!json_is_number(v) || !isfinite(x) || x < 0 || x > HOLD_MAX_S)
				return errf(err, errlen, "params.hold_s: expected a number from 0 to %.0f", HOLD_MAX_S);
			r->p.hold_ms = (int64_t)llround(x * 1000.0);
			break;
		}
		default:
			return errf(err, errlen, "params.%.64s: unknown parameter (known: enabled, "
				    "min_severity, min_magnitude, hold_s)", key);
		}
		r->set |= 1u << id;
	}
	return 0;
}

/* "key=value": key as a label key of the contract, value printable. */
static int parse_label(struct ovr_rule *r, const char *s, char *err, size_t errlen)
{
	const char *eq = strchr(s, '=');
	size_t vlen = eq ? strlen(eq + 1) : 0;

	if (!eq || eq == s || !name_metric_valid(s, (size_t)(eq - s)) || vlen > SAMPLE_MAX_STRING ||
	    !name_printable_utf8(eq + 1, vlen))
		return errf(err, errlen, "label: expected \"key=value\" (a label key the agent sends, "
			    "a value of at most %d printable characters)", SAMPLE_MAX_STRING);
	r->label_key = strndup(s, (size_t)(eq - s));
	r->label_value = strdup(eq + 1);
	if (!r->label_key || !r->label_value)
		return errf(err, errlen, "out of memory");
	return 0;
}

int ovr_rule_from_json(struct ovr_rule *r, const json_t *j, char *err, size_t errlen)
{
	const char *key;
	const json_t *v;

	memset(r, 0, sizeof(*r));
	r->kind = -1;
	if (!json_is_object(j))
		return errf(err, errlen, "expected an object with kind, params and host or label");
	json_object_foreach((json_t *)j, key, v) {
		const char *s = json_string_value(v);
		int rc = 0;
		if (strcmp(key, "host") == 0) {
			if (!s || !name_host_valid(s, strlen(s)))
				rc = errf(err, errlen, "host: expected a host name (1 to 253 of A-Za-z0-9._-)");
			else
				rc = dup_str(&r->host, s, err, errlen);
		} else if (strcmp(key, "label") == 0) {
			rc = s ? parse_label(r, s, err, errlen)
			       : errf(err, errlen, "label: expected a string \"key=value\"");
		} else if (strcmp(key, "kind") == 0) {
			r->kind = s ? det_kind_from_name(s) : -1;
			if (r->kind < 0)
				rc = errf(err, errlen, "kind: expected one of thrash, swap_imbalance, "
					  "writeback_storm, direct_reclaim_stall, oom_kill, compaction_stall");
		} else if (strcmp(key, "params") == 0) {
			rc = parse_params(r, v, err, errlen);
		} else if (strcmp(key, "note") == 0) {
			if (json_is_null(v))
				continue;
			if (!s || strlen(s) > OVR_MAX_NOTE || !name_printable_utf8(s, strlen(s)))
				rc = errf(err, errlen, "note: expected a string of at most %d printable "
					  "characters", OVR_MAX_NOTE);
			else
				rc = dup_str(&r->note, s, err, errlen);
		} else if (strcmp(key, "id") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < 0)
				rc = errf(err, errlen, "id: expected an integer >= 0");
			else
				r->id = json_integer_value(v);
		} else if (strcmp(key, "updated_at") == 0) {
			continue;	/* the table's; shown by GET, ignored on input */
		} else {
			rc = errf(err, errlen, "%.64s: unknown field (known: host, label, kind, params, note)",
				  key);
		}
		if (rc < 0)
			goto bad;
	}
	if (r->host && r->label_key) {
		errf(err, errlen, "host and label: give one of them (or neither, for the whole fleet)");
		goto bad;
	}
	if (r->kind < 0) {
		errf(err, errlen, "kind: missing");
		goto bad;
	}
	if (!r->set) {
		errf(err, errlen, "params: missing");
		goto bad;
	}
	r->scope = r->host ? OVR_HOST : r->label_key ? OVR_LABEL : OVR_FLEET;
	return 0;
bad:
	ovr_rule_release(r);
	return -1;
}

static bool same_place(const struct ovr_rule *a, const struct ovr_rule *b)
{
	if (a->kind != b->kind || a->scope != b->scope)
		return false;
	if (a->scope == OVR_HOST)
		return strcmp(a->host, b->host) == 0;
	if (a->scope == OVR_LABEL)
		return strcmp(a->label_key, b->label_key) == 0 &&
		       strcmp(a->label_value, b->label_value) == 0;
	return true;
}

int ovr_set_add(struct ovr_set *set, struct ovr_rule *r)
{
	if (set->n >= OVR_MAX_RULES)
		return -1;
	struct ovr_rule *nr = realloc(set->r, (set->n + 1) * sizeof(*nr));
	if (!nr)
		return -1;
	set->r = nr;
	set->r[set->n++] = *r;
	memset(r, 0, sizeof(*r));
	return 0;
}

int ovr_set_from_json(struct ovr_set *set, const json_t *j, char *err, size_t errlen)
{
	const json_t *arr = json_is_array(j) ? j : json_object_get(j, "overrides");
	char e[OVR_ERR_MAX];
	size_t i;
	const json_t *v;

	memset(set, 0, sizeof(*set));
	if (!json_is_array(arr) || (!json_is_array(j) && json_object_size(j) != 1))
		return errf(err, errlen, "expected {\"overrides\": [...]}");
	if (json_array_size(arr) > OVR_MAX_RULES)
		return errf(err, errlen, "overrides: at most %d rules", OVR_MAX_RULES);
	json_array_foreach((json_t *)arr, i, v) {
		struct ovr_rule r;
		if (ovr_rule_from_json(&r, v, e, sizeof(e)) < 0) {
			errf(err, errlen, "overrides[%zu]: %s", i, e);
			goto bad;
		}
		for (size_t k = 0; k < set->n; k++) {
			if (same_place(&set->r[k], &r)) {
				errf(err, errlen, "overrides[%zu]: the same place and kind as overrides[%zu] "
				     "(merge their params)", i, k);
				ovr_rule_release(&r);
				goto bad;
			}
		}
		if (ovr_set_add(set, &r) < 0) {
			errf(err, errlen, "overrides: out of memory");
			ovr_rule_release(&r);
			goto bad;
		}
	}
	return 0;
bad:
	ovr_set_release(set);
	return -1;
}

int ovr_set_load_file(struct ovr_set *set, const char *path, char *err, size_t errlen)
{
	json_error_t jerr;
	char e[OVR_ERR_MAX];
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);

	memset(set, 0, sizeof(*set));
	if (!j)
		return errf(err, errlen, "could not read overrides file %s: %s (line %d)", path, jerr.text,
			    jerr.line);
	int rc = ovr_set_from_json(set, j, e, sizeof(e));
	json_decref(j);
	if (rc < 0)
		return errf(err, errlen, "%s: %s", path, e);
	return 0;
}

json_t *ovr_params_to_json(const struct ovr_rule *r)
{
	json_t *p = json_object();
	int bad = !p;

	if (!bad && (r->set & (1u << OP_ENABLED)))
		bad |= json_object_set_new(p, "enabled", json_boolean(r->p.enabled));
	if (!bad && (r->set & (1u << OP_MIN_SEVERITY)))
		bad |= json_object_set_new(p, "min_severity",
					   json_string(r->p.critical_only ? "critical" : "warning"));
	if (!bad && (r->set & (1u << OP_MIN_MAGNITUDE)))
		bad |= json_object_set_new(p, "min_magnitude", json_real(r->p.min_magnitude));
	if (!bad && (r->set & (1u << OP_HOLD_S)))
		bad |= json_object_set_new(p, "hold_s", json_real((double)r->p.hold_ms / 1000.0));
	if (bad) {
		json_decref(p);
		return NULL;
	}
	return p;
}

json_t *ovr_rule_to_json(const struct ovr_rule *r)
{
	json_t *o = json_object();
	json_t *p = ovr_params_to_json(r);
	int bad = !o || !p;

	if (!bad && r->id)
		bad |= json_object_set_new(o, "id", json_integer(r->id));
	if (!bad && r->scope == OVR_HOST)
		bad |= json_object_set_new(o, "host", json_string(r->host));
	if (!bad && r->scope == OVR_LABEL) {
		size_t n = strlen(r->label_key) + strlen(r->label_value) + 2;
		char *l = malloc(n);
		if (l) {
			snprintf(l, n, "%s=%s", r->label_key, r->label_value);
			bad |= json_object_set_new(o, "label", json_string(l));
			free(l);
		} else {
			bad = 1;
		}
	}
	if (!bad)
		bad |= json_object_set_new(o, "kind", json_string(det_kind_name(r->kind)));
	if (!bad) {
		bad |= json_object_set_new(o, "params", p);
		p = NULL;
	}
	if (!bad && r->note)
		bad |= json_object_set_new(o, "note", json_string(r->note));
	if (!bad && r->updated_at)
		bad |= json_object_set_new(o, "updated_at", json_string(r->updated_at));
	json_decref(p);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *ovr_set_to_json(const struct ovr_set *set)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < set->n; i++) {
		json_t *o = ovr_rule_to_json(&set->r[i]);
		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr ? json_pack("{s:o}", "overrides", arr) : NULL;
}

/* Does r apply to this host? */
static bool matches(const struct ovr_rule *r, const char *host, const json_t *labels)
{
	switch (r->scope) {
	case OVR_FLEET:
		return true;
	case OVR_HOST:
		return strcmp(r->host, host) == 0;
	case OVR_LABEL: {
		const char *v = json_string_value(json_object_get(labels, r->label_key));
		return v && strcmp(v, r->label_value) == 0;
	}
	}
	return false;
}

/* True when a is more specific than b (both apply to the same host). */
static bool beats(const struct ovr_rule *a, const struct ovr_rule *b)
{
	if (a->scope != b->scope)
		return a->scope > b->scope;
	if (a->scope != OVR_LABEL)
		return false;	/* one rule per place and kind */
	int c = strcmp(a->label_key, b->label_key);
	if (c == 0)
		c = strcmp(a->label_value, b->label_value);
	return c < 0;
}

void ovr_resolve(const struct ovr_set *set, const char *host, const json_t *labels,
		 struct ovr_tuning *out)
{
	const struct ovr_rule *win[NKIND][NOVR_PARAM];

	ovr_tuning_default(out);
	if (!set || !set->n)
		return;
	memset(win, 0, sizeof(win));
	for (size_t i = 0; i < set->n; i++) {
		const struct ovr_rule *r = &set->r[i];
		if (r->kind < 0 || r->kind >= NKIND || !matches(r, host, labels))
			continue;
		for (int p = 0; p < NOVR_PARAM; p++)
			if ((r->set & (1u << p)) && (!win[r->kind][p] || beats(r, win[r->kind][p])))
				win[r->kind][p] = r;
	}
	for (int k = 0; k < NKIND; k++) {
		struct ovr_params *o = &out->k[k];
		if (win[k][OP_ENABLED])
			o->enabled = win[k][OP_ENABLED]->p.enabled;
		if (win[k][OP_MIN_SEVERITY])
			o->critical_only = win[k][OP_MIN_SEVERITY]->p.critical_only;
		if (win[k][OP_MIN_MAGNITUDE])
			o->min_magnitude = win[k][OP_MIN_MAGNITUDE]->p.min_magnitude;
		if (win[k][OP_HOLD_S])
			o->hold_ms = win[k][OP_HOLD_S]->p.hold_ms;
	}
}

int ovr_apply_level(const struct ovr_params *p, int level, double magnitude)
{
	if (!p->enabled)
		return DL_CLEAR;
	if (p->min_magnitude > 0 && !(magnitude >= p->min_magnitude)) {
		int cap = magnitude >= 0.5 * p->min_magnitude ? DL_SUSTAIN : DL_CLEAR;
		if (level > cap)
			level = cap;
	}
	if (p->critical_only && level == DL_WARNING)
		level = DL_SUSTAIN;
	return level;
}
