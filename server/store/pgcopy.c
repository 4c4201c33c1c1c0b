/* pgcopy.c - rows of a binary COPY (see pgcopy.h). The format: an 11-byte
 * signature, a 32-bit flags word and a 32-bit header extension length
 * (then that many bytes); each row a 16-bit field count and per field a
 * 32-bit length (-1 for NULL) and the bytes; a field count of -1 ends the
 * stream. Every number is in network byte order. */
#include "pgcopy.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t signature[11] = { 'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0 };

void pgcopy_init(struct pgcopy_parser *ps, int ncol)
{
	ps->ncol = ncol;
	ps->header_done = false;
	ps->ended = false;
}

int32_t pgcopy_i32(const uint8_t *p)
{
	uint32_t u;
	memcpy(&u, p, 4);
	return (int32_t)be32toh(u);
}

int64_t pgcopy_i64(const uint8_t *p)
{
	uint64_t u;
	memcpy(&u, p, 8);
	return (int64_t)be64toh(u);
}

double pgcopy_f64(const uint8_t *p)
{
	uint64_t u;
	double d;
	memcpy(&u, p, 8);
	u = be64toh(u);
	memcpy(&d, &u, 8);
	return d;
}

static int16_t get_i16(const uint8_t *p)
{
	uint16_t u;
	memcpy(&u, p, 2);
	return (int16_t)be16toh(u);
}

static int bad(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "malformed binary COPY data: %s", what);
	return -1;
}

int pgcopy_parse(struct pgcopy_parser *ps, const uint8_t *buf, size_t len, pgcopy_row_fn fn, void *ctx,
		 char *err, size_t errlen)
{
	struct pgcopy_field f[PGCOPY_MAX_FIELDS];
	size_t o = 0;

	if (ps->ncol < 0 || ps->ncol > PGCOPY_MAX_FIELDS)
		return bad(err, errlen, "too many columns");
	if (!ps->header_done) {
		if (len < 19 || memcmp(buf, signature, sizeof(signature)) != 0)
			return bad(err, errlen, "no signature");
		uint32_t ext = (uint32_t)pgcopy_i32(buf + 15);
		if (ext > len - 19)
			return bad(err, errlen, "header extension past the end");
		o = 19 + (size_t)ext;
		ps->header_done = true;
	}
	while (o < len) {
		if (ps->ended)
			return bad(err, errlen, "data after the trailer");
		if (len - o < 2)
			return bad(err, errlen, "truncated field count");
		int nf = get_i16(buf + o);
		o += 2;
		if (nf == -1) {
			ps->ended = true;
			continue;
		}
		if (nf != ps->ncol)
			return bad(err, errlen, "unexpected field count");
		for (int i = 0; i < nf; i++) {
			if (len - o < 4)
				return bad(err, errlen, "truncated field length");
			int32_t fl = pgcopy_i32(buf + o);
			o += 4;
			if (fl == -1) {
				f[i] = (struct pgcopy_field){ NULL, 0 };
				continue;
			}
			if (fl < 0 || (size_t)fl > len - o)
				return bad(err, errlen, "field past the end");
			f[i] = (struct pgcopy_field){ buf + o, fl };
			o += (size_t)fl;
		}
		int rc = fn(ctx, f, nf);
		if (rc)
			return rc;
	}
	return 0;
}

int pgcopy_receive(PGconn *c, int ncol, pgcopy_row_fn fn, void *ctx, char *err, size_t errlen)
{
	struct pgcopy_parser ps;
	char *buf = NULL;
	int n, rc = 0;

	pgcopy_init(&ps, ncol);
	while ((n = PQgetCopyData(c, &buf, 0)) > 0) {
		if (rc == 0) {
			rc = pgcopy_parse(&ps, (const uint8_t *)buf, (size_t)n, fn, ctx, err, errlen);
		}
		PQfreemem(buf);
		buf = NULL;
	}
	if (n == -2) {
		snprintf(err, errlen, "COPY read failed: %s", PQerrorMessage(c));
		return -2;
	}
	/* n == -1: the COPY is over; its outcome is the next result */
	PGresult *r;
	bool failed = false;
	while ((r = PQgetResult(c))) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK && !failed) {
			failed = true;
			const char *m = PQresultErrorMessage(r);
			size_t ml = strlen(m);
			while (ml && (m[ml - 1] == '\n' || m[ml - 1] == ' '))
				ml--;
			if (rc == 0)
				snprintf(err, errlen, "COPY failed: %.*s", (int)ml, m);
		}
		PQclear(r);
	}
	if (PQstatus(c) != CONNECTION_OK) {
		if (rc == 0)
			snprintf(err, errlen, "COPY read failed: %s", PQerrorMessage(c));
		return -2;
	}
	if (rc == 0 && failed)
		return -1;
	if (rc == 0 && !ps.ended)
		return bad(err, errlen, "no trailer");
	return rc;
}
