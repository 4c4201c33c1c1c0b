/* malloc_tune.c - no give-back of every large answer's memory.
 *
 * Why: a fleet answer (0.5-13 MB of JSON, a PGresult of similar size) is
 * built on whichever of the HTTP threads took the request. With glibc's
 * defaults (a dynamic mmap threshold starting at 128 KiB, a heap trimmed
 * once 128 KiB lie free at its top) nearly every such answer took fresh
 * pages from the kernel and gave them back: perf of the server answering
 * `GET /api/v1/fleet?window=3600` in a loop showed ~55% of its CPU in
 * sysmalloc and the page faults behind it. 32 MiB thresholds keep that
 * memory for the next answer: 105 -> 63-73 ms of server CPU per 1,000-host
 * fleet answer (docs/scaling.md). The cost is bounded: each arena keeps at
 * most 32 MiB free at its top. Fewer arenas (M_ARENA_MAX 2) cut the fleet
 * answer to 36 ms but cost ingest ~18% more server CPU in an A/B
 * (lock waits between the HTTP threads), so the arena count stays glibc's. */
#include "malloc_tune.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#define KEEP_BYTES (32 * 1024 * 1024)

static atomic_bool tuned;

void malloc_tune(void)
{
	if (getenv("MALLOC_ARENA_MAX") || getenv("MALLOC_TRIM_THRESHOLD_") ||
	    getenv("MALLOC_MMAP_THRESHOLD_") || getenv("GLIBC_TUNABLES"))
		return;	/* the operator's choice stands */
	/* failures leave glibc's default for that setting: nothing to undo */
	(void)mallopt(M_TRIM_THRESHOLD, KEEP_BYTES);
	(void)mallopt(M_MMAP_THRESHOLD, KEEP_BYTES);
	atomic_store(&tuned, true);
}

/* malloc_trim gives back free pages inside every arena's bins, but the
 * free space at the top of a thread's own arena is only returned by
 * free() itself, and only past the trim threshold. So: lower the threshold
 * for a moment, free a block big enough to make free() trim this thread's
 * arena, and restore it. Other threads freeing meanwhile may trim too,
 * which costs them a system call, nothing more. */
void malloc_give_back(void)
{
	if (atomic_load(&tuned)) {
		/* volatile: a compiler may drop a malloc whose block is only freed */
		void *volatile block;

		(void)mallopt(M_TRIM_THRESHOLD, 128 * 1024);
		block = malloc(256 * 1024);
		free(block);
		(void)mallopt(M_TRIM_THRESHOLD, KEEP_BYTES);
	}
	malloc_trim(0);
}
