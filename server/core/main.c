/* main.c - vmscope-server: parse the configuration, start the background
 * thread (database, detector tick, retention) and the HTTP server, wait for
 * SIGINT/SIGTERM, then stop everything in reverse order and free it all. */
#include "admit.h"
#include "app.h"
#include "background.h"
#include "cgroup_rollup.h"
#include "config.h"
#include "detect.h"
#include "http.h"
#include "log.h"
#include "ingest.h"
#include "malloc_tune.h"
#include "membudget.h"
#include "metrics.h"
#include "notify.h"
#include "ratelimit.h"
#include "regress_watch.h"
#include "static.h"
#include "store.h"
#include "tokens.h"
#include "version.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct server_config cfg;
	struct app app;
	static struct membudget inflight;	/* outlives every request */
	struct background *bg = NULL;
	struct cgroup_rollup *cgr = NULL;
	struct http_server *srv = NULL;
	struct notify *notifier = NULL;
	struct regress_watch *watch = NULL;
	bool watch_failed = false;
	char err[1024];
	sigset_t sigs;
	int sig = 0, rc = 1;

	if (argc > 1 && strcmp(argv[1], "token") == 0)
		return tokens_cli(argc - 1, argv + 1);
	malloc_tune();	/* before any thread: arenas are made per thread */
	if (config_parse(&cfg, argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "vmscope-server: %s\n(see vmscope-server --help)\n", err);
		return 2;
	}
	if (cfg.help || cfg.version) {
		if (cfg.help)
			config_usage(stdout);
		else
			printf("vmscope-server %s\n", VMSCOPE_VERSION);
		config_release(&cfg);
		return 0;
	}
	if (config_check(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "vmscope-server: %s\n", err);
		config_release(&cfg);
		return 2;
	}
	log_set_level((enum log_level)cfg.log_level);
	/* libpq waits forever for an unreachable host unless told otherwise; a
	 * bound keeps the start-up retries (and a shutdown during one) short.
	 * connect_timeout in the conninfo still wins. */
	setenv("PGCONNECT_TIMEOUT", "10", 0);
	metrics_reset();
	if (cfg.insecure_no_auth) {
		for (int i = 0; i < 3; i++)
			log_warn("*** --insecure-no-auth: ANYONE who can reach %s may post samples; "
				 "for local development only ***", cfg.listen);
	}

	/* every thread created from here on inherits the blocked signals, so
	 * only sigwait below sees them */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	memset(&app, 0, sizeof(app));
	app.cfg = &cfg;
	atomic_init(&app.store, NULL);
	membudget_init(&inflight, cfg.max_inflight);
	membudget_set_lone(&inflight, ingest_lone_bytes(cfg.max_body));
	app.inflight = &inflight;
	app.engine = detect_engine_new();
	app.rl = ratelimit_new(cfg.rate_limit, tokens_nkeys());
	/* the ingest tokens are kept hashed; the plaintext is wiped */
	app.tokens = tokens_new_defs(cfg.tokens, cfg.ntokens, cfg.db);
	for (size_t i = 0; i < cfg.ntokens; i++)
		explicit_bzero(cfg.tokens[i].token, strlen(cfg.tokens[i].token));
	app.admit = admit_new();
	if (!app.engine || !app.rl || !app.tokens || !app.admit) {
		fprintf(stderr, "vmscope-server: out of memory\n");
		goto out;
	}
	bg = background_start(&app);
	if (!bg) {
		fprintf(stderr, "vmscope-server: could not start the background thread\n");
		goto out;
	}
	cgr = cgroup_rollup_start(&app);
	if (!cgr) {
		fprintf(stderr, "vmscope-server: could not start the cgroup rollup thread\n");
		goto out;
	}
	watch = regress_watch_start(&app, &watch_failed);
	if (watch_failed) {
		fprintf(stderr, "vmscope-server: could not start the regression watch thread\n");
		goto out;
	}
	/* without receivers there is no notifier: the outbox's events wait for
	 * a server that has some (several servers on one database) */
	if (cfg.nwebhooks && !(notifier = notify_start(&app, err, sizeof(err)))) {
		fprintf(stderr, "vmscope-server: %s\n", err);
		goto out;
	}
	srv = http_start(&app, err, sizeof(err));
	if (!srv) {
		fprintf(stderr, "vmscope-server: %s\n", err);
		goto out;
	}
	log_info("vmscope-server %s listening on %s%s (web %s, %zu ingest token(s)%s%s)",
		 VMSCOPE_VERSION, cfg.listen, cfg.tls_cert ? " with TLS" : "", cfg.web_dir, cfg.ntokens,
		 cfg.insecure_no_auth ? ", NO AUTH" : "", cfg.read_token ? ", read token" : "");
	const char *missing = static_missing_vendor(cfg.web_dir);
	if (missing)
		log_warn("dashboard: %s/%s is missing, so the host view cannot draw its charts; "
			 "run `make deps` (scripts/web-deps.sh copies uPlot from npm into web/vendor)",
			 cfg.web_dir, missing);
	if (sigwait(&sigs, &sig) != 0)
		sig = 0;
	if (atomic_load(&app.fatal)) {
		fprintf(stderr, "vmscope-server: cannot use the database (see above); stopping\n");
		goto out;
	}
	log_info("got %s, shutting down", sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "?");
	rc = 0;
out:
	http_stop(srv);		/* no handler runs after this */
	notify_stop(notifier);
	regress_watch_stop(watch);
	cgroup_rollup_stop(cgr);
	background_stop(bg);
	store_close(atomic_load(&app.store));
	detect_engine_free(app.engine);
	ratelimit_free(app.rl);
	tokens_free(app.tokens);
	admit_free(app.admit);
	config_release(&cfg);
	if (rc == 0)
		log_info("stopped");
	return rc;
}
