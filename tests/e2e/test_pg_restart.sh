#!/usr/bin/env bash
# test_pg_restart.sh - PostgreSQL stopped and started again while agents
# post (docs/reliability.md, 1 and 2): a cluster of this test's own (the shared
# one of make test is never restarted), the server against it, three real
# agents (--interval 1) and a fleet of simulated agents (tests/e2e/_fleet.py,
# FLEET agents, default 200, retrying like an agent). PostgreSQL is stopped
# for a few seconds:
#   - ingest answers 503 with Retry-After and /healthz 503 meanwhile;
#   - after the restart /healthz is 200 again without restarting the server;
#   - every sample the agents took is stored exactly once: per real agent the
#     "N samples taken ... N delivered" totals it logs at exit match the rows
#     in the database, contiguous at 1 s; per simulated agent the rows equal
#     the samples it got 202 for, which equal the samples it took;
#   - the hosts' sample counters equal the rows (no double counting of retries);
#   - the server still exits clean (ASan/LSan) after the outage.
# FLEET_SECONDS (default 20) is the fleet's sampling time; make soak runs it
# for 120 s.
. "$(dirname "$0")/_lib.sh"
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}
FLEET=${FLEET:-200}
FLEET_SECONDS=${FLEET_SECONDS:-20}

# our own cluster, stopped at exit (after the server and the agents)
PGD=$E2E_DIR/pg
PGPORT=$("$E2E_ROOT/scripts/freeport.sh")
# Where the cluster really lives, fixed now: as root, a 0700 temp dir sends it
# to /var/tmp, and once e2e_cleanup has removed $E2E_DIR the same question
# would get a different answer (and the cluster would be left running).
PG_REAL=$("$E2E_ROOT/scripts/pg.sh" dir "$PGD")
pg_cleanup() {
	e2e_cleanup
	"$E2E_ROOT/scripts/pg.sh" stop "$PG_REAL" >/dev/null 2>&1 || true
	rm -rf "$PG_REAL" 2>/dev/null
}
trap pg_cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
if ! OWN_DB=$(VMSCOPE_PG_FSYNC=off "$E2E_ROOT/scripts/pg.sh" start "$PGD" "$PGPORT" 2>"$E2E_DIR/pg.err"); then
	cat "$E2E_DIR/pg.err" >&2
	bad "could not start a cluster of the test's own"
	e2e_done
fi
E2E_DB=$OWN_DB
e2e_server_start
printf '%s\n' "$E2E_TOKEN" >"$E2E_DIR/token"
chmod 600 "$E2E_DIR/token"

APIDS=()
for n in 1 2 3; do
	"$AGENT" --server "$E2E_URL" --token-file "$E2E_DIR/token" --interval 1 --host "h-$n-$$" \
		--spool "$E2E_DIR/spool-$n" >"$E2E_DIR/agent-$n.log" 2>&1 &
	APIDS+=($!)
	E2E_PIDS+=($!)
done
python3 "$E2E_ROOT/tests/e2e/_fleet.py" "$E2E_URL" "$E2E_TOKEN" "$FLEET" "$FLEET_SECONDS" 60 \
	>"$E2E_DIR/fleet.json" 2>"$E2E_DIR/fleet.err" &
FLEET_PID=$!
E2E_PIDS+=($FLEET_PID)

# let everything post for a while, then take PostgreSQL away mid-stream
sleep $((FLEET_SECONDS / 3 > 4 ? FLEET_SECONDS / 3 : 4))
req GET /healthz
check_status 200 "healthz 200 before the outage"
"$E2E_ROOT/scripts/pg.sh" stop "$PGD" >/dev/null
down_at=$SECONDS
got503=0
gothz=0
for _ in $(seq 40); do
	post "$(e2e_sample probe-$$ "$(e2e_now)")"
	if [ "$STATUS" = 503 ] && grep -q '^retry-after: [0-9]' <<<"$HEADERS"; then got503=1; fi
	req GET /healthz
	[ "$STATUS" = 503 ] && gothz=1
	[ $got503 = 1 ] && [ $gothz = 1 ] && [ $((SECONDS - down_at)) -ge 4 ] && break
	sleep 0.25
done
check_eq "$got503" 1 "ingest answers 503 with Retry-After while PostgreSQL is down"
check_eq "$gothz" 1 "/healthz answers 503 while PostgreSQL is down"
# every read endpoint on its database-error path (the leak check at exit covers these)
for p in /api/v1/hosts "/api/v1/hosts/h-1-$$" "/api/v1/hosts/h-1-$$/cgroups" "/api/v1/hosts/h-1-$$/metrics" \
	"/api/v1/hosts/h-1-$$/series?metric=vmstat.pgpgin" /api/v1/fleet /api/v1/alerts; do
	req GET "$p" -H "Authorization: Bearer $E2E_TOKEN"
	check_status 503 "GET $p while PostgreSQL is down"
	check_json_error "GET $p 503"
done
req GET /metrics -H "Authorization: Bearer $E2E_TOKEN"
check_status 200 "/metrics answers without the database"
check "/metrics says vmscope_database_up 0 while PostgreSQL is down" grep -qx 'vmscope_database_up 0' <<<"$BODY"
VMSCOPE_PG_FSYNC=off "$E2E_ROOT/scripts/pg.sh" start "$PGD" "$PGPORT" >/dev/null 2>&1
healthy=0
for _ in $(seq 120); do
	req GET /healthz
	[ "$STATUS" = 200 ] && { healthy=1; break; }
	sleep 0.25
done
check_eq "$healthy" 1 "/healthz 200 again after PostgreSQL is back, without a server restart"
req GET /metrics
check "/metrics says vmscope_database_up 1 once PostgreSQL is back" grep -qx 'vmscope_database_up 1' <<<"$BODY"
check "the server is the same process" kill -0 "$E2E_PID"

# the fleet stops sampling after FLEET_SECONDS and drains its queues
wait "$FLEET_PID"
check_eq "$?" 0 "the simulated fleet ran"
FJ=$(cat "$E2E_DIR/fleet.json")
BODY=$FJ
check_jq '.statuses["503"] > 0' "the fleet saw 503s during the outage"
check_jq '.retry_after_missing == 0' "every 503 had Retry-After"
check_jq '.unexpected == []' "no answer other than 202/503/429/connection errors"
check_jq '.left == 0' "the fleet drained every queued sample"
check_jq '.taken == .accepted' "every sample the fleet took got 202 exactly once"
echo "fleet: $(jq -c '{taken, accepted, statuses}' <<<"$FJ")"

# real agents: wait until their spools are empty (a fresh sample is stored), then stop them
deadline=$((SECONDS + 60))
for n in 1 2 3; do
	while [ $SECONDS -lt $deadline ]; do
		req GET "/api/v1/hosts/h-$n-$$"
		[ "$(json '(now - .last_seen_ts) < 2.5')" = true ] && break
		sleep 0.5
	done
done
for i in 0 1 2; do
	kill -TERM "${APIDS[$i]}"
	wait "${APIDS[$i]}"
	check_eq "$?" 0 "agent $((i + 1)) exits 0"
done
for n in 1 2 3; do
	tot=$(grep -o 'totals: [0-9]* samples taken, [0-9]* skipped, [0-9]* delivered' "$E2E_DIR/agent-$n.log" | tail -1)
	taken=$(awk '{print $2}' <<<"$tot")
	skipped=$(awk '{print $5}' <<<"$tot")
	delivered=$(awk '{print $7}' <<<"$tot")
	check_eq "$delivered" "$taken" "agent $n delivered every sample it took ($tot)"
	rows=$(e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = 'h-$n-$$'")
	check_eq "$rows" "$taken" "agent $n: rows in the database = samples taken"
	# the agent takes its first sample at start and the next on the first
	# aligned tick at least half an interval later: that first gap is 0.5 to
	# 1.5 s (plus the scheduling delay), every later one 1 s
	gaps=$(e2e_psql "SELECT count(*) FROM (SELECT ts_ms - lag(ts_ms) OVER (ORDER BY ts_ms) AS g,
		row_number() OVER (ORDER BY ts_ms) AS i FROM samples s
		JOIN hosts h ON h.id = s.host_id WHERE h.name = 'h-$n-$$') x
		WHERE (i = 2 AND g NOT BETWEEN 400 AND 2100) OR (i > 2 AND g NOT BETWEEN 400 AND 1600)")
	# a tick the agent itself was too late for is "skipped" in its totals, not lost
	check "agent $n: stored timestamps contiguous at 1 s across the outage ($gaps gaps, $skipped skipped)" \
		test "$gaps" -le "$skipped"
done

# simulated agents: rows per host = taken, contiguous, counter = rows
jq -r '.hosts | to_entries[] | "\(.key) \(.value.taken) \(.value.first_ts) \(.value.last_ts)"' <<<"$FJ" \
	| sort >"$E2E_DIR/want"
e2e_psql "SELECT h.name, count(*), min(ts_ms) / 1000, max(ts_ms) / 1000 FROM samples s
	JOIN hosts h ON h.id = s.host_id WHERE h.name LIKE 'sim-%' GROUP BY h.name" | tr '|' ' ' | sort >"$E2E_DIR/got"
check "fleet: every host's rows = samples taken, first..last contiguous" diff "$E2E_DIR/want" "$E2E_DIR/got"
check_eq "$(wc -l <"$E2E_DIR/got")" "$FLEET" "fleet: every simulated host stored"
total=$(e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name LIKE 'sim-%'")
check_eq "$total" "$(jq .accepted <<<"$FJ")" "fleet: rows in the database = samples answered 202"
check_eq "$(e2e_psql "SELECT count(*) FROM hosts h WHERE h.samples <> (SELECT count(*) FROM samples s WHERE s.host_id = h.id)")" 0 \
	"every host's sample counter equals its rows (retries not counted twice)"

e2e_server_stop
e2e_done
