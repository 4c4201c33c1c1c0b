/* notify_payload.c - notification bodies (see notify_payload.h). */
#include "notify_payload.h"
#include "urlenc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

/* A fleet alert's page: the dashboard link its evidence carries
 * (evidence.compare.page, a "#/..." hash of the kernel-regression watch),
 * else the alerts view of its kind. */
static char *fleet_url(const struct alert_rec *a, const char *public_url)
{
	const char *page = json_string_value(json_object_get(json_object_get(a->evidence, "compare"), "page"));
	size_t n = strlen(public_url);
	char *u = NULL;

	while (n && public_url[n - 1] == '/')
		n--;
	if (page && page[0] == '#' && page[1] == '/') {
		if (asprintf(&u, "%.*s/%s", (int)n, public_url, page) < 0)
			u = NULL;
		return u;
	}
	size_t cap = n + 3 * strlen(a->kind) + 32;
	if (!(u = malloc(cap)))
		return NULL;
	size_t at = (size_t)snprintf(u, cap, "%.*s/#/alerts?kind=", (int)n, public_url);
	urlenc_append(u, cap, at, a->kind);
	return u;
}

char *notify_generator_url(const struct alert_rec *a, const char *public_url)
{
	if (alert_is_fleet(a))
		return fleet_url(a, public_url);
	size_t cap = strlen(public_url) + 3 * (strlen(a->host) + strlen(a->kind) +
					      (a->cgroup ? strlen(a->cgroup) : 0)) + 64;
	char *u = malloc(cap);
	size_t n;

	if (!u)
		return NULL;
	n = strlen(public_url);
	while (n && public_url[n - 1] == '/')
		n--;
	memcpy(u, public_url, n);
	n += (size_t)snprintf(u + n, cap - n, "/#/alerts?host=");
	n = urlenc_append(u, cap, n, a->host);
	n += (size_t)snprintf(u + n, cap - n, "&kind=");
	n = urlenc_append(u, cap, n, a->kind);
	if (a->cgroup) {
		n += (size_t)snprintf(u + n, cap - n, "&cgroup=");
		urlenc_append(u, cap, n, a->cgroup);
	}
	return u;
}

static char *description(const struct alert_rec *a)
{
	char since[40], *ev = NULL, *d = NULL;

	alert_time_format(a->started_ms, since, sizeof(since));
	if (a->evidence)
		ev = json_dumps(a->evidence, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
	if (alert_is_fleet(a)) {
		if (asprintf(&d, "%s %s on the fleet%s%s%s since %s (alert %lld). Evidence: %s", a->severity,
			     a->kind, a->subject ? " (" : "", a->subject ? a->subject : "", a->subject ? ")" : "",
			     since, (long long)a->id, ev ? ev : "{}") < 0)
			d = NULL;
		free(ev);
		return d;
	}
	if (asprintf(&d, "%s %s on host %s%s%s since %s (alert %lld). Evidence: %s", a->severity,
		     a->kind, a->host, a->cgroup ? ", cgroup " : " (host-wide)",
		     a->cgroup ? a->cgroup : "", since, (long long)a->id, ev ? ev : "{}") < 0)
		d = NULL;
	free(ev);
	return d;
}

json_t *notify_am_alert(const struct alert_rec *a, int64_t ends_ms, const char *public_url)
{
	char starts[40], ends[40], name[128];
	char *desc = description(a);
	char *gen = notify_generator_url(a, public_url);
	json_t *labels = NULL, *o = NULL;

	if (!desc || !gen)
		goto out;
	snprintf(name, sizeof(name), "vmscope_%s", a->kind);
	/* a fleet alert has no host: scope and subject tell such alerts apart */
	labels = json_pack("{s:s,s:s,s:s,s:s}", "alertname", name, alert_is_fleet(a) ? "scope" : "host",
			   alert_is_fleet(a) ? "fleet" : a->host, "kind", a->kind, "severity", a->severity);
	if (!labels)
		goto out;
	if (alert_is_fleet(a) && a->subject && json_object_set_new(labels, "subject", json_string(a->subject)) < 0)
		goto out;
	if (a->cgroup && json_object_set_new(labels, "cgroup", json_string(a->cgroup)) < 0)
		goto out;
	alert_time_format(a->started_ms, starts, sizeof(starts));
	alert_time_format(a->open ? ends_ms : a->ended_ms, ends, sizeof(ends));
	o = json_pack("{s:O,s:{s:s,s:s},s:s,s:s,s:s}", "labels", labels,
		      "annotations", "summary", a->summary ? a->summary : "", "description", desc,
		      "startsAt", starts, "endsAt", ends, "generatorURL", gen);
out:
	json_decref(labels);
	free(desc);
	free(gen);
	return o;
}

char *notify_text(const struct alert_rec *a, const char *event)
{
	char *t = NULL, dur[64] = "";
	const char *what = "FIRING";

	if (strcmp(event, "resolve") == 0) {
		int64_t s = (a->ended_ms - a->started_ms) / 1000;
		what = "RESOLVED";
		if (s >= 3600)
			snprintf(dur, sizeof(dur), " after %lldh%02lldm", (long long)(s / 3600),
				 (long long)(s % 3600 / 60));
		else
			snprintf(dur, sizeof(dur), " after %lldm%02llds", (long long)(s / 60),
				 (long long)(s % 60));
	} else if (strcmp(event, "escalate") == 0) {
		what = "ESCALATED";
	}
	if (asprintf(&t, "[vmscope] %s %s %s on %s%s%s%s: %s", what, a->severity, a->kind,
		     alert_is_fleet(a) ? "the fleet" : a->host,
		     a->cgroup ? " cgroup " : "", a->cgroup ? a->cgroup : "", dur,
		     a->summary ? a->summary : "") < 0)
		return NULL;
	return t;
}

json_t *notify_webhook_body(const struct alert_rec *a, const char *event, const char *public_url)
{
	char *text = notify_text(a, event);
	char *gen = notify_generator_url(a, public_url);
	json_t *alert = alert_rec_to_json(a);
	json_t *o = NULL;

	if (text && gen && alert)
		o = json_pack("{s:s,s:s,s:O,s:s}", "text", text, "event", event, "alert", alert,
			      "generatorURL", gen);
	free(text);
	free(gen);
	json_decref(alert);
	return o;
}

char *notify_slack_escape(const char *text)
{
	size_t n = 0;

	for (const char *p = text; *p; p++)
		n += *p == '&' ? 5 : (*p == '<' || *p == '>') ? 4 : 1;
	char *out = malloc(n + 1), *w = out;
	if (!out)
		return NULL;
	for (const char *p = text; *p; p++) {
		const char *rep = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : NULL;
		if (rep) {
			memcpy(w, rep, strlen(rep));
			w += strlen(rep);
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
	return out;
}

json_t *notify_slack_body(const struct alert_rec *a, const char *event, const char *public_url)
{
	char *raw = notify_text(a, event);
	char *text = raw ? name_visible(raw) : NULL;	/* bidi controls in a cgroup path written out */
	char *esc = text ? notify_slack_escape(text) : NULL;
	char *gen = notify_generator_url(a, public_url);
	char *line = NULL;
	json_t *o = NULL;

	/* the link is ours (percent-encoded, no < > |): Slack's own link form */
	if (esc && gen && asprintf(&line, "%s <%s|open in vmscope>", esc, gen) >= 0)
		o = json_pack("{s:s}", "text", line);
	free(raw);
	free(text);
	free(esc);
	free(gen);
	free(line);
	return o;
}
