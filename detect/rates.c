/* rates.c - counter rates, PSI stall shares and gap rules (see rates.h). */
#include "rates.h"

#include <math.h>

double rate_counter(int64_t prev, int64_t cur, double dt_s)
{
	if (prev == RATE_ABSENT || cur == RATE_ABSENT || prev < 0 || cur < 0)
		return NAN;
	if (cur < prev || !(dt_s > 0))
		return NAN;
	return (double)(cur - prev) / dt_s;
}

double rate_psi_share(int64_t prev_us, int64_t cur_us, double dt_s)
{
	double r = rate_counter(prev_us, cur_us, dt_s);

	if (isnan(r))
		return NAN;
	r /= 1e6;
	return r > 1.0 ? 1.0 : r;
}

int64_t rate_gap_limit_ms(int64_t expected_interval_ms)
{
	int64_t lim = expected_interval_ms > 0 ? 3 * expected_interval_ms : 0;
	return lim > RATE_GAP_MIN_MS ? lim : RATE_GAP_MIN_MS;
}

int64_t rate_interval_estimate(int64_t est_ms, int64_t dt_ms)
{
	if (dt_ms <= 0)
		return est_ms;
	if (est_ms <= 0)
		return dt_ms;
	/* An outage must not inflate the estimate much: weigh long gaps less. */
	if (dt_ms > 4 * est_ms)
		return est_ms + est_ms / 8;
	return (est_ms * 7 + dt_ms) / 8;
}

uint64_t rate_boot_hash(const char *boot_id)
{
	uint64_t h = 1469598103934665603ULL;

	if (!boot_id)
		return 0;
	for (const unsigned char *p = (const unsigned char *)boot_id; *p; p++) {
		h ^= *p;
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}
