/* dict.h - the process-wide dictionary of metric names.
 *
 * Every numeric field of a sample is a flattened name ("vmstat.pgscan_kswapd",
 * "psi.memory.some.avg10", "stat.workingset_refault_file") mapped to a small
 * integer id, so samples carry (id, value) pairs instead of strings and
 * detectors compare integers. Ids are dense, start at 1, and are never
 * reused within a process. The dictionary is thread-safe.
 *
 * The number of names is capped (DICT_MAX_NAMES) so that a hostile client
 * inventing counter names cannot grow server memory without bound.
 */
#ifndef VMSCOPE_DICT_H
#define VMSCOPE_DICT_H

#include <stddef.h>
#include <stdint.h>

#define DICT_MAX_NAMES 65536

/* Returns the id of name[0..len), adding it when new. Returns 0 when the
 * dictionary is full or memory ran out; the caller refuses the field. */
uint32_t dict_intern(const char *name, size_t len);

/* Returns the id of a NUL-terminated name, or 0 when it was never interned. */
uint32_t dict_lookup(const char *name);

/* Returns the name of id (borrowed: valid for the life of the process), or
 * NULL for an unknown id. */
const char *dict_name(uint32_t id);

/* Number of names interned so far (the highest id). */
uint32_t dict_count(void);

#endif
