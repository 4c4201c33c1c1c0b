/* store_gc.c - store_put_samples: group commit of concurrent ingest
 * requests over store_run_tx (store_put.c). */
#include "store_internal.h"

#include <stdio.h>
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
	}
	return st->gc_max_leaders < ncpu ? st->gc_max_leaders : (int)ncpu;
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

/* Group commit: callers queue their request; while fewer transactions
 * than pooled connections are running, a caller takes everything queued
 * (its own request or others') and runs it as one transaction. Alone, a
 * request runs at once; under load, requests that queued while the
 * connections were busy share one transaction and one WAL flush, which
 * is what lets one-sample requests outrun the disk's fsync rate. */
int store_put_samples(struct store *st, const struct sample *s, size_t n,
		      const struct store_tx_hook *hook, size_t *nfresh, char *err, size_t errlen)
{
	struct putreq me = { .s = s, .n = n, .hook = hook, .err = err, .errlen = errlen };
	struct putreq *batch[STORE_GC_MAX_REQS];

	*nfresh = 0;
	if (n == 0)
		return STORE_OK;
	pthread_mutex_lock(&st->gc_mu);
	if (st->gc_tail)
		st->gc_tail->next = &me;
	else
		st->gc_head = &me;
	st->gc_tail = &me;
	while (!me.done) {
		if (!st->gc_head || st->gc_leaders >= gc_leaders_max(st)) {
			pthread_cond_wait(&st->gc_cv, &st->gc_mu);
			continue;
		}
		size_t nb = 0, ns = 0;
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
		st->gc_leaders++;
		pthread_mutex_unlock(&st->gc_mu);
		run_batch(st, batch, nb);
		pthread_mutex_lock(&st->gc_mu);
		st->gc_leaders--;
		for (size_t i = 0; i < nb; i++)
			batch[i]->done = true;
		pthread_cond_broadcast(&st->gc_cv);
	}
	pthread_mutex_unlock(&st->gc_mu);
	*nfresh = me.nfresh;
	return me.rc;
}
