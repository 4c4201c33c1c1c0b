/* notify_http.h - one HTTP POST of a JSON body with libcurl, for the
 * notifier (notify.h): a reused easy handle (keep-alive to the receivers),
 * a time limit per request, http and https only, no redirects followed,
 * TLS verified against the system's CAs, the answer's body read and
 * dropped (at most 64 KiB kept for the log).
 *
 * Ownership: notify_http_new returns a handle the caller frees with
 * notify_http_free. Not thread-safe: the notifier thread owns it. Call
 * curl_global_init before the first notify_http_new. */
#ifndef VMSCOPE_NOTIFY_HTTP_H
#define VMSCOPE_NOTIFY_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct notify_http;

/* NULL when out of memory. */
struct notify_http *notify_http_new(long timeout_s);
void notify_http_free(struct notify_http *h);

/* POSTs body (Content-Type: application/json) to url. Returns the HTTP
 * status, or 0 when no answer came (err says why: "could not connect:
 * ...", "timed out after 10 s"); for a status outside 2xx err holds the
 * start of the answer's body. */
long notify_http_post(struct notify_http *h, const char *url, const char *body, char *err, size_t errlen);

/* True when a POST that got status (0: no answer) is worth retrying: no
 * answer, 408, 429 and 5xx. Any other 4xx is the receiver refusing the
 * payload; retrying would not help. */
bool notify_http_retryable(long status);

#endif
