/* pgcopy.h - reading the rows of `COPY (...) TO STDOUT (FORMAT binary)`.
 *
 * Why: a big read (the compare endpoint's ~290,000 rollup rows) through a
 * cursor alternates PostgreSQL and the server page by page, rules out
 * parallel workers and makes libpq build a PGresult of every page. A
 * binary COPY streams the rows as PostgreSQL produces them, one message at
 * a time, and each field arrives as length + network-order bytes that the
 * caller decodes in place.
 *
 * The parser (pgcopy_parse) works on byte chunks, so it is testable
 * without a database; pgcopy_receive drives it from PQgetCopyData.
 */
#ifndef VMSCOPE_PGCOPY_H
#define VMSCOPE_PGCOPY_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One field of a row: p is NULL for SQL NULL, else len bytes. */
struct pgcopy_field {
	const uint8_t *p;
	int32_t len;
};

/* Called once per row with its nf fields (borrowed for the call). A
 * non-zero return stops the delivery of rows (see pgcopy_receive). */
typedef int (*pgcopy_row_fn)(void *ctx, const struct pgcopy_field *f, int nf);

#define PGCOPY_MAX_FIELDS 64

/* The state of one COPY stream: header seen, trailer seen. */
struct pgcopy_parser {
	int ncol;		/* fields every row must have */
	bool header_done;
	bool ended;		/* the trailer (field count -1) was read */
};

void pgcopy_init(struct pgcopy_parser *ps, int ncol);

/* Parses one chunk holding the header (first chunk only) and whole rows,
 * or the trailer; PostgreSQL sends every row in its own CopyData message,
 * the header with the first. Returns 0, -1 on malformed data (err
 * written), or the callback's non-zero return. */
int pgcopy_parse(struct pgcopy_parser *ps, const uint8_t *buf, size_t len, pgcopy_row_fn fn, void *ctx,
		 char *err, size_t errlen);

/* Reads a COPY TO STDOUT (FORMAT binary) that c has started (the command
 * answered PGRES_COPY_OUT) to its end, passing every row of ncol fields to
 * fn. When fn fails, the rest of the stream is still read (so c stays
 * usable) but not passed on, and its return is kept. Returns 0, the
 * callback's return, -1 on malformed data or a failed COPY, or -2 when the
 * connection broke; err written unless 0. */
int pgcopy_receive(PGconn *c, int ncol, pgcopy_row_fn fn, void *ctx, char *err, size_t errlen);

/* Decoders of binary fields in network byte order. */
int32_t pgcopy_i32(const uint8_t *p);
int64_t pgcopy_i64(const uint8_t *p);
double pgcopy_f64(const uint8_t *p);

#endif
