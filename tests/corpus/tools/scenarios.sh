#!/usr/bin/env bash
# scenarios.sh - record the real traces tests/corpus/real-*.jsonl.gz on this machine
# (needs root, a hybrid or v2 cgroup tree with the memory controller, and
# ~3 GiB of disk under WORK). Each scenario makes a memory cgroup, starts
# workloads in it, records ~SECONDS of samples at 2 s, then kills its own
# PIDs, removes the cgroup and any swap file. Usage:
#   scenarios.sh OUTDIR [scenario...]   (OUTDIR tests/corpus; default: all)
# The first six (idle ... madvfree) were recorded with tools/record.py every
# 2 s; the later ones (agent_*) with the real agent, bin/vmscope-agent --stdout
# --interval 1 (AGENT=path to use another build), which starts a few seconds
# before the workload so the trace holds the quiet baseline and the onset.
set -uo pipefail
OUT=$(cd "$1" && pwd); shift
TOOLS=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-/var/tmp/vmscope-detect-rec}
SECONDS_PER=${SECONDS_PER:-100}
AGENT=${AGENT:-$(cd "$TOOLS/../../.." && pwd)/bin/vmscope-agent}
mkdir -p "$WORK"
. "$TOOLS/reclib.sh"

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

# healthy but busy (must not alert), recorded with the agent
sc_streamread() { # a 6 GiB file read once at 48 MiB/s by a 256 MiB cgroup: use-once cache
	mkfile0 "$WORK/stream" 6144; uncache "$WORK/stream"
	mkcg streamread 256; agent_start streamread; sleep 5
	spawn python3 "$TOOLS/workload.py" stream "$WORK/stream" 48; sleep 120
	agent_stop streamread; cleanup; rm -f "$WORK/stream"
}
sc_fsyncwrite() { # 1 GiB files written with an fsync every 128 MiB by a 512 MiB cgroup
	mkcg fsyncwrite 512; agent_start fsyncwrite; sleep 5
	spawn python3 "$TOOLS/workload.py" fsyncwrite "$WORK/synced" 1024 128; sleep 100
	agent_stop fsyncwrite; cleanup; rm -f "$WORK/synced"
}
sc_fsyncbig() { # 2 GiB files with an fsync every 256 MiB by a 512 MiB cgroup: half its
	# memory under writeback after each fsync, still nothing dirty for reclaim
	mkcg fsyncbig 512; agent_start fsyncbig; sleep 5
	spawn python3 "$TOOLS/workload.py" fsyncwrite "$WORK/synced" 2048 256; sleep 100
	agent_stop fsyncbig; cleanup; rm -f "$WORK/synced"
}
sc_swapburst() { # 448 MiB of anon touched once in a 256 MiB cgroup, then 64 MiB of it hot
	mkswap_on 1024; mkcg swapburst 256; agent_start swapburst; sleep 10
	spawn python3 "$TOOLS/workload.py" swapburst 448 64; sleep 110
	agent_stop swapburst; cleanup
}
sc_cpubusy() { # one busy loop per CPU, 32 MiB of anon, no limit reached
	mkcg cpubusy 256; agent_start cpubusy; sleep 5
	spawn python3 "$TOOLS/workload.py" anon 32
	for _ in $(seq "$(nproc)"); do spawn python3 "$TOOLS/workload.py" cpu; done
	sleep 110; agent_stop cpubusy; cleanup
}
# a positive control recorded with the agent: sc_filethrash's workload
sc_agentfilethrash() {
	mkfile "$WORK/big" 1024; uncache "$WORK/big"
	mkcg agentfilethrash 256; agent_start agentfilethrash; sleep 5
	spawn python3 "$TOOLS/workload.py" read "$WORK/big"; sleep 100
	agent_stop agentfilethrash; cleanup
}

list=${*:-idle filethrash anonchurn coldanon writeback madvfree streamread fsyncwrite fsyncbig swapburst cpubusy agentfilethrash}
for s in $list; do
	echo "scenario $s: $(date -u +%T)"
	"sc_$s"
done
rm -rf "$WORK"
echo "done $(date -u +%T)"
