/* api_regress.h - the kernel-regression watch's endpoints (docs/api.md
 * "Regression watch"):
 *   GET /api/v1/regression           this server's watch settings, the
 *                                    baseline and the last run's report (a read)
 *   GET /api/v1/regression/baseline  the baseline release: pinned, else the
 *                                    one with the most host-hours (a read)
 *   PUT /api/v1/regression/baseline  {"release": "6.1.0-18"} pins it,
 *                                    {"release": null} unpins (admin token)
 * The PUT body is read whole (at most API_REGRESS_MAX_BODY) before the
 * admin token is checked, as for the overrides. */
#ifndef VMSCOPE_API_REGRESS_H
#define VMSCOPE_API_REGRESS_H

#include <microhttpd.h>
#include <stddef.h>

#include "app.h"

#define API_REGRESS_MAX_BODY 4096

enum MHD_Result api_regression_get(struct request *rq);
enum MHD_Result api_regression_baseline_get(struct request *rq);

/* PUT: first callback, the end (http.c; the data goes to http_upload_data). */
enum MHD_Result api_regression_baseline_put_begin(struct request *rq);
enum MHD_Result api_regression_baseline_put_finish(struct request *rq);

#endif
