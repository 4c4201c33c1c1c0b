/* stats.h - the few statistics the compare endpoint (api_compare.c) and
 * the kernel-regression watch (regress.h) need: mean, percentiles, the
 * Mann-Whitney U test of two independent samples, its stratified form
 * (van Elteren), Holm's correction for multiple tests and a weighted
 * median. Pure functions over double arrays; no allocation except
 * temporary arrays. NaN inputs are the caller's to drop unless a function
 * says otherwise.
 */
#ifndef VMSCOPE_STATS_H
#define VMSCOPE_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* Arithmetic mean of x[0..n); NAN when n is 0. */
double stats_mean(const double *x, size_t n);

/* The p-th percentile (0 <= p <= 1) of x[0..n) by linear interpolation
 * between the closest ranks: with the values sorted ascending as
 * v[0..n-1] and h = (n - 1) * p, the result is
 * v[floor h] + (h - floor h) * (v[floor h + 1] - v[floor h]).
 * This is Hyndman & Fan's definition 7, the default of numpy.percentile,
 * R's quantile() and Excel's PERCENTILE.INC. Reorders x in place
 * (selection, O(n) on average, no full sort). NAN when n is 0. */
double stats_percentile(double *x, size_t n, double p);

/* stats_percentile for several p at once, ps[0..np) ascending: each
 * selection runs only on the part above the previous one (p50, p95, p99
 * of n values cost ~1.6 n instead of 3 n). out[i] for ps[i]. */
void stats_percentiles(double *x, size_t n, const double *ps, size_t np, double *out);

/* Result of stats_mann_whitney. */
struct stats_mwu {
	double u;	/* U of sample a: pairs (a_i, b_j) with a_i > b_j, ties count 1/2 */
	double z;	/* (u - na*nb/2) / sigma with the continuity correction of 1/2
			 * toward 0 and the tie-corrected sigma; 0 when sigma is 0 */
	double p;	/* two-sided p value */
	bool exact;	/* p from the exact distribution of U (see below) */
};

/* Mann-Whitney U test (Wilcoxon rank-sum) of a[0..na) against b[0..nb),
 * two-sided. When both na and nb are at most STATS_MWU_EXACT_MAX and there
 * are no ties, p = min(1, 2 * min(P(U <= u), P(U >= u))) from the exact
 * null distribution of U; otherwise the normal approximation with tie
 * correction and continuity correction (p = erfc(|z| / sqrt 2)); the same
 * choices as scipy.stats.mannwhitneyu(method="auto") with its exact
 * threshold raised to 20. All values tied: z 0, p 1.
 * Returns 0, or -1 when na or nb is 0 or memory runs out (out untouched). */
#define STATS_MWU_EXACT_MAX 20
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct stats_mwu *out);

/* P(U <= u) under the null hypothesis for sample sizes m and n (each
 * 0..STATS_MWU_EXACT_MAX), counting the arrangements of the m + n ranks
 * with the recursion f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1)
 * (Mann & Whitney 1947). Exposed for the unit test. NAN on bad sizes or
 * out of memory. */
double stats_mwu_exact_cdf(int m, int n, double u);

/* Result of stats_van_elteren. */
struct stats_strat {
	double stat;	/* sum over the strata of U_s / (N_s + 1) */
	double z;	/* (stat - E) / sqrt(Var) under the null hypothesis; < 0 when
			 * side 1 tends higher (as stats_mwu's z); 0 when Var is 0 */
	double p;	/* two-sided, from z (normal approximation) */
	int strata;	/* strata with both sides present (the others carry no
			 * information and are left out) */
};

/* Van Elteren's stratified Wilcoxon rank-sum test (van Elteren 1960): the
 * Mann-Whitney comparison of side 0 against side 1 made within each
 * stratum, the strata's U statistics added with the weights 1 / (N_s + 1)
 * (N_s the stratum's size; the locally most powerful weights when the
 * shift is the same in every stratum), and the sum compared with its null
 * mean and variance (the tie-corrected variances of the strata times the
 * squared weights). A difference that lies only between the strata (one
 * side mostly in a stratum with higher values) does not count. With one
 * stratum it is the U test's normal approximation without the continuity
 * correction. v[i], side[i] (0 or 1, else ignored), stratum[i] (0 ..
 * nstrata - 1) per observation; NaN values are ignored. Returns 0, or -1
 * when no stratum has both sides or memory runs out (out untouched). */
int stats_van_elteren(const double *v, const int *side, const int *stratum, size_t n, int nstrata,
		      struct stats_strat *out);

/* Holm's step-down adjustment of p[0..n) (Holm 1979): with the m non-NaN
 * values sorted ascending p(1) <= ... <= p(m), adj(j) = max over i <= j of
 * min(1, (m - i + 1) p(i)); rejecting where adj < alpha keeps the chance
 * of any false rejection at most alpha, whatever the dependence between
 * the tests. adj[i] answers p[i] (NaN for NaN). Cannot fail (falls back to
 * Bonferroni, which is never smaller, when out of memory). */
void stats_holm(const double *p, size_t n, double *adj);

/* The weighted median of x[0..n) with weights w[0..n) (entries with a
 * weight <= 0 or a NaN value ignored): the value at which the cumulative
 * weight, in ascending order of x, passes half the total; at exactly half,
 * the mean of the values on both sides, so that equal weights give the
 * plain median. NAN when nothing is left or out of memory. */
double stats_weighted_median(const double *x, const double *w, size_t n);

#endif
