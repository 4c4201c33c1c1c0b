/* static.h - the dashboard's files from --web DIR: GET / is index.html, a
 * MIME type by extension, no path outside DIR (".." components, encoded
 * or not, and symlinks leading out are refused), Last-Modified with
 * If-Modified-Since, an ETag with If-None-Match, gzip for text files when
 * the client accepts it, no-cache for HTML and an hour's cache for the
 * rest. */
#ifndef VMSCOPE_STATIC_H
#define VMSCOPE_STATIC_H

#include <microhttpd.h>
#include <stdbool.h>

#include "app.h"

enum MHD_Result static_serve(struct request *rq);

/* The MIME type for a file name by its extension; never NULL. */
const char *static_mime(const char *name);

/* True when path (URL-decoded, starting with '/') may name a file under
 * the web directory: no component starting with "." (".", "..", dotfiles), no
 * empty components, no backslash or control characters, at most 1024 bytes. */
bool static_path_ok(const char *path);

/* True when an Accept-Encoding value (NULL: absent) accepts gzip. */
bool static_accepts_gzip(const char *accept_encoding);

/* True for the MIME types worth compressing (text, JSON, SVG). */
bool static_compressible(const char *mime);

/* gzip (RFC 1952) of in[0..len) into *out (malloc'd, the caller frees). 0 or -1. */
int static_gzip(const void *in, size_t len, unsigned char **out, size_t *outlen);

/* The dashboard's third-party files (uPlot, copied into web_dir/vendor by
 * `make deps`): the first one missing or unreadable under web_dir, or
 * NULL when all are there. The server says so at start: without them the
 * host view cannot draw (the page itself also says what is missing). */
const char *static_missing_vendor(const char *web_dir);

/* A strong ETag for a file version (size, mtime) and its encoding, quoted. */
void static_etag(long long size, long long mtime_s, long mtime_ns, bool gz, char *buf, size_t len);

#endif
