#!/usr/bin/env bash
# test_dashboard.sh - the dashboard in a real headless Chromium against the
# real server and PostgreSQL: a fresh database and the server ($SERVER, the
# sanitizer build under make test) from tests/e2e/_lib.sh, three synthetic
# hosts posted for the last hour (tests/browser/gen_samples.py), then
# tests/browser/dashboard.test.mjs (playwright-core + /usr/bin/chromium).
#
# The thrash alert on db-07 comes from the detectors. Should they raise none
# (a detector retuned), one is written into the alerts table with psql, and
# the test says so, so the alerts view is still tested against real rows.
# The server has an admin token (silences need one): the browser test gives
# it when the page asks. The page runs under the server's
# Content-Security-Policy; a violation fails the test.
# Then every view at three widths and through outages (tests/browser/views.test.mjs,
# which starts servers of its own on the same database), and the page
# against a server with --read-token-file (tests/browser/readtoken.test.mjs).
# Screenshots: tests/out/dashboard-*.png, tests/out/views-*.png. Prints "N passed, N failed" (the
# browser checks plus the servers' clean exits under the sanitizers).
set -uo pipefail
cd "$(dirname "$0")/.."
. tests/e2e/_lib.sh
OUT=${OUT:-$E2E_ROOT/tests/out}
mkdir -p "$OUT"

# uPlot in web/vendor, playwright-core in node_modules (quiet when present)
scripts/web-deps.sh || { echo "test_dashboard: scripts/web-deps.sh failed" >&2; echo "0 passed, 1 failed"; exit 1; }

e2e_init dashboard
ADMIN_TOKEN="admin-$RANDOM$RANDOM"
printf '%s\n' "$ADMIN_TOKEN" >"$E2E_DIR/admin.token"
E2E_WEB="$E2E_ROOT/web" e2e_server_start --admin-token-file "$E2E_DIR/admin.token"

if ! python3 tests/browser/gen_samples.py --url "$E2E_URL" --token "$E2E_TOKEN"; then
	bad "posting the synthetic hosts"
	e2e_done
fi

open_thrash=$(e2e_psql "SELECT count(*) FROM alerts WHERE host = 'db-07' AND kind = 'thrash' AND state = 'open'")
if [ "$open_thrash" = 0 ]; then
	echo "test_dashboard: the detectors raised no thrash alert on db-07; writing one with psql"
	e2e_psql "INSERT INTO alerts (host_id, host, cgroup, kind, severity, state, started_at, opened_at, ended_at, updated_at, summary, evidence)
		VALUES ((SELECT id FROM host_names WHERE name = 'db-07'), 'db-07', NULL, 'thrash', 'critical', 'open',
		        now() - interval '24 minutes', now() - interval '23 minutes', NULL, now(),
		        'file refaults 40000/s with memory PSI some 45% and reclaim efficiency 38%',
		        '{\"workingset_refault_file_per_s\": 40000.0, \"psi_memory_some_pct\": 45.0, \"reclaim_efficiency\": 0.38}')" >/dev/null ||
		bad "writing the fallback alert"
else
	echo "test_dashboard: the detectors raised $open_thrash open thrash alert(s) on db-07"
fi
# a host whose cgroup path holds a right-to-left override (the kernel keeps
# any bytes in a name; the page must show it written out), posted by the
# browser test once the fleet checks are done
e2e_sample bidi-01 $(($(e2e_now) - 30)) | jq -c '.cgroups[0].path = "/evil\u202egnp.exe.slice"' >"$E2E_DIR/bidi.json"

e2e_run_browser tests/browser/dashboard.test.mjs VMSCOPE_ADMIN_TOKEN="$ADMIN_TOKEN" \
	VMSCOPE_INGEST_TOKEN="$E2E_TOKEN" VMSCOPE_BIDI_SAMPLE="$E2E_DIR/bidi.json"

# every view at 1280, 1440 and 1920 px with four hosts more (a recorded
# hybrid cgroup host thrashing, a recorded OOM kill before a host went quiet,
# two Kubernetes nodes with long names, one thrashing in a pod), the
# keyboard and the header's controls, and outages: servers of its own on
# this database (tests/browser/views.test.mjs)
if ! python3 tests/browser/gen_samples.py --url "$E2E_URL" --token "$E2E_TOKEN" --only-recordings; then
	bad "posting the recorded hosts"
fi
e2e_run_browser tests/browser/views.test.mjs VMSCOPE_ADMIN_TOKEN="$ADMIN_TOKEN" SERVER="$SERVER" SERVER_DB="$E2E_DB" SERVER_TOKEN="$E2E_TOKEN" \
	SCHEMA_DIR="$E2E_ROOT/schema" WEB_DIR="$E2E_ROOT/web"
e2e_server_stop

# the same database behind a server that needs a read token
READ_TOKEN="read-$RANDOM$RANDOM"
printf '%s\n' "$READ_TOKEN" >"$E2E_DIR/read.token"
E2E_WEB="$E2E_ROOT/web" e2e_server_start --read-token-file "$E2E_DIR/read.token"
e2e_run_browser tests/browser/readtoken.test.mjs VMSCOPE_READ_TOKEN="$READ_TOKEN"
e2e_server_stop
e2e_done
