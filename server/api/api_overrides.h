/* api_overrides.h - /api/v1/overrides (docs/api.md "Detector overrides"):
 *   GET     the rules, {"overrides":[...]} by id (a read: --read-token)
 *   PUT     replaces every rule with the body's {"overrides":[...]}, all or
 *           nothing (admin token); answers the stored set
 *   DELETE /api/v1/overrides/{id}  removes one rule (admin token)
 * The body of PUT is read whole (at most API_OVERRIDES_MAX_BODY) before
 * the admin token is checked, so a refusal is always answered rather than
 * cut off by a connection reset. */
#ifndef VMSCOPE_API_OVERRIDES_H
#define VMSCOPE_API_OVERRIDES_H

#include <microhttpd.h>
#include <stddef.h>

#include "app.h"

#define API_OVERRIDES_MAX_BODY (4u << 20)

enum MHD_Result api_overrides_get(struct request *rq);
enum MHD_Result api_override_delete(struct request *rq);

/* PUT: first callback, the end (http.c; the data goes to http_upload_data). */
enum MHD_Result api_overrides_put_begin(struct request *rq);
enum MHD_Result api_overrides_put_finish(struct request *rq);

#endif
