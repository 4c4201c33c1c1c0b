#!/usr/bin/env bash
# _lib.sh - sourced by the black-box tests in tests/e2e: a fresh database in
# the cluster of VMSCOPE_TEST_DB, the real server on a free port with a
# token, curl helpers and check counters. Everything started is stopped by
# PID at exit and the database is dropped.
#
#   . "$(dirname "$0")/_lib.sh"
#   e2e_init NAME            fresh database vmscope_e2e_NAME_<pid>; sets E2E_DB
#   e2e_server_start [ARGS]  starts $SERVER against E2E_DB on E2E_PORT (default: a free
#                            port); sets E2E_URL E2E_PID
#   e2e_server_stop          SIGTERM, waits, fails when the exit code is not 0
#                            (a LeakSanitizer report makes it non-zero)
#   e2e_psql SQL             runs SQL in E2E_DB, prints the unaligned result
#   req METHOD PATH [CURL ARGS]  sets STATUS, BODY (and HEADERS)
#   check_status WANT MSG, check_contains TEXT MSG, check_eq A B MSG, check_jq FILTER MSG,
#   check MSG CMD..., json FILTER (jq over the last answer)
#   e2e_run_browser SCRIPT [ENV=VALUE...]  a tests/browser/*.mjs test against E2E_URL
#                            (screenshots to OUT, default tests/out); its counts join ours
#   e2e_receiver_start       starts _receiver.py (a webhook receiver) on a free port in the
#                            background; sets R (its URL) and RECV_LOG (what it got, JSON lines)
#   e2e_receiver_wait        waits until it listens (start it early: python is slow to
#                            start on a loaded machine)
#   e2e_done                 prints "N passed, N failed" and exits accordingly
#
# A test that fails (a check failed, or it exits non-zero) prints the last
# 40 lines of every log in E2E_DIR (the servers' and whatever agent logs the
# test keeps there) before the directory is removed: the cause of a failure
# is often only in the server's log.
# Fails (does not skip) when VMSCOPE_TEST_DB is unset: these tests need a
# real PostgreSQL (make test starts one; or scripts/pg.sh start DIR PORT).
set -uo pipefail

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$E2E_ROOT/tests/e2e/_logtails.sh"
if [ -z "${VMSCOPE_TEST_DB:-}" ]; then
	echo "e2e: VMSCOPE_TEST_DB is not set (run make test, or scripts/pg.sh start DIR PORT" \
	     "and export its conninfo)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
SERVER=${SERVER:-$E2E_ROOT/bin/san/vmscope-server}
[ -x "$SERVER" ] || { echo "e2e: no server binary at $SERVER" >&2; echo "0 passed, 1 failed"; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}

E2E_TOKEN=e2e-token-$RANDOM$RANDOM
E2E_PASS=0
E2E_FAIL=0
E2E_PIDS=()
E2E_DBS=()
E2E_DIR=$(mktemp -d /tmp/vmscope-e2e.XXXXXX)
E2E_DB=
E2E_URL=
E2E_PID=

e2e_admin() { psql "$VMSCOPE_TEST_DB" -v ON_ERROR_STOP=1 -qtAc "$1"; }

# conninfo of database NAME in the test cluster: VMSCOPE_TEST_DB with its
# dbname replaced, so the server's command line names one database
e2e_conninfo() { "$E2E_ROOT/scripts/pg.sh" dbname "$VMSCOPE_TEST_DB" "$1"; }

e2e_db_create() {
	e2e_admin "CREATE DATABASE $1" >/dev/null || { echo "e2e: could not create database $1" >&2; exit 1; }
	E2E_DBS+=("$1")
}

e2e_init() {
	E2E_NAME="vmscope_e2e_$1_$$"
	e2e_db_create "$E2E_NAME"
	E2E_DB=$(e2e_conninfo "$E2E_NAME")
}

e2e_psql() { psql "$E2E_DB" -v ON_ERROR_STOP=1 -qtAc "$1"; }

e2e_cleanup() {
	local rc=$? p
	for p in "${E2E_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${E2E_PIDS[@]}"; do
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	for d in "${E2E_DBS[@]}"; do
		e2e_admin "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1 || true
	done
	if [ "$rc" != 0 ] || [ "$E2E_FAIL" != 0 ]; then log_tails "$E2E_DIR"; fi
	rm -rf "$E2E_DIR"
}
trap e2e_cleanup EXIT

ok() { E2E_PASS=$((E2E_PASS + 1)); }
bad() {
	E2E_FAIL=$((E2E_FAIL + 1))
	echo "FAIL: $*" >&2
	[ -n "${BODY:-}" ] && echo "      last answer: ${STATUS:-} ${BODY:0:400}" >&2
	return 0
}

# Starts the server; extra arguments are passed on. Waits until it answers
# (any status) on /healthz; with E2E_WAIT_HEALTHY=1 (default) until 200.
e2e_server_start() {
	local port
	port=${E2E_PORT:-$("$E2E_ROOT/scripts/freeport.sh")}
	E2E_URL="http://127.0.0.1:$port"
	E2E_LOG="$E2E_DIR/server-$port.log"
	"$SERVER" --listen "127.0.0.1:$port" --db "${E2E_SERVER_DB:-$E2E_DB}" --token "$E2E_TOKEN" \
		--schema "$E2E_ROOT/schema" --web "${E2E_WEB:-$E2E_ROOT/web}" "$@" >"$E2E_LOG" 2>&1 &
	E2E_PID=$!
	E2E_PIDS+=("$E2E_PID")
	local want=${E2E_WAIT_HEALTHY:-1} code
	for _ in $(seq 300); do
		code=$(curl -s -o /dev/null -w '%{http_code}' "$E2E_URL/healthz" 2>/dev/null || true)
		if [ "$want" = 1 ] && [ "$code" = 200 ]; then return 0; fi
		if [ "$want" != 1 ] && [ "$code" != 000 ] && [ -n "$code" ]; then return 0; fi
		if ! kill -0 "$E2E_PID" 2>/dev/null; then
			echo "e2e: the server exited at start (its log follows)" >&2
			exit 1
		fi
		sleep 0.1
	done
	echo "e2e: the server did not become ready (last /healthz: $code; its log follows)" >&2
	exit 1
}

# Stops the last server started; counts a failure when it does not exit 0.
e2e_server_stop() {
	local pid=$E2E_PID rc
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	local keep=()
	for p in "${E2E_PIDS[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
	E2E_PIDS=("${keep[@]+"${keep[@]}"}")
	if [ "$rc" = 0 ]; then
		ok
	else
		BODY=
		bad "server exited with $rc after SIGTERM (sanitizer report?):"
		grep -A30 -E "ERROR: (Leak|Address)Sanitizer|runtime error" "$E2E_LOG" | head -40 >&2
	fi
}

# req METHOD PATH [curl args...]: STATUS, BODY, HEADERS (lower-cased names)
req() {
	local method=$1 path=$2
	shift 2
	local out="$E2E_DIR/body" hdr="$E2E_DIR/headers"
	STATUS=$(curl -s -o "$out" -D "$hdr" -w '%{http_code}' -X "$method" "$@" "$E2E_URL$path" 2>/dev/null)
	BODY=$(cat "$out" 2>/dev/null)
	HEADERS=$(tr 'A-Z' 'a-z' <"$hdr" 2>/dev/null | tr -d '\r')
}

# POST a body (a string) to /api/v1/samples with the token
post() {
	printf '%s' "$1" >"$E2E_DIR/post"
	shift
	req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" \
		-H 'Content-Type: application/json' --data-binary @"$E2E_DIR/post" "$@"
}

check_status() {
	if [ "$STATUS" = "$1" ]; then ok; else bad "$2: status $STATUS, expected $1"; fi
}
check_contains() {
	if [[ "$BODY" == *"$1"* ]]; then ok; else bad "$2: answer lacks \"$1\""; fi
}
check_header() {
	if grep -q "^$1" <<<"$HEADERS"; then ok; else bad "$2: no header \"$1\""; fi
}
check_eq() {
	if [ "$1" = "$2" ]; then ok; else bad "$3: \"$1\", expected \"$2\""; fi
}
# check MSG CMD...: passes when CMD exits 0
check() {
	local msg=$1
	shift
	if "$@" >"$E2E_DIR/check.out" 2>&1; then ok; else bad "$msg: $(tail -3 "$E2E_DIR/check.out")"; fi
}
# every 4xx/5xx is {"error": "..."} JSON
check_json_error() {
	if jq -e '.error | type == "string" and length > 0' <<<"$BODY" >/dev/null 2>&1 &&
	   grep -q '^content-type: application/json' <<<"$HEADERS"; then
		ok
	else
		bad "$1: not a JSON error body"
	fi
}
# json FILTER: a jq filter over the answer, raw output
json() { jq -r "$1" <<<"$BODY" 2>/dev/null; }
# check_jq FILTER MSG: passes when the filter is true for the answer
check_jq() {
	if jq -e "$1" <<<"$BODY" >/dev/null 2>&1; then ok; else bad "$2"; fi
}

# A contract sample: e2e_sample HOST TS_SECONDS [PGPGIN] [EXTRA_JSON_MEMBERS]
e2e_sample() {
	local host=$1 ts=$2 pgpgin=${3:-1000} extra=${4:-}
	printf '{"host":"%s","boot_id":"b-1","ts":%s,"interval_s":10,"kernel":"6.1.0-e2e","page_size":4096,' "$host" "$ts"
	printf '"vmstat":{"pgpgin":%s,"pgscan_kswapd":%s,"pgsteal_kswapd":%s,"workingset_refault_file":7,"pswpin":0,"pswpout":0},' \
		"$pgpgin" "$((pgpgin * 2))" "$pgpgin"
	printf '"meminfo":{"MemTotal":16000000,"MemFree":1000000},'
	printf '"psi":{"memory":{"some":{"avg10":1.5,"avg60":1.0,"avg300":0.5,"total":1000},"full":{"avg10":0.5,"avg60":0.2,"avg300":0.1,"total":500}}},'
	printf '"cgroups":[{"path":"/system.slice/e2e.service","version":2,"memory_stat":{"anon":1,"file":2},"memory_current":123,"memory_max":null,"swap_current":0}]%s}' "$extra"
}

e2e_now() { date +%s; }

# e2e_shift_trace SRC DST: a recorded trace (JSON lines, plain or .gz) with its
# timestamps moved so that it ends 2 s ago (inside retention, not ahead of the
# server's clock)
e2e_shift_trace() {
	python3 - "$1" "$2" <<'PY'
import gzip, json, sys, time
src, dst = sys.argv[1:]
op = gzip.open if src.endswith(".gz") else open
rows = [json.loads(l) for l in op(src, "rt") if l.strip()]
shift = time.time() - 2 - max(r["ts"] for r in rows)
with open(dst, "w") as f:
    for r in rows:
        r["ts"] = round(r["ts"] + shift, 3)
        f.write(json.dumps(r) + "\n")
PY
}

# e2e_run_browser SCRIPT [ENV=VALUE...]: a browser test (it prints its checks
# and "N passed, N failed"); its counts join ours
e2e_run_browser() {
	local script=$1 out="$E2E_DIR/browser.out" summary bp bf
	shift
	env VMSCOPE_URL="$E2E_URL" OUT="${OUT:-$E2E_ROOT/tests/out}" "$@" node "$script" >"$out" 2>&1
	grep -vE '^[0-9]+ passed, [0-9]+ failed$' "$out"
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
	if [ -z "$summary" ]; then
		bad "$script printed no summary"
		return
	fi
	read -r bp _ bf _ <<<"$summary"
	E2E_PASS=$((E2E_PASS + bp))
	E2E_FAIL=$((E2E_FAIL + bf))
}

e2e_receiver_start() {
	RECV_LOG=$E2E_DIR/received.jsonl
	E2E_RECV_PORTFILE=$E2E_DIR/recv.port
	touch "$RECV_LOG"
	local port
	port=$("$E2E_ROOT/scripts/freeport.sh")
	python3 "$E2E_ROOT/tests/e2e/_receiver.py" "$E2E_RECV_PORTFILE" "$RECV_LOG" "$port" &
	E2E_PIDS+=("$!")
	R="http://127.0.0.1:$port"
}

e2e_receiver_wait() {
	for _ in $(seq 150); do [ -s "$E2E_RECV_PORTFILE" ] && return 0; sleep 0.1; done
	echo "e2e: the receiver did not start" >&2
	exit 1
}

e2e_done() {
	echo "$E2E_PASS passed, $E2E_FAIL failed"
	[ "$E2E_FAIL" = 0 ]
	exit $?
}
