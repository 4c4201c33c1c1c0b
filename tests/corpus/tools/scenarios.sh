#!/usr/bin/env bash
# scenarios.sh - record the real traces tests/corpus/real-*.jsonl.gz on this machine
# (needs root, a hybrid or v2 cgroup tree with the memory controller, and
# ~3 GiB of disk under WORK). Each scenario makes a memory cgroup, starts
# workloads in it, records ~SECONDS of samples at 2 s, then kills its own
# PIDs, removes the cgroup and any swap file. Usage:
#   scenarios.sh OUTDIR [scenario...]   (OUTDIR tests/corpus; default: all)
set -uo pipefail
OUT=$(cd "$1" && pwd); shift
TOOLS=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-/var/tmp/vmscope-detect-rec}
SECONDS_PER=${SECONDS_PER:-100}
V1=/sys/fs/cgroup/memory
V2=/sys/fs/cgroup/unified
mkdir -p "$WORK"

pids=()
cg=""
swapfile=""
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=()
	if [ -n "$cg" ]; then
		rmdir "$V1$cg" 2>/dev/null; rmdir "$V2$cg" 2>/dev/null
		cg=""
	fi
	if [ -n "$swapfile" ]; then
		swapoff "$swapfile" 2>/dev/null; rm -f "$swapfile"; swapfile=""
	fi
}
trap cleanup EXIT

mkcg() { # name limit_mib
	cg=/vmscope-rec-$1
	mkdir -p "$V1$cg" "$V2$cg"
	echo $(($2 * 1024 * 1024)) >"$V1$cg/memory.limit_in_bytes"
}
# run a workload inside the cgroup: a subshell moves itself, then execs
spawn() {
	( echo $BASHPID >"$V1$cg/cgroup.procs"; echo $BASHPID >"$V2$cg/cgroup.procs"; exec "$@" ) &
	pids+=($!)
}
mkswap_on() {
	swapfile=$WORK/swapfile
	rm -f "$swapfile"
	dd if=/dev/zero of="$swapfile" bs=1M count=$1 status=none
	chmod 600 "$swapfile"
	mkswap "$swapfile" >/dev/null && swapon "$swapfile"
}
mkfile() { # path mib
	[ -f "$1" ] && [ "$(stat -c %s "$1")" -ge $(($2 * 1024 * 1024)) ] && return
	head -c $(($2 * 1024 * 1024)) /dev/urandom >"$1"
}
record() { # name
	python3 "$TOOLS/record.py" --out "$OUT/real-$1.jsonl" --seconds "$SECONDS_PER" --interval 2 \
		--host "rec-$1" --cgroup "$cg"
	gzip -9f "$OUT/real-$1.jsonl"
}

sc_idle() { mkcg idle 256; spawn python3 "$TOOLS/workload.py" anon 32; record idle; cleanup; }
sc_filethrash() {
	mkfile "$WORK/big" 1024; sync; echo 1 >/proc/sys/vm/drop_caches
	mkcg filethrash 256; spawn python3 "$TOOLS/workload.py" read "$WORK/big"; record filethrash; cleanup
}
sc_anonchurn() {
	mkswap_on 1024; mkcg anonchurn 256
	spawn python3 "$TOOLS/workload.py" anon 384 touch; record anonchurn; cleanup
}
sc_coldanon() {
	mkfile "$WORK/mid" 512; sync; echo 1 >/proc/sys/vm/drop_caches
	mkswap_on 1024; mkcg coldanon 512
	spawn python3 "$TOOLS/workload.py" anon 300; sleep 5
	spawn python3 "$TOOLS/workload.py" read "$WORK/mid"; record coldanon; cleanup
}
sc_writeback() {
	mkcg writeback 256; spawn python3 "$TOOLS/workload.py" write "$WORK/dirty" 2048
	record writeback; cleanup; rm -f "$WORK/dirty"
}
sc_madvfree() {
	mkfile "$WORK/mid" 512; sync; echo 1 >/proc/sys/vm/drop_caches
	mkcg madvfree 512
	spawn python3 "$TOOLS/workload.py" madvfree 256; sleep 3
	spawn python3 "$TOOLS/workload.py" read "$WORK/mid"; record madvfree; cleanup
}

list=${*:-idle filethrash anonchurn coldanon writeback madvfree}
for s in $list; do
	echo "scenario $s: $(date -u +%T)"
	"sc_$s"
done
rm -rf "$WORK"
echo "done $(date -u +%T)"
