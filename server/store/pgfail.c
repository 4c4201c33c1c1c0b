/* pgfail.c - see pgfail.h. */
#include "pgfail.h"
#include "store_internal.h"

#include <stdio.h>
#include <string.h>

int pg_fail(char *err, size_t errlen, const char *what, PGconn *c, PGresult *r)
{
	const char *m = r ? PQresultErrorMessage(r) : PQerrorMessage(c);
	size_t n = strlen(m);

	while (n && (m[n - 1] == '\n' || m[n - 1] == ' '))
		n--;
	if (c)
		store_conn_note_failure(c, r);	/* a hook's caller classifies by it */
	snprintf(err, errlen, "%s: %.*s", what, (int)n, m);
	if (r)
		PQclear(r);
	return -1;
}
