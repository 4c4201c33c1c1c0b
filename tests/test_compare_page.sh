#!/usr/bin/env bash
# test_compare_page.sh - the compare page (web/js/compare.js) in a real
# headless Chromium against the real server ($SERVER, the sanitizer build
# under make test) and PostgreSQL: a fresh database, recorded corpus traces
# replayed as 11 hosts (tests/browser/compare_hosts.py: 5 healthy-busy hosts
# on kernel 6.1.0-13-amd64, 5 writeback hosts on 6.6.0-3-amd64, one idle host
# on 5.10.0-28-amd64, labelled rollout and role), then
# tests/browser/compare.test.mjs (playwright-core + /usr/bin/chromium): the
# groups listed, A/B chosen, the writeback group marked worse with
# significance, swap, window, label grouping and filter, an empty group.
# Screenshot: tests/out/dashboard-compare.png. Prints "N passed, N failed"
# (the browser checks plus the server's clean exit under the sanitizers).
set -uo pipefail
cd "$(dirname "$0")/.."
. tests/e2e/_lib.sh
OUT=${OUT:-$E2E_ROOT/tests/out}
mkdir -p "$OUT"

scripts/web-deps.sh || { echo "test_compare_page: scripts/web-deps.sh failed" >&2; echo "0 passed, 1 failed"; exit 1; }

e2e_init comparepage
E2E_WEB="$E2E_ROOT/web" e2e_server_start

if python3 tests/browser/compare_hosts.py --url "$E2E_URL" --token "$E2E_TOKEN"; then
	ok
else
	bad "posting the replayed hosts"
	e2e_done
fi

e2e_run_browser tests/browser/compare.test.mjs CMP_A=6.1.0-13-amd64 CMP_B=6.6.0-3-amd64 \
	CMP_WORSE=psi_memory_some,refault_file,alert_minutes_writeback_storm,immediate_reclaim
e2e_server_stop
e2e_done
