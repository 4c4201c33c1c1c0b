/* api_read.h - the read endpoints of docs/api.md: health, the server's own
 * metrics, hosts, cgroups, metric names, series and alerts. Each validates
 * its parameters (400 naming the parameter), asks the store, and answers
 * JSON; 503 while the database is unreachable. */
#ifndef VMSCOPE_API_READ_H
#define VMSCOPE_API_READ_H

#include <microhttpd.h>

#include "app.h"
#include "params.h"

enum MHD_Result api_healthz(struct request *rq);
enum MHD_Result api_metrics(struct request *rq);
enum MHD_Result api_hosts(struct request *rq);
enum MHD_Result api_host(struct request *rq);
enum MHD_Result api_cgroups(struct request *rq);
enum MHD_Result api_host_metrics(struct request *rq);
enum MHD_Result api_series(struct request *rq);
enum MHD_Result api_series_batch(struct request *rq);
enum MHD_Result api_alerts(struct request *rq);

/* A param_src reading the request's query string. */
struct param_src api_params(struct request *rq);

#endif
