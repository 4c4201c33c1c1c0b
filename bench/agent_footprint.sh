#!/usr/bin/env bash
# agent_footprint.sh - what the agent costs on the machine it watches:
# private dirty memory (/proc/PID/smaps_rollup Private_Dirty), the kernel
# memory charged to it (its own memory cgroup: open files, the kept
# seq_file buffers of --keep-open), and CPU time per sample (utime+stime
# from /proc/PID/stat over many samples, delivery to a local receiver
# included), with 0, 20 and 200 memory cgroups reported.
#
# Creates empty memory cgroups vmscope-bench-N (cgroup v1 memory hierarchy,
# or the v2 one when there is no v1 memory hierarchy) plus vmscope-footprint
# for the agent itself, and removes them at the end. Needs root. Reports
# only the bench cgroups (--cgroup-include) so the numbers do not depend on
# the machine.
#
# Usage: bench/agent_footprint.sh [SECONDS_PER_RUN]   (default 10, at 0.1 s interval)
#        bench/agent_footprint.sh --long SECONDS       (200 cgroups; memory every 60 s)
set -euo pipefail
cd "$(dirname "$0")/.."
AGENT=${AGENT:-$PWD/bin/vmscope-agent}
LONG=0
if [ "${1:-}" = --long ]; then LONG=${2:?--long SECONDS}; fi
SECS=${1:-10}
[ "$LONG" = 0 ] || SECS=$LONG
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
AGCG=$CGBASE/vmscope-footprint
TMPD=$(mktemp -d /tmp/vmscope-footprint.XXXXXX)
PORT=$(scripts/freeport.sh)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	for d in "$CGBASE"/vmscope-bench-*; do [ -d "$d" ] && rmdir "$d"; done
	[ -d "$AGCG" ] && rmdir "$AGCG"
	rm -rf "$TMPD"
}
trap cleanup EXIT
mkdir -p "$AGCG"

python3 tests/fixtures/receiver.py "$PORT" & pids+=($!)
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$PORT/stats" >/dev/null 2>&1 && break; sleep 0.1; done

clk=$(getconf CLK_TCK)
# cpu_ms/sample: the whole agent (read, write to the fsync'ed spool, gzip,
# POST, persist the head); collect_ms: reading and writing JSON only
# (--stdout to /dev/null), also with --keep-open 0 (every file opened and
# closed every sample)
cpu_of() {	# pid seconds -> "cpu_ms_per_sample samples"
	local pid=$1 secs=$2 t0 t1 s0 s1
	read -r t0 < <(awk '{print $14+$15}' "/proc/$pid/stat")
	s0=$(date +%s.%N)
	sleep "$secs"
	read -r t1 < <(awk '{print $14+$15}' "/proc/$pid/stat")
	s1=$(date +%s.%N)
	python3 -c "n = round(($s1 - $s0) / $INTERVAL); print(f'{($t1 - $t0) * 1000 / $clk / n:.2f} {n}')"
}
kmem_kb() {	# kernel memory charged to the agent's cgroup, kB
	if [ -f "$AGCG/memory.kmem.usage_in_bytes" ]; then
		echo $(($(cat "$AGCG/memory.kmem.usage_in_bytes") / 1024))
	else
		awk '$1 == "kernel" {print int($2 / 1024)}' "$AGCG/memory.stat"
	fi
}
set_cgroups() {	# n: exactly vmscope-bench-1..n exist
	local n=$1 d
	for i in $(seq 1 "$n"); do mkdir -p "$CGBASE/vmscope-bench-$i"; done
	for d in "$CGBASE"/vmscope-bench-*; do
		[ -d "$d" ] || continue
		[ "${d##*-}" -le "$n" ] 2>/dev/null || rmdir "$d"
	done
}
start_agent() {	# the posting agent, in its own memory cgroup; sets apid
	rm -rf "$TMPD/spool"
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$AGCG" \
		"$AGENT" --server "http://127.0.0.1:$PORT" --interval "$INTERVAL" --spool "$TMPD/spool" \
		--cgroup-include '/vmscope-bench-*' --log-level warn --host bench 2>"$TMPD/agent.log" &
	apid=$!
	pids+=("$apid")
}
collect_ms() {	# extra agent flags -> collect CPU ms per sample
	"$AGENT" --stdout --interval "$INTERVAL" --cgroup-include '/vmscope-bench-*' --log-level warn \
		"$@" >/dev/null 2>&1 &
	local cpid=$! ccpu
	pids+=("$cpid")
	sleep 1
	read -r ccpu _ < <(cpu_of "$cpid" "$(python3 -c "print($SECS / 2)")")
	kill "$cpid"; wait "$cpid" 2>/dev/null || true
	echo "$ccpu"
}

echo "# $(uname -r), $(nproc) CPUs, hierarchy $CGBASE, $AGENT"
if [ "$LONG" != 0 ]; then
	set_cgroups 200
	start_agent
	t0=$(date +%s)
	printf '%-8s %8s %14s %10s %10s %6s %s\n' elapsed_s samples private_dirty rss kernel fds load
	while :; do
		el=$(($(date +%s) - t0))
		pd=$(awk '/^Private_Dirty/ {print $2}' "/proc/$apid/smaps_rollup")
		rss=$(awk '/^Rss/ {print $2}' "/proc/$apid/smaps_rollup")
		printf '%-8s %8s %11s kB %7s kB %7s kB %6s %s\n' "$el" "$(python3 -c "print(round($el / $INTERVAL))")" \
			"$pd" "$rss" "$(kmem_kb)" "$(ls "/proc/$apid/fd" | wc -l)" "$(cut -d' ' -f1-3 /proc/loadavg)"
		[ "$el" -ge "$LONG" ] && break
		sleep 60
	done
	exit 0
fi
printf '%-8s %8s %14s %11s %11s %14s %10s %10s %6s %10s  %s\n' cgroups samples "cpu_ms/sample" collect_ms \
	"(keep 0)" private_dirty rss kernel fds sample_kB load
for n in 0 20 200; do
	set_cgroups "$n"
	start_agent
	sleep 2	# warm up: buffers grown, first batches sent
	read -r cpu samples < <(cpu_of "$apid" "$SECS")
	pd=$(awk '/^Private_Dirty/ {print $2}' "/proc/$apid/smaps_rollup")
	rss=$(awk '/^Rss/ {print $2}' "/proc/$apid/smaps_rollup")
	km=$(kmem_kb)
	nfd=$(ls "/proc/$apid/fd" | wc -l)
	kill "$apid"; wait "$apid" 2>/dev/null || true
	ccpu=$(collect_ms)
	ccpu0=$(collect_ms --keep-open 0)
	size=$("$AGENT" --once --stdout --cgroup-include '/vmscope-bench-*' 2>/dev/null | wc -c)
	printf '%-8s %8s %14s %11s %11s %11s kB %7s kB %7s kB %6s %10s  %s\n' "$n" "$samples" "$cpu" "$ccpu" \
		"$ccpu0" "$pd" "$rss" "$km" "$nfd" "$(python3 -c "print(f'{$size / 1024:.1f}')")" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
done
