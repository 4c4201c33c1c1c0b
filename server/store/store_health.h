/* store_health.h - whether the database takes writes now, and why not.
 *
 * A database can answer `SELECT 1` and still refuse every write: its disk
 * is full, it ran out of memory, it was failed over and is now a read-only
 * standby, or default_transaction_read_only is on. Those errors mean
 * "retry later" (HTTP 503 with Retry-After, never 500), and /healthz must
 * say the server is degraded while they last. This module names the
 * SQLSTATEs that mean "retry later", and keeps the outcome of the ingest
 * transactions (the writes that matter) process-wide: the last failure,
 * its reason, since when writes fail, and how many failed per reason.
 * Thread-safe (a mutex; the counters are read under it too).
 */
#ifndef VMSCOPE_STORE_HEALTH_H
#define VMSCOPE_STORE_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Why the database cannot serve now. DBU_NONE: a SQLSTATE that is not
 * "retry later" (a bug, bad data: HTTP 500 or 400). */
enum db_unavail {
	DBU_NONE,
	DBU_UNREACHABLE,	/* no connection, or it broke (class 08) */
	DBU_DISK_FULL,		/* 53100 */
	DBU_OUT_OF_MEMORY,	/* 53200 */
	DBU_TOO_MANY_CONNECTIONS,	/* 53300 */
	DBU_RESOURCES,		/* 53000, 53400: other insufficient resources */
	DBU_READ_ONLY,		/* 25006: a standby after failover, default_transaction_read_only */
	DBU_NOT_ACCEPTING,	/* 57P01-57P03: shutting down, starting, in recovery */
	DBU_BUSY,		/* 55P03, 57014, 40001, 40P01: lock or statement timeout, conflicts */
	DBU_N
};

/* The reason a SQLSTATE names; DBU_NONE for NULL or any other state. */
enum db_unavail db_unavail_of_sqlstate(const char *sqlstate);

/* The SQLSTATE of a connection refused at login, from the server's
 * message (libpq keeps no SQLSTATE for it): "53300" for too many
 * connections, "57P03" for starting up, in recovery or shutting down;
 * NULL for anything else (unreachable). */
const char *db_sqlstate_of_connect_error(const char *msg);

/* "disk_full" (a Prometheus label value) and "disk full" (for messages). */
const char *db_unavail_name(enum db_unavail r);
const char *db_unavail_text(enum db_unavail r);

/* How long a write failure keeps /healthz degraded when no write comes to
 * end it: agents retry every few seconds (Retry-After), so a database that
 * still fails is seen failing again long before. */
#define STORE_HEALTH_FAIL_HOLD_MS 60000

/* Records the outcome of one write transaction: rc a STORE_E* code;
 * sqlstate the first failing statement's (NULL: none or unknown); err its
 * message. Only STORE_EUNAVAIL counts as a failure here (a 500 is a bug,
 * not a degraded database); STORE_OK ends a failing period. */
void store_health_note_write(int rc, const char *sqlstate, const char *err);

/* A snapshot of the write health at now_ms. */
struct store_write_health {
	bool failing;		/* the last write failed within STORE_HEALTH_FAIL_HOLD_MS, none succeeded since */
	enum db_unavail reason;	/* of the last failure (DBU_NONE: never failed) */
	char sqlstate[6];	/* of the last failure, "" when none */
	char message[320];	/* of the last failure */
	int64_t since_ms;	/* first failure of the failing period (0 when not failing) */
	int64_t last_fail_ms;	/* last failure ever, 0 when none */
	uint64_t failures[DBU_N];	/* failed write transactions per reason, since start */
};
void store_health_get(int64_t now_ms, struct store_write_health *out);

/* Forgets everything (tests). */
void store_health_reset(void);

/* What /healthz reports: the database's state seen by one query now (is it
 * reachable, is it read-only) and the writes' recent outcome. */
struct store_health_report {
	enum db_unavail state;	/* DBU_NONE: healthy */
	const char *database;	/* "ok", "unreachable", "refusing_connections", "read_only", "writes_failing" */
	bool db_up;		/* a query succeeded just now (vmscope_database_up) */
	char reason[400];	/* a sentence for people, "" when healthy */
	struct store_write_health writes;
};

/* Fills out for now_ms. st may be NULL (the store was never opened).
 * Returns true when healthy. */
bool store_health_check(struct store *st, int64_t now_ms, struct store_health_report *out);

#endif
