/* pgbin.h - bytea[] parameters in PostgreSQL's binary array format
 * (array_send/array_recv), so that encoded rows and detector states travel
 * as they are: no hex text built here, no array literal parsed and
 * hex-decoded by PostgreSQL. Pass the buffer with its length and format 1
 * (store_q_prep_fmt).
 *
 * Usage: pgbin_bytea_begin, one pgbin_bytea_add per element (NULL p for a
 * NULL element), pgbin_bytea_end. Each returns 0, or -1 when out of memory
 * or over PostgreSQL's 1 GB parameter size.
 */
#ifndef VMSCOPE_PGBIN_H
#define VMSCOPE_PGBIN_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"

int pgbin_bytea_begin(struct cbuf *b);
int pgbin_bytea_add(struct cbuf *b, const uint8_t *p, size_t n);
int pgbin_bytea_end(struct cbuf *b);

#endif
