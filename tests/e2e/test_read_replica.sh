#!/usr/bin/env bash
# test_read_replica.sh - --read-db: the read API answered from a streaming
# standby (PostgreSQL's own replication, docs/scaling.md §3), writes never
# sent there. A primary and a standby made with pg_basebackup on loopback
# ports of their own. While the standby's replay is paused, new samples
# are accepted (the primary took them) but the API does not show them (it
# reads the standby) and /metrics shows the lag; once replay goes on they
# appear and the lag is gone. Every write endpoint works (the standby
# refuses writes, so any write sent there would fail).
. "$(dirname "$0")/_lib.sh"
PRI_DIR=$E2E_DIR/primary
STB_DIR=$E2E_DIR/standby
rr_cleanup() {
	local rc=$? d
	"$E2E_ROOT/scripts/pg.sh" stop "$STB_DIR" 2>/dev/null
	"$E2E_ROOT/scripts/pg.sh" stop "$PRI_DIR" 2>/dev/null
	for d in "$PRI_DIR" "$STB_DIR"; do
		d=$("$E2E_ROOT/scripts/pg.sh" dir "$d" 2>/dev/null)
		[ -n "$d" ] && [ "$d" != / ] && rm -rf "$d"
	done
	(exit "$rc")
	e2e_cleanup
}
trap rr_cleanup EXIT
PPORT=$("$E2E_ROOT/scripts/freeport.sh")
PRIMARY=$("$E2E_ROOT/scripts/pg.sh" start "$PRI_DIR" "$PPORT")
SPORT=$("$E2E_ROOT/scripts/freeport.sh")
STANDBY=$("$E2E_ROOT/scripts/pg.sh" standby "$STB_DIR" "$SPORT" "$PPORT")
check_eq "$(psql "$STANDBY" -qtAc "SELECT pg_is_in_recovery()")" t "the standby is a standby"
E2E_DB=$PRIMARY
ADMIN=admin-$RANDOM$RANDOM
echo "$ADMIN" >"$E2E_DIR/admin.token"
E2E_SERVER_DB=$PRIMARY e2e_server_start --read-db "$STANDBY" --admin-token-file "$E2E_DIR/admin.token"

post_n() { # post_n HOST FROM COUNT: samples FROM.. of HOST, 10 s apart
	local rows="" k
	for ((k = $2; k < $2 + $3; k++)); do
		rows+="$(e2e_sample "$1" $((base + 10 * k)) $((1000 + k))),"
	done
	post "[${rows%,}]"
}
base=$(($(e2e_now) - 3600))
post_n rr-a 0 5
check_status 202 "samples accepted"
check "the standby replays them" sh -c "for i in \$(seq 100); do
	[ \"\$(psql '$STANDBY' -qtAc \"SELECT count(*) FROM samples\")\" = 5 ] && exit 0; sleep 0.1; done; exit 1"
req GET /api/v1/hosts/rr-a
check_status 200 "the host answers"
check_jq '.samples == 5' "with its 5 samples"

psql "$STANDBY" -qtAc "SELECT pg_wal_replay_pause()" >/dev/null
post_n rr-a 5 3
check_status 202 "new samples accepted while the standby does not replay"
check_eq "$(e2e_psql "SELECT samples FROM hosts WHERE name = 'rr-a'")" 8 "the primary has them"
req GET /api/v1/hosts/rr-a
check_jq '.samples == 5' "the API reads the standby: not yet there"
req GET "/api/v1/hosts/rr-a/samples?since=$((base - 1))"
check_eq "$(grep -c '"host"' <<<"$BODY")" 5 "nor in the export"
check "/metrics shows the standby behind" sh -c "for i in \$(seq 60); do
	curl -s '$E2E_URL/metrics' | awk '/^vmscope_read_db_lag_bytes / {exit !(\$2 > 0)} END {if (NR == 0) exit 1}' && exit 0
	sleep 0.5; done; exit 1"
req GET /metrics
check_contains "vmscope_read_db_up 1" "the standby is up"
# writes go to the primary: silences, overrides, forgetting a host
A="Authorization: Bearer $ADMIN"
req POST /api/v1/silences -H "$A" -H 'Content-Type: application/json' -d '{"host":"rr-a","duration_s":600}'
check_status 201 "a silence is created"
req PUT /api/v1/overrides -H "$A" -d '{"overrides":[{"host":"rr-a","kind":"thrash","params":{"enabled":false}}]}'
check_status 200 "overrides stored"
post_n rr-b 0 2
check_status 202 "a new host is added"
req DELETE /api/v1/hosts/rr-b -H "$A"
check_status 200 "and forgotten"

psql "$STANDBY" -qtAc "SELECT pg_wal_replay_resume()" >/dev/null
check "once replayed, the API has them" sh -c "for i in \$(seq 100); do
	curl -s '$E2E_URL/api/v1/hosts/rr-a' | jq -e '.samples == 8' >/dev/null && exit 0; sleep 0.1; done; exit 1"
check "and the lag is gone" sh -c "for i in \$(seq 60); do
	curl -s '$E2E_URL/metrics' | awk '/^vmscope_read_db_lag_bytes / {exit !(\$2 == 0)} END {if (NR == 0) exit 1}' && exit 0
	sleep 0.5; done; exit 1"
check_eq "$(psql "$STANDBY" -qtAc "SELECT count(*) FROM silences")" 1 "the silence reached the standby by replication"
e2e_server_stop
e2e_done
