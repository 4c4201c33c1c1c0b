/* notify_http.h - POSTs of JSON bodies with libcurl for the notifier
 * (notify.h), run side by side in one curl multi handle so that a receiver
 * that does not answer holds up only its own transfer: each transfer has
 * its own time limit. http and https only, no redirects followed, TLS
 * verified against the system's CAs, the answer's body read and dropped (at
 * most 512 bytes kept for the log). One struct notify_http per receiver:
 * its easy handle is reused (keep-alive), one transfer at a time.
 *
 * Ownership: notify_http_new returns a handle the caller frees with
 * notify_http_free (which removes a running transfer from its multi
 * handle). Not thread-safe: the notifier thread owns it. Call
 * curl_global_init before the first notify_http_new. */
#ifndef VMSCOPE_NOTIFY_HTTP_H
#define VMSCOPE_NOTIFY_HTTP_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

struct notify_http;

/* NULL when out of memory. */
struct notify_http *notify_http_new(long timeout_s);
void notify_http_free(struct notify_http *h);

/* Starts POSTing body (Content-Type: application/json; the handle takes
 * ownership of body) to url on multi. Returns 0, or -1 when curl refused
 * the transfer (body freed, nothing started). */
int notify_http_start(struct notify_http *h, CURLM *multi, const char *url, char *body);

/* True while a transfer started by notify_http_start runs. */
bool notify_http_busy(const struct notify_http *h);

/* The handle whose transfer is easy (from a CURLMSG_DONE message), among
 * hs[0..n), or -1. */
int notify_http_find(struct notify_http *const *hs, size_t n, CURL *easy);

/* Ends h's transfer after curl reported it done with rc: removes it from
 * the multi handle and returns the HTTP status, or 0 when no answer came
 * (err says why: "could not connect: ...", "timed out"); for a status
 * outside 2xx err holds the start of the answer's body. */
long notify_http_done(struct notify_http *h, CURLcode rc, char *err, size_t errlen);

/* Drops a running transfer (the notifier stops or loses its lock). */
void notify_http_abort(struct notify_http *h);

/* True when a POST that got status (0: no answer) is worth retrying: no
 * answer, 408, 429 and 5xx. Any other 4xx is the receiver refusing the
 * payload; retrying would not help. */
bool notify_http_retryable(long status);

#endif
