/* jsonw.h - a streaming JSON writer into one fixed, reused buffer.
 *
 * The agent writes each sample straight out, key by key, instead of
 * building a tree: no allocation per sample, and memory bounded by the
 * buffer whatever the number of cgroups. When the buffer fills it is
 * flushed to the file descriptor given at init (the spool segment or
 * stdout); with fd -1 the buffer is the whole output and filling it is an
 * error (used by tests and small in-memory documents).
 *
 * A tee (optional) sees every flushed chunk before it is written: the agent
 * builds a sample's request body from it while writing the sample to the
 * spool, instead of reading the spool back. With fd -1 and a tee, the tee
 * is the only sink (a sample kept in memory when the spool cannot be
 * written).
 *
 * Errors are sticky: the first failure is kept in w->err (a negative errno,
 * -ENOSPC when a memory-only writer is full) and later calls do nothing, so
 * a caller checks once at the end. Commas are managed by the writer.
 */
#ifndef VMSCOPE_AGENT_JSONW_H
#define VMSCOPE_AGENT_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JW_MAX_DEPTH 16

struct jw {
	char *buf;		/* borrowed, cap bytes */
	size_t len, cap;
	int fd;			/* flush target, or -1 */
	uint64_t total;		/* bytes produced so far (flushed + buffered) */
	int err;		/* 0 or the first negative errno */
	void (*tee)(void *ctx, const char *p, size_t n);	/* or NULL */
	void *tee_ctx;
	unsigned depth;
	bool after_key;		/* a key was written: its value takes no comma */
	bool first[JW_MAX_DEPTH];	/* no element yet at this depth */
};

/* Starts a document in buf (borrowed, reused across documents). */
void jw_init(struct jw *w, char *buf, size_t cap, int fd);

/* Writes out what is buffered (no-op for fd -1). Returns w->err. */
int jw_flush(struct jw *w);

void jw_obj_begin(struct jw *w);
void jw_obj_end(struct jw *w);
void jw_arr_begin(struct jw *w);
void jw_arr_end(struct jw *w);

/* An object key; s[0..n) is escaped as needed. */
void jw_key(struct jw *w, const char *s, size_t n);
/* A NUL-terminated key known to need no escaping. */
void jw_keyz(struct jw *w, const char *s);

/* `"k":v` in one step, for the thousands of counters of a sample: k[0..n)
 * must need no escaping (a valid metric name). */
void jw_key_int(struct jw *w, const char *k, size_t n, int64_t v);
/* The same with the value already in JSON number syntax (the digits of a
 * counter as the kernel printed them: no formatting). */
void jw_key_num(struct jw *w, const char *k, size_t n, const char *num, size_t vn);

void jw_str(struct jw *w, const char *s, size_t n);
void jw_int(struct jw *w, int64_t v);
void jw_null(struct jw *w);
void jw_bool(struct jw *w, bool b);
/* A number already in JSON syntax (a PSI average as the kernel printed it). */
void jw_raw_number(struct jw *w, const char *s, size_t n);
/* Unstructured bytes (a newline between records); no comma handling. */
void jw_raw(struct jw *w, const char *s, size_t n);

#endif
