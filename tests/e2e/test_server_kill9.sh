#!/usr/bin/env bash
# test_server_kill9.sh - the server killed with SIGKILL mid-stream and
# started again (docs/reliability.md, 3): 202 means durably committed, so no sample
# that got 202 may be missing afterwards. Four curl loops post numbered
# samples (host k9-N, ts = base + k) as fast as they are answered and record
# each answer; the server is killed -9 while they post, restarted on the
# same address, the loops go on for a while; then every sample answered 202
# must be a row in the database (and a sample answered otherwise may or may
# not be: the client retries it).
. "$(dirname "$0")/_lib.sh"
e2e_init kill9
export E2E_PORT=$("$E2E_ROOT/scripts/freeport.sh")
e2e_server_start
base=$(($(e2e_now) - 300))

poster() {
	local n=$1 k=0 code
	while [ ! -e "$E2E_DIR/stop" ]; do
		e2e_sample "k9-$n-$$" $((base + k)) $((1000 + k)) >"$E2E_DIR/post-$n"
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST \
			-H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Type: application/json' \
			--data-binary @"$E2E_DIR/post-$n" "$E2E_URL/api/v1/samples" 2>/dev/null)
		echo "$k $code" >>"$E2E_DIR/answers-$n"
		k=$((k + 1))
		[ "$code" = 000 ] && sleep 0.05
	done
}
PPIDS=()
for n in 1 2 3 4; do
	poster "$n" &
	PPIDS+=($!)
	E2E_PIDS+=($!)
done

# kill -9 once each loop has had a few samples accepted
for _ in $(seq 200); do
	[ "$(cat "$E2E_DIR"/answers-* 2>/dev/null | grep -c ' 202$')" -ge 40 ] && break
	sleep 0.1
done
kill -KILL "$E2E_PID"
wait "$E2E_PID" 2>/dev/null
before=$(cat "$E2E_DIR"/answers-* | grep -c ' 202$')
sleep 1
e2e_server_start
# let the loops post to the new server for a while
for _ in $(seq 200); do
	[ "$(cat "$E2E_DIR"/answers-* | grep -c ' 202$')" -ge $((before + 40)) ] && break
	sleep 0.1
done
touch "$E2E_DIR/stop"
for p in "${PPIDS[@]}"; do wait "$p"; done

failed_during=$(cat "$E2E_DIR"/answers-* | grep -vc ' 202$')
echo "202 before the kill: $before; answers not 202 (during the kill and restart): $failed_during"
check "some samples were accepted before the kill" test "$before" -ge 40
check "some posts failed while the server was down" test "$failed_during" -ge 1
missing=0
acked=0
for n in 1 2 3 4; do
	awk '$2 == 202 {print $1}' "$E2E_DIR/answers-$n" | sort -n >"$E2E_DIR/acked-$n"
	e2e_psql "SELECT s.ts_ms / 1000 - $base FROM samples s JOIN hosts h ON h.id = s.host_id
		WHERE h.name = 'k9-$n-$$'" | sort -n >"$E2E_DIR/stored-$n"
	m=$(comm -23 "$E2E_DIR/acked-$n" "$E2E_DIR/stored-$n" | wc -l)
	[ "$m" = 0 ] || echo "k9-$n: answered 202 but missing: $(comm -23 "$E2E_DIR/acked-$n" "$E2E_DIR/stored-$n" | head | tr '\n' ' ')" >&2
	missing=$((missing + m))
	acked=$((acked + $(wc -l <"$E2E_DIR/acked-$n")))
done
echo "samples answered 202: $acked"
check_eq "$missing" 0 "every sample answered 202 is in the database after kill -9 and restart"
check "samples were accepted after the restart" test "$acked" -ge $((before + 40))
# every host row's sample counter matches its rows after the crash
check_eq "$(e2e_psql "SELECT count(*) FROM hosts h WHERE h.samples <> (SELECT count(*) FROM samples s WHERE s.host_id = h.id)")" 0 \
	"host sample counters equal the rows after the crash"
e2e_server_stop
e2e_done
