/* api_fleet.h - GET /api/v1/fleet (docs/api.md "Fleet"): one call for the
 * dashboard's fleet view, composed from store_hosts, the open alerts
 * (store_alerts) and every host's sparklines from the 5-minute rollups
 * (store_fleet_sparks), one query each. */
#ifndef VMSCOPE_API_FLEET_H
#define VMSCOPE_API_FLEET_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdint.h>

#include "app.h"

enum MHD_Result api_fleet(struct request *rq);

/* Reclaim efficiency per bucket from the four downsampled rate series
 * (points [ts, avg, ...]): (steal_kswapd + steal_direct) / (scan_kswapd +
 * scan_direct), null when nothing was scanned, clamped to 0..1. Any input
 * may be NULL (no such counter). Returns a new array of [ts, value|null],
 * sorted by ts, or NULL when out of memory. */
json_t *fleet_efficiency(const json_t *steal_k, const json_t *steal_d, const json_t *scan_k,
			 const json_t *scan_d);

#endif
