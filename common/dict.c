/* dict.c - metric-name interning: an open-addressing hash table guarded by a
 * read-write lock. Lookups (the common case once a fleet's names are known)
 * only take the read lock. */
#include "dict.h"
#include "fnv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct dict_entry {
	char *name;
	uint32_t len;
	uint32_t id;
};

static pthread_rwlock_t dict_lock = PTHREAD_RWLOCK_INITIALIZER;
static __thread struct dict_stage *cur_stage;	/* dict_stage_begin */
static struct dict_entry *table;	/* slots, power of two */
static size_t table_cap;
static char **names;			/* id -> name, names[0] unused */
static uint32_t names_n;

static uint64_t hash_name(const char *s, size_t len)
{
	return fnv1a(s, len);
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

/* A NUL-terminated copy of s[0..len); NULL when out of memory. */
static char *copy_name(const char *s, size_t len)
{
	char *copy = malloc(len + 1);

	if (copy) {
		memcpy(copy, s, len);
		copy[len] = '\0';
	}
	return copy;
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

/* Adds s[0..len) (not present) and returns its id; 0 when full or out of
 * memory. Caller holds the write lock. */
static uint32_t add_locked(const char *s, size_t len)
{
	if (names_n >= DICT_MAX_NAMES)
		return 0;
	if ((names_n + 1) * 2 > table_cap && grow() < 0)
		return 0;
	char *copy = copy_name(s, len);
	if (!copy)
		return 0;
	struct dict_entry *e = probe(s, len, hash_name(s, len));
	uint32_t id = ++names_n;
	e->name = copy;
	e->len = (uint32_t)len;
	e->id = id;
	names[id] = copy;
	return id;
}

static uint32_t stage_add(struct dict_stage *st, const char *s, size_t len);

uint32_t dict_intern(const char *s, size_t len)
{
	uint32_t id;

	pthread_rwlock_rdlock(&dict_lock);
	id = lookup_locked(s, len);
	pthread_rwlock_unlock(&dict_lock);
	if (id)
		return id;
	if (cur_stage)
		return stage_add(cur_stage, s, len);

	pthread_rwlock_wrlock(&dict_lock);
	id = lookup_locked(s, len);
	if (!id)
		id = add_locked(s, len);
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

	if (dict_id_staged(id))
		return cur_stage ? dict_stage_name(cur_stage, id) : NULL;
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

/* --- staging --- */

void dict_stage_init(struct dict_stage *st, uint32_t max)
{
	memset(st, 0, sizeof(*st));
	st->max = max;
}

void dict_stage_begin(struct dict_stage *st)
{
	cur_stage = st;
}

void dict_stage_end(void)
{
	cur_stage = NULL;
}

/* Doubles the stage's arrays and rebuilds its index; -1 when out of memory. */
static int stage_grow(struct dict_stage *st)
{
	uint32_t ncap = st->cap ? st->cap * 2 : 64;
	uint32_t nslot = ncap * 2;
	char **nn = realloc(st->names, ncap * sizeof(*nn));
	if (!nn)
		return -1;
	st->names = nn;
	uint32_t *nl = realloc(st->len, ncap * sizeof(*nl));
	if (!nl)
		return -1;
	st->len = nl;
	uint32_t *ns = calloc(nslot, sizeof(*ns));
	if (!ns)
		return -1;
	for (uint32_t k = 0; k < st->n; k++) {
		uint32_t i = (uint32_t)hash_name(st->names[k], st->len[k]) & (nslot - 1);
		while (ns[i])
			i = (i + 1) & (nslot - 1);
		ns[i] = k + 1;
	}
	free(st->slot);
	st->slot = ns;
	st->nslot = nslot;
	st->cap = ncap;
	return 0;
}

/* The staged id of s[0..len), adding it; 0 when the stage is full or out
 * of memory. */
static uint32_t stage_add(struct dict_stage *st, const char *s, size_t len)
{
	if (st->nslot) {
		for (uint32_t i = (uint32_t)hash_name(s, len) & (st->nslot - 1);; i = (i + 1) & (st->nslot - 1)) {
			uint32_t k = st->slot[i];
			if (!k)
				break;
			if (st->len[k - 1] == len && memcmp(st->names[k - 1], s, len) == 0)
				return DICT_STAGED_BIT | k;
		}
	}
	if (st->n >= st->max) {
		st->over = true;
		return 0;
	}
	if (st->n == st->cap && stage_grow(st) < 0)
		return 0;
	char *copy = copy_name(s, len);
	if (!copy)
		return 0;
	uint32_t i = (uint32_t)hash_name(s, len) & (st->nslot - 1);
	while (st->slot[i])
		i = (i + 1) & (st->nslot - 1);
	st->names[st->n] = copy;
	st->len[st->n] = (uint32_t)len;
	st->slot[i] = ++st->n;
	return DICT_STAGED_BIT | st->n;
}

const char *dict_stage_name(const struct dict_stage *st, uint32_t id)
{
	uint32_t k = id & ~DICT_STAGED_BIT;

	if (!dict_id_staged(id) || k == 0 || k > st->n)
		return NULL;
	return st->names[k - 1];
}

int dict_stage_commit(struct dict_stage *st)
{
	int rc = 0;

	if (!st->n)
		return 0;
	free(st->real);
	st->real = calloc(st->n, sizeof(*st->real));
	if (!st->real)
		return -1;
	pthread_rwlock_wrlock(&dict_lock);
	/* names another request committed meanwhile are found, not added */
	uint32_t fresh = 0;
	for (uint32_t k = 0; k < st->n; k++)
		if (!(st->real[k] = lookup_locked(st->names[k], st->len[k])))
			fresh++;
	if (names_n + fresh > DICT_MAX_NAMES) {
		rc = -1;
		goto out;
	}
	for (uint32_t k = 0; k < st->n; k++) {
		if (st->real[k])
			continue;
		/* room was checked: only memory can fail here, and what was
		 * added stays (valid names of an accepted request) */
		if (!(st->real[k] = add_locked(st->names[k], st->len[k]))) {
			rc = -1;
			goto out;
		}
	}
out:
	pthread_rwlock_unlock(&dict_lock);
	if (rc < 0) {
		free(st->real);
		st->real = NULL;
	}
	return rc;
}

uint32_t dict_stage_real(const struct dict_stage *st, uint32_t id)
{
	uint32_t k = id & ~DICT_STAGED_BIT;

	if (!dict_id_staged(id))
		return id;
	if (!st->real || k == 0 || k > st->n)
		return 0;
	return st->real[k - 1];
}

void dict_stage_release(struct dict_stage *st)
{
	for (uint32_t k = 0; k < st->n; k++)
		free(st->names[k]);
	free(st->names);
	free(st->len);
	free(st->real);
	free(st->slot);
	if (cur_stage == st)
		cur_stage = NULL;
	dict_stage_init(st, st->max);
}
