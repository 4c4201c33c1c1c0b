/* host_allow.h - which Host header values the server answers (DNS
 * rebinding defence).
 *
 * A page on another site can make a browser send requests to a server on
 * loopback through a name it controls that resolves to 127.0.0.1; the
 * request then carries that name in Host. So a server bound to a loopback
 * address answers only loopback names and addresses (localhost, names
 * under .localhost, 127.0.0.0/8, ::1) plus the --allowed-hosts patterns;
 * a server bound elsewhere answers every name unless --allowed-hosts is
 * given, which then restricts it. A request without Host (HTTP/1.0) is
 * answered: browsers always send one. Anything else gets 421.
 *
 * Pure and thread-safe once built; ownership: host_allow_init fills a
 * struct that borrows patterns (the configuration outlives it). */
#ifndef VMSCOPE_HOST_ALLOW_H
#define VMSCOPE_HOST_ALLOW_H

#include <stdbool.h>

struct host_allow {
	bool loopback;		/* bound to a loopback address */
	const char *patterns;	/* --allowed-hosts (comma list, fnmatch, any case); NULL: none */
};

void host_allow_init(struct host_allow *h, bool loopback, const char *patterns);

/* True when a request with this Host header value (NULL: none) is
 * answered. The port, when present, is not compared. */
bool host_allow_ok(const struct host_allow *h, const char *host_header);

#endif
