#!/usr/bin/env bash
# agent_cgroup_live.sh - on this machine's real cgroup filesystem, a running
# agent sees every write to a cgroup's limits and settings in its next
# samples. The agent answers those files from copies while their inotify
# watches see no write (agent/cgroup.h, struct cg_cached): this checks that
# cgroupfs raises the events (a write through vfs_write), that a copy is
# taken afresh after each change, and that a removed cgroup leaves the
# samples although its limits were cached.
#
# Needs root and a memory cgroup hierarchy (v1 memory at
# /sys/fs/cgroup/memory, or v2 with the memory controller); it creates
# vmscope-live-PID there and removes it at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
AGENT=${AGENT:-$PWD/bin/vmscope-agent}
passed=0 failed=0
check() {	# label, command...
	local label=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "ok   $label"
	else failed=$((failed + 1)); echo "FAIL $label"; fi
}

if [ "$(id -u)" != 0 ]; then
	echo "agent_cgroup_live: needs root (it creates a memory cgroup)" >&2
	exit 1
fi
if [ -f /sys/fs/cgroup/memory/memory.usage_in_bytes ] || [ -f /sys/fs/cgroup/memory/cgroup.procs ]; then
	V=1 BASE=/sys/fs/cgroup/memory LIMIT=memory.limit_in_bytes SET=memory.swappiness
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	V=2 BASE=/sys/fs/cgroup LIMIT=memory.max SET=memory.high
else
	echo "agent_cgroup_live: no memory cgroup hierarchy (v1 memory or v2 with memory enabled)" >&2
	exit 1
fi
name="vmscope-live-$$"
cg="$BASE/$name"
tmp=$(mktemp -d /tmp/vmscope-cglive.XXXXXX)
apid=
cleanup() {
	[ -n "$apid" ] && kill "$apid" 2>/dev/null && wait "$apid" 2>/dev/null
	[ -d "$cg" ] && rmdir "$cg"
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$cg" || exit 1
echo $((512 << 20)) >"$cg/$LIMIT"
# v1: swappiness 0-100; v2: memory.high in bytes
set_value() { if [ "$V" = 1 ]; then echo "$1"; else echo $(($1 << 20)); fi; }
set_value 40 >"$cg/$SET"

"$AGENT" --stdout --interval 0.2 --host live --log-level warn --cgroup-include "/$name" \
	>"$tmp/out" 2>"$tmp/err" &
apid=$!
wait_samples() {	# n: until n more samples were printed
	local n0
	n0=$(wc -l <"$tmp/out")
	for _ in $(seq 100); do [ "$(wc -l <"$tmp/out")" -ge $((n0 + $1)) ] && break; sleep 0.1; done
}
last_has() {	# max setting: the last sample's entry has them
	python3 - "$tmp/out" "/$name" "$SET" "$1" "$2" <<'EOF'
import json, sys
out, path, key, want_max, want_set = sys.argv[1:]
s = json.loads(open(out).read().splitlines()[-1])
e = [g for g in s.get("cgroups", []) if g["path"] == path]
assert len(e) == 1, s.get("cgroups")
e = e[0]
assert e["memory_max"] == int(want_max), e
assert e.get("settings", {}).get(key) == int(want_set), e
EOF
}
# copies are taken from the second sample on: these are all answered from them
wait_samples 5
check "v$V: limits as set before the agent started" last_has $((512 << 20)) "$(set_value 40)"
echo $((256 << 20)) >"$cg/$LIMIT"
set_value 17 >"$cg/$SET"
wait_samples 2
check "v$V: a write to $LIMIT and $SET is in the next samples" last_has $((256 << 20)) "$(set_value 17)"
wait_samples 3
echo $((128 << 20)) >"$cg/$LIMIT"
wait_samples 2
check "v$V: a second write is seen too (the copy was taken afresh)" last_has $((128 << 20)) "$(set_value 17)"
wait_samples 3
check "v$V: unchanged limits stay as written" last_has $((128 << 20)) "$(set_value 17)"
rmdir "$cg"
wait_samples 2
check "v$V: a removed cgroup leaves the samples" python3 -c '
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert not [g for g in s.get("cgroups", []) if g["path"] == sys.argv[2]], s.get("cgroups")
' "$tmp/out" "/$name"
mkdir "$cg"
echo $((64 << 20)) >"$cg/$LIMIT"
set_value 23 >"$cg/$SET"
wait_samples 3
check "v$V: made again, with its new limits" last_has $((64 << 20)) "$(set_value 23)"
check "agent logged no error" bash -c "! grep -q 'error' '$tmp/err'"

echo "agent_cgroup_live: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
