#!/usr/bin/env bash
# browser.sh CONNINFO - the dashboard's load times at fleet size, in a real
# headless Chromium (bench/browser.mjs), against a database that already
# holds the query phase's history (bench/run.sh phase 4, or any database
# loaded with vmscope-bulkload --prefix fleet / --prefix week):
#   1. tops up fleet-00000 .. fleet-00989 with the last 15 minutes (so the
#      fleet looks live: the ten others stay silent and are shown as such);
#   2. writes a few resolved alerts on week-00001 over the week (so its
#      7-day view shows shaded intervals), once;
#   3. starts the release server on it and runs bench/browser.mjs: fleet view
#      and week-00001's 7-day view, BENCH_BROWSER_RUNS (7) fresh loads each,
#      plus screenshots of the fleet, host and alerts views in
#      bench/out/screens (git-ignored).
# Prints one JSON line {"phase":"browser",...}. Needs node_modules
# (scripts/web-deps.sh) and /usr/bin/chromium. SERVER ($BIN/vmscope-server)
# and WEB (web) pick the server binary and dashboard to time (e.g. an older build to compare);
# BENCH_BROWSER_TOPUP=0 skips step 1 on a repeated run.
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${1:?usage: bench/browser.sh CONNINFO}
BIN=${BIN:-bin}
WEB=${WEB:-web}
SERVER=${SERVER:-$BIN/vmscope-server}
OUT=bench/out
mkdir -p "$OUT"
scripts/web-deps.sh >&2

psql "$DB" -v ON_ERROR_STOP=1 -q <<'SQL'
INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, ended_at, updated_at, summary, evidence)
SELECT 'week-00001', c, k, s, 'resolved', now() - make_interval(hours => a), now() - make_interval(hours => a) + interval '1 minute',
       now() - make_interval(hours => a) + make_interval(mins => d), now(), m, e::jsonb
FROM (VALUES (150, 180, 'thrash', 'critical', NULL, 'file refaults 38000/s with memory PSI some 41% and reclaim efficiency 35%',
              '{"workingset_refault_file_per_s": 38000, "psi_memory_some_pct": 41, "reclaim_efficiency": 0.35}'),
             (100, 90, 'writeback_storm', 'warning', NULL, 'dirty pages at the threshold, immediate-reclaim marking 2100/s',
              '{"nr_dirty_pct_of_threshold": 97, "nr_vmscan_immediate_reclaim_per_s": 2100, "psi_io_some_pct": 23}'),
             (40, 240, 'swap_imbalance', 'warning', '/system.slice/app.service', 'swap-out 900 pages/s while file cache refaults',
              '{"pswpout_per_s": 900, "workingset_refault_file_per_s": 5200, "swappiness": 60}'))
     AS v(a, d, k, s, c, m, e)
WHERE NOT EXISTS (SELECT 1 FROM alerts WHERE host = 'week-00001' AND summary = m);
-- open alerts on a few fleet hosts when the database has none (run.sh writes 50)
INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, ended_at, updated_at, summary, evidence)
SELECT h, c, k, s, 'open', now() - interval '20 minutes', now() - interval '19 minutes', NULL, now(), m, e::jsonb
FROM (VALUES ('fleet-00003', NULL, 'thrash', 'critical', 'file refaults 41000/s with memory PSI some 44%',
              '{"workingset_refault_file_per_s": 41000, "psi_memory_some_pct": 44, "reclaim_efficiency": 0.36}'),
             ('fleet-00017', NULL, 'writeback_storm', 'warning', 'dirty pages at the threshold',
              '{"nr_dirty_pct_of_threshold": 98, "nr_vmscan_immediate_reclaim_per_s": 1800}'),
             ('fleet-00042', '/system.slice/app.service', 'swap_imbalance', 'warning', 'swap-out while file cache refaults',
              '{"pswpout_per_s": 650, "workingset_refault_file_per_s": 4100}'))
     AS v(h, c, k, s, m, e)
WHERE NOT EXISTS (SELECT 1 FROM alerts WHERE state = 'open');
VACUUM ANALYZE;
SQL
# last, so that the hosts are still fresh (not silent) for the screenshots
if [ "${BENCH_BROWSER_TOPUP:-1}" != 0 ]; then
"$BIN/vmscope-bulkload" --db "$DB" --prefix fleet --hosts 990 --hours 0.25 --end-ago 0 --threads 2 >/dev/null
# the load above takes minutes, so its last samples are already that old:
# a last minute, loaded in seconds, so that the 990 are not yet silent
"$BIN/vmscope-bulkload" --db "$DB" --prefix fleet --hosts 990 --hours 0.02 --end-ago 0 --threads 2 >/dev/null
fi

PORT=$(scripts/freeport.sh)
"$SERVER" --listen "127.0.0.1:$PORT" --db "$DB" --token benchtoken --log-level warn \
	--retention-days 400 --web "$WEB" >"$OUT/browser-server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 150); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
# a fresh server first catches up on background work the bulk load left
# (cgroup rollups of the week's raw rows: minutes of CPU after phase 4);
# the views are timed in the steady state a live server runs in, once its
# CPU has settled (under 5 % for 3 s in a row, at most BENCH_SETTLE_S)
settle_t0=$SECONDS quiet=0 ticks0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
while [ $((SECONDS - settle_t0)) -lt "${BENCH_SETTLE_S:-300}" ] && [ "$quiet" -lt 3 ]; do
	sleep 1
	ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	if [ $((ticks - ticks0)) -lt $(( $(getconf CLK_TCK) / 20 )) ]; then quiet=$((quiet + 1)); else quiet=0; fi
	ticks0=$ticks
done
settle_s=$((SECONDS - settle_t0))
load=$(cut -d' ' -f1 /proc/loadavg)
SCREENS=$OUT/screens node bench/browser.mjs "http://127.0.0.1:$PORT" week-00001 "${BENCH_BROWSER_RUNS:-7}" |
	python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"phase":"browser","loadavg_before":float(sys.argv[1]),"server_settle_s":int(sys.argv[2]),**r}))' "$load" "$settle_s"
