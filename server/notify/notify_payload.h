/* notify_payload.h - the bodies a notification posts, built from an alert
 * as the API shows it (alert_json.h):
 *
 * Alertmanager (POST /api/v2/alerts): a JSON array of
 *   {"labels": {"alertname": "vmscope_<kind>", "host", "cgroup" (absent for a
 *    host-wide alert: Alertmanager treats an empty label as absent), "kind",
 *    "severity"; a fleet alert has "scope": "fleet" and "subject" instead of
 *    "host"}, "annotations": {"summary", "description"},
 *    "startsAt": started_at, "endsAt", "generatorURL"}
 * where endsAt is the alert's ended_at once resolved, else a time a few
 * re-send intervals ahead, so Alertmanager keeps an open alert firing while
 * it hears about it and resolves it by itself if the server goes away.
 *
 * Generic webhook: {"text": one line for Slack-compatible receivers,
 *   "event": "open" | "escalate" | "resolve", "alert": the alert object of
 *   GET /api/v1/alerts, "generatorURL"}, as the alert says (for scripts).
 *
 * Slack / Mattermost: {"text": the line with &, < and > escaped as &amp;,
 *   &lt; and &gt; (their markup: a cgroup named "<!channel>" must not page
 *   a channel), then the dashboard link in their <URL|label> form}.
 *
 * Pure functions (no I/O), unit-tested in tests/unit/test_notify.c. Every
 * json_t * returned is a new reference, NULL when out of memory; every
 * char * is malloc'd and the caller frees it. */
#ifndef VMSCOPE_NOTIFY_PAYLOAD_H
#define VMSCOPE_NOTIFY_PAYLOAD_H

#include <jansson.h>
#include <stdint.h>

#include "alert_json.h"

/* The dashboard's alerts view filtered to this alert's host, cgroup and
 * kind, under public_url (no trailing slash needed); for a fleet alert the
 * page its evidence links to (evidence.compare.page), else the alerts view
 * of its kind. */
char *notify_generator_url(const struct alert_rec *a, const char *public_url);

/* One element of the Alertmanager array. ends_ms is used while a is open;
 * a resolved alert ends at its ended_ms. */
json_t *notify_am_alert(const struct alert_rec *a, int64_t ends_ms, const char *public_url);

/* The one-line text: "[vmscope] FIRING critical thrash on db-07 cgroup /x: summary". */
char *notify_text(const struct alert_rec *a, const char *event);

/* text with &, < and > escaped as Slack and Mattermost read them. */
char *notify_slack_escape(const char *text);

/* The Slack / Mattermost body for event. */
json_t *notify_slack_body(const struct alert_rec *a, const char *event, const char *public_url);

/* The generic webhook body for event ("open", "escalate", "resolve"). */
json_t *notify_webhook_body(const struct alert_rec *a, const char *event, const char *public_url);

#endif
