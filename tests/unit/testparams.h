/* testparams.h - a param_src (params.h) over a NULL-terminated list of
 * "name", "value" pairs, for the tests of the query-parameter parsers.
 * Header-only like testdb.h. */
#ifndef VMSCOPE_TESTPARAMS_H
#define VMSCOPE_TESTPARAMS_H

#include "params.h"

#include <string.h>

struct kv {
	const char *const *pairs;	/* name, value, name, value, ..., NULL */
};

static inline const char *kv_get(void *ctx, const char *name, size_t *len)
{
	struct kv *kv = ctx;

	for (size_t i = 0; kv->pairs[i]; i += 2)
		if (strcmp(kv->pairs[i], name) == 0) {
			*len = strlen(kv->pairs[i + 1]);
			return kv->pairs[i + 1];
		}
	return NULL;
}

#endif
