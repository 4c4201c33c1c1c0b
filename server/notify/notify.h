/* notify.h - the notifier: pushes alert open, escalate and resolve events
 * to the receivers of --webhook (notify_receiver.h) from a thread of its
 * own, so that ingest never waits for a receiver.
 *
 * The events come from the outbox table (schema/040_notify.sql), which a
 * trigger on alerts fills in the very transaction that changes the alert:
 * an event exists exactly when its alert change committed, and it stays
 * until delivered, so a restart (or a crash) loses none. The trigger's
 * pg_notify wakes the thread at once (LISTEN on its own connection); it
 * also looks every 2 s (silences that ran out, retries).
 *
 * Per event and receiver: one POST, retried with exponential backoff and
 * jitter (1 s doubling to 60 s) up to --notify-retries attempts, then given
 * up (logged, recorded as "!name" in the event's delivered list); a
 * receiver's events go out in order. Alertmanager receivers also get every
 * open, unsilenced alert re-sent each --notify-resend seconds with endsAt
 * four intervals ahead (Alertmanager resolves what it stops hearing about).
 *
 * Silences (silence.h): an open or escalate event of a silenced alert is
 * held back (marked suppressed), and so is the resolve of an alert whose
 * open was never sent. When the silence ends while the alert is still
 * open, a new open event is queued for it.
 *
 * Several servers on one database: only the one holding an advisory lock
 * sends (give them all the same --webhook flags); another takes over when
 * it goes away.
 *
 * Ownership: notify_start returns a handle that notify_stop joins and
 * frees. It reads app->cfg and app's store (waits for it to open: the
 * migrations must have run). */
#ifndef VMSCOPE_NOTIFY_H
#define VMSCOPE_NOTIFY_H

#include <stddef.h>

#include "app.h"

#define NOTIFY_POLL_MS 2000
#define NOTIFY_BACKOFF_MIN_MS 1000
#define NOTIFY_BACKOFF_MAX_MS 60000
#define NOTIFY_BATCH 200
#define NOTIFY_KEEP_DAYS 7	/* delivered events of resolved alerts kept this long */

struct notify;

/* Parses the receivers and starts the thread. NULL with err written when a
 * --webhook is malformed or the thread cannot start. */
struct notify *notify_start(struct app *app, char *err, size_t errlen);

/* Stops the thread (an ongoing POST ends within --notify-timeout) and
 * frees everything. NULL is a no-op. */
void notify_stop(struct notify *n);

/* Computes the delay before retry number fails (1, 2, ...) with "equal
 * jitter": half of min(max, min * 2^(fails-1)) plus a random part of the
 * other half; r is a random number in [0, 1). Pure, unit-tested. */
long notify_backoff_ms(int fails, double r);

#endif
