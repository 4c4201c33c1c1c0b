/* detect_stub.c - placeholder so the server links before the detector
 * engine lands; the detectors' branch deletes this file. */
#include <stdlib.h>

#include "detect.h"
#include "store.h"

struct detect_engine { int unused; };

struct detect_engine *detect_engine_new(void) { return calloc(1, sizeof(struct detect_engine)); }
void detect_engine_free(struct detect_engine *eng) { free(eng); }

int detect_store_hook(void *ctx, PGconn *conn, const struct sample *const *fresh, size_t nfresh,
		      char *err, size_t errlen)
{
	(void)ctx; (void)conn; (void)fresh; (void)nfresh; (void)err; (void)errlen;
	return 0;
}

int detect_tick(struct detect_engine *eng, PGconn *conn, int64_t now_ms, char *err, size_t errlen)
{
	(void)eng; (void)conn; (void)now_ms; (void)err; (void)errlen;
	return 0;
}

int store_alerts(struct store *st, const struct alert_query *q, json_t **out, char *err, size_t errlen)
{
	(void)st; (void)q; (void)err; (void)errlen;
	*out = json_pack("{s:[]}", "alerts");
	return *out ? STORE_OK : STORE_EINTERNAL;
}
