/* regress_run.c - one run of the kernel-regression watch (see regress_run.h). */
#include "regress_run.h"

#include "alert_json.h"
#include "compare.h"
#include "log.h"
#include "regress.h"
#include "regress_store.h"
#include "store_compare.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_RELEASES 200	/* releases looked at per run (the most hosts first) */

/* A kernel release with hosts in the window. */
struct release {
	const char *name;	/* borrowed from a host's kernel */
	int hosts;
	const char *status;	/* static: what the run did with it */
	size_t fig0, nfig;	/* its figures in run.figs */
	int hosts_rel, hosts_base;	/* hosts tested (with strata: in shared strata) */
	json_t *strata;		/* owned: with --regression-stratify */
	json_t *label_mix;	/* owned: without */
	bool raised;
};

struct run {
	struct store *st;
	PGconn *c;
	const struct regress_settings *s;
	int64_t now, since;
	struct cmp_host *h;
	size_t n;
	struct release *rel;
	size_t nrel;
	long base;		/* index in rel, -1 none */
	char *pinned;		/* owned */
	int pin_hosts;		/* the pinned release's hosts in the window */
	bool pin_ignored;	/* pinned, but with too few hosts: host-hours chose */
	json_t *passed_over;	/* releases host-hours passed over: their alerts are open */
	const char *base_source;
	double base_hours;
	struct regress_fig *figs;
	size_t nfigs, capfigs;
	int *side, *stratum;
	int tests;		/* p values in the Holm family */
	json_t *opened, *refreshed, *resolved;	/* release names */
	struct timespec t0;	/* monotonic start, for the report's duration */
	char *err;
	size_t errlen;
};

static int oom(struct run *r)
{
	snprintf(r->err, r->errlen, "out of memory");
	return STORE_EINTERNAL;
}

static long find_release(const struct run *r, const char *name)
{
	for (size_t i = 0; name && i < r->nrel; i++)
		if (strcmp(r->rel[i].name, name) == 0)
			return (long)i;
	return -1;
}

static int by_hosts(const void *x, const void *y)
{
	const struct release *a = x, *b = y;
	if (a->hosts != b->hosts)
		return b->hosts - a->hosts;
	return strcmp(a->name, b->name);
}

/* The releases of the hosts in the window, most hosts first. */
static int group_releases(struct run *r)
{
	r->rel = calloc(r->n ? r->n : 1, sizeof(*r->rel));
	if (!r->rel)
		return oom(r);
	for (size_t i = 0; i < r->n; i++) {
		if (!r->h[i].kernel)
			continue;
		long k = find_release(r, r->h[i].kernel);
		if (k < 0) {
			k = (long)r->nrel++;
			r->rel[k].name = r->h[i].kernel;
			r->rel[k].status = "too few hosts";
		}
		r->rel[k].hosts++;
	}
	qsort(r->rel, r->nrel, sizeof(*r->rel), by_hosts);
	if (r->nrel > MAX_RELEASES)
		r->nrel = MAX_RELEASES;
	return STORE_OK;
}

/* Whether release has an open kernel_regression alert in o[0..n). */
static bool alerted(const struct regress_open *o, size_t n, const char *release)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(o[i].release, release) == 0)
			return true;
	return false;
}

/* The pinned baseline while it has enough hosts in the window, else the
 * release with the most host-hours over REGRESS_BASELINE_DAYS among those
 * with enough hosts and no open kernel_regression alert: a pin whose
 * release left the fleet (the rollout it guarded is done) or never ran in
 * it (a typo) must not stop the watch, and a bad release rolled out to
 * most of the fleet must not become the yardstick that clears it. */
static int choose_baseline(struct run *r)
{
	int64_t since_run;
	int rc = regress_store_state(r->c, &r->pinned, &since_run, r->err, r->errlen);

	r->base = -1;
	if (rc != STORE_OK)
		return rc;
	if (r->pinned) {
		long k = find_release(r, r->pinned);
		r->pin_hosts = k >= 0 ? r->rel[k].hosts : 0;
		if (r->pin_hosts >= r->s->min_hosts) {
			r->base_source = "pinned";
			r->base = k;
			return STORE_OK;
		}
		r->pin_ignored = true;
	}
	r->base_source = "host-hours";
	struct regress_hours *hh = NULL;
	struct regress_open *o = NULL;
	size_t nh = 0, no = 0;
	if (!(r->passed_over = json_array()))
		return oom(r);
	rc = regress_store_open_alerts(r->c, &o, &no, r->err, r->errlen);
	if (rc == STORE_OK)
		rc = regress_store_host_hours(r->c, r->now, REGRESS_BASELINE_DAYS * 86400000LL, &hh, &nh, r->err,
					      r->errlen);
	for (size_t i = 0; rc == STORE_OK && i < nh && r->base < 0; i++) {
		long k = find_release(r, hh[i].release);
		if (k < 0 || r->rel[k].hosts < r->s->min_hosts)
			continue;
		if (alerted(o, no, hh[i].release)) {
			if (json_array_append_new(r->passed_over, json_string(hh[i].release)) < 0)
				rc = oom(r);
			continue;
		}
		r->base = k;
		r->base_hours = hh[i].host_hours;
	}
	regress_hours_free(hh, nh);
	free(o);
	return rc;
}

static struct regress_fig *new_fig(struct run *r)
{
	if (r->nfigs == r->capfigs) {
		size_t cap = r->capfigs ? 2 * r->capfigs : 32;
		struct regress_fig *f = realloc(r->figs, cap * sizeof(*f));
		if (!f)
			return NULL;
		r->figs = f;
		r->capfigs = cap;
	}
	return &r->figs[r->nfigs++];
}

/* With --regression-stratify: the strata of the pair's hosts, the hosts in
 * strata that hold both releases, and the strata as JSON. */
static int stratify(struct run *r, struct release *x, int *nstrata)
{
	const char *names[REGRESS_MAX_STRATA];
	int cnt[REGRESS_MAX_STRATA][2];

	*nstrata = regress_strata(r->h, r->side, r->n, r->s->stratify, r->stratum, names);
	memset(cnt, 0, sizeof(cnt));
	for (size_t i = 0; i < r->n; i++)
		if (r->stratum[i] >= 0)
			cnt[r->stratum[i]][r->side[i]]++;
	if (!(x->strata = json_array()))
		return oom(r);
	for (int k = 0; k < *nstrata; k++) {
		bool shared = cnt[k][0] && cnt[k][1];
		if (shared) {
			x->hosts_base += cnt[k][0];
			x->hosts_rel += cnt[k][1];
		}
		if (json_array_append_new(x->strata, json_pack("{s:s,s:i,s:i,s:b}", "value", names[k], "release",
							       cnt[k][1], "baseline", cnt[k][0], "shared", shared)) < 0)
			return oom(r);
	}
	return STORE_OK;
}

/* The start both a run and the baseline answer share: the hosts in the
 * window, their releases and the baseline. */
static int begin(struct run *r, struct store *st, PGconn *c, const struct regress_settings *s, int64_t now_ms,
		 char *err, size_t errlen)
{
	*r = (struct run){ .st = st, .c = c, .s = s, .now = now_ms, .since = now_ms - s->window_ms, .base = -1,
			   .err = err, .errlen = errlen };
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	int rc = store_compare_hosts(st, r->since, r->now, &r->h, &r->n, err, errlen);
	if (rc == STORE_OK)
		rc = group_releases(r);
	if (rc == STORE_OK)
		rc = choose_baseline(r);
	return rc;
}

/* Frees what a run holds. */
static void end(struct run *r)
{
	for (size_t i = 0; r->rel && i < r->nrel; i++) {
		json_decref(r->rel[i].strata);
		json_decref(r->rel[i].label_mix);
	}
	free(r->rel);
	free(r->figs);
	free(r->side);
	free(r->stratum);
	free(r->pinned);
	json_decref(r->passed_over);
	json_decref(r->opened);
	json_decref(r->refreshed);
	json_decref(r->resolved);
	store_compare_hosts_free(r->h, r->n);
}

/* Compares release x with the baseline: its figures join r->figs. */
static int test_release(struct run *r, struct release *x)
{
	const char *base = r->rel[r->base].name;
	int nstrata = 0, rc;

	for (size_t i = 0; i < r->n; i++) {
		const char *k = r->h[i].kernel;
		r->side[i] = !k ? -1 : strcmp(k, base) == 0 ? 0 : strcmp(k, x->name) == 0 ? 1 : -1;
	}
	if (r->s->stratify) {
		if ((rc = stratify(r, x, &nstrata)) != STORE_OK)
			return rc;
		/* the release's hosts count (one bad host must not decide); the
		 * baseline's few hosts in a stratum only weaken the test */
		if (x->hosts_rel < r->s->min_hosts) {
			x->status = "too few hosts in strata shared with the baseline";
			return STORE_OK;
		}
	} else {
		x->hosts_rel = x->hosts;
		x->hosts_base = r->rel[r->base].hosts;
		if (!(x->label_mix = regress_label_mix(r->h, r->side, r->n)))
			return oom(r);
	}
	struct compare *c = NULL;
	rc = compare_load(r->st, r->h, r->side, r->n, r->since, r->now, &c, r->err, r->errlen);
	if (rc != STORE_OK)
		return rc;
	x->fig0 = r->nfigs;
	for (int f = 0; f < compare_nfig(c); f++) {
		struct compare_fig d;
		struct regress_watch_fig w;
		compare_fig_info(c, f, &d);
		if (!regress_watched(d.name, &w))
			continue;
		struct regress_fig *g = new_fig(r);
		if (!g || regress_figure(c, f, r->s->stratify ? r->stratum : NULL, nstrata, r->s->min_hosts, g) < 0) {
			compare_free(c);
			return oom(r);
		}
		g->release = (int)(x - r->rel);
		r->tests += g->tested;
	}
	x->nfig = r->nfigs - x->fig0;
	x->status = "tested";
	compare_free(c);
	return STORE_OK;
}

static int by_p_adj(const void *x, const void *y)
{
	double a = ((const struct regress_fig *)x)->p_adj, b = ((const struct regress_fig *)y)->p_adj;
	return (a > b) - (a < b);
}

/* Opens or refreshes x's alert with its worse figures. */
static int raise_release(struct run *r, struct release *x)
{
	struct regress_fig *w = malloc((x->nfig ? x->nfig : 1) * sizeof(*w));
	size_t nw = 0;
	char summary[512];
	bool opened;

	if (!w)
		return oom(r);
	for (size_t i = 0; i < x->nfig; i++)
		if (r->figs[x->fig0 + i].worse)
			w[nw++] = r->figs[x->fig0 + i];
	if (!nw) {
		free(w);
		return STORE_OK;
	}
	qsort(w, nw, sizeof(*w), by_p_adj);
	struct regress_pair p = {
		.release = x->name, .baseline = r->rel[r->base].name, .baseline_source = r->base_source,
		.hosts_rel = x->hosts_rel, .hosts_base = x->hosts_base, .since_ms = r->since, .until_ms = r->now,
		.stratify = r->s->stratify, .strata = x->strata, .label_mix = x->label_mix,
		.tests = r->tests, .alpha = REGRESS_ALPHA,
	};
	json_t *ev = regress_evidence(&p, w, nw);
	regress_summary(&p, w, nw, summary, sizeof(summary));
	int rc = ev ? regress_store_raise(r->c, x->name, regress_severity(w, nw), summary, ev, r->now, &opened,
					  r->err, r->errlen)
		    : oom(r);
	json_decref(ev);
	free(w);
	if (rc != STORE_OK)
		return rc;
	x->raised = true;
	if (opened)
		log_info("regression watch: opened kernel_regression: %s", summary);
	return json_array_append_new(opened ? r->opened : r->refreshed, json_string(x->name)) < 0 ? oom(r)
												 : STORE_OK;
}

/* Resolves the open alerts no longer confirmed (regress_resolves). */
static int resolve_gone(struct run *r)
{
	struct regress_open *o = NULL;
	size_t no = 0;
	int rc = regress_store_open_alerts(r->c, &o, &no, r->err, r->errlen);

	for (size_t i = 0; rc == STORE_OK && i < no; i++) {
		long k = find_release(r, o[i].release);
		if (k >= 0 && r->rel[k].raised)
			continue;
		if (!regress_resolves(r->now, o[i].confirmed_ms, r->s->window_ms, k >= 0 ? r->rel[k].hosts : 0))
			continue;
		rc = regress_store_resolve(r->c, o[i].release, r->now, r->err, r->errlen);
		if (rc == STORE_OK) {
			log_info("regression watch: resolved kernel_regression of %s (%s)", o[i].release,
				 k >= 0 ? "not worse for a whole window" : "no host runs it any more");
			if (json_array_append_new(r->resolved, json_string(o[i].release)) < 0)
				rc = oom(r);
		}
	}
	free(o);
	return rc;
}

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *release_json(const struct run *r, const struct release *x)
{
	json_t *figs = json_array(), *worse = json_array();

	for (size_t i = 0; figs && worse && i < x->nfig; i++) {
		const struct regress_fig *f = &r->figs[x->fig0 + i];
		json_array_append_new(figs, json_pack("{s:s,s:b,s:o,s:o,s:o,s:o,s:o,s:b,s:b,s:b}",
						      "name", f->name, "tested", f->tested, "p", num(f->p),
						      "p_adjusted", num(f->p_adj), "median_release", num(f->med_rel),
						      "median_baseline", num(f->med_base), "median_ratio", num(f->ratio),
						      "worse_side", f->worse_side, "effect", f->effect, "worse", f->worse));
		if (f->worse)
			json_array_append_new(worse, json_string(f->name));
	}
	json_t *o = json_pack("{s:s,s:i,s:s,s:o*,s:o*}", "release", x->name, "hosts", x->hosts, "status", x->status,
			      "worse", worse, "figures", figs);
	if (o && x->nfig && json_object_set_new(o, "hosts_tested",
						json_pack("{s:i,s:i}", "release", x->hosts_rel, "baseline",
							  x->hosts_base)) < 0) {
		json_decref(o);
		return NULL;
	}
	if (o && x->strata && json_object_set(o, "strata", x->strata) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Adds to a baseline object (when a JSON object) what the choice passed
 * over: "pin_ignored" {"release", "hosts", "min_hosts"}, the pin it could
 * not use, and "passed_over" [release], releases with open alerts. */
static int set_baseline_notes(const struct run *r, json_t *base)
{
	if (!json_is_object(base))
		return 0;
	if (r->pin_ignored &&
	    json_object_set_new(base, "pin_ignored", json_pack("{s:s,s:i,s:i}", "release", r->pinned, "hosts",
								r->pin_hosts, "min_hosts", r->s->min_hosts)) < 0)
		return -1;
	if (json_array_size(r->passed_over) && json_object_set(base, "passed_over", r->passed_over) < 0)
		return -1;
	return 0;
}

static json_t *report_json(const struct run *r)
{
	char at[40], since[40];
	json_t *rels = json_array(), *base;
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - r->t0.tv_sec) * 1000 + (double)(t1.tv_nsec - r->t0.tv_nsec) / 1e6;

	for (size_t i = 0; rels && i < r->nrel; i++)
		if (json_array_append_new(rels, release_json(r, &r->rel[i])) < 0) {
			json_decref(rels);
			rels = NULL;
		}
	if (r->base >= 0)
		base = json_pack("{s:s,s:s,s:i,s:o}", "release", r->rel[r->base].name, "source", r->base_source,
				 "hosts", r->rel[r->base].hosts,
				 "host_hours", r->pin_ignored || !r->pinned ? json_real(r->base_hours) : json_null());
	else if (r->pinned || json_array_size(r->passed_over))
		base = json_pack("{s:n,s:s,s:i,s:n}", "release", "source", r->base_source, "hosts", 0, "host_hours");
	else
		base = json_null();
	if (base && (set_baseline_notes(r, base) < 0)) {
		json_decref(base);
		base = NULL;
	}
	alert_time_format(r->now, at, sizeof(at));
	alert_time_format(r->since, since, sizeof(since));
	return json_pack("{s:s,s:f,s:f,s:I,s:s,s:i,s:o,s:f,s:s,s:i,s:o*,s:o*,s:{s:O,s:O,s:O}}",
			 "run_at", at, "run_ts", (double)r->now / 1000, "duration_ms", round(ms * 10) / 10,
			 "window_s", (json_int_t)(r->s->window_ms / 1000),
			 "since", since, "min_hosts", r->s->min_hosts,
			 "stratify", r->s->stratify ? json_string(r->s->stratify) : json_null(),
			 "alpha", REGRESS_ALPHA, "correction", "holm", "tests", r->tests, "baseline", base,
			 "releases", rels, "alerts", "opened", r->opened, "refreshed", r->refreshed,
			 "resolved", r->resolved);
}

/* The writes of the run in one transaction on the locked connection. */
static int write_results(struct run *r, json_t **report)
{
	char e2[64];
	int rc = regress_store_tx(r->c, "BEGIN", r->err, r->errlen);

	for (size_t i = 0; rc == STORE_OK && i < r->nrel; i++)
		if (r->rel[i].nfig)
			rc = raise_release(r, &r->rel[i]);
	if (rc == STORE_OK)
		rc = resolve_gone(r);
	if (rc == STORE_OK && !(*report = report_json(r)))
		rc = oom(r);
	if (rc == STORE_OK)
		rc = regress_store_report(r->c, *report, r->err, r->errlen);
	if (rc == STORE_OK)
		rc = regress_store_tx(r->c, "COMMIT", r->err, r->errlen);
	if (rc != STORE_OK) {
		if (regress_store_tx(r->c, "ROLLBACK", e2, sizeof(e2)) == STORE_EUNAVAIL)
			rc = STORE_EUNAVAIL;
		json_decref(*report);
		*report = NULL;
	}
	return rc;
}

int regress_run(struct store *st, PGconn *c, const struct regress_settings *s, int64_t now_ms, json_t **report,
		char *err, size_t errlen)
{
	struct run r;
	int rc = begin(&r, st, c, s, now_ms, err, errlen);

	*report = NULL;
	if (rc == STORE_OK)
		rc = regress_store_kernel_since(c, r.h, r.n, r.now, err, errlen);
	if (rc != STORE_OK)
		goto out;
	r.side = calloc(r.n ? r.n : 1, sizeof(int));
	r.stratum = calloc(r.n ? r.n : 1, sizeof(int));
	r.opened = json_array();
	r.refreshed = json_array();
	r.resolved = json_array();
	if (!r.side || !r.stratum || !r.opened || !r.refreshed || !r.resolved) {
		rc = oom(&r);
		goto out;
	}
	if (r.pin_ignored)
		log_warn("regression watch: the pinned baseline %s has %d hosts in the window (fewer than %d): "
			 "comparing with %s (the most host-hours) instead; pin another or unpin", r.pinned,
			 r.pin_hosts, s->min_hosts, r.base >= 0 ? r.rel[r.base].name : "nothing");
	bool base_ok = r.base >= 0 && r.rel[r.base].hosts >= s->min_hosts;
	for (size_t i = 0; rc == STORE_OK && i < r.nrel; i++) {
		struct release *x = &r.rel[i];
		if ((long)i == r.base)
			x->status = "baseline";
		else if (x->hosts < s->min_hosts)
			x->status = "too few hosts";
		else if (!base_ok)
			x->status = "no baseline with enough hosts";
		else
			rc = test_release(&r, x);
	}
	if (rc != STORE_OK)
		goto out;
	regress_decide(r.figs, r.nfigs, REGRESS_ALPHA);
	rc = write_results(&r, report);
out:
	end(&r);
	return rc;
}

/* {"release","host_hours","hosts"} of the releases with the most host-hours */
static int hours_json(struct run *r, json_t **out)
{
	struct regress_hours *hh = NULL;
	size_t nh = 0;
	int rc = regress_store_host_hours(r->c, r->now, REGRESS_BASELINE_DAYS * 86400000LL, &hh, &nh, r->err,
					  r->errlen);

	*out = NULL;
	if (rc != STORE_OK)
		return rc;
	json_t *a = json_array();
	for (size_t i = 0; a && i < nh && i < 20; i++) {
		long k = find_release(r, hh[i].release);
		if (json_array_append_new(a, json_pack("{s:s,s:f,s:i}", "release", hh[i].release, "host_hours",
						       round(hh[i].host_hours * 1000) / 1000,
						       "hosts", k >= 0 ? r->rel[k].hosts : 0)) < 0) {
			json_decref(a);
			a = NULL;
		}
	}
	regress_hours_free(hh, nh);
	*out = a;
	return a ? STORE_OK : oom(r);
}

int regress_baseline(struct store *st, PGconn *c, const struct regress_settings *s, int64_t now_ms, json_t **out,
		     char *err, size_t errlen)
{
	struct run r;
	json_t *pin = NULL, *report = NULL, *hours = NULL;
	int rc = begin(&r, st, c, s, now_ms, err, errlen);

	*out = NULL;
	if (rc == STORE_OK)
		rc = hours_json(&r, &hours);
	if (rc == STORE_OK)
		rc = regress_store_read(c, &pin, &report, err, errlen);
	if (rc == STORE_OK) {
		const char *name = r.base >= 0 ? r.rel[r.base].name : NULL;
		*out = json_pack("{s:o,s:s,s:b,s:O,s:O,s:i,s:O}", "release", name ? json_string(name) : json_null(),
				 "source", r.base_source, "pinned", r.pinned != NULL,
				 "pinned_at", json_object_get(pin, "pinned_at"),
				 "pinned_by", json_object_get(pin, "pinned_by"),
				 "hosts", r.base >= 0 ? r.rel[r.base].hosts : 0, "host_hours", hours);
		if (*out && set_baseline_notes(&r, *out) < 0) {
			json_decref(*out);
			*out = NULL;
		}
		if (!*out)
			rc = oom(&r);
	}
	json_decref(pin);
	json_decref(report);
	json_decref(hours);
	end(&r);
	return rc;
}
