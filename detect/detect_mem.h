/* detect_mem.h - the detector engine over many hosts, entirely in memory:
 * what bin/vmscope-replay and the unit tests run. Alerts are kept in a list
 * with sequential ids (1, 2, ...) in the order they opened.
 *
 * Ownership: detect_mem_new returns an object freed with detect_mem_free;
 * alerts returned by detect_mem_alert are borrowed from it.
 */
#ifndef VMSCOPE_DETECT_MEM_H
#define VMSCOPE_DETECT_MEM_H

#include <jansson.h>
#include <stddef.h>

#include "alert_json.h"
#include "sample.h"

struct detect_mem;

struct detect_mem *detect_mem_new(void);
void detect_mem_free(struct detect_mem *m);

/* Feeds one sample (any host). Returns 1 fed, 0 skipped (not newer than the
 * host's last sample), -1 out of memory. */
int detect_mem_feed(struct detect_mem *m, const struct sample *s);

/* Uses these operator overrides (overrides.h) for every later feed, as the
 * server does with its table. ovr is borrowed: it must outlive m's feeds. */
struct ovr_set;
void detect_mem_set_overrides(struct detect_mem *m, const struct ovr_set *ovr);

/* Saves and reloads every host's state through det_host_save/load, as a
 * server restart would. Returns 0 or -1. */
int detect_mem_roundtrip(struct detect_mem *m);

size_t detect_mem_count(const struct detect_mem *m);
const struct alert_rec *detect_mem_alert(const struct detect_mem *m, size_t i);

/* {"alerts":[...]} newest started_at first (then highest id): a new reference. */
json_t *detect_mem_alerts_json(const struct detect_mem *m);

#endif
