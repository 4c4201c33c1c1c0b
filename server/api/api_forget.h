/* api_forget.h - DELETE /api/v1/hosts/{host} (docs/api.md "Forget a host"):
 * removes a retired host and everything stored about it (store_forget.h).
 * Admin token (admin.h): 401 without a token, 403 with another token or
 * when the server has no --admin-token-file; 404 for a host never stored;
 * 200 {"host","deleted":{"samples","rollups","alerts","cgroups",
 * "meta","overrides"}} when done. */
#ifndef VMSCOPE_API_FORGET_H
#define VMSCOPE_API_FORGET_H

#include <microhttpd.h>

#include "app.h"

enum MHD_Result api_host_forget(struct request *rq);

#endif
