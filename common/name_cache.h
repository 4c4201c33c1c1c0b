/* name_cache.h - a per-thread memo of the dictionary ids of flattened names,
 * so that parsing a sample rarely hashes or locks (dict.h).
 *
 * Why: agents send the same keys in the same order every time, and every
 * cgroup's memory.stat has the same keys as the others; interning ~1,500
 * names per 20-cgroup sample (copy prefix + key, FNV hash, a read lock,
 * probe, compare) was 15% of the parse (callgrind). Here the k-th key of a
 * map of a given kind remembers the name and id it had last time on this
 * thread, and a key is taken from the memo after one comparison. A miss
 * interns as before and updates the memo. Ids are never reused within a
 * process (dict.h), so a remembered id never goes stale.
 *
 * Thread-local: no locking, and each server thread keeps the layout of the
 * samples it parsed last. Not a cache of answers: a slot only saves the
 * lookup of a name that is compared byte for byte first.
 */
#ifndef VMSCOPE_NAME_CACHE_H
#define VMSCOPE_NAME_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Kinds of name -> integer maps of a sample (which prefix their names get). */
enum nc_map {
	NC_VMSTAT, NC_MEMINFO, NC_SETTINGS,	/* host level */
	NC_CG_STAT, NC_CG_EVENTS, NC_CG_SETTINGS,	/* cgroup level */
	NC_AGENT,					/* host level: the agent's own counters */
	NC_NMAPS
};

#define NC_POSITIONS 512	/* keys per map remembered; later ones are interned each time */
#define NC_KEYMAX 42		/* longer keys are interned each time */
#define NC_NFIXED 64		/* fixed names (PSI fields, cgroup scalars, meta.*) */

struct nc_slot {
	uint32_t id;		/* 0: empty */
	uint8_t len;
	char key[NC_KEYMAX + 1];
};

extern __thread struct nc_slot nc_slots_[NC_NMAPS][NC_POSITIONS];	/* name_cache.c */

/* The slot of the pos-th key of a map of kind map on this thread, NULL when
 * pos is past NC_POSITIONS. */
static inline struct nc_slot *nc_slot(enum nc_map map, uint32_t pos)
{
	if ((unsigned)map >= NC_NMAPS || pos >= NC_POSITIONS)
		return NULL;
	return &nc_slots_[map][pos];
}

/* The remembered id when slot s holds exactly key[0..len), else 0. */
static inline uint32_t nc_hit(const struct nc_slot *s, const char *key, size_t len)
{
	if (!s || !s->id || s->len != len || memcmp(s->key, key, len) != 0)
		return 0;
	return s->id;
}

/* Remembers key[0..len) -> id in s (nothing when s is NULL, id is 0 or the
 * key is longer than NC_KEYMAX). */
void nc_store(struct nc_slot *s, const char *key, size_t len, uint32_t id);

/* The id of a name that never changes (a string literal), fixed index idx
 * < NC_NFIXED chosen by the caller: interned once per thread. 0 when the
 * dictionary is full (then tried again next time). */
uint32_t nc_fixed(unsigned idx, const char *name, size_t len);

#endif
