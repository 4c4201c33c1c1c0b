/* pgfail.h - the error message of a failed libpq call, for modules that
 * talk to PostgreSQL directly (alerts, silences) rather than through
 * store_q's status codes. */
#ifndef VMSCOPE_PGFAIL_H
#define VMSCOPE_PGFAIL_H

#include <stddef.h>
#include <libpq-fe.h>

/* Writes "WHAT: <server message without its trailing newline>" into err
 * (the result's message, else the connection's), clears r when not NULL,
 * returns -1. */
int pg_fail(char *err, size_t errlen, const char *what, PGconn *c, PGresult *r);

#endif
