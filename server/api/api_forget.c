/* api_forget.c - DELETE /api/v1/hosts/{host} (see api_forget.h). */
#include "api_forget.h"

#include <jansson.h>

#include "admin.h"
#include "log.h"
#include "respond.h"
#include "store_forget.h"

enum MHD_Result api_host_forget(struct request *rq)
{
	struct store *st = app_store(rq->app);
	struct forget_counts n;
	char err[512];

	if (!admin_allowed(rq))
		return MHD_YES;
	if (!st)
		return respond_unavailable(rq);
	int rc = store_forget_host(st, rq->route.host, &n, err, sizeof(err));
	if (rc == STORE_ENOTFOUND)
		return respond_error(rq, 404, "no such host", rq->route.host,
				     "GET /api/v1/hosts lists the hosts");
	if (rc != STORE_OK)
		return respond_store_error(rq, rc, err);
	log_info("host %s forgotten: %lld samples, %lld rollups, %lld alerts, %lld cgroups", rq->route.host,
		 (long long)n.samples, (long long)n.rollups, (long long)n.alerts, (long long)n.cgroups);
	return respond_json(rq, 200, json_pack("{s:s,s:{s:I,s:I,s:I,s:I,s:I,s:I}}", "host", rq->route.host,
					       "deleted", "samples", (json_int_t)n.samples,
					       "rollups", (json_int_t)n.rollups,
					       "alerts", (json_int_t)n.alerts,
					       "cgroups", (json_int_t)n.cgroups,
					       "meta", (json_int_t)n.meta,
					       "overrides", (json_int_t)n.overrides));
}
