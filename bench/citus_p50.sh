#!/usr/bin/env bash
# citus_p50.sh - single-sample ingest latency on one PostgreSQL against a
# local Citus cluster (a coordinator and two workers, scripts/citus.sh),
# on the same machine, back to back: one machine standing in for several
# (docs/scaling.md §3). The release server, one client posting one sample
# of a 20-cgroup host per request (closed loop), BENCH_P50_HOSTS (100) hosts
# that already posted (warm-up: no host is new when measured). Enough hosts
# that each posts less often than the load generator's 200 ms minimum step
# at a few hundred samples/s: their timestamps follow the clock, and no
# run starts behind the previous one's (late samples take another path).
#   bench/citus_p50.sh        prints one JSON line: p50/p99 (ms) of each, the ratio
#   BENCH_P50_S=N             seconds measured per setup (30)
#   BENCH_P50_ROUNDS=N        plain/Citus alternations (2)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(pwd)/bench/out
mkdir -p "$OUT"
BIN=${BIN:-bin}
SECS=${BENCH_P50_S:-30}
HOSTS=${BENCH_P50_HOSTS:-100}
scripts/citus.sh installed || { scripts/citus.sh how >&2; exit 3; }
server_pid=
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	scripts/pg.sh stop "$OUT/p50-plain"
	scripts/citus.sh stop "$OUT/p50-citus"
}
trap cleanup EXIT
for d in "$OUT/p50-plain" "$OUT/p50-citus/node0" "$OUT/p50-citus/node1" "$OUT/p50-citus/node2"; do
	rm -rf "$(scripts/pg.sh dir "$d")/data"
done
rm -f "$OUT/p50-citus/ports"
PLAIN=$(scripts/pg.sh start "$OUT/p50-plain" "$(scripts/freeport.sh)")
CITUS=$(scripts/citus.sh start "$OUT/p50-citus")
run() { # run CONNINFO: p50 and p99 of one measured run, as "p50 p99"
	local port
	port=$(scripts/freeport.sh)
	"$BIN/vmscope-server" --listen "127.0.0.1:$port" --db "$1" --token benchtoken --log-level warn \
		>"$OUT/citus_p50.server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 300); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
	lg() { "$BIN/vmscope-loadgen" --server "http://127.0.0.1:$port" --token benchtoken --hosts "$HOSTS" \
		--cgroups 20 --concurrency 1 --json --prefix p50- --duration "$1"; }
	# warm-up: every host has posted (on Citus a new host costs several
	# statements on every node) and the server has taken each one over
	# (one run's hosts go round from the first: it covers them all once it
	# posted HOSTS samples)
	local warm=0 _
	for _ in 1 2 3 4 5 6; do
		warm=$(lg 10 | jq -r '.samples_ok // 0')
		[ "$warm" -ge "$HOSTS" ] && break
	done
	if [ "$warm" -ge "$HOSTS" ]; then
		lg "$SECS" | jq -r '"\(.p50_ms) \(.p99_ms)"'
	else
		echo "citus_p50: the warm-up posted $warm samples in 10 s, fewer than $HOSTS hosts" >&2
	fi
	kill "$server_pid"
	wait "$server_pid" 2>/dev/null || true
	server_pid=
}
l0=$(uptime | sed 's/.*load average: //')
res=()
for _ in $(seq "${BENCH_P50_ROUNDS:-2}"); do
	for setup in plain citus; do
		ci=$PLAIN
		[ "$setup" = citus ] && ci=$CITUS
		r=$(run "$ci")
		[ -n "$r" ] || exit 1
		res+=("$setup $r")
	done
done
l1=$(uptime | sed 's/.*load average: //')
printf '%s\n' "${res[@]}" | python3 -c '
import json, sys
rows = [l.split() for l in sys.stdin if l.strip()]
med = lambda xs: sorted(xs)[len(xs) // 2]
p = [float(r[1]) for r in rows if r[0] == "plain"]
c = [float(r[1]) for r in rows if r[0] == "citus"]
print(json.dumps({"runs": [[r[0], float(r[1]), float(r[2])] for r in rows], "plain_p50_ms": med(p),
    "citus_p50_ms": med(c), "ratio": round(med(c) / med(p), 2), "load_avg_before_after": sys.argv[1:3]}))
' "$l0" "$l1"
