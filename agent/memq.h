/* memq.h - samples kept in memory while the spool cannot be written.
 *
 * The spool is where every sample goes first (spool.h). When it cannot
 * take one (its directory or filesystem turned read-only, permission
 * denied, an I/O error, a full disk with nothing older to drop), the
 * sample is kept here instead, so that it is still posted while the
 * server is up, and moved into the spool as soon as the spool takes
 * writes again. Everything in the spool is older than everything here, so
 * delivery drains the spool first and order is kept.
 *
 * Bounded in bytes (MEMQ_MAX_BYTES: ~6 samples of a host with a dozen
 * cgroups; a sample bigger than the bound cannot be kept): the agent's
 * private dirty memory stays under 2 MiB while it is full. When full, the oldest
 * records not in flight go (counted by the caller, like the spool's
 * bound). The buffer is allocated when the first record comes and freed
 * when the last goes: an agent whose spool works holds none of it.
 * Records are one sample's JSON each, without a newline. Single-threaded,
 * one owner.
 */
#ifndef VMSCOPE_AGENT_MEMQ_H
#define VMSCOPE_AGENT_MEMQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEMQ_MAX_BYTES (128u << 10)

struct memq {
	char *buf;		/* owned; records as [uint32 length][bytes], oldest first */
	size_t head, len;	/* live records are buf[head..len) */
	size_t n;		/* records */
	size_t pinned;		/* the first pinned records are in flight: not dropped */
	size_t rec;		/* offset of the record being added, or SIZE_MAX */
	bool rec_failed;	/* it did not fit */
	uint64_t dropped;	/* records dropped to make room, or too big, total */
};

void memq_init(struct memq *q);
void memq_release(struct memq *q);

/* Adding one record in pieces (the writer's flushes): begin, add..., then
 * end, which returns true when the record was kept, false when it could
 * not be (bigger than the bound with what is in flight). Older records
 * dropped to make room, and a record not kept, count in dropped. A
 * trailing '\n' is cut. */
void memq_rec_begin(struct memq *q);
void memq_rec_add(struct memq *q, const char *p, size_t n);
bool memq_rec_end(struct memq *q);
/* Forgets the record being added, uncounted (no sample could be read). */
void memq_rec_cancel(struct memq *q);

bool memq_empty(const struct memq *q);

/* Calls fn for up to max_n records from the oldest, stopping before the
 * one that would bring their length over max_bytes (but at least one).
 * *n receives how many were visited. Returns 0, or -1 when fn failed. */
int memq_peek(const struct memq *q, size_t max_n, size_t max_bytes,
	      int (*fn)(void *ctx, const char *rec, size_t len), void *ctx, size_t *n);

/* Removes the k oldest records (accepted, refused, or moved to the spool). */
void memq_pop(struct memq *q, size_t k);

#endif
