/* store_own.c - the hosts this server owns, in memory (struct own in
 * store_internal.h): a hash table by host name whose entries are checked
 * out by one thread at a time (an ingest transaction, a checkpoint).
 *
 * Why in memory: locking, reading and rewriting a host's detector state
 * row (~2 KB), merging its rollup cell and rebuilding its encoding state
 * from a packed copy for every sample are most of PostgreSQL's and a good
 * part of the server's CPU per sample (docs/scaling.md). Kept here they
 * cost nothing per sample; the
 * database gets them as a checkpoint every --checkpoint-interval
 * (store_ckpt.c), and a server that takes a host over, or restarts,
 * rebuilds them from the checkpoint and the samples stored since
 * (store_take.c).
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OWN_BUCKETS 16384

struct owntab {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* an entry was checked in */
	struct own *b[OWN_BUCKETS];
	size_t n;
};

int64_t store_clock_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h % OWN_BUCKETS;
}

struct owntab *owntab_new(void)
{
	struct owntab *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	return t;
}

void own_free_cgs(struct owncg *cgs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(cgs[i].path);
	free(cgs);
}

void own_clear_meta(struct own *e)
{
	free(e->kernel);
	free(e->agent_version);
	free(e->labels);
	json_decref(e->labels_j);
	e->kernel = e->agent_version = e->labels = NULL;
	e->labels_j = NULL;
	e->meta_known = false;
}

void own_free_cgs_of(struct own *e)
{
	own_free_cgs(e->cgs, e->ncgs);
	e->cgs = NULL;
	e->ncgs = 0;
}

/* Frees an entry that is in no table. */
static void own_free(struct own *e, void (*release)(void *ctx, void *hs), void *ctx)
{
	if (e->hs && release)
		release(ctx, e->hs);
	own_free_cgs_of(e);
	own_clear_meta(e);
	hstate_release(&e->enc);
	rollup_cells_release(&e->cells);
	free(e);
}

void owntab_free(struct owntab *t, void (*release)(void *ctx, void *hs), void *ctx)
{
	if (!t)
		return;
	for (size_t i = 0; i < OWN_BUCKETS; i++) {
		while (t->b[i]) {
			struct own *e = t->b[i];
			t->b[i] = e->next;
			own_free(e, release, ctx);
		}
	}
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

static struct own *find_locked(struct owntab *t, const char *name)
{
	for (struct own *e = t->b[name_hash(name)]; e; e = e->next)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static struct own *add_locked(struct owntab *t, const char *name)
{
	struct own *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->max_ts = INT64_MIN;
	hstate_init(&e->enc);
	uint32_t b = name_hash(name);
	e->next = t->b[b];
	t->b[b] = e;
	t->n++;
	return e;
}

int owntab_checkout(struct owntab *t, const char *const *names, size_t n, struct own **out)
{
	size_t got = 0;

	pthread_mutex_lock(&t->mu);
	while (got < n) {
		struct own *e = find_locked(t, names[got]);
		if (!e && !(e = add_locked(t, names[got])))
			break;
		if (e->busy) {
			pthread_cond_wait(&t->cv, &t->mu);
			continue;	/* it may have been dropped meanwhile: look again */
		}
		e->busy = true;
		out[got++] = e;
	}
	if (got < n) {
		for (size_t i = 0; i < got; i++)
			out[i]->busy = false;
		pthread_cond_broadcast(&t->cv);
	}
	pthread_mutex_unlock(&t->mu);
	return got == n ? 0 : -1;
}

void owntab_checkin(struct owntab *t, struct own *const *e, size_t n)
{
	int64_t now = store_clock_ms();

	pthread_mutex_lock(&t->mu);
	for (size_t i = 0; i < n; i++) {
		e[i]->busy = false;
		e[i]->used_ms = now;
	}
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

size_t owntab_checkout_dirty(struct owntab *t, int64_t dirty_before, int64_t idle_before, struct own **out,
			     size_t max, void (*release)(void *ctx, void *hs), void *ctx)
{
	size_t got = 0;
	struct own *gone = NULL;

	pthread_mutex_lock(&t->mu);
	/* over the limit, clean entries leave even when recently used */
	if (t->n > STORE_OWN_MAX)
		idle_before = INT64_MAX;
	for (size_t i = 0; i < OWN_BUCKETS && got < max; i++) {
		struct own **pp = &t->b[i];
		while (*pp && got < max) {
			struct own *e = *pp;
			if (e->busy) {
				pp = &e->next;
				continue;
			}
			if (e->valid && e->dirty_ms && e->dirty_ms <= dirty_before) {
				e->busy = true;
				out[got++] = e;
			} else if (!e->dirty_ms && e->used_ms < idle_before) {
				*pp = e->next;	/* nothing unwritten: let it go */
				t->n--;
				e->next = gone;
				gone = e;
				continue;
			}
			pp = &e->next;
		}
	}
	pthread_mutex_unlock(&t->mu);
	while (gone) {
		struct own *e = gone;
		gone = e->next;
		own_free(e, release, ctx);
	}
	return got;
}

void owntab_forget(struct owntab *t, const char *name, void (*release)(void *ctx, void *hs), void *ctx)
{
	struct own *gone = NULL;

	pthread_mutex_lock(&t->mu);
	for (struct own **pp = &t->b[name_hash(name)]; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->name, name) == 0) {
			if (!(*pp)->busy) {
				gone = *pp;
				*pp = gone->next;
				t->n--;
			}
			break;
		}
	}
	pthread_mutex_unlock(&t->mu);
	if (gone)
		own_free(gone, release, ctx);
}

size_t owntab_count(struct owntab *t)
{
	pthread_mutex_lock(&t->mu);
	size_t n = t->n;
	pthread_mutex_unlock(&t->mu);
	return n;
}

void own_reset(struct store *st, struct own *e)
{
	if (e->hs && st->hook.release)
		st->hook.release(st->hook.ctx, e->hs);
	e->hs = NULL;
	own_free_cgs_of(e);
	own_clear_meta(e);
	hstate_release(&e->enc);
	rollup_cells_release(&e->cells);
	e->valid = false;
	e->max_ts = INT64_MIN;
	e->ckpt_ts = 0;
	e->dirty_ms = 0;
	e->lag = (struct host_lag){ 0, LAG_NONE, LAG_NONE, LAG_NONE, 0 };
}
