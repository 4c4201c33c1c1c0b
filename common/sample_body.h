/* sample_body.h - a whole ingest body (one sample object or an array of
 * them) to validated samples.
 *
 * Two implementations that must accept and refuse exactly the same bodies
 * and give identical samples (tests/unit/test_sample_body.c and the fuzz
 * target tests/fuzz/fuzz_sample_body.c run both on the same inputs):
 *
 *   sample_body_parse          libyajl callbacks straight into struct sample
 *                              (sample_yajl.c): no tree, ~8x fewer
 *                              instructions than jansson on a 40 KB
 *                              20-cgroup sample (docs/scaling.md)
 *   sample_body_parse_jansson  the reference: jansson tree (duplicate keys
 *                              refused) + sample_from_json (sample_json.c)
 *
 * Both refuse a body nested deeper than max_depth, stop at the first bad
 * sample and say which one and which field. The clock checks (skew,
 * retention) are the server's (ingest.c).
 */
#ifndef VMSCOPE_SAMPLE_BODY_H
#define VMSCOPE_SAMPLE_BODY_H

#include <stddef.h>

#include "sample.h"

enum sample_body_kind {
	SB_OK = 0,
	SB_DEPTH,	/* nested deeper than max_depth */
	SB_SYNTAX,	/* not JSON (or not what jansson reads as JSON): msg says why */
	SB_TOOBIG,	/* an integer over 2^63-1: msg names its key ("\"pgpgin\"" or "a number") */
	SB_TOP,		/* neither an object nor an array */
	SB_SAMPLE,	/* sample number `sample` is refused: msg is "<field path>: <expected>" */
	SB_NOMEM,
	SB_BATCH,	/* an array of more than SAMPLE_BODY_MAX_SAMPLES samples */
};

/* Samples one body may carry (the agent's --batch-max goes up to this).
 * Every parsed sample costs a few KiB whatever its JSON size, so a body of
 * 150,000 tiny samples would take ~600 MiB; both parsers stop at the
 * sample after the last allowed one (the server answers 413 and the agent
 * splits the batch). */
#define SAMPLE_BODY_MAX_SAMPLES 10000

struct sample_body_err {
	enum sample_body_kind kind;
	size_t sample;			/* for SB_SAMPLE: index in the array (0 for an object) */
	char msg[SAMPLE_ERR_MAX];
	char detail[128];		/* where in the text, when known ("line 3, column 7") */
};

/* Parses buf[0..len) into *out (a malloc'd array of *n samples, NULL when
 * *n is 0; free with sample_body_free). Returns 0, or -1 with e filled and
 * nothing in *out. */
int sample_body_parse(const char *buf, size_t len, int max_depth, struct sample **out,
		      size_t *n, struct sample_body_err *e);
int sample_body_parse_jansson(const char *buf, size_t len, int max_depth, struct sample **out,
			      size_t *n, struct sample_body_err *e);

void sample_body_free(struct sample *s, size_t n);

/* True when no array or object in buf[0..len) nests deeper than max_depth
 * (counted outside strings). A cheap pass before jansson sees the body. */
bool sample_json_depth_ok(const char *buf, size_t len, int max_depth);

/* The object key whose value ends at or spans buf[pos], for naming the field
 * of a number jansson refused. key is "" when there is none (an array
 * element) or it is not plain ASCII. */
void sample_json_key_before(const char *buf, size_t pos, char *key, size_t keylen);

#endif
