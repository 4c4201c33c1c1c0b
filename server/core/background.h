/* background.h - the server's one background thread: opens the store
 * (retrying every 2 s while the database is down, so the server answers 503
 * meanwhile and recovers by itself), then every 10 s (liveness.h) runs the
 * detectors' time-based tick and every hour drops expired raw partitions.
 *
 * Ownership: background_start returns a handle; background_stop wakes the
 * thread, joins it and frees the handle (the store stays in app for the
 * caller to close after the HTTP server stopped). */
#ifndef VMSCOPE_BACKGROUND_H
#define VMSCOPE_BACKGROUND_H

#include "app.h"

#define BG_RETRY_MS 2000
#define BG_EXPIRE_MS (3600 * 1000)

struct background;

/* Starts the thread; NULL when it could not be created. */
struct background *background_start(struct app *app);
void background_stop(struct background *bg);

#endif
