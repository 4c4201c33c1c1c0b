#!/usr/bin/env bash
# test_make_run.sh - the first of the README's two commands, twice in a row:
# scripts/run.sh (what `make run` runs after building) starts a PostgreSQL of
# its own, the server and an agent; this machine shows up in GET
# /api/v1/hosts within 30 s. Run 1 is scripts/run.sh stopped with SIGTERM (as
# a supervisor stops it): exit status 0. Run 2 is `make run` itself stopped
# the way Ctrl-C in a terminal stops it (SIGINT to the whole process group,
# not ignored): make reports no error ("make: *** ... Error 130"). Both stop
# everything (nothing left running or listening on the server's or the
# database's port); the second run on the same var/ directory reuses the
# cluster and the tokens. Each run makes or keeps an admin token
# (var/admin.token, mode 0600) and prints how to use it: a silence needs it
# (401 without a token, 403 with the ingest token, 201 with it). A failure
# prints the tail of each run's log.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. tests/e2e/_logtails.sh
PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $*" >&2; }
VARD=$(mktemp -d /tmp/vmscope-run.XXXXXX)
chmod 0755 "$VARD"
cleanup() {
	scripts/pg.sh stop "$VARD/var/pg" >/dev/null 2>&1
	[ "$FAIL" = 0 ] || log_tails "$VARD"
	rm -rf "$VARD"
}
trap cleanup EXIT
export VMSCOPE_VAR=$VARD/var VMSCOPE_INTERVAL=1 VMSCOPE_BIN=${BIN:-bin}
PORT=$(scripts/freeport.sh)
export VMSCOPE_LISTEN=127.0.0.1:$PORT VMSCOPE_PG_PORT=$(scripts/freeport.sh)
listening() { ss -Hltn "sport = :$1" | grep -q .; }

for run in 1 2; do
	start=$(date +%s)
	if [ "$run" = 1 ]; then
		setsid scripts/run.sh >"$VARD/run$run.log" 2>&1 &
	else
		# a background job of a script starts with SIGINT ignored: give make
		# the default, as a terminal's foreground job has it. MAKEFLAGS of an
		# outer make (make test) would point at a jobserver this make lacks.
		setsid env --default-signal=INT -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
			make --no-print-directory run >"$VARD/run$run.log" 2>&1 &
	fi
	pid=$!
	seen=0
	for _ in $(seq 60); do
		# a sample of this run (the second run's database still has the first's)
		if curl -fsS "http://$VMSCOPE_LISTEN/api/v1/hosts" 2>/dev/null |
			jq -e --arg h "$(hostname)" --argjson t "$start" \
			'any(.hosts[]; .host == $h and .last_seen_ts >= $t)' >/dev/null 2>&1; then
			seen=1; break
		fi
		sleep 0.5
	done
	[ $seen = 1 ] && ok || bad "run $run: this machine not listed within 30 s"
	grep -q "dashboard: http://$VMSCOPE_LISTEN/" "$VARD/run$run.log" && ok || bad "run $run: dashboard address not printed"
	[ -s "$VMSCOPE_VAR/ingest.token" ] && ok || bad "run $run: no generated token"
	[ -s "$VMSCOPE_VAR/admin.token" ] && [ "$(stat -c %a "$VMSCOPE_VAR/admin.token")" = 600 ] && ok ||
		bad "run $run: no admin token readable by its owner only"
	grep -q 'ADMIN_TOKEN=\$(cat .*admin.token)' "$VARD/run$run.log" && ok || bad "run $run: how to use the admin token not printed"
	sil() { curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
		-d '{"host":"'"$(hostname)"'","duration_s":60}' "$@" "http://$VMSCOPE_LISTEN/api/v1/silences"; }
	[ "$(sil)" = 401 ] && ok || bad "run $run: a silence without a token was not 401"
	[ "$(sil -H "Authorization: Bearer $(cat "$VMSCOPE_VAR/ingest.token")")" = 403 ] && ok ||
		bad "run $run: the ingest token could create a silence"
	[ "$(sil -H "Authorization: Bearer $(cat "$VMSCOPE_VAR/admin.token")")" = 201 ] && ok ||
		bad "run $run: the admin token could not create a silence"
	# the page read whole first: `curl | grep -q` fails under pipefail when
	# grep exits at the first match while curl still writes (curl: (23))
	page=$(curl -fsS "http://$VMSCOPE_LISTEN/") && grep -qi "<html" <<<"$page" && ok || bad "run $run: dashboard not served"
	if [ "$run" = 1 ]; then
		kill -TERM "$pid"
	else
		kill -INT -- "-$pid"	# Ctrl-C: the whole process group
	fi
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
	kill -0 "$pid" 2>/dev/null && bad "run $run: still running 20 s after the signal" || ok
	wait "$pid"
	rc=$?
	if [ "$run" = 1 ]; then
		[ "$rc" = 0 ] && ok || bad "run 1: scripts/run.sh exited $rc after SIGTERM, expected 0"
	else
		grep -q '^make.*\*\*\*' "$VARD/run$run.log" &&
			bad "run 2: make reported an error on Ctrl-C: $(grep '^make.*\*\*\*' "$VARD/run$run.log")" || ok
	fi
	listening "$PORT" && bad "run $run: the server's port is still open" || ok
	listening "$VMSCOPE_PG_PORT" && bad "run $run: the database's port is still open" || ok
	pgrep -f "$VMSCOPE_VAR" >/dev/null && bad "run $run: processes left: $(pgrep -af "$VMSCOPE_VAR")" || ok
	grep -q "vmscope: stopped" "$VARD/run$run.log" && ok || bad "run $run: no clean stop message"
done
grep -q "generated an" "$VARD/run2.log" && bad "second run generated a new token" || ok
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
