/* stats.c - mean, percentiles and the Mann-Whitney U test (see stats.h).
 * Used on at most a few hundred thousand host-intervals per request, so
 * percentiles select instead of sorting and the U test sorts only the
 * per-host values (one per host). */
#include "stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

double stats_mean(const double *x, size_t n)
{
	double s = 0;

	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

static void swap(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* Selection (N. Wirth, "Algorithms + Data Structures = Programs", Find):
 * Hoare's partition around x[k] repeated on the side holding k. Afterwards
 * x[k] is the value a sort would put there and x[0..k) <= x[k] <= x(k..n). */
static void select_kth(double *x, size_t n, size_t k)
{
	long l = 0, r = (long)n - 1, kk = (long)k;

	while (l < r) {
		double pv = x[kk];
		long i = l, j = r;
		do {
			while (x[i] < pv)
				i++;
			while (pv < x[j])
				j--;
			if (i <= j) {
				swap(&x[i], &x[j]);
				i++;
				j--;
			}
		} while (i <= j);
		if (j < kk)
			l = i;
		if (kk < i)
			r = j;
	}
}

double stats_percentile(double *x, size_t n, double p)
{
	if (!n)
		return NAN;
	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	double h = (double)(n - 1) * p;
	size_t k = (size_t)floor(h);
	if (k >= n - 1)
		k = n - 1;
	select_kth(x, n, k);
	double lo = x[k], frac = h - (double)k;
	if (frac <= 0 || k + 1 >= n)
		return lo;
	/* the next order statistic is the smallest value above position k */
	double next = x[k + 1];
	for (size_t i = k + 2; i < n; i++)
		if (x[i] < next)
			next = x[i];
	return lo + frac * (next - lo);
}

void stats_percentiles(double *x, size_t n, const double *ps, size_t np, double *out)
{
	size_t base = 0;	/* x[0..base) are at most every later selection's value */

	for (size_t i = 0; i < np; i++) {
		double p = ps[i] < 0 ? 0 : ps[i] > 1 ? 1 : ps[i];
		if (!n) {
			out[i] = NAN;
			continue;
		}
		double h = (double)(n - 1) * p;
		size_t k = (size_t)floor(h);
		if (k >= n - 1)
			k = n - 1;
		if (k < base)
			k = base;	/* ps not ascending: still correct below */
		select_kth(x + base, n - base, k - base);
		double lo = x[k], frac = h - (double)k;
		if (frac > 0 && k + 1 < n) {
			double next = x[k + 1];
			for (size_t j = k + 2; j < n; j++)
				if (x[j] < next)
					next = x[j];
			lo += frac * (next - lo);
		}
		out[i] = lo;
		base = k;
	}
}

double stats_mwu_exact_cdf(int m, int n, double u)
{
	if (m < 0 || n < 0 || m > STATS_MWU_EXACT_MAX || n > STATS_MWU_EXACT_MAX)
		return NAN;
	if (u < 0)
		return 0;
	int umax = m * n;
	if (u >= umax)
		return 1;
	/* f[j][v] = arrangements of i a's and j b's giving U = v, for the
	 * current i; g the previous i. f(v; i, j) = f(v - j; i - 1, j) +
	 * f(v; i, j - 1): the largest of the i + j values is either an a
	 * (beating all j b's) or a b (beating no a). */
	size_t w = (size_t)umax + 1, rows = (size_t)n + 1;
	double *f = calloc(rows * w, sizeof(*f)), *g = calloc(rows * w, sizeof(*g));
	if (!f || !g) {
		free(f);
		free(g);
		return NAN;
	}
	for (size_t j = 0; j <= (size_t)n; j++)
		g[j * w] = 1;	/* i = 0: U is 0 in one way */
	for (int i = 1; i <= m; i++) {
		memset(f, 0, rows * w * sizeof(*f));
		f[0] = 1;	/* j = 0 */
		for (int j = 1; j <= n; j++)
			for (int v = 0; v <= i * j; v++)
				f[(size_t)j * w + (size_t)v] =
					(v >= j ? g[(size_t)j * w + (size_t)(v - j)] : 0) +
					f[(size_t)(j - 1) * w + (size_t)v];
		double *t = f;
		f = g;
		g = t;
	}
	/* g holds i = m */
	double below = 0, total = 0;
	for (int v = 0; v <= umax; v++) {
		double c = g[(size_t)n * w + (size_t)v];
		total += c;
		if (v <= u)
			below += c;
	}
	free(f);
	free(g);
	return below / total;
}

struct ranked {
	double v;
	int from_a;
};

static int cmp_ranked(const void *x, const void *y)
{
	double a = ((const struct ranked *)x)->v, b = ((const struct ranked *)y)->v;
	return (a > b) - (a < b);
}

/* The rank statistics of one two-sample comparison: U of sample a (pairs
 * where a's value is higher, ties 1/2), its mean and variance under the
 * null hypothesis with the tie correction, and whether any value is tied.
 * Sorts r[0..n) in place. */
struct rank_u {
	double u, mu, var;
	bool ties;
};

static void rank_u(struct ranked *r, size_t n, size_t na, struct rank_u *out)
{
	qsort(r, n, sizeof(*r), cmp_ranked);

	/* rank sum of a with tied values given their average rank; ties
	 * accumulates sum(t^3 - t) over the groups of t equal values */
	double ra = 0, ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		double t = (double)(j - i + 1), avg = ((double)i + (double)j) / 2.0 + 1.0;
		for (size_t k = i; k <= j; k++)
			if (r[k].from_a)
				ra += avg;
		ties += t * t * t - t;
		i = j + 1;
	}
	double m = (double)na, k = (double)(n - na), N = m + k;
	out->u = ra - m * (m + 1) / 2.0;
	out->mu = m * k / 2.0;
	out->var = N > 1 ? m * k / 12.0 * ((N + 1) - ties / (N * (N - 1))) : 0;
	out->ties = ties > 0;
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct stats_mwu *out)
{
	size_t n = na + nb;
	struct ranked *r;
	struct rank_u ru;

	if (!na || !nb)
		return -1;
	r = malloc(n * sizeof(*r));
	if (!r)
		return -1;
	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){ a[i], 1 };
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (struct ranked){ b[i], 0 };
	rank_u(r, n, na, &ru);
	free(r);

	double m = (double)na, k = (double)nb, u = ru.u;
	double d = u - ru.mu, z = 0, p = 1;
	if (ru.var > 0) {
		double cd = fabs(d) - 0.5;
		z = (cd > 0 ? cd : 0) / sqrt(ru.var);
		if (d < 0)
			z = -z;
		p = erfc(fabs(z) / sqrt(2.0));
	}
	bool exact = false;
	if (!ru.ties && na <= STATS_MWU_EXACT_MAX && nb <= STATS_MWU_EXACT_MAX) {
		double lo = stats_mwu_exact_cdf((int)na, (int)nb, u);
		/* P(U >= u) = P(U <= mn - u) by symmetry */
		double hi = stats_mwu_exact_cdf((int)na, (int)nb, m * k - u);
		if (!isnan(lo) && !isnan(hi)) {
			p = 2 * (lo < hi ? lo : hi);
			exact = true;
		}
	}
	if (p > 1)
		p = 1;
	out->u = u;
	out->z = z;
	out->p = p;
	out->exact = exact;
	return 0;
}

int stats_van_elteren(const double *v, const int *side, const int *stratum, size_t n, int nstrata,
		      struct stats_strat *out)
{
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));
	double t = 0, e = 0, var = 0;
	int used = 0;

	if (!r || nstrata < 1)
		goto fail;
	for (int s = 0; s < nstrata; s++) {
		size_t m = 0, k = 0;
		for (size_t i = 0; i < n; i++) {
			if (stratum[i] != s || side[i] < 0 || side[i] > 1 || isnan(v[i]))
				continue;
			r[m + k] = (struct ranked){ v[i], side[i] == 0 };
			if (side[i] == 0)
				m++;
			else
				k++;
		}
		if (!m || !k)
			continue;	/* one side absent: the stratum says nothing */
		struct rank_u ru;
		rank_u(r, m + k, m, &ru);
		/* van Elteren's weight 1 / (N_s + 1) on the rank sum; on U,
		 * which differs from it by a constant, the same */
		double w = 1.0 / ((double)(m + k) + 1.0);
		t += w * ru.u;
		e += w * ru.mu;
		var += w * w * ru.var;
		used++;
	}
	free(r);
	if (!used)
		return -1;
	out->strata = used;
	out->stat = t;
	out->z = var > 0 ? (t - e) / sqrt(var) : 0;
	out->p = var > 0 ? erfc(fabs(out->z) / sqrt(2.0)) : 1;
	if (out->p > 1)
		out->p = 1;
	return 0;
fail:
	free(r);
	return -1;
}

void stats_holm(const double *p, size_t n, double *adj)
{
	size_t *ord = malloc((n ? n : 1) * sizeof(*ord));

	if (!ord) {
		/* no room to sort: Bonferroni, which Holm never exceeds */
		for (size_t i = 0; i < n; i++)
			adj[i] = isnan(p[i]) ? NAN : fmin(1, p[i] * (double)n);
		return;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(p[i]))
			ord[m++] = i;
	/* insertion sort by p: n is figures x releases, a few hundred at most */
	for (size_t i = 1; i < m; i++) {
		size_t x = ord[i], j = i;
		while (j > 0 && p[ord[j - 1]] > p[x]) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = x;
	}
	double run = 0;
	for (size_t i = 0; i < n; i++)
		if (isnan(p[i]))
			adj[i] = NAN;
	for (size_t j = 0; j < m; j++) {
		double a = fmin(1, (double)(m - j) * p[ord[j]]);
		run = fmax(run, a);
		adj[ord[j]] = run;
	}
	free(ord);
}

struct weighted {
	double x, w;
};

static int cmp_weighted(const void *a, const void *b)
{
	double x = ((const struct weighted *)a)->x, y = ((const struct weighted *)b)->x;
	return (x > y) - (x < y);
}

double stats_weighted_median(const double *x, const double *w, size_t n)
{
	struct weighted *v = malloc((n ? n : 1) * sizeof(*v));
	double total = 0;
	size_t m = 0;

	if (!v)
		return NAN;
	for (size_t i = 0; i < n; i++)
		if (w[i] > 0 && !isnan(x[i])) {
			v[m++] = (struct weighted){ x[i], w[i] };
			total += w[i];
		}
	if (!m) {
		free(v);
		return NAN;
	}
	qsort(v, m, sizeof(*v), cmp_weighted);
	/* the value where the cumulative weight passes half; exactly half at
	 * a boundary: the mean of the values on both sides (so equal weights
	 * give the plain median of an even count) */
	double cum = 0, half = total / 2, res = v[m - 1].x;
	for (size_t j = 0; j < m; j++) {
		cum += v[j].w;
		if (fabs(cum - half) <= 1e-12 * total && j + 1 < m) {
			res = (v[j].x + v[j + 1].x) / 2;
			break;
		}
		if (cum > half) {
			res = v[j].x;
			break;
		}
	}
	free(v);
	return res;
}
