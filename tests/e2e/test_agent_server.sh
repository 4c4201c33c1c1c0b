#!/usr/bin/env bash
# test_agent_server.sh - the real agent against the real server and
# PostgreSQL: every kernel fixture and this machine's own /proc are accepted
# (gzip'ed batches), stored with their cgroups, and a running agent keeps
# delivering on schedule; stopping the server spools, restarting it drains.
. "$(dirname "$0")/_lib.sh"
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}
cd "$E2E_ROOT"
e2e_init agent
e2e_server_start

declare -A want=([k4.14]=7 [k5.4]=5 [k5.10]=7 [k6.1]=6 [k6.8-hybrid]=12)
for k in "${!want[@]}"; do
	h="fx-${k//./-}"
	check "agent --once posts fixture $k" "$AGENT" --once --server "$E2E_URL" --token "$E2E_TOKEN" \
		--root "tests/fixtures/$k" --host "$h" --spool "$E2E_DIR/spool-$k" --log-level warn
	req GET "/api/v1/hosts/$h"
	check_status 200 "host $h known"
	check_eq "$(json .cgroups)" "${want[$k]}" "cgroups stored for $k"
	check_eq "$(json .kernel)" "$(cat "tests/fixtures/$k/proc/sys/kernel/osrelease")" "kernel of $k"
done

check "agent --once posts this machine" "$AGENT" --once --server "$E2E_URL" --token "$E2E_TOKEN" \
	--host live-once --spool "$E2E_DIR/spool-live" --log-level warn
req GET /api/v1/hosts/live-once
check_status 200 "live host known"

# a running agent at 0.5 s; the server goes away and comes back
"$AGENT" --server "$E2E_URL" --token "$E2E_TOKEN" --interval 0.5 --host live-run \
	--root tests/fixtures/k6.1 --spool "$E2E_DIR/spool-run" --timeout 2 >"$E2E_DIR/agent.log" 2>&1 &
apid=$!
E2E_PIDS+=("$apid")
sleep 3
req GET /api/v1/hosts/live-run
n1=$(json .samples)
check "samples arrive while running ($n1)" test "${n1:-0}" -ge 4
e2e_server_stop
sleep 2.5
# the same port again: the agent knows only that URL
port=${E2E_URL##*:}
"$SERVER" --listen "127.0.0.1:$port" --db "$E2E_DB" --token "$E2E_TOKEN" --schema "$E2E_ROOT/schema" \
	--web "$E2E_ROOT/web" >"$E2E_DIR/server2.log" 2>&1 &
E2E_PID=$!
E2E_PIDS+=("$E2E_PID")
E2E_LOG="$E2E_DIR/server2.log"
for _ in $(seq 100); do
	req GET /api/v1/hosts/live-run
	[ "$(json .samples)" -ge $((n1 + 6)) ] 2>/dev/null && break
	sleep 0.2
done
n2=$(json .samples)
check "samples taken during the outage arrive after it ($n1 -> $n2)" test "${n2:-0}" -ge $((n1 + 6))
kill -TERM "$apid"
wait "$apid"
check_eq "$?" 0 "agent exits 0 on SIGTERM"
check "agent logged the outage" grep -q "could not deliver" "$E2E_DIR/agent.log"
check "no sanitizer report" bash -c "! grep -qE 'Sanitizer|runtime error' '$E2E_DIR/agent.log'"
req GET /api/v1/hosts/live-run
tail -1 "$E2E_DIR/agent.log" | grep -q ", 0 bytes left in the spool" && ok || bad "spool drained at exit"
e2e_server_stop
e2e_done
