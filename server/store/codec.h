/* codec.h - compact encoding of sample values for storage.
 *
 * A set of (metric id, int64) pairs (struct sfield, ids sorted, database
 * metric ids rather than process dictionary ids) is written as a byte string
 * of varints relative to a base set, normally the same host's previous
 * stored sample. Only what changed is written, so a counter that did not
 * move costs nothing and one that moved a little costs two or three bytes:
 *
 *   entry  = uvarint(key) [zigzag varint(value delta)]
 *   key    = (id - previous entry's id) << 2 | tag
 *   tag    0 VALUE   the value is base value (0 when the base lacks it or
 *                    holds SAMPLE_NULL) plus the delta, in wrapping 64-bit
 *                    arithmetic so every int64 round-trips
 *          1 NULL    the value is SAMPLE_NULL
 *          2 REMOVED the metric is absent from this sample
 *   an id not mentioned keeps the base's state (value, null or absent)
 *
 * With an empty base the encoding is self-contained (a keyframe).
 *
 * Cgroups of one sample are a second byte string of sections, one per cgroup
 * present in the sample, sorted by cgroup id:
 *   section = uvarint(cgroup id - previous section's id) uvarint(len) entries
 * each section encoded against the same cgroup's section in the base sample
 * (empty when the base lacks the cgroup). A cgroup without a section is not
 * in the sample.
 *
 * All decoders check bounds and return -1 on malformed input; they never
 * read outside the given buffer.
 */
#ifndef VMSCOPE_CODEC_H
#define VMSCOPE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "sample.h"

/* A growing byte buffer with a hard cap (CODEC_MAX_BYTES). */
#define CODEC_MAX_BYTES (64u << 20)
struct cbuf {
	uint8_t *p;	/* owned */
	size_t len, cap;
};

void cbuf_init(struct cbuf *b);
void cbuf_release(struct cbuf *b);
/* Appends bytes; returns 0, or -1 when out of memory or over the cap. */
int cbuf_put(struct cbuf *b, const void *data, size_t n);
int cbuf_put_uvarint(struct cbuf *b, uint64_t v);

/* Reads a uvarint at *p (advanced past it), never beyond end. Returns 0, or
 * -1 on a truncated or over-long varint. */
int codec_get_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v);

static inline uint64_t codec_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t codec_unzigzag(uint64_t u)
{
	return (int64_t)((u >> 1) ^ (~(u & 1) + 1));
}

enum codec_tag { CODEC_VALUE = 0, CODEC_NULL = 1, CODEC_REMOVED = 2 };

/* Appends the encoding of cur against base (both sorted by id, no
 * duplicates; base may be NULL/0 for a keyframe). Returns 0 or -1 when out
 * of memory. */
int codec_encode(struct cbuf *out, const struct sfield *cur, size_t ncur,
		 const struct sfield *base, size_t nbase);

/* Decodes p[0..len) against base into out (released first, then filled,
 * sorted by id). Returns 0, or -1 on malformed input or out of memory. */
int codec_apply(const uint8_t *p, size_t len, const struct sfield *base, size_t nbase,
		struct sset *out);

/* What an encoding says about one metric. */
enum codec_find {
	CODEC_F_UNCHANGED = 0,	/* not mentioned: same state as in the base */
	CODEC_F_VALUE = 1,	/* *delta holds the wrapping delta to the base value */
	CODEC_F_NULL = 2,
	CODEC_F_REMOVED = 3,
};

/* Finds id in p[0..len) without decoding the rest. Returns a codec_find
 * value, or -1 on malformed input. */
int codec_find(const uint8_t *p, size_t len, uint32_t id, int64_t *delta);

/* The value an entry found by codec_find stands for, given the base's value
 * (has_base false or base_v SAMPLE_NULL count as 0). */
static inline int64_t codec_resolve(int has_base, int64_t base_v, int64_t delta)
{
	uint64_t b = (has_base && base_v != SAMPLE_NULL) ? (uint64_t)base_v : 0;
	return (int64_t)(b + (uint64_t)delta);
}

/* Cgroup sections. */
struct codec_cgref {
	uint32_t id;
	const struct sfield *f;	/* borrowed */
	size_t n;
};

/* Appends sections for cur (sorted by id) against base (sorted by id; a
 * cgroup missing in base is encoded self-contained). Returns 0 or -1. */
int codec_cg_encode(struct cbuf *out, const struct codec_cgref *cur, size_t ncur,
		    const struct codec_cgref *base, size_t nbase);

/* Iterates sections: *pos starts at 0; returns 1 with the next section's id
 * and bytes (pointing into p), 0 at the end, -1 on malformed input. */
int codec_cg_next(const uint8_t *p, size_t len, size_t *pos, uint32_t *id,
		  const uint8_t **sec, size_t *seclen);

/* Finds cgroup id's section. Returns 1 (found), 0 (absent) or -1. */
int codec_cg_find(const uint8_t *p, size_t len, uint32_t id, const uint8_t **sec, size_t *seclen);

#endif
