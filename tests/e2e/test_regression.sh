#!/usr/bin/env bash
# test_regression.sh - the kernel-regression watch (docs/detectors.md
# "Kernel regressions") on simulated rollouts of recorded traces, each in a
# database of its own, replayed through the real server (the watch every
# second over a 15-minute window):
# - 20 hosts on release A replaying the healthy recordings (idle, a
#   streaming read, busy CPUs) and 6 on B replaying the writeback storm:
#   exactly one kernel_regression alert, naming B, A and the writeback
#   figures, with its evidence; notified, silenced by kind and subject (no
#   host), resolved when B's hosts leave the fleet; the baseline pinned
#   and unpinned (admin token), a pin on a release no host runs passed
#   over; B rolled out to the most host-hours, passed over as the
#   baseline while its alert is open;
# - 6 hosts on B replaying healthy recordings, rebooted into B from a
#   writeback storm on A in the same rollup bucket: tested, no alert; B's
#   open alert an earlier run left, last confirmed more than a window ago,
#   resolves;
# - 1 storm host among 6 on B: tested, no alert; B's open alert an earlier
#   run left, confirmed less than a window ago, stays open;
# - A on 17 "web" hosts (healthy) and 3 "db" hosts (the storm), B on 6
#   "db" hosts (the storm): with --regression-stratify role no alert (the
#   difference is only the role's); the same data without it: an alert
#   whose evidence says the releases' hosts differ by role.
# The "none" cases check that the release was tested (the run's report),
# so a watch that never ran cannot pass them.
. "$(dirname "$0")/_lib.sh"
CORPUS="$E2E_ROOT/tests/corpus"
HOSTS="$(dirname "$0")/_compare_hosts.py"
export A=6.1.0-18-amd64 B=6.1.0-21-amd64
ADMIN=admin-token-$RANDOM$RANDOM
printf '%s\n' "$ADMIN" >"$E2E_DIR/admin.token"
WATCH=(--regression-every 1 --regression-window 900 --admin-token-file "$E2E_DIR/admin.token")

# rollouts: the batches of each rollout in $E2E_DIR/NAME, from lines
# "NAME RECORDING PREFIX HOSTS KERNEL ROLE [END]" on stdin: HOSTS copies of
# tests/corpus/real-RECORDING, host i replaying 30 samples from sample i on
# (_compare_hosts.py), ending END seconds ago (default 3). Lines with an
# END of their own write to NAME/pre, which is posted first: the same hosts
# earlier, on another kernel (a reboot into the new one). A line "align
# NAME S" moves the rollout NAME's clock back (by less than 5 minutes) so
# that its samples ending 3 s "ago" end S seconds after a 5-minute rollup
# boundary.
rollouts() {
	python3 - "$E2E_ROOT/tests/e2e" "$CORPUS" "$E2E_DIR" <<PY
import os, sys, time
sys.path.insert(0, sys.argv[1])
from _compare_hosts import load, write_copies
traces, clock, now = {}, {}, time.time()
lines = [l.split() for l in """$(cat)""".split("\n") if l.strip()]
for l in lines:
    if l[0] == "align":
        s = float(l[2])
        clock[l[1]] = (now - 3 - s) // 300 * 300 + s + 3
for l in lines:
    if l[0] == "align":
        continue
    name, rec, prefix, n, kernel, role, *end = l
    if rec not in traces:
        traces[rec] = load("%s/real-%s.jsonl.gz" % (sys.argv[2], rec))
    dst = "%s/%s%s" % (sys.argv[3], name, "/pre" if end else "")
    os.makedirs(dst, exist_ok=True)
    write_copies(traces[rec], prefix, int(n), kernel, role, 1, 30, float(end[0]) if end else 3, dst,
                 now=clock.get(name, now))
PY
}

# scenario NAME: a fresh database for the next server (E2E_DB)
scenario() {
	e2e_db_create "vmscope_e2e_regr_$1_$$"
	E2E_DB=$(e2e_conninfo "vmscope_e2e_regr_$1_$$")
}

# lock_hold / lock_release: another session holds the watch's advisory
# lock (regress_store.h) meanwhile, as a server running the watch would
LOCK_KEY=$((0x766d737265677273))
lock_hold() {
	coproc LOCKER { psql "$E2E_DB" -qtA 2>&1; }
	echo "SELECT pg_advisory_lock($LOCK_KEY);" >&"${LOCKER[1]}"
	local line
	read -r -t 20 line <&"${LOCKER[0]}"
	check_eq "$line" "" "another session holds the watch's lock"
}
lock_release() {
	echo "SELECT pg_advisory_unlock($LOCK_KEY);" >&"${LOCKER[1]}"
	echo '\q' >&"${LOCKER[1]}"
	wait "$LOCKER_PID" 2>/dev/null
}

# post_rollout NAME: its batches, NAME/pre first, three at a time (a
# host's samples are in order within its files), all 202; sets POSTED
# (Unix seconds after)
post_rollout() {
	: >"$E2E_DIR/codes"
	local d
	for d in "$E2E_DIR/$1/pre" "$E2E_DIR/$1"; do
		[ -d "$d" ] || continue
		ls "$d"/*.json | xargs -P 3 -I{} curl -s -o /dev/null -w '%{http_code}\n' \
			-H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Type: application/json' \
			--data-binary @{} "$E2E_URL/api/v1/samples" >>"$E2E_DIR/codes"
	done
	check_eq "$(sort -u "$E2E_DIR/codes" | tr -d '\n')" 202 "every batch of the $1 rollout stored"
	POSTED=$(date +%s.%N)
}

# watch_after_post NAME [SERVER ARGS]: a server with the watch on, the
# rollout posted while another session holds the watch's lock (no run may
# happen then: the watch sees all of the rollout or none), then the lock
# given back and the first run waited for. BEFORE_RUN (a command), when
# set, runs just before the lock is given back.
watch_after_post() {
	local name=$1
	shift
	lock_hold
	e2e_server_start "${WATCH[@]}" "$@"
	post_rollout "$name"
	[ -z "${BEFORE_RUN:-}" ] || $BEFORE_RUN
	sleep 1.5
	req GET /api/v1/regression
	check_jq '.last_run == null' "no run while another session holds the lock"
	lock_release
	wait_run
}

# wait_run: until a run that started after POSTED has finished; BODY is
# GET /api/v1/regression then
wait_run() {
	local i
	for i in $(seq 150); do
		req GET /api/v1/regression
		if jq -e --argjson t "$POSTED" '.last_run.run_ts > $t' <<<"$BODY" >/dev/null 2>&1; then
			ok
			return 0
		fi
		sleep 0.2
	done
	bad "no run of the watch after the post"
	return 1
}

# the release's entry in the last run's report
release() { jq -c --arg r "$1" '.last_run.releases[] | select(.release == $r)' <<<"$BODY"; }

python3 "$E2E_ROOT/tests/e2e/_receiver.py" "$E2E_DIR/recv.port" "$E2E_DIR/received.jsonl" \
	"$("$E2E_ROOT/scripts/freeport.sh")" &
E2E_PIDS+=("$!")
touch "$E2E_DIR/received.jsonl"
# A's 20 healthy hosts in the first three rollouts
healthy_a() { printf '%s idle ai 7 %s web\n%s streamread as 7 %s web\n%s cpubusy ac 6 %s web\n' "$1" "$A" "$1" "$A" "$1" "$A"; }
{
	healthy_a storm
	echo "storm writeback bw 6 $B web"
	echo "stormmore writeback bx 20 $B web"
	healthy_a healthy
	# B's healthy hosts ran A before, in a writeback storm (58 s) until a
	# few seconds before their first sample on B (58 s, 29 s), a 5-minute
	# rollup boundary 20 s before their newest: the bucket before it holds
	# the storm and the reboot into B, only the one after is B's alone
	echo "align healthy 20"
	echo "healthy writeback bi 2 $A web 65"
	echo "healthy writeback bs 2 $A web 65"
	echo "healthy writeback bc 2 $A web 65"
	echo "healthy idle bi 2 $B web"
	echo "healthy streamread bs 2 $B web"
	echo "healthy cpubusy bc 2 $B web"
	healthy_a onebad
	echo "onebad idle bi 2 $B web"
	echo "onebad streamread bs 2 $B web"
	echo "onebad cpubusy bc 1 $B web"
	echo "onebad writeback bw 1 $B web"
	echo "roles idle ai 6 $A web"
	echo "roles streamread as 6 $A web"
	echo "roles cpubusy ac 5 $A web"
	echo "roles writeback aw 3 $A db"
	echo "roles writeback bw 6 $B db"
} | rollouts || { bad "could not build the rollouts"; e2e_done; }
for _ in $(seq 100); do [ -s "$E2E_DIR/recv.port" ] && break; sleep 0.1; done
RECV="http://127.0.0.1:$(cat "$E2E_DIR/recv.port")"

# ---- 20 healthy hosts on A, 6 storming on B: one alert ----
scenario storm
watch_after_post storm --webhook "$RECV/hook,format=json" --public-url "http://vmscope.example:8080"
check_jq '.last_run.baseline.release == $ENV.A and .last_run.baseline.source == "host-hours" and .last_run.baseline.hosts == 20' "baseline: A, the most host-hours"
BODY=$(release "$B")
check_jq '.status == "tested" and .hosts == 6 and (.worse | index("immediate_reclaim") != null and index("alert_minutes_writeback_storm") != null)' "B tested: immediate reclaim and writeback_storm minutes worse"
req GET "/api/v1/alerts?kind=kernel_regression"
check_jq '.alerts | length == 1' "exactly one kernel_regression alert"
BODY=$(jq -c '.alerts[0]' <<<"$BODY")
ALERT=$BODY
check_jq '.state == "open" and .host == "" and .scope == "fleet" and .subject == $ENV.B and .cgroup == null and (.severity == "warning" or .severity == "critical")' "a fleet alert about B (host \"\", scope fleet)"
check_jq '.summary | startswith($ENV.B + " vs " + $ENV.A + ": ") and contains("writeback") and contains("worse, 6 vs 20 hosts, p = ")' "summary names B, A and writeback"
check_jq '.evidence | .release == $ENV.B and .baseline == $ENV.A and .hosts == {"release":6,"baseline":20} and .correction.method == "holm" and .correction.tests >= ([.figures | length, 4] | max) and .window_s == 900' "evidence: both releases, host counts, the correction"
check_jq '[.evidence.figures[].name] | index("immediate_reclaim") != null and index("alert_minutes_writeback_storm") != null' "evidence: the writeback figures"
check_jq '[.evidence.figures[] | .p < .p_adjusted and .p_adjusted < 0.05 and .release.hosts == 6 and .baseline.hosts == 20 and (.release.p50 | type) == "number" and (.baseline.p95 | type) == "number" and (.release.mean | type) == "number" and .test == "mann-whitney-u" and .median_diff >= .floor] | all' "evidence per figure: each side's mean, p50, p95, p and adjusted p, effect over the floor"
check_jq '.evidence.figures[] | select(.name == "immediate_reclaim") | .release.p50 > 500 and .baseline.p50 < 50' "immediate reclaim: ~1700/s on B, ~0 on A"
check_jq '.evidence.stratify == null and .evidence.label_mix == []' "same roles: no label difference to report"
page=$(jq -r '.evidence.compare.page' <<<"$BODY")
api=$(jq -r '.evidence.compare.api' <<<"$BODY")
check_eq "$(jq -rn --arg p "$page" '$p | startswith("#/compare?group_by=kernel&a=6.1.0-18-amd64&b=6.1.0-21-amd64&range=1h&mark=")')" true "a link to the compare page of the pair, marking the figures: $page"
req GET "$api"
check_jq '.figures[] | select(.name == "immediate_reclaim") | .verdict == "worse"' "the evidence's compare question answers worse on immediate_reclaim"
# notified like every alert, with no host
check "the webhook got the fleet alert's open" bash -c "for i in \$(seq 50); do jq -se '[.[] | select(.body.alert.kind == \"kernel_regression\" and .body.event == \"open\" and .body.alert.host == \"\" and .body.alert.scope == \"fleet\" and (.body.text | startswith(\"[vmscope] FIRING\")) and (.body.text | contains(\"on the fleet\")) and (.body.generatorURL | startswith(\"http://vmscope.example:8080/#/compare?\")))] | length == 1' '$E2E_DIR/received.jsonl' >/dev/null && exit 0; sleep 0.2; done; exit 1"
# listed in /metrics with host ""
req GET /metrics
check_contains 'vmscope_alert_active{host="",cgroup="",kind="kernel_regression"' "/metrics lists the fleet alert"
# the fleet view has no host ""
req GET /api/v1/fleet
check_jq '[.hosts[].host] | index("") == null and length == 26' "the fleet lists the 26 hosts only"

# the dashboard (tests/browser/regression.test.mjs): the banner above the
# fleet table, its link to the compare page with the alert's figures
# marked, the alert on the alerts view
"$E2E_ROOT/scripts/web-deps.sh" >/dev/null || bad "scripts/web-deps.sh failed"
e2e_run_browser "$E2E_ROOT/tests/browser/regression.test.mjs" REG_A="$A" REG_B="$B" \
	REG_MARK="$(jq -r '[.evidence.figures[].name] | join(",")' <<<"$ALERT")"

# silences: one for a host does not touch it; one by kind and subject does
req POST /api/v1/silences -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
	--data-binary '{"host":"ai-0","duration_s":600}'
check_status 201 "a host's silence"
req GET "/api/v1/alerts?kind=kernel_regression&state=open"
check_jq '.alerts[0].silenced == false' "a host's silence does not match the fleet alert"
req POST /api/v1/silences -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
	--data-binary "{\"kind\":\"kernel_regression\",\"subject\":\"$B\",\"duration_s\":600,\"comment\":\"known\"}"
check_status 201 "a silence by kind and subject, without a host"
check_jq '.host == null and .kind == "kernel_regression" and .subject == $ENV.B and .active' "the silence as stored"
req GET "/api/v1/alerts?kind=kernel_regression&state=open"
check_jq '.alerts[0].silenced == true' "the silence by kind matches the fleet alert"
req POST /api/v1/silences -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
	--data-binary '{"duration_s":600}'
check_status 400 "a silence of everything is refused"
check_jq '.error | startswith("host:")' "the refusal names host"

# the baseline: pinned to B (admin token), A is then the one tested
req PUT /api/v1/regression/baseline -H 'Content-Type: application/json' --data-binary "{\"release\":\"$B\"}"
check_status 401 "pinning needs a token"
req PUT /api/v1/regression/baseline -H "Authorization: Bearer $E2E_TOKEN" --data-binary "{\"release\":\"$B\"}"
check_status 403 "an ingest token may not pin"
req PUT /api/v1/regression/baseline -H "Authorization: Bearer $ADMIN" --data-binary '{"release":7}'
check_status 400 "a release that is not a string"
check_jq '.error | startswith("release:")' "the refusal names release"
req PUT /api/v1/regression/baseline -H "Authorization: Bearer $ADMIN" --data-binary "{\"release\":\"$B\"}"
check_status 200 "pin B"
check_jq '.release == $ENV.B and .source == "pinned" and .pinned and .hosts == 6 and (.host_hours | length) == 2' "the baseline answer: B, pinned"
POSTED=$(date +%s.%N)
wait_run
check_jq '.last_run.baseline == {"release":$ENV.B,"source":"pinned","hosts":6,"host_hours":null} and .pinned.release == $ENV.B' "the run used the pinned baseline"
BODY=$(release "$A")
check_jq '.status == "tested" and .worse == []' "A against B: tested, nothing worse"
# a pin on a release no host runs (gone after its rollout, or mistyped)
# does not stop the watch: the runs use the host-hours choice and say so
req PUT /api/v1/regression/baseline -H "Authorization: Bearer $ADMIN" --data-binary '{"release":"6.1.0-99-amd64"}'
check_status 200 "pin a release no host runs"
check_jq '.release == $ENV.A and .source == "host-hours" and .pinned and .pin_ignored == {"release":"6.1.0-99-amd64","hosts":0,"min_hosts":5}' "the baseline answer: A (host-hours), the pin ignored"
POSTED=$(date +%s.%N)
wait_run
check_jq '.last_run.baseline.release == $ENV.A and .last_run.baseline.source == "host-hours" and .last_run.baseline.pin_ignored.release == "6.1.0-99-amd64"' "the run compared with A and reports the ignored pin"
check_jq '.last_run.alerts.refreshed == [$ENV.B]' "B still tested and found worse"
check "the server log warns of the ignored pin" grep -q "the pinned baseline 6.1.0-99-amd64 has 0 hosts in the window" "$E2E_LOG"
req PUT /api/v1/regression/baseline -H "Authorization: Bearer $ADMIN" --data-binary '{"release":null}'
check_jq '.release == $ENV.A and .source == "host-hours" and .pinned == false and .pin_ignored == null' "unpinned: A again"

# B rolled out further (20 more hosts in the same storm): B now has the
# most host-hours, but with its alert open it is passed over as the
# baseline, stays tested against A and its alert confirmed
post_rollout stormmore
wait_run
check_jq '.last_run.baseline.release == $ENV.A and .last_run.baseline.passed_over == [$ENV.B]' "B, alerted, passed over as the baseline"
check_jq '(.last_run.releases[] | select(.release == $ENV.B) | .status == "tested" and .hosts == 26) and .last_run.alerts.refreshed == [$ENV.B]' "B (26 hosts) tested against A, its alert confirmed"
req GET /api/v1/regression/baseline
check_jq '.release == $ENV.A and .passed_over == [$ENV.B] and .host_hours[0].release == $ENV.B' "the baseline answer: A, B (the most host-hours) passed over"

# B's hosts leave the fleet (no run meanwhile): the alert resolves; its
# resolve is held back by the silence
lock_hold
for h in bw-{0..5} bx-{0..19}; do
	req DELETE "/api/v1/hosts/$h" -H "Authorization: Bearer $ADMIN"
	check_status 200 "forget $h"
done
POSTED=$(date +%s.%N)
lock_release
wait_run
check_jq '.last_run.alerts.resolved == [$ENV.B]' "the run resolved B's alert"
req GET "/api/v1/alerts?kind=kernel_regression"
check_jq '.alerts | length == 1 and .[0].state == "resolved" and (.[0].ended_at | type) == "string"' "resolved once B left the fleet"
check "the resolve is held back by the silence" bash -c "for i in \$(seq 50); do [ \"\$(psql '$E2E_DB' -qtAc \"SELECT o.suppressed FROM notify_outbox o JOIN alerts a ON a.id = o.alert_id WHERE a.kind = 'kernel_regression' AND o.event = 'resolve' AND o.done_at IS NOT NULL\")\" = t ] && exit 0; sleep 0.2; done; exit 1"
e2e_server_stop

# ---- 6 healthy hosts on B (upgraded from A, where they stormed until
# just before, in the same rollup bucket): tested, no alert; B's open
# alert an earlier run left, last confirmed more than a window (900 s)
# ago, resolves ----
# seed_alert AGO: B's open alert, last confirmed AGO seconds ago, as
# regress_store_raise writes it
seed_alert() {
	psql "$E2E_DB" -qtA -v rel="$B" -v ago="$1" >/dev/null <<'SQL' || bad "could not seed B's alert"
INSERT INTO alerts (host, kind, subject, severity, state, started_at, opened_at, updated_at, summary, evidence)
VALUES ('', 'kernel_regression', :'rel', 'warning', 'open', now() - interval '1 hour', now() - interval '1 hour',
	now() - make_interval(secs => :ago), :'rel' || ' vs another: writeback worse',
	jsonb_build_object('release', :'rel', 'confirmed_ts', extract(epoch FROM now()) - :ago))
SQL
}
scenario healthy
BEFORE_RUN="seed_alert 1000" watch_after_post healthy
RUN=$BODY	# the first run after the post (a later one resolves nothing more)
BODY=$(release "$B")
check_jq '.status == "tested" and .hosts == 6 and .worse == [] and ([.figures[] | select(.tested)] | length) >= 4' "healthy B: tested (the figures with data that vary), nothing worse"
check_jq '.figures[] | select(.name == "immediate_reclaim") | .tested and .median_release < 50' "healthy B: immediate reclaim from B's own samples (the storm on A ~1700/s)"
BODY=$RUN
check_jq '.last_run.alerts == {"opened":[],"refreshed":[],"resolved":[$ENV.B]}' "healthy B: no alert opened; B's alert, not worse for a whole window, resolved"
req GET "/api/v1/alerts?kind=kernel_regression&state=all"
check_jq '[.alerts[] | {subject, state}] == [{"subject":$ENV.B,"state":"resolved"}]' "healthy B: only the seeded alert, resolved"
req GET "/api/v1/alerts?kind=writeback_storm&limit=100"
check_jq '[.alerts[] | select(.state == "resolved") | .host] | unique == ["bc-0","bc-1","bi-0","bi-1","bs-0","bs-1"]' "B's hosts stormed on A before their reboot into B (their alerts resolved by it)"
e2e_server_stop

# ---- one storming host among 6 on B: no alert; B's open alert an
# earlier run left, confirmed 300 s ago (less than a window), stays ----
scenario onebad
BEFORE_RUN="seed_alert 300" watch_after_post onebad
RUN=$BODY
BODY=$(release "$B")
check_jq '.status == "tested" and .hosts == 6 and .worse == []' "one bad host of 6: tested, nothing worse"
BODY=$RUN
check_jq '.last_run.alerts == {"opened":[],"refreshed":[],"resolved":[]}' "one bad host of 6: no alert opened or confirmed; B's, confirmed less than a window ago, kept"
req GET "/api/v1/alerts?kind=kernel_regression&state=all"
check_jq '[.alerts[] | {subject, state}] == [{"subject":$ENV.B,"state":"open"}]' "one bad host of 6: only the seeded alert, still open"
req GET "/api/v1/alerts?kind=writeback_storm&host=bw-0"
check_jq '.alerts | length >= 1' "the bad host itself has its writeback_storm alert"
e2e_server_stop

# ---- B on the db role only: the difference is the role's ----
scenario roles
watch_after_post roles --regression-stratify role
check_jq '.last_run.stratify == "role"' "stratified by role"
BODY=$(release "$B")
check_jq '.status == "tested" and .worse == [] and .hosts_tested == {"release":6,"baseline":3}' "within role=db: B tested against A's 3 db hosts, nothing worse"
check_jq '[.strata[] | {value, release, baseline, shared}] | sort_by(.value) == [{"value":"db","release":6,"baseline":3,"shared":true},{"value":"web","release":0,"baseline":17,"shared":false}]' "the strata: db shared, web of A only"
req GET "/api/v1/alerts?kind=kernel_regression"
check_jq '.alerts == []' "stratified: no alert"
e2e_server_stop
# the same rollout compared across roles: worse, and the evidence says why
e2e_server_start "${WATCH[@]}"
POSTED=$(date +%s.%N)
wait_run
req GET "/api/v1/alerts?kind=kernel_regression"
check_jq '.alerts | length == 1 and .[0].subject == $ENV.B' "unstratified: the role's difference looks like B's"
check_jq '.alerts[0].evidence.label_mix[0] | .label == "role" and .release == {"db":6} and .baseline == {"web":17,"db":3}' "the evidence: the releases' hosts differ by role"
check_jq '.alerts[0].evidence.hint | contains("--regression-stratify role")' "the hint names --regression-stratify role"
e2e_server_stop

e2e_done
