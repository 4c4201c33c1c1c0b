/* fuzz_sample_body.c - libFuzzer target: the libyajl ingest parser
 * (sample_body_parse) against the jansson reference
 * (sample_body_parse_jansson) on the same bytes. Any difference in
 * accept/refuse or in the resulting samples, or a refusal without a reason,
 * is a crash (body_diff.h). Seeds: tests/fuzz/corpus/sample_body/. */
#include "body_diff.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[512];
	int accepted;

	if (body_diff((const char *)data, size, 32, &accepted, why, sizeof(why))) {
		fprintf(stderr, "parsers differ: %s\n", why);
		__builtin_trap();
	}
	return 0;
}
