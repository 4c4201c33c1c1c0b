/* test_admit.c - what an ingest request may bring in (server/ingest/admit.c)
 * and its parts: staged metric names (common/dict.c: nothing enters the
 * dictionary before a commit, a released stage leaves nothing), hourly
 * budgets (server/ingest/budget.c: all or nothing, draining with time),
 * token host patterns (server/auth/token_scope.c) and the Host header
 * allow-list (server/http/host_allow.c). No database: the new-host budget,
 * which asks the store, is covered by tests/e2e/test_token_scopes.sh. */
#include "harness.h"

#include "admit.h"
#include "budget.h"
#include "dict.h"
#include "host_allow.h"
#include "sample_body.h"
#include "token_scope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses body with a stage, as ingest.c does. */
static int parse_staged(const char *body, struct dict_stage *st, struct ingest_batch *b)
{
	struct sample_body_err e;

	dict_stage_begin(st);
	int rc = sample_body_parse(body, strlen(body), 32, &b->s, &b->n, &e);
	dict_stage_end();
	return rc;
}

static void test_stage(void)
{
	struct dict_stage st;
	struct ingest_batch b = { 0 };
	uint32_t known = dict_intern("vmstat.st_known", 15);
	uint32_t before = dict_count();

	dict_stage_init(&st, 100);
	CHECK_INT(parse_staged("{\"host\":\"h\",\"ts\":1,\"vmstat\":{\"st_known\":1,\"st_new1\":2,"
			       "\"st_new2\":3}}", &st, &b), 0);
	CHECK_INT(st.n, 2);
	CHECK_INT(dict_count(), before);	/* nothing entered yet */
	CHECK_INT(dict_lookup("vmstat.st_new1"), 0);
	int64_t v;
	CHECK(sset_get(&b.s[0].m, known, &v) && v == 1);
	/* a refused request: released, and nothing of it remains */
	ingest_batch_release(&b);
	dict_stage_release(&st);
	CHECK_INT(dict_count(), before);
	CHECK_INT(dict_lookup("vmstat.st_new2"), 0);

	/* an accepted one: committed, the samples get the real ids */
	dict_stage_init(&st, 100);
	CHECK_INT(parse_staged("[{\"host\":\"h\",\"ts\":1,\"vmstat\":{\"st_new1\":2,\"st_new2\":3}},"
			       "{\"host\":\"h\",\"ts\":2,\"vmstat\":{\"st_new2\":4}}]", &st, &b), 0);
	CHECK_INT(st.n, 2);	/* a name is staged once */
	CHECK_INT(dict_stage_commit(&st), 0);
	for (size_t i = 0; i < b.n; i++)
		CHECK_INT(sample_commit_staged(&b.s[i], &st), 0);
	uint32_t id2 = dict_lookup("vmstat.st_new2");
	CHECK(id2 != 0 && !dict_id_staged(id2));
	CHECK(sset_get(&b.s[1].m, id2, &v) && v == 4);
	CHECK(sset_get(&b.s[0].m, dict_lookup("vmstat.st_new1"), &v) && v == 2);
	CHECK_INT(dict_count(), before + 2);
	ingest_batch_release(&b);
	dict_stage_release(&st);

	/* a full stage refuses the next new name and says so */
	dict_stage_init(&st, 1);
	CHECK_INT(parse_staged("{\"host\":\"h\",\"ts\":1,\"vmstat\":{\"st_a\":1,\"st_b\":2}}", &st, &b), -1);
	CHECK(st.over);
	dict_stage_release(&st);
	CHECK_INT(dict_lookup("vmstat.st_a"), 0);
	/* without a stage names enter at once (replay, tests) */
	CHECK(dict_intern("vmstat.st_direct", 16) != 0);
	CHECK_INT(dict_count(), before + 3);
}

static void test_budget(void)
{
	struct budget *b = budget_new();
	struct budget_ask two[2] = { { "t:a", 3, 10 }, { "n:h1", 3, 5 } };

	CHECK(b != NULL);
	CHECK_INT(budget_take(b, two, 2, 0), -1);
	CHECK_INT(budget_take(b, two, 2, 0), 1);	/* h1 would be at 6 of 5 */
	/* nothing was taken by the refused ask: t:a can still take 7 */
	struct budget_ask seven = { "t:a", 7, 10 };
	CHECK_INT(budget_take(b, &seven, 1, 0), -1);
	CHECK_INT(budget_take(b, &seven, 1, 0), 0);
	/* it drains at 10 per hour: 7 fit again 42 minutes later */
	CHECK_INT(budget_take(b, &seven, 1, 42 * 60 * 1000), -1);
	/* given back */
	budget_give(b, &seven, 1, 42 * 60 * 1000);
	CHECK_INT(budget_take(b, &seven, 1, 42 * 60 * 1000), -1);
	/* unlimited asks are always granted and not recorded */
	struct budget_ask free_ask = { "t:free", 1000000, 0 };
	size_t keys = budget_keys(b);
	CHECK_INT(budget_take(b, &free_ask, 1, 0), -1);
	CHECK_INT(budget_keys(b), keys);
	/* the same key twice in one take counts both */
	struct budget_ask twice[2] = { { "n:h2", 3, 5 }, { "n:h2", 3, 5 } };
	CHECK_INT(budget_take(b, twice, 2, 0), 1);
	/* drained keys are dropped: many keys, an hour later, are swept */
	char keyv[600][16];
	for (int i = 0; i < 600; i++) {
		snprintf(keyv[i], sizeof(keyv[i]), "n:x%d", i);
		struct budget_ask one = { keyv[i], 1, 100 };
		budget_take(b, &one, 1, 0);
	}
	CHECK(budget_keys(b) >= 600);
	for (int i = 0; i < 600; i++) {
		struct budget_ask one = { keyv[i], 1, 100 };
		budget_take(b, &one, 1, 2 * 3600 * 1000);
	}
	CHECK(budget_keys(b) < 700);
	budget_free(b);
}

static void test_admit_names(void)
{
	struct admit *a = admit_new();
	struct admit_limits lim = { 5, 8 };
	struct token_grant g = { .name = "t1" };
	struct dict_stage st;
	struct ingest_batch b = { 0 };
	struct admit_taken took;
	struct admit_refusal r;

	/* host h1 brings 6 names: over its 5 */
	dict_stage_init(&st, 1000);
	CHECK_INT(parse_staged("{\"host\":\"h1\",\"ts\":1,\"vmstat\":{\"ad_a\":1,\"ad_b\":1,\"ad_c\":1,"
			       "\"ad_d\":1,\"ad_e\":1,\"ad_f\":1}}", &st, &b), 0);
	CHECK_INT(admit_batch(a, &lim, NULL, &g, &b, &st, &took, &r), -1);
	CHECK_INT(r.status, 400);
	CHECK_CONTAINS(r.error, "host h1 would bring 6 new metric names");
	CHECK_CONTAINS(r.error, "--max-new-names-per-host");
	CHECK_INT(dict_lookup("vmstat.ad_a"), 0);	/* nothing entered */
	ingest_batch_release(&b);
	dict_stage_release(&st);

	/* two hosts with 4 each: each within 5, the token's 8 just fits */
	dict_stage_init(&st, 1000);
	CHECK_INT(parse_staged("[{\"host\":\"h1\",\"ts\":1,\"vmstat\":{\"ad_a\":1,\"ad_b\":1,\"ad_c\":1,"
			       "\"ad_d\":1}},{\"host\":\"h2\",\"ts\":1,\"vmstat\":{\"ad_e\":1,\"ad_f\":1,"
			       "\"ad_g\":1,\"ad_h\":1,\"ad_a\":5}}]", &st, &b), 0);
	CHECK_INT(admit_batch(a, &lim, NULL, &g, &b, &st, &took, &r), 0);
	uint32_t ida = dict_lookup("vmstat.ad_a");
	int64_t v;
	CHECK(ida != 0 && sset_get(&b.s[1].m, ida, &v) && v == 5);
	ingest_batch_release(&b);
	dict_stage_release(&st);

	/* the token is spent for the hour; known names still pass */
	dict_stage_init(&st, 1000);
	CHECK_INT(parse_staged("{\"host\":\"h3\",\"ts\":1,\"vmstat\":{\"ad_i\":1}}", &st, &b), 0);
	CHECK_INT(admit_batch(a, &lim, NULL, &g, &b, &st, &took, &r), -1);
	CHECK_CONTAINS(r.error, "token t1 would bring 1 new metric names");
	ingest_batch_release(&b);
	dict_stage_release(&st);
	dict_stage_init(&st, 1000);
	CHECK_INT(parse_staged("{\"host\":\"h3\",\"ts\":1,\"vmstat\":{\"ad_a\":1,\"ad_h\":2}}", &st, &b), 0);
	CHECK_INT(admit_batch(a, &lim, NULL, &g, &b, &st, &took, &r), 0);
	ingest_batch_release(&b);
	dict_stage_release(&st);
	/* another token has its own budget */
	struct token_grant g2 = { .name = "t2" };
	dict_stage_init(&st, 1000);
	CHECK_INT(parse_staged("{\"host\":\"h4\",\"ts\":1,\"vmstat\":{\"ad_i\":1}}", &st, &b), 0);
	CHECK_INT(admit_batch(a, &lim, NULL, &g2, &b, &st, &took, &r), 0);
	ingest_batch_release(&b);
	dict_stage_release(&st);

	/* a scoped token: 403 naming the host, whatever the names */
	struct token_grant web = { .name = "web" };
	snprintf(web.hosts, sizeof(web.hosts), "web-*,db-0?");
	dict_stage_init(&st, 1000);
	CHECK_INT(parse_staged("[{\"host\":\"web-1\",\"ts\":1,\"vmstat\":{}},{\"host\":\"db-10\",\"ts\":1,"
			       "\"vmstat\":{\"ad_j\":1}}]", &st, &b), 0);
	CHECK_INT(admit_batch(a, &lim, NULL, &web, &b, &st, &took, &r), -1);
	CHECK_INT(r.status, 403);
	CHECK_CONTAINS(r.error, "sample 1: token web may not post for host db-10");
	CHECK_INT(dict_lookup("vmstat.ad_j"), 0);
	ingest_batch_release(&b);
	dict_stage_release(&st);
	admit_free(a);
}

static void test_patterns(void)
{
	CHECK(token_hosts_valid("web-*"));
	CHECK(token_hosts_valid("web-*,db-0?,x"));
	CHECK(!token_hosts_valid(""));
	CHECK(!token_hosts_valid("web-*,"));
	CHECK(!token_hosts_valid("web/*"));
	CHECK(!token_hosts_valid("a b"));
	CHECK(!token_hosts_valid("[ab]"));
	CHECK(token_hosts_match("web-*", "web-01"));
	CHECK(!token_hosts_match("web-*", "db-01"));
	CHECK(!token_hosts_match("web-*", "xweb-01"));
	CHECK(token_hosts_match("web-*,db-0?", "db-07"));
	CHECK(!token_hosts_match("web-*,db-0?", "db-070"));
	CHECK(token_hosts_match("", "anything"));
	CHECK(token_hosts_match(NULL, "anything"));
	CHECK(token_name_valid("agent-01"));
	CHECK(!token_name_valid("agent 01"));
}

static void test_host_allow(void)
{
	struct host_allow lo, lo_extra, any, some;

	host_allow_init(&lo, true, NULL);
	host_allow_init(&lo_extra, true, "vmscope.example,*.lab");
	host_allow_init(&any, false, NULL);
	host_allow_init(&some, false, "vmscope.example");
	CHECK(host_allow_ok(&lo, "127.0.0.1:8080"));
	CHECK(host_allow_ok(&lo, "127.0.0.2"));
	CHECK(host_allow_ok(&lo, "localhost:8080"));
	CHECK(host_allow_ok(&lo, "LocalHost"));
	CHECK(host_allow_ok(&lo, "app.localhost:1"));
	CHECK(host_allow_ok(&lo, "[::1]:8080"));
	CHECK(host_allow_ok(&lo, NULL));	/* HTTP/1.0 without Host */
	CHECK(!host_allow_ok(&lo, "rebind.attacker.example:8080"));
	CHECK(!host_allow_ok(&lo, "128.0.0.1"));
	CHECK(!host_allow_ok(&lo, "localhost.attacker.example"));
	CHECK(!host_allow_ok(&lo, "::1"));	/* v6 without brackets is malformed */
	CHECK(!host_allow_ok(&lo, ""));
	CHECK(host_allow_ok(&lo, "localhost:"));	/* an empty port is allowed */
	CHECK(!host_allow_ok(&lo, "127.0.0.1:80@evil.example"));	/* the port is digits only */
	CHECK(!host_allow_ok(&lo, "localhost:8080x"));
	CHECK(!host_allow_ok(&lo, "localhost:123456"));
	CHECK(!host_allow_ok(&lo, "[::1]x"));
	CHECK(!host_allow_ok(&lo, "[::1]:80:80"));
	CHECK(host_allow_ok(&lo_extra, "VMSCOPE.example:443"));
	CHECK(host_allow_ok(&lo_extra, "a.lab"));
	CHECK(host_allow_ok(&lo_extra, "localhost"));
	CHECK(!host_allow_ok(&lo_extra, "other.example"));
	CHECK(host_allow_ok(&any, "whatever.example"));
	CHECK(host_allow_ok(&some, "vmscope.example"));
	CHECK(!host_allow_ok(&some, "10.0.0.5:8080"));
	CHECK(!host_allow_ok(&some, "localhost"));
}

int main(void)
{
	test_stage();
	test_budget();
	test_admit_names();
	test_patterns();
	test_host_allow();
	return harness_report("test_admit");
}
