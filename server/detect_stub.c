/* detect_stub.c - store_alerts until the storage layer's connection pool
 * (store_conn_get) lands on main; then server/alert_api.c replaces this
 * file. The detector engine itself lives in detect.c. */
#include "store.h"

int store_alerts(struct store *st, const struct alert_query *q, json_t **out, char *err, size_t errlen)
{
	(void)st; (void)q; (void)err; (void)errlen;
	*out = json_pack("{s:[]}", "alerts");
	return *out ? STORE_OK : STORE_EINTERNAL;
}
