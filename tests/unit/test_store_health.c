/* test_store_health.c - which SQLSTATEs mean "retry later" (503, not 500)
 * and the write-health period /healthz reports (store_health.h). The real
 * disk-full and read-only databases: tests/e2e/test_db_degraded.sh. */
#include "harness.h"
#include "store_health.h"

#include <time.h>

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_classify(void)
{
	CHECK_INT(db_unavail_of_sqlstate("53100"), DBU_DISK_FULL);
	CHECK_INT(db_unavail_of_sqlstate("53200"), DBU_OUT_OF_MEMORY);
	CHECK_INT(db_unavail_of_sqlstate("53300"), DBU_TOO_MANY_CONNECTIONS);
	CHECK_INT(db_unavail_of_sqlstate("53400"), DBU_RESOURCES);
	CHECK_INT(db_unavail_of_sqlstate("53000"), DBU_RESOURCES);
	CHECK_INT(db_unavail_of_sqlstate("25006"), DBU_READ_ONLY);
	CHECK_INT(db_unavail_of_sqlstate("57P03"), DBU_NOT_ACCEPTING);
	CHECK_INT(db_unavail_of_sqlstate("57P01"), DBU_NOT_ACCEPTING);
	CHECK_INT(db_unavail_of_sqlstate("08006"), DBU_UNREACHABLE);
	CHECK_INT(db_unavail_of_sqlstate("40001"), DBU_BUSY);
	CHECK_INT(db_unavail_of_sqlstate("57014"), DBU_BUSY);
	/* bugs and bad data are not "retry later" */
	CHECK_INT(db_unavail_of_sqlstate("23505"), DBU_NONE);	/* unique violation */
	CHECK_INT(db_unavail_of_sqlstate("42P01"), DBU_NONE);	/* undefined table */
	CHECK_INT(db_unavail_of_sqlstate("25P02"), DBU_NONE);	/* in failed transaction */
	CHECK_INT(db_unavail_of_sqlstate("5310"), DBU_NONE);
	CHECK_INT(db_unavail_of_sqlstate(NULL), DBU_NONE);
	CHECK_STR(db_unavail_name(DBU_DISK_FULL), "disk_full");
	CHECK_STR(db_unavail_text(DBU_READ_ONLY), "database is read-only");
}

static void test_period(void)
{
	struct store_write_health w;
	int64_t t = now_ms();

	store_health_reset();
	store_health_get(t, &w);
	CHECK(!w.failing);
	CHECK_INT(w.reason, DBU_NONE);
	/* a 500 (a bug) does not make the database degraded */
	store_health_note_write(STORE_EINTERNAL, "42P01", "could not store samples: no such table");
	store_health_get(now_ms(), &w);
	CHECK(!w.failing);
	store_health_note_write(STORE_EUNAVAIL, "53100", "could not extend file: No space left on device");
	store_health_note_write(STORE_EUNAVAIL, "53100", "could not extend file: No space left on device");
	store_health_get(now_ms(), &w);
	CHECK(w.failing);
	CHECK_INT(w.reason, DBU_DISK_FULL);
	CHECK_STR(w.sqlstate, "53100");
	CHECK_CONTAINS(w.message, "No space left");
	CHECK_INT(w.failures[DBU_DISK_FULL], 2);
	CHECK(w.since_ms >= t);
	/* without a write to end it, the period ends STORE_HEALTH_FAIL_HOLD_MS later */
	store_health_get(w.last_fail_ms + STORE_HEALTH_FAIL_HOLD_MS + 1, &w);
	CHECK(!w.failing);
	/* no SQLSTATE: the connection failed */
	store_health_note_write(STORE_EUNAVAIL, NULL, "could not connect");
	store_health_get(now_ms(), &w);
	CHECK(w.failing);
	CHECK_INT(w.reason, DBU_UNREACHABLE);
	CHECK_STR(w.sqlstate, "");
	/* refused at login: reachable, retry later, not "unreachable" */
	store_health_note_write(STORE_EUNAVAIL, NULL,
				"could not connect to the database: connection to server at \"127.0.0.1\", port 5432 "
				"failed: FATAL:  too many connections for role \"vms\"");
	store_health_get(now_ms(), &w);
	CHECK_INT(w.reason, DBU_TOO_MANY_CONNECTIONS);
	CHECK_STR(w.sqlstate, "53300");
	CHECK_STR(db_sqlstate_of_connect_error("FATAL:  sorry, too many clients already"), "53300");
	CHECK_STR(db_sqlstate_of_connect_error("FATAL:  remaining connection slots are reserved for roles with "
					       "the SUPERUSER attribute"), "53300");
	CHECK_STR(db_sqlstate_of_connect_error("FATAL:  the database system is starting up"), "57P03");
	CHECK(db_sqlstate_of_connect_error("Connection refused") == NULL);
	CHECK(db_sqlstate_of_connect_error(NULL) == NULL);
	/* a write that succeeds ends the period at once; the counts stay */
	store_health_note_write(STORE_OK, NULL, NULL);
	store_health_get(now_ms(), &w);
	CHECK(!w.failing);
	CHECK_INT(w.since_ms, 0);
	CHECK_INT(w.failures[DBU_DISK_FULL], 2);
	CHECK_INT(w.failures[DBU_UNREACHABLE], 1);
	CHECK_INT(w.failures[DBU_TOO_MANY_CONNECTIONS], 1);
}

int main(void)
{
	test_classify();
	test_period();
	return harness_report("test_store_health");
}
