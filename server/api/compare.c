/* compare.c - the figures of the compare endpoint (see compare.h).
 *
 * Definitions (docs/api.md "Compare"):
 * - a host-interval is one host's 5-minute rollup bucket; its value of a
 *   rate figure is the bucket's mean rate (the rollup's sum / count);
 * - efficiency figures are 100 * steal / scan of the bucket's mean rates,
 *   only in buckets that scanned; the host's value is 100 * sum(steal) /
 *   sum(scan) over its buckets (a scan-weighted mean, so a bucket that
 *   scanned 3 pages counts for 3 pages);
 * - alert_minutes_<kind> of a bucket are the minutes of the bucket during
 *   which an alert of that kind (host-wide or any cgroup) was open, capped
 *   at the bucket's 5 minutes, times 288 buckets a day: the mean over a
 *   host's buckets is its alert minutes per host-day of observed time. An
 *   alert still open ends at the host's newest sample.
 * Every other host value is the mean of its bucket values.
 */
#include "compare.h"

#include "stats.h"
#include "store_rollup.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	F_KSWAPD_EFF, F_DIRECT_EFF, F_SCAN_K, F_SCAN_D, F_STEAL_K, F_STEAL_D,
	F_REFAULT_FILE, F_REFAULT_ANON, F_VMSCAN_WRITE, F_IMMEDIATE, F_ALLOCSTALL,
	F_SWAP_IN, F_SWAP_OUT, F_PSI_SOME, F_PSI_FULL, F_PSI_IO_SOME, F_PSI_IO_FULL, F_NBASE
};
#define F_MAX (F_NBASE + COMPARE_MAX_KINDS)

static const struct compare_fig base_fig[F_NBASE] = {
	[F_KSWAPD_EFF] = { "kswapd_efficiency", "kswapd reclaim efficiency (steal/scan)", "%", true },
	[F_DIRECT_EFF] = { "direct_efficiency", "direct reclaim efficiency (steal/scan)", "%", true },
	[F_SCAN_K] = { "scan_kswapd", "pages scanned by kswapd", "pages/s", false },
	[F_SCAN_D] = { "scan_direct", "pages scanned by direct reclaim", "pages/s", false },
	[F_STEAL_K] = { "steal_kswapd", "pages reclaimed by kswapd", "pages/s", false },
	[F_STEAL_D] = { "steal_direct", "pages reclaimed by direct reclaim", "pages/s", false },
	[F_REFAULT_FILE] = { "refault_file", "file refaults", "/s", false },
	[F_REFAULT_ANON] = { "refault_anon", "anon refaults", "/s", false },
	[F_VMSCAN_WRITE] = { "vmscan_write", "pages written from reclaim (file)", "pages/s", false },
	[F_IMMEDIATE] = { "immediate_reclaim", "pages tagged for immediate reclaim", "/s", false },
	[F_ALLOCSTALL] = { "allocstall", "allocation stalls (direct reclaim entries)", "/s", false },
	[F_SWAP_IN] = { "swap_in", "pages swapped in", "pages/s", false },
	[F_SWAP_OUT] = { "swap_out", "pages swapped out", "pages/s", false },
	[F_PSI_SOME] = { "psi_memory_some", "memory pressure, some (avg10)", "%", false },
	[F_PSI_FULL] = { "psi_memory_full", "memory pressure, full (avg10)", "%", false },
	/* beyond docs/api.md's first list: where a writeback regression shows */
	[F_PSI_IO_SOME] = { "psi_io_some", "I/O pressure, some (avg10)", "%", false },
	[F_PSI_IO_FULL] = { "psi_io_full", "I/O pressure, full (avg10)", "%", false },
};

/* An array of host-interval values: a slice of the request's block (see
 * block_get), or its own allocation once it outgrew the slice. */
struct vec {
	double *v;
	size_t n, cap;
	bool owned;		/* v is malloc'd by the vec, not a slice */
};

static int vec_push(struct vec *x, double v)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 256;
		double *t = x->owned ? realloc(x->v, cap * sizeof(*t)) : malloc(cap * sizeof(*t));
		if (!t)
			return -1;
		if (!x->owned && x->n)
			memcpy(t, x->v, x->n * sizeof(*t));
		x->v = t;
		x->cap = cap;
		x->owned = true;
	}
	x->v[x->n++] = v;
	return 0;
}

/* The value arrays of a request are slices of one block sized for every
 * row the window can hold (a host has at most one rollup row per bucket),
 * so no array grows by copying; and the block of the last request is kept
 * for the next one, since faulting ~40 MB of fresh pages in (a 1,000-host
 * day) cost about a third of the server's CPU per answer. One block is
 * kept, at most BLOCK_KEEP_MAX bytes; a request that finds it taken
 * allocates its own. */
#define BLOCK_KEEP_MAX (96u << 20)

static pthread_mutex_t spare_mu = PTHREAD_MUTEX_INITIALIZER;
static double *spare;		/* owned by this file while no request holds it */
static size_t spare_cap;	/* in doubles */

static double *block_get(size_t n, size_t *cap)
{
	double *p = NULL;

	pthread_mutex_lock(&spare_mu);
	if (spare && spare_cap >= n) {
		p = spare;
		*cap = spare_cap;
		spare = NULL;
	}
	pthread_mutex_unlock(&spare_mu);
	if (p)
		return p;
	*cap = n;
	return malloc((n ? n : 1) * sizeof(double));
}

static void block_put(double *p, size_t cap)
{
	if (cap * sizeof(double) > BLOCK_KEEP_MAX) {
		free(p);
		return;
	}
	pthread_mutex_lock(&spare_mu);
	if (!spare || spare_cap < cap) {
		double *old = spare;
		spare = p;
		spare_cap = cap;
		p = old;
	}
	pthread_mutex_unlock(&spare_mu);
	free(p);
}

/* Per host and figure: the sum and count of its bucket values, and for
 * the efficiency figures the summed steal (sum) and scan (w). */
struct hacc {
	double sum, w;
	long cnt;
};

struct compare {
	const struct cmp_host *h;
	const int *side;
	size_t nh;
	const struct cmp_alert *al;
	size_t nal;
	size_t *al_from, *al_to;	/* per host: its alerts al[from..to) */
	int *al_kind;			/* per alert: kind_index of its kind, -1 beyond the kinds kept */
	int32_t id_lo;			/* by_id[id - id_lo]: host index + 1 of id, 0 none */
	uint32_t *by_id;		/* NULL when the ids are too sparse (binary search then) */
	size_t nby_id;
	int nfig;
	char kinds[COMPARE_MAX_KINDS][40];
	char kind_fig[COMPARE_MAX_KINDS][64];	/* "alert_minutes_<kind>" */
	char kind_label[COMPARE_MAX_KINDS][96];
	int nkinds;
	struct cmp_alert *own_al;	/* compare_load's alerts, freed with c */
	struct hacc *acc;		/* nh * nfig */
	struct vec vals[2][F_MAX];
	double *block;			/* the slices of vals (block_get) */
	size_t block_cap;
};

static int kind_index(const struct compare *c, const char *kind)
{
	for (int k = 0; k < c->nkinds; k++)
		if (strcmp(c->kinds[k], kind) == 0)
			return k;
	return -1;
}

static int cmp_kind(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static long host_index(const struct compare *c, int32_t id)
{
	if (c->by_id) {
		int64_t k = (int64_t)id - c->id_lo;
		return k >= 0 && (uint64_t)k < c->nby_id ? (long)c->by_id[k] - 1 : -1;
	}
	size_t lo = 0, hi = c->nh;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->h[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nh && c->h[lo].id == id ? (long)lo : -1;
}

/* A table from host id to host index, looked up once per rollup row
 * instead of a binary search: hosts.id is a serial, so a fleet's ids are
 * dense. Skipped (NULL) when they span more than 4 slots per host. */
static int index_ids(struct compare *c)
{
	if (!c->nh)
		return 0;
	int64_t span = (int64_t)c->h[c->nh - 1].id - c->h[0].id + 1;
	if (span <= 0 || span > 4 * (int64_t)c->nh + 1024)
		return 0;
	c->id_lo = c->h[0].id;
	c->nby_id = (size_t)span;
	if (!(c->by_id = calloc(c->nby_id, sizeof(*c->by_id))))
		return -1;
	for (size_t i = 0; i < c->nh; i++)
		c->by_id[c->h[i].id - c->id_lo] = (uint32_t)(i + 1);
	return 0;
}

struct compare *compare_new(const struct cmp_host *hosts, const int *side, size_t n,
			    const struct cmp_alert *alerts, size_t nalerts, size_t buckets)
{
	struct compare *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->h = hosts;
	c->side = side;
	c->nh = n;
	c->al = alerts;
	c->nal = nalerts;
	for (size_t i = 0; i < nalerts; i++) {
		if (kind_index(c, alerts[i].kind) >= 0 || c->nkinds == COMPARE_MAX_KINDS)
			continue;
		snprintf(c->kinds[c->nkinds++], sizeof(c->kinds[0]), "%s", alerts[i].kind);
	}
	qsort(c->kinds, (size_t)c->nkinds, sizeof(c->kinds[0]), cmp_kind);
	for (int k = 0; k < c->nkinds; k++) {
		snprintf(c->kind_fig[k], sizeof(c->kind_fig[k]), "alert_minutes_%s", c->kinds[k]);
		snprintf(c->kind_label[k], sizeof(c->kind_label[k]), "minutes of open %s alerts", c->kinds[k]);
	}
	c->nfig = F_NBASE + c->nkinds;
	c->acc = calloc(n ? n * (size_t)c->nfig : 1, sizeof(*c->acc));
	c->al_from = calloc(n ? n : 1, sizeof(size_t));
	c->al_to = calloc(n ? n : 1, sizeof(size_t));
	c->al_kind = calloc(nalerts ? nalerts : 1, sizeof(int));
	if (!c->acc || !c->al_from || !c->al_to || !c->al_kind || index_ids(c) < 0) {
		compare_free(c);
		return NULL;
	}
	/* every value array sized for all its hosts' buckets: slices of one
	 * block (see block_get) */
	size_t ns[2] = { 0, 0 }, total = 0;
	for (size_t i = 0; i < n; i++)
		if (side[i] >= 0)
			ns[side[i]]++;
	total = (ns[0] + ns[1]) * buckets * (size_t)c->nfig;
	if (!(c->block = block_get(total, &c->block_cap))) {
		compare_free(c);
		return NULL;
	}
	double *at = c->block;
	for (int sd = 0; sd < 2; sd++) {
		for (int f = 0; f < c->nfig; f++) {
			c->vals[sd][f].v = at;
			c->vals[sd][f].cap = ns[sd] * buckets;
			at += ns[sd] * buckets;
		}
	}
	for (size_t i = 0; i < nalerts; i++)
		c->al_kind[i] = kind_index(c, alerts[i].kind);
	/* alerts come ordered by host id */
	for (size_t i = 0; i < nalerts;) {
		size_t j = i;
		while (j < nalerts && alerts[j].host_id == alerts[i].host_id)
			j++;
		long hi = host_index(c, alerts[i].host_id);
		if (hi >= 0) {
			c->al_from[hi] = i;
			c->al_to[hi] = j;
		}
		i = j;
	}
	return c;
}

void compare_free(struct compare *c)
{
	if (!c)
		return;
	for (int s = 0; s < 2; s++)
		for (int f = 0; f < F_MAX; f++)
			if (c->vals[s][f].owned)
				free(c->vals[s][f].v);
	if (c->block)
		block_put(c->block, c->block_cap);
	free(c->acc);
	free(c->al_from);
	free(c->al_to);
	free(c->al_kind);
	free(c->by_id);
	free(c->own_al);
	free(c);
}

/* Records value x of figure f for host hi's bucket. */
static int put(struct compare *c, size_t hi, int f, double x)
{
	struct hacc *a = &c->acc[hi * (size_t)c->nfig + (size_t)f];
	a->sum += x;
	a->cnt++;
	return vec_push(&c->vals[c->side[hi]][f], x);
}

static int put_eff(struct compare *c, size_t hi, int f, double steal, double scan)
{
	if (isnan(steal) || isnan(scan) || scan <= 0)
		return 0;
	double e = 100.0 * steal / scan;
	struct hacc *a = &c->acc[hi * (size_t)c->nfig + (size_t)f];
	a->w += scan;
	a->sum += steal;
	a->cnt++;
	return vec_push(&c->vals[c->side[hi]][f], e < 0 ? 0 : e > 100 ? 100 : e);
}

static int put_rate(struct compare *c, size_t hi, int f, double x)
{
	return isnan(x) ? 0 : put(c, hi, f, x);
}

int compare_add_row(void *ctx, int32_t host_id, int64_t bucket_ms, const double *v)
{
	struct compare *c = ctx;
	long hl = host_index(c, host_id);
	int bad = 0;

	if (hl < 0 || c->side[hl] < 0)
		return 0;
	size_t hi = (size_t)hl;
	int64_t from = c->h[hi].from_ms;
	if (from > 0 && bucket_ms < from)
		return 0;	/* before or across the start of the host's group (compare.h) */
	bad |= put_eff(c, hi, F_KSWAPD_EFF, v[CMP_STEAL_K], v[CMP_SCAN_K]);
	bad |= put_eff(c, hi, F_DIRECT_EFF, v[CMP_STEAL_D], v[CMP_SCAN_D]);
	bad |= put_rate(c, hi, F_SCAN_K, v[CMP_SCAN_K]);
	bad |= put_rate(c, hi, F_SCAN_D, v[CMP_SCAN_D]);
	bad |= put_rate(c, hi, F_STEAL_K, v[CMP_STEAL_K]);
	bad |= put_rate(c, hi, F_STEAL_D, v[CMP_STEAL_D]);
	/* workingset_refault before 5.9 (no file/anon split) */
	bad |= put_rate(c, hi, F_REFAULT_FILE, isnan(v[CMP_REFAULT_FILE]) ? v[CMP_REFAULT] : v[CMP_REFAULT_FILE]);
	bad |= put_rate(c, hi, F_REFAULT_ANON, v[CMP_REFAULT_ANON]);
	bad |= put_rate(c, hi, F_VMSCAN_WRITE, v[CMP_VMSCAN_WRITE]);
	bad |= put_rate(c, hi, F_IMMEDIATE, v[CMP_IMMEDIATE]);
	/* the rollups' vmstat.allocstall is the kernel's single counter before
	 * 4.10 and the sum of allocstall_<zone> after; without that slot, the
	 * zones' slots summed */
	double stall = v[CMP_ALLOCSTALL];
	for (int s = CMP_ALLOCSTALL_DMA; isnan(v[CMP_ALLOCSTALL]) && s <= CMP_ALLOCSTALL_DEVICE; s++)
		if (!isnan(v[s]))
			stall = isnan(stall) ? v[s] : stall + v[s];
	bad |= put_rate(c, hi, F_ALLOCSTALL, stall);
	bad |= put_rate(c, hi, F_SWAP_IN, v[CMP_PSWPIN]);
	bad |= put_rate(c, hi, F_SWAP_OUT, v[CMP_PSWPOUT]);
	bad |= put_rate(c, hi, F_PSI_SOME, v[CMP_PSI_SOME]);
	bad |= put_rate(c, hi, F_PSI_FULL, v[CMP_PSI_FULL]);
	bad |= put_rate(c, hi, F_PSI_IO_SOME, v[CMP_PSI_IO_SOME]);
	bad |= put_rate(c, hi, F_PSI_IO_FULL, v[CMP_PSI_IO_FULL]);

	/* alert minutes of each kind inside [bucket, bucket + 5 min): a
	 * bucket kept starts at or after the host's group began */
	if (c->nkinds) {
		double mins[COMPARE_MAX_KINDS] = { 0 };
		int64_t b0 = bucket_ms, b1 = bucket_ms + ROLLUP_STEP_MS;
		for (size_t i = c->al_from[hi]; i < c->al_to[hi]; i++) {
			const struct cmp_alert *a = &c->al[i];
			int k = c->al_kind[i];
			int64_t to = a->to_ms == INT64_MAX ? c->h[hi].last_ts_ms : a->to_ms;
			int64_t lo = a->from_ms > b0 ? a->from_ms : b0, up = to < b1 ? to : b1;
			if (k >= 0 && up > lo)
				mins[k] += (double)(up - lo) / 60000.0;
		}
		for (int k = 0; k < c->nkinds; k++) {
			double m = mins[k] > 5 ? 5 : mins[k];
			bad |= put(c, hi, F_NBASE + k, m * (1440.0 / 5.0));
		}
	}
	return bad ? -1 : 0;
}

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* {"hosts","n","mean","p50","p95","p99"} of one group's values (reordered);
 * stats[0..4) receive mean, p50, p95, p99 (NAN when none). */
static json_t *group_stats(struct vec *x, int hosts, double *stats)
{
	static const double ps[3] = { 0.50, 0.95, 0.99 };
	stats[0] = stats_mean(x->v, x->n);
	stats_percentiles(x->v, x->n, ps, 3, stats + 1);
	return json_pack("{s:i,s:I,s:o,s:o,s:o,s:o}", "hosts", hosts, "n", (json_int_t)x->n,
			 "mean", num(stats[0]), "p50", num(stats[1]), "p95", num(stats[2]),
			 "p99", num(stats[3]));
}

static double change(double a, double b)
{
	if (!isfinite(a) || !isfinite(b) || a == 0)
		return NAN;
	return (b - a) / fabs(a) * 100.0;
}

#define HIST_BINS 10

/* {"edges":[11],"a":[10],"b":[10]} over both groups' values; null when
 * there are none. Equal values get a bin of width 1 around them. */
static json_t *histogram(const struct vec *va, const struct vec *vb)
{
	double lo = INFINITY, hi = -INFINITY;
	const struct vec *v2[2] = { va, vb };
	json_int_t cnt[2][HIST_BINS] = { { 0 } };

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < v2[s]->n; i++) {
			if (v2[s]->v[i] < lo)
				lo = v2[s]->v[i];
			if (v2[s]->v[i] > hi)
				hi = v2[s]->v[i];
		}
	if (!(lo <= hi))
		return json_null();
	if (hi == lo) {
		lo -= 0.5;
		hi += 0.5;
	}
	double w = (hi - lo) / HIST_BINS;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < v2[s]->n; i++) {
			int b = (int)((v2[s]->v[i] - lo) / w);
			cnt[s][b < 0 ? 0 : b >= HIST_BINS ? HIST_BINS - 1 : b]++;
		}
	json_t *e = json_array(), *ca = json_array(), *cb = json_array();
	for (int i = 0; i <= HIST_BINS; i++)
		json_array_append_new(e, json_real(i == HIST_BINS ? hi : lo + w * i));
	for (int i = 0; i < HIST_BINS; i++) {
		json_array_append_new(ca, json_integer(cnt[0][i]));
		json_array_append_new(cb, json_integer(cnt[1][i]));
	}
	return json_pack("{s:o*,s:o*,s:o*}", "edges", e, "a", ca, "b", cb);
}

/* A group's hosts with the worst window means of a figure, worst first:
 * the rows the dashboard opens to show which hosts drive a change. */
#define TOP_HOSTS 5
struct top {
	size_t hi[TOP_HOSTS];
	double v[TOP_HOSTS];
	int n;
};

static void top_add(struct top *t, size_t hi, double x, bool higher_better)
{
	int at = t->n;
	while (at > 0 && (higher_better ? x < t->v[at - 1] : x > t->v[at - 1]))
		at--;
	if (at >= TOP_HOSTS)
		return;
	int last = t->n < TOP_HOSTS ? t->n : TOP_HOSTS - 1;
	for (int j = last; j > at; j--) {
		t->hi[j] = t->hi[j - 1];
		t->v[j] = t->v[j - 1];
	}
	t->hi[at] = hi;
	t->v[at] = x;
	if (t->n < TOP_HOSTS)
		t->n++;
}

static json_t *top_json(const struct compare *c, const struct top *t)
{
	json_t *arr = json_array();
	for (int i = 0; arr && i < t->n; i++) {
		json_t *o = json_pack("{s:s,s:f}", "host", c->h[t->hi[i]].name, "value", t->v[i]);
		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

int compare_nfig(const struct compare *c)
{
	return c->nfig;
}

void compare_fig_info(const struct compare *c, int f, struct compare_fig *out)
{
	if (f < F_NBASE) {
		*out = base_fig[f];
		return;
	}
	int k = f - F_NBASE;
	*out = (struct compare_fig){ c->kind_fig[k], c->kind_label[k], "min/host-day", false };
}

size_t compare_nhosts(const struct compare *c)
{
	return c->nh;
}

int compare_side(const struct compare *c, size_t i)
{
	return c->side[i];
}

bool compare_host_value(const struct compare *c, int f, size_t i, double *x)
{
	const struct hacc *a = &c->acc[i * (size_t)c->nfig + (size_t)f];
	bool eff = f == F_KSWAPD_EFF || f == F_DIRECT_EFF;
	double v;

	if (c->side[i] < 0 || !a->cnt)
		return false;
	v = eff ? (a->w > 0 ? 100.0 * a->sum / a->w : NAN) : a->sum / (double)a->cnt;
	if (eff && isfinite(v))
		v = v < 0 ? 0 : v > 100 ? 100 : v;
	if (!isfinite(v))
		return false;
	*x = v;
	return true;
}

/* One figure's object. */
static json_t *figure(struct compare *c, int f, double alpha)
{
	struct compare_fig def;

	compare_fig_info(c, f, &def);

	/* one value per host with data: the host's mean over the window */
	double *hv[2];
	size_t nhv[2] = { 0, 0 };
	struct top top[2] = { { .n = 0 }, { .n = 0 } };
	hv[0] = malloc((c->nh ? c->nh : 1) * sizeof(double));
	hv[1] = malloc((c->nh ? c->nh : 1) * sizeof(double));
	if (!hv[0] || !hv[1]) {
		free(hv[0]);
		free(hv[1]);
		return NULL;
	}
	for (size_t i = 0; i < c->nh; i++) {
		double x;
		if (compare_host_value(c, f, i, &x)) {
			hv[c->side[i]][nhv[c->side[i]]++] = x;
			top_add(&top[c->side[i]], i, x, def.higher_better);
		}
	}
	struct stats_mwu t;
	bool tested = nhv[0] && nhv[1] && stats_mann_whitney(hv[0], nhv[0], hv[1], nhv[1], &t) == 0;
	free(hv[0]);
	free(hv[1]);

	json_t *hist = histogram(&c->vals[0][f], &c->vals[1][f]);
	double sa[4], sb[4];
	json_t *ga = group_stats(&c->vals[0][f], (int)nhv[0], sa);
	json_t *gb = group_stats(&c->vals[1][f], (int)nhv[1], sb);
	bool sig = tested && t.p < alpha;
	const char *verdict = "same";
	if (sig) {
		bool b_higher = t.u < (double)nhv[0] * (double)nhv[1] / 2.0;
		verdict = b_higher == def.higher_better ? "better" : "worse";
	}
	json_t *test = tested
		? json_pack("{s:s,s:s,s:f,s:f,s:f,s:b}", "method", "mann-whitney-u", "unit", "host",
			    "u", t.u, "z", t.z, "p", t.p, "exact", t.exact)
		: json_pack("{s:s,s:s,s:n,s:n,s:n,s:b}", "method", "mann-whitney-u", "unit", "host",
			    "u", "z", "p", "exact", false);
	return json_pack("{s:s,s:s,s:s,s:s,s:o*,s:o*,s:{s:o,s:o,s:o,s:o},s:o*,s:b,s:s,s:o*,s:{s:o*,s:o*}}",
			 "name", def.name, "label", def.label, "unit", def.unit,
			 "better", def.higher_better ? "higher" : "lower",
			 "a", ga, "b", gb,
			 "change_pct", "mean", num(change(sa[0], sb[0])), "p50", num(change(sa[1], sb[1])),
			 "p95", num(change(sa[2], sb[2])), "p99", num(change(sa[3], sb[3])),
			 "test", test, "significant", sig, "verdict", verdict, "hist", hist,
			 "hosts_top", "a", top_json(c, &top[0]), "b", top_json(c, &top[1]));
}

int compare_load(struct store *st, const struct cmp_host *hosts, const int *side, size_t n,
		 int64_t since_ms, int64_t until_ms, struct compare **out, char *err, size_t errlen)
{
	int32_t *ids = calloc(n ? n : 1, sizeof(*ids));
	struct cmp_alert *al = NULL;
	size_t nids = 0, nal = 0;
	struct compare *c = NULL;
	int rc;

	*out = NULL;
	if (!ids) {
		snprintf(err, errlen, "out of memory");
		return STORE_EINTERNAL;
	}
	for (size_t i = 0; i < n; i++)
		if (side[i] >= 0)
			ids[nids++] = hosts[i].id;
	/* the values of every host-interval are held in memory (16 figures
	 * of 8 bytes): refuse what would take more than ~200 MB */
	size_t buckets = (size_t)((until_ms - since_ms) / ROLLUP_STEP_MS + 2);
	if (nids * buckets > COMPARE_MAX_INTERVALS) {
		snprintf(err, errlen, "since: %zu hosts over this window are more than %d host-intervals; "
			 "shorten the window or narrow the hosts with label=KEY:VALUE", nids, COMPARE_MAX_INTERVALS);
		free(ids);
		return STORE_EINVAL;
	}
	rc = store_compare_alerts(st, ids, nids, since_ms, until_ms, &al, &nal, err, errlen);
	if (rc == STORE_OK && !(c = compare_new(hosts, side, n, al, nal, buckets))) {
		snprintf(err, errlen, "out of memory");
		rc = STORE_EINTERNAL;
	}
	if (c)
		c->own_al = al;
	else
		free(al);
	if (rc == STORE_OK)
		rc = store_compare_rows(st, ids, nids, since_ms, until_ms, compare_add_row, c, err, errlen);
	free(ids);
	if (rc != STORE_OK) {
		compare_free(c);
		return rc;
	}
	*out = c;
	return STORE_OK;
}

json_t *compare_figures(struct compare *c, double alpha)
{
	json_t *out = json_array();

	for (int f = 0; out && f < c->nfig; f++) {
		json_t *fig = figure(c, f, alpha);
		if (!fig || json_array_append_new(out, fig) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}
