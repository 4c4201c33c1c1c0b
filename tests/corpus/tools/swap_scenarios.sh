#!/usr/bin/env bash
# swap_scenarios.sh - record real traces of compressed swap, over-swap and
# swap churn, and long healthy workloads, with the real agent every 1 s
# (needs root, the v1 memory controller at /sys/fs/cgroup/memory with a v2
# hierarchy at /sys/fs/cgroup/unified, /sys/class/zram-control, zswap, and
# a few GiB of disk under WORK). Usage:
#   swap_scenarios.sh OUTDIR [scenario...]   (default: every swap scenario;
#                                             healthy_* only when named)
# Each scenario makes its memory cgroup (v1, with its v2 twin for PSI),
# starts the agent (only that cgroup: --cgroup-include), waits BASE_S,
# starts the workload, lets it run RUN_S, kills it and records TAIL_S more,
# then undoes everything (reclib.sh: its PIDs, the cgroup, the swap file,
# the zram device, zswap's `enabled`). OUTDIR/real-NAME.jsonl.gz is the
# trace; OUTDIR/real-NAME.times has the Unix times at which the workload
# started and was killed (the agent's ts are on the same clock).
set -uo pipefail
OUT=$(cd "$1" && pwd); shift
TOOLS=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-/var/tmp/vmscope-swap-rec}
ROOT=${ROOT:-$(cd "$TOOLS/../../.." && pwd)}	# the source tree (scripts/, sources)
AGENT=${AGENT:-$ROOT/bin/vmscope-agent}
BASE_S=${BASE_S:-20}
RUN_S=${RUN_S:-180}
TAIL_S=${TAIL_S:-30}
HEALTHY_S=${HEALTHY_S:-900}
mkdir -p "$WORK"
. "$TOOLS/reclib.sh"
W="python3 $TOOLS/workload.py"

now() { date +%s.%N | cut -c1-14; }
# run NAME WORKLOAD_FN SECONDS [STOP_FN]: the agent around a workload
# started by WORKLOAD_FN; STOP_FN ends what the workload started outside
# its PIDs (a database server) before the tail
run() {
	local name=$1 fn=$2 secs=$3 stop=${4:-true}
	agent_start "$name"
	sleep "$BASE_S"
	echo "workload_start $(now)" >"$OUT/real-$name.times"
	"$fn"
	sleep "$secs"
	echo "workload_stop $(now)" >>"$OUT/real-$name.times"
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=()
	"$stop"
	cg_kill_all
	sleep "$TAIL_S"
	agent_stop "$name"
	cleanup
}

# 1. zram: 320 MiB of anon (compressible 2:1) in a 256 MiB cgroup, a random
# page written at WALK_MIBPS (default 8 MiB/s): the pages not resident come
# back from zram at memory speed with little stall (healthy; busy: 24 MiB/s,
# more stall); then 640 MiB written as fast as it goes: most of the time
# goes to compressing and decompressing, a real stall
w_walk_slow() { spawn $W anonwalk 320 "${WALK_MIBPS:-8}"; }
w_walk_fast() { spawn $W anonwalk "${FAST_MIB:-640}" 0; }
sc_zram_healthy() { zram_on 1024 100; mkcg zram-healthy 256; run zram-healthy w_walk_slow "$RUN_S"; }
sc_zram_busy() { zram_on 1024 100; mkcg zram-busy 256; WALK_MIBPS=24 run zram-busy w_walk_slow "$RUN_S"; }
sc_zram_stall() { zram_on 1024 100; mkcg zram-stall 256; run zram-stall w_walk_fast "$RUN_S"; }

# 2. zswap in front of a swap file, the same shapes (zswap's pool is
# charged to the cgroup, so the stalling one uses 400 MiB: 640 would not fit)
sc_zswap_healthy() { mkswap_on 1024; zswap_on; mkcg zswap-healthy 256; run zswap-healthy w_walk_slow "$RUN_S"; }
sc_zswap_busy() { mkswap_on 1024; zswap_on; mkcg zswap-busy 256; WALK_MIBPS=24 run zswap-busy w_walk_slow "$RUN_S"; }
sc_zswap_stall() { mkswap_on 1024; zswap_on; mkcg zswap-stall 256; FAST_MIB=400 run zswap-stall w_walk_fast "$RUN_S"; }

# 3. over-swap (seed 004's shape): a 512 MiB cgroup at swappiness 200 holds
# a 320 MiB file cache read twice (on the active list: with a large
# inactive list the kernel's cache_trim_mode would reclaim the cache
# first) and mapped (a DAMON pageout scheme for cold unmapped cache would
# take it otherwise), re-read 8 MiB of it every 30 s; anon grows by 16 MiB every
# 4 s to 480 MiB, written once (cold), 32 MiB of it hot: the kernel swaps
# the cold anon out to a swap file and keeps the cache
w_overswap() {
	spawn $W mapcache "$WORK/cache" 2 8 30
	sleep 15
	spawn $W grow 480 16 4 32
}
sc_overswap() {
	mkfile "$WORK/cache" 320; uncache "$WORK/cache"
	mkswap_on 1024; mkcg overswap 512 200; run overswap w_overswap "$RUN_S"
}

# 4. swap churn with a cold cache on the active list: 320 MiB read twice
# and mapped as in 3, never read again; 384 MiB of anon written at random at 32 MiB/s in a 512 MiB
# cgroup at swappiness 200: anon is swapped out and in while the cache stays
w_activecold() {
	spawn $W mapcache "$WORK/cache" 2
	sleep 10
	spawn $W anonwalk 384 32
}
sc_activecold() {
	mkfile "$WORK/cache" 320; uncache "$WORK/cache"
	mkswap_on 1024; mkcg activecold 512 200; run activecold w_activecold "$RUN_S"
}

# 5. healthy workloads, HEALTHY_S each (the segments of stitch.py's long trace)
w_idle() { spawn $W anon 32; }
sc_healthy_idle() { mkcg healthy-idle 256; run healthy-idle w_idle "$HEALTHY_S"; }
# this project's C sources compiled over and over, one job at a time, niced
w_compile() {
	rm -rf "$WORK/src"; mkdir -p "$WORK/src"
	(cd "$ROOT" && git archive HEAD common agent detect replay server bench Makefile) |
		tar -x -C "$WORK/src"
	spawn nice -n 10 bash -c "cd '$WORK/src' && while :; do make -s clean >/dev/null 2>&1; make -s -j1 bin/vmscope-agent bin/vmscope-replay >/dev/null 2>&1; done"
}
sc_healthy_compile() { mkcg healthy-compile 1024; run healthy-compile w_compile "$HEALTHY_S"; rm -rf "$WORK/src"; }
# a 3 GiB file read at 16 MiB/s, again and again (dropped from the cache
# after each pass), in a 256 MiB cgroup: use-once cache
w_stream() { spawn $W streamloop "$WORK/stream" 16; }
sc_healthy_stream() {
	mkfile0 "$WORK/stream" 3072; uncache "$WORK/stream"
	mkcg healthy-stream 256; run healthy-stream w_stream "$HEALTHY_S"; rm -f "$WORK/stream"
}
# PostgreSQL with pgbench (scale 20, 4 clients, 200 transactions/s) in a
# 1 GiB cgroup: WAL fsyncs, a 300 MiB database cached
PGDIR=$WORK/pg
w_db() {
	local port
	port=$("$ROOT/scripts/freeport.sh")
	spawn bash -c "VMSCOPE_PG_FSYNC=on '$ROOT/scripts/pg.sh' start '$PGDIR' $port >'$WORK/pg.conninfo' &&
		pgbench -h 127.0.0.1 -p $port -U postgres -i -s 20 vmscope >/dev/null 2>&1 &&
		exec pgbench -h 127.0.0.1 -p $port -U postgres -c 4 -j 2 -R 200 -T $((HEALTHY_S + 60)) vmscope >'$WORK/pgbench.out' 2>&1"
}
pg_stop() { "$ROOT/scripts/pg.sh" stop "$PGDIR" >/dev/null 2>&1; }
sc_healthy_db() {
	mkcg healthy-db 1024; run healthy-db w_db "$HEALTHY_S" pg_stop
	rm -rf "$("$ROOT/scripts/pg.sh" dir "$PGDIR" 2>/dev/null)" "$PGDIR"
}
# 256 MiB files written at 8 MiB/s with an fsync every 16 MiB, in a 512
# MiB cgroup: dirty data never piles up
w_fsync() { spawn $W fsyncwrite "$WORK/synced" 256 16 8; }
sc_healthy_fsync() { mkcg healthy-fsync 512; run healthy-fsync w_fsync "$HEALTHY_S"; rm -f "$WORK/synced"; }

list=${*:-zram_healthy zram_busy zram_stall zswap_healthy zswap_busy zswap_stall overswap activecold}
for s in $list; do
	echo "scenario $s: $(date -u +%T)"
	"sc_$s"
done
rm -f "$WORK/cache"
echo "done $(date -u +%T)"
