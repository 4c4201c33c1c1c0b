/* sample.h - the in-memory model of one sample (CONTRACT.md §1).
 *
 * A sample is flattened into (metric id, int64) pairs so that storage,
 * detectors and replay all work on one compact shape. The flattened names
 * (interned in dict.h) are:
 *
 * host level, struct sample.m:
 *   vmstat.<key>                     /proc/vmstat value (pages or events)
 *   meminfo.<key>                    /proc/meminfo value as printed (kB, or a count)
 *   psi.<memory|io|cpu>.<some|full>.<avg10|avg60|avg300>
 *                                    percentage x 100 (centi-percent), the
 *                                    kernel's own 2-decimal precision
 *   psi.<res>.<some|full>.total      microseconds of stall
 *   settings.<name>                  e.g. settings.vm.swappiness
 *   meta.page_size, meta.interval_ms, meta.mglru (0/1)
 *
 * cgroup level, struct cgsample.m:
 *   stat.<key>                       memory.stat as printed (bytes / events)
 *   events.<key>                     v2 memory.events
 *   psi.<some|full>.<avg10|avg60|avg300|total>  as above
 *   memory_current, memory_max, swap_current
 *   settings.<name>                  e.g. settings.memory.high
 *
 * A field present as JSON null (memory_max "max", swap_current without memsw
 * accounting) holds SAMPLE_NULL. Strings (host, boot_id, kernel,
 * agent_version, labels, cgroup path) are kept beside the pairs.
 *
 * Precision kept: ts to the millisecond (the contract's identity), PSI
 * averages to 0.01, interval_s to the millisecond. Everything else exactly.
 */
#ifndef VMSCOPE_SAMPLE_H
#define VMSCOPE_SAMPLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "names.h"

#define SAMPLE_NULL INT64_MIN

/* Limits on what one sample may hold; over them the sample is refused. */
#define SAMPLE_MAX_FIELDS 4096		/* per scope (host or one cgroup) */
#define SAMPLE_MAX_CGROUPS 2000
#define SAMPLE_MAX_LABELS 64
#define SAMPLE_MAX_STRING 256		/* boot_id, kernel, agent_version, label values */

struct sfield {
	uint32_t id;	/* dict id of the flattened name */
	int64_t v;	/* value, or SAMPLE_NULL */
};

/* A set of fields sorted by id (after sset_sort), no duplicate ids. */
struct sset {
	struct sfield *f;	/* owned */
	size_t n, cap;
};

struct cgsample {
	char *path;		/* owned; valid cgroup path */
	int version;		/* 1 or 2 */
	struct sset m;
};

struct sample {
	char host[HOST_NAME_MAXLEN + 1];
	int64_t ts_ms;		/* Unix milliseconds */
	char *boot_id;		/* owned, NULL when absent */
	char *kernel;		/* owned, NULL when absent */
	char *agent_version;	/* owned, NULL when absent */
	json_t *labels;		/* owned reference to an object of strings, NULL when absent */
	struct sset m;
	struct cgsample *cg;	/* owned array */
	size_t ncg, cgcap;
};

/* Zero-initialise. Cannot fail. */
void sample_init(struct sample *s);

/* Frees everything the sample owns and re-initialises it. */
void sample_release(struct sample *s);

/* Adds (id, v) to a set. Returns 0, or -1 when out of memory or the set is
 * at SAMPLE_MAX_FIELDS. Call sset_sort before lookups. */
int sset_add(struct sset *m, uint32_t id, int64_t v);

/* Sorts by id. Returns -1 when an id occurs twice, else 0. */
int sset_sort(struct sset *m);

/* Finds id in a sorted set: returns 1 and stores the value in *v (which may
 * be SAMPLE_NULL) when present, 0 when absent. */
int sset_get(const struct sset *m, uint32_t id, int64_t *v);

void sset_release(struct sset *m);

/* Appends an empty cgroup entry taking ownership of path (malloc'd).
 * Returns it, or NULL when out of memory or over SAMPLE_MAX_CGROUPS (path is
 * freed then). */
struct cgsample *sample_add_cgroup(struct sample *s, char *path, int version);

/* Finds a cgroup entry by path and version, NULL when absent. */
const struct cgsample *sample_find_cgroup(const struct sample *s, const char *path, int version);

struct dict_stage;

/* Replaces the staged ids (dict.h) among s's fields by the ids the
 * committed stage st gave them, and sorts the sets again. Returns 0, or -1
 * when a staged id has no committed id (st was not committed). */
int sample_commit_staged(struct sample *s, const struct dict_stage *st);

/* Deep copy; returns 0 or -1 when out of memory (dst is left released). */
int sample_copy(struct sample *dst, const struct sample *src);

/* --- JSON (sample_json.c) --- */

/* Room for a field path plus a message; longer ones are truncated. */
#define SAMPLE_ERR_MAX 512

/* Validates and converts one contract-format sample object. Unknown keys are
 * ignored. Returns 0 on success. On error returns -1, releases s, and writes
 * "<field path>: <what was expected>" into err, e.g.
 * "vmstat.pgpgin: expected an integer from 0 to 2^63-1" or
 * "cgroups[3].path: expected a cgroup path (...)".
 * Does not check ts against a clock (the server does). */
int sample_from_json(struct sample *s, const json_t *obj, char err[SAMPLE_ERR_MAX]);

/* Builds the contract-format object of a sample: a new reference, NULL when
 * out of memory. Serialise it with json_dumps(o, JSON_COMPACT |
 * JSON_REAL_PRECISION(15)) so that ts and PSI averages print as sent. */
json_t *sample_to_json(const struct sample *s);

#endif
