/* overrides.h - operator overrides of the detectors' decisions, per host,
 * per agent label (key=value) or fleet-wide, per kind (docs/detectors.md
 * "Overrides"). Pure C over jansson: the server keeps the rules in the
 * detector_overrides table (overrides_store.c, API in api_overrides.c) and
 * bin/vmscope-replay reads the same JSON from a file, so both feed the
 * engine the same tuning (replay == server).
 *
 * A rule names where it applies (one of "host", "label" "key=value", or
 * neither: the whole fleet), a kind, and parameters:
 *   enabled        false: the kind never alerts there (open alerts resolve
 *                  after the usual clear period)
 *   min_severity   "critical": warnings neither open nor count as hits
 *   min_magnitude  the detector's main number (per kind, docs) must reach
 *                  this to count as a hit; between half of it and it the
 *                  level is at most "sustain" (keeps an open alert open)
 *   hold_s         the signature must hold this long before opening
 *                  (default DET_MIN_SPAN_MS / 1000 = 30)
 * Each parameter is resolved separately: the most specific rule that sets
 * it wins (host > label > fleet); among label rules the smallest key, then
 * value, in byte order. So a fleet rule can set hold_s and a host rule
 * min_magnitude, and both apply.
 *
 * Ownership: struct ovr_set owns its rules and their strings;
 * ovr_set_release frees them. JSON results are new references.
 */
#ifndef VMSCOPE_OVERRIDES_H
#define VMSCOPE_OVERRIDES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detect_kinds.h"

#define OVR_MAX_RULES 10000
#define OVR_MAX_NOTE 512
#define OVR_ERR_MAX 256

enum ovr_scope { OVR_FLEET = 0, OVR_LABEL = 1, OVR_HOST = 2 };

enum ovr_param { OP_ENABLED, OP_MIN_SEVERITY, OP_MIN_MAGNITUDE, OP_HOLD_S, NOVR_PARAM };

/* The effective parameters of one kind after resolution. */
struct ovr_params {
	bool enabled;
	bool critical_only;
	double min_magnitude;	/* 0: no floor */
	int64_t hold_ms;	/* opening span */
};

struct ovr_tuning {
	struct ovr_params k[NKIND];
};

struct ovr_rule {
	int64_t id;		/* the table's id; 0 when not stored (a file may omit it) */
	enum ovr_scope scope;
	char *host;		/* OVR_HOST */
	char *label_key, *label_value;	/* OVR_LABEL */
	int kind;		/* enum det_kind */
	unsigned set;		/* bit (1 << enum ovr_param) for each parameter given */
	struct ovr_params p;	/* the given values (others unused) */
	char *note;		/* NULL when none */
	char *updated_at;	/* RFC 3339 from the table; NULL from a file */
};

struct ovr_set {
	struct ovr_rule *r;
	size_t n;
};

/* The built-in parameters (what the engine does without any rule). */
void ovr_tuning_default(struct ovr_tuning *t);

/* Parses one rule object into r (zeroed by the call). Returns 0, or -1 with
 * err naming the field ("params.hold_s: expected a number from 0 to
 * 86400"). Unknown keys and unknown parameters are refused (a typo must not
 * silently do nothing); "id" and "updated_at" are read when present. */
int ovr_rule_from_json(struct ovr_rule *r, const json_t *j, char *err, size_t errlen);

/* Parses {"overrides":[rule, ...]} (or a bare array) into set (zeroed by
 * the call). Refuses two rules for the same place and kind. Returns 0, or
 * -1 with err naming the rule ("overrides[2].kind: ...") and set empty. */
int ovr_set_from_json(struct ovr_set *set, const json_t *j, char *err, size_t errlen);

/* Reads a JSON file in the GET /api/v1/overrides shape (what `curl
 * .../api/v1/overrides > FILE` saves). Returns 0 or -1 with err. */
int ovr_set_load_file(struct ovr_set *set, const char *path, char *err, size_t errlen);

/* Appends a copy of r (taking ownership of r's strings: r is zeroed).
 * Returns 0, or -1 when out of memory or at OVR_MAX_RULES (r untouched). */
int ovr_set_add(struct ovr_set *set, struct ovr_rule *r);

void ovr_rule_release(struct ovr_rule *r);
void ovr_set_release(struct ovr_set *set);

/* One rule, or {"overrides":[...]}, in the API shape. NULL when out of memory. */
json_t *ovr_rule_to_json(const struct ovr_rule *r);
json_t *ovr_set_to_json(const struct ovr_set *set);

/* The params object of r alone (what the table's jsonb column holds). */
json_t *ovr_params_to_json(const struct ovr_rule *r);

/* The tuning for a host with these agent labels (an object of strings, or
 * NULL). set may be NULL (defaults). Cannot fail. */
void ovr_resolve(const struct ovr_set *set, const char *host, const json_t *labels,
		 struct ovr_tuning *out);

/* Applies p to a detector level: returns the level the engine should use. */
int ovr_apply_level(const struct ovr_params *p, int level, double magnitude);

#endif
