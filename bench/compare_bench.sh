#!/usr/bin/env bash
# compare_bench.sh - latency of GET /api/v1/compare over a 1,000-host,
# 24-hour fleet on two kernel releases (the goal: under 1 s).
#
# Bulk-loads BENCH_CMP_HOSTS (1000) hosts x BENCH_CMP_HOURS (24) h through
# the storage layer (bench/bulkload.c --kernel-split: even hosts run
# 6.1.0-18-amd64, odd ones 6.1.0-21-amd64) at BENCH_CMP_INTERVAL (300) s
# per sample, adds 5,000 alerts over the day, starts the release server
# and times the group listing and the comparison with bench/querylat.py
# (BENCH_CMP_QUERIES, 20 each), then one run of the kernel-regression
# watch over the same day (its report's duration; the server that times the
# queries has the watch off). The comparison reads only the 5-minute
# rollups, one row per host and bucket whatever the sampling interval, so
# 300 s samples give the same 288,000 rollup rows as 10 s ones in 1/30 of
# the load time (a 10 s load is BENCH_CMP_INTERVAL=10, ~3 h here).
#
# Prints one JSON object per line (phase bulkload_compare, then query).
# Uses the cluster at BENCH_PG_BASE (a conninfo, as bench/run.sh passes)
# or starts its own in bench/out/compare-pg. BIN (bin) holds the release
# binaries (make all bench-build).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
OUT=bench/out
mkdir -p "$OUT"
HOSTS=${BENCH_CMP_HOSTS:-1000}
HOURS=${BENCH_CMP_HOURS:-24}
INTERVAL=${BENCH_CMP_INTERVAL:-300}
N=${BENCH_CMP_QUERIES:-20}
own_pg=
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; fi
	if [ -n "$own_pg" ]; then scripts/pg.sh stop "$OUT/compare-pg" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
# BENCH_CMP_REUSE=1: query the database an earlier run loaded (own cluster only)
REUSE=${BENCH_CMP_REUSE:-}
if [ -n "${BENCH_PG_BASE:-}" ]; then
	BASE=$BENCH_PG_BASE
	REUSE=
else
	[ -n "$REUSE" ] || rm -rf "$(scripts/pg.sh dir "$OUT/compare-pg")"/data
	BASE=$(scripts/pg.sh start "$OUT/compare-pg" "$(scripts/freeport.sh)")
	own_pg=1
fi
DB="${BASE/dbname=vmscope/dbname=bench_compare}"
if [ -z "$REUSE" ]; then
psql "$BASE" -v ON_ERROR_STOP=1 -qtAc "DROP DATABASE IF EXISTS bench_compare" >/dev/null
psql "$BASE" -v ON_ERROR_STOP=1 -qtAc "CREATE DATABASE bench_compare" >/dev/null

"$BIN/vmscope-bulkload" --db "$DB" --prefix cmp --hosts "$HOSTS" --hours "$HOURS" --interval "$INTERVAL" \
	--cgroups 0 --threads 2 --kernel-split 6.1.0-18-amd64,6.1.0-21-amd64 |
	python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"phase":"bulkload_compare","interval_s":float(sys.argv[1]),**r}))' "$INTERVAL"
# 5,000 resolved writeback_storm / thrash alerts of 10 minutes over the day
psql "$DB" -v ON_ERROR_STOP=1 -q <<SQL
INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, ended_at, updated_at, summary, evidence)
SELECT format('cmp-%s', lpad((g % $HOSTS)::text, 5, '0')), NULL,
       (ARRAY['writeback_storm','thrash'])[1 + (g / 7) % 2], 'warning', 'resolved',
       now() - make_interval(secs => (g * 17) % 86000 + 600), now() - make_interval(secs => (g * 17) % 86000 + 570),
       now() - make_interval(secs => (g * 17) % 86000), now(), 'bench alert', '{}'
FROM generate_series(1, 5000) g;
ANALYZE;
SQL
fi
rows=$(psql "$DB" -qtAc "SELECT count(*) FROM rollup_5m")

SPORT=$(scripts/freeport.sh)
"$BIN/vmscope-server" --listen "127.0.0.1:$SPORT" --db "$DB" --token benchtoken --log-level warn \
	--retention-days 400 --regression-every 0 >"$OUT/compare-server.log" 2>&1 &
server_pid=$!
for _ in $(seq 150); do
	curl -fsS "http://127.0.0.1:$SPORT/healthz" >/dev/null 2>&1 && break
	sleep 0.2
done
# CPU seconds (user + sys, clock ticks) of the server and of every
# PostgreSQL process: on a loaded machine wall time says little, the CPU
# one answer costs is what it would take on an idle core
TCK=$(getconf CLK_TCK)
PGDATA_DIR=$(psql "$DB" -qtAc "SHOW data_directory")
cpu_of() {
	local total=0 p
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] || continue
		total=$((total + $(awk '{print $14+$15}' "/proc/$p/stat")))
	done
	echo "$total"
}
pg_pids() { local pm; pm=$(head -1 "$PGDATA_DIR/postmaster.pid"); echo "$pm $(ps -o pid= --ppid "$pm" | tr '\n' ' ')"; }
# plus what exited children (parallel workers) used, reaped by the postmaster
pg_cpu() { local pm; pm=$(head -1 "$PGDATA_DIR/postmaster.pid"); echo $(($(cpu_of $(pg_pids)) + $(awk '{print $16+$17}' "/proc/$pm/stat"))); }
S="http://127.0.0.1:$SPORT/api/v1/compare"
for u in "$S?group_by=kernel" "$S?group_by=kernel&a=6.1.0-18-amd64&b=6.1.0-21-amd64" \
	"$S?group_by=kernel&a=6.1.0-18-amd64&b=6.1.0-21-amd64&label=role:bench"; do
	s0=$(cpu_of "$server_pid"); p0=$(pg_cpu)
	bench/querylat.py "$u" "$N" >"$OUT/compare-lat.json"
	s1=$(cpu_of "$server_pid"); p1=$(pg_cpu)
	python3 - "$OUT/compare-lat.json" "$rows" "$s0" "$s1" "$p0" "$p1" "$TCK" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); rows = int(sys.argv[2]); s0, s1, p0, p1, tck = map(float, sys.argv[3:8])
n = r["n"] + 2  # querylat's two warm-up requests ran too
print(json.dumps({"phase": "query", "rollup_rows": rows, **r,
  "server_cpu_ms": round((s1 - s0) / tck / n * 1000, 1),
  "postgres_cpu_ms": round((p1 - p0) / tck / n * 1000, 1), "load": float(sys.argv[8])}))
PY
done
curl -fsS "$S?group_by=kernel&a=6.1.0-18-amd64&b=6.1.0-21-amd64" >"$OUT/compare-answer.json"

# one run of the kernel-regression watch over the day: 6.1.0-21 (half the
# hosts) against 6.1.0-18, every figure, as the watch's own report times it
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
psql "$DB" -qtAc "UPDATE regression_watch SET last_run_at = NULL, last_report = NULL" >/dev/null
"$BIN/vmscope-server" --listen "127.0.0.1:$SPORT" --db "$DB" --token benchtoken --log-level warn \
	--retention-days 400 --regression-every 3600 --regression-window $((HOURS * 3600)) \
	>"$OUT/compare-server.log" 2>&1 &
server_pid=$!
for _ in $(seq 600); do
	curl -fsS "http://127.0.0.1:$SPORT/api/v1/regression" 2>/dev/null >"$OUT/regression-report.json" &&
		jq -e '.last_run != null' "$OUT/regression-report.json" >/dev/null 2>&1 && break
	sleep 0.5
done
jq -c --argjson hosts "$HOSTS" '{phase: "regression_run", hosts: $hosts, window_s: .last_run.window_s,
	duration_ms: .last_run.duration_ms, tests: .last_run.tests,
	releases: [.last_run.releases[] | {release, hosts, status}]}' "$OUT/regression-report.json"
