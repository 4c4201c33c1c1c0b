/* regress.c - the kernel-regression watch's statistics (see regress.h). */
#include "regress.h"

#include "alert_json.h"
#include "stats.h"
#include "urlenc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The figures the watch tests and how much worse counts. The floors are
 * differences of the hosts' medians that matter to an operator whatever
 * the fleet's size (50 pages/s is 0.2 MB/s with 4 KiB pages; 1 point of
 * memory PSI is 0.6 s a minute with a task stalled); scanning and
 * stealing rates are left out: more reclaim is not worse by itself, its
 * cost shows in the figures below. */
static const struct {
	const char *name;
	double floor;
	const char *theme;
} watched[] = {
	{ "kswapd_efficiency", 10, "reclaim efficiency" },	/* points of % */
	{ "direct_efficiency", 10, "reclaim efficiency" },
	{ "refault_file", 50, "refaults" },
	{ "swap_in", 50, "swap" },
	{ "swap_out", 50, "swap" },
	{ "immediate_reclaim", 50, "writeback" },
	/* every page pageout() wrote, swap included (mm/vmscan.c): not
	 * "writeback", whose figure is immediate_reclaim */
	{ "vmscan_write", 10, "reclaim writes (file or swap)" },
	{ "psi_memory_some", 1, "memory pressure" },
	{ "psi_memory_full", 1, "memory pressure" },
	{ "psi_io_some", 2, "I/O pressure" },
	{ "psi_io_full", 2, "I/O pressure" },
};
#define ALERT_MINUTES "alert_minutes_"
#define ALERT_MINUTES_FLOOR 30	/* min/host-day: 2 % of the time */

bool regress_watched(const char *name, struct regress_watch_fig *out)
{
	for (size_t i = 0; i < sizeof(watched) / sizeof(watched[0]); i++)
		if (strcmp(name, watched[i].name) == 0) {
			out->floor = watched[i].floor;
			snprintf(out->theme, sizeof(out->theme), "%s", watched[i].theme);
			return true;
		}
	if (strncmp(name, ALERT_MINUTES, strlen(ALERT_MINUTES)) != 0)
		return false;
	const char *kind = name + strlen(ALERT_MINUTES);
	/* a silent host or a wrong clock says nothing about reclaim */
	if (strcmp(kind, "host_silent") == 0 || strcmp(kind, "clock_skew") == 0 || strcmp(kind, REGRESS_KIND) == 0)
		return false;
	out->floor = ALERT_MINUTES_FLOOR;
	if (strcmp(kind, "writeback_storm") == 0)
		snprintf(out->theme, sizeof(out->theme), "writeback");
	else if (strcmp(kind, "thrash") == 0)
		snprintf(out->theme, sizeof(out->theme), "thrashing");
	else if (strcmp(kind, "swap_imbalance") == 0)
		snprintf(out->theme, sizeof(out->theme), "swap");
	else {
		size_t k = 0;
		for (; kind[k] && k + 1 < sizeof(out->theme) - 7; k++)
			out->theme[k] = kind[k] == '_' ? ' ' : kind[k];
		snprintf(out->theme + k, sizeof(out->theme) - k, " alerts");
	}
	return true;
}

/* mean, p5, p50, p95 of x[0..n) (reordered) */
static void side_stats(double *x, size_t n, struct regress_side *s)
{
	static const double ps[3] = { 0.05, 0.50, 0.95 };
	double q[3];

	s->hosts = (int)n;
	s->mean = stats_mean(x, n);
	stats_percentiles(x, n, ps, 3, q);
	s->p5 = q[0];
	s->p50 = q[1];
	s->p95 = q[2];
}

/* The effect of the medians: how many times and how much worse the
 * release's is, in the figure's direction. */
static void effect(struct regress_fig *o)
{
	double good_b, good_r;	/* the "bad" amount on each side */

	if (o->higher_better) {
		o->diff = o->med_base - o->med_rel;
		good_b = 100 - o->med_base;	/* the unreclaimed share */
		good_r = 100 - o->med_rel;
	} else {
		o->diff = o->med_rel - o->med_base;
		good_b = o->med_base;
		good_r = o->med_rel;
	}
	if (good_b > 0)
		o->ratio = good_r / good_b;
	else
		o->ratio = good_r > 0 ? INFINITY : 1;
	o->effect = o->diff >= o->watch.floor && o->ratio >= REGRESS_MIN_RATIO;
}

/* The host values of figure f: v, side and stratum per host with a value
 * and, with strata, in a stratum that holds both sides. Returns how many. */
static size_t host_values(const struct compare *c, int f, const int *stratum, int nstrata, double *v, int *sd,
			  int *st, int *used_strata)
{
	int cnt[REGRESS_MAX_STRATA][2];
	size_t m = 0, nh = compare_nhosts(c);

	memset(cnt, 0, sizeof(cnt));
	for (size_t i = 0; i < nh; i++) {
		double x;
		int s = stratum ? stratum[i] : 0;
		if (s < 0 || s >= REGRESS_MAX_STRATA || !compare_host_value(c, f, i, &x))
			continue;
		v[m] = x;
		sd[m] = compare_side(c, i);
		st[m] = s;
		cnt[s][sd[m]]++;
		m++;
	}
	size_t k = 0;
	*used_strata = 0;
	for (int s = 0; s < (stratum ? nstrata : 1); s++)
		*used_strata += cnt[s][0] && cnt[s][1];
	for (size_t i = 0; i < m; i++) {
		if (!cnt[st[i]][0] || !cnt[st[i]][1])
			continue;	/* a stratum of one release only: no comparison there */
		v[k] = v[i];
		sd[k] = sd[i];
		st[k] = st[i];
		k++;
	}
	return k;
}

int regress_figure(const struct compare *c, int f, const int *stratum, int nstrata, int min_rel,
		   struct regress_fig *out)
{
	struct compare_fig d;
	size_t nh = compare_nhosts(c);
	int rc = -1;

	compare_fig_info(c, f, &d);
	memset(out, 0, sizeof(*out));
	if (!regress_watched(d.name, &out->watch) || nstrata > REGRESS_MAX_STRATA)
		return -1;
	snprintf(out->name, sizeof(out->name), "%s", d.name);
	snprintf(out->label, sizeof(out->label), "%s", d.label);
	snprintf(out->unit, sizeof(out->unit), "%s", d.unit);
	out->higher_better = d.higher_better;
	out->method = stratum ? "van-elteren" : "mann-whitney-u";
	out->p = out->p_adj = NAN;
	out->base.mean = out->base.p5 = out->base.p50 = out->base.p95 = NAN;
	out->rel = out->base;
	out->med_base = out->med_rel = out->ratio = out->diff = NAN;

	double *v = malloc((nh ? nh : 1) * sizeof(*v)), *a = malloc((nh ? nh : 1) * sizeof(*a));
	double *b = malloc((nh ? nh : 1) * sizeof(*b)), *wa = malloc((nh ? nh : 1) * sizeof(*wa));
	int *sd = malloc((nh ? nh : 1) * sizeof(*sd)), *st = malloc((nh ? nh : 1) * sizeof(*st));
	if (!v || !a || !b || !wa || !sd || !st)
		goto out;
	size_t m = host_values(c, f, stratum, nstrata, v, sd, st, &out->strata);
	/* the baseline's hosts weighted to the release's mix of strata: a
	 * host of stratum s counts n_rel(s) / n_base(s) */
	int cnt[REGRESS_MAX_STRATA][2];
	memset(cnt, 0, sizeof(cnt));
	for (size_t i = 0; i < m; i++)
		cnt[st[i]][sd[i]]++;
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < m; i++) {
		if (sd[i] == 0) {
			wa[na] = (double)cnt[st[i]][1] / (double)cnt[st[i]][0];
			a[na++] = v[i];
		} else {
			b[nb++] = v[i];
		}
	}
	rc = 0;
	/* a figure whose host values are all equal (no swap anywhere) can
	 * never reject: left out of the Holm family, it does not raise the
	 * bar for the figures that can (Tarone) */
	bool spread = false;
	for (size_t i = 1; i < m && !spread; i++)
		spread = v[i] != v[0];
	/* the release's hosts with a value must be enough (a few must not
	 * decide); few baseline hosts only lower the least p attainable */
	if (!na || nb < (size_t)(min_rel > 0 ? min_rel : 1) || !spread) {
		out->base.hosts = (int)na;
		out->rel.hosts = (int)nb;
		goto out;
	}
	bool b_higher, b_lower;
	/* one shared stratum: van Elteren's statistic is the U test's, whose
	 * exact p the normal approximation would overstate for few hosts */
	if (stratum && out->strata > 1) {
		struct stats_strat t;
		if (stats_van_elteren(v, sd, st, m, nstrata, &t) < 0) {
			rc = -1;
			goto out;
		}
		/* never below the least p the design can give (one arrangement of
		 * the 1 / prod C(N_s, k_s) within strata, each tail): the normal
		 * approximation goes below it on small strata */
		double lc = 0;
		for (int s = 0; s < nstrata; s++)
			if (cnt[s][0] && cnt[s][1])
				lc += lgamma(cnt[s][0] + cnt[s][1] + 1.0) - lgamma(cnt[s][0] + 1.0) -
				      lgamma(cnt[s][1] + 1.0);
		out->p = fmax(t.p, fmin(1, 2 * exp(-lc)));
		b_higher = t.z < 0;
		b_lower = t.z > 0;
	} else {
		struct stats_mwu t;
		if (stats_mann_whitney(a, na, b, nb, &t) < 0) {
			rc = -1;
			goto out;
		}
		double mu = (double)na * (double)nb / 2.0;
		out->p = t.p;
		out->method = "mann-whitney-u";
		out->strata = 1;
		b_higher = t.u < mu;
		b_lower = t.u > mu;
	}
	out->tested = true;
	out->worse_side = out->higher_better ? b_lower : b_higher;
	out->med_base = stats_weighted_median(a, wa, na);
	side_stats(a, na, &out->base);	/* reorders a: after the median */
	side_stats(b, nb, &out->rel);
	out->med_rel = out->rel.p50;
	effect(out);
out:
	free(v);
	free(a);
	free(b);
	free(wa);
	free(sd);
	free(st);
	return rc;
}

void regress_decide(struct regress_fig *figs, size_t n, double alpha)
{
	double *p = calloc(n ? n : 1, sizeof(*p)), *adj = calloc(n ? n : 1, sizeof(*adj));

	if (p && adj) {
		for (size_t i = 0; i < n; i++)
			p[i] = figs[i].tested ? figs[i].p : NAN;
		stats_holm(p, n, adj);
		for (size_t i = 0; i < n; i++)
			figs[i].p_adj = adj[i];
	} else {
		/* out of memory: Bonferroni, never below Holm */
		for (size_t i = 0; i < n; i++)
			figs[i].p_adj = figs[i].tested ? fmin(1, figs[i].p * (double)n) : NAN;
	}
	for (size_t i = 0; i < n; i++)
		figs[i].worse = figs[i].tested && figs[i].p_adj < alpha && figs[i].worse_side && figs[i].effect;
	free(p);
	free(adj);
}

const char *regress_severity(const struct regress_fig *figs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct regress_fig *f = &figs[i];
		if (!f->worse)
			continue;
		if (f->higher_better ? f->med_rel < f->base.p5 : f->med_rel > f->base.p95)
			return "critical";
	}
	return "warning";
}

bool regress_resolves(int64_t now_ms, int64_t confirmed_ms, int64_t window_ms, int release_hosts)
{
	return release_hosts == 0 || now_ms - confirmed_ms >= window_ms;
}

int regress_strata(const struct cmp_host *h, const int *side, size_t n, const char *label, int *stratum,
		   const char *names[REGRESS_MAX_STRATA])
{
	int ns = 0;

	for (size_t i = 0; i < n; i++) {
		stratum[i] = -1;
		if (side[i] < 0)
			continue;
		const char *v = json_string_value(json_object_get(h[i].labels, label));
		if (!v)
			v = "";
		int k = 0;
		while (k < ns && strcmp(names[k], v) != 0)
			k++;
		if (k == ns) {
			if (ns < REGRESS_MAX_STRATA - 1)
				names[ns++] = v;
			else if (ns == REGRESS_MAX_STRATA - 1)
				names[ns++] = "(other)";	/* every further value */
			k = ns - 1;
		}
		stratum[i] = k;
	}
	return ns;
}

/* ---- how the two sides' labels differ ---- */

#define MIX_KEYS 16	/* label keys looked at */
#define MIX_VALUES 32	/* values counted per key; further ones as "(other)" */
#define MIX_SHOW_KEYS 5
#define MIX_SHOW_VALUES 8
#define MIX_MIN_DISTANCE 0.25

struct mix_value {
	const char *v;	/* NULL: the host lacks the key */
	int n[2];
};

struct mix_key {
	const char *key;
	struct mix_value val[MIX_VALUES + 1];	/* the last: "(other)" */
	int nval;
	double dist;
};

static void mix_count(struct mix_key *k, const char *v, int side)
{
	int i = 0;
	while (i < k->nval && !(v == k->val[i].v || (v && k->val[i].v && strcmp(v, k->val[i].v) == 0)))
		i++;
	if (i == k->nval) {
		if (k->nval == MIX_VALUES) {
			i = MIX_VALUES;
			k->val[i].v = "(other)";
		} else {
			k->val[i].v = v;
			k->nval++;
		}
	}
	k->val[i].n[side]++;
}

static int by_dist(const void *x, const void *y)
{
	double a = ((const struct mix_key *)x)->dist, b = ((const struct mix_key *)y)->dist;
	return (a < b) - (a > b);
}

static int by_count(const void *x, const void *y)
{
	const struct mix_value *a = x, *b = y;
	return (b->n[0] + b->n[1]) - (a->n[0] + a->n[1]);
}

/* {value: hosts} of one side, the most frequent values first (k's values
 * sorted), "(other)" last */
static json_t *mix_side(const struct mix_key *k, int side)
{
	json_t *o = json_object();
	int shown = 0;

	for (int i = 0; o && i < k->nval && shown < MIX_SHOW_VALUES; i++) {
		if (!k->val[i].n[side])
			continue;
		json_object_set_new(o, k->val[i].v ? k->val[i].v : "(none)", json_integer(k->val[i].n[side]));
		shown++;
	}
	if (o && k->val[MIX_VALUES].n[side])
		json_object_set_new(o, "(other)", json_integer(k->val[MIX_VALUES].n[side]));
	return o;
}

json_t *regress_label_mix(const struct cmp_host *h, const int *side, size_t n)
{
	struct mix_key *keys = calloc(MIX_KEYS, sizeof(*keys));
	int nkeys = 0, tot[2] = { 0, 0 };
	json_t *out = json_array();

	if (!keys || !out) {
		free(keys);
		json_decref(out);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *key;
		json_t *val;
		if (side[i] < 0 || side[i] > 1)
			continue;
		tot[side[i]]++;
		json_object_foreach(h[i].labels, key, val) {
			int k = 0;
			while (k < nkeys && strcmp(keys[k].key, key) != 0)
				k++;
			if (k == nkeys && nkeys < MIX_KEYS)
				keys[nkeys++].key = key;
		}
	}
	for (int k = 0; k < nkeys; k++) {
		for (size_t i = 0; i < n; i++)
			if (side[i] == 0 || side[i] == 1)
				mix_count(&keys[k], json_string_value(json_object_get(h[i].labels, keys[k].key)), side[i]);
		double d = 0;
		for (int v = 0; v <= MIX_VALUES; v++)
			if (tot[0] && tot[1])
				d += fabs((double)keys[k].val[v].n[0] / tot[0] - (double)keys[k].val[v].n[1] / tot[1]);
		keys[k].dist = d / 2;
	}
	qsort(keys, (size_t)nkeys, sizeof(*keys), by_dist);
	for (int k = 0; k < nkeys && k < MIX_SHOW_KEYS && keys[k].dist >= MIX_MIN_DISTANCE; k++) {
		qsort(keys[k].val, (size_t)keys[k].nval, sizeof(keys[k].val[0]), by_count);
		json_t *e = json_pack("{s:s,s:f,s:o*,s:o*}", "label", keys[k].key,
				      "distance", round(keys[k].dist * 1000) / 1000,
				      "release", mix_side(&keys[k], 1), "baseline", mix_side(&keys[k], 0));
		if (!e || json_array_append_new(out, e) < 0) {
			json_decref(out);
			out = NULL;
			break;
		}
	}
	free(keys);
	return out;
}

/* ---- the alert ---- */

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *side_json(const struct regress_side *s)
{
	return json_pack("{s:i,s:o,s:o,s:o}", "hosts", s->hosts, "mean", num(s->mean), "p50", num(s->p50),
			 "p95", num(s->p95));
}

static json_t *fig_json(const struct regress_fig *f)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:o*,s:o*,s:o,s:o,s:o,s:o,s:f,s:s,s:i,s:o,s:o}",
			 "name", f->name, "label", f->label, "unit", f->unit,
			 "better", f->higher_better ? "higher" : "lower", "theme", f->watch.theme,
			 "release", side_json(&f->rel), "baseline", side_json(&f->base),
			 "median_release", num(f->med_rel), "median_baseline", num(f->med_base),
			 "median_ratio", num(f->ratio), "median_diff", num(f->diff), "floor", f->watch.floor,
			 "test", f->method, "strata", f->strata, "p", num(f->p), "p_adjusted", num(f->p_adj));
}

/* The compare view's window that covers the watch's */
static const char *page_range(int64_t window_ms)
{
	static const struct { const char *name; int64_t s; } r[] = {
		{ "1h", 3600 }, { "6h", 21600 }, { "24h", 86400 }, { "3d", 259200 },
	};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (window_ms <= r[i].s * 1000)
			return r[i].name;
	return "7d";
}

/* With strata, the value of the one stratum both releases share (NULL
 * when several or none do, or when it is hosts without the label): a
 * compare question can filter on one label value, and it is then the
 * question the verdict answered. */
static const char *shared_stratum(const struct regress_pair *p)
{
	const char *one = NULL;
	size_t i;
	json_t *e;

	if (!p->stratify)
		return NULL;
	json_array_foreach(p->strata, i, e) {
		if (!json_is_true(json_object_get(e, "shared")))
			continue;
		if (one)
			return NULL;
		one = json_string_value(json_object_get(e, "value"));
	}
	return one && *one && strcmp(one, "(other)") != 0 ? one : NULL;
}

/* "&label=KEY%3AVALUE" for shared_stratum's value, else nothing */
static size_t label_arg(char *out, size_t cap, size_t at, const struct regress_pair *p, const char *value)
{
	if (!value)
		return at;
	at += (size_t)snprintf(out + at, cap - at, "&label=");
	at = urlenc_append(out, cap, at, p->stratify);
	at = urlenc_append(out, cap, at, ":");
	return urlenc_append(out, cap, at, value);
}

/* "#/compare?group_by=kernel&a=A&b=B&range=R[&label=K:V]&mark=f1,f2" and
 * the API question of the run's exact window (label: shared_stratum). */
static json_t *links(const struct regress_pair *p, const struct regress_fig *figs, size_t n)
{
	const char *value = shared_stratum(p);
	size_t cap = 256 + 6 * (strlen(p->release) + strlen(p->baseline)) + 3 * 64 * n +
		     (value ? 3 * (strlen(p->stratify) + strlen(value)) + 16 : 0);
	char *page = malloc(cap), *api = malloc(cap);
	json_t *o = NULL;

	if (!page || !api)
		goto out;
	size_t at = (size_t)snprintf(page, cap, "#/compare?group_by=kernel&a=");
	at = urlenc_append(page, cap, at, p->baseline);
	at += (size_t)snprintf(page + at, cap - at, "&b=");
	at = urlenc_append(page, cap, at, p->release);
	at += (size_t)snprintf(page + at, cap - at, "&range=%s", page_range(p->until_ms - p->since_ms));
	at = label_arg(page, cap, at, p, value);
	at += (size_t)snprintf(page + at, cap - at, "&mark=");
	for (size_t i = 0; i < n; i++) {
		if (i)
			at = urlenc_append(page, cap, at, ",");
		at = urlenc_append(page, cap, at, figs[i].name);
	}
	at = (size_t)snprintf(api, cap, "/api/v1/compare?group_by=kernel&a=");
	at = urlenc_append(api, cap, at, p->baseline);
	at += (size_t)snprintf(api + at, cap - at, "&b=");
	at = urlenc_append(api, cap, at, p->release);
	at += (size_t)snprintf(api + at, cap - at, "&since=%lld&until=%lld", (long long)p->since_ms,
			       (long long)p->until_ms);
	label_arg(api, cap, at, p, value);
	o = json_pack("{s:s,s:s}", "page", page, "api", api);
out:
	free(page);
	free(api);
	return o;
}

/* The figures' themes, each once, in order. */
static json_t *themes(const struct regress_fig *figs, size_t n)
{
	json_t *t = json_array();
	for (size_t i = 0; t && i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen = seen || strcmp(figs[j].watch.theme, figs[i].watch.theme) == 0;
		if (!seen)
			json_array_append_new(t, json_string(figs[i].watch.theme));
	}
	return t;
}

char *regress_summary(const struct regress_pair *p, const struct regress_fig *figs, size_t n, char *buf,
		      size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "%s vs %s: ", p->release, p->baseline);
	double best = NAN;

	for (size_t i = 0; i < n && at < len; i++) {
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen = seen || strcmp(figs[j].watch.theme, figs[i].watch.theme) == 0;
		if (!seen)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", figs[i].watch.theme);
		if (isnan(best) || figs[i].p_adj < best)
			best = figs[i].p_adj;
	}
	if (at < len)
		snprintf(buf + at, len - at, " worse, %d vs %d hosts, p = %.2g", p->hosts_rel, p->hosts_base, best);
	return buf;
}

json_t *regress_evidence(const struct regress_pair *p, const struct regress_fig *figs, size_t n)
{
	char since[40], until[40];
	json_t *f = json_array(), *o;

	for (size_t i = 0; f && i < n; i++)
		if (json_array_append_new(f, fig_json(&figs[i])) < 0) {
			json_decref(f);
			f = NULL;
		}
	if (!f)
		return NULL;
	alert_time_format(p->since_ms, since, sizeof(since));
	alert_time_format(p->until_ms, until, sizeof(until));
	o = json_pack("{s:s,s:s,s:s,s:{s:i,s:i},s:I,s:s,s:s,s:f,s:f,s:o,s:o*,s:{s:s,s:i,s:f},s:f,s:o*,"
		      "s:s,s:f}",
		      "release", p->release, "baseline", p->baseline, "baseline_source", p->baseline_source,
		      "hosts", "release", p->hosts_rel, "baseline", p->hosts_base,
		      "window_s", (json_int_t)((p->until_ms - p->since_ms) / 1000), "since", since, "until", until,
		      "since_ts", (double)p->since_ms / 1000, "until_ts", (double)p->until_ms / 1000,
		      "figures", f, "themes", themes(figs, n),
		      "correction", "method", "holm", "tests", p->tests, "alpha", p->alpha,
		      "min_ratio", REGRESS_MIN_RATIO, "compare", links(p, figs, n),
		      "confirmed_at", until, "confirmed_ts", (double)p->until_ms / 1000);
	if (!o)
		return NULL;
	if (p->stratify) {
		json_t *s = json_pack("{s:s,s:s,s:O}", "label", p->stratify, "test", "van-elteren",
				      "strata", p->strata ? p->strata : json_null());
		if (!s || json_object_set_new(o, "stratify", s) < 0)
			goto oom;
	} else {
		if (json_object_set_new(o, "stratify", json_null()) < 0)
			goto oom;
		if (p->label_mix && json_object_set(o, "label_mix", p->label_mix) < 0)
			goto oom;
		const char *key = json_string_value(json_object_get(json_array_get(p->label_mix, 0), "label"));
		char hint[320];
		if (key) {
			snprintf(hint, sizeof(hint), "the hosts of the two releases differ by %.64s: if %.64s changes "
				 "reclaim behaviour, compare within it with --regression-stratify %.64s", key, key, key);
			if (json_object_set_new(o, "hint", json_string(hint)) < 0)
				goto oom;
		}
	}
	return o;
oom:
	json_decref(o);
	return NULL;
}
