/* urlenc.h - percent-encoding for the links the server writes (notification
 * generator URLs, the kernel-regression watch's compare links): host
 * names, cgroup paths and kernel releases go into query strings safely.
 * Pure; cannot fail. */
#ifndef VMSCOPE_URLENC_H
#define VMSCOPE_URLENC_H

#include <stddef.h>

/* Appends s to out at offset at, percent-encoding every byte outside the
 * unreserved set of RFC 3986 (A-Z a-z 0-9 - . _ ~), and NUL-terminates.
 * What does not fit in cap is dropped (never a partial %XX): callers size
 * out with 3 * strlen(s) to spare. Returns the new offset. */
size_t urlenc_append(char *out, size_t cap, size_t at, const char *s);

#endif
