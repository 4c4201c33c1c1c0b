/* regress_watch.h - the server's kernel-regression watch thread: once the
 * store is open, every min(--regression-every, 30) seconds it tries the
 * watch's advisory lock (regress_store.h); the server that gets it runs
 * the watch (regress_run.h) when the last run, by any server, finished at
 * least --regression-every seconds ago by the database's clock. So any
 * number of servers share one pace, one run at a time, and another server
 * takes over when one goes away. --regression-every 0: no thread.
 *
 * Ownership: regress_watch_start returns a handle (NULL with the watch
 * off, which regress_watch_stop accepts); regress_watch_stop wakes the
 * thread, joins it and frees the handle. */
#ifndef VMSCOPE_REGRESS_WATCH_H
#define VMSCOPE_REGRESS_WATCH_H

#include <stdbool.h>

#include "app.h"

#define REGRESS_TRY_MAX_MS 30000

struct regress_watch;

/* Starts the thread unless the watch is off. *failed is set when it could
 * not be started (NULL is then an error, not "off"). */
struct regress_watch *regress_watch_start(struct app *app, bool *failed);
void regress_watch_stop(struct regress_watch *w);

#endif
