/* overrides_store.h - the detector_overrides table (050_overrides.sql):
 * read by the detector engine inside each ingest transaction, written by
 * the admin API (api_overrides.c).
 *
 * Every function works on a connection the caller owns. Errors: 0 on
 * success, -1 with a short message in err ("could not read overrides:
 * ..."); the caller decides whether the connection broke (PQstatus).
 * ovr_store_load fills a set the caller releases with ovr_set_release.
 */
#ifndef VMSCOPE_OVERRIDES_STORE_H
#define VMSCOPE_OVERRIDES_STORE_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "overrides.h"

/* Every rule, by id. A row that does not parse (edited by hand into
 * something this build refuses) is skipped and logged, never fatal: the
 * detectors must keep running. Usable inside a transaction or outside. */
int ovr_store_load(PGconn *c, struct ovr_set *set, char *err, size_t errlen);

/* Replaces every rule with set's, in one transaction of its own (the
 * caller's connection must be idle). Ids are assigned anew. */
int ovr_store_replace(PGconn *c, const struct ovr_set *set, char *err, size_t errlen);

/* Deletes rule id. Returns 1 when deleted, 0 when there was none, -1 on error. */
int ovr_store_delete(PGconn *c, int64_t id, char *err, size_t errlen);

/* Moves detector_overrides_version on (060_overrides_version.sql): every
 * writer of detector_overrides runs it in the same transaction, so that
 * servers caching the rules read them again. */
#define OVR_BUMP_SQL "UPDATE detector_overrides_version SET v = v + 1"

#endif
