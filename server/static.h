/* static.h - the dashboard's files from --web DIR: GET / is index.html, a
 * MIME type by extension, no path outside DIR (".." components, encoded
 * or not, and symlinks leading out are refused), Last-Modified with
 * If-Modified-Since, no-cache for HTML and an hour's cache for the rest. */
#ifndef VMSCOPE_STATIC_H
#define VMSCOPE_STATIC_H

#include <microhttpd.h>
#include <stdbool.h>

#include "app.h"

enum MHD_Result static_serve(struct request *rq);

/* The MIME type for a file name by its extension; never NULL. */
const char *static_mime(const char *name);

/* True when path (URL-decoded, starting with '/') may name a file under
 * the web directory: no "." or ".." components, no empty components, no
 * backslash or control characters, at most 1024 bytes. */
bool static_path_ok(const char *path);

#endif
