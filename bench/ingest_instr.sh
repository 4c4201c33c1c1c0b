#!/usr/bin/env bash
# ingest_instr.sh - the server's instructions per ingested 20-cgroup sample,
# counted by callgrind: the CPU figure of the ingest path that other
# processes on the machine do not move (bench/ingest_cpu.sh's CPU seconds
# move with the load; docs/scaling.md "Ingest on one machine").
#
#   bench/ingest_instr.sh             BENCH_HOSTS (100) hosts, 20 cgroups, BENCH_RATE
#                                     (10) samples/s offered from 4 connections: one
#                                     sample per transaction; BENCH_WARM_S (25) s
#                                     uncounted so that every host is owned, then
#                                     BENCH_INGEST_S (30) s counted
#   SERVER=path/vmscope-server        another server binary (an A/B)
# The server runs under valgrind --tool=callgrind with collection switched on
# (callgrind_control -i on) only around the counted load, so start-up,
# migrations and the first sample of each host are left out; the checkpoint
# thread's work in the window is counted. Prints one JSON line; the profile
# is bench/out/ingest_instr.callgrind (callgrind_annotate --inclusive=yes).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(pwd)/bench/out
mkdir -p "$OUT"
BIN=${BIN:-bin}
PG_PORT=$(scripts/freeport.sh)
vg_pid=
cleanup() {
	[ -n "$vg_pid" ] && kill "$vg_pid" 2>/dev/null && wait "$vg_pid" 2>/dev/null
	scripts/pg.sh stop "$OUT/pg-instr"
}
trap cleanup EXIT
rm -rf "$(scripts/pg.sh dir "$OUT/pg-instr")"/data
BASE=$(scripts/pg.sh start "$OUT/pg-instr" "$PG_PORT")
SPORT=$(scripts/freeport.sh)
rm -f "$OUT"/ingest_instr.callgrind*
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT/ingest_instr.callgrind" \
	"${SERVER:-$BIN/vmscope-server}" --listen "127.0.0.1:$SPORT" --db "$BASE" --token benchtoken \
	--log-level warn --retention-days 400 >"$OUT/ingest_instr.server.log" 2>&1 &
vg_pid=$!
for _ in $(seq 300); do
	curl -fsS "http://127.0.0.1:$SPORT/healthz" >/dev/null 2>&1 && break
	sleep 0.3
done
lg() {
	"$BIN/vmscope-loadgen" --server "http://127.0.0.1:$SPORT" --token benchtoken --hosts "${BENCH_HOSTS:-100}" \
		--cgroups 20 --concurrency 4 --rate "${BENCH_RATE:-10}" --json --duration "$1"
}
lg "${BENCH_WARM_S:-25}" >/dev/null
callgrind_control -i on "$vg_pid" >/dev/null
lg "${BENCH_INGEST_S:-30}" >"$OUT/ingest_instr.json"
callgrind_control -i off "$vg_pid" >/dev/null
callgrind_control -d "$vg_pid" >/dev/null	# the counted window: ingest_instr.callgrind.1
kill "$vg_pid"
wait "$vg_pid" 2>/dev/null || true
vg_pid=
rm -f "$OUT/ingest_instr.callgrind"	# the uncounted rest, dumped at exit
mv "$OUT/ingest_instr.callgrind.1" "$OUT/ingest_instr.callgrind"
ir=$(callgrind_annotate "$OUT/ingest_instr.callgrind" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
python3 - "$OUT/ingest_instr.json" "$ir" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n, ir = r["samples_ok"], int(sys.argv[2])
print(json.dumps({"samples_ok": n, "requests_failed": r["requests_failed"], "instructions": ir,
                  "instructions_per_sample": round(ir / max(n, 1))}))
PY
