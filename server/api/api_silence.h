/* api_silence.h - /api/v1/silences (docs/api.md "Silences", silence.h):
 *   GET    /api/v1/silences[?all=1]   active silences (all: ended ones too); a read
 *   POST   /api/v1/silences           create one from a JSON body; a write
 *   DELETE /api/v1/silences/{id}      end one now; a write
 *
 * Writes need the operator's credential: the admin token (admin.h) when
 * the server has --admin-token-file, else the --read-token when set; a
 * server with neither refuses them (403), whatever its address. An ingest
 * token never grants a write (403), even one equal to the read token. A
 * POST must say Content-Type: application/json (so that a cross-site form
 * cannot post one). */
#ifndef VMSCOPE_API_SILENCE_H
#define VMSCOPE_API_SILENCE_H

#include <microhttpd.h>
#include <stdbool.h>

#include "app.h"

#define SILENCE_MAX_BODY (64 * 1024)

enum MHD_Result api_silences_get(struct request *rq);

/* POST, in libmicrohttpd's three steps: begin on the headers (checks the
 * credential and answers early when it is wrong), data per upload chunk,
 * finish once the body is in. */
enum MHD_Result api_silence_begin(struct request *rq);
enum MHD_Result api_silence_data(struct request *rq, const char *data, size_t len);
enum MHD_Result api_silence_finish(struct request *rq);

enum MHD_Result api_silence_delete(struct request *rq);

/* True when rq carries the write credential; answers 401 / 403 itself
 * otherwise. *who (may be NULL) receives who wrote, for created_by:
 * "admin-token" or "read-token". */
bool api_write_allowed(struct request *rq, const char **who);

#endif
