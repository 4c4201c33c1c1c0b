#!/usr/bin/env bash
# test_silence_outages.sh - outages of the database and of the server raise
# no host_silent for hosts that sampled the whole time, while a host that
# really stopped still gets one (docs/reliability.md):
#   - 10 real agents at 1 s and one more, "gone", on a cluster of the test's
#     own; server and agents with VMSCOPE_TEST_TIME_SCALE=0.1, which scales
#     the silence threshold (60 -> 6 s), the grace period (90 -> 9 s), the
#     server's tick (10 -> 1 s) and the agents' backoff (1..60 -> 0.1..6 s)
#     alike, so every proportion of production holds at a tenth of the time;
#   - PostgreSQL stopped for 12 s (120 s at full scale, twice the threshold),
#     then the server stopped for 30 s (5 minutes at full scale) and started
#     again, with "gone" stopped just before and left down;
#   - after each outage, once grace + threshold + 5 s have passed: no
#     host_silent for the 10 agents, and one for "gone" (opened after the
#     grace, not at the server's start); "gone" started again resolves it;
#   - no alert anywhere has ended_at before opened_at (090_liveness.sql also
#     refuses it), and every agent delivered every sample it took, once.
. "$(dirname "$0")/_lib.sh"
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}
export VMSCOPE_TEST_TIME_SCALE=0.1
N=10
SETTLE=20 # grace 9 s + threshold 6 s + 5 s

PGD=$E2E_DIR/pg
PGPORT=$("$E2E_ROOT/scripts/freeport.sh")
PG_REAL=$("$E2E_ROOT/scripts/pg.sh" dir "$PGD")
pg_cleanup() {
	e2e_cleanup
	"$E2E_ROOT/scripts/pg.sh" stop "$PG_REAL" >/dev/null 2>&1 || true
	rm -rf "$PG_REAL" 2>/dev/null
}
trap pg_cleanup EXIT
if ! E2E_DB=$(VMSCOPE_PG_FSYNC=off "$E2E_ROOT/scripts/pg.sh" start "$PGD" "$PGPORT" 2>"$E2E_DIR/pg.err"); then
	cat "$E2E_DIR/pg.err" >&2
	bad "could not start a cluster of the test's own"
	e2e_done
fi
export E2E_PORT=$("$E2E_ROOT/scripts/freeport.sh")
e2e_server_start
printf '%s\n' "$E2E_TOKEN" >"$E2E_DIR/token"
chmod 600 "$E2E_DIR/token"

declare -A APID
start_agent() { # start_agent NAME
	"$AGENT" --server "$E2E_URL" --token-file "$E2E_DIR/token" --interval 1 --timeout 2 --host "$1-$$" \
		--spool "$E2E_DIR/spool-$1" >>"$E2E_DIR/agent-$1.log" 2>&1 &
	APID[$1]=$!
	E2E_PIDS+=($!)
}
stop_agent() { # stop_agent NAME
	kill -TERM "${APID[$1]}"
	wait "${APID[$1]}"
	check_eq "$?" 0 "agent $1 exits 0"
}
for i in $(seq $N); do start_agent "a$i"; done
start_agent gone
silent_hosts() { # the hosts with an open host_silent, sorted, space-separated
	e2e_psql "SELECT coalesce(string_agg(host, ' ' ORDER BY host), '') FROM alerts
		WHERE kind = 'host_silent' AND state = 'open'"
}
sleep 12 # past the grace period after the start
check_eq "$(silent_hosts)" "" "no host is silent while everything runs"

# ---- the database stopped for 12 s (120 s at full scale) ----
"$E2E_ROOT/scripts/pg.sh" stop "$PGD" >/dev/null
sleep 12
VMSCOPE_PG_FSYNC=off "$E2E_ROOT/scripts/pg.sh" start "$PGD" "$PGPORT" >/dev/null 2>&1 ||
	bad "could not start PostgreSQL again"
sleep $SETTLE
check_eq "$(silent_hosts)" "" "no host_silent after the database was down twice the silence threshold"
check_eq "$(e2e_psql "SELECT count(*) FROM alerts WHERE kind = 'host_silent'")" 0 \
	"no host_silent opened and resolved either"

# ---- the server down for 30 s (5 minutes at full scale), "gone" stopped for good ----
stop_agent gone
e2e_server_stop
sleep 30
e2e_server_start
up_at=$SECONDS
# "gone" is silent, but not before the grace period after the start
for _ in $(seq 60); do
	[ "$(silent_hosts)" = "gone-$$" ] && break
	sleep 0.5
done
check_eq "$(silent_hosts)" "gone-$$" "the host that stopped gets host_silent after the server's outage"
check "its host_silent waited for the grace period (9 s) after the start" test $((SECONDS - up_at)) -ge 8
sleep $((SETTLE - (SECONDS - up_at) > 0 ? SETTLE - (SECONDS - up_at) : 0))
check_eq "$(silent_hosts)" "gone-$$" "none of the $N agents is silent after the server was down 5 scaled minutes"
check_eq "$(e2e_psql "SELECT count(*) FROM alerts WHERE kind = 'host_silent' AND host <> 'gone-$$'")" 0 \
	"no host_silent was opened for the agents that sampled the whole time"
req GET "/api/v1/alerts?host=gone-$$&kind=host_silent"
check_jq '.alerts[0].evidence.silent_s >= 6 and (.alerts[0].summary | test("no sample for"))' \
	"host_silent's evidence counts from the last arrival"

# "gone" comes back: resolved at its arrival, not at its first (older) sample
start_agent gone
for _ in $(seq 60); do
	[ "$(silent_hosts)" = "" ] && break
	sleep 0.5
done
check_eq "$(silent_hosts)" "" "host_silent resolves when the host posts again"
check_eq "$(e2e_psql "SELECT count(*) FROM alerts WHERE ended_at < opened_at")" 0 "no alert ends before it opened"
check_eq "$(e2e_psql "SELECT count(*) FROM alerts WHERE kind = 'host_silent' AND state = 'resolved' AND ended_at >= opened_at")" 1 \
	"gone's host_silent resolved, ended_at >= opened_at"

# ---- nothing lost: every agent's samples stored once ----
sleep 3
for name in $(seq -f 'a%g' $N); do kill -TERM "${APID[$name]}"; done
for name in $(seq -f 'a%g' $N); do
	wait "${APID[$name]}"
	check_eq "$?" 0 "agent $name exits 0"
	tot=$(grep -o 'totals: [0-9]* samples taken, [0-9]* skipped, [0-9]* delivered' "$E2E_DIR/agent-$name.log" | tail -1)
	taken=$(awk '{print $2}' <<<"$tot")
	delivered=$(awk '{print $7}' <<<"$tot")
	rows=$(e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = '$name-$$'")
	check_eq "$delivered/$rows" "$taken/$taken" "agent $name: delivered and stored = taken ($tot)"
done
e2e_server_stop
e2e_done
