/* test_liveness.c - clock_skew's rules (server/ingest/liveness.c) on
 * simulated hosts: arrivals every 10 s whose timestamps follow a clock
 * schedule, and the tick every 10 s applying each verdict the way
 * liveness_tick does. What must hold: a clock corrected from ahead raises
 * nothing; a corrected clock (behind, or refused) resolves within the
 * hold period, not a whole window later; a clock going back and forth
 * keeps one alert, at one severity. The SQL side: test_alert_store.c, and
 * tests/e2e/test_clock_skew.sh with a real server. */
#include "harness.h"
#include "liveness.h"

#define IV 10000		/* the hosts' interval, ms */
#define REFUSED_AHEAD_MS (10 * 60000)

/* offset_at(t): the host's clock minus the server's at t (ms from start) */
typedef int64_t (*clock_fn)(int64_t t);

struct sim {
	struct clock_obs o;
	bool open, critical;
	int opens, resolves, severity_changes;
	int64_t opened_at, resolved_at;
};

static void arrive(struct sim *s, const struct liveness_cfg *cfg, int64_t now, int64_t offset)
{
	int64_t ts = now + offset;

	if (offset > REFUSED_AHEAD_MS) {
		s->o.refused_n++;
		s->o.refused_at_ms = now;
		s->o.refused_ts_ms = ts;
		return;
	}
	s->o.seen_ms = now;
	host_lag_observe(&s->o.lag, now, ts, cfg->window_ms);
}

static void tick(struct sim *s, const struct liveness_cfg *cfg, int64_t now)
{
	int64_t amount;

	s->o.alert_open = s->open;
	s->o.alert_refused = s->open && s->critical;
	enum clock_verdict v = clock_judge(&s->o, now, cfg, &amount);
	if (v == CLOCK_KEEP || (v == CLOCK_OK && !s->open))
		return;
	if (v == CLOCK_OK) {
		s->open = false;
		s->resolves++;
		s->resolved_at = now;
		return;
	}
	bool crit = v == CLOCK_REFUSED_AHEAD || v == CLOCK_REFUSED_OLD;
	if (!s->open) {
		s->open = true;
		s->opens++;
		s->opened_at = now;
	} else if (crit != s->critical) {
		s->severity_changes++;
	}
	s->critical = crit;
}

/* Runs a host for dur ms from t0 (arrivals and ticks every 10 s). */
static void run(struct sim *s, const struct liveness_cfg *cfg, int64_t t0, int64_t dur, clock_fn f)
{
	for (int64_t t = 0; t < dur; t += IV) {
		arrive(s, cfg, t0 + t, f(t));
		tick(s, cfg, t0 + t + IV / 2);
	}
}

static void sim_init(struct sim *s)
{
	*s = (struct sim){ .o = { .interval_ms = IV, .lag = { 0, LAG_NONE, LAG_NONE, LAG_NONE, 0 } } };
}

static const int64_t T0 = 1800000000000LL;

/* 5 minutes fast for 2 minutes, then stepped back to the right time */
static int64_t step_back(int64_t t)
{
	return t < 120000 ? 300000 : 0;
}

static int64_t right(int64_t t)
{
	(void)t;
	return 0;
}

/* 2 hours behind for 12 minutes, then corrected */
static int64_t behind_fixed(int64_t t)
{
	return t < 12 * 60000 ? -7200000 : 0;
}

/* 15 minutes ahead (every sample refused) for 3 minutes, then corrected */
static int64_t refused_fixed(int64_t t)
{
	return t < 3 * 60000 ? 900000 : 0;
}

/* a minute 15 minutes ahead (refused), a minute 2 hours behind, ... */
static int64_t flip_refused(int64_t t)
{
	return (t / 60000) % 2 == 0 ? 900000 : -7200000;
}

/* 90 s behind for a minute, right for a minute, ... */
static int64_t flip_threshold(int64_t t)
{
	return (t / 60000) % 2 == 0 ? -90000 : 0;
}

static int64_t steady_behind(int64_t t)
{
	(void)t;
	return -7200000;
}

int main(void)
{
	struct liveness_cfg cfg;
	struct sim s;

	liveness_cfg_make(&cfg, 1);

	/* a clock corrected from ahead: its old window must not open an alert */
	sim_init(&s);
	run(&s, &cfg, T0, 15 * 60000, step_back);
	CHECK_INT(s.opens, 0);

	/* a right clock never */
	sim_init(&s);
	run(&s, &cfg, T0, 15 * 60000, right);
	CHECK_INT(s.opens, 0);

	/* behind, then corrected: one alert, resolved within the hold period
	 * (and a tick) of the correction, not a window or two later */
	sim_init(&s);
	run(&s, &cfg, T0, 20 * 60000, behind_fixed);
	CHECK_INT(s.opens, 1);
	CHECK_INT(s.resolves, 1);
	CHECK(!s.open);
	CHECK(s.resolved_at - (T0 + 12 * 60000) <= cfg.skew_hold_ms + 2 * IV);
	CHECK(s.resolved_at - (T0 + 12 * 60000) >= cfg.skew_hold_ms - 2 * IV);

	/* every sample refused, then corrected: critical at once, resolved
	 * within the hold period of the correction */
	sim_init(&s);
	run(&s, &cfg, T0, 10 * 60000, refused_fixed);
	CHECK_INT(s.opens, 1);
	CHECK(s.opened_at - T0 <= 2 * IV);
	CHECK_INT(s.resolves, 1);
	CHECK_INT(s.severity_changes, 0);
	CHECK(s.resolved_at - (T0 + 3 * 60000) <= cfg.skew_hold_ms + 2 * IV);

	/* back and forth across the refusal limit: one alert, critical, kept */
	sim_init(&s);
	run(&s, &cfg, T0, 12 * 60000, flip_refused);
	CHECK_INT(s.opens, 1);
	CHECK_INT(s.resolves, 0);
	CHECK_INT(s.severity_changes, 0);
	CHECK(s.open && s.critical);

	/* back and forth across the open threshold: at most one alert, kept */
	sim_init(&s);
	run(&s, &cfg, T0, 20 * 60000, flip_threshold);
	CHECK(s.opens <= 1);
	CHECK_INT(s.resolves, 0);

	/* steadily behind: one alert that stays */
	sim_init(&s);
	run(&s, &cfg, T0, 20 * 60000, steady_behind);
	CHECK_INT(s.opens, 1);
	CHECK_INT(s.resolves, 0);
	CHECK(s.open && !s.critical);

	/* the scaled durations keep their proportions */
	liveness_cfg_make(&cfg, 0.1);
	CHECK_INT(cfg.skew_hold_ms, 12000);
	CHECK_INT(cfg.skew_clear_ms, 30000);
	return harness_report("test_liveness");
}
