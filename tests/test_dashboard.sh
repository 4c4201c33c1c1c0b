#!/usr/bin/env bash
# test_dashboard.sh - the dashboard in a real headless Chromium against the
# real server and PostgreSQL: a fresh database in the test cluster, the server
# ($SERVER, default the sanitizer build) serving web/, three synthetic hosts
# posted for the last hour (tests/browser/gen_samples.py), then
# tests/browser/dashboard.test.mjs (playwright-core + /usr/bin/chromium).
#
# The thrash alert on db-07 comes from the detectors when they raise it; if
# they do not (an engine without that detector), one is written into the
# alerts table with psql, so the alerts view is tested against real rows
# either way. Needs VMSCOPE_TEST_DB (scripts/test.sh sets it). Screenshots
# go to tests/out/dashboard-*.png. Prints "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

if [ -z "${VMSCOPE_TEST_DB:-}" ]; then
	echo "test_dashboard: VMSCOPE_TEST_DB is not set (run it through make test or scripts/test.sh)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
SERVER=${SERVER:-$ROOT/bin/san/vmscope-server}
OUT=${OUT:-$ROOT/tests/out}
mkdir -p "$OUT"
[ -x "$SERVER" ] || { echo "test_dashboard: no server binary at $SERVER" >&2; echo "0 passed, 1 failed"; exit 1; }

# uPlot in web/vendor, playwright-core in node_modules (quiet when present)
scripts/web-deps.sh

DBNAME="vmscope_dash_$$"
DB="${VMSCOPE_TEST_DB/dbname=vmscope/dbname=$DBNAME}"
psql -q "$VMSCOPE_TEST_DB" -c "CREATE DATABASE $DBNAME" >/dev/null

PORT=$(scripts/freeport.sh)
URL="http://127.0.0.1:$PORT"
TOKEN="dash-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	psql -q "$VMSCOPE_TEST_DB" -c "DROP DATABASE IF EXISTS $DBNAME" >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$SERVER" --listen "127.0.0.1:$PORT" --db "$DB" --token "$TOKEN" --web "$ROOT/web" \
	>"$OUT/dashboard-server.log" 2>&1 &
server_pid=$!
for _ in $(seq 150); do
	curl -fsS "$URL/healthz" >/dev/null 2>&1 && break
	kill -0 "$server_pid" 2>/dev/null || { echo "test_dashboard: the server exited" >&2; tail -20 "$OUT/dashboard-server.log" >&2; echo "0 passed, 1 failed"; exit 1; }
	sleep 0.2
done

python3 tests/browser/gen_samples.py --url "$URL" --token "$TOKEN"

open_thrash=$(curl -fsS "$URL/api/v1/alerts?host=db-07&kind=thrash&state=open" |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)["alerts"]))')
if [ "$open_thrash" = 0 ]; then
	echo "test_dashboard: the detectors raised no thrash alert on db-07; writing one with psql"
	psql -q "$DB" -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, ended_at, updated_at, summary, evidence)
VALUES ('db-07', NULL, 'thrash', 'critical', 'open',
        now() - interval '24 minutes', now() - interval '23 minutes', NULL, now(),
        'file refaults 40000/s with memory PSI some 45% and reclaim efficiency 38%',
        '{"workingset_refault_file_per_s": 40000.0, "psi_memory_some_pct": 45.0, "reclaim_efficiency": 0.38}');
SQL
else
	echo "test_dashboard: the detectors raised $open_thrash open thrash alert(s) on db-07"
fi

VMSCOPE_URL="$URL" OUT="$OUT" node tests/browser/dashboard.test.mjs
