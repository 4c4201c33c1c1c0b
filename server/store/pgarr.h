/* pgarr.h - PostgreSQL array literals ("{1,2}", "{\"a\",NULL}",
 * "{\"\\\\x0a0b\"}") built in a cbuf, so that a whole batch travels as a
 * few text parameters of one statement (INSERT ... SELECT FROM
 * unnest($1::int[], ...)) instead of one statement per row. The values
 * are escaped here; the SQL stays parameterised.
 *
 * Usage: arr_begin, then one arr_* call per element, then arr_end, which
 * also NUL-terminates so b->p can be passed as a parameter. Every
 * function returns 0, or -1 when out of memory (cbuf cap).
 */
#ifndef VMSCOPE_PGARR_H
#define VMSCOPE_PGARR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"

int arr_begin(struct cbuf *b);
/* A comma unless the element is the first after "{" (for callers that
 * write an element's text themselves). */
int arr_sep(struct cbuf *b);
int arr_num(struct cbuf *b, long long v);
/* A quoted string; s must not be NULL. */
int arr_text(struct cbuf *b, const char *s);
/* A quoted string, or NULL when s is NULL. */
int arr_text_or_null(struct cbuf *b, const char *s);
/* A float8 element that reads back as exactly v (a short decimal when v
 * has one, else %.17g; no printf for the usual rates), or NULL. */
int arr_float8(struct cbuf *b, bool null, double v);
/* A bytea element in hex form, or NULL when p is NULL. */
int arr_bytea(struct cbuf *b, const uint8_t *p, size_t n);
int arr_end(struct cbuf *b);

#endif
