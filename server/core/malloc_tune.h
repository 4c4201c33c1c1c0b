/* malloc_tune.h - glibc malloc thresholds for a server that builds large
 * answers (see malloc_tune.c). */
#ifndef VMSCOPE_MALLOC_TUNE_H
#define VMSCOPE_MALLOC_TUNE_H

/* Called once at start, before any thread exists (and so before any
 * large allocation). Leaves glibc's defaults
 * alone when the operator set MALLOC_ARENA_MAX, MALLOC_TRIM_THRESHOLD_,
 * MALLOC_MMAP_THRESHOLD_ or GLIBC_TUNABLES. */
void malloc_tune(void);

/* Hands the calling thread's freed memory back to the kernel, after work
 * that allocated megabytes on it (the parse of a large body): without
 * this, each of glibc's per-thread arenas keeps up to the trim threshold
 * malloc_tune set free at its top, and the resident size creeps up to the
 * sum of every arena's peak rather than what is in use. Costs a few
 * system calls; call it after megabyte-sized work, not per request. */
void malloc_give_back(void);

#endif
