/* alert_json.c - contract-shaped alert objects and RFC 3339 times. */
#include "alert_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *alert_time_format(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	int frac = (int)(ms - (int64_t)t * 1000);
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		snprintf(buf, len, "1970-01-01T00:00:00Z");
		return buf;
	}
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (frac)
		snprintf(buf + n, len - n, ".%03dZ", frac);
	else
		snprintf(buf + n, len - n, "Z");
	return buf;
}

static json_t *time_or_null(int64_t ms, int present)
{
	char b[40];
	return present ? json_string(alert_time_format(ms, b, sizeof(b))) : json_null();
}

bool alert_is_fleet(const struct alert_rec *a)
{
	return a->host && strcmp(a->host, ALERT_FLEET_HOST) == 0;
}

json_t *alert_rec_to_json(const struct alert_rec *a)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (json_object_set_new(o, "id", json_integer(a->id)) < 0 ||
	    json_object_set_new(o, "host", json_string(a->host)) < 0 ||
	    json_object_set_new(o, "cgroup", a->cgroup ? json_string(a->cgroup) : json_null()) < 0 ||
	    json_object_set_new(o, "kind", json_string(a->kind)) < 0 ||
	    json_object_set_new(o, "severity", json_string(a->severity)) < 0 ||
	    json_object_set_new(o, "state", json_string(a->open ? "open" : "resolved")) < 0 ||
	    json_object_set_new(o, "started_at", time_or_null(a->started_ms, 1)) < 0 ||
	    json_object_set_new(o, "opened_at", time_or_null(a->opened_ms, 1)) < 0 ||
	    json_object_set_new(o, "ended_at", time_or_null(a->ended_ms, !a->open)) < 0 ||
	    json_object_set_new(o, "summary", json_string(a->summary ? a->summary : "")) < 0 ||
	    json_object_set_new(o, "evidence", a->evidence ? json_incref(a->evidence) : json_object()) < 0 ||
	    json_object_set_new(o, "silenced", json_boolean(a->silenced)) < 0) {
		json_decref(o);
		return NULL;
	}
	if (alert_is_fleet(a) &&
	    (json_object_set_new(o, "scope", json_string("fleet")) < 0 ||
	     json_object_set_new(o, "subject", a->subject ? json_string(a->subject) : json_null()) < 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void alert_rec_release(struct alert_rec *a)
{
	free(a->host);
	free(a->cgroup);
	free(a->kind);
	free(a->severity);
	free(a->summary);
	free(a->subject);
	if (a->evidence)
		json_decref(a->evidence);
	memset(a, 0, sizeof(*a));
}
