#!/usr/bin/env bash
# agent_footprint.sh - what the agent costs on the machine it watches:
# private dirty memory (/proc/PID/smaps_rollup Private_Dirty) and CPU time
# per sample (utime+stime from /proc/PID/stat over many samples, delivery to
# a local receiver included), with 0, 20 and 200 memory cgroups reported.
#
# Creates empty cgroup v1 memory cgroups /sys/fs/cgroup/memory/vmscope-bench-N
# (or cgroup v2 ones under the v2 mount when there is no v1 memory
# hierarchy) and removes them at the end. Needs root. Reports only those
# cgroups (--cgroup-include) so the numbers do not depend on the machine.
#
# Usage: bench/agent_footprint.sh [SECONDS_PER_RUN]   (default 10, at 0.1 s interval)
set -euo pipefail
cd "$(dirname "$0")/.."
AGENT=${AGENT:-$PWD/bin/vmscope-agent}
SECS=${1:-10}
INTERVAL=0.1
[ "$(id -u)" = 0 ] || { echo "agent_footprint: needs root to create cgroups" >&2; exit 1; }
[ -x "$AGENT" ] || { echo "agent_footprint: build $AGENT first (make)" >&2; exit 1; }

if [ -d /sys/fs/cgroup/memory ] && [ -f /sys/fs/cgroup/memory/memory.stat ] || \
   [ -f /sys/fs/cgroup/memory/cgroup.procs ]; then
	CGBASE=/sys/fs/cgroup/memory
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	CGBASE=/sys/fs/cgroup
else
	echo "agent_footprint: no memory cgroup hierarchy" >&2; exit 1
fi
TMPD=$(mktemp -d /tmp/vmscope-footprint.XXXXXX)
PORT=$(scripts/freeport.sh)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	for d in "$CGBASE"/vmscope-bench-*; do [ -d "$d" ] && rmdir "$d"; done
	rm -rf "$TMPD"
}
trap cleanup EXIT

python3 tests/fixtures/receiver.py "$PORT" & pids+=($!)
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$PORT/stats" >/dev/null 2>&1 && break; sleep 0.1; done

clk=$(getconf CLK_TCK)
# cpu_ms/sample: the whole agent (read, write to the fsync'ed spool, gzip,
# POST, persist the head); collect_ms: reading and writing JSON only
# (--stdout to /dev/null)
cpu_of() {	# pid seconds -> "cpu_ms_per_sample samples"
	local pid=$1 secs=$2 t0 t1 s0 s1
	read -r t0 < <(awk '{print $14+$15}' "/proc/$pid/stat")
	s0=$(date +%s.%N)
	sleep "$secs"
	read -r t1 < <(awk '{print $14+$15}' "/proc/$pid/stat")
	s1=$(date +%s.%N)
	python3 -c "n = round(($s1 - $s0) / $INTERVAL); print(f'{($t1 - $t0) * 1000 / $clk / n:.2f} {n}')"
}
printf '%-8s %10s %14s %11s %12s %12s %10s\n' cgroups samples "cpu_ms/sample" collect_ms private_dirty rss sample_kB
for n in 0 20 200; do
	for i in $(seq 1 "$n"); do mkdir -p "$CGBASE/vmscope-bench-$i"; done
	for d in "$CGBASE"/vmscope-bench-*; do
		[ -d "$d" ] || continue
		[ "${d##*-}" -le "$n" ] 2>/dev/null || rmdir "$d"
	done
	rm -rf "$TMPD/spool"
	"$AGENT" --server "http://127.0.0.1:$PORT" --interval "$INTERVAL" --spool "$TMPD/spool" \
		--cgroup-include '/vmscope-bench-*' --log-level warn --host bench 2>"$TMPD/agent-$n.log" &
	apid=$!
	pids+=("$apid")
	sleep 2	# warm up: buffers grown, first batches sent
	read -r cpu samples < <(cpu_of "$apid" "$SECS")
	pd=$(awk '/^Private_Dirty/ {print $2}' "/proc/$apid/smaps_rollup")
	rss=$(awk '/^Rss/ {print $2}' "/proc/$apid/smaps_rollup")
	kill "$apid"; wait "$apid" 2>/dev/null || true
	"$AGENT" --stdout --interval "$INTERVAL" --cgroup-include '/vmscope-bench-*' --log-level warn \
		>/dev/null 2>&1 &
	cpid=$!
	pids+=("$cpid")
	sleep 1
	read -r ccpu _ < <(cpu_of "$cpid" "$(python3 -c "print($SECS / 2)")")
	kill "$cpid"; wait "$cpid" 2>/dev/null || true
	size=$("$AGENT" --once --stdout --cgroup-include '/vmscope-bench-*' 2>/dev/null | wc -c)
	printf '%-8s %10s %14s %11s %9s kB %9s kB %10s\n' "$n" "$samples" "$cpu" "$ccpu" "$pd" "$rss" \
		"$(python3 -c "print(f'{$size / 1024:.1f}')")"
done
