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

int main(void)
{
	test_mean_percentile();
	test_exact_cdf();
	test_mann_whitney();
	return harness_report("test_stats");
}
