/* Unit tests for the sample model and its JSON validation (common/sample*.c). */
#include "harness.h"
#include "dict.h"
#include "sample.h"

#include <stdlib.h>

static const char *GOOD =
	"{\"host\":\"db-07\",\"boot_id\":\"0e6b1f0c\",\"ts\":1764518400.125,\"interval_s\":10,"
	"\"kernel\":\"6.1.0-18-amd64\",\"page_size\":4096,\"mglru\":false,"
	"\"vmstat\":{\"pgscan_kswapd\":123456,\"workingset_refault_file\":42,\"big\":9223372036854775807},"
	"\"meminfo\":{\"MemTotal\":24683520,\"Active(anon)\":5},"
	"\"psi\":{\"memory\":{\"some\":{\"avg10\":1.25,\"avg60\":0.0,\"avg300\":0.0,\"total\":7},"
	"\"full\":{\"avg10\":0.0,\"avg60\":0.0,\"avg300\":0.0,\"total\":0}},"
	"\"cpu\":{\"some\":{\"avg10\":0.5,\"avg60\":0.1,\"avg300\":0.0,\"total\":9}}},"
	"\"settings\":{\"vm.swappiness\":60},\"labels\":{\"role\":\"db\"},\"agent_version\":\"0.1\","
	"\"unknown_key\":[1,2,3],"
	"\"cgroups\":[{\"path\":\"/system.slice/postgresql.service\",\"version\":2,"
	"\"memory_stat\":{\"anon\":1,\"file\":2},\"events\":{\"oom_kill\":0},"
	"\"psi\":{\"some\":{\"avg10\":0.0,\"avg60\":0.0,\"avg300\":0.0,\"total\":1200}},"
	"\"memory_current\":123,\"memory_max\":null,\"swap_current\":0,"
	"\"settings\":{\"memory.high\":null,\"memory.low\":0}}]}";

/* Parses text, expecting failure; returns the error message (static). */
static const char *parse_err(const char *text)
{
	static char err[SAMPLE_ERR_MAX];
	json_error_t je;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	struct sample s;

	if (!j)
		return "json";
	if (sample_from_json(&s, j, err) == 0) {
		sample_release(&s);
		strcpy(err, "ok");
	}
	json_decref(j);
	return err;
}

int main(void)
{
	json_error_t je;
	json_t *j = json_loads(GOOD, JSON_REJECT_DUPLICATES, &je);
	char err[SAMPLE_ERR_MAX];
	struct sample s;
	int64_t v;

	CHECK(j != NULL);
	CHECK_INT(sample_from_json(&s, j, err), 0);
	CHECK_STR(s.host, "db-07");
	CHECK_INT(s.ts_ms, 1764518400125LL);
	CHECK(sset_get(&s.m, dict_lookup("vmstat.pgscan_kswapd"), &v) && v == 123456);
	CHECK(sset_get(&s.m, dict_lookup("vmstat.big"), &v) && v == INT64_MAX);
	CHECK(sset_get(&s.m, dict_lookup("psi.memory.some.avg10"), &v) && v == 125);
	CHECK(sset_get(&s.m, dict_lookup("meta.interval_ms"), &v) && v == 10000);
	CHECK(sset_get(&s.m, dict_lookup("settings.vm.swappiness"), &v) && v == 60);
	CHECK_INT(s.ncg, 1);
	CHECK(sset_get(&s.cg[0].m, dict_lookup("memory_max"), &v) && v == SAMPLE_NULL);
	CHECK(sset_get(&s.cg[0].m, dict_lookup("stat.anon"), &v) && v == 1);

	/* round trip: emitted JSON parses back to an equal object */
	json_t *out = sample_to_json(&s);
	json_t *in2 = json_deep_copy(j);
	json_object_del(in2, "unknown_key");
	CHECK(out && json_equal(out, in2));
	if (out && !json_equal(out, in2)) {
		char *a = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
		fprintf(stderr, "emitted: %s\n", a);
		free(a);
	}
	char *txt = json_dumps(out, JSON_COMPACT | JSON_REAL_PRECISION(15));
	CHECK_CONTAINS(txt, "\"ts\":1764518400.125");
	free(txt);
	json_decref(out);
	json_decref(in2);

	struct sample c;
	CHECK_INT(sample_copy(&c, &s), 0);
	CHECK_STR(c.cg[0].path, "/system.slice/postgresql.service");
	sample_release(&c);
	sample_release(&s);
	json_decref(j);

	CHECK_STR(parse_err("[]"), "sample: expected a JSON object");
	CHECK_STR(parse_err("{\"ts\":1,\"vmstat\":{}}"), "host: missing (required)");
	CHECK_CONTAINS(parse_err("{\"host\":\"a b\",\"ts\":1,\"vmstat\":{}}"), "host: expected");
	CHECK_CONTAINS(parse_err("{\"host\":\"a\",\"vmstat\":{}}"), "ts: missing");
	CHECK_CONTAINS(parse_err("{\"host\":\"a\",\"ts\":\"x\",\"vmstat\":{}}"), "ts: expected");
	CHECK_CONTAINS(parse_err("{\"host\":\"a\",\"ts\":1}"), "vmstat: missing");
	CHECK_STR(parse_err("{\"host\":\"a\",\"ts\":1,\"vmstat\":{\"pgpgin\":-1}}"),
		  "vmstat.pgpgin: expected an integer from 0 to 2^63-1");
	CHECK_STR(parse_err("{\"host\":\"a\",\"ts\":1,\"vmstat\":{\"pgpgin\":1.5}}"),
		  "vmstat.pgpgin: expected an integer from 0 to 2^63-1");
	CHECK_STR(parse_err("{\"host\":\"a\",\"ts\":1,\"vmstat\":{\"pgpgin\":\"1\"}}"),
		  "vmstat.pgpgin: expected an integer from 0 to 2^63-1");
	CHECK_CONTAINS(parse_err("{\"host\":\"a\",\"ts\":1,\"vmstat\":{\"a b\":1}}"), "not a valid counter name");
	CHECK_CONTAINS(parse_err("{\"host\":\"a\",\"ts\":1,\"vmstat\":{},\"cgroups\":[{\"path\":\"/a/../b\",\"version\":2}]}"),
		       "cgroups[0].path: expected a cgroup path");
	CHECK_CONTAINS(parse_err("{\"host\":\"a\",\"ts\":1,\"vmstat\":{},\"cgroups\":[{\"path\":\"/a\",\"version\":3}]}"),
		       "cgroups[0].version");
	CHECK_CONTAINS(parse_err("{\"host\":\"a\",\"ts\":1,\"vmstat\":{},\"cgroups\":[{\"path\":\"/a\",\"version\":2,\"memory_stat\":{\"anon\":-4}}]}"),
		       "cgroups[0].memory_stat.anon: expected an integer");
	CHECK_CONTAINS(parse_err("{\"host\":\"a\",\"ts\":1,\"vmstat\":{},\"psi\":{\"memory\":{\"some\":{\"avg10\":\"x\"}}}}"),
		       "psi.memory.some.avg10");
	CHECK_CONTAINS(parse_err("{\"host\":\"a\",\"ts\":1,\"vmstat\":{},\"labels\":{\"k\":1}}"), "labels.k");
	return harness_report("test_sample");
}
