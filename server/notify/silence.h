/* silence.h - silences (schema/040_notify.sql, 092_fleet_alerts.sql): a
 * host, a cgroup, a kind and a subject, each optional (but a host or a
 * kind is required, and a cgroup only with its host), and an end time. While a silence is active (starts_at <= now
 * < until, not ended) the alerts it matches are still recorded and shown
 * (GET /api/v1/alerts says "silenced": true) but not notified (notify.h);
 * when it ends while such an alert is still open, the alert is notified.
 *
 * Matching: host equal, or no host: every host and the fleet's alerts
 * (which have host "", alert_json.h); a silence without cgroup matches the
 * host's every cgroup and its host-wide alerts, one with a cgroup that
 * cgroup only; a silence without kind matches every kind; one with a
 * subject only alerts with that subject (a fleet alert's, e.g. the release
 * of a kernel_regression).
 *
 * Functions work on a connection the caller owns. Errors: -1 with a short
 * message in err; silence_parse's messages name the field. */
#ifndef VMSCOPE_SILENCE_H
#define VMSCOPE_SILENCE_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SILENCE_MAX_S (366LL * 86400)	/* the longest silence */

/* An SQL boolean expression: an active silence matches the row of table or
 * alias t of alerts. */
#define SILENCE_MATCH_SQL(t) \
	"EXISTS (SELECT 1 FROM silences s WHERE s.ended_at IS NULL AND s.starts_at <= now() " \
	"AND s.until > now() AND (s.host IS NULL OR s.host = " t ".host) " \
	"AND (s.cgroup IS NULL OR s.cgroup = " t ".cgroup) AND (s.kind IS NULL OR s.kind = " t ".kind) " \
	"AND (s.subject IS NULL OR s.subject = " t ".subject))"

/* A new silence as POST /api/v1/silences takes it. Strings are borrowed
 * from the parsed JSON body. */
struct silence_req {
	const char *host;	/* NULL: every host and the fleet (kind required then) */
	const char *cgroup;	/* NULL: all */
	const char *kind;	/* NULL: all */
	const char *subject;	/* NULL: all */
	const char *created_by;	/* NULL: the caller fills in who */
	const char *comment;	/* NULL: "" */
	int64_t until_ms;
};

/* Validates a POST body: {"host", "cgroup", "kind", "subject", "comment",
 * "created_by", and "until" (Unix seconds or RFC 3339) or "duration_s"
 * (1 to SILENCE_MAX_S)}, the end in the future; host or kind required, a
 * cgroup only with a host. 0 or -1 with err naming the field. */
int silence_parse(const json_t *body, int64_t now_ms, struct silence_req *r, char *err, size_t errlen);

/* Inserts r; *out = new reference to the silence object
 * {id, host, cgroup, kind, subject, starts_at, until, ended_at,
 * created_at, created_by, comment, active} (host null: every host). */
int silence_create(PGconn *c, const struct silence_req *r, json_t **out, char *err, size_t errlen);

/* *out = new reference to {"silences": [...]}, newest first: the active
 * ones, or with all every one (at most 1000). */
int silence_list(PGconn *c, bool all, json_t **out, char *err, size_t errlen);

/* Ends silence id now. Returns 1 when it was active and is now ended, 0 when
 * there is no such active silence, -1 on error. */
int silence_end(PGconn *c, int64_t id, char *err, size_t errlen);

#endif
