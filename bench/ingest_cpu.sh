#!/usr/bin/env bash
# ingest_cpu.sh - CPU seconds per 1,000 samples of the server, PostgreSQL and
# the load generator in a steady-state ingest run (bench/run.sh phase 1 on
# its own, shorter), for work on the ingest path's CPU (docs/scaling.md).
#
#   bench/ingest_cpu.sh            BENCH_HOSTS (2000) hosts, 20 cgroups, one sample
#                                  per request, 16 connections; BENCH_WARM_S (20) s of
#                                  warm-up so every host exists, then BENCH_INGEST_S (30) s measured
#   SERVER=path/vmscope-server  another server binary (an A/B against the same load generator)
#   BENCH_PGSS=1 bench/ingest_cpu.sh   also the measured run's statement mix (pg_stat_statements)
#                                  and what PostgreSQL wrote for it: WAL bytes, records and
#                                  full-page images per sample, commits and WAL fsyncs,
#                                  checkpoints, rows inserted/updated/HOT-updated per table
#                                  (TOAST tables included), in bench/out/ingest_cpu.pgstats.txt
#   BENCH_RATE=N bench/ingest_cpu.sh   the measured run open loop at N samples/s (64
#                                  connections): the same work whatever the machine's load,
#                                  for A/B runs (closed-loop throughput, and with it the
#                                  group-commit batch sizes, move with the other processes)
#   BENCH_CONC=N                   connections of the open-loop run (64)
#   per second of the measured run: answers, p50, p99, max in bench/out/ingest_cpu.timeline.txt
#                                  (its start in ingest_cpu.timeline.start); autovacuum and
#                                  checkpoints are logged with times in the cluster's postgres.log
#   PERF=1 bench/ingest_cpu.sh     also `perf record -g` the server over the measured
#                                  run (bench/out/ingest_cpu.perf.data), and the load
#                                  generator (bench/out/ingest_cpu.loadgen.perf.data)
#   PERF_PG=1 bench/ingest_cpu.sh  also `perf record -g` PostgreSQL's processes over the
#                                  measured run (bench/out/ingest_cpu.pg.perf.data)
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
pgperf_pid=
cleanup() {
	[ -n "$perf_pid" ] && kill -INT "$perf_pid" 2>/dev/null && wait "$perf_pid" 2>/dev/null
	[ -n "$pgperf_pid" ] && kill -INT "$pgperf_pid" 2>/dev/null && wait "$pgperf_pid" 2>/dev/null
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	scripts/pg.sh stop "$OUT/pg-cpu"
}
trap cleanup EXIT
rm -rf "$(scripts/pg.sh dir "$OUT/pg-cpu")"/data
BASE=$(scripts/pg.sh start "$OUT/pg-cpu" "$PG_PORT")
PGDATA_DIR=$(scripts/pg.sh dir "$OUT/pg-cpu")/data
if [ "${BENCH_PGSS:-0}" = 1 ]; then
	psql "$BASE" -qtAc "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'" >/dev/null
	scripts/pg.sh stop "$OUT/pg-cpu"
	BASE=$(scripts/pg.sh start "$OUT/pg-cpu" "$PG_PORT")
	# plans and planning time per statement too
	psql "$BASE" -qtAc "ALTER SYSTEM SET pg_stat_statements.track_planning = on" -c "SELECT pg_reload_conf()" >/dev/null
fi
# what PostgreSQL did in the background, with times, for the per-second
# latency timeline (bench/out/ingest_cpu.timeline.txt; PostgreSQL's log: pg-cpu/postgres.log)
psql "$BASE" -qtAc "ALTER SYSTEM SET log_autovacuum_min_duration = 0" -c "ALTER SYSTEM SET log_checkpoints = on" \
	-c "SELECT pg_reload_conf()" >/dev/null
. bench/_cpu.sh
# pgprocs: "PID TICKS TITLE" of the postmaster's processes (backends, WAL
# writer, autovacuum, ...), for where PostgreSQL's CPU went
pgprocs() {
	local p
	for p in $(pg_pids); do
		[ -r "/proc/$p/stat" ] || continue
		echo "$p $(awk '{print $14+$15}' "/proc/$p/stat") $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-60)"
	done
}
# pgstats FILE: a snapshot of the cluster-wide write counters (JSON), for the
# difference over the measured run
pgstats() {
	psql "$BASE" -qtAc "SELECT json_build_object(
	  'lsn', pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0'),
	  'wal', (SELECT row_to_json(w) FROM pg_stat_wal w),
	  'bgw', (SELECT row_to_json(b) FROM pg_stat_bgwriter b),
	  'db', (SELECT row_to_json(d) FROM pg_stat_database d WHERE datname = current_database()),
	  'tables', (SELECT json_object_agg(t.schemaname || '.' || coalesce(c.relname, t.relname),
	    json_build_object('ins', t.n_tup_ins, 'upd', t.n_tup_upd, 'hot', t.n_tup_hot_upd, 'del', t.n_tup_del))
	    FROM pg_stat_all_tables t LEFT JOIN pg_class c ON c.reltoastrelid = t.relid
	    WHERE t.schemaname IN ('public', 'pg_toast')))" >"$1"
}
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
		--cgroups 20 --duration "$1" --json "${@:2}"
}
LG_WRAP=
lg "${BENCH_WARM_S:-20}" --concurrency 16 >"$OUT/ingest_cpu.warmup.json"
l0=$(uptime | sed 's/.*load average: //')
if [ "${PERF:-0}" = 1 ]; then
	perf record ${PERF_OPTS:--g} -o "$OUT/ingest_cpu.perf.data" -p "$server_pid" >/dev/null 2>&1 &
	perf_pid=$!
	LG_WRAP="perf record -g -o $OUT/ingest_cpu.loadgen.perf.data --"
fi
if [ "${PERF_PG:-0}" = 1 ]; then
	perf record ${PERF_OPTS:--g} -o "$OUT/ingest_cpu.pg.perf.data" -p "$(pg_pids | tr -s ' ' '\n' | grep . | paste -sd,)" \
		>/dev/null 2>&1 &
	pgperf_pid=$!
fi
if [ "${BENCH_PGSS:-0}" = 1 ]; then
	psql "$BASE" -qtAc "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()" >/dev/null
	sleep 1.1	# PostgreSQL 15 flushes backends' table counters at most once a second
	pgstats "$OUT/ingest_cpu.pgstats0.json"
	pgprocs >"$OUT/ingest_cpu.procs0.txt"
fi
xacts() { psql "$BASE" -qtAc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"; }
# context switches of the server's threads (waking and sleeping cost CPU in this VM)
ctxsw() { cat /proc/"$server_pid"/task/*/status 2>/dev/null | awk '/_ctxt_switches/ {n += $2} END {print n + 0}'; }
x0=$(xacts); c0=$(ctxsw)
s0=$(cpu_of "$server_pid"); p0=$(cpu_of $(pg_pids))
date -u +%s.%N >"$OUT/ingest_cpu.timeline.start"
if [ -n "${BENCH_RATE:-}" ]; then
	lg "${BENCH_INGEST_S:-30}" --concurrency "${BENCH_CONC:-64}" --rate "$BENCH_RATE" \
		--timeline "$OUT/ingest_cpu.timeline.txt" >"$OUT/ingest_cpu.json"
else
	lg "${BENCH_INGEST_S:-30}" --concurrency 16 --timeline "$OUT/ingest_cpu.timeline.txt" >"$OUT/ingest_cpu.json"
fi
s1=$(cpu_of "$server_pid"); p1=$(cpu_of $(pg_pids)); c1=$(ctxsw)
sleep 1.1	# PostgreSQL 15 flushes backends' counters at most once a second
x1=$(xacts)
if [ "${BENCH_PGSS:-0}" = 1 ]; then
	pgprocs >"$OUT/ingest_cpu.procs1.txt"
	sleep 1.1
	pgstats "$OUT/ingest_cpu.pgstats1.json"
	python3 - "$OUT/ingest_cpu.json" "$OUT/ingest_cpu.pgstats0.json" "$OUT/ingest_cpu.pgstats1.json" \
		>"$OUT/ingest_cpu.pgstats.txt" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))["samples_ok"]
a, b = (json.load(open(f)) for f in sys.argv[2:4])
d = lambda x, y, k: (y[k] or 0) - (x[k] or 0)
print(f"samples stored in the run: {n}")
print(f"WAL bytes per sample (LSN): {(b['lsn'] - a['lsn']) / n:.0f}")
for k in ("wal_records", "wal_fpi", "wal_bytes", "wal_buffers_full", "wal_write", "wal_sync"):
    print(f"pg_stat_wal {k}: {d(a['wal'], b['wal'], k)} ({d(a['wal'], b['wal'], k) / n:.2f} per sample)")
c = d(a['db'], b['db'], 'xact_commit')
print(f"commits: {c} ({n / max(c, 1):.2f} samples per commit; WAL fsyncs per commit {d(a['wal'], b['wal'], 'wal_sync') / max(c, 1):.2f})")
for k in ("checkpoints_timed", "checkpoints_req", "buffers_checkpoint", "buffers_backend", "buffers_backend_fsync"):
    print(f"pg_stat_bgwriter {k}: {d(a['bgw'], b['bgw'], k)}")
t0 = {l.split()[0]: (int(l.split()[1]), " ".join(l.split()[2:])) for l in open(sys.argv[2].replace("pgstats0.json", "procs0.txt"))}
t1 = {l.split()[0]: (int(l.split()[1]), " ".join(l.split()[2:])) for l in open(sys.argv[2].replace("pgstats0.json", "procs1.txt"))}
import os
tck = os.sysconf("SC_CLK_TCK")
by = {}
for pid, (t, title) in t1.items():
    kind = title.split(":")[1].strip().split(" ")[0] if ":" in title else title.split(" ")[0]
    if "postgres@" in title or "vmscope" in title or "idle" in title or "127.0.0.1" in title:
        kind = "client backends"
    by[kind] = by.get(kind, 0) + t - t0.get(pid, (0, ""))[0]
print("PostgreSQL CPU per 1,000 samples by process (user+sys, s; reaped children not counted):")
for k, v in sorted(by.items(), key=lambda x: -x[1]):
    print(f"  {k:30} {v / tck / n * 1000:.3f}")
print(f"{'table':44} {'ins':>8} {'upd':>8} {'hot':>8} {'del':>8}  per sample: ins upd")
rows = []
for t, v in b["tables"].items():
    v0 = a["tables"].get(t, {"ins": 0, "upd": 0, "hot": 0, "del": 0})
    dv = {k: v[k] - v0[k] for k in v}
    if any(dv.values()):
        rows.append((t, dv))
for t, dv in sorted(rows, key=lambda r: -(r[1]["ins"] + r[1]["upd"])):
    print(f"{t:44} {dv['ins']:8} {dv['upd']:8} {dv['hot']:8} {dv['del']:8}  {dv['ins'] / n:.2f} {dv['upd'] / n:.2f}")
PY
	psql "$BASE" -qAc "SELECT calls, round(total_exec_time::numeric, 1) AS total_ms, \
		round(mean_exec_time::numeric, 3) AS mean_ms, plans, round(mean_plan_time::numeric, 3) AS plan_ms, \
		wal_bytes, wal_fpi, left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query \
		FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25" >>"$OUT/ingest_cpu.pgstats.txt"
fi
l1=$(uptime | sed 's/.*load average: //')
if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; perf_pid=; fi
if [ -n "$pgperf_pid" ]; then kill -INT "$pgperf_pid"; wait "$pgperf_pid" 2>/dev/null || true; pgperf_pid=; fi
python3 - "$OUT/ingest_cpu.json" "$s0" "$s1" "$p0" "$p1" "$TCK" "$l0" "$l1" "$x0" "$x1" "$c0" "$c1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s0, s1, p0, p1, tck = map(float, sys.argv[2:7])
n = r["samples_ok"]
print(json.dumps({**r, "load_avg_before_after": sys.argv[7:9],
  "samples_per_commit": round(n / max(1, int(sys.argv[10]) - int(sys.argv[9])), 2),
  "server_ctx_switches_per_sample": round((int(sys.argv[12]) - int(sys.argv[11])) / n, 1),
  "server_cpu_s_per_1000": round((s1 - s0) / tck / n * 1000, 3),
  "postgres_cpu_s_per_1000": round((p1 - p0) / tck / n * 1000, 3),
  "loadgen_cpu_s_per_1000": round(r["cpu_s"] / n * 1000, 3) if "cpu_s" in r else None}))
PY
