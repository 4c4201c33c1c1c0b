/* spool.h - the on-disk queue of samples not yet accepted by the server.
 *
 * Every sample is appended to the spool before any attempt to send it, so
 * a sample survives a network outage, a server outage and an agent crash or
 * restart (written data is in the page cache: a process crash loses none).
 * Durability against power loss (fdatasync) is the caller's call, through
 * spool_sync: a sample the server accepts within its cycle never needs it,
 * one that stays unsent is synced (main.c). Layout of the directory:
 *
 *   seg-<20-digit sequence>   append-only segment files, one JSON sample a
 *                             line ('\n'-terminated; a torn last line left
 *                             by a crash is cut off at open)
 *   head                      "<seq> <offset>\n": the first unsent record,
 *                             fixed width, overwritten in place with one
 *                             pwrite (atomic for a process crash); not
 *                             synced but at close: after a power loss an
 *                             older head only means re-posting samples the
 *                             server counts as duplicates
 *   lock                      flock'ed: one agent per spool
 *
 * The spool is bounded by max_bytes (all segment bytes). When a new sample
 * pushes it over, whole oldest segments are deleted, so the newest samples
 * are kept; the number of samples lost that way is counted (and the caller
 * logs it). Segments are about max_bytes/8, which bounds what one drop
 * loses. Segments holding records of the request in flight (pinned) are
 * not dropped: the bound may be exceeded by one batch until the answer
 * comes. The spool is single-threaded: one struct, one owner.
 */
#ifndef VMSCOPE_AGENT_SPOOL_H
#define VMSCOPE_AGENT_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spool_pos {
	uint64_t seq, off;	/* segment and byte offset in it */
};

struct spool_seg {
	uint64_t seq, size;
};

struct spool {
	int dirfd, lockfd;
	char *dir;		/* owned */
	uint64_t max_bytes, seg_target;
	struct spool_seg *segs;	/* owned, oldest first */
	size_t nsegs, cap;
	uint64_t total;		/* bytes in all segments */
	struct spool_pos head;	/* first record not yet accepted */
	int cur_fd;		/* append descriptor of the newest segment, or -1 */
	int headfd;		/* "head", kept open for in-place rewrites, or -1 */
	bool unsynced;		/* records of cur_fd not yet fdatasync'ed and not
				 * yet accepted (up to unsynced_end) */
	struct spool_pos unsynced_end;
	uint64_t syncs;		/* fdatasync calls of segments, total */
	uint64_t rec_start;	/* offset of the record being appended */
	uint64_t dropped;	/* samples deleted because the spool was full, total */
	bool pinned;		/* records before pin are in flight: not dropped */
	struct spool_pos pin;
	size_t pin_n;		/* how many records are in flight */
	uint64_t pending_n;	/* records not yet accepted (lost with the directory) */
	uint64_t gen_seq;	/* segments before this one went with a removed directory */
	uint64_t orphan_n;	/* records of those in flight: counted lost unless accepted */
	uint64_t lost_removed;	/* records lost because the directory was removed, total */
	bool readonly;		/* opened without write access: appends fail until it has it */
	bool abort_failing, head_failing, dir_failing;	/* said once until it works again */
};

/* Opens (creating it, mode 0700) the spool directory, takes its lock,
 * recovers from a crash (cuts a torn last record, drops segments before the
 * head). Returns 0, or -1 with a message in err. A directory that exists
 * but cannot be written (a read-only filesystem, permission denied) is
 * opened read-only: s->readonly is set and err says why; its unsent
 * records are delivered, appends fail (the caller keeps samples in
 * memory) until the directory takes writes, and the lock is taken then. */
int spool_open(struct spool *s, const char *dir, uint64_t max_bytes, char *err, size_t errlen);

/* Syncs what is unsent and the head, closes descriptors, frees memory; the
 * files stay. */
void spool_close(struct spool *s);

/* Starts appending a record: returns the descriptor to write it to (the
 * caller writes the JSON and a '\n'), or -1 with errno set. */
int spool_append_begin(struct spool *s);

/* Ends the record written since spool_append_begin (it is in the page
 * cache, not yet synced: see spool_sync) and enforces the size bound.
 * Returns the number of old samples dropped to make room (>= 0), or -1 when
 * the segment's size could not be read (the record is then cut off again). */
long spool_append_commit(struct spool *s);

/* Makes the appended records durable (fdatasync of the newest segment) when
 * some are neither synced nor accepted yet. Returns 0, or -1 (logged; the
 * records stay spooled, in the page cache). */
int spool_sync(struct spool *s);

/* Deletes the oldest segment that is not in flight (the filesystem is
 * full: ENOSPC), counting its unsent records as dropped. Returns the number
 * dropped (>= 0), or -1 when nothing can be deleted. */
long spool_drop_oldest(struct spool *s);

/* Cuts off a partly written record (a write failed). */
void spool_append_abort(struct spool *s);

/* True when every record has been accepted. */
bool spool_empty(const struct spool *s);

/* The position just after the newest record ({0, 0} when there is no
 * segment), and where the record being appended starts. */
struct spool_pos spool_end(const struct spool *s);
struct spool_pos spool_rec_start(const struct spool *s);

/* Orders positions: <0, 0, >0 as a is before, at or after b. */
int spool_pos_cmp(struct spool_pos a, struct spool_pos b);

/* Bytes of records not yet accepted. */
uint64_t spool_pending_bytes(const struct spool *s);

/* Called with each record (without its '\n'); the bytes are valid only
 * during the call. Returns 0, or -1 to stop with an error. */
typedef int (*spool_rec_fn)(void *ctx, const char *rec, size_t len);

/* Visits up to max_n records from the head, stopping before the one that
 * would bring the sum of lengths over max_bytes (but always at least one).
 * ends[i] receives the position just after record i; *n the number visited;
 * *bytes their total length. fn may be NULL (to measure). Returns 0, or -1
 * when a segment could not be read or fn failed. */
int spool_peek(struct spool *s, size_t max_n, size_t max_bytes, spool_rec_fn fn, void *ctx,
	       struct spool_pos *ends, size_t *n, size_t *bytes);

/* Marks everything before pos (n records) as accepted (or refused and
 * dropped): moves the head, persists it, deletes segments left behind. A
 * pos at or before the head is a no-op (its records were dropped
 * meanwhile). Returns 0, or -1 when the head could not be persisted (it is
 * still moved in memory). */
int spool_ack(struct spool *s, struct spool_pos pos, size_t n);

/* When the spool directory was removed while the agent ran (its
 * descriptor has no link left), its unsent records are gone: counts them
 * in lost_removed, forgets the segments and creates the directory again.
 * Returns the number of records lost now (0: the directory is there).
 * spool_append_begin and spool_peek call it. */
uint64_t spool_check_removed(struct spool *s);

#endif
