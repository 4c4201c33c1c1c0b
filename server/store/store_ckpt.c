/* store_ckpt.c - checkpoints of the hosts this server owns: the detectors'
 * state and the rollup cells kept in memory since the last checkpoint go
 * to the database together, in one transaction, every
 * --checkpoint-interval (and at close), so that per sample the database
 * only gets the sample's row and its host's row (docs/design.md "Ingest").
 *
 * A checkpoint replaces the host's detector_state row only where its
 * last_ts_ms is the checkpoint this server started from and the host's
 * lease is still this server's (compare and set): a server that lost a
 * host to another one cannot overwrite the newer owner's checkpoint, and
 * rollup_5m keeps holding exactly the in-order samples up to last_ts_ms
 * (its cells merge in the same transaction). A host whose compare fails is
 * dropped from memory and rebuilt from the database when it comes back.
 */
#include "store_internal.h"

#include "pgbin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ckpt_sql[] =
	"UPDATE detector_state d SET state = $4, last_ts_ms = $3::bigint, interval_ms = $5::bigint, "
	"updated_at = now() FROM hosts h WHERE d.host_id = $1::int AND h.id = $1::int "
	"AND h.lease = $6::bigint AND d.last_ts_ms = $2::bigint RETURNING d.host_id";

/* The rollup cells of the hosts whose checkpoint was written (res[i] has
 * its row), all in one statement: the merge's executor start-up (136
 * columns, 132 ON CONFLICT expressions) once per checkpoint transaction,
 * not once per host. On Citus one statement per cell, each on its host's
 * shard. */
static int write_cells_of(struct store *st, PGconn *c, struct own *const *e, PGresult *const *res, size_t n,
			  char *err, size_t errlen)
{
	size_t total = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		if (res[i] && PQntuples(res[i]) == 1)	/* else moved on elsewhere: not ours to write */
			total += e[i]->cells.n;
	if (!total)
		return STORE_OK;
	struct rollup_cell *all = malloc(total * sizeof(*all));
	if (!all) {
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (!res[i] || PQntuples(res[i]) != 1 || !e[i]->cells.n)
			continue;
		memcpy(all + k, e[i]->cells.c, e[i]->cells.n * sizeof(*all));
		k += e[i]->cells.n;
	}
	int rc = rollup_cells_write_routed(all, total, c, st->citus, err, errlen);
	free(all);
	return rc;
}

int store_ckpt_write(struct store *st, PGconn *c, struct own *const *e, size_t n, char *err, size_t errlen)
{
	PGresult **res = calloc(n ? n : 1, sizeof(*res));
	unsigned char **bufs = calloc(n ? n : 1, sizeof(*bufs));
	char lease[24];
	int rc = STORE_OK;

	if (!res || !bufs) {
		free(res);
		free(bufs);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	snprintf(lease, sizeof(lease), "%lld", (long long)st->lease);
	if ((rc = store_q_send(c, "BEGIN", 0, NULL, NULL, "begin", err, errlen)) != STORE_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		char id[16], old[24], now[24], iv[24];
		size_t len = 0;
		int64_t interval = 0;
		if (e[i]->hs && st->hook.save &&
		    st->hook.save(st->hook.ctx, e[i]->hs, &bufs[i], &len, &interval) < 0) {
			snprintf(err, errlen, "could not save the detectors' state: out of memory");
			rc = STORE_EINTERNAL;
			goto out;
		}
		if (len > INT32_MAX) {
			snprintf(err, errlen, "could not save the detectors' state of %s: too large", e[i]->name);
			rc = STORE_EINTERNAL;
			goto out;
		}
		snprintf(id, sizeof(id), "%d", e[i]->host_id);
		snprintf(old, sizeof(old), "%lld", (long long)e[i]->ckpt_ts);
		snprintf(now, sizeof(now), "%lld", (long long)e[i]->max_ts);
		snprintf(iv, sizeof(iv), "%lld", (long long)interval);
		const char *prm[6] = { id, old, now, bufs[i] ? (const char *)bufs[i] : "", iv, lease };
		const int lens[6] = { 0, 0, 0, (int)len, 0, 0 };
		const int fmts[6] = { 0, 0, 0, 1, 0, 0 };
		if ((rc = store_q_prep_keep(c, STORE_PREP_CKPT, ckpt_sql, 6, prm, lens, fmts, 0, &res[i],
					    "write the checkpoint", err, errlen)) != STORE_OK)
			goto out;
	}
	if ((rc = store_pipe_finish(c, NULL, err, errlen)) != STORE_OK)
		goto out;
	if ((rc = write_cells_of(st, c, e, res, n, err, errlen)) != STORE_OK)
		goto out;
	if ((rc = store_commit(c, err, errlen)) != STORE_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!res[i] || PQntuples(res[i]) != 1) {
			own_reset(st, e[i]);
			continue;
		}
		e[i]->ckpt_ts = e[i]->max_ts;
		e[i]->cells.n = 0;
		e[i]->dirty_ms = 0;
	}
out:
	store_pipe_finish(c, NULL, NULL, 0);
	if (rc != STORE_OK && PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) != PQTRANS_IDLE)
		PQclear(PQexec(c, "ROLLBACK"));
	for (size_t i = 0; i < n; i++) {
		PQclear(res[i]);
		free(bufs[i]);
	}
	free(res);
	free(bufs);
	return rc;
}

int store_checkpoint(struct store *st, bool all, int *nwritten, char *err, size_t errlen)
{
	struct own *batch[STORE_CKPT_BATCH];
	int rc = STORE_OK;

	*nwritten = 0;
	for (;;) {
		int64_t now = store_clock_ms();
		/* one host per transaction on Citus: a transaction on one shard */
		size_t max = st->citus ? 1 : STORE_CKPT_BATCH;
		size_t n = owntab_checkout_dirty(st->own, all ? INT64_MAX : now - st->ckpt_ms, now - STORE_OWN_IDLE_MS,
						 batch, max, st->hook.release, st->hook.ctx);
		if (!n)
			break;
		PGconn *c = db_pool_get(st->pool, STORE_POOL_WAIT_MS, err, errlen);
		if (!c) {
			owntab_checkin(st->own, batch, n);
			return STORE_EUNAVAIL;
		}
		rc = store_ckpt_write(st, c, batch, n, err, errlen);
		db_pool_put(st->pool, c, rc == STORE_EUNAVAIL);
		owntab_checkin(st->own, batch, n);
		if (rc != STORE_OK)
			break;
		*nwritten += (int)n;
		if (n < max)
			break;
	}
	return rc;
}
