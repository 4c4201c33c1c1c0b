/* test_gen_refresh.c - the bulk loader's fast path (gen_host_refresh)
 * gives exactly the sample the JSON path (gen_host_sample) gives, step
 * after step, with and without cgroups: so what vmscope-bulkload stores is
 * what ingest of the generated JSON would store. */
#include <string.h>

#include "gen.h"
#include "harness.h"
#include "sample.h"

static int same_set(const struct sset *a, const struct sset *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->f[i].id != b->f[i].id || a->f[i].v != b->f[i].v)
			return 0;
	return 1;
}

static void check(int ncg)
{
	struct gen_host *h = gen_host_new("refresh-00001", ncg, 42);
	struct sample fast, slow;
	int64_t t = 1764518400000;

	CHECK(h != NULL);
	if (!h)
		return;
	CHECK_INT(gen_host_sample(h, t, &fast), 0);
	for (int step = 0; step < 50; step++) {
		t += 10000;
		gen_host_step(h, 10000);
		CHECK_INT(gen_host_refresh(h, t, &fast), 0);
		CHECK_INT(gen_host_sample(h, t, &slow), 0);
		CHECK(fast.ts_ms == slow.ts_ms);
		CHECK(strcmp(fast.host, slow.host) == 0);
		CHECK(same_set(&fast.m, &slow.m));
		CHECK_INT(fast.ncg, slow.ncg);
		for (size_t k = 0; k < fast.ncg && k < slow.ncg; k++) {
			CHECK(strcmp(fast.cg[k].path, slow.cg[k].path) == 0);
			CHECK(same_set(&fast.cg[k].m, &slow.cg[k].m));
		}
		sample_release(&slow);
	}
	/* a sample of another shape is refused, not half-updated silently */
	struct gen_host *other = gen_host_new("refresh-00002", ncg + 1, 7);
	CHECK(other != NULL);
	if (other)
		CHECK_INT(gen_host_refresh(other, t, &fast), -1);
	gen_host_free(other);
	sample_release(&fast);
	gen_host_free(h);
}

int main(void)
{
	check(0);
	check(20);
	return harness_report("test_gen_refresh");
}
