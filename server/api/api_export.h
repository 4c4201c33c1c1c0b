/* api_export.h - GET /api/v1/hosts/{host}/samples: a host's stored samples
 * as JSON lines in the contract format (docs/api.md), streamed with chunked
 * transfer encoding so that a long range is never built in memory. */
#ifndef VMSCOPE_API_EXPORT_H
#define VMSCOPE_API_EXPORT_H

#include <microhttpd.h>
#include <stdint.h>

#include "app.h"
#include "params.h"

#define EXPORT_MAX_RANGE_MS (31LL * 86400 * 1000)	/* one request: at most 31 days */
#define EXPORT_MAX_LIMIT 1000000			/* samples in one answer */

struct export_query {
	int64_t since_ms, until_ms;
	long limit;		/* at most this many samples */
};

/* since (default until - 1 h), until (default now_ms), limit (default and
 * at most EXPORT_MAX_LIMIT). Times are Unix seconds or RFC 3339. Returns 0,
 * or -1 with err naming the parameter. */
int params_export(const struct param_src *src, int64_t now_ms, struct export_query *q,
		  char *err, size_t errlen);

enum MHD_Result api_export(struct request *rq);

#endif
