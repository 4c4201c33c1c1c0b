#!/usr/bin/env bash
# test_citus.sh - the server on a distributed PostgreSQL (docs/scaling.md
# §3): a Citus coordinator and two workers on loopback ports of their own
# (scripts/citus.sh), two servers on the coordinator, agents balanced over
# them by host. Where Citus is not installed the test says how to install
# it and skips (the only test that may).
#  - a server pointed at a worker refuses to start
#  - the tables are placed: per-host ones distributed by host, colocated;
#    small ones reference tables
#  - 50 hosts post at once through both servers (8 clients): every sample
#    stored, no error, no distributed deadlock
#  - two servers creating the same 20 new hosts at the same instant: one
#    row each
#  - a thrash recording posted in batches alternating between the servers:
#    the alerts vmscope-replay raises, the rollups of every sample
#  - every endpoint answers: hosts, series (raw, rollup, cgroup rollup),
#    export, fleet, compare, alerts, silences, overrides, forget, /metrics,
#    notifications to a webhook, retention
#  - a worker restarted while agents post: every sample they were told was
#    stored is stored (their retries make up for the refused ones)
#  - an install of the old schema with data moved onto Citus as
#    docs/scaling.md §3 says: every row and answer kept
. "$(dirname "$0")/_lib.sh"
. "$(dirname "$0")/_old_fixture.sh"
CITUS="$E2E_ROOT/scripts/citus.sh"
if ! "$CITUS" installed; then
	echo "test_citus: skipped, Citus is not installed:"
	"$CITUS" how
	echo "0 passed, 0 failed (skipped)"
	exit 0
fi
AGENTS="$E2E_ROOT/tests/e2e/_agents.py"
CDIR=$E2E_DIR/citus
citus_cleanup() {
	local rc=$?
	"$CITUS" stop "$CDIR" 2>/dev/null
	for i in 0 1 2; do
		d=$("$E2E_ROOT/scripts/pg.sh" dir "$CDIR/node$i" 2>/dev/null)
		[ -n "$d" ] && [ "$d" != / ] && rm -rf "$d"
	done
	(exit "$rc")
	e2e_cleanup
}
trap citus_cleanup EXIT

COORD=$("$CITUS" start "$CDIR") || { echo "e2e: could not start the Citus cluster" >&2; exit 1; }
WORKER1=$("$CITUS" node "$CDIR" 1)
E2E_DB=$COORD
ADMIN=admin-$RANDOM$RANDOM
echo "$ADMIN" >"$E2E_DIR/admin.token"

# --- a worker is refused --------------------------------------------------------
"$SERVER" --listen "127.0.0.1:$("$E2E_ROOT/scripts/freeport.sh")" --db "$WORKER1" --token "$E2E_TOKEN" \
	--schema "$E2E_ROOT/schema" >"$E2E_DIR/worker.log" 2>&1 &
wpid=$!
E2E_PIDS+=("$wpid")
for _ in $(seq 300); do kill -0 "$wpid" 2>/dev/null || break; sleep 0.1; done
wait "$wpid"
check_eq "$?" 1 "a server pointed at a worker stops with status 1"
check "its log says to use the coordinator" grep -q "Citus worker node: point --db at the coordinator" "$E2E_DIR/worker.log"

# --- two servers on the coordinator ---------------------------------------------
python3 "$E2E_ROOT/tests/e2e/_receiver.py" "$E2E_DIR/recv.port" "$E2E_DIR/recv.log" &
E2E_PIDS+=($!)
for _ in $(seq 50); do [ -s "$E2E_DIR/recv.port" ] && break; sleep 0.1; done
HOOK="http://127.0.0.1:$(cat "$E2E_DIR/recv.port")/hook,format=json,name=hook"
start_server() { # start_server PORT [ARGS]: sets PID_<port>
	E2E_PORT=$1 E2E_SERVER_DB=$COORD e2e_server_start --admin-token-file "$E2E_DIR/admin.token" \
		--webhook "$HOOK" --retention-days 36500 "${@:2}"
}
PA=$("$E2E_ROOT/scripts/freeport.sh")
PB=$("$E2E_ROOT/scripts/freeport.sh")
start_server "$PA"
PID_A=$E2E_PID
start_server "$PB"
PID_B=$E2E_PID
UA=http://127.0.0.1:$PA
UB=http://127.0.0.1:$PB
check_eq "$(e2e_psql "SELECT count(*) FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
	WHERE c.relname IN ('hosts', 'samples', 'rollup_5m', 'cgroups', 'cgroup_rollup_5m', 'cgroup_rollup_done',
	'boots', 'host_meta', 'detector_state', 'alerts', 'notify_outbox') AND p.partmethod = 'h'
	AND p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'hosts'::regclass)")" 11 \
	"every per-host table is distributed by host, colocated with hosts"
check_eq "$(e2e_psql "SELECT count(*) FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
	WHERE c.relname IN ('metric_names', 'host_names', 'ingest_tokens', 'silences', 'detector_overrides',
	'detector_overrides_version') AND p.partmethod = 'n'")" 6 "the small tables are reference tables"

"$AGENT" --once --stdout --host template >"$E2E_DIR/template.json" 2>/dev/null
check "the agent gave a template sample" jq -e .vmstat "$E2E_DIR/template.json"

# --- 50 hosts at once through both servers ----------------------------------------
python3 "$AGENTS" load "$E2E_DIR/template.json" "$E2E_TOKEN" fleet- 50 6 8 "$UA" "$UB" >"$E2E_DIR/load.json"
check_eq "$(jq .ok "$E2E_DIR/load.json")" 300 "300 samples of 50 hosts answered 202 ($(cat "$E2E_DIR/load.json"))"
check_eq "$(e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name LIKE 'fleet-%'")" 300 \
	"all of them stored"
python3 "$AGENTS" race "$E2E_DIR/template.json" "$E2E_TOKEN" race- 20 "$UA" "$UB" >"$E2E_DIR/race.json"
check_eq "$(jq '.status["202"]' "$E2E_DIR/race.json")" 40 "both servers accepted each new host's first sample"
check_eq "$(e2e_psql "SELECT count(*) || ' ' || count(DISTINCT name) FROM host_names WHERE name LIKE 'race-%'")" "20 20" \
	"one name row per new host"
check_eq "$(e2e_psql "SELECT count(*) || ' ' || count(DISTINCT name) || ' ' || sum(samples) FROM hosts WHERE name LIKE 'race-%'")" \
	"20 20 20" "one host row per new host, its sample once"

# --- a thrash recording moving between the servers ---------------------------------
e2e_shift_trace "$E2E_ROOT/tests/corpus/real-coldanon.jsonl.gz" "$E2E_DIR/trace.jsonl"
# an hour earlier: its 5-minute buckets are closed for the cgroup rollup job
jq -c '.ts -= 3600' "$E2E_DIR/trace.jsonl" >"$E2E_DIR/thrash.jsonl"
host=$(head -1 "$E2E_DIR/thrash.jsonl" | jq -r .host)
n=$(wc -l <"$E2E_DIR/thrash.jsonl")
refused=0
for ((i = 1, k = 0; i <= n; i += 4, k++)); do
	sed -n "$i,$((i + 3))p" "$E2E_DIR/thrash.jsonl" | jq -s -c . >"$E2E_DIR/batch.json"
	url=$UA
	[ $((k % 2)) = 1 ] && url=$UB
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 -X POST -H "Authorization: Bearer $E2E_TOKEN" \
		-H 'Content-Type: application/json' --data-binary @"$E2E_DIR/batch.json" "$url/api/v1/samples")
	[ "$code" = 202 ] || refused=$((refused + 1))
done
check_eq "$refused" 0 "every batch of the recording answered 202"
curl -s "$UB/api/v1/alerts?host=$host&limit=1000" >"$E2E_DIR/live.json"
project='[.alerts[] | select(.kind != "host_silent") | [.cgroup, .kind, .severity, .state, .started_at, .opened_at, .ended_at]] | sort'
jq -c "$project" "$E2E_DIR/live.json" >"$E2E_DIR/live.p"
"$REPLAY" "$E2E_DIR/thrash.jsonl" | jq -c "$project" >"$E2E_DIR/replay.p"
check "replay raises alerts for the recording" test "$(jq length "$E2E_DIR/replay.p")" -gt 0
check "the alerts are the ones replay raises" cmp -s "$E2E_DIR/live.p" "$E2E_DIR/replay.p"
# (the fleet's opens go first: the receiver takes one event at a time)
check "the webhook got their opens" python3 -c "
import json, sys, time
for _ in range(600):
    ev = [json.loads(l) for l in open('$E2E_DIR/recv.log')]
    if any(e['body'].get('event') == 'open' and e['body']['alert']['host'] == '$host' for e in ev):
        sys.exit(0)
    time.sleep(0.2)
sys.exit('no open of $host among %d events' % len(ev))"
check "the rollups hold every sample of it once" e2e_wait_checkpoints
check_eq "$(e2e_psql "SELECT sum(n) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = '$host'")" "$n" \
	"rolled up: $n samples"
# all reclaim (slots 33-36, pgscan/pgsteal_anon/_file: the recording is
# 6.18) rolled up beside kswapd's scans (slot 6), sample for sample
check_eq "$(e2e_psql "SELECT sum(n6) > 0 AND sum(n33) = sum(n6) AND sum(n34) = sum(n6) AND sum(n35) = sum(n6)
	AND sum(n36) = sum(n6) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = '$host'")" t \
	"all reclaim rolled up on the shards"

# --- every endpoint -----------------------------------------------------------------
now=$(date +%s)
code() { curl -s -o "$E2E_DIR/ep.out" -w '%{http_code}' "$@"; }
for u in /api/v1/hosts "/api/v1/hosts/$host" "/api/v1/hosts/$host/cgroups" "/api/v1/hosts/$host/metrics" \
	"/api/v1/hosts/$host/series?metric=vmstat.pgscan_kswapd&since=$((now - 7200))" \
	"/api/v1/hosts/$host/series?metric=psi.memory.some.avg10&since=$((now - 7 * 86400))&points=50" \
	"/api/v1/hosts/$host/series_batch?metrics=vmstat.pgscan_kswapd,psi.memory.some.avg10&since=$((now - 7200))&points=20" \
	"/api/v1/hosts/$host/samples?since=$((now - 7200))" "/api/v1/fleet?window=86400" \
	"/api/v1/fleet?window=86400&layout=columns" "/api/v1/compare?group_by=kernel" "/api/v1/alerts?state=open" \
	/api/v1/silences /api/v1/overrides /metrics; do
	check_eq "$(code "$UA$u")" 200 "GET $u"
done
check_eq "$(jq '[.hosts[] | .host] | length' <(curl -s "$UA/api/v1/hosts"))" 71 "hosts lists every host"
check_eq "$(curl -s "$UB/api/v1/hosts/$host/samples?since=$((now - 7200))" | wc -l)" "$n" "export gives every sample"
check "fleet has the recording's sparklines" sh -c "curl -s '$UA/api/v1/fleet?window=86400' |
	jq -e '.hosts[] | select(.host == \"$host\") | .spark.psi_memory_some | length > 0'"
check "/metrics has the recording's open alerts" sh -c "curl -s '$UB/metrics' | grep -q 'vmscope_alert_active{host=\"$host\"'"
A="Authorization: Bearer $ADMIN"
check_eq "$(code -X POST -H "$A" -H 'Content-Type: application/json' "$UA/api/v1/silences" \
	-d "{\"host\":\"$host\",\"duration_s\":600,\"comment\":\"e2e\"}")" 201 "a silence is created"
sid=$(jq .id "$E2E_DIR/ep.out")
check_eq "$(curl -s "$UB/api/v1/alerts?host=$host&state=open" | jq '[.alerts[] | .silenced] | all')" true \
	"its host's open alerts are silenced"
check_eq "$(code -X DELETE -H "$A" "$UB/api/v1/silences/$sid")" 200 "the silence is ended"
check_eq "$(code -X PUT -H "$A" "$UA/api/v1/overrides" \
	-d '{"overrides":[{"host":"fleet-01","kind":"thrash","params":{"min_magnitude":67108864}}]}')" 200 "overrides stored"
check_eq "$(curl -s "$UB/api/v1/overrides" | jq '.overrides | length')" 1 "the other server reads them"
oid=$(curl -s "$UB/api/v1/overrides" | jq '.overrides[0].id')
check_eq "$(code -X DELETE -H "$A" "$UB/api/v1/overrides/$oid")" 200 "an override is deleted"
# kernels side by side: two groups of hosts
python3 - "$UA" "$E2E_TOKEN" "$E2E_DIR/template.json" <<'PY' >"$E2E_DIR/kernels.out"
import json, sys, time, urllib.request
url, token, tmpl = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
t0 = time.time() - 3600
for i in range(6):
    rows = []
    for k in range(4):
        s = dict(tmpl, host="kern-%d" % i, ts=round(t0 + 10 * k, 3), kernel="6.1.0-%s" % ("a" if i % 2 else "b"))
        rows.append(s)
    req = urllib.request.Request(url + "/api/v1/samples", data=json.dumps(rows).encode(), method="POST",
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    print(urllib.request.urlopen(req).status)
PY
check_eq "$(sort -u "$E2E_DIR/kernels.out")" 202 "hosts of two kernels posted"
e2e_wait_checkpoints
check_eq "$(code "$UA/api/v1/compare?group_by=kernel&a=6.1.0-a&b=6.1.0-b&since=$((now - 7200))")" 200 "compare of two kernels"
check_eq "$(jq '[.hosts.a, .hosts.b]' -c "$E2E_DIR/ep.out")" "[3,3]" "three hosts a side"
# the fleet's alerts: host '', the reserved host id 0 (one shard, like a
# host's); the regression watch's row is a reference table. An alert an
# earlier run left for a release no host runs any more, confirmed more
# than a window ago: a third server's watch (runs over the distributed
# tables) resolves it, with its outbox row on the same shard.
check_eq "$(e2e_psql "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = 'regression_watch'::regclass
	AND partmethod = 'n'")" 1 "the regression watch's row is a reference table"
check "a fleet alert has host id 0" sh -c "! psql '$COORD' -qtAc \"INSERT INTO alerts (host_id, host, kind, subject,
	severity, state, started_at, opened_at, updated_at, summary) VALUES (1, '', 'kernel_regression', 'x', 'warning',
	'open', now(), now(), now(), 'x')\" 2>/dev/null"
e2e_psql "INSERT INTO alerts (host_id, host, kind, subject, severity, state, started_at, opened_at, updated_at,
	summary, evidence) VALUES (0, '', 'kernel_regression', '6.1.0-gone', 'warning', 'open',
	now() - interval '3 hours', now() - interval '3 hours', now() - interval '3 hours', 'left by an earlier run',
	jsonb_build_object('confirmed_ts', extract(epoch FROM now()) - 10800))" >/dev/null
PC=$("$E2E_ROOT/scripts/freeport.sh")
start_server "$PC" --regression-every 1 --regression-min-hosts 2 --regression-window 7200
PID_C=$E2E_PID
check "the watch ran on Citus and resolved the alert" sh -c "for i in \$(seq 300); do
	curl -s '$UA/api/v1/alerts?kind=kernel_regression&state=resolved' | jq -e '.alerts | length == 1' >/dev/null &&
	curl -s 'http://127.0.0.1:$PC/api/v1/regression' | jq -e '.last_run.releases | length > 0' >/dev/null && exit 0
	sleep 0.2; done; exit 1"
check_eq "$(curl -s "http://127.0.0.1:$PC/api/v1/regression" | jq -c '[.last_run.releases[] |
	select(.release | startswith("6.1.0-")) | .status == "tested" or .status == "baseline"]')" \
	'[true,true]' "it compared the two kernels' hosts"
check_eq "$(curl -s "$UA/api/v1/alerts?kind=kernel_regression&state=all" | jq -c '[.alerts[] | [.host, .subject, .state]]')" \
	'[["","6.1.0-gone","resolved"]]' "the fleet's alert is resolved"
check_eq "$(e2e_psql "SELECT count(*) FROM notify_outbox o JOIN alerts a ON a.host_id = o.host_id AND a.id = o.alert_id
	WHERE o.host_id = 0 AND a.kind = 'kernel_regression' AND o.event = 'resolve'")" 1 "its resolve is in the outbox, by host id 0"
E2E_PID=$PID_C
e2e_server_stop
check_eq "$(code -X DELETE -H "$A" "$UB/api/v1/hosts/fleet-02")" 200 "a host is forgotten"
check_eq "$(e2e_psql "SELECT (SELECT count(*) FROM host_names WHERE name = 'fleet-02') + (SELECT count(*) FROM hosts WHERE name = 'fleet-02')")" 0 \
	"nothing of it left"
check_eq "$(code "$UA/api/v1/hosts/fleet-02")" 404 "it is gone for the other server too"

# --- cgroup rollups -----------------------------------------------------------------
# a sample 20 minutes after the recording closes its 5-minute buckets
tail -1 "$E2E_DIR/thrash.jsonl" | jq -c '.ts += 1200' >"$E2E_DIR/later.json"
check_eq "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $E2E_TOKEN" \
	-H 'Content-Type: application/json' --data-binary @"$E2E_DIR/later.json" "$UA/api/v1/samples")" 202 \
	"a later sample of the recording's host"
check "the cgroup rollup job rolls the recording's cgroups up" sh -c "for i in \$(seq 60); do
	[ \"\$(psql '$COORD' -qtAc \"SELECT count(*) FROM cgroup_rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = '$host'\")\" -gt 0 ] && exit 0
	sleep 1; done; exit 1"

# --- a worker restarted while agents post -------------------------------------------
python3 "$AGENTS" spool "$E2E_DIR/template.json" "$E2E_TOKEN" spool- 6 20 "$E2E_DIR/acked" "$UA" "$UB" \
	>"$E2E_DIR/spool.json" &
spid=$!
E2E_PIDS+=("$spid")
for _ in $(seq 100); do [ "$(cat "$E2E_DIR/acked" 2>/dev/null | wc -l)" -ge 20 ] && break; sleep 0.1; done
"$E2E_ROOT/scripts/pg.sh" stop "$CDIR/node1"
sleep 2
VMSCOPE_PG_OPTS="-c shared_preload_libraries=citus -c max_prepared_transactions=100" \
	"$E2E_ROOT/scripts/pg.sh" start "$CDIR/node1" "$(cut -d' ' -f2 "$CDIR/ports")" >/dev/null
wait "$spid"
check_eq "$(jq .ok "$E2E_DIR/spool.json")" 120 "the agents' 120 samples were all accepted in the end"
check "some were refused while the worker was down ($(cat "$E2E_DIR/spool.json"))" test "$(jq .retries "$E2E_DIR/spool.json")" -gt 0
missing=$(while read -r h ts; do echo "('$h', $ts)"; done <"$E2E_DIR/acked" | paste -sd, |
	xargs -0 -I{} psql "$COORD" -qtAc "SELECT count(*) FROM (VALUES {}) AS a(h, ts) LEFT JOIN
		(SELECT n.name, s.ts_ms FROM samples s JOIN host_names n ON n.id = s.host_id WHERE n.name LIKE 'spool-%') x
		ON x.name = a.h AND x.ts_ms = a.ts WHERE x.name IS NULL")
check_eq "$missing" 0 "every accepted sample is stored"

# --- retention ------------------------------------------------------------------------
python3 - "$UA" "$E2E_TOKEN" "$E2E_DIR/template.json" <<'PY' >"$E2E_DIR/aged.out"
import json, sys, time, urllib.request
url, token, tmpl = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
rows = [dict(tmpl, host="aged-0", ts=round(time.time() - 3 * 86400 + 10 * k, 3)) for k in range(3)]
req = urllib.request.Request(url + "/api/v1/samples", data=json.dumps(rows).encode(), method="POST",
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
print(urllib.request.urlopen(req).status)
PY
check_eq "$(cat "$E2E_DIR/aged.out")" 202 "samples of three days ago stored"
E2E_PID=$PID_A
e2e_server_stop
start_server "$PA" --retention-days 2 --rollup-retention-days 2
PID_A=$E2E_PID
check "the day partition is dropped on every node" sh -c "for i in \$(seq 50); do
	[ \"\$(psql '$COORD' -qtAc \"SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = 'aged-0'\")\" = 0 ] && exit 0
	sleep 0.2; done; exit 1"
check "newer samples stay" test "$(e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name LIKE 'fleet-%'")" -gt 0

E2E_PID=$PID_A
e2e_server_stop
E2E_PID=$PID_B
e2e_server_stop
check "no distributed deadlock" sh -c "! grep -qi deadlock '$E2E_DIR'/server-*.log"

# --- an install of the old schema moved onto Citus (docs/scaling.md §3) ----------------
psql "$("$CITUS" node "$CDIR" 0 postgres)" -qtAc "CREATE DATABASE legacy" >/dev/null 2>&1
LEGACY=$("$CITUS" node "$CDIR" 0 legacy)
check "the old single-node database loads" old_fixture_load "$LEGACY"
check "Citus is added to it" "$CITUS" attach "$CDIR" legacy
E2E_PORT=$PA E2E_SERVER_DB=$LEGACY e2e_server_start --retention-days 36500
check_eq "$(psql "$LEGACY" -qtAc "SELECT count(*) FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
	WHERE NOT c.relispartition")" 18 "its tables are placed"
check_eq "$(psql "$LEGACY" -qtAc "SELECT count(*) FROM ONLY samples")" 0 "its rows left the coordinator's own tables"
old_fixture_check "$UA"
e2e_server_stop
e2e_done
