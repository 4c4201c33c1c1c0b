/* test_stats.c - server/api/stats.c against values checked outside this code:
 * the Mann-Whitney example of the scipy.stats.mannwhitneyu documentation
 * (U 17, exact p 0.1111, asymptotic p 0.11134688653314041), p values from
 * enumerating every split of the ranks (python itertools, by brute force),
 * tie-corrected normal approximations worked from the textbook formula,
 * and numpy.percentile's documented default (linear, type 7). */
#include "harness.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>

static int near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

#define CHECK_NEAR(a, b, tol) do { \
	double a_ = (a), b_ = (b); \
	if (near(a_, b_, tol)) { harness_pass++; } else { harness_fail++; \
		fprintf(stderr, "%s:%d: %s == %.12g, expected %.12g\n", __FILE__, __LINE__, #a, a_, b_); } \
	} while (0)

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static void test_mean_percentile(void)
{
	double x[] = { 4, 1, 3, 2 };
	CHECK_NEAR(stats_mean(x, 4), 2.5, 1e-12);
	CHECK(isnan(stats_mean(x, 0)));
	CHECK_NEAR(stats_percentile(x, 4, 0.5), 2.5, 1e-12);
	CHECK_NEAR(stats_percentile(x, 4, 0.95), 3.85, 1e-12);	/* h = 2.85 */
	CHECK_NEAR(stats_percentile(x, 4, 0), 1, 1e-12);
	CHECK_NEAR(stats_percentile(x, 4, 1), 4, 1e-12);
	CHECK(isnan(stats_percentile(x, 0, 0.5)));

	double h[100];
	for (int i = 0; i < 100; i++)
		h[i] = 100 - i;	/* 1..100 reversed */
	CHECK_NEAR(stats_percentile(h, 100, 0.99), 99.01, 1e-9);	/* numpy.percentile(range(1,101), 99) */
	CHECK_NEAR(stats_percentile(h, 100, 0.5), 50.5, 1e-9);
	double one = 7;
	CHECK_NEAR(stats_percentile(&one, 1, 0.99), 7, 0);

	/* selection against a full sort on random data with many duplicates */
	srand(42);
	int bad = 0;
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + (size_t)(rand() % 300);
		double *a = malloc(n * sizeof(*a)), *s = malloc(n * sizeof(*s));
		for (size_t i = 0; i < n; i++)
			a[i] = s[i] = (double)(rand() % (round % 2 ? 5 : 1000));
		qsort(s, n, sizeof(*s), cmp_d);
		double ps[] = { 0, 0.5, 0.95, 0.99, 1 };
		for (size_t q = 0; q < 5; q++) {
			double hh = (double)(n - 1) * ps[q];
			size_t k = (size_t)floor(hh);
			double want = k + 1 < n ? s[k] + (hh - (double)k) * (s[k + 1] - s[k]) : s[k];
			if (!near(stats_percentile(a, n, ps[q]), want, 1e-9))
				bad++;
		}
		/* all at once, on a shuffled copy */
		double got[5];
		for (size_t i = 0; i < n; i++)
			a[i] = s[(i * 7919) % n];
		stats_percentiles(a, n, ps, 5, got);
		for (size_t q = 0; q < 5; q++) {
			double hh = (double)(n - 1) * ps[q];
			size_t k = (size_t)floor(hh);
			double want = k + 1 < n ? s[k] + (hh - (double)k) * (s[k + 1] - s[k]) : s[k];
			if (!near(got[q], want, 1e-9))
				bad++;
		}
		free(a);
		free(s);
	}
	CHECK_INT(bad, 0);
}

static void test_exact_cdf(void)
{
	/* m = n = 2: U takes 0,1,2,2,3,4 over the 6 splits */
	CHECK_NEAR(stats_mwu_exact_cdf(2, 2, 0), 1.0 / 6, 1e-12);
	CHECK_NEAR(stats_mwu_exact_cdf(2, 2, 1), 2.0 / 6, 1e-12);
	CHECK_NEAR(stats_mwu_exact_cdf(2, 2, 2), 4.0 / 6, 1e-12);
	CHECK_NEAR(stats_mwu_exact_cdf(2, 2, 4), 1, 1e-12);
	/* 5 vs 5: P(U = 0) = 1 / C(10, 5) */
	CHECK_NEAR(stats_mwu_exact_cdf(5, 5, 0), 1.0 / 252, 1e-12);
	/* 20 vs 20 is symmetric around 200: P(U <= 199) = P(U >= 201) */
	CHECK_NEAR(stats_mwu_exact_cdf(20, 20, 199) + stats_mwu_exact_cdf(20, 20, 200), 1, 1e-9);
	CHECK(isnan(stats_mwu_exact_cdf(21, 3, 1)));
}

static void test_mann_whitney(void)
{
	struct stats_mwu r;
	/* scipy docs: males vs females, exact */
	double males[] = { 19, 22, 16, 29, 24 }, females[] = { 20, 11, 17, 12 };
	CHECK_INT(stats_mann_whitney(males, 5, females, 4, &r), 0);
	CHECK_NEAR(r.u, 17, 0);
	CHECK(r.exact);
	CHECK_NEAR(r.p, 1.0 / 9, 1e-12);
	CHECK_NEAR(r.z, 1.5921683328090657, 1e-9);

	/* complete separation 5 vs 5: two-sided exact p = 2 / 252 */
	double lo5[] = { 1, 2, 3, 4, 5 }, hi5[] = { 6, 7, 8, 9, 10 };
	CHECK_INT(stats_mann_whitney(lo5, 5, hi5, 5, &r), 0);
	CHECK_NEAR(r.u, 0, 0);
	CHECK_NEAR(r.p, 2.0 / 252, 1e-12);
	CHECK(r.z < 0);
	CHECK_INT(stats_mann_whitney(hi5, 5, lo5, 5, &r), 0);
	CHECK_NEAR(r.u, 25, 0);
	CHECK_NEAR(r.p, 2.0 / 252, 1e-12);

	/* ties: normal approximation with tie and continuity correction */
	double ta[] = { 0, 0, 0, 1, 2, 2, 3, 5, 8 }, tb[] = { 0, 0, 1, 1, 1, 2, 4, 4 };
	CHECK_INT(stats_mann_whitney(ta, 9, tb, 8, &r), 0);
	CHECK(!r.exact);
	CHECK_NEAR(r.u, 39.5, 0);
	CHECK_NEAR(r.z, 0.2950726380329919, 1e-9);
	CHECK_NEAR(r.p, 0.7679383913016559, 1e-9);

	/* larger than the exact limit: 1..25 vs 11..35 */
	double la[25], lb[25];
	for (int i = 0; i < 25; i++) {
		la[i] = 1 + i;
		lb[i] = 11 + i;
	}
	CHECK_INT(stats_mann_whitney(la, 25, lb, 25, &r), 0);
	CHECK(!r.exact);
	CHECK_NEAR(r.u, 112.5, 0);
	CHECK_NEAR(r.z, -3.8722633994467444, 1e-9);
	CHECK_NEAR(r.p, 0.0001078293307480265, 1e-12);

	/* a group of zeros (an idle counter) against values: ties at 0 */
	double z5[] = { 0, 0, 0, 0, 0 }, v5[] = { 3.5, 1.2, 0, 2, 7 };
	CHECK_INT(stats_mann_whitney(z5, 5, v5, 5, &r), 0);
	CHECK_NEAR(r.u, 2.5, 0);
	CHECK_NEAR(r.p, 0.02536985982205372, 1e-9);

	/* everything tied: no evidence at all */
	CHECK_INT(stats_mann_whitney(z5, 5, z5, 5, &r), 0);
	CHECK_NEAR(r.p, 1, 0);
	CHECK_NEAR(r.z, 0, 0);

	CHECK_INT(stats_mann_whitney(z5, 0, v5, 5, &r), -1);
}

/* Van Elteren's stratified test against a plain recomputation (average
 * ranks per stratum, rank sums weighted 1 / (N_s + 1), tie-corrected
 * variances), and its defining properties. */
static void test_van_elteren(void)
{
	struct stats_strat r;

	/* one stratum, complete separation 5 vs 5: the U test's z without the
	 * continuity correction: (0 - 12.5) / sqrt(25 * 11 / 12) */
	double v1[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	int s1[10] = { 0, 0, 0, 0, 0, 1, 1, 1, 1, 1 }, st1[10] = { 0 };
	CHECK_INT(stats_van_elteren(v1, s1, st1, 10, 1, &r), 0);
	CHECK_NEAR(r.z, -2.6111648393354674, 1e-12);
	CHECK_NEAR(r.p, 0.009023438818080334, 1e-12);
	CHECK_INT(r.strata, 1);

	/* two strata of different levels, b higher within each (a tie at 12
	 * in the second) */
	double v2[] = { 3.1, 4.2, 2.8, 5.0, 5.5, 6.1, 4.9, 10, 12, 11, 13, 12, 12, 14, 15 };
	int s2[] = { 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1 };
	int st2[] = { 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1 };
	CHECK_INT(stats_van_elteren(v2, s2, st2, 15, 2, &r), 0);
	CHECK_NEAR(r.z, -2.437017260439041, 1e-12);
	CHECK_NEAR(r.p, 0.014808972472775997, 1e-12);
	CHECK_INT(r.strata, 2);

	/* the difference only between strata: b sits in the high stratum
	 * only, where it matches a; the low stratum has no b and is left out */
	double v3[] = { 1, 2, 3, 4, 10, 11, 12, 13, 10.5, 11.5, 12.5 };
	int s3[] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1 };
	int st3[] = { 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1 };
	CHECK_INT(stats_van_elteren(v3, s3, st3, 11, 2, &r), 0);
	CHECK_NEAR(r.z, 0, 1e-12);
	CHECK_NEAR(r.p, 1, 1e-12);
	CHECK_INT(r.strata, 1);
	/* the unstratified test on the same values does see a difference */
	double a3[] = { 1, 2, 3, 4, 10, 11, 12, 13 }, b3[] = { 10.5, 11.5, 12.5 };
	struct stats_mwu u3;
	CHECK_INT(stats_mann_whitney(a3, 8, b3, 3, &u3), 0);
	CHECK(u3.z < 0 && u3.p < r.p);

	/* copies of one stratum: the same direction, z grows as sqrt(copies) */
	double v4[20];
	int s4[20], st4[20];
	for (int i = 0; i < 20; i++) {
		v4[i] = v1[i % 10];
		s4[i] = s1[i % 10];
		st4[i] = i / 10;
	}
	CHECK_INT(stats_van_elteren(v4, s4, st4, 20, 2, &r), 0);
	CHECK_NEAR(r.z, -2.6111648393354674 * sqrt(2), 1e-12);

	/* NaN values and sides outside 0/1 are ignored; no stratum with both
	 * sides is an error */
	double v5[] = { 1, NAN, 2, 3 };
	int s5[] = { 0, 1, -1, 0 }, st5[] = { 0, 0, 0, 0 };
	CHECK_INT(stats_van_elteren(v5, s5, st5, 4, 1, &r), -1);
}

static void test_holm(void)
{
	/* sorted 0.005 0.01 0.03 0.04 -> x4 x3 x2 x1 = 0.02 0.03 0.06 0.04,
	 * made monotone: 0.02 0.03 0.06 0.06 */
	double p[5] = { 0.01, 0.04, NAN, 0.03, 0.005 }, adj[5];
	stats_holm(p, 5, adj);
	CHECK_NEAR(adj[0], 0.03, 1e-15);
	CHECK_NEAR(adj[1], 0.06, 1e-15);
	CHECK(isnan(adj[2]));
	CHECK_NEAR(adj[3], 0.06, 1e-15);
	CHECK_NEAR(adj[4], 0.02, 1e-15);
	/* capped at 1 */
	double q[2] = { 0.7, 0.9 }, qa[2];
	stats_holm(q, 2, qa);
	CHECK_NEAR(qa[0], 1, 0);
	CHECK_NEAR(qa[1], 1, 0);
	stats_holm(q, 0, qa);	/* nothing to do */
}

static void test_weighted_median(void)
{
	double x[] = { 5, 1, 3, 2, 4 }, ones[] = { 1, 1, 1, 1, 1 };
	CHECK_NEAR(stats_weighted_median(x, ones, 5), 3, 0);
	CHECK_NEAR(stats_weighted_median(x, ones, 4), 2.5, 0);	/* 5 1 3 2: even count */
	/* weight 3 on the 1: half of 7 is passed at 1 */
	double w[] = { 1, 3, 1, 1, 1 };
	CHECK_NEAR(stats_weighted_median(x, w, 5), 2, 0);
	double w2[] = { 1, 5, 1, 1, 1 };
	CHECK_NEAR(stats_weighted_median(x, w2, 5), 1, 0);
	/* exactly half below 1 (weight 4 of 8): between 1 and 2 */
	double w3[] = { 1, 4, 1, 1, 1 };
	CHECK_NEAR(stats_weighted_median(x, w3, 5), 1.5, 0);
	/* zero weights and NaN values are left out */
	double y[] = { NAN, 10, 20, 30 }, wy[] = { 5, 0, 1, 1 };
	CHECK_NEAR(stats_weighted_median(y, wy, 4), 25, 0);
	double none[] = { 0, 0 };
	CHECK(isnan(stats_weighted_median(y, none, 2)));
}

int main(void)
{
	test_mean_percentile();
	test_exact_cdf();
	test_mann_whitney();
	test_van_elteren();
	test_holm();
	test_weighted_median();
	return harness_report("test_stats");
}
