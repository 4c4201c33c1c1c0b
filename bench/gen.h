/* gen.h - synthetic but realistic hosts for benchmarks.
 *
 * A generated host carries the full vmstat of a 6.x kernel (~190 counters),
 * meminfo, PSI and N memory cgroups (v2), and evolves them the way a busy
 * machine does: most counters flat, some growing, gauges wandering. Both the
 * load generator (JSON over HTTP) and the bulk loader (straight into the
 * storage layer) use it, so the two phases of `make bench` store the same
 * shape of data.
 */
#ifndef VMSCOPE_GEN_H
#define VMSCOPE_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "sample.h"

struct gen_host;

/* A host named name with ncg cgroups, seeded for reproducibility. NULL on
 * allocation failure. Free with gen_host_free. */
struct gen_host *gen_host_new(const char *name, int ncg, uint64_t seed);
void gen_host_free(struct gen_host *h);

/* Advances the host by dt_ms of simulated time. */
void gen_host_step(struct gen_host *h, int64_t dt_ms);

/* Renders the current state as one contract JSON object at ts_ms into buf
 * (cap bytes). Returns the length, or -1 when it does not fit. */
int gen_host_json(const struct gen_host *h, int64_t ts_ms, char *buf, size_t cap);

/* A host's body kept rendered between steps, for a load generator that
 * must cost little CPU (it shares the cores with the server): after the
 * first rendering only the numbers that changed since the last call and
 * the ts are rewritten in place; the whole body is rendered again only when
 * a number changes its width. The text is always what gen_host_json gives. */
struct gen_body;
struct gen_body *gen_body_new(void);
void gen_body_free(struct gen_body *b);

/* The body of h's current state at ts_ms (owned by b, valid until the next
 * call) and its length in *len; NULL when out of memory. One b per host. */
const char *gen_body_render(struct gen_body *b, const struct gen_host *h, int64_t ts_ms, size_t *len);

/* Fills s (initialised by the function; release with sample_release) with
 * the current state at ts_ms. Returns 0, or -1 when out of memory. */
int gen_host_sample(const struct gen_host *h, int64_t ts_ms, struct sample *s);

/* The bulk loader's fast path: updates s, made by gen_host_sample (or a
 * copy of one) for the same host, to the host's current state at ts_ms
 * without rendering and parsing JSON, so that it equals what
 * gen_host_sample would give now (tests/unit/test_gen_refresh.c). Returns
 * 0, or -1 when s does not have the host's shape. */
int gen_host_refresh(const struct gen_host *h, int64_t ts_ms, struct sample *s);

#endif
