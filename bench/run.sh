#!/usr/bin/env bash
# run.sh - `make bench`: fleet-scale ingest and query benchmark on this machine.
#
# Starts a PostgreSQL of its own (fsync on, as in production) and the release
# server, then:
#  1. ingest, closed loop: BENCH_HOSTS (2000) simulated agents, full 6.x vmstat,
#     meminfo, PSI and 20 cgroups per sample, one sample per request; after a
#     warm-up of BENCH_WARM_S (30) s so that hosts exist (steady state), for
#     BENCH_INGEST_S (60) seconds: samples/s, p50/p99, CPU seconds of the server
#     and of PostgreSQL per 1,000 samples, bytes on disk per sample, load average;
#  2. ingest, open loop (BENCH_OPEN_S, 30 s, each): at 1,000 samples/s offered from 64
#     connections (p50/p99 latency; after BENCH_SETTLE_1000_S (10) s unmeasured at that
#     rate, past phase 1's CHECKPOINT), and at 2,000 samples/s offered from BENCH_CONC_2000 (192)
#     connections (the rate held: "sustained"); both with CPU per 1,000 samples and samples
#     per committed transaction. Every measured run writes bench/out/NAME.timeline.txt
#     (per second: answers, p50, p99, max latency);
#  3. host-level only (no cgroups) for BENCH_SIZE_S (20) s: bytes per host-level sample;
#  4. bulk-loads BENCH_QHOSTS (1000) hosts x BENCH_QHOURS (24) h plus 10 hosts x 7 days
#     of 10 s data through the storage layer, then measures p50/p99 of the alerts list,
#     the fleet overview (1 h and 24 h windows) and one host's 24-hour and 7-day series.
#     BENCH_WEEK_HOSTS (10) / BENCH_WEEK_CGROUPS (20) size the 7-day hosts.
#  5. bench/browser.sh: the fleet view (navigation -> table with sparklines) and
#     week-00001's 7-day view (navigation -> every chart drawn) in headless
#     Chromium, BENCH_BROWSER_RUNS (7) fresh loads each, p50/p99; screenshots
#     of the three views in bench/out/screens.
# Results: a summary on stdout, bench/out/results.json, and the same as a markdown
# table in bench/out/results.md (bench/results_md.py; docs/benchmarks.md is that
# table from a run on a quiet machine).
#  6. where Citus is installed: single-sample ingest p50 on one PostgreSQL and on a
#     local three-node Citus cluster, back to back (bench/citus_p50.sh; one machine
#     standing in for several).
# BENCH_PHASES (default 1,2,3,4,5,6) runs only the listed phases (2 needs 1);
# BENCH_PGSS=1 loads pg_stat_statements and writes phase 1's top statements
# to bench/out/pgss-ingest.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=$ROOT/bench/out
mkdir -p "$OUT"
BIN=${BIN:-bin}
INGEST_S=${BENCH_INGEST_S:-60}
HOSTS=${BENCH_HOSTS:-2000}
QHOSTS=${BENCH_QHOSTS:-1000}
QHOURS=${BENCH_QHOURS:-24}
RESULTS=$OUT/results.jsonl
: >"$RESULTS"
PHASES=${BENCH_PHASES:-1,2,3,4,5,6}
phase() { [[ ",$PHASES," == *",$1,"* ]]; }

phase 4 || phase 5 || QHOSTS=0
need_gb=$(( (QHOSTS * QHOURS * 360 * 600 + ${BENCH_WEEK_HOSTS:-10} * 168 * 360 * 12000) / 1000000000 + 5 ))
free_gb=$(df -Pk "$OUT" | awk 'NR==2 {print int($4/1048576)}')
if [ "$free_gb" -lt "$need_gb" ]; then
	echo "bench: needs about ${need_gb} GB free in $OUT, only ${free_gb} GB; set BENCH_QHOSTS/BENCH_QHOURS lower" >&2
	exit 1
fi

PG_PORT=$(scripts/freeport.sh)
server_pid=
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	scripts/pg.sh stop "$OUT/pg"
}
trap cleanup EXIT
rm -rf "$(scripts/pg.sh dir "$OUT/pg")"/data
BASE=$(scripts/pg.sh start "$OUT/pg" "$PG_PORT")
PGDATA_DIR=$(scripts/pg.sh dir "$OUT/pg")/data
psqlc() { psql "$BASE" -v ON_ERROR_STOP=1 -qtAc "$1"; }
if [ "${BENCH_PGSS:-0}" = 1 ]; then
	psqlc "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
	scripts/pg.sh stop "$OUT/pg"
	BASE=$(scripts/pg.sh start "$OUT/pg" "$PG_PORT")
fi
mkdb() { psqlc "DROP DATABASE IF EXISTS $1" && psqlc "CREATE DATABASE $1"; echo "${BASE/dbname=vmscope/dbname=$1}"; }

# CPU seconds (user+sys) of a process tree: the server, or the postmaster and its children.
. bench/_cpu.sh

start_server() {
	local db=$1
	SPORT=$(scripts/freeport.sh)
	"$BIN/vmscope-server" --listen "127.0.0.1:$SPORT" --db "$db" --token benchtoken \
		--log-level warn --retention-days 400 >"$OUT/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 150); do
		curl -fsS "http://127.0.0.1:$SPORT/healthz" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "bench: the server did not come up" >&2; tail "$OUT/server.log" >&2; exit 1
}
stop_server() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=; }
db_bytes() { psql "$1" -qtAc "SELECT pg_database_size(current_database())"; }

# --- 1. ingest, closed loop -----------------------------------------------------------
if phase 1; then
DB=$(mkdb bench_ingest)
start_server "$DB"
# warm-up: every host posts at least once (creating its host, cgroup, boot and
# detector rows) before the measured run, which then sees steady state
"$BIN/vmscope-loadgen" --server "http://127.0.0.1:$SPORT" --token benchtoken --hosts "$HOSTS" \
	--cgroups 20 --duration "${BENCH_WARM_S:-30}" --concurrency 16 --json >"$OUT/warmup.json"
xacts() { psql "$DB" -qtAc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"; }
[ "${BENCH_PGSS:-0}" = 1 ] && psql "$DB" -qtAc "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()" >/dev/null
# measured NAME PHASE LOADGEN-ARGS...: one measured load generator run (20 cgroups, BENCH_HOSTS
# hosts) with the CPU seconds of the server and of PostgreSQL per 1,000 samples, samples per
# committed transaction (pg_stat_database), the load average before and after, and a
# per-second latency timeline in bench/out/NAME.timeline.txt (answers, p50, p99, max)
measured() {
	local name=$1 ph=$2 l0 l1 s0 s1 p0 p1 x0 x1
	shift 2
	l0=$(uptime | sed 's/.*load average: //'); x0=$(xacts)
	s0=$(cpu_of "$server_pid"); p0=$(cpu_of $(pg_pids))
	"$BIN/vmscope-loadgen" --server "http://127.0.0.1:$SPORT" --token benchtoken --hosts "$HOSTS" \
		--cgroups 20 --json --timeline "$OUT/$name.timeline.txt" "$@" >"$OUT/$name.json"
	s1=$(cpu_of "$server_pid"); p1=$(cpu_of $(pg_pids))
	sleep 1.1	# PostgreSQL 15 flushes a backend's counters at most once a second
	x1=$(xacts); l1=$(uptime | sed 's/.*load average: //')
	python3 - "$OUT/$name.json" "$ph" "$s0" "$s1" "$p0" "$p1" "$TCK" "$x0" "$x1" "$l0" "$l1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s0, s1, p0, p1, tck, x0, x1 = map(float, sys.argv[3:10])
n = max(1, r["samples_ok"])
print(json.dumps({"phase": sys.argv[2], **r, "load_avg_before_after": sys.argv[10:12],
  "server_cpu_s_per_1000": round((s1 - s0) / tck / n * 1000, 3),
  "postgres_cpu_s_per_1000": round((p1 - p0) / tck / n * 1000, 3),
  "loadgen_cpu_s_per_1000": round(r["cpu_s"] / n * 1000, 3),
  "samples_per_commit": round(n / max(1, x1 - x0), 2)}))
PY
}
b0=$(db_bytes "$DB")
measured ingest ingest_closed_loop_20cg --duration "$INGEST_S" --concurrency 16 >"$OUT/ingest.row.json"
[ "${BENCH_PGSS:-0}" = 1 ] && psql "$DB" -qAc "SELECT calls, round(total_exec_time::numeric, 1) AS total_ms, \
	round(mean_exec_time::numeric, 3) AS mean_ms, round(mean_plan_time::numeric, 3) AS plan_ms, \
	left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query FROM pg_stat_statements \
	ORDER BY total_exec_time DESC LIMIT 20" >"$OUT/pgss-ingest.txt"
psqlc "CHECKPOINT" >/dev/null
b1=$(db_bytes "$DB")
python3 - "$OUT/ingest.row.json" "$OUT/warmup.json" "$b0" "$b1" >>"$RESULTS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); w = json.load(open(sys.argv[2]))
print(json.dumps({**r, "warmup_samples": w["samples_ok"],
  "bytes_per_sample_20cg": round((int(sys.argv[4]) - int(sys.argv[3])) / r["samples_ok"])}))
PY
# --- 2. open loop: latency at 1,000 samples/s, and 2,000 samples/s offered from many
# connections (a fleet of 20,000 agents at 10 s posts from many connections at once:
# "sustained" is the rate held at 2,000/s offered, with its latency and CPU)
if phase 2; then
	# unmeasured first: the size measurement above ends with a CHECKPOINT, and the
	# first seconds after one had p99 61-98 ms against 12-19 ms after (per-second
	# timeline, docs/scaling.md §1 "WAL"): a checkpoint comes every 15 minutes in
	# production, not right before a 30 s window
	"$BIN/vmscope-loadgen" --server "http://127.0.0.1:$SPORT" --token benchtoken --hosts "$HOSTS" \
		--cgroups 20 --duration "${BENCH_SETTLE_1000_S:-10}" --concurrency 64 --rate 1000 --json >/dev/null
	measured ingest_1000 ingest_at_1000_per_s --duration "${BENCH_OPEN_S:-30}" --concurrency 64 --rate 1000 >>"$RESULTS"
	measured ingest_2000 ingest_at_2000_per_s --duration "${BENCH_OPEN_S:-30}" \
		--concurrency "${BENCH_CONC_2000:-192}" --rate 2000 >>"$RESULTS"
fi
stop_server
fi

# --- 3. host-level bytes per sample --------------------------------------------------------
if phase 3; then
DB=$(mkdb bench_size)
start_server "$DB"
b0=$(db_bytes "$DB")
"$BIN/vmscope-loadgen" --server "http://127.0.0.1:$SPORT" --token benchtoken --hosts 500 \
	--cgroups 0 --duration "${BENCH_SIZE_S:-20}" --concurrency 8 --json >"$OUT/size.json"
psqlc "CHECKPOINT" >/dev/null
b1=$(db_bytes "$DB")
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps({"phase":"host_level_size","samples":r["samples_ok"],"samples_per_s":r["samples_per_s"],"bytes_per_host_sample":round((int(sys.argv[3])-int(sys.argv[2]))/r["samples_ok"])}))' \
	"$OUT/size.json" "$b0" "$b1" >>"$RESULTS"
stop_server
fi

# --- 4. queries over a fleet-sized history ----------------------------------------------
if phase 4 || phase 5; then
DB=$(mkdb bench_query)
"$BIN/vmscope-bulkload" --db "$DB" --prefix fleet --hosts "$QHOSTS" --hours "$QHOURS" --cgroups 0 --threads 2 |
	python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"phase":"bulkload_fleet",**r}))' >>"$RESULTS"
"$BIN/vmscope-bulkload" --db "$DB" --prefix week --hosts "${BENCH_WEEK_HOSTS:-10}" --hours 168 --cgroups "${BENCH_WEEK_CGROUPS:-20}" --threads 2 |
	python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"phase":"bulkload_week",**r}))' >>"$RESULTS"
# a realistic alert history: 20,000 resolved alerts over the day and 50 open ones
psql "$DB" -v ON_ERROR_STOP=1 -q <<'SQL'
INSERT INTO alerts (host, cgroup, kind, severity, state, started_at, opened_at, ended_at, updated_at, summary, evidence)
SELECT format('fleet-%s', lpad((g % 1000)::text, 5, '0')), CASE WHEN g % 3 = 0 THEN '/system.slice/app.service' END,
       (ARRAY['thrash','swap_imbalance','writeback_storm','direct_reclaim_stall'])[1 + g % 4],
       CASE WHEN g % 5 = 0 THEN 'critical' ELSE 'warning' END,
       CASE WHEN g <= 50 THEN 'open' ELSE 'resolved' END,
       now() - make_interval(secs => g * 4), now() - make_interval(secs => g * 4 - 30),
       CASE WHEN g <= 50 THEN NULL ELSE now() - make_interval(secs => g * 4 - 300) END, now(),
       'bench alert', jsonb_build_object('n', g)
FROM generate_series(1, 20000) g;
ANALYZE;
SQL
start_server "$DB"
# the server's cgroup rollup thread first rolls up the bulk-loaded history
# (docs/design.md "Cgroup rollups"); query once it has caught up
for _ in $(seq 900); do
	left=$(psql "$DB" -qtAc "SELECT count(*) FROM hosts h WHERE h.ncgroups > 0 AND NOT EXISTS (SELECT 1 FROM
		cgroup_rollup_done d WHERE d.host_id = h.id AND d.next_b5 >= h.last_ts_ms / 300000 - 6)")
	[ "$left" = 0 ] && break
	sleep 1
done
now=$(date +%s)
S="http://127.0.0.1:$SPORT"
# a 7-day host: week-00001, or week-00000 when only one was loaded (names count from 0)
WHOST=week-0000$(( ${BENCH_WEEK_HOSTS:-10} > 1 ? 1 : 0 ))
for u in "$S/api/v1/alerts" "$S/api/v1/alerts?state=open" "$S/api/v1/alerts?host=fleet-00007&since=$((now-86400))" \
	"$S/api/v1/fleet?window=3600&points=13" "$S/api/v1/fleet?window=86400&points=288" "$S/api/v1/hosts" \
	"$S/api/v1/hosts/fleet-00001/series?metric=vmstat.pgscan_kswapd&since=$((now-86400))&points=300" \
	"$S/api/v1/hosts/fleet-00001/series?metric=vmstat.pgscan_kswapd&since=$((now-86400))" \
	"$S/api/v1/hosts/$WHOST/series?metric=vmstat.workingset_refault_file&since=$((now-7*86400))&points=500" \
	"$S/api/v1/hosts/$WHOST/series?metric=stat.pgscan&cgroup=/system.slice/svc-05.service&since=$((now-7*86400))&points=500"; do
	bench/querylat.py "$u" "${BENCH_QUERIES:-50}" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"phase":"query",**r}))' >>"$RESULTS"
done
stop_server
fi
# --- 5. the dashboard in headless Chromium: fleet view and a 7-day host view ---------------
if phase 5; then
BIN="$BIN" bench/browser.sh "$DB" >>"$RESULTS"
BENCH_PG_BASE="$BASE" BIN="$BIN" bench/compare_bench.sh >>"$RESULTS"
fi
# --- 6. single-sample ingest latency, one PostgreSQL against a local Citus cluster ---
if phase 6 && scripts/citus.sh installed; then
BIN="$BIN" bench/citus_p50.sh | python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"phase":"citus_p50",**r}))' >>"$RESULTS"
fi
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
json.dump(rows, open(sys.argv[1].replace(".jsonl", ".json"), "w"), indent=1)
for r in rows:
    p = r.pop("phase")
    if p == "browser":
        for v in [v for v in ("fleet", "fleet_interactive", "host7d", "host7d_interactive") if v in r]:
            print(f"{'browser ' + v:22} p50 {r[v]['p50_ms']:7d} ms  p99 {r[v]['p99_ms']:7d} ms  runs {r[v]['runs_ms']}  slowest API {r[v]['slowest_api_ms']}  (load {r['loadavg_before']}, server settled after {r.get('server_settle_s', '-')} s)")
        continue
    if p == "query":
        print(f"{'query':22} p50 {r['p50_ms']:7.2f} ms  p99 {r['p99_ms']:7.2f} ms  {r['bytes']:8d} B  {r['url']}")
    else:
        print(f"{p:22} " + "  ".join(f"{k}={v}" for k, v in r.items()))
PY
python3 bench/results_md.py "$OUT/results.json" "$OUT/results.md"
