/* store_series.c - store_series: one metric of one host (or cgroup) over a
 * time range, as rates or gauge values, raw or in equal time buckets.
 *
 * Rows are fetched from the delta chain's keyframe at or before the range
 * (so the first row in range has its base and its predecessor) and only
 * the requested metric is decoded from each row (codec_find), which keeps
 * a day of 10 s samples (8640 rows) in a few milliseconds.
 */
#include "store_internal.h"

#include "metric_kind.h"
#include "store_cgrollup.h"
#include "store_rollup.h"
#include "timeparse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERIES_MAX_RANGE_MS (400LL * STORE_DAY_MS)
#define SERIES_MAX_POINTS 10000

enum { PT_ABSENT = 0, PT_NULL = 1, PT_VALUE = 2 };

struct pt {
	int64_t ts;
	int64_t v;
	int16_t boot;
	uint8_t state;	/* PT_* of the metric */
	uint8_t cgp;	/* the cgroup is in the row */
};

static const struct pt *find_pt(const struct pt *pts, size_t n, int64_t ts)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pts[mid].ts == ts)
			return &pts[mid];
		if (pts[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Decodes the metric of one row into *o, given the rows decoded so far. */
static void decode_row(const uint8_t *d, size_t dlen, const uint8_t *c, size_t clen, uint32_t mid,
		       uint32_t cgid, const struct pt *pts, size_t n, struct pt *o)
{
	const uint8_t *p = d;
	uint64_t off;
	const struct pt *base = NULL;
	const uint8_t *enc;
	size_t enclen;
	int64_t delta;

	o->state = PT_ABSENT;
	o->cgp = 0;
	if (codec_get_uvarint(&p, d + dlen, &off) < 0)
		return;
	if (off) {
		base = find_pt(pts, n, o->ts - (int64_t)off);
		if (!base)
			return;	/* base outside what was read: cannot happen in a sound chain */
	}
	if (cgid) {
		if (!c || codec_cg_find(c, clen, cgid, &enc, &enclen) != 1)
			return;
		o->cgp = 1;
		if (base && !base->cgp)
			base = NULL;
	} else {
		enc = p;
		enclen = (size_t)(d + dlen - p);
	}
	int f = codec_find(enc, enclen, mid, &delta);
	switch (f) {
	case CODEC_F_UNCHANGED:
		if (base) {
			o->state = base->state;
			o->v = base->v;
		}
		break;
	case CODEC_F_VALUE:
		o->state = PT_VALUE;
		o->v = codec_resolve(base && base->state == PT_VALUE, base ? base->v : 0, delta);
		break;
	case CODEC_F_NULL:
		o->state = PT_NULL;
		break;
	default:
		break;
	}
}

/* Fetches and decodes rows [from, until] of the host: the host-level
 * value (cg NULL), or the cgroup's; with the two cgroups of a hybrid
 * path, each row's value from whichever of them has the metric in it. */
static int read_points(PGconn *c, int32_t hid, int64_t from, int64_t until, uint32_t mid, const struct cgpath *cg,
		       struct pt **out, size_t *nout, char *err, size_t errlen)
{
	char h[16], f[24], u[24], day0[24];
	const char *prm[4] = { h, f, u, day0 };
	PGresult *r;
	size_t ncg = cg ? cg->n : 0;

	*out = NULL;
	*nout = 0;
	snprintf(h, sizeof(h), "%d", hid);
	snprintf(f, sizeof(f), "%lld", (long long)from);
	snprintf(u, sizeof(u), "%lld", (long long)until);
	snprintf(day0, sizeof(day0), "%lld", (long long)(store_day(from) * STORE_DAY_MS));
	/* start at the newest chain start at or before `from` within its day
	 * (every day's first in-order row is a keyframe) */
	int rc = store_q(c, ncg ? "SELECT ts_ms, boot, d, c FROM samples WHERE host_id = $1 AND ts_ms <= $3 "
			 "AND ts_ms >= coalesce((SELECT max(ts_ms) FROM samples WHERE host_id = $1 AND kf "
			 "AND ts_ms <= $2 AND ts_ms >= $4), $4) ORDER BY ts_ms"
			 : "SELECT ts_ms, boot, d FROM samples WHERE host_id = $1 AND ts_ms <= $3 "
			 "AND ts_ms >= coalesce((SELECT max(ts_ms) FROM samples WHERE host_id = $1 AND kf "
			 "AND ts_ms <= $2 AND ts_ms >= $4), $4) ORDER BY ts_ms",
			 4, prm, 1, &r, "read samples", err, errlen);
	if (rc != STORE_OK)
		return rc;
	int n = PQntuples(r);
	/* one decoded array per cgroup id (each decodes against its own
	 * earlier rows), merged below */
	struct pt *pts[CGPATH_MAX] = { NULL };
	size_t narr = ncg > 1 ? ncg : 1;
	for (size_t k = 0; k < narr; k++) {
		if (!(pts[k] = calloc((size_t)n + 1, sizeof(struct pt)))) {
			for (size_t j = 0; j < k; j++)
				free(pts[j]);
			PQclear(r);
			snprintf(err, errlen, "out of memory");
			return STORE_EINTERNAL;
		}
	}
	for (int i = 0; i < n; i++) {
		const uint8_t *cgc = NULL;
		size_t clen = 0;
		if (ncg && !PQgetisnull(r, i, 3)) {
			cgc = (const uint8_t *)PQgetvalue(r, i, 3);
			clen = (size_t)PQgetlength(r, i, 3);
		}
		for (size_t k = 0; k < narr; k++) {
			struct pt *o = &pts[k][i];
			o->ts = store_get_i64(r, i, 0);
			o->boot = store_get_i16(r, i, 1);
			decode_row((const uint8_t *)PQgetvalue(r, i, 2), (size_t)PQgetlength(r, i, 2), cgc, clen, mid,
				   ncg ? cg->id[k] : 0, pts[k], (size_t)i, o);
		}
	}
	PQclear(r);
	for (size_t k = 1; k < narr; k++) {
		for (int i = 0; i < n; i++)
			if (pts[0][i].state == PT_ABSENT && pts[k][i].state != PT_ABSENT)
				pts[0][i] = pts[k][i];
		free(pts[k]);
	}
	*out = pts[0];
	*nout = (size_t)n;
	return STORE_OK;
}

/* The value a point stands for in the answer: sets *null when there is
 * none (a counter across a reset, a null gauge). */
static double point_value(const struct pt *pts, size_t i, enum metric_kind kind, double scale, bool *null)
{
	const struct pt *cur = &pts[i];

	*null = true;
	if (cur->state != PT_VALUE)
		return 0;
	if (kind == METRIC_GAUGE) {
		*null = false;
		return (double)cur->v * scale;
	}
	if (i == 0)
		return 0;
	const struct pt *prev = &pts[i - 1];
	if (prev->state != PT_VALUE || prev->boot != cur->boot || cur->v < prev->v || cur->ts <= prev->ts)
		return 0;
	*null = false;
	return (double)(cur->v - prev->v) * scale * 1000.0 / (double)(cur->ts - prev->ts);
}

static json_t *num_or_null(bool null, double v)
{
	return null ? json_null() : json_real(v);
}

/* [a, b], taking both references (json_pack parses its format on
 * every call; this runs once per point). NULL when out of memory. */
static json_t *pair(json_t *a, json_t *b)
{
	json_t *p = json_array();
	if (!p || !a || !b || json_array_append_new(p, a) < 0 || json_array_append_new(p, b) < 0) {
		json_decref(p);
		if (!p) {
			json_decref(a);
			json_decref(b);
		}
		return NULL;
	}
	return p;
}

static json_t *raw_points(const struct pt *pts, size_t n, int64_t since, enum metric_kind kind, double scale)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		if (pts[i].ts < since || pts[i].state == PT_ABSENT)
			continue;
		bool null;
		double v = point_value(pts, i, kind, scale, &null);
		json_t *val;
		if (!null && kind == METRIC_GAUGE && scale == 1.0)
			val = json_integer(pts[i].v);
		else
			val = num_or_null(null, v);
		json_t *pt = pair(json_real((double)pts[i].ts / 1000.0), val);
		if (!pt || json_array_append_new(arr, pt) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

struct bucket {
	double sum, min, max;
	size_t n;	/* non-null values */
	bool seen;
};

/* Adds the points of pts at or after from (>= since) to the nb buckets of
 * width step starting at since. */
static void bucket_add(struct bucket *b, int nb, const struct pt *pts, size_t n, int64_t since, int64_t from,
		       int64_t step, enum metric_kind kind, double scale)
{
	for (size_t i = 0; i < n; i++) {
		if (pts[i].ts < from || pts[i].state == PT_ABSENT)
			continue;
		int64_t k = (pts[i].ts - since) / step;
		if (k < 0 || k >= nb)
			continue;
		bool null;
		double v = point_value(pts, i, kind, scale, &null);
		b[k].seen = true;
		if (null)
			continue;
		if (!b[k].n || v < b[k].min)
			b[k].min = v;
		if (!b[k].n || v > b[k].max)
			b[k].max = v;
		b[k].sum += v;
		b[k].n++;
	}
}

/* [ts, avg, min, max] of every bucket that saw the metric. NULL: OOM. */
static json_t *bucket_emit(const struct bucket *b, int nb, int64_t since, int64_t step)
{
	json_t *arr = json_array();

	for (int k = 0; arr && k < nb; k++) {
		if (!b[k].seen)
			continue;
		bool null = b[k].n == 0;
		json_t *pt = json_pack("[f, o, o, o]", (double)(since + (int64_t)k * step) / 1000.0,
				       num_or_null(null, null ? 0 : b[k].sum / (double)b[k].n),
				       num_or_null(null, b[k].min), num_or_null(null, b[k].max));
		if (!pt || json_array_append_new(arr, pt) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

static json_t *bucket_points(const struct pt *pts, size_t n, int64_t since, int64_t step, int nb,
			     enum metric_kind kind, double scale)
{
	struct bucket *b = calloc((size_t)nb, sizeof(*b));
	json_t *arr = NULL;

	if (b) {
		bucket_add(b, nb, pts, n, since, since, step, kind, scale);
		arr = bucket_emit(b, nb, since, step);
	}
	free(b);
	return arr;
}

/* Downsampled points of a rolled-up cgroup metric (store_cgrollup.h): the
 * 5-minute buckets before the host's rollup mark come from
 * cgroup_rollup_5m, each into the answer bucket its start falls in (the
 * first one also takes the bucket that straddles since, as for host
 * rollups); samples from the mark on (the newest minutes, not rolled up
 * yet) from raw rows, so the answer is complete. *out NULL (and STORE_OK)
 * when nothing in the range is rolled up and the caller is not forcing
 * rollups: it reads raw rows instead. */
static int cgroll_points(PGconn *c, int32_t hid, const struct cgpath *cg, uint32_t mid, int slot, int64_t since,
			 int64_t until, int64_t step, int nb, enum metric_kind kind, double scale, bool forced,
			 json_t **out, char *err, size_t errlen)
{
	int64_t done;
	PGresult *r = NULL;
	struct pt *pts = NULL;
	size_t n = 0;
	struct bucket *b = NULL;

	*out = NULL;
	int rc = cgroll_done_ms(c, hid, &done, err, errlen);
	if (rc != STORE_OK || (done <= since && !forced))
		return rc;
	if (!(b = calloc((size_t)nb, sizeof(*b)))) {
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	int64_t rend = until + 1 < done ? until + 1 : done;
	/* a hybrid path's two cgroups: a name is in one of them at a time */
	for (size_t j = 0; j < cg->n && rend > since - CGROLL_STEP_MS + 1; j++) {
		if ((rc = cgroll_read(c, hid, cg->id[j], since - CGROLL_STEP_MS + 1, rend, &r, err, errlen)) != STORE_OK)
			goto out;
		for (int i = 0; i < PQntuples(r); i++) {
			struct cgroll_val v;
			int f = cgroll_cell_get((const uint8_t *)PQgetvalue(r, i, 1), (size_t)PQgetlength(r, i, 1), slot, &v);
			if (f < 0) {
				snprintf(err, errlen, "malformed cgroup rollup of cgroup %u", cg->id[j]);
				rc = STORE_EINTERNAL;
				goto out;
			}
			int64_t k = ((int64_t)store_get_i32(r, i, 0) * CGROLL_STEP_MS - since) / step;
			if (f == 0 || k >= nb)
				continue;
			if (k < 0)
				k = 0;
			b[k].seen = true;
			if (!v.cnt)
				continue;
			if (!b[k].n || v.lo < b[k].min)
				b[k].min = v.lo;
			if (!b[k].n || v.hi > b[k].max)
				b[k].max = v.hi;
			b[k].sum += v.avg * v.cnt;
			b[k].n += v.cnt;
		}
		PQclear(r);
		r = NULL;
	}
	int64_t tail = done > since ? done : since;
	if (tail <= until) {
		if ((rc = read_points(c, hid, tail - 1, until, mid, cg, &pts, &n, err, errlen)) != STORE_OK)
			goto out;
		bucket_add(b, nb, pts, n, since, tail, step, kind, scale);
	}
	if (!(*out = bucket_emit(b, nb, since, step))) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
	}
out:
	PQclear(r);
	free(pts);
	free(b);
	return rc;
}

/* Downsampled points of a rolled-up metric from rollup_5m: each 5-minute
 * bucket goes to the answer bucket its start falls in (the first one also
 * takes the bucket that straddles since). *out NULL (and STORE_OK) when
 * the range has no rollups, or (unless forced) none holding a value of the
 * slot (buckets written before the slot existed: 031_rollup_wide.sql), so
 * the caller reads raw rows instead. */
static int rollup_points(PGconn *c, int32_t hid, int slot, int64_t since, int64_t until, int64_t step,
			 bool forced, json_t **out, char *err, size_t errlen)
{
	PGresult *r;
	int rc = rollup_read(c, hid, since, until, step, &slot, 1, &r, err, errlen);
	long total = 0;

	*out = NULL;
	if (rc != STORE_OK)
		return rc;
	for (int i = 0; i < PQntuples(r); i++)
		total += strtol(PQgetvalue(r, i, 3), NULL, 10);
	if (PQntuples(r) == 0 || (total == 0 && !forced)) {
		PQclear(r);
		return STORE_OK;
	}
	json_t *arr = json_array();
	for (int i = 0; arr && i < PQntuples(r); i++) {
		int64_t k = strtoll(PQgetvalue(r, i, 1), NULL, 10);
		long cnt = strtol(PQgetvalue(r, i, 3), NULL, 10);
		bool null = cnt <= 0 || PQgetisnull(r, i, 5) || PQgetisnull(r, i, 6);
		double sum = strtod(PQgetvalue(r, i, 4), NULL);
		json_t *pt = json_pack("[f, o, o, o]", (double)(since + k * step) / 1000.0,
				       num_or_null(null, null ? 0 : sum / (double)cnt),
				       num_or_null(null, null ? 0 : strtod(PQgetvalue(r, i, 5), NULL)),
				       num_or_null(null, null ? 0 : strtod(PQgetvalue(r, i, 6), NULL)));
		if (!pt || json_array_append_new(arr, pt) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	PQclear(r);
	if (!arr) {
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	*out = arr;
	return STORE_OK;
}

int series_src_open(PGconn *c, const char *host, const char *cgroup, int version, struct series_src *src,
		    char *err, size_t errlen)
{
	int rc;

	memset(src, 0, sizeof(*src));
	if ((rc = store_host_id(c, host, &src->hid, &src->last, err, errlen)) != STORE_OK)
		return rc;
	src->host = host;
	src->cgroup = cgroup;
	if (cgroup && (rc = store_cgpath(c, src->hid, host, cgroup, version, &src->cg, err, errlen)) != STORE_OK)
		return rc;
	return STORE_OK;
}

void series_src_release(struct series_src *src)
{
	idset_release(&src->names);
	src->names_known = 0;
}

/* Whether the host (cgroup) has reported metric id mid: the names of its
 * newest sample first, and only when mid is not there the daily ones. */
static int reported(struct store *st, PGconn *c, struct series_src *src, uint32_t mid, bool *yes, char *err,
		    size_t errlen)
{
	const struct cgpath *cg = src->cgroup ? &src->cg : NULL;
	int rc;

	*yes = false;
	if (!mid)
		return STORE_OK;
	if (src->names_known == 0) {
		if ((rc = store_names_now(c, src->hid, src->last, cg, &src->names, err, errlen)) != STORE_OK)
			return rc;
		src->names_known = 1;
	}
	if (idset_has(&src->names, mid)) {
		*yes = true;
		return STORE_OK;
	}
	if (src->names_known == 1) {
		idset_release(&src->names);
		if ((rc = store_names_ever(c, src->hid, src->last, store_oldest_accepted_ms(st, time_now_ms()), cg,
					    &src->names, err, errlen)) != STORE_OK)
			return rc;
		src->names_known = 2;
	}
	*yes = idset_has(&src->names, mid);
	return STORE_OK;
}

int series_read(struct store *st, PGconn *c, struct series_src *src, const struct series_query *q, json_t **out,
		char *err, size_t errlen)
{
	int rc;
	int32_t hid = src->hid, mid = 0;
	const struct cgpath *cgp = src->cgroup ? &src->cg : NULL;
	struct pt *pts = NULL;
	size_t n = 0;
	json_t *points = NULL;

	*out = NULL;
	if (!q->host || !q->metric || q->until_ms < q->since_ms || q->until_ms - q->since_ms > SERIES_MAX_RANGE_MS ||
	    q->points < 0 || q->points > SERIES_MAX_POINTS) {
		snprintf(err, errlen, "invalid series query: need host, metric, since <= until within 400 days, "
			 "points 0..%d", SERIES_MAX_POINTS);
		return STORE_EINVAL;
	}
	if ((rc = store_metric_id(st, c, q->metric, &mid, err, errlen)) != STORE_OK)
		goto out;
	bool cg = cgp != NULL;
	enum metric_kind kind = metric_kind(q->metric, cg);
	double scale = metric_scale(q->metric, cg);
	int slot = cg ? -1 : rollup_slot(q->metric), cgslot = cg ? cgroll_slot(q->metric) : -1;
	bool from_rollup = false;
	bool long_range = mid && q->points > 0 && q->source != SERIES_RAW &&
			  (q->source == SERIES_ROLLUP || q->until_ms - q->since_ms > SERIES_ROLLUP_AFTER_MS);
	if (long_range && cgslot >= 0) {
		int64_t span = q->until_ms - q->since_ms + 1;
		int64_t rstep = (span + q->points - 1) / q->points;
		if (rstep < 1)
			rstep = 1;
		rc = cgroll_points(c, hid, cgp, (uint32_t)mid, cgslot, q->since_ms, q->until_ms, rstep,
				   (int)((span + rstep - 1) / rstep), kind, scale, q->source == SERIES_ROLLUP, &points,
				   err, errlen);
		if (rc != STORE_OK)
			goto out;
		from_rollup = points != NULL;
	}
	if (long_range && slot >= 0) {
		int64_t span = q->until_ms - q->since_ms + 1;
		int64_t rstep = (span + q->points - 1) / q->points;
		rc = rollup_points(c, hid, slot, q->since_ms, q->until_ms, rstep < 1 ? 1 : rstep,
				   q->source == SERIES_ROLLUP, &points, err, errlen);
		if (rc != STORE_OK)
			goto out;
		from_rollup = points != NULL || q->source == SERIES_ROLLUP;
		if (q->source == SERIES_ROLLUP && !points && !(points = json_array())) {
			snprintf(err, errlen, "out of memory");
			rc = STORE_EINTERNAL;
			goto out;
		}
	}
	if (mid && !from_rollup) {
		/* from one ms before since so the first point has a predecessor */
		rc = read_points(c, hid, q->since_ms - 1, q->until_ms, (uint32_t)mid, cgp, &pts, &n, err, errlen);
		if (rc != STORE_OK)
			goto out;
	}
	int64_t step = 0;
	if (q->points > 0) {
		int64_t span = q->until_ms - q->since_ms + 1;
		step = (span + q->points - 1) / q->points;
		if (step < 1)
			step = 1;
		int nb = (int)((span + step - 1) / step);
		if (!from_rollup)
			points = bucket_points(pts, n, q->since_ms, step, nb, kind, scale);
	} else {
		points = raw_points(pts, n, q->since_ms, kind, scale);
	}
	if (!points) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
		goto out;
	}
	if (json_array_size(points) == 0) {
		/* nothing in the window: fine for a name the host reports, a
		 * 404 for one it never did (a typo, another kernel's name) */
		bool yes;
		if ((rc = reported(st, c, src, (uint32_t)mid, &yes, err, errlen)) != STORE_OK)
			goto out;
		if (!yes) {
			if (cg)
				snprintf(err, errlen, "%s was never reported by cgroup %s of %s", q->metric,
					 q->cgroup, q->host);
			else
				snprintf(err, errlen, "%s was never reported by %s", q->metric, q->host);
			rc = STORE_ENOMETRIC;
			goto out;
		}
	}
	json_t *o = json_object();
	int bad = !o;
	if (!bad) {
		bad |= json_object_set_new(o, "host", json_string(q->host));
		bad |= json_object_set_new(o, "cgroup", cg ? json_string(q->cgroup) : json_null());
		bad |= json_object_set_new(o, "metric", json_string(q->metric));
		bad |= json_object_set_new(o, "kind", json_string(metric_kind_word(kind)));
		bad |= json_object_set_new(o, "unit", json_string(metric_unit(q->metric, cg)));
		bad |= json_object_set_new(o, "since_ts", json_real((double)q->since_ms / 1000.0));
		bad |= json_object_set_new(o, "until_ts", json_real((double)q->until_ms / 1000.0));
		bad |= json_object_set_new(o, "downsampled", json_boolean(q->points > 0));
		bad |= json_object_set_new(o, "source", json_string(from_rollup ? "rollup" : "raw"));
		if (q->points > 0)
			bad |= json_object_set_new(o, "step_s", json_real((double)step / 1000.0));
		bad |= json_object_set_new(o, "points", points);
		points = NULL;
	}
	if (bad) {
		json_decref(o);
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
		goto out;
	}
	*out = o;
out:
	json_decref(points);
	free(pts);
	return rc;
}

int store_series(struct store *st, const struct series_query *q, json_t **out, char *err, size_t errlen)
{
	struct series_src src;
	int rc;

	*out = NULL;
	PGconn *c = store_read_get(st, &rc, err, errlen);
	if (!c)
		return rc;
	if ((rc = series_src_open(c, q->host, q->cgroup, q->cgroup_version, &src, err, errlen)) == STORE_OK)
		rc = series_read(st, c, &src, q, out, err, errlen);
	series_src_release(&src);
	store_read_put(st, c, rc);
	return rc;
}
