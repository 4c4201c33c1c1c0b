/* store_ckpt.c - checkpoints of the hosts this server owns: the detectors'
 * state and the rollup cells kept in memory since the last checkpoint go
 * to the database together, in one transaction, every
 * --checkpoint-interval (and at close), so that per sample the database
 * only gets the sample's row and its host's row (docs/design.md "Ingest").
 *
 * On one PostgreSQL all the hosts of a checkpoint transaction go in one
 * state update and one rollup merge (per host, their executor start-ups
 * were most of a checkpoint's cost); on Citus one statement per host, each
 * on its host's shard.
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

#include "pgarr.h"
#include "pgbin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ckpt_sql[] =
	"UPDATE detector_state d SET state = $4, last_ts_ms = $3::bigint, interval_ms = $5::bigint, "
	"updated_at = now() FROM hosts h WHERE d.host_id = $1::int AND h.id = $1::int "
	"AND h.lease = $6::bigint AND d.last_ts_ms = $2::bigint RETURNING d.host_id";

/* One statement for all the hosts of a checkpoint transaction on one
 * PostgreSQL (the same compare and set per host, by host id); on Citus one
 * per host, each on its host's shard. */
static const char ckptn_sql[] =
	"UPDATE detector_state d SET state = u.s, last_ts_ms = u.t, interval_ms = u.iv, updated_at = now() "
	"FROM unnest($1::int[], $2::bigint[], $3::bigint[], $4::bytea[], $5::bigint[]) AS u(h, old, t, s, iv), "
	"hosts h WHERE d.host_id = u.h AND h.id = u.h AND h.lease = $6::bigint AND d.last_ts_ms = u.old "
	"RETURNING d.host_id";

/* The rollup cells of the hosts whose checkpoint was written (ok[i]), all
 * in one statement: the merge's executor start-up (136 columns, 132 ON
 * CONFLICT expressions) once per checkpoint transaction, not once per
 * host. On Citus one statement per cell, each on its host's shard. */
static int write_cells_of(struct store *st, PGconn *c, struct own *const *e, const bool *ok, size_t n,
			  char *err, size_t errlen)
{
	size_t total = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		if (ok[i])	/* else moved on elsewhere: not ours to write */
			total += e[i]->cells.n;
	if (!total)
		return STORE_OK;
	struct rollup_cell *all = malloc(total * sizeof(*all));
	if (!all) {
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (!ok[i] || !e[i]->cells.n)
			continue;
		memcpy(all + k, e[i]->cells.c, e[i]->cells.n * sizeof(*all));
		k += e[i]->cells.n;
	}
	int rc = rollup_cells_write_routed(all, total, c, st->citus, err, errlen);
	free(all);
	return rc;
}

/* Sends the compare and set of every host's state (bufs[i], lens[i],
 * iv[i]) in one statement; its result (the host ids written) in *res. */
static int send_states(struct store *st, PGconn *c, struct own *const *e, unsigned char *const *bufs,
		       const size_t *lens, const int64_t *iv, size_t n, PGresult **res, char *err, size_t errlen)
{
	struct cbuf a[5];
	char lease[24];
	int bad = 0, rc;

	for (int k = 0; k < 5; k++)
		cbuf_init(&a[k]);
	bad |= arr_begin(&a[0]) | arr_begin(&a[1]) | arr_begin(&a[2]) | pgbin_bytea_begin(&a[3]) | arr_begin(&a[4]);
	for (size_t i = 0; i < n && !bad; i++)
		bad |= arr_num(&a[0], e[i]->host_id) | arr_num(&a[1], e[i]->ckpt_ts) | arr_num(&a[2], e[i]->max_ts) |
		       pgbin_bytea_add(&a[3], bufs[i] ? bufs[i] : (const uint8_t *)"", lens[i]) | arr_num(&a[4], iv[i]);
	bad |= arr_end(&a[0]) | arr_end(&a[1]) | arr_end(&a[2]) | pgbin_bytea_end(&a[3]) | arr_end(&a[4]);
	snprintf(lease, sizeof(lease), "%lld", (long long)st->lease);
	if (bad) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
	} else {
		const char *prm[6] = { (const char *)a[0].p, (const char *)a[1].p, (const char *)a[2].p,
				       (const char *)a[3].p, (const char *)a[4].p, lease };
		const int plen[6] = { 0, 0, 0, (int)a[3].len, 0, 0 };
		const int fmts[6] = { 0, 0, 0, 1, 0, 0 };
		rc = store_q_prep_keep(c, STORE_PREP_CKPTN, ckptn_sql, 6, prm, plen, fmts, 0, res,
				       "write the checkpoint", err, errlen);
	}
	for (int k = 0; k < 5; k++)
		cbuf_release(&a[k]);
	return rc;
}

int store_ckpt_write(struct store *st, PGconn *c, struct own *const *e, size_t n, char *err, size_t errlen)
{
	size_t m = n ? n : 1;
	PGresult **res = calloc(m, sizeof(*res));
	unsigned char **bufs = calloc(m, sizeof(*bufs));
	size_t *lens = calloc(m, sizeof(*lens));
	int64_t *iv = calloc(m, sizeof(*iv));
	bool *ok = calloc(m, sizeof(*ok));
	char lease[24];
	int rc = STORE_OK;

	if (!res || !bufs || !lens || !iv || !ok) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
		goto out;
	}
	snprintf(lease, sizeof(lease), "%lld", (long long)st->lease);
	for (size_t i = 0; i < n; i++) {
		if (e[i]->hs && st->hook.save && st->hook.save(st->hook.ctx, e[i]->hs, &bufs[i], &lens[i], &iv[i]) < 0) {
			snprintf(err, errlen, "could not save the detectors' state: out of memory");
			rc = STORE_EINTERNAL;
			goto out;
		}
		if (lens[i] > INT32_MAX) {
			snprintf(err, errlen, "could not save the detectors' state of %s: too large", e[i]->name);
			rc = STORE_EINTERNAL;
			goto out;
		}
	}
	if ((rc = store_q_send(c, "BEGIN", 0, NULL, NULL, "begin", err, errlen)) != STORE_OK)
		goto out;
	if (!st->citus) {
		rc = send_states(st, c, e, bufs, lens, iv, n, &res[0], err, errlen);
	} else {
		for (size_t i = 0; i < n && rc == STORE_OK; i++) {
			char id[16], old[24], now[24], ivs[24];
			snprintf(id, sizeof(id), "%d", e[i]->host_id);
			snprintf(old, sizeof(old), "%lld", (long long)e[i]->ckpt_ts);
			snprintf(now, sizeof(now), "%lld", (long long)e[i]->max_ts);
			snprintf(ivs, sizeof(ivs), "%lld", (long long)iv[i]);
			const char *prm[6] = { id, old, now, bufs[i] ? (const char *)bufs[i] : "", ivs, lease };
			const int plen[6] = { 0, 0, 0, (int)lens[i], 0, 0 };
			const int fmts[6] = { 0, 0, 0, 1, 0, 0 };
			rc = store_q_prep_keep(c, STORE_PREP_CKPT, ckpt_sql, 6, prm, plen, fmts, 0, &res[i],
					       "write the checkpoint", err, errlen);
		}
	}
	if (rc != STORE_OK || (rc = store_pipe_finish(c, NULL, err, errlen)) != STORE_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (st->citus) {
			ok[i] = res[i] && PQntuples(res[i]) == 1;
			continue;
		}
		for (int k = 0; res[0] && k < PQntuples(res[0]) && !ok[i]; k++)
			ok[i] = strtol(PQgetvalue(res[0], k, 0), NULL, 10) == e[i]->host_id;
	}
	if ((rc = write_cells_of(st, c, e, ok, n, err, errlen)) != STORE_OK)
		goto out;
	if ((rc = store_commit(c, err, errlen)) != STORE_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!ok[i]) {
			own_reset(st, e[i]);	/* moved on elsewhere */
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
		if (res)
			PQclear(res[i]);
		if (bufs)
			free(bufs[i]);
	}
	free(res);
	free(bufs);
	free(lens);
	free(iv);
	free(ok);
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
