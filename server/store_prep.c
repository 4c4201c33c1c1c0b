/* store_prep.c - store_q_prep: prepared statements per pooled connection.
 *
 * Why: the ingest statements are large (the row insert carries 18 arrays,
 * the rollup upsert 136 and 132 SET expressions) and with one or a few
 * samples per transaction PostgreSQL spent as long parsing and planning
 * them as running them (pg_stat_statements, docs/scaling.md). Prepared once
 * per connection they are only executed. The detectors' lock and save of
 * their state rows (alert_store.c) run once per transaction too and are
 * prepared the same way.
 *
 * Which statements a connection has prepared is kept with the connection
 * itself (libpq instance data of an event procedure), so a connection the
 * pool reopens, or libpq resets, starts again with none: no registry keyed
 * by pointers that could be reused. A statement prepared inside a
 * transaction that later rolls back stays prepared (prepared statements are
 * not transactional).
 */
#include "store_internal.h"

#include <libpq-events.h>
#include <stdio.h>
#include <stdlib.h>

struct prep_state {
	unsigned done;	/* bit per enum store_prep_id */
};

static int prep_event(PGEventId evt, void *info, void *pass)
{
	(void)pass;
	switch (evt) {
	case PGEVT_CONNRESET: {
		PGconn *c = ((PGEventConnReset *)info)->conn;
		struct prep_state *ps = PQinstanceData(c, prep_event);
		if (ps)
			ps->done = 0;	/* a new session: nothing prepared */
		break;
	}
	case PGEVT_CONNDESTROY: {
		PGconn *c = ((PGEventConnDestroy *)info)->conn;
		free(PQinstanceData(c, prep_event));
		PQsetInstanceData(c, prep_event, NULL);
		break;
	}
	default:
		break;
	}
	return 1;
}

/* The connection's state, registering the event procedure the first time.
 * NULL when out of memory (the caller then runs the statement unprepared). */
static struct prep_state *state_of(PGconn *c)
{
	struct prep_state *ps = PQinstanceData(c, prep_event);

	if (ps)
		return ps;
	if (!(ps = calloc(1, sizeof(*ps))))
		return NULL;
	/* registering twice fails; a registered connection without data
	 * (out of memory earlier) just gets its data set */
	PQregisterEventProc(c, prep_event, "vmscope-prep", NULL);
	if (!PQsetInstanceData(c, prep_event, ps)) {
		free(ps);
		return NULL;
	}
	return ps;
}

int store_q_prep_fmt(PGconn *c, enum store_prep_id id, const char *sql, int nparams,
		     const char *const *params, const int *lengths, const int *formats, int binary,
		     PGresult **out, const char *what, char *err, size_t errlen)
{
	struct prep_state *ps = state_of(c);
	char name[24];

	if (!ps)
		return store_result(c, PQexecParams(c, sql, nparams, NULL, params, lengths, formats, binary), out,
				    what, err, errlen);
	snprintf(name, sizeof(name), "vmscope_%d", (int)id);
	if (!(ps->done & (1u << id))) {
		int rc = store_result(c, PQprepare(c, name, sql, nparams, NULL), NULL, what, err, errlen);
		if (rc != STORE_OK)
			return rc;
		ps->done |= 1u << id;
	}
	return store_result(c, PQexecPrepared(c, name, nparams, params, lengths, formats, binary), out, what,
			    err, errlen);
}

int store_q_prep(PGconn *c, enum store_prep_id id, const char *sql, int nparams,
		 const char *const *params, int binary, PGresult **out, const char *what,
		 char *err, size_t errlen)
{
	return store_q_prep_fmt(c, id, sql, nparams, params, NULL, NULL, binary, out, what, err, errlen);
}
