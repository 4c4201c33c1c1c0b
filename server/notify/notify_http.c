/* notify_http.c - libcurl POSTs for notifications, side by side in a multi
 * handle (see notify_http.h). */
#include "notify_http.h"
#include "version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_KEEP 512		/* bytes of an error answer kept for the log */

struct notify_http {
	CURL *curl;
	CURLM *multi;		/* the multi handle of the running transfer; NULL: idle */
	struct curl_slist *headers;
	long timeout_s;
	char *body;		/* owned while a transfer runs */
	char answer[ANSWER_KEEP + 1];
	size_t answer_len;
	char errbuf[CURL_ERROR_SIZE];
};

/* Keeps the start of the answer, drops the rest (a receiver's answer is
 * not ours to buffer). */
static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct notify_http *h = arg;
	size_t len = size * n;
	size_t room = ANSWER_KEEP - h->answer_len;
	size_t take = len < room ? len : room;

	memcpy(h->answer + h->answer_len, p, take);
	h->answer_len += take;
	h->answer[h->answer_len] = '\0';
	return len;
}

struct notify_http *notify_http_new(long timeout_s)
{
	struct notify_http *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->timeout_s = timeout_s;
	h->curl = curl_easy_init();
	h->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (h->headers)
		h->headers = curl_slist_append(h->headers, "User-Agent: vmscope-server/" VMSCOPE_VERSION);
	if (!h->curl || !h->headers) {
		notify_http_free(h);
		return NULL;
	}
	return h;
}

void notify_http_free(struct notify_http *h)
{
	if (!h)
		return;
	notify_http_abort(h);
	if (h->curl)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
	free(h);
}

int notify_http_start(struct notify_http *h, CURLM *multi, const char *url, char *body)
{
	CURL *c = h->curl;

	notify_http_abort(h);
	curl_easy_reset(c);
	h->answer_len = 0;
	h->answer[0] = '\0';
	h->errbuf[0] = '\0';
	h->body = body;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	curl_easy_setopt(c, CURLOPT_TIMEOUT, h->timeout_s);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, h->timeout_s < 5 ? h->timeout_s : 5L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
	if (curl_multi_add_handle(multi, c) != CURLM_OK) {
		free(h->body);
		h->body = NULL;
		return -1;
	}
	h->multi = multi;
	return 0;
}

bool notify_http_busy(const struct notify_http *h)
{
	return h->multi != NULL;
}

int notify_http_find(struct notify_http *const *hs, size_t n, CURL *easy)
{
	for (size_t i = 0; i < n; i++)
		if (hs[i] && hs[i]->multi && hs[i]->curl == easy)
			return (int)i;
	return -1;
}

long notify_http_done(struct notify_http *h, CURLcode rc, char *err, size_t errlen)
{
	long status = 0;

	if (rc == CURLE_OK)
		curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
	notify_http_abort(h);	/* out of the multi handle, body freed */
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s", h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc));
		return 0;
	}
	if (status < 200 || status > 299) {
		/* one line, printable, for the log */
		for (size_t i = 0; i < h->answer_len; i++)
			if ((unsigned char)h->answer[i] < ' ' || (unsigned char)h->answer[i] > '~')
				h->answer[i] = ' ';
		snprintf(err, errlen, "HTTP %ld: %.200s", status, h->answer);
	} else if (errlen) {
		err[0] = '\0';
	}
	return status;
}

void notify_http_abort(struct notify_http *h)
{
	if (h->multi) {
		curl_multi_remove_handle(h->multi, h->curl);
		h->multi = NULL;
	}
	free(h->body);
	h->body = NULL;
}

bool notify_http_retryable(long status)
{
	return status == 0 || status == 408 || status == 429 || status >= 500;
}
