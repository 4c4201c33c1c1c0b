/* silence.c - silences in PostgreSQL (see silence.h). */
#include "silence.h"
#include "pgfail.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert_json.h"
#include "names.h"
#include "timeparse.h"

#define MS_FROM_TS(col) "(floor(extract(epoch from " col ") * 1000))::bigint"
#define SILENCE_COLS "id, host, cgroup, kind, subject, " MS_FROM_TS("starts_at") ", " MS_FROM_TS("until") ", " \
	MS_FROM_TS("ended_at") ", " MS_FROM_TS("created_at") ", created_by, comment, " \
	"(ended_at IS NULL AND starts_at <= now() AND until > now())"

/* An optional string member: 0 absent or null (*out NULL), 1 present, -1
 * wrong type or length. */
static int opt_string(const json_t *body, const char *key, size_t maxlen, const char **out,
		      char *err, size_t errlen)
{
	const json_t *v = json_object_get(body, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_length(v) > maxlen ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		snprintf(err, errlen, "%s: expected a string of at most %zu bytes", key, maxlen);
		return -1;
	}
	*out = json_string_value(v);
	return 1;
}

int silence_parse(const json_t *body, int64_t now_ms, struct silence_req *r, char *err, size_t errlen)
{
	const json_t *until = json_object_get(body, "until");
	const json_t *dur = json_object_get(body, "duration_s");

	memset(r, 0, sizeof(*r));
	if (!json_is_object(body)) {
		snprintf(err, errlen, "expected a JSON object");
		return -1;
	}
	if (opt_string(body, "host", 253, &r->host, err, errlen) < 0)
		return -1;
	if (r->host && !name_host_valid(r->host, strlen(r->host))) {
		snprintf(err, errlen, "host: expected a host name (1 to 253 of A-Za-z0-9._-), or null for "
			 "every host and the fleet");
		return -1;
	}
	if (opt_string(body, "cgroup", 4096, &r->cgroup, err, errlen) < 0)
		return -1;
	if (r->cgroup && (r->cgroup[0] == '\0' || !name_cgroup_path_valid(r->cgroup, strlen(r->cgroup)))) {
		snprintf(err, errlen, "cgroup: expected a cgroup path starting with / (or null for all)");
		return -1;
	}
	if (opt_string(body, "kind", 64, &r->kind, err, errlen) < 0)
		return -1;
	if (r->kind) {
		bool ok = r->kind[0] != '\0';
		for (const char *p = r->kind; *p; p++)
			ok = ok && ((*p >= 'a' && *p <= 'z') || *p == '_');
		if (!ok) {
			snprintf(err, errlen, "kind: expected an alert kind such as thrash (or null for all)");
			return -1;
		}
	}
	if (!r->host && !r->kind) {
		snprintf(err, errlen, "host: required unless kind is given (a silence of everything is refused)");
		return -1;
	}
	if (r->cgroup && !r->host) {
		snprintf(err, errlen, "cgroup: needs a host");
		return -1;
	}
	if (opt_string(body, "subject", 256, &r->subject, err, errlen) < 0)
		return -1;
	if (r->subject && !r->subject[0]) {
		snprintf(err, errlen, "subject: expected a non-empty string (or null for all)");
		return -1;
	}
	if (opt_string(body, "comment", 2000, &r->comment, err, errlen) < 0 ||
	    opt_string(body, "created_by", 200, &r->created_by, err, errlen) < 0)
		return -1;
	if (until && !json_is_null(until) && dur && !json_is_null(dur)) {
		snprintf(err, errlen, "until: give until or duration_s, not both");
		return -1;
	}
	if (dur && !json_is_null(dur)) {
		double d = json_is_number(dur) ? json_number_value(dur) : -1;
		if (!(d >= 1 && d <= (double)SILENCE_MAX_S)) {
			snprintf(err, errlen, "duration_s: expected seconds from 1 to %lld",
				 (long long)SILENCE_MAX_S);
			return -1;
		}
		r->until_ms = now_ms + (int64_t)(d * 1000);
		return 0;
	}
	if (!until || json_is_null(until)) {
		snprintf(err, errlen, "until: required (or duration_s)");
		return -1;
	}
	if (json_is_number(until)) {
		double s = json_number_value(until);
		if (!(s > 0 && s < 253402300800.0)) {
			snprintf(err, errlen, "until: expected Unix seconds or RFC 3339");
			return -1;
		}
		r->until_ms = (int64_t)(s * 1000);
	} else if (!json_is_string(until) || time_parse(json_string_value(until), &r->until_ms) < 0) {
		snprintf(err, errlen, "until: expected Unix seconds or RFC 3339");
		return -1;
	}
	if (r->until_ms <= now_ms) {
		snprintf(err, errlen, "until: must be in the future");
		return -1;
	}
	if (r->until_ms - now_ms > SILENCE_MAX_S * 1000) {
		snprintf(err, errlen, "until: at most %lld days ahead", (long long)(SILENCE_MAX_S / 86400));
		return -1;
	}
	return 0;
}

static json_t *time_or_null(PGresult *r, int row, int col)
{
	char b[40];
	if (PQgetisnull(r, row, col))
		return json_null();
	return json_string(alert_time_format(strtoll(PQgetvalue(r, row, col), NULL, 10), b, sizeof(b)));
}

static json_t *str_or_null(PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? json_null() : json_string(PQgetvalue(r, row, col));
}

/* One row of SILENCE_COLS as the API object; NULL when out of memory. */
static json_t *row_json(PGresult *r, int i)
{
	return json_pack("{s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:s,s:s,s:b}",
			 "id", (json_int_t)strtoll(PQgetvalue(r, i, 0), NULL, 10),
			 "host", str_or_null(r, i, 1),
			 "cgroup", str_or_null(r, i, 2),
			 "kind", str_or_null(r, i, 3),
			 "subject", str_or_null(r, i, 4),
			 "starts_at", time_or_null(r, i, 5),
			 "until", time_or_null(r, i, 6),
			 "ended_at", time_or_null(r, i, 7),
			 "created_at", time_or_null(r, i, 8),
			 "created_by", PQgetvalue(r, i, 9),
			 "comment", PQgetvalue(r, i, 10),
			 "active", PQgetvalue(r, i, 11)[0] == 't');
}

int silence_create(PGconn *c, const struct silence_req *q, json_t **out, char *err, size_t errlen)
{
	char until[24];

	*out = NULL;
	snprintf(until, sizeof(until), "%" PRId64, q->until_ms);
	const char *v[7] = { q->host, q->cgroup, q->kind, until, q->created_by ? q->created_by : "",
			     q->comment ? q->comment : "", q->subject };
	PGresult *r = PQexecParams(c,
		"INSERT INTO silences (host, cgroup, kind, until, created_by, comment, subject) VALUES ($1, $2, $3, "
		"'epoch'::timestamptz + $4::bigint * interval '1 millisecond', $5, $6, $7) RETURNING " SILENCE_COLS,
		7, NULL, v, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		return pg_fail(err, errlen, "could not create silence", c, r);
	*out = row_json(r, 0);
	PQclear(r);
	if (!*out) {
		snprintf(err, errlen, "could not create silence: out of memory");
		return -1;
	}
	return 0;
}

int silence_list(PGconn *c, bool all, json_t **out, char *err, size_t errlen)
{
	const char *v[1] = { all ? "t" : "f" };
	json_t *arr;

	*out = NULL;
	PGresult *r = PQexecParams(c,
		"SELECT " SILENCE_COLS " FROM silences WHERE $1::boolean OR (ended_at IS NULL AND until > now()) "
		"ORDER BY id DESC LIMIT 1000", 1, NULL, v, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		return pg_fail(err, errlen, "could not list silences", c, r);
	arr = json_array();
	for (int i = 0; arr && i < PQntuples(r); i++) {
		if (json_array_append_new(arr, row_json(r, i)) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	PQclear(r);
	if (arr)
		*out = json_pack("{s:o}", "silences", arr);
	if (!*out) {
		snprintf(err, errlen, "could not list silences: out of memory");
		return -1;
	}
	return 0;
}

int silence_end(PGconn *c, int64_t id, char *err, size_t errlen)
{
	char ids[24];

	snprintf(ids, sizeof(ids), "%" PRId64, id);
	const char *v[1] = { ids };
	PGresult *r = PQexecParams(c,
		"UPDATE silences SET ended_at = now() WHERE id = $1 AND ended_at IS NULL AND until > now()",
		1, NULL, v, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		return pg_fail(err, errlen, "could not end silence", c, r);
	int n = atoi(PQcmdTuples(r));
	PQclear(r);
	/* wake the notifier: an alert the silence held may be notified now */
	PQclear(PQexec(c, "SELECT pg_notify('vmscope_notify', '')"));
	return n > 0;
}
