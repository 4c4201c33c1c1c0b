/* liveness.c - host_silent and clock_skew: the rules and the tick (see
 * liveness.h); the SQL is in server/store/liveness_store.c. */
#include "liveness.h"
#include "liveness_store.h"
#include "log.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Silence: an agent samples every interval, and one that cannot post
 * retries with a backoff of at most 60 s (agent/deliver.c BACKOFF_MAX),
 * each attempt up to its --timeout (10 s). After the server or the
 * database is back, every agent has tried again within 60 + 10 s; 20 s
 * more cover a slow first answer under the backlog of a whole fleet. */
#define SILENT_MIN_MS 60000
#define GRACE_MS (60000 + 10000 + 20000)
#define TICK_MS 10000
/* Clock: the window of arrivals whose smallest delay is the offset. An
 * agent's backlog after an outage drains in well under a minute, so one
 * window of 5 minutes always holds arrivals of a caught-up agent. */
#define WINDOW_MS (5 * 60000)
#define SKEW_OPEN_MS 60000
#define SKEW_CLEAR_MS 30000
/* An open clock_skew resolves, and a critical one (samples refused) turns
 * back to a warning, only after this long without a skewed arrival or a
 * refusal: a clock that goes back and forth keeps one alert. */
#define SKEW_HOLD_MS (2 * 60000)
/* CONTRACT.md §2: more than this ahead of the server's clock is refused */
#define AHEAD_REFUSED_MS (10 * 60000)

void liveness_cfg_make(struct liveness_cfg *c, double factor)
{
	if (!(factor > 0))
		factor = 1;
	c->silent_min_ms = (int64_t)(SILENT_MIN_MS * factor);
	c->grace_ms = (int64_t)(GRACE_MS * factor);
	c->tick_ms = (int64_t)(TICK_MS * factor);
	c->window_ms = (int64_t)(WINDOW_MS * factor);
	c->skew_open_ms = SKEW_OPEN_MS;
	c->skew_clear_ms = SKEW_CLEAR_MS;
	c->skew_hold_ms = (int64_t)(SKEW_HOLD_MS * factor);
	if (c->tick_ms < 100)
		c->tick_ms = 100;
}

static struct liveness_cfg cfg_once;
static pthread_once_t cfg_init = PTHREAD_ONCE_INIT;

static void cfg_read(void)
{
	const char *e = getenv("VMSCOPE_TEST_TIME_SCALE");
	double f = e ? strtod(e, NULL) : 1;

	if (!(f > 0 && f <= 1))
		f = 1;
	liveness_cfg_make(&cfg_once, f);
	if (f != 1)
		log_warn("VMSCOPE_TEST_TIME_SCALE=%g: host_silent after %lld ms, grace %lld ms, tick %lld ms "
			 "(for tests only)", f, (long long)cfg_once.silent_min_ms, (long long)cfg_once.grace_ms,
			 (long long)cfg_once.tick_ms);
}

const struct liveness_cfg *liveness_cfg(void)
{
	pthread_once(&cfg_init, cfg_read);
	return &cfg_once;
}

int64_t liveness_silent_after(int64_t interval_ms, const struct liveness_cfg *cfg)
{
	return 3 * interval_ms > cfg->silent_min_ms ? 3 * interval_ms : cfg->silent_min_ms;
}

static int64_t window_of(int64_t window_ms, int64_t interval_ms)
{
	return 3 * interval_ms > window_ms ? 3 * interval_ms : window_ms;
}

int64_t liveness_window(int64_t interval_ms)
{
	return window_of(liveness_cfg()->window_ms, interval_ms);
}

void host_lag_observe(struct host_lag *l, int64_t now_ms, int64_t newest_ms, int64_t window_ms)
{
	int64_t lag = now_ms - newest_ms;

	l->last_ms = lag;
	if (lag >= SKEW_CLEAR_MS || lag <= -SKEW_CLEAR_MS)
		l->bad_ms = now_ms;
	if (l->win_ms == 0 || l->min_ms == LAG_NONE || now_ms - l->win_ms >= window_ms || now_ms < l->win_ms) {
		/* the window before counts only when it ended where this one
		 * starts (no gap of a window or more without arrivals) */
		bool contiguous = l->win_ms != 0 && l->min_ms != LAG_NONE && now_ms >= l->win_ms &&
				  now_ms - l->win_ms < 2 * window_ms;
		l->prev_ms = contiguous ? l->min_ms : LAG_NONE;
		l->win_ms = now_ms;
		l->min_ms = lag;
		return;
	}
	if (lag < l->min_ms)
		l->min_ms = lag;
}

bool host_lag_offset(const struct host_lag *l, int64_t now_ms, int64_t window_ms, int64_t *offset_ms)
{
	if (l->prev_ms == LAG_NONE || l->win_ms == 0 || now_ms - l->win_ms >= window_ms)
		return false;
	*offset_ms = l->prev_ms;
	return true;
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

/* The verdict on accepted samples. Every arrival's lag is the offset plus
 * a delivery delay (>= 0), so every lag bounds the offset from above: the
 * smallest of the last complete window and of the current one is the
 * estimate, and a clock corrected from behind shows at its next arrival. A
 * clock corrected from ahead makes lags larger, which a delay could too;
 * the latest arrival tells them apart: a host still ahead posts its newest
 * sample with a lag as far below zero, a corrected one (or one draining a
 * backlog) does not, and no "ahead" alert opens on an old window then. */
static enum clock_verdict judge_accepted(const struct clock_obs *o, int64_t now_ms, const struct liveness_cfg *cfg,
					 int64_t *amount_ms)
{
	const struct host_lag *l = &o->lag;
	int64_t prev = 0, est;
	bool have_prev = host_lag_offset(l, now_ms, window_of(cfg->window_ms, o->interval_ms), &prev);
	bool have_cur = l->min_ms != LAG_NONE && l->win_ms != 0 &&
			now_ms - l->win_ms < 2 * window_of(cfg->window_ms, o->interval_ms);
	int64_t quiet_since = l->bad_ms > o->refused_at_ms ? l->bad_ms : o->refused_at_ms;
	bool quiet = now_ms - quiet_since >= cfg->skew_hold_ms;
	bool last_ok = l->last_ms != LAG_NONE && abs64(l->last_ms) < cfg->skew_clear_ms;

	/* corrected, and nothing skewed for the hold period: resolve */
	if (o->alert_open && quiet && last_ok)
		return CLOCK_OK;
	/* an open alert needs only a current figure; opening one needs a
	 * complete window (a backlog at start must not look like skew) */
	if (!have_prev && !(o->alert_open && have_cur))
		return CLOCK_KEEP;
	est = have_prev && (!have_cur || prev < l->min_ms) ? prev : l->min_ms;
	*amount_ms = abs64(est);
	if (est >= cfg->skew_open_ms)
		return CLOCK_BEHIND;
	if (est <= -cfg->skew_open_ms) {
		/* ahead by the window, but is the latest arrival still ahead? */
		if (l->last_ms != LAG_NONE && l->last_ms <= -cfg->skew_clear_ms)
			return CLOCK_AHEAD;
		*amount_ms = 0;
		return CLOCK_KEEP;
	}
	if (*amount_ms < cfg->skew_clear_ms && (!o->alert_open || quiet))
		return CLOCK_OK;
	*amount_ms = 0;
	return CLOCK_KEEP;
}

enum clock_verdict clock_judge(const struct clock_obs *o, int64_t now_ms, const struct liveness_cfg *cfg,
			       int64_t *amount_ms)
{
	*amount_ms = 0;
	bool refusing = o->refused_n > 0 && o->refused_at_ms > o->seen_ms;
	if (refusing && now_ms - o->refused_at_ms <= liveness_silent_after(o->interval_ms, cfg)) {
		*amount_ms = abs64(o->refused_ts_ms - o->refused_at_ms);
		return o->refused_ts_ms > o->refused_at_ms ? CLOCK_REFUSED_AHEAD : CLOCK_REFUSED_OLD;
	}
	if (refusing)
		return CLOCK_KEEP;	/* refused, then nothing: the agent stopped */
	/* samples accepted again after refusals: a critical alert stays
	 * critical for the hold period (unless the clock is right again and
	 * judge_accepted resolves it), so that a clock going back and forth
	 * across the refusal limit does not escalate and de-escalate */
	enum clock_verdict v = judge_accepted(o, now_ms, cfg, amount_ms);
	if (o->alert_open && o->alert_refused && v != CLOCK_OK && o->refused_n > 0 &&
	    now_ms - o->refused_at_ms < cfg->skew_hold_ms) {
		*amount_ms = 0;
		return CLOCK_KEEP;
	}
	return v;
}

void liveness_fmt_duration(int64_t ms, char *out, size_t outlen)
{
	int64_t s = (ms + 500) / 1000;

	if (s >= 86400)
		snprintf(out, outlen, "%lld d %lld h", (long long)(s / 86400), (long long)(s % 86400 / 3600));
	else if (s >= 3600)
		snprintf(out, outlen, "%lld h %lld min", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else if (s >= 60)
		snprintf(out, outlen, "%lld min %lld s", (long long)(s / 60), (long long)(s % 60));
	else
		snprintf(out, outlen, "%lld s", (long long)s);
}

/* The clock_skew alert's text for a verdict: severity, summary and
 * evidence (a new reference). offset_s in the evidence is the server's
 * clock minus the host's (positive: behind), for programs. */
static json_t *clock_alert(enum clock_verdict v, int64_t amount, char *summary, size_t slen,
			   const char **severity)
{
	char d[48];
	double off = (double)amount / 1000.0;

	liveness_fmt_duration(amount, d, sizeof(d));
	switch (v) {
	case CLOCK_REFUSED_AHEAD:
		*severity = "critical";
		snprintf(summary, slen, "clock %s ahead of the server's: every sample refused (more than 10 min "
			 "ahead)", d);
		return json_pack("{s:s,s:f,s:f,s:b,s:s}", "clock", "ahead", "ahead_s", off, "offset_s", -off,
				 "samples_refused", 1, "hint",
				 "synchronise the host's clock (NTP): its samples are refused and lost");
	case CLOCK_REFUSED_OLD:
		*severity = "critical";
		snprintf(summary, slen, "clock %s behind the server's: every sample refused (older than the "
			 "retention)", d);
		return json_pack("{s:s,s:f,s:f,s:b,s:s}", "clock", "behind", "behind_s", off, "offset_s", off,
				 "samples_refused", 1, "hint",
				 "synchronise the host's clock (NTP): its samples are refused and lost");
	case CLOCK_BEHIND:
		*severity = "warning";
		snprintf(summary, slen, "clock %s behind the server's: its samples and alerts are dated %s early", d, d);
		return json_pack("{s:s,s:f,s:f,s:b,s:s}", "clock", "behind", "behind_s", off, "offset_s", off,
				 "samples_refused", 0, "hint",
				 "synchronise the host's clock (NTP); samples are stored with the host's own times");
	default:
		*severity = "warning";
		snprintf(summary, slen, "clock %s ahead of the server's: its samples and alerts are dated %s late "
			 "(refused beyond 10 min)", d, d);
		return json_pack("{s:s,s:f,s:f,s:b,s:s}", "clock", "ahead", "ahead_s", off, "offset_s", -off,
				 "samples_refused", 0, "hint",
				 "synchronise the host's clock (NTP) before it drifts past 10 minutes");
	}
}

/* Whether an open alert's figure is worth rewriting: the verdict changed,
 * or the amount moved by more than a tenth (and 10 s). Rewriting only the
 * text sends no notification (040_notify.sql fires on state and
 * severity), and a steady clock is not rewritten every tick. */
static bool worth_update(const struct clock_row *r, enum clock_verdict v, int64_t amount)
{
	bool refused = v == CLOCK_REFUSED_AHEAD || v == CLOCK_REFUSED_OLD;
	bool behind = v == CLOCK_REFUSED_OLD || v == CLOCK_BEHIND;
	int64_t d = abs64(amount - r->alert_amount_ms);

	return refused != r->alert_refused || behind != r->alert_behind || (d * 10 > amount && d > 10000);
}

static int tick_clock(PGconn *c, int64_t now_ms, const struct liveness_cfg *cfg, char *err, size_t errlen)
{
	struct clock_row *rows = NULL;
	size_t n = 0;
	int rc = 0;

	if (liveness_store_clock_rows(c, cfg->skew_open_ms, &rows, &n, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct clock_row *r = &rows[i];
		int64_t amount;
		r->obs.alert_open = r->alert_id > 0;
		r->obs.alert_refused = r->alert_id > 0 && r->alert_refused;
		enum clock_verdict v = clock_judge(&r->obs, now_ms, cfg, &amount);
		if (v == CLOCK_KEEP || (v == CLOCK_OK && r->alert_id <= 0))
			continue;
		if (v == CLOCK_OK) {
			rc = liveness_store_clock_resolve(c, r->host_id, r->alert_id, now_ms, err, errlen);
			continue;
		}
		if (r->alert_id > 0 && !worth_update(r, v, amount))
			continue;
		char summary[256];
		const char *sev;
		json_t *ev = clock_alert(v, amount, summary, sizeof(summary), &sev);
		if (!ev) {
			snprintf(err, errlen, "could not build clock_skew: out of memory");
			rc = -1;
			break;
		}
		rc = r->alert_id > 0 ? liveness_store_clock_update(c, r->host_id, r->alert_id, sev, summary, ev, err,
								   errlen)
				     : liveness_store_clock_open(c, r->host_id, r->host, sev, summary, ev, now_ms, err,
								 errlen);
		json_decref(ev);
	}
	liveness_store_clock_rows_free(rows, n);
	return rc;
}

int liveness_tick(PGconn *c, int64_t now_ms, bool judge_silence, char *err, size_t errlen)
{
	const struct liveness_cfg *cfg = liveness_cfg();
	int opened = 0;

	if (tick_clock(c, now_ms, cfg, err, errlen) < 0)
		return -1;
	if (!judge_silence)
		return 0;
	return liveness_store_open_silent(c, now_ms, cfg->silent_min_ms, &opened, err, errlen);
}
