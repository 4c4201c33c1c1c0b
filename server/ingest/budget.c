/* budget.c - hourly allowances per key (see budget.h): a chained hash
 * table of leaky buckets under one mutex. */
#include "budget.h"
#include "fnv.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define HOUR_MS 3600000.0
#define MIN_BUCKETS 256

struct entry {
	struct entry *next;
	double used;		/* units taken, drained up to at_ms */
	int64_t at_ms;
	uint32_t per_hour;
	char key[];
};

struct budget {
	pthread_mutex_t mu;
	struct entry **tab;
	size_t ntab, count, sweep_at;
};

static uint64_t hash_key(const char *s)
{
	return fnv1a(s, strlen(s));
}

struct budget *budget_new(void)
{
	struct budget *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->ntab = MIN_BUCKETS;
	b->tab = calloc(b->ntab, sizeof(*b->tab));
	if (!b->tab) {
		free(b);
		return NULL;
	}
	b->sweep_at = MIN_BUCKETS;
	pthread_mutex_init(&b->mu, NULL);
	return b;
}

void budget_free(struct budget *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->ntab; i++) {
		struct entry *e = b->tab[i];
		while (e) {
			struct entry *next = e->next;
			free(e);
			e = next;
		}
	}
	free(b->tab);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

/* Drains e up to now_ms. */
static void drain(struct entry *e, int64_t now_ms)
{
	if (now_ms > e->at_ms) {
		e->used -= (double)(now_ms - e->at_ms) * e->per_hour / HOUR_MS;
		if (e->used < 0)
			e->used = 0;
		e->at_ms = now_ms;
	}
}

static struct entry *find(struct budget *b, const char *key)
{
	for (struct entry *e = b->tab[hash_key(key) & (b->ntab - 1)]; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

/* Drops drained entries; doubles the table when it stays crowded. Bounded
 * work: runs when the count doubled since the last sweep. */
static void sweep(struct budget *b, int64_t now_ms)
{
	for (size_t i = 0; i < b->ntab; i++) {
		struct entry **pp = &b->tab[i];
		while (*pp) {
			struct entry *e = *pp;
			drain(e, now_ms);
			if (e->used <= 0) {
				*pp = e->next;
				free(e);
				b->count--;
			} else {
				pp = &e->next;
			}
		}
	}
	if (b->count > b->ntab) {
		size_t nt = b->ntab * 2;
		struct entry **t = calloc(nt, sizeof(*t));
		if (t) {
			for (size_t i = 0; i < b->ntab; i++) {
				struct entry *e = b->tab[i];
				while (e) {
					struct entry *next = e->next;
					size_t j = hash_key(e->key) & (nt - 1);
					e->next = t[j];
					t[j] = e;
					e = next;
				}
			}
			free(b->tab);
			b->tab = t;
			b->ntab = nt;
		}
	}
	b->sweep_at = b->count * 2 > MIN_BUCKETS ? b->count * 2 : MIN_BUCKETS;
}

static struct entry *get(struct budget *b, const char *key, uint32_t per_hour, int64_t now_ms)
{
	struct entry *e = find(b, key);

	if (e) {
		e->per_hour = per_hour;
		drain(e, now_ms);
		return e;
	}
	size_t len = strlen(key);
	e = calloc(1, sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	memcpy(e->key, key, len + 1);
	e->per_hour = per_hour;
	e->at_ms = now_ms;
	size_t i = hash_key(key) & (b->ntab - 1);
	e->next = b->tab[i];
	b->tab[i] = e;
	b->count++;
	return e;
}

long budget_take(struct budget *b, const struct budget_ask *asks, size_t n, int64_t now_ms)
{
	long refused = -1;

	pthread_mutex_lock(&b->mu);
	if (b->count >= b->sweep_at)
		sweep(b, now_ms);
	for (size_t i = 0; i < n && refused < 0; i++) {
		if (!asks[i].per_hour || !asks[i].n)
			continue;
		/* the same key may come twice: the second ask sees the first */
		double want = asks[i].n;
		for (size_t k = 0; k < i; k++)
			if (asks[k].per_hour && strcmp(asks[k].key, asks[i].key) == 0)
				want += asks[k].n;
		struct entry *e = get(b, asks[i].key, asks[i].per_hour, now_ms);
		if (!e || e->used + want > (double)asks[i].per_hour + 1e-9)
			refused = (long)i;
	}
	if (refused < 0)
		for (size_t i = 0; i < n; i++)
			if (asks[i].per_hour && asks[i].n)
				find(b, asks[i].key)->used += asks[i].n;
	pthread_mutex_unlock(&b->mu);
	return refused;
}

void budget_give(struct budget *b, const struct budget_ask *asks, size_t n, int64_t now_ms)
{
	pthread_mutex_lock(&b->mu);
	for (size_t i = 0; i < n; i++) {
		if (!asks[i].per_hour || !asks[i].n)
			continue;
		struct entry *e = find(b, asks[i].key);
		if (!e)
			continue;
		drain(e, now_ms);
		e->used -= asks[i].n;
		if (e->used < 0)
			e->used = 0;
	}
	pthread_mutex_unlock(&b->mu);
}

size_t budget_keys(struct budget *b)
{
	pthread_mutex_lock(&b->mu);
	size_t n = b->count;
	pthread_mutex_unlock(&b->mu);
	return n;
}
