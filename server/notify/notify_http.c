/* notify_http.c - libcurl POSTs for notifications (see notify_http.h). */
#include "notify_http.h"
#include "version.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_KEEP 512		/* bytes of an error answer kept for the log */

struct notify_http {
	CURL *curl;
	struct curl_slist *headers;
	long timeout_s;
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
	if (h->curl)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
	free(h);
}

long notify_http_post(struct notify_http *h, const char *url, const char *body, char *err, size_t errlen)
{
	CURL *c = h->curl;
	long status = 0;

	curl_easy_reset(c);
	h->answer_len = 0;
	h->answer[0] = '\0';
	h->errbuf[0] = '\0';
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
	CURLcode rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s", h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc));
		return 0;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
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

bool notify_http_retryable(long status)
{
	return status == 0 || status == 408 || status == 429 || status >= 500;
}
