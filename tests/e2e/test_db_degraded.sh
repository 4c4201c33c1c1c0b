#!/usr/bin/env bash
# test_db_degraded.sh - a database that answers but cannot take writes is
# reported and answered as "retry later", never 500 and never healthy:
#   1. disk full, for real: the server's database lives in a tablespace on a
#      32 MiB tmpfs of this test's own (WAL and the cluster's catalogs stay on
#      the real disk, so PostgreSQL does not PANIC), filled to the last byte
#      with a file. Ingest answers 503 with Retry-After and an error naming the
#      full disk; /healthz answers 503 {"status":"degraded","database":
#      "writes_failing","reason":"disk_full"}; /metrics counts
#      vmscope_db_write_failures_total{reason="disk_full"} and shows
#      vmscope_db_writes_failing 1. The file removed, ingest answers 202 and
#      /healthz 200 again, with no server restart.
#   2. read-only, as after a failover to a standby: default_transaction_
#      read_only on (ALTER SYSTEM + reload). Ingest 503 naming it, /healthz
#      503 "read_only"; back to 202 and 200 once it is off.
#   3. too many connections (SQLSTATE 53300, refused at login): the
#      server's role gets CONNECTION LIMIT 0 and loses its sessions. Ingest
#      503 naming it (not "unreachable"), /healthz 503
#      "refusing_connections" / "too_many_connections", /metrics counts
#      reason="too_many_connections" and shows vmscope_database_up 0.
#   4. a real agent posting at 1 s through all three: every sample it took is
#      stored exactly once (it kept them while the answers were 503).
# Needs root (the tmpfs mount). A cluster of its own: the shared one of
# make test is never filled or made read-only.
. "$(dirname "$0")/_lib.sh"
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}

PGD=$E2E_DIR/pg
PGPORT=$("$E2E_ROOT/scripts/freeport.sh")
PG_REAL=$("$E2E_ROOT/scripts/pg.sh" dir "$PGD")
TS=$(mktemp -d /tmp/vmscope-diskfull.XXXXXX)
cleanup() {
	e2e_cleanup
	"$E2E_ROOT/scripts/pg.sh" stop "$PG_REAL" >/dev/null 2>&1 || true
	rm -rf "$PG_REAL" 2>/dev/null
	umount "$TS" 2>/dev/null
	rmdir "$TS" 2>/dev/null
}
trap cleanup EXIT
if ! mount -t tmpfs -o "size=32m,mode=0700,uid=$(id -u postgres),gid=$(id -g postgres)" tmpfs "$TS"; then
	bad "could not mount a 32 MiB tmpfs for the tablespace (needs root)"
	e2e_done
fi
if ! OWN=$(VMSCOPE_PG_FSYNC=off "$E2E_ROOT/scripts/pg.sh" start "$PGD" "$PGPORT" 2>"$E2E_DIR/pg.err"); then
	cat "$E2E_DIR/pg.err" >&2
	bad "could not start a cluster of the test's own"
	e2e_done
fi
# the server as an ordinary role (a connection limit does not bind superusers)
psql "$OWN" -v ON_ERROR_STOP=1 -qc "CREATE TABLESPACE small LOCATION '$TS'" &&
	psql "$OWN" -v ON_ERROR_STOP=1 -qc "CREATE ROLE vmsrv LOGIN" &&
	psql "$OWN" -v ON_ERROR_STOP=1 -qc "CREATE DATABASE diskfull OWNER vmsrv TABLESPACE small" ||
	{ bad "could not create the database on the tmpfs"; e2e_done; }
E2E_DB="$OWN dbname=diskfull"
E2E_SERVER_DB="$OWN dbname=diskfull user=vmsrv"
e2e_server_start
printf '%s\n' "$E2E_TOKEN" >"$E2E_DIR/token"
chmod 600 "$E2E_DIR/token"
HOST=degraded-$$
"$AGENT" --server "$E2E_URL" --token-file "$E2E_DIR/token" --interval 1 --host "$HOST" \
	--spool "$E2E_DIR/spool" >"$E2E_DIR/agent.log" 2>&1 &
APID=$!
E2E_PIDS+=("$APID")

# a batch of n samples of host $1 from ts $2 on, one a second: big enough to
# need new pages in the samples table and a partition's index
batch() {
	local host=$1 t=$2 n=$3 out="[" i
	for ((i = 0; i < n; i++)); do
		[ "$i" -gt 0 ] && out+=","
		out+=$(e2e_sample "$host" "$((t + i))" $((1000 + i)))
	done
	printf '%s]' "$out"
}
metric() { curl -s "$E2E_URL/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }

req GET /healthz
check_status 200 "healthz 200 before the faults"
sleep 3

# ---- 1. disk full ----
t0=$(($(e2e_now) - 3000))
dd if=/dev/zero of="$TS/filler" bs=1M >/dev/null 2>&1   # stops at ENOSPC
chown postgres: "$TS/filler"
got=
for i in $(seq 30); do
	post "$(batch "fill-$$" $((t0 + i * 100)) 100)"
	[ "$STATUS" != 202 ] && { got=$STATUS; break; }
done
check_eq "$got" 503 "ingest answers 503 (not 500) when the database's disk is full"
check_header "retry-after: " "the disk-full 503 has Retry-After"
check_json_error "the disk-full 503"
check_contains "disk full" "the 503 says the disk is full"
check_contains "No space left on device" "the 503's detail is the database's message"
req GET /healthz
check_status 503 "healthz 503 while writes fail for a full disk"
check_jq '.status == "degraded" and .database == "writes_failing" and .reason == "disk_full" and .sqlstate == "53100"' \
	"healthz JSON names the state and the reason"
check_jq '(.failing_since | type) == "string" and (.detail | test("No space left"))' "healthz says since when and the database's message"
check "metrics count the disk-full write failures" test "$(metric 'vmscope_db_write_failures_total{reason="disk_full"}')" -ge 1
check_eq "$(metric vmscope_db_writes_failing)" 1 "metrics show writes failing"
sleep 3   # the agent meets the full disk too
rm -f "$TS/filler"
ok202=0
for _ in $(seq 40); do
	post "$(batch "room-$$" "$t0" 50)"
	[ "$STATUS" = 202 ] && { ok202=1; break; }
	sleep 0.25
done
check_eq "$ok202" 1 "ingest answers 202 again once there is room, without a server restart"
req GET /healthz
check_status 200 "healthz 200 again after the disk-full period"
check_eq "$(metric vmscope_db_writes_failing)" 0 "metrics show writes working again"

# ---- 2. read-only (a standby after failover, or default_transaction_read_only) ----
psql "$OWN" -qc "ALTER SYSTEM SET default_transaction_read_only = on" -c "SELECT pg_reload_conf()" >/dev/null
got=
for _ in $(seq 40); do
	post "$(e2e_sample "ro-$$" "$(e2e_now)")"
	[ "$STATUS" != 202 ] && { got=$STATUS; break; }
	sleep 0.25
done
check_eq "$got" 503 "ingest answers 503 while the database is read-only"
check_header "retry-after: " "the read-only 503 has Retry-After"
check_contains "read-only" "the 503 says the database is read-only"
req GET /healthz
check_status 503 "healthz 503 while the database is read-only"
check_jq '.status == "degraded" and (.database == "read_only" or .database == "writes_failing") and .reason == "read_only"' \
	"healthz JSON names the read-only state"
check "metrics count the read-only write failures" test "$(metric 'vmscope_db_write_failures_total{reason="read_only"}')" -ge 1
sleep 3
psql "$OWN" -qc "ALTER SYSTEM RESET default_transaction_read_only" -c "SELECT pg_reload_conf()" >/dev/null
ok202=0
for _ in $(seq 40); do
	post "$(e2e_sample "ro-$$" "$(e2e_now)")"
	[ "$STATUS" = 202 ] && { ok202=1; break; }
	sleep 0.25
done
check_eq "$ok202" 1 "ingest answers 202 once the database is writable again"
req GET /healthz
check_status 200 "healthz 200 once the database is writable again"

# ---- 3. too many connections: a reachable server refusing logins ----
check_eq "$(metric vmscope_database_up)" 1 "metrics show the database up"
psql "$OWN" -qtAc "ALTER ROLE vmsrv CONNECTION LIMIT 0" \
	-c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'vmsrv'" >/dev/null
got=
for _ in $(seq 40); do
	post "$(e2e_sample "conn-$$" "$(e2e_now)")"
	[ "$STATUS" != 202 ] && { got=$STATUS; break; }
	sleep 0.25
done
check_eq "$got" 503 "ingest answers 503 while the role may not connect"
check_header "retry-after: " "the too-many-connections 503 has Retry-After"
check_jq '.error | test("too many connections")' "the 503 names too many connections, not an unreachable database"
req GET /healthz
check_status 503 "healthz 503 while the database refuses connections"
check_jq '.status == "degraded" and .database == "refusing_connections" and .reason == "too_many_connections"' \
	"healthz JSON names the refusal"
check "metrics count the too-many-connections failures" \
	test "$(metric 'vmscope_db_write_failures_total{reason="too_many_connections"}')" -ge 1
check_eq "$(metric vmscope_database_up)" 0 "metrics show the database not usable"
sleep 2
psql "$OWN" -qtAc "ALTER ROLE vmsrv CONNECTION LIMIT -1" >/dev/null
ok202=0
for _ in $(seq 40); do
	post "$(e2e_sample "conn-$$" "$(e2e_now)")"
	[ "$STATUS" = 202 ] && { ok202=1; break; }
	sleep 0.25
done
check_eq "$ok202" 1 "ingest answers 202 once the role may connect again"

# ---- 4. the agent lost nothing ----
deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ]; do
	req GET "/api/v1/hosts/$HOST"
	[ "$STATUS" = 200 ] && [ "$(json '(now - .last_seen_ts) < 2.5')" = true ] && break
	sleep 0.5
done
kill -TERM "$APID"
wait "$APID"
check_eq "$?" 0 "the agent exits 0"
tot=$(grep -o 'totals: [0-9]* samples taken, [0-9]* skipped, [0-9]* delivered' "$E2E_DIR/agent.log" | tail -1)
taken=$(awk '{print $2}' <<<"$tot")
delivered=$(awk '{print $7}' <<<"$tot")
check_eq "$delivered" "$taken" "the agent delivered every sample it took ($tot)"
rows=$(e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = '$HOST'")
check_eq "$rows" "$taken" "rows in the database = samples the agent took"
check "the agent met 503s (it kept its samples)" grep -q "server answered 503" "$E2E_DIR/agent.log"
check_eq "$(e2e_psql "SELECT count(*) FROM hosts h WHERE h.samples <> (SELECT count(*) FROM samples s WHERE s.host_id = h.id)")" 0 \
	"every host's sample counter equals its rows"
check "no 500 was answered" test "$(metric 'vmscope_http_requests_total{code="500"}' | grep -c .)" = 0
e2e_server_stop
e2e_done
