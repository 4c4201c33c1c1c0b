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
 *
 * Staging: a request's new names must not enter the dictionary before the
 * request is accepted, or one refused request could fill it for everyone.
 * While a thread has a stage (dict_stage_begin), dict_intern on that thread
 * puts a name the dictionary does not know into the stage instead and
 * returns a staged id (DICT_STAGED_BIT set, never stored anywhere else);
 * the caller commits the stage (every name enters, or none when the
 * dictionary is full) and maps its staged ids to real ones, or releases it
 * and nothing of it remains.
 */
#ifndef VMSCOPE_DICT_H
#define VMSCOPE_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DICT_MAX_NAMES 65536

/* Returns the id of name[0..len), adding it when new. Returns 0 when the
 * dictionary is full or memory ran out; the caller refuses the field.
 * While this thread stages (dict_stage_begin), a new name goes to the
 * stage and its staged id is returned (0 when the stage is full). */
uint32_t dict_intern(const char *name, size_t len);

/* Returns the id of a NUL-terminated name, or 0 when it was never interned. */
uint32_t dict_lookup(const char *name);

/* Returns the name of id (borrowed: valid for the life of the process), or
 * NULL for an unknown id. A staged id is looked up in this thread's stage
 * (valid while the stage is). */
const char *dict_name(uint32_t id);

/* Number of names interned so far (the highest id). */
uint32_t dict_count(void);

#define DICT_STAGED_BIT 0x80000000u

/* The new names of one request, in order of first appearance. Owned by the
 * caller (usually on its stack): dict_stage_init, then
 * dict_stage_release. */
struct dict_stage {
	char **names;		/* owned copies; staged id k+1 is names[k] */
	uint32_t *len;		/* their lengths */
	uint32_t *real;		/* after dict_stage_commit: the real id of names[k] */
	uint32_t *slot;		/* open-addressing index into names (k+1; 0 empty) */
	uint32_t n, cap, nslot;
	uint32_t max;		/* names it takes; past it dict_intern returns 0 */
	bool over;		/* a name was refused for max */
};

/* An empty stage taking at most max names. Cannot fail. */
void dict_stage_init(struct dict_stage *st, uint32_t max);

/* From now on dict_intern on this thread stages unknown names into st,
 * until dict_stage_end. st must outlive the staging. */
void dict_stage_begin(struct dict_stage *st);
void dict_stage_end(void);

/* True for an id returned while staging for a name not yet committed. */
static inline bool dict_id_staged(uint32_t id)
{
	return (id & DICT_STAGED_BIT) != 0;
}

/* The name of staged id of st, NULL when it is not one of st's. */
const char *dict_stage_name(const struct dict_stage *st, uint32_t id);

/* Interns every staged name. Returns 0 (then dict_stage_real maps the
 * staged ids), or -1 when they do not all fit in the dictionary (none was
 * added) or memory ran out. */
int dict_stage_commit(struct dict_stage *st);

/* The real id of a staged id after a commit (0 when unknown). An id that
 * is not staged is returned as it is. */
uint32_t dict_stage_real(const struct dict_stage *st, uint32_t id);

/* Frees what st holds (safe after init, commit or neither). */
void dict_stage_release(struct dict_stage *st);

#endif
