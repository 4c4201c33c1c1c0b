/* dict.c - metric-name interning: an open-addressing hash table guarded by a
 * read-write lock. Lookups (the common case once a fleet's names are known)
 * only take the read lock. */
#include "dict.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct dict_entry {
	char *name;
	uint32_t len;
	uint32_t id;
};

static pthread_rwlock_t dict_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct dict_entry *table;	/* slots, power of two */
static size_t table_cap;
static char **names;			/* id -> name, names[0] unused */
static uint32_t names_n;

static uint64_t hash_name(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* Probe for name; returns its slot (empty slot when absent). Caller holds a lock. */
static struct dict_entry *probe(const char *s, size_t len, uint64_t h)
{
	size_t mask = table_cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct dict_entry *e = &table[i];
		if (!e->name || (e->len == len && memcmp(e->name, s, len) == 0))
			return e;
	}
}

static uint32_t lookup_locked(const char *s, size_t len)
{
	if (!table_cap)
		return 0;
	struct dict_entry *e = probe(s, len, hash_name(s, len));
	return e->name ? e->id : 0;
}

/* Doubles the table; returns -1 on allocation failure. Caller holds the write lock. */
static int grow(void)
{
	size_t ncap = table_cap ? table_cap * 2 : 1024;
	struct dict_entry *old = table;
	size_t ocap = table_cap;
	struct dict_entry *nt = calloc(ncap, sizeof(*nt));
	char **nn = realloc(names, (ncap / 2 + 1) * sizeof(*names));

	if (!nt || !nn) {
		free(nt);
		if (nn)
			names = nn;
		return -1;
	}
	names = nn;
	table = nt;
	table_cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].name)
			*probe(old[i].name, old[i].len, hash_name(old[i].name, old[i].len)) = old[i];
	free(old);
	return 0;
}

uint32_t dict_intern(const char *s, size_t len)
{
	uint32_t id;

	pthread_rwlock_rdlock(&dict_lock);
	id = lookup_locked(s, len);
	pthread_rwlock_unlock(&dict_lock);
	if (id)
		return id;

	pthread_rwlock_wrlock(&dict_lock);
	id = lookup_locked(s, len);
	if (id || names_n >= DICT_MAX_NAMES)
		goto out;
	if ((names_n + 1) * 2 > table_cap && grow() < 0)
		goto out;
	char *copy = malloc(len + 1);
	if (!copy)
		goto out;
	memcpy(copy, s, len);
	copy[len] = '\0';
	struct dict_entry *e = probe(s, len, hash_name(s, len));
	id = ++names_n;
	e->name = copy;
	e->len = (uint32_t)len;
	e->id = id;
	names[id] = copy;
out:
	pthread_rwlock_unlock(&dict_lock);
	return id;
}

uint32_t dict_lookup(const char *name)
{
	uint32_t id;

	pthread_rwlock_rdlock(&dict_lock);
	id = lookup_locked(name, strlen(name));
	pthread_rwlock_unlock(&dict_lock);
	return id;
}

const char *dict_name(uint32_t id)
{
	const char *n = NULL;

	pthread_rwlock_rdlock(&dict_lock);
	if (id >= 1 && id <= names_n)
		n = names[id];
	pthread_rwlock_unlock(&dict_lock);
	return n;
}

uint32_t dict_count(void)
{
	uint32_t n;

	pthread_rwlock_rdlock(&dict_lock);
	n = names_n;
	pthread_rwlock_unlock(&dict_lock);
	return n;
}
