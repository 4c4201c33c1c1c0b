/* api_compare.h - GET /api/v1/compare (docs/api.md "Compare"): the groups
 * of hosts present in a window (by kernel release or by a label), or two
 * groups compared figure by figure (compare.h) from the 5-minute rollups.
 * Parameters are validated by compare_params (400 naming the parameter). */
#ifndef VMSCOPE_API_COMPARE_H
#define VMSCOPE_API_COMPARE_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "app.h"
#include "params.h"

#define COMPARE_MAX_WINDOW_MS (31LL * 86400 * 1000)
#define COMPARE_DEFAULT_WINDOW_MS (24LL * 3600 * 1000)
#define COMPARE_MAX_FILTERS 16

/* The request, strings borrowed from the request. */
struct compare_params {
	const char *label_key;	/* group_by=label:KEY; NULL for group_by=kernel */
	size_t label_key_len;
	const char *a, *b;	/* both NULL: list the groups */
	int64_t since_ms, until_ms;
	size_t nfilter;		/* label=KEY:VALUE filters */
	const char *fkey[COMPARE_MAX_FILTERS], *fval[COMPARE_MAX_FILTERS];
	size_t fkey_len[COMPARE_MAX_FILTERS];
};

/* Validates group_by, a, b, since, until (Unix ms or s, or RFC 3339; a
 * number of at least 10^11 is read as milliseconds) and the label filters
 * labels[0..nlabels) ("KEY:VALUE"). now_ms is the default until; since
 * defaults to until - 24 h. 0, or -1 with err naming the parameter. */
int compare_params(const struct param_src *src, const char *const *labels, size_t nlabels,
		   int64_t now_ms, struct compare_params *p, char *err, size_t errlen);

enum MHD_Result api_compare(struct request *rq);

#endif
