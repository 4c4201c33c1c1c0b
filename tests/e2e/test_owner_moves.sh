#!/usr/bin/env bash
# test_owner_moves.sh - a host's state lives in the memory of the server
# that owns it (docs/design.md "Ingest"); it must not matter which server
# takes which sample. Two servers share a database; a real recording is
# posted in batches that move between them every few batches, and one of
# them is killed with SIGKILL in the middle and started again. No
# checkpoint is written before the end (once an hour), so every server
# that takes the host rebuilds its state from the stored samples alone
# (tests/unit/test_alert_store.c covers a rebuild from a checkpoint). The same recording posted to
# one server as another host is the reference. Afterwards:
#  - every sample answered 202 is stored (both hosts have all of them),
#  - the moving host's alerts are the reference host's and what
#    bin/vmscope-replay prints for the file (kinds, scopes, severities,
#    states, sample times, evidence),
#  - its 5-minute rollups are the reference host's, bucket for bucket.
. "$(dirname "$0")/_lib.sh"
REPLAY=${REPLAY:-$E2E_ROOT/bin/san/vmscope-replay}
e2e_init owner

start_on() { # start_on PORT CHECKPOINT_S
	E2E_PORT=$1 e2e_server_start --checkpoint-interval "$2"
}
PA=$("$E2E_ROOT/scripts/freeport.sh")
PB=$("$E2E_ROOT/scripts/freeport.sh")
start_on "$PA" 3600
PID_A=$E2E_PID
start_on "$PB" 3600
PID_B=$E2E_PID

post_to() { # post_to PORT FILE FROM TO: lines FROM..TO of FILE as one JSON array
	sed -n "$3,$4p" "$2" | jq -s -c . >"$E2E_DIR/batch.json"
	curl -s -o /dev/null -w '%{http_code}' --max-time 60 -X POST -H "Authorization: Bearer $E2E_TOKEN" \
		-H 'Content-Type: application/json' --data-binary @"$E2E_DIR/batch.json" \
		"http://127.0.0.1:$1/api/v1/samples"
}

for trace in synth-s000-61.jsonl real-coldanon.jsonl.gz; do
e2e_shift_trace "$E2E_ROOT/tests/corpus/$trace" "$E2E_DIR/trace.jsonl"
host=$(head -1 "$E2E_DIR/trace.jsonl" | jq -r .host)
jq -c --arg h "$host-ref" '.host = $h' "$E2E_DIR/trace.jsonl" >"$E2E_DIR/ref.jsonl"
n=$(wc -l <"$E2E_DIR/trace.jsonl")
killed=0
refused=0
k=0
# batches of 3 moving every batch: the detectors' hysteresis (3 hits to open
# or to clear) spans owners
for ((i = 1; i <= n; i += 3)); do
	to=$((i + 2 > n ? n : i + 2))
	port=$PA
	[ $((k % 2)) = 1 ] && port=$PB
	if [ "$killed" = 0 ] && [ "$i" -gt $((n / 2)) ] && [ "$port" = "$PB" ]; then
		# B took the host back from A and holds its state in memory
		# only: killed, started again on the same port
		kill -KILL "$PID_B"
		wait "$PID_B" 2>/dev/null
		killed=1
		start_on "$PB" 3600
		PID_B=$E2E_PID
	fi
	code=$(post_to "$port" "$E2E_DIR/trace.jsonl" "$i" "$to")
	[ "$code" = 202 ] || refused=$((refused + 1))
	code=$(post_to "$PA" "$E2E_DIR/ref.jsonl" "$i" "$to")
	[ "$code" = 202 ] || refused=$((refused + 1))
	k=$((k + 1))
done
check_eq "$refused" 0 "$trace: every batch answered 202"
check_eq "$killed" 1 "$trace: a server was killed while it owned the host"
# the servers write their checkpoints when they stop
E2E_PID=$PID_A
e2e_server_stop
E2E_PID=$PID_B
e2e_server_stop

check_eq "$(e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = '$host'")" "$n" \
	"$trace: every sample of the moving host is stored"
check_eq "$(e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = '$host-ref'")" "$n" \
	"$trace: every sample of the reference host is stored"

project='[.alerts[] | select(.kind != "host_silent") | [.cgroup, .kind, .severity, .state, .started_at, .opened_at, .ended_at, .evidence]] | sort'
replay_project='[.alerts[] | select(.kind != "host_silent") | [.cgroup, .kind, .severity, .state, .started_at, .opened_at, .ended_at]] | sort'
alerts_of() { # alerts_of HOST: the alerts table's rows of HOST as the API gives them
	e2e_psql "SELECT coalesce(json_agg(json_build_object('cgroup', cgroup, 'kind', kind, 'severity', severity,
		'state', state, 'started_at', started_at, 'opened_at', opened_at, 'ended_at', ended_at,
		'evidence', evidence)), '[]') FROM alerts WHERE host = '$1'" | jq -c "{alerts: .} | $project"
}
alerts_of "$host" >"$E2E_DIR/moved.json"
alerts_of "$host-ref" >"$E2E_DIR/ref-alerts.json"
check "$trace: the reference host has alerts" test "$(jq length "$E2E_DIR/ref-alerts.json")" -gt 0
if cmp -s "$E2E_DIR/moved.json" "$E2E_DIR/ref-alerts.json"; then
	ok
else
	bad "$trace: the moving host's alerts differ: $(cat "$E2E_DIR/moved.json") reference $(cat "$E2E_DIR/ref-alerts.json")"
fi
"$REPLAY" "$E2E_DIR/trace.jsonl" | jq -c "$replay_project" >"$E2E_DIR/replay.json"
check "$trace: the moving host's alerts are what replay raises" python3 - "$E2E_DIR/moved.json" "$E2E_DIR/replay.json" <<'PY'
import json, sys
from datetime import datetime
def ms(t):  # PostgreSQL's and the API's spelling of a time, as Unix ms
    return None if t is None else round(datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() * 1000)
def norm(rows):
    return sorted([r[0], r[1], r[2], r[3], ms(r[4]), ms(r[5]), ms(r[6])] for r in rows)
live, replay = (json.load(open(f)) for f in sys.argv[1:3])
assert replay, "replay raised nothing"
assert norm(live) == norm(replay), (norm(live), norm(replay))
PY
check_eq "$(e2e_psql "SELECT count(*) FROM alerts WHERE host = '$host' AND state = 'open' GROUP BY kind, cgroup HAVING count(*) > 1" | wc -l)" 0 \
	"$trace: never two open alerts of one kind and scope"

# the rollups, every column, bucket for bucket (sums merged in other
# portions may differ in the last bits)
rollups_of() {
	e2e_psql "SELECT r.* FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = '$1' ORDER BY bucket_ms" |
		cut -d'|' -f2-
}
rollups_of "$host" >"$E2E_DIR/moved.rollups"
rollups_of "$host-ref" >"$E2E_DIR/ref.rollups"
check "$trace: the reference host has rollups" test -s "$E2E_DIR/ref.rollups"
check "$trace: the moving host's rollups are the reference host's" python3 - "$E2E_DIR/moved.rollups" "$E2E_DIR/ref.rollups" <<'PY'
import sys
a, b = ([l.rstrip("\n").split("|") for l in open(f)] for f in sys.argv[1:3])
assert len(a) == len(b), (len(a), len(b))
for ra, rb in zip(a, b):
    assert len(ra) == len(rb)
    for x, y in zip(ra, rb):
        if x == y:
            continue
        fx, fy = float(x), float(y)
        assert abs(fx - fy) <= 1e-9 * max(1.0, abs(fx), abs(fy)), (ra[:2], x, y)
PY
check_eq "$(e2e_psql "SELECT sum(n) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = '$host'")" \
	"$(e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = '$host'")" \
	"$trace: every sample is in the rollups once"
start_on "$PA" 3600
PID_A=$E2E_PID
start_on "$PB" 3600
PID_B=$E2E_PID
done
E2E_PID=$PID_A
e2e_server_stop
E2E_PID=$PID_B
e2e_server_stop
e2e_done
