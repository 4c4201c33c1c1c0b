/* tls.c - reads the PEM certificate and key for HTTPS (see tls.h). */
#include "tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a whole file into a new NUL-terminated buffer (*out, owned by the
 * caller). Returns 0 or -1 with err. */
static int read_pem(const char *flag, const char *path, char **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0;

	*out = NULL;
	if (!f) {
		snprintf(err, errlen, "%s %s: %s", flag, path, strerror(errno));
		return -1;
	}
	buf = malloc(TLS_PEM_MAX + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	len = fread(buf, 1, TLS_PEM_MAX + 1, f);
	if (ferror(f) || len > TLS_PEM_MAX) {
		snprintf(err, errlen, "%s %s: %s", flag, path,
			 ferror(f) ? "read error" : "larger than 1 MiB");
		goto fail;
	}
	buf[len] = '\0';
	if (strlen(buf) != len || !strstr(buf, "-----BEGIN ")) {
		snprintf(err, errlen, "%s %s: not a PEM file", flag, path);
		goto fail;
	}
	fclose(f);
	char *shrunk = realloc(buf, len + 1);
	*out = shrunk ? shrunk : buf;
	return 0;
fail:
	fclose(f);
	explicit_bzero(buf, TLS_PEM_MAX + 1);
	free(buf);
	return -1;
}

int tls_load(struct tls_pem *pem, const char *cert_path, const char *key_path, char *err,
	     size_t errlen)
{
	memset(pem, 0, sizeof(*pem));
	if (read_pem("--tls-cert", cert_path, &pem->cert, err, errlen) < 0 ||
	    read_pem("--tls-key", key_path, &pem->key, err, errlen) < 0)
		goto fail;
	if (!strstr(pem->cert, "-----BEGIN CERTIFICATE-----")) {
		snprintf(err, errlen, "--tls-cert %s: no CERTIFICATE block", cert_path);
		goto fail;
	}
	if (!strstr(pem->key, "PRIVATE KEY-----")) {
		snprintf(err, errlen, "--tls-key %s: no PRIVATE KEY block", key_path);
		goto fail;
	}
	return 0;
fail:
	tls_pem_release(pem);
	return -1;
}

void tls_pem_release(struct tls_pem *pem)
{
	if (pem->key) {
		explicit_bzero(pem->key, strlen(pem->key));
		free(pem->key);
	}
	free(pem->cert);
	pem->cert = pem->key = NULL;
}
