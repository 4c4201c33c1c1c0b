/* tls.h - the server's HTTPS material (--tls-cert / --tls-key): the PEM
 * files are read once at start into memory for libmicrohttpd (built with
 * GnuTLS), so a certificate that cannot be read stops the start with a
 * clear message instead of a server that silently speaks plain HTTP.
 *
 * Ownership: tls_load fills a struct tls_pem whose buffers the caller frees
 * with tls_pem_release (the key buffer is wiped first). */
#ifndef VMSCOPE_TLS_H
#define VMSCOPE_TLS_H

#include <stddef.h>

#define TLS_PEM_MAX (1u << 20)	/* a certificate chain is far smaller */

struct tls_pem {
	char *cert, *key;	/* NUL-terminated PEM text, owned */
};

/* Reads both files. Returns 0, or -1 with err ("--tls-key FILE: ...") and
 * *pem released. Checks that each holds a PEM block of the right kind. */
int tls_load(struct tls_pem *pem, const char *cert_path, const char *key_path, char *err,
	     size_t errlen);

void tls_pem_release(struct tls_pem *pem);

#endif
