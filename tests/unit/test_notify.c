/* test_notify.c - the pure parts of notifications and silences: --webhook
 * parsing and matching (notify_receiver.h), the Alertmanager and generic
 * webhook bodies (notify_payload.h), the retry backoff (notify.h) and the
 * validation of a POSTed silence (silence.h). The delivery itself is
 * tested end to end in tests/e2e/test_notify.sh. */
#include "harness.h"

#include <stdlib.h>

#include "notify.h"
#include "notify_payload.h"
#include "notify_receiver.h"
#include "silence.h"

static void test_receiver_parse(void)
{
	struct notify_receiver r;
	char err[256];

	CHECK_INT(notify_receiver_parse("http://am:9093", &r, err, sizeof(err)), 0);
	CHECK_STR(r.url, "http://am:9093/api/v2/alerts");
	CHECK(r.format == NOTIFY_ALERTMANAGER);
	CHECK_INT(r.nkinds, 0);
	CHECK(!r.critical_only);
	CHECK(strncmp(r.name, "am-", 3) == 0 && strlen(r.name) == 11);
	CHECK(notify_receiver_matches(&r, "thrash", "warning"));
	notify_receiver_release(&r);

	/* a trailing slash, or the full path, gives the same URL */
	CHECK_INT(notify_receiver_parse("http://am:9093/", &r, err, sizeof(err)), 0);
	CHECK_STR(r.url, "http://am:9093/api/v2/alerts");
	notify_receiver_release(&r);
	CHECK_INT(notify_receiver_parse("https://am.example/api/v2/alerts", &r, err, sizeof(err)), 0);
	CHECK_STR(r.url, "https://am.example/api/v2/alerts");
	notify_receiver_release(&r);

	CHECK_INT(notify_receiver_parse("https://hooks.slack.example/T0/B0/xyz,format=json,"
					"kinds=thrash|swap_imbalance,severity=critical,name=slack-ops",
					&r, err, sizeof(err)), 0);
	CHECK_STR(r.url, "https://hooks.slack.example/T0/B0/xyz");
	CHECK(r.format == NOTIFY_JSON);
	CHECK_STR(r.name, "slack-ops");
	CHECK_INT(r.nkinds, 2);
	CHECK(r.critical_only);
	CHECK(notify_receiver_matches(&r, "thrash", "critical"));
	CHECK(notify_receiver_matches(&r, "swap_imbalance", "critical"));
	CHECK(!notify_receiver_matches(&r, "thrash", "warning"));
	CHECK(!notify_receiver_matches(&r, "writeback_storm", "critical"));
	CHECK(!notify_receiver_matches(&r, "thrash_x", "critical"));
	notify_receiver_release(&r);

	/* the default name hides the URL (a secret for Slack) but is stable */
	char n1[NOTIFY_NAME_MAX + 1];
	CHECK_INT(notify_receiver_parse("http://x/secret,format=json", &r, err, sizeof(err)), 0);
	snprintf(n1, sizeof(n1), "%s", r.name);
	CHECK(strstr(r.name, "secret") == NULL && strncmp(r.name, "json-", 5) == 0);
	notify_receiver_release(&r);
	CHECK_INT(notify_receiver_parse("http://x/secret,format=json", &r, err, sizeof(err)), 0);
	CHECK_STR(r.name, n1);
	notify_receiver_release(&r);

	static const struct { const char *spec, *msg; } bad[] = {
		{ "am:9093", "http:// or https://" },
		{ "ftp://x", "http:// or https://" },
		{ "http://", "http:// or https://" },
		{ "http://x,format=xml", "format: expected alertmanager, json or slack" },
		{ "http://x,severity=page", "severity: expected warning or critical" },
		{ "http://x,kinds=", "kinds: expected kind names" },
		{ "http://x,kinds=thrash||oom", "kinds: expected kind names" },
		{ "http://x,kinds=Thrash", "kinds: \"Thrash\" is not a kind name" },
		{ "http://x,name=a b", "name: expected" },
		{ "http://x,color=red", "unknown option \"color\"" },
		{ "http://x,json", "\"json\": expected KEY=VALUE" },
		{ "http://x\ty", "control character" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK_INT(notify_receiver_parse(bad[i].spec, &r, err, sizeof(err)), -1);
		CHECK_CONTAINS(err, bad[i].msg);
		CHECK_CONTAINS(err, "--webhook: ");
		CHECK(r.url == NULL && r.nkinds == 0);	/* released on error */
	}
}

static struct alert_rec sample_alert(void)
{
	struct alert_rec a;
	memset(&a, 0, sizeof(a));
	a.id = 17;
	a.host = "db-07";
	a.cgroup = "/system.slice/postgresql.service";
	a.kind = "thrash";
	a.severity = "critical";
	a.open = 1;
	a.started_ms = 1764496800000LL;		/* 2025-11-30T10:00:00Z */
	a.opened_ms = 1764496820125LL;
	a.summary = "file refaults 4100/s";
	a.evidence = json_pack("{s:f}", "workingset_refault_file_per_s", 4100.0);
	return a;
}

static void test_am_payload(void)
{
	struct alert_rec a = sample_alert();
	json_t *o = notify_am_alert(&a, 1764497000000LL, "https://vmscope.example/");
	char *s;

	CHECK(o != NULL);
	s = json_dumps(json_object_get(o, "labels"), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(s, "{\"alertname\":\"vmscope_thrash\",\"cgroup\":\"/system.slice/postgresql.service\","
		     "\"host\":\"db-07\",\"kind\":\"thrash\",\"severity\":\"critical\"}");
	free(s);
	CHECK_STR(json_string_value(json_object_get(o, "startsAt")), "2025-11-30T10:00:00Z");
	CHECK_STR(json_string_value(json_object_get(o, "endsAt")), "2025-11-30T10:03:20Z");
	CHECK_STR(json_string_value(json_object_get(o, "generatorURL")),
		  "https://vmscope.example/#/alerts?host=db-07&kind=thrash&cgroup=%2Fsystem.slice%2Fpostgresql.service");
	json_t *ann = json_object_get(o, "annotations");
	CHECK_STR(json_string_value(json_object_get(ann, "summary")), "file refaults 4100/s");
	CHECK_CONTAINS(json_string_value(json_object_get(ann, "description")),
		       "critical thrash on host db-07, cgroup /system.slice/postgresql.service since "
		       "2025-11-30T10:00:00Z (alert 17)");
	CHECK_CONTAINS(json_string_value(json_object_get(ann, "description")),
		       "\"workingset_refault_file_per_s\":4100");
	CHECK_INT(json_object_size(o), 5);
	json_decref(o);

	/* resolved: endsAt is the alert's end, whatever the caller passes */
	a.open = 0;
	a.ended_ms = 1764497400500LL;
	o = notify_am_alert(&a, 1, "http://x");
	CHECK_STR(json_string_value(json_object_get(o, "endsAt")), "2025-11-30T10:10:00.500Z");
	json_decref(o);

	/* host-wide: no cgroup label at all (an empty label means absent) */
	a.cgroup = NULL;
	o = notify_am_alert(&a, 1, "http://x");
	CHECK(json_object_get(json_object_get(o, "labels"), "cgroup") == NULL);
	CHECK_INT(json_object_size(json_object_get(o, "labels")), 4);
	CHECK_STR(json_string_value(json_object_get(o, "generatorURL")), "http://x/#/alerts?host=db-07&kind=thrash");
	CHECK_CONTAINS(json_string_value(json_object_get(json_object_get(o, "annotations"), "description")),
		       "on host db-07 (host-wide)");
	json_decref(o);
	json_decref(a.evidence);
}

static void test_webhook_payload(void)
{
	struct alert_rec a = sample_alert();
	json_t *o = notify_webhook_body(&a, "open", "http://vmscope:8080");
	char *t;

	CHECK(o != NULL);
	CHECK_STR(json_string_value(json_object_get(o, "text")),
		  "[vmscope] FIRING critical thrash on db-07 cgroup /system.slice/postgresql.service: "
		  "file refaults 4100/s");
	CHECK_STR(json_string_value(json_object_get(o, "event")), "open");
	json_t *al = json_object_get(o, "alert");
	CHECK_INT(json_integer_value(json_object_get(al, "id")), 17);
	CHECK_STR(json_string_value(json_object_get(al, "state")), "open");
	CHECK_STR(json_string_value(json_object_get(al, "opened_at")), "2025-11-30T10:00:20.125Z");
	CHECK(json_is_null(json_object_get(al, "ended_at")));
	CHECK(json_is_false(json_object_get(al, "silenced")));
	CHECK(json_real_value(json_object_get(json_object_get(al, "evidence"), "workingset_refault_file_per_s")) == 4100.0);
	CHECK_CONTAINS(json_string_value(json_object_get(o, "generatorURL")), "http://vmscope:8080/#/alerts?host=db-07");
	json_decref(o);

	a.open = 0;
	a.ended_ms = a.started_ms + 3725000;	/* 1 h 2 min 5 s */
	a.cgroup = NULL;
	t = notify_text(&a, "resolve");
	CHECK_STR(t, "[vmscope] RESOLVED critical thrash on db-07 after 1h02m: file refaults 4100/s");
	free(t);
	a.ended_ms = a.started_ms + 95000;
	t = notify_text(&a, "resolve");
	CHECK_STR(t, "[vmscope] RESOLVED critical thrash on db-07 after 1m35s: file refaults 4100/s");
	free(t);
	a.open = 1;
	t = notify_text(&a, "escalate");
	CHECK_STR(t, "[vmscope] ESCALATED critical thrash on db-07: file refaults 4100/s");
	free(t);
	o = notify_webhook_body(&a, "resolve", "http://x");
	CHECK_STR(json_string_value(json_object_get(o, "event")), "resolve");
	json_decref(o);
	json_decref(a.evidence);
}

/* A fleet alert (the kernel-regression watch): no host label but scope
 * and subject, the compare page its evidence links as generatorURL, "on
 * the fleet" in the texts, and "host": "" plus scope and subject in the
 * alert object. */
static void test_fleet_payload(void)
{
	struct alert_rec a;
	memset(&a, 0, sizeof(a));
	a.id = 40;
	a.host = ALERT_FLEET_HOST;
	a.kind = "kernel_regression";
	a.severity = "warning";
	a.open = 1;
	a.subject = "6.1.0-21";
	a.started_ms = a.opened_ms = 1764496800000LL;
	a.summary = "6.1.0-21 vs 6.1.0-18: writeback worse, 7 vs 31 hosts, p = 0.0001";
	a.evidence = json_pack("{s:s,s:{s:s}}", "release", "6.1.0-21", "compare", "page",
			       "#/compare?group_by=kernel&a=6.1.0-18&b=6.1.0-21&mark=immediate_reclaim");
	json_t *o = notify_am_alert(&a, 1764497000000LL, "https://vmscope.example/");
	char *s = json_dumps(json_object_get(o, "labels"), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(s, "{\"alertname\":\"vmscope_kernel_regression\",\"kind\":\"kernel_regression\","
		     "\"scope\":\"fleet\",\"severity\":\"warning\",\"subject\":\"6.1.0-21\"}");
	free(s);
	CHECK_STR(json_string_value(json_object_get(o, "generatorURL")),
		  "https://vmscope.example/#/compare?group_by=kernel&a=6.1.0-18&b=6.1.0-21&mark=immediate_reclaim");
	CHECK_CONTAINS(json_string_value(json_object_get(json_object_get(o, "annotations"), "description")),
		       "warning kernel_regression on the fleet (6.1.0-21) since 2025-11-30T10:00:00Z (alert 40)");
	json_decref(o);
	char *t = notify_text(&a, "open");
	CHECK_STR(t, "[vmscope] FIRING warning kernel_regression on the fleet: 6.1.0-21 vs 6.1.0-18: writeback "
		     "worse, 7 vs 31 hosts, p = 0.0001");
	free(t);
	o = notify_webhook_body(&a, "open", "http://x");
	json_t *al = json_object_get(o, "alert");
	CHECK_STR(json_string_value(json_object_get(al, "host")), "");
	CHECK_STR(json_string_value(json_object_get(al, "scope")), "fleet");
	CHECK_STR(json_string_value(json_object_get(al, "subject")), "6.1.0-21");
	json_decref(o);
	/* without a page in the evidence: the alerts view of the kind */
	json_decref(a.evidence);
	a.evidence = NULL;
	char *u = notify_generator_url(&a, "http://x/");
	CHECK_STR(u, "http://x/#/alerts?kind=kernel_regression");
	free(u);
	/* a host alert has neither scope nor subject */
	struct alert_rec h = sample_alert();
	o = alert_rec_to_json(&h);
	CHECK(json_object_get(o, "scope") == NULL && json_object_get(o, "subject") == NULL);
	json_decref(o);
	json_decref(h.evidence);
}

/* Slack and Mattermost read <...> as markup (<!channel>, <URL|text>): the
 * slack format escapes &, < and > in everything that comes from an alert,
 * the generic format keeps them. */
static void test_slack_payload(void)
{
	struct alert_rec a = sample_alert();
	struct notify_receiver r;
	char err[256];
	char *e = notify_slack_escape("a<b>&c <!channel> &amp;");

	CHECK_STR(e, "a&lt;b&gt;&amp;c &lt;!channel&gt; &amp;amp;");
	free(e);
	CHECK_INT(notify_receiver_parse("https://chat.example/hooks/x,format=slack", &r, err, sizeof(err)), 0);
	CHECK(r.format == NOTIFY_SLACK);
	CHECK_CONTAINS(r.name, "slack-");
	CHECK_STR(r.url, "https://chat.example/hooks/x");
	notify_receiver_release(&r);
	a.cgroup = "/<!here>&x";
	json_t *o = notify_slack_body(&a, "open", "http://vmscope:8080");
	CHECK(o != NULL && json_object_size(o) == 1);
	const char *t = json_string_value(json_object_get(o, "text"));
	CHECK_CONTAINS(t, "[vmscope] FIRING critical thrash on db-07 cgroup /&lt;!here&gt;&amp;x: ");
	CHECK(t && !strstr(t, "<!here>"));
	CHECK_CONTAINS(t, " <http://vmscope:8080/#/alerts?host=db-07&kind=thrash&cgroup=%2F%3C%21here%3E%26x|open in vmscope>");
	json_decref(o);
	o = notify_webhook_body(&a, "open", "http://vmscope:8080");
	CHECK_CONTAINS(json_string_value(json_object_get(o, "text")), "cgroup /<!here>&x: ");
	json_decref(o);
	a.cgroup = "/x\xe2\x80\xae" "gnp.exe";	/* U+202E: the rest would read reversed */
	o = notify_slack_body(&a, "open", "http://vmscope:8080");
	CHECK_CONTAINS(json_string_value(json_object_get(o, "text")), "cgroup /x\\u202Egnp.exe: ");
	json_decref(o);
	json_decref(a.evidence);
}

static void test_backoff(void)
{
	CHECK_INT(notify_backoff_ms(1, 0.0), 500);
	CHECK_INT(notify_backoff_ms(1, 0.999), 999);
	CHECK_INT(notify_backoff_ms(2, 0.0), 1000);
	CHECK_INT(notify_backoff_ms(3, 0.5), 3000);
	/* capped at a minute, jitter within its upper half */
	CHECK_INT(notify_backoff_ms(7, 0.0), 30000);
	CHECK_INT(notify_backoff_ms(30, 0.0), 30000);
	CHECK(notify_backoff_ms(30, 0.99) < NOTIFY_BACKOFF_MAX_MS);
	CHECK(notify_backoff_ms(1000, 2.0) <= NOTIFY_BACKOFF_MAX_MS);
	long prev = 0;
	for (int f = 1; f < 10; f++) {
		long d = notify_backoff_ms(f, 0.0);
		CHECK(d >= prev);
		prev = d;
	}
}

static void test_silence_parse(void)
{
	const int64_t now = 1764496800000LL;
	struct silence_req r;
	json_error_t je;
	char err[256];
	json_t *b;

	b = json_loads("{\"host\":\"db-07\",\"duration_s\":3600,\"comment\":\"kernel upgrade\"}", 0, &je);
	CHECK_INT(silence_parse(b, now, &r, err, sizeof(err)), 0);
	CHECK_STR(r.host, "db-07");
	CHECK(r.cgroup == NULL && r.kind == NULL && r.created_by == NULL);
	CHECK_STR(r.comment, "kernel upgrade");
	CHECK_INT(r.until_ms, now + 3600000);
	json_decref(b);

	b = json_loads("{\"host\":\"db-07\",\"cgroup\":\"/system.slice/x.service\",\"kind\":\"thrash\","
		       "\"until\":\"2025-11-30T12:00:00Z\",\"created_by\":\"alice\"}", 0, &je);
	CHECK_INT(silence_parse(b, now, &r, err, sizeof(err)), 0);
	CHECK_STR(r.cgroup, "/system.slice/x.service");
	CHECK_STR(r.kind, "thrash");
	CHECK_STR(r.created_by, "alice");
	CHECK_INT(r.until_ms, now + 2 * 3600000);
	json_decref(b);

	b = json_loads("{\"host\":\"db-07\",\"cgroup\":null,\"kind\":null,\"until\":1764500400}", 0, &je);
	CHECK_INT(silence_parse(b, now, &r, err, sizeof(err)), 0);
	CHECK(r.cgroup == NULL && r.kind == NULL);
	CHECK_INT(r.until_ms, 1764500400000LL);
	json_decref(b);

	/* no host: every host and the fleet's alerts, of one kind; a subject */
	b = json_loads("{\"kind\":\"kernel_regression\",\"subject\":\"6.1.0-21\",\"duration_s\":60}", 0, &je);
	CHECK_INT(silence_parse(b, now, &r, err, sizeof(err)), 0);
	CHECK(r.host == NULL && r.cgroup == NULL);
	CHECK_STR(r.kind, "kernel_regression");
	CHECK_STR(r.subject, "6.1.0-21");
	json_decref(b);

	static const struct { const char *body, *msg; } bad[] = {
		{ "{\"host\":null,\"duration_s\":60}", "host: required unless kind" },
		{ "{\"kind\":\"thrash\",\"cgroup\":\"/x\",\"duration_s\":60}", "cgroup: needs a host" },
		{ "{\"kind\":\"thrash\",\"subject\":\"\",\"duration_s\":60}", "subject:" },
		{ "{\"kind\":\"thrash\",\"subject\":5,\"duration_s\":60}", "subject: expected a string" },
		{ "[]", "expected a JSON object" },
		{ "{\"duration_s\":60}", "host:" },
		{ "{\"host\":\"a b\",\"duration_s\":60}", "host:" },
		{ "{\"host\":7,\"duration_s\":60}", "host: expected a string" },
		{ "{\"host\":\"h\",\"cgroup\":\"relative\",\"duration_s\":60}", "cgroup:" },
		{ "{\"host\":\"h\",\"cgroup\":\"\",\"duration_s\":60}", "cgroup:" },
		{ "{\"host\":\"h\",\"kind\":\"Thrash!\",\"duration_s\":60}", "kind:" },
		{ "{\"host\":\"h\"}", "until: required" },
		{ "{\"host\":\"h\",\"duration_s\":0}", "duration_s:" },
		{ "{\"host\":\"h\",\"duration_s\":\"60\"}", "duration_s:" },
		{ "{\"host\":\"h\",\"duration_s\":1e9}", "duration_s:" },
		{ "{\"host\":\"h\",\"until\":\"yesterday\"}", "until: expected" },
		{ "{\"host\":\"h\",\"until\":\"2025-11-30T09:00:00Z\"}", "until: must be in the future" },
		{ "{\"host\":\"h\",\"until\":\"2030-01-01T00:00:00Z\"}", "until: at most 366 days" },
		{ "{\"host\":\"h\",\"until\":1764500400,\"duration_s\":60}", "not both" },
		{ "{\"host\":\"h\",\"duration_s\":60,\"comment\":[1]}", "comment: expected a string" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = json_loads(bad[i].body, 0, &je);
		CHECK(b != NULL);
		err[0] = '\0';
		CHECK_INT(silence_parse(b, now, &r, err, sizeof(err)), -1);
		CHECK_CONTAINS(err, bad[i].msg);
		json_decref(b);
	}
}

int main(void)
{
	test_receiver_parse();
	test_am_payload();
	test_webhook_payload();
	test_fleet_payload();
	test_slack_payload();
	test_backoff();
	test_silence_parse();
	return harness_report("test_notify");
}
