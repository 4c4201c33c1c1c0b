/* test_overrides.c - detector overrides (detect/overrides.c): parsing and
 * its refusals, the JSON round trip, resolution by specificity per
 * parameter (host > label > fleet, label ties by key then value), and what
 * a resolved parameter does to a detector level. */
#include "harness.h"

#include <jansson.h>
#include <math.h>

#include "detect_engine.h"
#include "overrides.h"

static json_t *parse(const char *s)
{
	json_error_t e;
	json_t *j = json_loads(s, 0, &e);
	if (!j)
		fprintf(stderr, "bad test JSON: %s: %s\n", s, e.text);
	return j;
}

/* Parses a set; returns 0 or -1 with err. */
static int set_of(struct ovr_set *set, const char *s, char *err, size_t errlen)
{
	json_t *j = parse(s);
	int rc = j ? ovr_set_from_json(set, j, err, errlen) : -1;
	json_decref(j);
	return rc;
}

static void refused(const char *s, const char *want)
{
	struct ovr_set set;
	char err[OVR_ERR_MAX] = "";
	CHECK_INT(set_of(&set, s, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, want);
	CHECK_INT(set.n, 0);
}

static void test_refusals(void)
{
	refused("{\"overrides\":[{\"host\":\"a\",\"kind\":\"thrash\",\"params\":{\"min_magnitud\":1}}]}",
		"overrides[0]: params.min_magnitud: unknown parameter");
	refused("{\"overrides\":[{\"kind\":\"thrash\",\"params\":{}}]}", "params: expected an object");
	refused("{\"overrides\":[{\"kind\":\"thrash\"}]}", "params: missing");
	refused("{\"overrides\":[{\"host\":\"a\",\"params\":{\"enabled\":false}}]}", "kind: missing");
	refused("{\"overrides\":[{\"host\":\"a\",\"kind\":\"host_silent\",\"params\":{\"enabled\":false}}]}",
		"kind: expected one of");
	refused("{\"overrides\":[{\"host\":\"a b\",\"kind\":\"thrash\",\"params\":{\"enabled\":false}}]}",
		"host: expected a host name");
	refused("{\"overrides\":[{\"host\":\"a\",\"label\":\"team=x\",\"kind\":\"thrash\","
		"\"params\":{\"enabled\":false}}]}", "give one of them");
	refused("{\"overrides\":[{\"label\":\"team\",\"kind\":\"thrash\",\"params\":{\"enabled\":false}}]}",
		"label: expected \"key=value\"");
	refused("{\"overrides\":[{\"kind\":\"thrash\",\"params\":{\"hold_s\":-1}}]}", "params.hold_s");
	refused("{\"overrides\":[{\"kind\":\"thrash\",\"params\":{\"min_magnitude\":\"big\"}}]}",
		"params.min_magnitude: expected a number >= 0");
	refused("{\"overrides\":[{\"kind\":\"thrash\",\"params\":{\"min_severity\":\"page\"}}]}",
		"params.min_severity");
	refused("{\"overrides\":[{\"kind\":\"thrash\",\"params\":{\"enabled\":1}}]}", "params.enabled");
	refused("{\"overrides\":[{\"kind\":\"thrash\",\"params\":{\"enabled\":false},\"scope\":\"x\"}]}",
		"scope: unknown field");
	refused("{\"overrides\":[{\"label\":\"team=db\",\"kind\":\"thrash\",\"params\":{\"enabled\":false}},"
		"{\"label\":\"team=db\",\"kind\":\"thrash\",\"params\":{\"hold_s\":60}}]}",
		"overrides[1]: the same place and kind as overrides[0]");
	refused("{\"rules\":[]}", "expected {\"overrides\"");
	/* the same place with another kind, or another place, is fine */
	struct ovr_set set;
	char err[OVR_ERR_MAX];
	CHECK_INT(set_of(&set, "{\"overrides\":[{\"host\":\"a\",\"kind\":\"thrash\",\"params\":{\"enabled\":false}},"
		  "{\"host\":\"a\",\"kind\":\"oom_kill\",\"params\":{\"enabled\":false}},"
		  "{\"host\":\"b\",\"kind\":\"thrash\",\"params\":{\"enabled\":false}}]}", err, sizeof(err)), 0);
	CHECK_INT(set.n, 3);
	ovr_set_release(&set);
}

static void test_roundtrip(void)
{
	const char *in = "{\"overrides\":[{\"id\":7,\"label\":\"team=db=x\",\"kind\":\"writeback_storm\","
			 "\"params\":{\"min_severity\":\"critical\",\"hold_s\":90.5,\"min_magnitude\":1048576},"
			 "\"note\":\"batch jobs\"}]}";
	struct ovr_set set, again;
	char err[OVR_ERR_MAX];

	CHECK_INT(set_of(&set, in, err, sizeof(err)), 0);
	CHECK_INT(set.n, 1);
	CHECK_STR(set.r[0].label_key, "team");
	CHECK_STR(set.r[0].label_value, "db=x");	/* split at the first '=' */
	CHECK_INT(set.r[0].scope, OVR_LABEL);
	CHECK_INT(set.r[0].id, 7);
	CHECK_INT(set.r[0].p.hold_ms, 90500);
	json_t *out = ovr_set_to_json(&set);
	CHECK(out != NULL);
	CHECK_INT(ovr_set_from_json(&again, out, err, sizeof(err)), 0);
	json_t *out2 = ovr_set_to_json(&again);
	CHECK(json_equal(out, out2));
	json_t *r0 = json_array_get(json_object_get(out, "overrides"), 0);
	CHECK_STR(json_string_value(json_object_get(r0, "label")), "team=db=x");
	CHECK_STR(json_string_value(json_object_get(r0, "note")), "batch jobs");
	CHECK(json_object_get(json_object_get(r0, "params"), "enabled") == NULL);	/* only what was given */
	json_decref(out);
	json_decref(out2);
	ovr_set_release(&set);
	ovr_set_release(&again);
}

static void test_resolve(void)
{
	struct ovr_set set;
	struct ovr_tuning t;
	char err[OVR_ERR_MAX];
	const char *rules =
		"{\"overrides\":["
		"{\"kind\":\"thrash\",\"params\":{\"hold_s\":120,\"min_magnitude\":100}},"
		"{\"label\":\"team=db\",\"kind\":\"thrash\",\"params\":{\"min_magnitude\":200,\"min_severity\":\"critical\"}},"
		"{\"label\":\"env=prod\",\"kind\":\"thrash\",\"params\":{\"min_magnitude\":300}},"
		"{\"host\":\"db-07\",\"kind\":\"thrash\",\"params\":{\"min_magnitude\":400}},"
		"{\"host\":\"db-07\",\"kind\":\"oom_kill\",\"params\":{\"enabled\":false}}]}";
	json_t *db_prod = parse("{\"team\":\"db\",\"env\":\"prod\"}");
	json_t *db = parse("{\"team\":\"db\"}");
	json_t *other = parse("{\"team\":\"web\"}");

	CHECK_INT(set_of(&set, rules, err, sizeof(err)), 0);

	/* no set: the built-in defaults */
	ovr_resolve(NULL, "x", NULL, &t);
	CHECK(t.k[K_THRASH].enabled);
	CHECK_INT(t.k[K_THRASH].hold_ms, DET_MIN_SPAN_MS);
	CHECK(t.k[K_THRASH].min_magnitude == 0);

	/* fleet only */
	ovr_resolve(&set, "web-01", other, &t);
	CHECK(t.k[K_THRASH].min_magnitude == 100);
	CHECK_INT(t.k[K_THRASH].hold_ms, 120000);
	CHECK(!t.k[K_THRASH].critical_only);
	CHECK_INT(t.k[K_SWAP_IMBALANCE].hold_ms, DET_MIN_SPAN_MS);	/* other kinds untouched */

	/* a label beats the fleet, per parameter: hold_s still from the fleet */
	ovr_resolve(&set, "db-01", db, &t);
	CHECK(t.k[K_THRASH].min_magnitude == 200);
	CHECK(t.k[K_THRASH].critical_only);
	CHECK_INT(t.k[K_THRASH].hold_ms, 120000);

	/* two labels match: "env" < "team", so env=prod's min_magnitude wins;
	 * min_severity only team=db sets */
	ovr_resolve(&set, "db-02", db_prod, &t);
	CHECK(t.k[K_THRASH].min_magnitude == 300);
	CHECK(t.k[K_THRASH].critical_only);

	/* the host beats every label */
	ovr_resolve(&set, "db-07", db_prod, &t);
	CHECK(t.k[K_THRASH].min_magnitude == 400);
	CHECK(t.k[K_THRASH].critical_only);
	CHECK_INT(t.k[K_THRASH].hold_ms, 120000);
	CHECK(!t.k[K_OOM_KILL].enabled);
	CHECK(t.k[K_THRASH].enabled);

	/* a host rule needs the exact name; no labels: only fleet rules */
	ovr_resolve(&set, "db-070", NULL, &t);
	CHECK(t.k[K_THRASH].min_magnitude == 100);
	CHECK(t.k[K_OOM_KILL].enabled);

	/* the order of rules in the set does not matter */
	const char *reversed =
		"{\"overrides\":["
		"{\"label\":\"env=prod\",\"kind\":\"thrash\",\"params\":{\"min_magnitude\":300}},"
		"{\"label\":\"team=db\",\"kind\":\"thrash\",\"params\":{\"min_magnitude\":200}}]}";
	struct ovr_set rev;
	CHECK_INT(set_of(&rev, reversed, err, sizeof(err)), 0);
	ovr_resolve(&rev, "db-02", db_prod, &t);
	CHECK(t.k[K_THRASH].min_magnitude == 300);
	ovr_set_release(&rev);

	ovr_set_release(&set);
	json_decref(db_prod);
	json_decref(db);
	json_decref(other);
}

static void test_apply(void)
{
	struct ovr_tuning t;
	struct ovr_params *p = &t.k[K_THRASH];

	ovr_tuning_default(&t);
	CHECK_INT(ovr_apply_level(p, DL_WARNING, 5), DL_WARNING);	/* defaults change nothing */
	CHECK_INT(ovr_apply_level(p, DL_CRITICAL, 0), DL_CRITICAL);
	p->min_magnitude = 100;
	CHECK_INT(ovr_apply_level(p, DL_CRITICAL, 100), DL_CRITICAL);
	CHECK_INT(ovr_apply_level(p, DL_CRITICAL, 99), DL_SUSTAIN);	/* keeps an open alert open */
	CHECK_INT(ovr_apply_level(p, DL_WARNING, 50), DL_SUSTAIN);
	CHECK_INT(ovr_apply_level(p, DL_WARNING, 49), DL_CLEAR);
	CHECK_INT(ovr_apply_level(p, DL_CLEAR, 500), DL_CLEAR);	/* never raises a level */
	CHECK_INT(ovr_apply_level(p, DL_WARNING, NAN), DL_CLEAR);
	p->min_magnitude = 0;
	p->critical_only = true;
	CHECK_INT(ovr_apply_level(p, DL_WARNING, 5), DL_SUSTAIN);
	CHECK_INT(ovr_apply_level(p, DL_CRITICAL, 5), DL_CRITICAL);
	p->enabled = false;
	CHECK_INT(ovr_apply_level(p, DL_CRITICAL, 1e9), DL_CLEAR);
}

int main(void)
{
	test_refusals();
	test_roundtrip();
	test_resolve();
	test_apply();
	return harness_report("test_overrides");
}
