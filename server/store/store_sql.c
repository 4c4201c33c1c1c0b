/* store_sql.c - the bottom layer of the store: running a statement and
 * classifying its failure (store_q, store_q_begin, store_result), the
 * accessors of binary result rows, prepared statements per pooled
 * connection and pipelined writes. Calls nothing else of the store, so
 * every other store_*.c can call it (store_internal.h).
 *
 * Prepared statements (store_q_prep): the ingest statements are large
 * (the row insert carries 18 arrays, the rollup upsert 136 and 132 SET
 * expressions) and with one or a few
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
 *
 * Pipelined writes (store_q_prep_send, store_pipe_finish, store_commit):
 * an ingest transaction's writes need no answer before COMMIT, so they are
 * sent without waiting (libpq pipeline mode) and their results read with
 * the next statement that needs one, or with COMMIT: the row insert and the
 * rollup merge travel with the detectors' lock, their state update with
 * COMMIT. Three round trips per transaction instead of six; each round trip
 * costs both processes a wake-up and a few system calls, which were most of
 * the server's CPU (docs/scaling.md). The commands pending on a connection
 * are kept in the same instance data.
 */
#include "store_internal.h"
#include "store_health.h"

#include <arpa/inet.h>
#include <endian.h>
#include <libpq-events.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SQLSTATEs that mean "the database cannot serve this now" (away, busy,
 * out of disk or memory, read-only): the client should retry later, so
 * STORE_EUNAVAIL (HTTP 503). The list and the reasons: store_health.c. */
bool store_unavailable_state(const char *s)
{
	return db_unavail_of_sqlstate(s) != DBU_NONE;
}

int store_q(PGconn *c, const char *sql, int nparams, const char *const *params, int binary,
	    PGresult **out, const char *what, char *err, size_t errlen)
{
	int rc = store_pipe_finish(c, NULL, err, errlen);	/* pipelined writes first */
	if (rc != STORE_OK) {
		if (out)
			*out = NULL;
		return rc;
	}
	return store_result(c, PQexecParams(c, sql, nparams, NULL, params, NULL, NULL, binary), out,
			    what, err, errlen);
}

int store_result(PGconn *c, PGresult *r, PGresult **out, const char *what, char *err, size_t errlen)
{
	ExecStatusType s = PQresultStatus(r);

	if (out)
		*out = NULL;
	if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) {
		if (out)
			*out = r;
		else
			PQclear(r);
		return STORE_OK;
	}
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *m = r ? PQresultErrorMessage(r) : PQerrorMessage(c);

	store_conn_note_failure(c, r);
	size_t n = strlen(m);
	while (n && (m[n - 1] == '\n' || m[n - 1] == ' '))
		n--;
	if (err && errlen)
		snprintf(err, errlen, "could not %s: %.*s", what, (int)n, m);
	int rc = (PQstatus(c) != CONNECTION_OK || store_unavailable_state(state)) ? STORE_EUNAVAIL : STORE_EINTERNAL;
	PQclear(r);
	return rc;
}

int store_q_begin(PGconn *c, const char *sql, int nparams, const char *const *params, int binary,
		  PGresult **out, const char *what, char *err, size_t errlen)
{
	PGresult *r, *res = NULL;
	int rc = STORE_OK;

	*out = NULL;
	if ((rc = store_pipe_finish(c, NULL, err, errlen)) != STORE_OK)
		return rc;
	if (!PQenterPipelineMode(c) ||
	    !PQsendQueryParams(c, "BEGIN", 0, NULL, NULL, NULL, NULL, 0) ||
	    !PQsendQueryParams(c, sql, nparams, NULL, params, NULL, NULL, binary) || !PQpipelineSync(c)) {
		snprintf(err, errlen, "could not %s: %s", what, PQerrorMessage(c));
		PQexitPipelineMode(c);
		return PQstatus(c) == CONNECTION_OK ? STORE_EINTERNAL : STORE_EUNAVAIL;
	}
	/* two statements, each a result then NULL, then the sync marker */
	for (int q = 0; q < 2; q++) {
		while ((r = PQgetResult(c))) {
			ExecStatusType st = PQresultStatus(r);
			if (rc == STORE_OK && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
				const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
				store_conn_note_failure(c, r);
				const char *m = PQresultErrorMessage(r);
				size_t n = strlen(m);
				while (n && (m[n - 1] == '\n' || m[n - 1] == ' '))
					n--;
				snprintf(err, errlen, "could not %s: %.*s", what, (int)n, *m ? m : "pipeline aborted");
				rc = (PQstatus(c) != CONNECTION_OK || store_unavailable_state(state)) ? STORE_EUNAVAIL
												 : STORE_EINTERNAL;
			}
			if (q == 1 && st == PGRES_TUPLES_OK && !res)
				res = r;
			else
				PQclear(r);
			if (PQstatus(c) != CONNECTION_OK)
				break;
		}
		if (PQstatus(c) != CONNECTION_OK)
			break;
	}
	if (PQstatus(c) == CONNECTION_OK) {
		r = PQgetResult(c);	/* PGRES_PIPELINE_SYNC */
		PQclear(r);
		PQexitPipelineMode(c);
	} else {
		rc = STORE_EUNAVAIL;
		if (err && errlen && !*err)
			snprintf(err, errlen, "could not %s: connection lost", what);
	}
	if (rc != STORE_OK) {
		PQclear(res);
		return rc;
	}
	*out = res;
	return STORE_OK;
}

int64_t store_get_i64(const PGresult *r, int row, int col)
{
	uint64_t v;
	memcpy(&v, PQgetvalue(r, row, col), 8);
	return (int64_t)be64toh(v);
}

int32_t store_get_i32(const PGresult *r, int row, int col)
{
	uint32_t v;
	/* an id column widened to bigint (095_host_keys.sql) whose values fit */
	if (PQgetlength(r, row, col) == 8)
		return (int32_t)store_get_i64(r, row, col);
	memcpy(&v, PQgetvalue(r, row, col), 4);
	return (int32_t)ntohl(v);
}

int16_t store_get_i16(const PGresult *r, int row, int col)
{
	uint16_t v;
	memcpy(&v, PQgetvalue(r, row, col), 2);
	return (int16_t)ntohs(v);
}

bool store_get_bool(const PGresult *r, int row, int col)
{
	return PQgetvalue(r, row, col)[0] != 0;
}

/* at most this many commands wait in a pipeline (more are flushed first):
 * a transaction sends a statement or two per host */
#define PIPE_MAX 256

struct prep_state {
	unsigned done;	/* bit per enum store_prep_id */
	int nq;		/* commands sent in the open pipeline, results not read */
	const char *what[PIPE_MAX];	/* for messages: "store samples" */
	int prep[PIPE_MAX];	/* a PREPARE of that enum store_prep_id, or -1 */
	PGresult **keep[PIPE_MAX];	/* where the command's result goes, or NULL */
	char fail_state[6];	/* SQLSTATE of the first failure since store_conn_fail_reset */
};

static int prep_event(PGEventId evt, void *info, void *pass)
{
	(void)pass;
	switch (evt) {
	case PGEVT_CONNRESET: {
		PGconn *c = ((PGEventConnReset *)info)->conn;
		struct prep_state *ps = PQinstanceData(c, prep_event);
		if (ps) {
			ps->done = 0;	/* a new session: nothing prepared, nothing pending */
			ps->nq = 0;
		}
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

void store_conn_note_failure(PGconn *c, const PGresult *r)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	struct prep_state *ps = state_of(c);

	if (ps && !ps->fail_state[0])
		snprintf(ps->fail_state, sizeof(ps->fail_state), "%s", state && strlen(state) == 5 ? state : "?????");
}

void store_conn_fail_reset(PGconn *c)
{
	struct prep_state *ps = state_of(c);

	if (ps)
		ps->fail_state[0] = '\0';
}

const char *store_conn_fail_state(PGconn *c)
{
	struct prep_state *ps = c ? PQinstanceData(c, prep_event) : NULL;

	return ps && ps->fail_state[0] && ps->fail_state[0] != '?' ? ps->fail_state : NULL;
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
	if (ps->nq > 0) {
		/* writes are waiting: this statement goes with them, one round trip */
		int rc = store_q_prep_send(c, id, sql, nparams, params, lengths, formats, binary, what, err, errlen);
		return rc != STORE_OK ? rc : store_pipe_finish(c, out, err, errlen);
	}
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

/* "could not WHAT: message" of a failed result into err (if any); the
 * STORE_E* code it means. */
static int pipe_error(PGconn *c, PGresult *r, const char *what, char *err, size_t errlen)
{
	const char *m = PQresultErrorMessage(r);
	size_t n = strlen(m);
	while (n && (m[n - 1] == '\n' || m[n - 1] == ' '))
		n--;
	store_conn_note_failure(c, r);
	if (err && errlen)
		snprintf(err, errlen, "could not %s: %.*s", what, (int)n, n ? m : "an earlier statement failed");
	return PQstatus(c) != CONNECTION_OK || store_unavailable_state(PQresultErrorField(r, PG_DIAG_SQLSTATE))
		       ? STORE_EUNAVAIL : STORE_EINTERNAL;
}

int store_pipe_finish(PGconn *c, PGresult **last, char *err, size_t errlen)
{
	struct prep_state *ps = PQinstanceData(c, prep_event);
	int rc = STORE_OK;

	if (last)
		*last = NULL;
	if (PQpipelineStatus(c) == PQ_PIPELINE_OFF)
		return STORE_OK;
	int nq = ps ? ps->nq : 0;
	if (ps)
		ps->nq = 0;
	if (!PQpipelineSync(c)) {
		if (err && errlen)
			snprintf(err, errlen, "could not send: %s", PQerrorMessage(c));
		return STORE_EUNAVAIL;
	}
	/* each command: its result, then NULL; then the sync marker */
	for (int q = 0; q < nq && PQstatus(c) == CONNECTION_OK; q++) {
		PGresult *r;
		while ((r = PQgetResult(c))) {
			ExecStatusType st = PQresultStatus(r);
			if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
				if (ps->prep[q] >= 0)
					ps->done &= ~(1u << ps->prep[q]);	/* not prepared after all */
				if (rc == STORE_OK)	/* the first failure is the cause */
					rc = pipe_error(c, r, ps->what[q], err, errlen);
			}
			bool good = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
			if (ps->keep[q] && good && !*ps->keep[q])
				*ps->keep[q] = r;
			else if (last && q == nq - 1 && rc == STORE_OK && st == PGRES_TUPLES_OK && !*last)
				*last = r;
			else
				PQclear(r);
			if (PQstatus(c) != CONNECTION_OK)
				break;
		}
	}
	if (PQstatus(c) == CONNECTION_OK) {
		PQclear(PQgetResult(c));	/* PGRES_PIPELINE_SYNC */
		PQexitPipelineMode(c);
	} else {
		if (rc == STORE_OK && err && errlen)
			snprintf(err, errlen, "could not %s: connection lost", nq ? ps->what[nq - 1] : "send");
		rc = STORE_EUNAVAIL;
	}
	if (rc != STORE_OK && last) {
		PQclear(*last);
		*last = NULL;
	}
	return rc;
}

/* Queues one command on ps (the caller checked there is room). */
static void pipe_note(struct prep_state *ps, const char *what, int prep, PGresult **keep)
{
	ps->what[ps->nq] = what;
	ps->prep[ps->nq] = prep;
	ps->keep[ps->nq] = keep;
	if (keep)
		*keep = NULL;
	ps->nq++;
}

int store_q_prep_send(PGconn *c, enum store_prep_id id, const char *sql, int nparams,
		      const char *const *params, const int *lengths, const int *formats, int binary,
		      const char *what, char *err, size_t errlen)
{
	return store_q_prep_keep(c, id, sql, nparams, params, lengths, formats, binary, NULL, what, err,
				 errlen);
}

int store_q_send(PGconn *c, const char *sql, int nparams, const char *const *params, PGresult **keep,
		 const char *what, char *err, size_t errlen)
{
	return store_q_send_fmt(c, sql, nparams, params, NULL, NULL, keep, what, err, errlen);
}

int store_q_send_fmt(PGconn *c, const char *sql, int nparams, const char *const *params, const int *lengths,
		     const int *formats, PGresult **keep, const char *what, char *err, size_t errlen)
{
	struct prep_state *ps = state_of(c);

	if (!ps) {	/* out of memory: run it now */
		int rc = store_pipe_finish(c, NULL, err, errlen);
		if (rc == STORE_OK)
			rc = store_result(c, PQexecParams(c, sql, nparams, NULL, params, lengths, formats, 0), keep,
					  what, err, errlen);
		return rc;
	}
	if (ps->nq + 1 > PIPE_MAX) {
		int rc = store_pipe_finish(c, NULL, err, errlen);
		if (rc != STORE_OK)
			return rc;
	}
	if ((PQpipelineStatus(c) == PQ_PIPELINE_OFF && !PQenterPipelineMode(c)) ||
	    !PQsendQueryParams(c, sql, nparams, NULL, params, lengths, formats, 0)) {
		if (err && errlen)
			snprintf(err, errlen, "could not %s: %s", what, PQerrorMessage(c));
		store_pipe_finish(c, NULL, NULL, 0);
		return PQstatus(c) == CONNECTION_OK ? STORE_EINTERNAL : STORE_EUNAVAIL;
	}
	pipe_note(ps, what, -1, keep);
	return STORE_OK;
}

int store_q_prep_keep(PGconn *c, enum store_prep_id id, const char *sql, int nparams,
		      const char *const *params, const int *lengths, const int *formats, int binary,
		      PGresult **keep, const char *what, char *err, size_t errlen)
{
	struct prep_state *ps = state_of(c);
	char name[24];

	if (!ps)	/* out of memory: run it now */
		return store_q_prep_fmt(c, id, sql, nparams, params, lengths, formats, binary, keep, what, err,
					errlen);
	if (ps->nq + 2 > PIPE_MAX) {
		int rc = store_pipe_finish(c, NULL, err, errlen);
		if (rc != STORE_OK)
			return rc;
	}
	if (PQpipelineStatus(c) == PQ_PIPELINE_OFF && !PQenterPipelineMode(c))
		goto fail;
	snprintf(name, sizeof(name), "vmscope_%d", (int)id);
	if (!(ps->done & (1u << id))) {
		if (!PQsendPrepare(c, name, sql, nparams, NULL))
			goto fail;
		ps->done |= 1u << id;	/* undone by store_pipe_finish if it fails */
		pipe_note(ps, what, (int)id, NULL);
	}
	if (!PQsendQueryPrepared(c, name, nparams, params, lengths, formats, binary))
		goto fail;
	pipe_note(ps, what, -1, keep);
	return STORE_OK;
fail:
	if (err && errlen)
		snprintf(err, errlen, "could not %s: %s", what, PQerrorMessage(c));
	store_pipe_finish(c, NULL, NULL, 0);
	return PQstatus(c) == CONNECTION_OK ? STORE_EINTERNAL : STORE_EUNAVAIL;
}

int store_commit(PGconn *c, char *err, size_t errlen)
{
	struct prep_state *ps = PQinstanceData(c, prep_event);

	if (PQpipelineStatus(c) == PQ_PIPELINE_OFF || !ps)
		return store_q(c, "COMMIT", 0, NULL, 0, NULL, "commit", err, errlen);
	if (ps->nq + 1 > PIPE_MAX) {
		int rc = store_pipe_finish(c, NULL, err, errlen);
		if (rc != STORE_OK)
			return rc;
		return store_q(c, "COMMIT", 0, NULL, 0, NULL, "commit", err, errlen);
	}
	if (!PQsendQueryParams(c, "COMMIT", 0, NULL, NULL, NULL, NULL, 0)) {
		if (err && errlen)
			snprintf(err, errlen, "could not commit: %s", PQerrorMessage(c));
		store_pipe_finish(c, NULL, NULL, 0);
		return PQstatus(c) == CONNECTION_OK ? STORE_EINTERNAL : STORE_EUNAVAIL;
	}
	pipe_note(ps, "commit", -1, NULL);
	return store_pipe_finish(c, NULL, err, errlen);
}
