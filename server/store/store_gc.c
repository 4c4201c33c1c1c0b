/* store_gc.c - store_put_samples: group commit of concurrent ingest
 * requests over store_run_tx (store_put.c). */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How many ingest transactions may run at once: the pool size, but not
 * more than the machine's CPUs (at least 2). Every transaction costs
 * PostgreSQL a fixed set of statements (lock, insert, rollup upsert,
 * COMMIT) whatever its size; with more leaders than CPUs the same load is
 * only cut into more, smaller transactions. Measured on 2 cores, 16
 * concurrent one-sample requests: docs/scaling.md. */
static int gc_leaders_max(const struct store *st)
{
	static long ncpu;

	if (!ncpu) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		ncpu = n < 2 ? 2 : n;
		/* VMSCOPE_GC_LEADERS: another limit, for measurements (docs/scaling.md) */
		const char *e = getenv("VMSCOPE_GC_LEADERS");
		if (e && atoi(e) > 0)
			ncpu = atoi(e);
	}
	/* on Citus a transaction holds one host and its work is on the
	 * workers: as many at once as there are connections */
	if (st->citus)
		return st->gc_max_leaders;
	return st->gc_max_leaders < ncpu ? st->gc_max_leaders : (int)ncpu;
}

/* The host of all of a request's samples, NULL when they have several. */
static const char *one_host(const struct putreq *r)
{
	for (size_t i = 1; i < r->n; i++)
		if (strcmp(r->s[i].host, r->s[0].host) != 0)
			return NULL;
	return r->s[0].host;
}

/* Takes the requests of the next transaction off the queue into batch[]
 * (gc_mu held): everything queued, up to the limits; on Citus the head
 * request and the queued ones of the same single host only, so that a
 * transaction stays on one host's shard (a request with several hosts goes
 * alone). Returns how many. */
static size_t take_batch(struct store *st, struct putreq **batch)
{
	size_t nb = 0, ns = 0;

	if (!st->citus) {
		while (st->gc_head && nb < STORE_GC_MAX_REQS &&
		       (nb == 0 || ns + st->gc_head->n <= STORE_GC_MAX_SAMPLES)) {
			struct putreq *r = st->gc_head;
			st->gc_head = r->next;
			if (!st->gc_head)
				st->gc_tail = NULL;
			r->next = NULL;
			batch[nb++] = r;
			ns += r->n;
		}
		return nb;
	}
	const char *host = one_host(st->gc_head);
	struct putreq **pp = &st->gc_head, *last = NULL;
	while (*pp && nb < STORE_GC_MAX_REQS) {
		struct putreq *r = *pp;
		const char *h = one_host(r);
		bool take = nb == 0 || (host && h && strcmp(h, host) == 0 && ns + r->n <= STORE_GC_MAX_SAMPLES);
		if (!take) {
			last = r;
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		r->next = NULL;
		batch[nb++] = r;
		ns += r->n;
		if (!host)
			break;
	}
	/* the tail may have been taken */
	if (!st->gc_head)
		st->gc_tail = NULL;
	else if (!*pp)
		st->gc_tail = last;
	return nb;
}

/* store_run_tx, retried once when a pooled connection turned out broken
 * before COMMIT (one whose server restarted fails on first use; nothing
 * was stored, so a second try on a fresh connection is safe). */
static int run_tx_retry(struct store *st, struct putreq **reqs, size_t nreq, char *err, size_t errlen)
{
	bool final;
	int rc = store_run_tx(st, reqs, nreq, &final, err, errlen);
	if (rc == STORE_EUNAVAIL && !final)
		rc = store_run_tx(st, reqs, nreq, &final, err, errlen);
	return rc;
}

/* Runs one combined transaction for reqs; when it fails for a reason
 * other than the database being away and holds several requests, each is
 * retried alone so one bad request cannot fail the others. */
static void run_batch(struct store *st, struct putreq **reqs, size_t nreq)
{
	char err[512];
	int rc = run_tx_retry(st, reqs, nreq, err, sizeof(err));

	if (rc == STORE_EINTERNAL && nreq > 1) {
		for (size_t r = 0; r < nreq; r++)
			reqs[r]->rc = run_tx_retry(st, &reqs[r], 1, reqs[r]->err, reqs[r]->errlen);
		return;
	}
	for (size_t r = 0; r < nreq; r++) {
		reqs[r]->rc = rc;
		if (rc != STORE_OK && reqs[r]->err && reqs[r]->errlen)
			snprintf(reqs[r]->err, reqs[r]->errlen, "%s", err);
	}
}

/* Wakes the caller at the head of the queue when a transaction slot is
 * free, so that it leads the next transaction. Called with gc_mu held. */
static void wake_next_leader(struct store *st)
{
	if (st->gc_head && st->gc_leaders < gc_leaders_max(st))
		pthread_cond_signal(&st->gc_head->cv);
}

/* Group commit: callers queue their request; while fewer transactions
 * than allowed are running, a caller takes everything queued (its own
 * request or others') and runs it as one transaction. Alone, a request
 * runs at once; under load, requests that queued while the transactions
 * were busy share one transaction and one WAL flush, which is what lets
 * one-sample requests outrun the disk's fsync rate.
 *
 * Each request waits on a condition variable of its own and is woken
 * only when its transaction finished or when it is at the head of the
 * queue as a slot frees: one wake-up per request. (With one shared
 * condition variable every finished transaction woke every waiting
 * thread, all of which then fought for gc_mu; in this VM those context
 * switches were ~17 % of the server's CPU at 1,000 samples/s, perf in
 * docs/scaling.md.) A signal is always sent with gc_mu held, so a
 * request cannot return (and its cv go away) before it was sent. */
int store_put_samples(struct store *st, const struct sample *s, size_t n, size_t *nfresh, char *err,
		      size_t errlen)
{
	struct putreq me = { .s = s, .n = n, .err = err, .errlen = errlen };
	struct putreq *batch[STORE_GC_MAX_REQS];

	*nfresh = 0;
	if (n == 0)
		return STORE_OK;
	pthread_cond_init(&me.cv, NULL);
	pthread_mutex_lock(&st->gc_mu);
	if (st->gc_tail)
		st->gc_tail->next = &me;
	else
		st->gc_head = &me;
	st->gc_tail = &me;
	while (!me.done) {
		if (!st->gc_head || st->gc_leaders >= gc_leaders_max(st)) {
			pthread_cond_wait(&me.cv, &st->gc_mu);
			continue;
		}
		size_t nb = take_batch(st, batch);
		st->gc_leaders++;
		/* more queued than one transaction takes, and a slot left */
		wake_next_leader(st);
		pthread_mutex_unlock(&st->gc_mu);
		run_batch(st, batch, nb);
		pthread_mutex_lock(&st->gc_mu);
		st->gc_leaders--;
		for (size_t i = 0; i < nb; i++) {
			batch[i]->done = true;
			if (batch[i] != &me)
				pthread_cond_signal(&batch[i]->cv);
		}
		wake_next_leader(st);
	}
	pthread_mutex_unlock(&st->gc_mu);
	pthread_cond_destroy(&me.cv);
	*nfresh = me.nfresh;
	return me.rc;
}
