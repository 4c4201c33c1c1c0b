/* metrics_fleet.h - the fleet part of GET /metrics: open alerts as
 * vmscope_alert_active{host,cgroup,kind,severity} 1 and per-host derived
 * reclaim signals (store_host_signals), in the Prometheus text format.
 *
 * Both come from the database, so the text is cached for
 * METRICS_FLEET_TTL_MS and rebuilt by at most one scrape at a time; a
 * scrape every few seconds from several Prometheus servers costs one
 * rebuild per period. */
#ifndef VMSCOPE_METRICS_FLEET_H
#define VMSCOPE_METRICS_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define METRICS_FLEET_TTL_MS 5000
#define METRICS_FLEET_ACTIVE_MS (15 * 60 * 1000)	/* hosts seen this recently get signals */

/* Appends the fleet families to *buf (malloc'd, *len bytes used; grown with
 * realloc) for the store st (NULL: the database was never reached, nothing
 * is appended). On a database error the families are left out and the
 * error logged: the server's own metrics still answer. Returns 0, or -1
 * when out of memory (*buf is then still valid and owned by the caller). */
int metrics_fleet_append(struct store *st, int64_t now_ms, char **buf, size_t *len);

/* Renders the families (no cache) into a malloc'd string; NULL on a
 * database error (err written) or out of memory. For tests. */
char *metrics_fleet_render(struct store *st, int64_t now_ms, char *err, size_t errlen);

/* Escapes a label value (\\, \", \n) into out (cap bytes, truncated). */
void metrics_label_escape(const char *v, char *out, size_t cap);

#endif
