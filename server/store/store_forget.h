/* store_forget.h - forgetting a retired host (DELETE /api/v1/hosts/{host},
 * docs/api.md "Forget a host"): everything stored about it goes in one
 * transaction, so a failure leaves the host whole.
 *
 * Removed: its raw samples (DELETE by host_id on the partitioned table:
 * each partition's primary key starts with host_id, and one host is a small
 * share of a partition), 5-minute rollups, alerts, detector state, cgroups,
 * boots, host_meta (kernel/label history), host-specific detector overrides
 * and the hosts row. The hosts row is locked first, as ingest locks it, so
 * a concurrent ingest of that host waits and then creates the host afresh
 * (an agent still running brings it back: stop it first).
 */
#ifndef VMSCOPE_STORE_FORGET_H
#define VMSCOPE_STORE_FORGET_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* What was removed, row counts. */
struct forget_counts {
	int64_t samples, rollups, alerts, cgroups, meta, overrides;
};

/* Returns STORE_OK with *n filled, STORE_ENOTFOUND when no host of that
 * name was ever stored (nothing changed), or STORE_EUNAVAIL /
 * STORE_EINTERNAL with err written (rolled back). */
int store_forget_host(struct store *st, const char *host, struct forget_counts *n, char *err,
		      size_t errlen);

#endif
