#!/usr/bin/env bash
# ingest_cpu.sh - CPU seconds per 1,000 samples of the server, PostgreSQL and
# the load generator in a steady-state ingest run (bench/run.sh phase 1 on
# its own, shorter), for work on the ingest path's CPU (docs/scaling.md).
#
#   bench/ingest_cpu.sh            BENCH_HOSTS (2000) hosts, 20 cgroups, one sample
#                                  per request, 16 connections; BENCH_WARM_S (20) s of
#                                  warm-up so every host exists, then BENCH_INGEST_S (30) s measured
#   SERVER=path/vmscope-server  another server binary (an A/B against the same load generator)
#   PERF=1 bench/ingest_cpu.sh     also `perf record -g` the server over the measured
#                                  run (bench/out/ingest_cpu.perf.data), and the load
#                                  generator (bench/out/ingest_cpu.loadgen.perf.data)
# Prints one JSON line; the load average before and after goes with it.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(pwd)/bench/out
mkdir -p "$OUT"
BIN=${BIN:-bin}
HOSTS=${BENCH_HOSTS:-2000}
PG_PORT=$(scripts/freeport.sh)
server_pid=
perf_pid=
cleanup() {
	[ -n "$perf_pid" ] && kill -INT "$perf_pid" 2>/dev/null && wait "$perf_pid" 2>/dev/null
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	scripts/pg.sh stop "$OUT/pg-cpu"
}
trap cleanup EXIT
rm -rf "$(scripts/pg.sh dir "$OUT/pg-cpu")"/data
BASE=$(scripts/pg.sh start "$OUT/pg-cpu" "$PG_PORT")
PGDATA_DIR=$(scripts/pg.sh dir "$OUT/pg-cpu")/data
. bench/_cpu.sh
SPORT=$(scripts/freeport.sh)
"${SERVER:-$BIN/vmscope-server}" --listen "127.0.0.1:$SPORT" --db "$BASE" --token benchtoken \
	--log-level warn --retention-days 400 >"$OUT/ingest_cpu.server.log" 2>&1 &
server_pid=$!
for _ in $(seq 150); do
	curl -fsS "http://127.0.0.1:$SPORT/healthz" >/dev/null 2>&1 && break
	sleep 0.2
done
lg() {
	$LG_WRAP "$BIN/vmscope-loadgen" --server "http://127.0.0.1:$SPORT" --token benchtoken --hosts "$HOSTS" \
		--cgroups 20 --duration "$1" --concurrency 16 --json
}
LG_WRAP=
lg "${BENCH_WARM_S:-20}" >"$OUT/ingest_cpu.warmup.json"
l0=$(uptime | sed 's/.*load average: //')
if [ "${PERF:-0}" = 1 ]; then
	perf record -g -o "$OUT/ingest_cpu.perf.data" -p "$server_pid" >/dev/null 2>&1 &
	perf_pid=$!
	LG_WRAP="perf record -g -o $OUT/ingest_cpu.loadgen.perf.data --"
fi
s0=$(cpu_of "$server_pid"); p0=$(cpu_of $(pg_pids))
lg "${BENCH_INGEST_S:-30}" >"$OUT/ingest_cpu.json"
s1=$(cpu_of "$server_pid"); p1=$(cpu_of $(pg_pids))
l1=$(uptime | sed 's/.*load average: //')
if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; perf_pid=; fi
python3 - "$OUT/ingest_cpu.json" "$s0" "$s1" "$p0" "$p1" "$TCK" "$l0" "$l1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s0, s1, p0, p1, tck = map(float, sys.argv[2:7])
n = r["samples_ok"]
print(json.dumps({**r, "load_avg_before_after": sys.argv[7:9],
  "server_cpu_s_per_1000": round((s1 - s0) / tck / n * 1000, 3),
  "postgres_cpu_s_per_1000": round((p1 - p0) / tck / n * 1000, 3),
  "loadgen_cpu_s_per_1000": round(r["cpu_s"] / n * 1000, 3) if "cpu_s" in r else None}))
PY
