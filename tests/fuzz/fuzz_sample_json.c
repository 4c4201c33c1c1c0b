/* fuzz_sample_json.c - libFuzzer target for the ingest decoder/validator.
 *
 * Feeds arbitrary bytes through the same path as POST /api/v1/samples
 * (jansson with duplicate keys refused, then sample_from_json). When a
 * sample is accepted, it is emitted again (sample_to_json) and re-validated:
 * the round trip must succeed and give the same fields, or the emitter and
 * the validator disagree about the contract, which is a bug worth a crash.
 */
#include "sample.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sset_equal(const struct sset *a, const struct sset *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->f[i].id != b->f[i].id || a->f[i].v != b->f[i].v)
			return 0;
	return 1;
}

static void check_round_trip(const struct sample *s)
{
	char err[SAMPLE_ERR_MAX];
	json_t *o = sample_to_json(s);
	char *text;
	json_t *back;
	struct sample s2;

	if (!o)
		return;		/* out of memory: not a finding */
	text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(o);
	if (!text)
		return;
	back = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	if (!back)
		__builtin_trap();	/* we emitted JSON we cannot read */
	if (sample_from_json(&s2, back, err) != 0)
		__builtin_trap();	/* we emitted a sample we refuse */
	if (s2.ts_ms != s->ts_ms || strcmp(s2.host, s->host) != 0 || !sset_equal(&s2.m, &s->m) ||
	    s2.ncg != s->ncg)
		__builtin_trap();
	for (size_t i = 0; i < s->ncg; i++)
		if (strcmp(s->cg[i].path, s2.cg[i].path) != 0 || !sset_equal(&s->cg[i].m, &s2.cg[i].m))
			__builtin_trap();
	sample_release(&s2);
	json_decref(back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[SAMPLE_ERR_MAX];
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	struct sample s;

	if (!j)
		return 0;
	if (json_is_array(j)) {
		size_t i;
		json_t *v;
		json_array_foreach(j, i, v) {
			if (sample_from_json(&s, v, err) == 0) {
				check_round_trip(&s);
				sample_release(&s);
			} else if (!err[0]) {
				__builtin_trap();	/* a refusal must say why */
			}
		}
	} else if (sample_from_json(&s, j, err) == 0) {
		check_round_trip(&s);
		sample_release(&s);
	} else if (!err[0]) {
		__builtin_trap();
	}
	json_decref(j);
	return 0;
}
