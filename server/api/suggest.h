/* suggest.h - "did you mean": the names closest to one that is not known,
 * for the 404 of a series of a metric a host never reported (docs/api.md
 * "Series"). Pure: no I/O, no allocation but the caller's arrays. */
#ifndef VMSCOPE_SUGGEST_H
#define VMSCOPE_SUGGEST_H

#include <stddef.h>

#define SUGGEST_MAX 5

/* Fills out[0..k) with up to max (at most SUGGEST_MAX) of names[0..n)
 * closest to want, closest first (ties by name), and returns k. A name is
 * close when its edit distance to want is at most a third of want's length
 * (at least 2), or when one of the two contains the other (a prefix family:
 * vmstat.workingset_refault for vmstat.workingset_refault_file). out
 * borrows from names. Names longer than 255 bytes are skipped. */
size_t suggest_names(const char *want, const char *const *names, size_t n, const char **out, size_t max);

#endif
