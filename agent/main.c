/* main.c - vmscope-agent: take a sample every interval (aligned to the
 * clock), append it to the spool, and deliver the spool to the server in
 * the same single-threaded loop without ever letting the network delay a
 * sample. --stdout prints samples instead of spooling them. */
#include "alog.h"
#include "collect.h"
#include "deliver.h"
#include "jsonw.h"
#include "options.h"
#include "spool.h"

#include <errno.h>
#include <stdbool.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The one output buffer: samples stream through it to the spool or stdout. */
static char outbuf[64 * 1024];
static volatile sig_atomic_t stop_signal;
/* -errno of the last failed sample write (ENOSPC makes room in the spool) */
static int last_write_err;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The first multiple of iv after t: samples land on the same instants on
 * every machine, which makes fleet charts line up. */
static double align_next(double t, double iv)
{
	return (floor(t / iv) + 1) * iv;
}

/* When to sample after the first sample, taken at `first` right at start
 * (an agent just started or restarted shows data at once instead of after
 * up to a whole interval): the next aligned instant at least half an
 * interval later, so no two samples are so close that their rates mean
 * nothing. */
static double align_after_first(double first, double iv)
{
	double next = align_next(first, iv);

	return next - first < iv / 2 ? next + iv : next;
}

static void tee_to_deliver(void *ctx, const char *p, size_t n)
{
	deliver_stream_add(ctx, p, n);
}

/* One sample to fd; with d, its bytes are also fed to d's streamed body. */
static int sample_to_fd(struct collector *col, int fd, struct deliver *d)
{
	struct jw w;

	jw_init(&w, outbuf, sizeof(outbuf), fd);
	if (d) {
		w.tee = tee_to_deliver;
		w.tee_ctx = d;
	}
	if (collector_sample(col, &w) < 0)
		return -1;
	jw_raw(&w, "\n", 1);
	if (jw_flush(&w) < 0) {
		last_write_err = w.err;
		if (w.err != -ENOSPC)
			alog_error("could not write a sample: %s", strerror(-w.err));
		return -2;
	}
	return 0;
}

/* Takes one sample into the spool, its request body built on the way when
 * it will be the whole next batch (deliver_stream_begin). Returns 0 or -1
 * (logged). When the filesystem is full (ENOSPC) the oldest segments go,
 * as with --spool-max-bytes, so the newest samples are kept and the drop
 * counted. */
static int sample_to_spool(struct collector *col, struct spool *sp, struct deliver *dl)
{
	long dropped = 0;

	for (;;) {
		int fd = spool_append_begin(sp);
		bool stream = fd >= 0 && deliver_stream_begin(dl, sp);
		int rc = fd < 0 ? -2 : sample_to_fd(col, fd, stream ? dl : NULL);

		if (fd < 0 && errno != ENOSPC)
			alog_error("could not append to the spool in %s: %s", sp->dir, strerror(errno));
		if (rc == 0) {
			struct spool_pos start = spool_rec_start(sp);
			long d = spool_append_commit(sp);
			deliver_stream_end(dl, d >= 0, start, sp->unsynced_end);
			if (d < 0)
				return -1;
			dropped += d;
			break;
		}
		deliver_stream_end(dl, false, sp->unsynced_end, sp->unsynced_end);
		int enospc = fd < 0 ? errno == ENOSPC : last_write_err == -ENOSPC;
		if (fd >= 0)
			spool_append_abort(sp);
		if (rc == -1 || !enospc)
			return -1;
		long d = spool_drop_oldest(sp);
		if (d < 0) {
			/* the older samples are in flight (or there are none): this
			 * one cannot be kept; it counts as taken and dropped */
			sp->dropped++;
			alog_warn("spool %s: filesystem full and nothing older can be dropped now: "
				  "dropped this sample (%llu dropped in all)", sp->dir,
				  (unsigned long long)sp->dropped);
			return 0;
		}
		alog_warn("spool %s: filesystem full, dropped the %ld oldest samples (%llu dropped in all)",
			  sp->dir, d, (unsigned long long)sp->dropped);
	}
	if (dropped > 0)
		alog_warn("spool full (--spool-max-bytes %llu): dropped the %ld oldest samples "
			  "(%llu dropped in all)", (unsigned long long)sp->max_bytes, dropped,
			  (unsigned long long)sp->dropped);
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int run_stdout(struct collector *col, const struct agent_opts *o)
{
	double next;

	if (o->once)
		return sample_to_fd(col, STDOUT_FILENO, NULL) == 0 ? 0 : 1;
	next = clock_s(CLOCK_REALTIME);	/* the first sample right away */
	if (sample_to_fd(col, STDOUT_FILENO, NULL) == -2)
		return 1;
	next = align_after_first(next, o->interval_s);
	while (!stop_signal) {
		double now = clock_s(CLOCK_REALTIME);
		if (now >= next) {
			if (sample_to_fd(col, STDOUT_FILENO, NULL) == -2)
				return 1;
			next = align_next(clock_s(CLOCK_REALTIME), o->interval_s);
			continue;
		}
		double wait = next - now < 0.25 ? next - now : 0.25;
		struct timespec ts = { (time_t)wait, (long)((wait - floor(wait)) * 1e9) };
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* How long a sample may stay in the spool unsynced while its delivery is
 * under way. A sample the server accepts in that time never needs an
 * fdatasync: it is in the page cache, which a crash of the agent does not
 * lose, and a power loss during that second would have lost a sample taken
 * a second later just the same. A sample that stays unsent (delivery
 * failing, backing off, or slow) is synced: then it survives a power loss
 * too. Before, every sample cost an fdatasync (a disk flush). */
#define SYNC_GRACE_S 1.0

/* The unsynced samples not yet accepted, oldest first: where each ends in
 * the spool and when it was taken. The grace runs from the oldest of them.
 * (Before, it ran from the first sample since the last sync: when requests
 * overlapped the next sample, an accepted sample left the spool
 * "unsynced" because of the next one, and the spool was synced every
 * second although every sample was accepted within its interval.) At most
 * SYNC_GRACE_S / interval + 1 can be pending (11 at the shortest 0.1 s
 * interval); a full list syncs, which empties it. */
#define PENDING_MAX 64
struct pending {
	struct spool_pos end[PENDING_MAX];
	double t[PENDING_MAX];
	size_t n;
};

/* Forgets the samples the head has passed (accepted, refused or dropped),
 * and all of them once the spool is synced. */
static void pending_resolve(struct pending *pd, const struct spool *sp)
{
	size_t k = 0;

	if (!sp->unsynced) {
		pd->n = 0;
		return;
	}
	while (k < pd->n && spool_pos_cmp(pd->end[k], sp->head) <= 0)
		k++;
	memmove(pd->end, pd->end + k, (pd->n - k) * sizeof(pd->end[0]));
	memmove(pd->t, pd->t + k, (pd->n - k) * sizeof(pd->t[0]));
	pd->n -= k;
}

static int run_spool(struct collector *col, const struct agent_opts *o)
{
	struct spool sp;
	struct deliver d;
	char err[512];
	unsigned long long taken = 0, skipped = 0;
	int rc = 0;

	if (spool_open(&sp, o->spool, o->spool_max_bytes, err, sizeof(err)) < 0) {
		alog_error("%s", err);
		return 1;
	}
	if (!spool_empty(&sp))
		alog_info("spool %s holds %llu bytes of unsent samples from before", o->spool,
			  (unsigned long long)spool_pending_bytes(&sp));
	if (deliver_init(&d, o) < 0) {
		spool_close(&sp);
		return 1;
	}
	alog_info("sampling every %g s, posting to %s, spool %s", o->interval_s, d.url, o->spool);

	double next = 0;	/* the first sample right away, aligned after it */
	bool first = true;
	double once_deadline = clock_s(CLOCK_MONOTONIC) + o->timeout_s * 3;
	struct pending pd = { .n = 0 };	/* unsynced samples not yet accepted */
	while (!stop_signal) {
		double now = clock_s(CLOCK_REALTIME);
		if (now >= next && (!o->once || taken == 0)) {
			if (sample_to_spool(col, &sp, &d) == 0) {
				taken++;
				if (pd.n == PENDING_MAX)
					spool_sync(&sp);	/* cannot happen (see PENDING_MAX) */
				pending_resolve(&pd, &sp);
				if (sp.unsynced) {
					pd.end[pd.n] = sp.unsynced_end;
					pd.t[pd.n++] = clock_s(CLOCK_MONOTONIC);
				}
			}
			if (!o->once && first) {
				next = align_after_first(now, o->interval_s);
				first = false;
			} else if (!o->once) {
				next += o->interval_s;
				double after = clock_s(CLOCK_REALTIME);
				if (next <= after) {
					unsigned long long miss = (unsigned long long)((after - next) / o->interval_s) + 1;
					skipped += miss;
					alog_warn("sampling fell behind: skipped %llu samples", miss);
					next = align_next(after, o->interval_s);
				}
			}
		} else if (!o->once && next - now > 2 * o->interval_s) {
			next = align_next(now, o->interval_s);	/* the clock was set back */
		}
		double mono = clock_s(CLOCK_MONOTONIC);
		deliver_step(&d, &sp, mono);
		pending_resolve(&pd, &sp);
		/* the oldest sample not yet accepted (an unsynced spool with
		 * nothing listed cannot happen: it would be synced at once) */
		double unsynced_since = pd.n ? pd.t[0] : mono - SYNC_GRACE_S;
		if (sp.unsynced && (!d.inflight || mono - unsynced_since >= SYNC_GRACE_S)) {
			/* not on its way (delivery failing or backing off), or too
			 * slow: make it durable */
			alog_debug("syncing the spool: %s", d.inflight ? "delivery slow" : "not delivered");
			spool_sync(&sp);
		}
		if (o->once && !d.inflight && (spool_empty(&sp) || d.failing || mono > once_deadline)) {
			rc = spool_empty(&sp) && taken > 0 ? 0 : 1;
			break;
		}
		double wait = o->once ? 0.25 : next - clock_s(CLOCK_REALTIME);
		double due = d.inflight ? 0.25 : deliver_due_in(&d, &sp, clock_s(CLOCK_MONOTONIC));
		if (due < wait)
			wait = due;
		if (sp.unsynced && unsynced_since + SYNC_GRACE_S - mono < wait)
			wait = unsynced_since + SYNC_GRACE_S - mono;
		if (wait > 0.25)
			wait = 0.25;
		deliver_wait(&d, wait);
	}
	if (stop_signal)
		alog_info("stopping on signal %d", (int)stop_signal);
	deliver_finish(&d, &sp, o->timeout_s < 2 ? o->timeout_s : 2);
	spool_sync(&sp);	/* what is left, before the totals say it is kept */
	alog_info("totals: %llu samples taken, %llu skipped, %llu delivered, %llu refused by the server, "
		  "%llu dropped (spool full), %llu bytes left in the spool, %llu spool syncs, "
		  "%llu requests (%llu built while the sample was written)",
		  taken, skipped, (unsigned long long)d.sent, (unsigned long long)d.refused,
		  (unsigned long long)sp.dropped, (unsigned long long)spool_pending_bytes(&sp),
		  (unsigned long long)sp.syncs, (unsigned long long)d.requests,
		  (unsigned long long)d.streamed);
	deliver_release(&d);
	spool_close(&sp);
	return rc;
}

int main(int argc, char **argv)
{
	struct agent_opts o;
	struct collector col;
	char err[1024];
	int rc;

	/* big buffers (zlib state, batch bodies) go back to the kernel when freed */
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	mallopt(M_TRIM_THRESHOLD, 128 * 1024);
	mallopt(M_ARENA_MAX, 1);
	opts_init(&o);
	rc = opts_parse(&o, argc, argv, err, sizeof(err));
	if (rc != 0) {
		if (rc < 0)
			fprintf(stderr, "vmscope-agent: %s\n", err);
		opts_release(&o);
		return rc < 0 ? 2 : 0;
	}
	alog_set_level((enum alog_level)o.log_level);
	install_signals();
	if (collector_init(&col, &o) < 0) {
		opts_release(&o);
		return 1;
	}
	rc = o.to_stdout ? run_stdout(&col, &o) : run_spool(&col, &o);
	collector_release(&col);
	opts_release(&o);
	return rc;
}
