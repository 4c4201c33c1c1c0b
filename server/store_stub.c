/* store_stub.c - TEMPORARY, http branch only: lets the server link before
 * the storage layer lands. Never merged to main. */
#include "store.h"

#include <stdio.h>
#include <string.h>

int store_open(struct store **out, const struct store_config *cfg, char *err, size_t errlen)
{
	static char dummy;
	*out = NULL;
	if (strstr(cfg->conninfo, "stub-ok")) {
		*out = (struct store *)(void *)&dummy;
		return STORE_OK;
	}
	snprintf(err, errlen, "storage not built yet");
	return STORE_EUNAVAIL;
}
void store_close(struct store *st) { (void)st; }
bool store_ping(struct store *st) { (void)st; return false; }
int store_put_samples(struct store *st, const struct sample *s, size_t n,
		      const struct store_tx_hook *hook, size_t *nfresh, char *err, size_t errlen)
{ (void)st; (void)s; (void)n; (void)hook; (void)nfresh; (void)err; (void)errlen; return STORE_EUNAVAIL; }
int store_hosts(struct store *st, json_t **out, char *err, size_t errlen)
{ (void)st; (void)out; (void)err; (void)errlen; return STORE_EUNAVAIL; }
int store_host(struct store *st, const char *host, json_t **out, char *err, size_t errlen)
{ (void)st; (void)host; (void)out; (void)err; (void)errlen; return STORE_EUNAVAIL; }
int store_cgroups(struct store *st, const char *host, json_t **out, char *err, size_t errlen)
{ (void)st; (void)host; (void)out; (void)err; (void)errlen; return STORE_EUNAVAIL; }
int store_metrics(struct store *st, const char *host, const char *cgroup, json_t **out, char *err, size_t errlen)
{ (void)st; (void)host; (void)cgroup; (void)out; (void)err; (void)errlen; return STORE_EUNAVAIL; }
int store_drop_expired(struct store *st, int64_t now_ms, int *ndropped, char *err, size_t errlen)
{ (void)st; (void)now_ms; (void)ndropped; (void)err; (void)errlen; return STORE_EUNAVAIL; }
int64_t store_oldest_accepted_ms(const struct store *st, int64_t now_ms) { (void)st; return now_ms - 30LL * 86400000; }
int store_series(struct store *st, const struct series_query *q, json_t **out, char *err, size_t errlen)
{ (void)st; (void)q; (void)out; (void)err; (void)errlen; return STORE_EUNAVAIL; }
PGconn *store_conn_get(struct store *st) { (void)st; return NULL; }
void store_conn_put(struct store *st, PGconn *conn, bool broken) { (void)st; (void)conn; (void)broken; }
