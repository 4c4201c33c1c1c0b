/* main.c - vmscope-agent: take a sample every interval (aligned to the
 * clock), append it to the spool, and deliver the spool to the server in
 * the same single-threaded loop without ever letting the network delay a
 * sample. --stdout prints samples instead of spooling them. */
#include "alog.h"
#include "collect.h"
#include "deliver.h"
#include "jsonw.h"
#include "memq.h"
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
#include <sys/uio.h>
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

/* One sample to fd; with d, its bytes are also fed to d's streamed body.
 * Returns 0, -1 when no sample could be read (logged), -2 when fd did not
 * take it (last_write_err says why; not logged here: a spool that cannot
 * be written fails with every sample, and the caller says so once). */
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
		last_write_err = w.err;	/* the caller says it, once */
		return -2;
	}
	return 0;
}

/* Takes one sample into the spool, its request body built on the way when
 * it will be the whole next batch (deliver_stream_begin). Returns 0 when
 * spooled, -1 when no sample could be read (logged), -2 when the spool
 * could not take it (the caller keeps it in memory). When the filesystem
 * is full (ENOSPC) the oldest segments go, as with --spool-max-bytes, so
 * the newest samples are kept and the drop counted. */
static int sample_to_spool(struct collector *col, struct spool *sp, struct deliver *dl)
{
	long dropped = 0;

	for (;;) {
		int fd = spool_append_begin(sp);
		int open_err = fd < 0 ? errno : 0;
		bool stream = fd >= 0 && deliver_stream_begin(dl, sp);
		int rc = fd < 0 ? -2 : sample_to_fd(col, fd, stream ? dl : NULL);

		last_write_err = fd < 0 ? -open_err : rc == -2 ? last_write_err : 0;
		if (rc == 0) {
			struct spool_pos start = spool_rec_start(sp);
			long d = spool_append_commit(sp);
			deliver_stream_end(dl, d >= 0, start, sp->unsynced_end);
			if (d < 0)
				return -2;
			dropped += d;
			break;
		}
		deliver_stream_end(dl, false, sp->unsynced_end, sp->unsynced_end);
		if (fd >= 0)
			spool_append_abort(sp);
		if (rc == -1)
			return -1;
		if (last_write_err != -ENOSPC)
			return -2;
		long d = spool_drop_oldest(sp);
		if (d < 0) {
			/* the older samples are in flight (or there are none): this
			 * one goes to memory */
			alog_warn("spool %s: filesystem full and nothing older can be dropped now", sp->dir);
			return -2;
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

static void tee_to_memq(void *ctx, const char *p, size_t n)
{
	memq_rec_add(ctx, p, n);
}

/* One sample into the memory queue (the spool cannot take it). Returns 0
 * kept, 1 read but not kept (dropped: counted in mq->dropped), -1 when no
 * sample could be read. */
static int sample_to_memq(struct collector *col, struct memq *mq)
{
	struct jw w;

	jw_init(&w, outbuf, sizeof(outbuf), -1);
	w.tee = tee_to_memq;
	w.tee_ctx = mq;
	memq_rec_begin(mq);
	if (collector_sample(col, &w) < 0) {
		memq_rec_cancel(mq);
		return -1;
	}
	jw_raw(&w, "\n", 1);
	jw_flush(&w);
	return memq_rec_end(mq) ? 0 : 1;
}

/* Appends one record and its newline to the spool: memq_peek's callback. */
static int rec_to_spool(void *ctx, const char *rec, size_t len)
{
	struct spool *sp = ctx;
	int fd = spool_append_begin(sp);

	if (fd < 0) {
		last_write_err = -errno;
		return -1;
	}
	struct iovec iov[2] = { { (void *)rec, len }, { (void *)"\n", 1 } };
	if (writev(fd, iov, 2) != (ssize_t)(len + 1)) {
		last_write_err = -errno;
		spool_append_abort(sp);
		return -1;
	}
	return spool_append_commit(sp) < 0 ? -1 : 0;
}

/* Moves the memory queue's samples into the spool, oldest first, when
 * none of them is in flight; stops at the first that the spool refuses.
 * Returns how many were moved. */
static size_t memq_to_spool(struct memq *mq, struct spool *sp)
{
	size_t moved = 0, n;

	while (!mq->pinned && !memq_empty(mq)) {
		if (memq_peek(mq, 1, SIZE_MAX, rec_to_spool, sp, &n) < 0 || n == 0)
			break;
		memq_pop(mq, 1);
		moved++;
	}
	return moved;
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

/* One sample to stdout; -2 (logged) when stdout does not take it. */
static int sample_to_stdout(struct collector *col)
{
	int rc = sample_to_fd(col, STDOUT_FILENO, NULL);

	if (rc == -2)
		alog_error("could not write a sample: %s", strerror(-last_write_err));
	return rc;
}

static int run_stdout(struct collector *col, const struct agent_opts *o)
{
	double next;

	if (o->once)
		return sample_to_stdout(col) == 0 ? 0 : 1;
	next = clock_s(CLOCK_REALTIME);	/* the first sample right away */
	if (sample_to_stdout(col) == -2)
		return 1;
	next = align_after_first(next, o->interval_s);
	while (!stop_signal) {
		double now = clock_s(CLOCK_REALTIME);
		if (now >= next) {
			if (sample_to_stdout(col) == -2)
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

/* Where a posting agent's samples go, and its own counters (reported in
 * every sample and in the totals at exit). */
struct taker {
	struct collector *col;
	struct spool *sp;
	struct deliver *d;
	struct memq *mq;
	struct agent_counters cnt;
	bool spool_failing;	/* the last sample could not be spooled */
	double failing_said;	/* when the failing spool was last mentioned (monotonic s) */
	uint64_t failing_n;	/* samples kept in memory since */
	bool drop_said;		/* the memory queue's drops were said in this failing period */
};

/* While the spool cannot be written, how often that is said again. */
#define FAILING_REMIND_S 60.0

static void counters_refresh(struct taker *t)
{
	t->cnt.delivered = t->d->sent;
	t->cnt.refused = t->d->refused;
	t->cnt.refused_clock = t->d->refused_time;
	t->cnt.dropped_spool_full = t->sp->dropped;
	t->cnt.dropped_unspoolable = t->mq->dropped;
	t->cnt.lost_spool_removed = t->sp->lost_removed;
	t->cnt.duplicates = t->d->duplicates;
}

enum took { TOOK_NONE = -1, TOOK_DROPPED, TOOK_MEMORY, TOOK_SPOOL };

/* Takes one sample: into the spool, or, when the spool cannot take it
 * (read-only, permission denied, I/O error, full with nothing to drop),
 * into the memory queue, from which it is posted all the same and moved
 * into the spool once the spool takes writes again (memq.h). Samples wait
 * in memory while older ones do, so order is kept. */
static enum took take_sample(struct taker *t)
{
	counters_refresh(t);
	if (!memq_empty(t->mq)) {
		size_t moved = memq_to_spool(t->mq, t->sp);
		if (moved && memq_empty(t->mq))
			alog_info("spool %s takes writes again: moved %zu samples from memory into it",
				  t->sp->dir, moved);
	}
	if (memq_empty(t->mq)) {
		int rc = sample_to_spool(t->col, t->sp, t->d);
		if (rc == -1)
			return TOOK_NONE;
		if (rc == 0) {
			if (t->spool_failing)
				alog_info("spool %s takes writes again", t->sp->dir);
			t->spool_failing = false;
			t->drop_said = false;
			return TOOK_SPOOL;
		}
		t->cnt.spool_write_errors++;
		if (!t->spool_failing)
			alog_error("could not write a sample to the spool in %s: %s; keeping samples in "
				   "memory (at most %u KiB) and posting them from there until it takes writes "
				   "again", t->sp->dir, strerror(-last_write_err), MEMQ_MAX_BYTES >> 10);
		if (!t->spool_failing) {
			t->failing_said = clock_s(CLOCK_MONOTONIC);
			t->failing_n = 0;
		}
		t->spool_failing = true;
	}
	double mono = clock_s(CLOCK_MONOTONIC);
	if (t->spool_failing && mono - t->failing_said >= FAILING_REMIND_S) {
		/* once a minute at most, with what happened meanwhile */
		alog_error("spool %s still cannot be written: %s; %llu samples went to memory in the last %.0f s, "
			   "%llu dropped in all (memory queue full)", t->sp->dir, strerror(-last_write_err),
			   (unsigned long long)t->failing_n, mono - t->failing_said,
			   (unsigned long long)t->mq->dropped);
		t->failing_said = mono;
		t->failing_n = 0;
	}
	t->failing_n++;
	uint64_t before = t->mq->dropped;
	int rc = sample_to_memq(t->col, t->mq);
	if (rc < 0)
		return TOOK_NONE;
	bool first_drop = t->mq->dropped > before && !t->drop_said;
	if (first_drop)	/* the next ones in the reminder, once a minute */
		alog_warn("memory queue full (%u KiB) while the spool cannot be written: dropped %llu "
			  "sample(s), %llu in all", MEMQ_MAX_BYTES >> 10,
			  (unsigned long long)(t->mq->dropped - before), (unsigned long long)t->mq->dropped);
	t->drop_said |= first_drop;
	if (rc > 0)
		return TOOK_DROPPED;
	t->cnt.kept_in_memory++;
	return TOOK_MEMORY;
}

static int run_spool(struct collector *col, const struct agent_opts *o)
{
	struct spool sp;
	struct deliver d;
	struct memq mq;
	char err[512];
	unsigned long long taken = 0, skipped = 0;
	int rc = 0;

	memq_init(&mq);

	err[0] = '\0';
	if (spool_open(&sp, o->spool, o->spool_max_bytes, err, sizeof(err)) < 0) {
		alog_error("%s", err);
		return 1;
	}
	bool spool_ro = sp.readonly;
	if (!spool_empty(&sp))
		alog_info("spool %s holds %llu bytes of unsent samples from before", o->spool,
			  (unsigned long long)spool_pending_bytes(&sp));
	if (deliver_init(&d, o, &mq) < 0) {
		spool_close(&sp);
		return 1;
	}
	struct taker tk = { .col = col, .sp = &sp, .d = &d, .mq = &mq };
	if (spool_ro) {
		/* said once; take_sample says when it takes writes again */
		alog_error("%s; keeping samples in memory (at most %u KiB) and posting them from there until "
			   "it takes writes again", err, MEMQ_MAX_BYTES >> 10);
		tk.spool_failing = true;
		tk.failing_said = clock_s(CLOCK_MONOTONIC);
	}
	col->self = &tk.cnt;	/* samples report the agent's own counters */
	alog_info("sampling every %g s, posting to %s, spool %s", o->interval_s, d.url, o->spool);

	double next = 0;	/* the first sample right away, aligned after it */
	bool first = true;
	double once_deadline = clock_s(CLOCK_MONOTONIC) + o->timeout_s * 3;
	struct pending pd = { .n = 0 };	/* unsynced samples not yet accepted */
	while (!stop_signal) {
		double now = clock_s(CLOCK_REALTIME);
		if (now >= next && (!o->once || taken == 0)) {
			enum took took = take_sample(&tk);
			if (took != TOOK_NONE)
				tk.cnt.taken = ++taken;
			if (took == TOOK_SPOOL) {
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
		bool all_sent = spool_empty(&sp) && memq_empty(&mq);
		if (o->once && !d.inflight && (all_sent || d.failing || mono > once_deadline)) {
			rc = all_sent && taken > 0 ? 0 : 1;
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
	/* samples still in memory: into the spool if it takes them now, else
	 * they are lost with the process (counted and said) */
	memq_to_spool(&mq, &sp);
	unsigned long long lost = 0;
	if (!memq_empty(&mq)) {
		lost = mq.n;
		alog_error("spool %s still cannot be written: %llu samples kept in memory are lost", sp.dir, lost);
	}
	spool_sync(&sp);	/* what is left, before the totals say it is kept */
	/* the first fields keep their order: scripts read them by position */
	alog_info("totals: %llu samples taken, %llu skipped, %llu delivered, %llu refused by the server, "
		  "%llu dropped (spool full), %llu bytes left in the spool, %llu spool syncs, "
		  "%llu requests (%llu built while the sample was written), %llu refused for their timestamp, "
		  "%llu dropped (spool unwritable, memory queue full), %llu lost at exit (spool unwritable), "
		  "%llu kept in memory while the spool could not be written, "
		  "%llu lost with the spool directory (removed), "
		  "%llu delivered as duplicates (not stored: the server had their host and timestamp)",
		  taken, skipped, (unsigned long long)d.sent, (unsigned long long)d.refused,
		  (unsigned long long)sp.dropped, (unsigned long long)spool_pending_bytes(&sp),
		  (unsigned long long)sp.syncs, (unsigned long long)d.requests, (unsigned long long)d.streamed,
		  (unsigned long long)d.refused_time, (unsigned long long)mq.dropped, lost,
		  (unsigned long long)tk.cnt.kept_in_memory, (unsigned long long)sp.lost_removed,
		  (unsigned long long)d.duplicates);
	col->self = NULL;
	deliver_release(&d);
	memq_release(&mq);
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
