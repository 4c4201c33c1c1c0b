/* timeparse.c - Unix seconds and RFC 3339 (see timeparse.h). Written by hand
 * rather than with strptime so that the accepted grammar is exact and the
 * same on every libc. */
#include "timeparse.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_MS 253402300799999LL	/* 9999-12-31T23:59:59.999Z */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Reads exactly n digits at *p into *v. */
static bool digits(const char **p, int n, int *v)
{
	int x = 0;

	for (int i = 0; i < n; i++) {
		if (!is_digit((*p)[i]))
			return false;
		x = x * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*v = x;
	return true;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil), so that no timezone state (timegm) is involved. */
static int64_t days_from_civil(int y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int dm[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : dm[m - 1];
}

/* Fraction digits after '.', any count (at least one), rounded down to ms. */
static bool fraction_ms(const char **p, int64_t *ms)
{
	int64_t v = 0;
	int n = 0;

	if (!is_digit(**p))
		return false;
	while (is_digit(**p)) {
		if (n < 3) {
			v = v * 10 + (**p - '0');
			n++;
		}
		(*p)++;
	}
	while (n++ < 3)
		v *= 10;
	*ms = v;
	return true;
}

static int parse_unix(const char *s, int64_t *out)
{
	const char *p = s;
	int64_t sec = 0, frac = 0;

	if (!is_digit(*p))
		return -1;
	while (is_digit(*p)) {
		sec = sec * 10 + (*p - '0');
		if (sec > MAX_MS / 1000)
			return -1;
		p++;
	}
	if (*p == '.') {
		p++;
		if (!fraction_ms(&p, &frac))
			return -1;
	}
	if (*p)
		return -1;
	*out = sec * 1000 + frac;
	return *out <= MAX_MS ? 0 : -1;
}

static int parse_rfc3339(const char *s, int64_t *out)
{
	const char *p = s;
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	int64_t frac = 0;

	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d))
		return -1;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return -1;
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' ||
	    !digits(&p, 2, &sec))
		return -1;
	if (*p == '.') {
		p++;
		if (!fraction_ms(&p, &frac))
			return -1;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		p++;
		if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om))
			return -1;
		if (oh > 23 || om > 59)
			return -1;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 ||
	    mi > 59 || sec > 60)
		return -1;
	if (sec == 60)	/* a leap second counts as the next second's start */
		sec = 59, frac = 999;
	int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	t -= (int64_t)sign * (oh * 3600 + om * 60);
	if (t < 0)
		return -1;
	*out = t * 1000 + frac;
	return *out <= MAX_MS ? 0 : -1;
}

int time_parse(const char *s, int64_t *ms)
{
	if (!s || !*s || strlen(s) > 64)
		return -1;
	if (strlen(s) >= 10 && s[4] == '-')
		return parse_rfc3339(s, ms);
	return parse_unix(s, ms);
}

char *time_format(int64_t ms, char *buf, size_t len)
{
	time_t sec = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	int frac = (int)(ms - (int64_t)sec * 1000);
	struct tm tm;

	gmtime_r(&sec, &tm);
	if (frac)
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	return buf;
}

int64_t time_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
