/* fnv.h - the FNV-1a hash of a byte string, for the server's in-memory
 * hash tables (names, budgets, admission). Not for anything an attacker
 * must not be able to collide cheaply: the tables it serves are bounded. */
#ifndef VMSCOPE_FNV_H
#define VMSCOPE_FNV_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

#endif
