/* notify_receiver.h - one notification receiver as given by --webhook:
 *
 *   URL[,format=alertmanager|json|slack][,kinds=K1|K2...][,severity=warning|critical][,name=NAME]
 *
 * format alertmanager (the default) posts to URL/api/v2/alerts (unless URL
 * already ends so) the Alertmanager v2 alert array; json posts the generic
 * webhook body (a one-line "text" plus the structured alert, unescaped, for
 * scripts) to URL itself; slack posts {"text"} for a Slack or Mattermost
 * incoming webhook, with <, > and & escaped so that names and summaries
 * cannot carry their markup (mentions, links). kinds limits the alert kinds sent (default: all); severity is the
 * least severity sent (warning: all, the default; critical: critical only).
 * name identifies the receiver in logs and in the outbox's delivery record
 * (default: "am-", "json-" or "slack-" and 8 hex digits of the URL's SHA-256), so the
 * URL, which may hold a secret (Slack), is never logged.
 *
 * Ownership: notify_receiver_parse fills a struct whose strings it owns;
 * notify_receiver_release frees them (safe on a zeroed struct). Pure: no
 * I/O, unit-tested in tests/unit/test_notify.c. */
#ifndef VMSCOPE_NOTIFY_RECEIVER_H
#define VMSCOPE_NOTIFY_RECEIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "names.h"

#define NOTIFY_MAX_RECEIVERS 32
#define NOTIFY_MAX_KINDS 16
#define NOTIFY_NAME_MAX NAME_ID_MAXLEN

enum notify_format { NOTIFY_ALERTMANAGER, NOTIFY_JSON, NOTIFY_SLACK };

struct notify_receiver {
	char *url;			/* owned: where the POST goes (…/api/v2/alerts added) */
	char name[NOTIFY_NAME_MAX + 1];
	enum notify_format format;
	char *kinds[NOTIFY_MAX_KINDS];	/* owned; none: every kind */
	size_t nkinds;
	bool critical_only;
};

/* Parses spec into *r. Returns 0, or -1 with a message naming the bad part
 * in err ("--webhook: severity: expected warning or critical"); *r is then
 * released. */
int notify_receiver_parse(const char *spec, struct notify_receiver *r, char *err, size_t errlen);

void notify_receiver_release(struct notify_receiver *r);

/* True when an alert of kind and severity goes to r. */
bool notify_receiver_matches(const struct notify_receiver *r, const char *kind, const char *severity);

#endif
