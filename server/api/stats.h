/* stats.h - the few statistics the compare endpoint (api_compare.c) needs:
 * mean, percentiles and the Mann-Whitney U test of two independent
 * samples. Pure functions over double arrays; no allocation except the
 * temporary arrays of the U test. NaN inputs are the caller's to drop.
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

#endif
