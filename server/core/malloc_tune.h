/* malloc_tune.h - glibc malloc thresholds for a server that builds large
 * answers (see malloc_tune.c). */
#ifndef VMSCOPE_MALLOC_TUNE_H
#define VMSCOPE_MALLOC_TUNE_H

/* Called once at start, before any thread exists (and so before any
 * large allocation). Leaves glibc's defaults
 * alone when the operator set MALLOC_ARENA_MAX, MALLOC_TRIM_THRESHOLD_,
 * MALLOC_MMAP_THRESHOLD_ or GLIBC_TUNABLES. */
void malloc_tune(void);

#endif
