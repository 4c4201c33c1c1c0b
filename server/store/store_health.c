/* store_health.c - the SQLSTATEs that mean "retry later" and the write
 * health of the process (see store_health.h). */
#include "store_health.h"
#include "store_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const struct {
	const char *state;	/* a SQLSTATE, or a class when 2 characters */
	enum db_unavail reason;
} retry_later[] = {
	{ "08", DBU_UNREACHABLE },	/* connection exceptions */
	{ "53100", DBU_DISK_FULL },
	{ "53200", DBU_OUT_OF_MEMORY },
	{ "53300", DBU_TOO_MANY_CONNECTIONS },
	{ "53", DBU_RESOURCES },	/* 53000, 53400 */
	{ "25006", DBU_READ_ONLY },
	{ "57P01", DBU_NOT_ACCEPTING },	/* admin shutdown */
	{ "57P02", DBU_NOT_ACCEPTING },	/* crash shutdown */
	{ "57P03", DBU_NOT_ACCEPTING },	/* cannot connect now: starting, in recovery */
	{ "55P03", DBU_BUSY },		/* lock not available (lock_timeout) */
	{ "57014", DBU_BUSY },		/* statement timeout */
	{ "40001", DBU_BUSY },		/* serialization failure */
	{ "40P01", DBU_BUSY },		/* deadlock detected */
};

static const char *const names[DBU_N] = {
	"none", "unreachable", "disk_full", "out_of_memory", "too_many_connections", "resources",
	"read_only", "not_accepting", "busy",
};
static const char *const texts[DBU_N] = {
	"no error", "database unreachable", "disk full", "out of memory", "too many connections",
	"insufficient resources", "database is read-only", "database not accepting connections",
	"database busy",
};

enum db_unavail db_unavail_of_sqlstate(const char *s)
{
	if (!s || strlen(s) != 5)
		return DBU_NONE;
	for (size_t i = 0; i < sizeof(retry_later) / sizeof(retry_later[0]); i++)
		if (strncmp(s, retry_later[i].state, strlen(retry_later[i].state)) == 0)
			return retry_later[i].reason;
	return DBU_NONE;
}

/* libpq gives no SQLSTATE for a connection the server refused at login:
 * its FATAL message is all there is. These are PostgreSQL's own texts
 * (src/backend/utils/init/postinit.c, postmaster.c) for the refusals
 * that mean "reachable, retry later"; a server with lc_messages other
 * than English is classified "unreachable", which is still 503. */
static const struct {
	const char *text;
	const char *state;
} connect_refusals[] = {
	{ "too many connections for role", "53300" },
	{ "too many connections for database", "53300" },
	{ "too many clients already", "53300" },
	{ "remaining connection slots are reserved", "53300" },
	{ "the database system is starting up", "57P03" },
	{ "the database system is in recovery mode", "57P03" },
	{ "the database system is not yet accepting connections", "57P03" },
	{ "the database system is not accepting connections", "57P03" },
	{ "the database system is shutting down", "57P03" },
};

const char *db_sqlstate_of_connect_error(const char *msg)
{
	for (size_t i = 0; msg && i < sizeof(connect_refusals) / sizeof(connect_refusals[0]); i++)
		if (strstr(msg, connect_refusals[i].text))
			return connect_refusals[i].state;
	return NULL;
}

const char *db_unavail_name(enum db_unavail r)
{
	return r < DBU_N ? names[r] : "unknown";
}

const char *db_unavail_text(enum db_unavail r)
{
	return r < DBU_N ? texts[r] : "unknown";
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct store_write_health wh;	/* guarded by mu; failing is derived at read */
static bool failing_now;		/* the last write failed (no success since) */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void store_health_note_write(int rc, const char *sqlstate, const char *err)
{
	if (rc != STORE_OK && rc != STORE_EUNAVAIL)
		return;
	int64_t t = now_ms();
	pthread_mutex_lock(&mu);
	if (rc == STORE_OK) {
		failing_now = false;
		wh.since_ms = 0;
	} else {
		if (!db_unavail_of_sqlstate(sqlstate))
			sqlstate = db_sqlstate_of_connect_error(err);	/* refused at login? */
		enum db_unavail r = db_unavail_of_sqlstate(sqlstate);
		if (r == DBU_NONE)
			r = DBU_UNREACHABLE;	/* no SQLSTATE: the connection failed */
		if (!failing_now)
			wh.since_ms = t;
		failing_now = true;
		wh.reason = r;
		wh.last_fail_ms = t;
		wh.failures[r]++;
		snprintf(wh.sqlstate, sizeof(wh.sqlstate), "%s", sqlstate && db_unavail_of_sqlstate(sqlstate) ? sqlstate : "");
		snprintf(wh.message, sizeof(wh.message), "%s", err ? err : "");
	}
	pthread_mutex_unlock(&mu);
}

void store_health_get(int64_t now, struct store_write_health *out)
{
	pthread_mutex_lock(&mu);
	*out = wh;
	out->failing = failing_now && now - wh.last_fail_ms < STORE_HEALTH_FAIL_HOLD_MS;
	if (!out->failing)
		out->since_ms = 0;
	pthread_mutex_unlock(&mu);
}

void store_health_reset(void)
{
	pthread_mutex_lock(&mu);
	memset(&wh, 0, sizeof(wh));
	failing_now = false;
	pthread_mutex_unlock(&mu);
}

/* One query: reachable, and read-only for new transactions (a hot
 * standby, or default_transaction_read_only)? Returns DBU_NONE,
 * DBU_READ_ONLY, or the reason it could not be asked; msg the error. */
static enum db_unavail probe(struct store *st, char *msg, size_t msglen)
{
	PGresult *r = NULL;
	PGconn *c = db_pool_get(st->pool, STORE_POOL_WAIT_MS, msg, msglen);

	if (!c) {
		enum db_unavail why = db_unavail_of_sqlstate(db_sqlstate_of_connect_error(msg));
		return why ? why : DBU_UNREACHABLE;
	}
	store_conn_fail_reset(c);
	int rc = store_q(c, "SELECT current_setting('transaction_read_only') = 'on'", 0, NULL, 0, &r, "ping", msg,
			 msglen);
	enum db_unavail state = DBU_NONE;
	if (rc != STORE_OK) {
		state = db_unavail_of_sqlstate(store_conn_fail_state(c));
		if (state == DBU_NONE)
			state = rc == STORE_EUNAVAIL ? DBU_UNREACHABLE : DBU_RESOURCES;
	} else if (PQgetvalue(r, 0, 0)[0] == 't') {
		state = DBU_READ_ONLY;
		snprintf(msg, msglen, "transactions are read-only (a standby, or default_transaction_read_only)");
	}
	PQclear(r);
	db_pool_put(st->pool, c, rc == STORE_EUNAVAIL);
	return state;
}

bool store_health_check(struct store *st, int64_t now, struct store_health_report *out)
{
	char msg[320] = "";

	memset(out, 0, sizeof(*out));
	store_health_get(now, &out->writes);
	out->state = st ? probe(st, msg, sizeof(msg)) : DBU_UNREACHABLE;
	out->db_up = out->state == DBU_NONE || out->state == DBU_READ_ONLY;
	if (!st)
		snprintf(msg, sizeof(msg), "the database has not been reached since the server started");
	if (out->state == DBU_NONE && out->writes.failing) {
		out->state = out->writes.reason;
		out->database = "writes_failing";
		snprintf(out->reason, sizeof(out->reason), "writes fail: %s (%s)", db_unavail_text(out->state),
			 out->writes.message);
	} else if (out->state == DBU_READ_ONLY) {
		out->database = "read_only";
		snprintf(out->reason, sizeof(out->reason), "writes fail: %s: %s", db_unavail_text(out->state), msg);
	} else if (out->state == DBU_TOO_MANY_CONNECTIONS || out->state == DBU_NOT_ACCEPTING) {
		out->database = "refusing_connections";	/* it answers, with a refusal */
		snprintf(out->reason, sizeof(out->reason), "%s: %s", db_unavail_text(out->state), msg);
	} else if (out->state != DBU_NONE) {
		out->database = "unreachable";
		snprintf(out->reason, sizeof(out->reason), "%s: %s", db_unavail_text(out->state), msg);
	} else {
		out->database = "ok";
	}
	return out->state == DBU_NONE;
}
