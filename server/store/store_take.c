/* store_take.c - taking a host over (store_take, store_internal.h): the
 * first transaction of a server for a host it does not hold in memory,
 * after a restart, or after another server took the host for a while.
 *
 * The host's row gets this server's lease (which locks it until the
 * transaction ends, so nobody else writes the host meanwhile); the
 * checkpoint (detector_state) gives the detectors' state after the host's
 * in-order samples up to its last_ts_ms, and rollup_5m holds exactly those
 * samples' rollups. The stored in-order samples after it are replayed:
 * fed to the hook's state (the detectors end where an uninterrupted server
 * would be, alerts included, without writing them again) and added to the
 * host's rollup cells. The replay ends on the newest in-order row, which
 * is the encoding state of the next sample.
 */
#include "store_internal.h"

#include "dict.h"
#include "pgarr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Resolves the rollup slots' metric ids the caches do not know yet (names
 * stored by other servers) with one query, then fills x. */
static int rollup_ctx_resolve(struct store *st, PGconn *c, struct rollup_ctx *x, char *err, size_t errlen)
{
	struct cbuf names;
	int nmiss = 0, rc = STORE_OK;
	PGresult *r = NULL;

	rollup_ctx_init(x, st);
	cbuf_init(&names);
	int bad = arr_begin(&names);
	for (int i = 0; i < ROLLUP_NSLOT && !bad; i++) {
		if (!x->mid[i]) {
			bad |= arr_text(&names, rollup_metric[i]);
			nmiss++;
		}
	}
	bad |= arr_end(&names);
	if (bad) {
		cbuf_release(&names);
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	if (nmiss) {
		const char *prm[1] = { (const char *)names.p };
		rc = store_q(c, "SELECT id, name FROM metric_names WHERE name = ANY($1::text[]) OR name LIKE "
			     "'vmstat.pgs%\\_%' OR name LIKE 'vmstat.allocstall\\_%'", 1, prm, 0, &r,
			     "look up the rollup metrics", err, errlen);
		if (rc == STORE_OK) {
			pthread_mutex_lock(&st->mu);
			for (int i = 0; i < PQntuples(r); i++) {
				const char *name = PQgetvalue(r, i, 1);
				uint32_t did = dict_intern(name, strlen(name));
				if (did)
					st->metric_db[did] = (int32_t)strtol(PQgetvalue(r, i, 0), NULL, 10);
			}
			pthread_mutex_unlock(&st->mu);
			PQclear(r);
			rollup_ctx_init(x, st);
		}
	}
	cbuf_release(&names);
	return rc;
}

/* Replays the host's stored samples after the checkpoint (ts in
 * (ckpt, max_ts]); leaves the newest in-order row's state in e->enc. */
static int replay(struct store *st, PGconn *c, struct own *e, int64_t ckpt, char *err, size_t errlen)
{
	struct store_export *x = NULL;
	struct rollup_ctx rx;
	struct sample s;
	int rc, got;
	size_t n = 0;

	if ((rc = rollup_ctx_resolve(st, c, &rx, err, errlen)) != STORE_OK)
		return rc;
	if ((rc = store_replay_open(st, c, e->name, e->host_id, ckpt + 1, e->max_ts, &x, err, errlen)) != STORE_OK)
		return rc;
	sample_init(&s);
	while ((got = store_export_next(x, &s, err, errlen)) == 1) {
		bool late;
		const struct hstate *cur, *prev;
		store_replay_row(x, &late, &cur, &prev);
		if (late)
			continue;	/* neither rolled up nor fed when it arrived */
		if (rollup_cells_add(&e->cells, &rx, e->host_id, s.ts_ms, cur->boot, &cur->m, prev ? &prev->m : NULL,
				     prev ? prev->last_ts : INT64_MIN, prev ? prev->boot : 0) < 0) {
			rc = STORE_EINTERNAL;
			snprintf(err, errlen, "out of memory");
			break;
		}
		if (st->hook.replay && st->hook.replay(st->hook.ctx, c, e->hs, e->host_id, &s, err, errlen) != 0) {
			rc = PQstatus(c) == CONNECTION_OK ? STORE_EINTERNAL : STORE_EUNAVAIL;
			break;
		}
		n++;
		/* the encoding state needs the boot_id string of its row */
		free(e->enc.boot_id);
		e->enc.boot_id = s.boot_id ? strdup(s.boot_id) : NULL;
	}
	if (got < 0)
		rc = got;
	sample_release(&s);
	if (rc == STORE_OK) {
		struct hstate *ch = store_replay_chain(x);
		char *boot_id = e->enc.boot_id;
		e->enc.boot_id = NULL;
		hstate_release(&e->enc);
		if (ch->last_ts == e->max_ts) {
			e->enc = *ch;	/* moved: the cursor's copy is reset below */
			hstate_init(ch);
			e->enc.boot_id = boot_id;
		} else {
			free(boot_id);	/* no usable chain: the next row is a keyframe */
		}
		e->enc.host_id = e->host_id;
		if (n)
			e->dirty_ms = store_clock_ms();
	}
	store_export_close(x);
	return rc;
}

/* The host's descriptive fields as its row has them (columns 3..5 of r),
 * labels normalised the way store_put.c writes them. */
static int take_meta(struct own *e, const PGresult *r)
{
	json_t *l = json_loads(PQgetvalue(r, 0, 5), 0, NULL);
	e->labels = l ? json_dumps(l, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	e->labels_j = l;	/* owned by the entry now */
	e->kernel = PQgetisnull(r, 0, 3) ? NULL : strdup(PQgetvalue(r, 0, 3));
	e->agent_version = PQgetisnull(r, 0, 4) ? NULL : strdup(PQgetvalue(r, 0, 4));
	if (!e->labels || (!e->kernel && !PQgetisnull(r, 0, 3)) || (!e->agent_version && !PQgetisnull(r, 0, 4))) {
		own_clear_meta(e);
		return -1;
	}
	e->meta_known = true;
	return 0;
}

int store_take(struct store *st, PGconn *c, struct own *e, char *err, size_t errlen)
{
	char id[16], lease[24];
	const char *prm[2] = { id, lease };
	PGresult *r;
	int rc;

	own_reset(st, e);
	snprintf(id, sizeof(id), "%d", e->host_id);
	snprintf(lease, sizeof(lease), "%lld", (long long)st->lease);
	rc = store_q(c, "UPDATE hosts SET lease = $2::bigint WHERE id = $1::int "
		     "RETURNING last_ts_ms, boot_id, samples, kernel, agent_version, labels::text, "
		     "lag_win_ms, lag_min_ms, lag_prev_ms, lag_last_ms, clock_bad_ms", 2,
		     prm, 0, &r, "take the host over", err, errlen);
	if (rc != STORE_OK)
		return rc;
	if (PQntuples(r) != 1) {
		PQclear(r);
		snprintf(err, errlen, "no such host: %s", e->name);
		return STORE_ENOTFOUND;
	}
	int64_t max_ts = PQgetisnull(r, 0, 0) ? INT64_MIN : strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	char *boot_id = PQgetisnull(r, 0, 1) ? NULL : strdup(PQgetvalue(r, 0, 1));
	bool nomem = !PQgetisnull(r, 0, 1) && !boot_id;
	if (!nomem && strtoll(PQgetvalue(r, 0, 2), NULL, 10) > 0)
		nomem = take_meta(e, r) < 0;
	e->lag.win_ms = strtoll(PQgetvalue(r, 0, 6), NULL, 10);
	e->lag.min_ms = PQgetisnull(r, 0, 7) ? LAG_NONE : strtoll(PQgetvalue(r, 0, 7), NULL, 10);
	e->lag.prev_ms = PQgetisnull(r, 0, 8) ? LAG_NONE : strtoll(PQgetvalue(r, 0, 8), NULL, 10);
	e->lag.last_ms = PQgetisnull(r, 0, 9) ? LAG_NONE : strtoll(PQgetvalue(r, 0, 9), NULL, 10);
	e->lag.bad_ms = strtoll(PQgetvalue(r, 0, 10), NULL, 10);
	PQclear(r);
	if (nomem) {
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	/* the checkpoint; a host without one gets its row (nothing rolled up yet) */
	rc = store_q(c, "SELECT last_ts_ms, state FROM detector_state WHERE host_id = $1::int", 1, prm, 1, &r,
		     "read the checkpoint", err, errlen);
	if (rc != STORE_OK)
		goto out;
	int64_t ckpt = 0;
	if (PQntuples(r) == 1)
		ckpt = store_get_i64(r, 0, 0);
	else
		rc = store_q(c, "INSERT INTO detector_state (host_id, last_ts_ms) VALUES ($1::int, 0) "
			     "ON CONFLICT (host_id) DO NOTHING", 1, prm, 0, NULL, "add the checkpoint", err, errlen);
	if (rc == STORE_OK && st->hook.load) {
		const unsigned char *buf = PQntuples(r) == 1 ? (const unsigned char *)PQgetvalue(r, 0, 1) : NULL;
		size_t len = buf ? (size_t)PQgetlength(r, 0, 1) : 0;
		if (!(e->hs = st->hook.load(st->hook.ctx, e->name, buf, len, err, errlen)))
			rc = STORE_EINTERNAL;
	}
	PQclear(r);
	if (rc != STORE_OK)
		goto out;
	e->enc.host_id = e->host_id;
	e->max_ts = max_ts;
	e->ckpt_ts = ckpt;
	if (max_ts != INT64_MIN && ckpt < max_ts) {
		rc = replay(st, c, e, ckpt, err, errlen);
	} else if (max_ts != INT64_MIN) {
		/* nothing after the checkpoint: the newest row's state alone */
		rc = store_load_state(c, e->host_id, max_ts, &e->enc, err, errlen);
		if (rc == STORE_OK && e->enc.last_ts != INT64_MIN && boot_id) {
			e->enc.boot_id = boot_id;
			boot_id = NULL;
		}
	}
	if (rc == STORE_OK)
		e->valid = true;
out:
	free(boot_id);
	if (rc != STORE_OK)
		own_reset(st, e);
	return rc;
}
