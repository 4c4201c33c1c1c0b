/* pgbin.h - array parameters in PostgreSQL's binary array format
 * (array_send/array_recv), so that encoded rows and detector states travel
 * as they are: no hex text built here, no array literal parsed and
 * hex-decoded by PostgreSQL; and numbers as their bits, not as decimal
 * text printed here and parsed there. Pass the buffer with its length and
 * format 1 (store_q_prep_fmt).
 *
 * bytea[]: pgbin_bytea_begin, one pgbin_bytea_add per element (NULL p for
 * a NULL element), pgbin_bytea_end.
 * A two-dimensional smallint[], real[] or float8[] without NULLs (rows of
 * cols elements): pgbin_grid_begin, then rows * cols pgbin_grid_i16,
 * _f32 or _f64 in row order.
 * Each returns 0, or -1 when out of memory or over PostgreSQL's 1 GB
 * parameter size.
 */
#ifndef VMSCOPE_PGBIN_H
#define VMSCOPE_PGBIN_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"

int pgbin_bytea_begin(struct cbuf *b);
int pgbin_bytea_add(struct cbuf *b, const uint8_t *p, size_t n);
int pgbin_bytea_end(struct cbuf *b);

enum pgbin_elem { PGBIN_INT2 = 21, PGBIN_FLOAT4 = 700, PGBIN_FLOAT8 = 701 };	/* type oids */
int pgbin_grid_begin(struct cbuf *b, enum pgbin_elem type, size_t rows, size_t cols);
int pgbin_grid_i16(struct cbuf *b, int16_t v);
int pgbin_grid_f32(struct cbuf *b, float v);
int pgbin_grid_f64(struct cbuf *b, double v);

#endif
