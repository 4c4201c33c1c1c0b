/* admin.h - the admin token (--admin-token-file) guarding the endpoints
 * that change what the server does or knows: PUT/DELETE /api/v1/overrides,
 * DELETE /api/v1/hosts/{host} (docs/security.md "Admin token").
 *
 * No admin token configured: every admin request gets 403 (the endpoints
 * are off). No token presented: 401 with WWW-Authenticate. A token that is
 * not the admin token (an ingest or read token, anything else): 403. The
 * admin token also allows reads (it is checked in place of --read-token on
 * these endpoints), compared in constant time like every token. */
#ifndef VMSCOPE_ADMIN_H
#define VMSCOPE_ADMIN_H

#include <stdbool.h>

#include "app.h"

/* True when rq carries the admin token; otherwise answers 401/403 and
 * returns false. */
bool admin_allowed(struct request *rq);

#endif
