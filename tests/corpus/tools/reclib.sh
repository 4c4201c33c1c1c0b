# reclib.sh - sourced by the recording scripts (scenarios.sh,
# swap_scenarios.sh): one memory cgroup per scenario in the v1 memory
# hierarchy and its twin in the v2 one (which carries the cgroup's PSI on a
# hybrid machine), workloads started inside it, the agent recording it, and
# a cleanup that undoes everything the scenario made: its processes (by
# PID), the cgroup, swap files and zram devices it swapped on, and zswap's
# `enabled` put back as it was.
#
# The caller sets OUT (where traces go), TOOLS (this directory), WORK (a
# scratch directory) and AGENT (the agent binary); V1 and V2 default to
# this machine's hierarchies.
V1=${V1:-/sys/fs/cgroup/memory}
V2=${V2:-/sys/fs/cgroup/unified}

# every process left in the scenario's cgroup: all were started by the
# scenario (a compiler under make, a database server's backends)
cg_kill_all() {
	[ -n "$cg" ] || return 0
	local procs
	for _ in $(seq 100); do
		procs=$(cat "$V1$cg/cgroup.procs" 2>/dev/null)
		[ -n "$procs" ] || return 0
		kill $procs 2>/dev/null
		sleep 0.1
	done
}

pids=()
agent_pid=""
cg=""
swapfile=""
zram_dev=""
zswap_was=""
cleanup() {
	if [ -n "$agent_pid" ]; then kill "$agent_pid" 2>/dev/null; wait "$agent_pid"; agent_pid=""; fi
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=()
	if [ -n "$cg" ]; then
		cg_kill_all
		rmdir "$V1$cg" 2>/dev/null; rmdir "$V2$cg" 2>/dev/null
		cg=""
	fi
	if [ -n "$swapfile" ]; then
		swapoff "$swapfile" 2>/dev/null; rm -f "$swapfile"; swapfile=""
	fi
	if [ -n "$zram_dev" ]; then
		swapoff "/dev/zram$zram_dev" 2>/dev/null
		echo 1 >"/sys/block/zram$zram_dev/reset" 2>/dev/null
		echo "$zram_dev" >/sys/class/zram-control/hot_remove 2>/dev/null
		zram_dev=""
	fi
	if [ -n "$zswap_was" ]; then
		echo "$zswap_was" >/sys/module/zswap/parameters/enabled
		zswap_was=""
	fi
}
trap cleanup EXIT

mkcg() { # name limit_mib [swappiness]
	cg=/vmscope-rec-$1
	mkdir -p "$V1$cg" "$V2$cg"
	echo $(($2 * 1024 * 1024)) >"$V1$cg/memory.limit_in_bytes"
	if [ -n "${3:-}" ]; then echo "$3" >"$V1$cg/memory.swappiness"; fi
}
# run a workload inside the cgroup: a subshell moves itself, then execs
spawn() {
	( echo $BASHPID >"$V1$cg/cgroup.procs"; echo $BASHPID >"$V2$cg/cgroup.procs"; exec "$@" ) &
	pids+=($!)
}
mkswap_on() { # mib [priority]
	swapfile=$WORK/swapfile
	rm -f "$swapfile"
	dd if=/dev/zero of="$swapfile" bs=1M count="$1" status=none
	chmod 600 "$swapfile"
	mkswap "$swapfile" >/dev/null && swapon ${2:+-p "$2"} "$swapfile"
}
zram_on() { # mib [priority]: a zram device of our own (hot_add), swapped on
	zram_dev=$(cat /sys/class/zram-control/hot_add) || return 1
	echo "$1M" >"/sys/block/zram$zram_dev/disksize" &&
		mkswap "/dev/zram$zram_dev" >/dev/null && swapon ${2:+-p "$2"} "/dev/zram$zram_dev"
}
zswap_on() { # zswap in front of whatever swap is on; put back by cleanup
	zswap_was=$(cat /sys/module/zswap/parameters/enabled)
	echo Y >/sys/module/zswap/parameters/enabled
}
mkfile() { # path mib
	[ -f "$1" ] && [ "$(stat -c %s "$1")" -ge $(($2 * 1024 * 1024)) ] && return
	head -c $(($2 * 1024 * 1024)) /dev/urandom >"$1"
}
mkfile0() { # path mib: zeros, written once (urandom is slow for GiBs)
	[ -f "$1" ] && [ "$(stat -c %s "$1")" -ge $(($2 * 1024 * 1024)) ] && return
	dd if=/dev/zero of="$1" bs=1M count="$2" conv=fsync status=none
}
# the agent, every 1 s, only this scenario's cgroup (its v1 entry and its
# v2 twin, which carries the PSI): agent_start NAME, then agent_stop NAME
agent_start() {
	"$AGENT" --stdout --interval 1 --host "rec-$1" --cgroup-include "$cg" \
		>"$OUT/real-$1.jsonl" 2>"$WORK/agent-$1.err" &
	agent_pid=$!
}
agent_stop() {
	kill "$agent_pid"; wait "$agent_pid"; agent_pid=""
	gzip -9f "$OUT/real-$1.jsonl"
}
# drop one file's pages from the page cache (not the whole machine's)
uncache() { python3 -c 'import os,sys; fd=os.open(sys.argv[1],os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)' "$1"; }
