#!/usr/bin/env bash
# agent_fixtures.sh - the agent's output on recorded /proc and /sys trees of
# five kernels must equal each fixture's expected.json (ignoring ts, host,
# agent_version, page_size). Also: the committed trees are what
# gen_fixtures.py makes, and unreadable files (EACCES) become absent keys.
set -uo pipefail
cd "$(dirname "$0")/.."
AGENT=${AGENT:-$PWD/bin/vmscope-agent}
FX=tests/fixtures
passed=0 failed=0
tmp=$(mktemp -d /tmp/vmscope-fx.XXXXXX)
chmod 0755 "$tmp"
trap 'chmod -R u+rwX "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

check() {	# name, command...
	local name=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "ok   $name"
	else failed=$((failed + 1)); echo "FAIL $name"; fi
}

# 1. every fixture
for dir in "$FX"/k*/; do
	k=$(basename "$dir")
	check "$k" bash -c "'$AGENT' --root '$dir' --once --stdout --host fixture >'$tmp/$k.json' 2>'$tmp/$k.err' &&
		python3 '$FX/compare.py' '$dir/expected.json' '$tmp/$k.json'"
done

# 2. the committed fixtures are exactly what the generator makes
check "gen_fixtures reproducible" bash -c "python3 '$FX/gen_fixtures.py' '$tmp/gen' >/dev/null &&
	for k in \$(cd '$tmp/gen' && ls); do diff -r '$tmp/gen/'\$k '$FX/'\$k >/dev/null || { echo \"\$k differs\"; exit 1; }; done"

# 3. the dropped 2^64-1 values are logged
check "value above 2^63-1 logged" grep -q "dropped vmstat.nr_zone_write_pending_bogus" "$tmp/k5.10.err"
check "value above 2^63-1 in a cgroup logged with its path" \
	grep -q "dropped cgroup v2 /system.slice/nginx.service memory_stat.workingset_refault_bogus" "$tmp/k5.10.err"

check "a malformed proc/swaps line logged" \
	grep -q 'skipped a malformed line in proc/swaps: "this is not a swap area"' "$tmp/k6.8-hybrid.err"

# 4. unreadable files count as absent (run unprivileged: root reads mode 000)
cp -r "$FX/k6.1" "$tmp/unreadable"
chmod -R a+rX "$tmp/unreadable"
chmod 000 "$tmp/unreadable/proc/pressure/io" "$tmp/unreadable/sys/fs/cgroup/system.slice/memory.events" \
	"$tmp/unreadable/sys/fs/cgroup/user.slice/memory.stat"
as_user=()
if [ "$(id -u)" = 0 ]; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
check "unreadable files are absent keys" bash -c "${as_user[*]} '$AGENT' --root '$tmp/unreadable' --once --stdout --host fixture \
	>'$tmp/unr.json' 2>'$tmp/unr.err' && python3 '$FX/compare.py' '$tmp/unreadable/expected.json' '$tmp/unr.json' \
	psi.io 'cgroups[/system.slice,2].events' 'cgroups[/user.slice,2].memory_stat'"

# 5. cgroup selection flags on a fixture
sel() { "$AGENT" --root "$FX/k6.1" --once --stdout --host fixture "$@" 2>/dev/null |
	python3 -c 'import json,sys; print(" ".join(c["path"] for c in json.load(sys.stdin).get("cgroups", [])))'; }
check "cgroup-depth 1" test "$(sel --cgroup-depth 1)" = "/system.slice /user.slice"
check "cgroup-depth 3" bash -c "[[ '$(sel --cgroup-depth 3)' == *'/user.slice/user-1000.slice/user@1000.service'* ]]"
check "cgroup-include" test "$(sel --cgroup-include '/system.slice/*')" = \
	"/system.slice/nomem.service /system.slice/noswap.service /system.slice/postgresql.service"
check "cgroup-exclude" test "$(sel --cgroup-exclude '/user.slice*' --cgroup-exclude '*/no*')" = \
	"/system.slice /system.slice/postgresql.service"
check "cgroup-max" test "$(sel --cgroup-max 3)" = "/system.slice /user.slice /system.slice/nomem.service"
check "cgroup-depth 0 gives no cgroups key" bash -c "'$AGENT' --root '$FX/k6.1' --once --stdout --cgroup-depth 0 2>/dev/null | grep -vq '\"cgroups\"'"

# 6. labels and interval go into the sample
check "labels and interval" bash -c "'$AGENT' --root '$FX/k4.14' --once --stdout --label role=db --label 'rack=r 7' --interval 2.5 2>/dev/null |
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"labels\"]=={\"role\":\"db\",\"rack\":\"r 7\"} and d[\"interval_s\"]==2.5, d'"

# 7. a long-running agent keeps a recorded tree's files open (one pread per
# file and sample; directories watched with inotify once their times are
# trusted, else one fstat each) and still sees every change:
# a file rewritten in place, replaced by rename, removed, created where it
# was absent, a cgroup directory removed and created again
live="$tmp/live" cg="$tmp/live/sys/fs/cgroup"
cp -r "$FX/k6.1" "$live"
"$AGENT" --root "$live" --stdout --interval 0.2 --host fixture --log-level warn \
	>"$tmp/live.out" 2>"$tmp/live.err" &
lpid=$!
nfd() { ls "/proc/$lpid/fd" 2>/dev/null | wc -l; }
# directory stamps are trusted once 3 s old (agent/cgroup.c), then files stay open
for _ in $(seq 150); do [ "$(nfd)" -ge 40 ] && break; sleep 0.2; done
check "recorded tree: files kept open between samples" test "$(nfd)" -ge 40
# files are kept from the first sample, but until the directories' times
# are 3 s old every visit checks them: wait until the stamps are trusted
# (and watched), so the changes below must be caught by the watches
sleep 4.5
printf '%s\n' 4242 >"$cg/system.slice/memory.current"			# in place
printf '%s\n' 123456789 >"$tmp/new.current"
mv "$tmp/new.current" "$cg/system.slice/postgresql.service/memory.current"	# renamed over
rm "$cg/system.slice/postgresql.service/memory.events"			# removed
printf '%s\n' 777 >"$cg/system.slice/noswap.service/memory.swap.current"	# was absent
rm -r "$cg/user.slice/user-1000.slice"					# recreated
mkdir "$cg/user.slice/user-1000.slice"
printf '%s\n' 5555 >"$cg/user.slice/user-1000.slice/memory.current"
# limits and settings: the agent answers them from copies while their
# watches see no write (agent/cgroup.h, struct cg_cached), so these must
# reach the next samples through the watches
printf '%s\n' 2147483648 >"$cg/system.slice/memory.max"			# in place
printf '%s\n' 1073741824 >"$tmp/new.high"
mv "$tmp/new.high" "$cg/system.slice/postgresql.service/memory.high"	# renamed over
rm "$cg/user.slice/memory.low"						# removed
printf '%s\n' 65536 >"$cg/system.slice/noswap.service/memory.swap.max"	# was absent
wait_samples() {	# n: until n more samples were printed
	local n0
	n0=$(wc -l <"$tmp/live.out")
	for _ in $(seq 150); do [ "$(wc -l <"$tmp/live.out")" -ge $((n0 + $1)) ] && break; sleep 0.2; done
}
wait_samples 2
check "recorded tree: changes under a running agent are seen in the next samples" python3 -c '
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
c = {g["path"]: g for g in s["cgroups"]}
sl = c["/system.slice"]
assert sl["memory_current"] == 4242 and sl["memory_max"] == 2147483648, sl
pg = c["/system.slice/postgresql.service"]
assert pg["memory_current"] == 123456789 and "events" not in pg and "memory_stat" in pg, pg
assert pg["settings"]["memory.high"] == 1073741824, pg
ns = c["/system.slice/noswap.service"]
assert ns["swap_current"] == 777 and ns["settings"]["memory.swap.max"] == 65536, ns
assert "memory.low" not in c["/user.slice"].get("settings", {}), c["/user.slice"]
u = c["/user.slice/user-1000.slice"]
assert u == {"path": "/user.slice/user-1000.slice", "version": 2, "memory_current": 5555}, u
' "$tmp/live.out"
# the same files written in place again once the changed directories'
# stamps are trusted again (3 s, as above), so that these reach the agent
# through copies taken afresh and their watches; one unchanged stays
sleep 4.5
printf '%s\n' 3221225472 >"$cg/system.slice/memory.max"
printf '%s\n' 2147483648 >"$cg/system.slice/postgresql.service/memory.high"
printf '%s\n' 4096 >"$cg/user.slice/memory.low"
wait_samples 2
kill "$lpid"; wait "$lpid" 2>/dev/null
check "recorded tree: limits written again are seen again" python3 -c '
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])
c = {g["path"]: g for g in s["cgroups"]}
assert c["/system.slice"]["memory_max"] == 3221225472, c["/system.slice"]
pg = c["/system.slice/postgresql.service"]
assert pg["settings"]["memory.high"] == 2147483648 and pg["memory_max"] == 4294967296, pg
assert c["/user.slice"]["settings"]["memory.low"] == 4096, c["/user.slice"]
assert c["/system.slice/noswap.service"]["settings"]["memory.swap.max"] == 65536
' "$tmp/live.out"

# 8. what the swap is, on this machine's /proc/swaps and zswap parameters:
# --once (files opened) and a running agent (files kept open, read again
# with pread) report what a reading of the same files before and after
# each sample says (swap use may move in between)
swapstate() { python3 - <<'PY'
import json, os, re
out = {}
try:
    lines = open("/proc/swaps").read().splitlines()[1:]
except FileNotFoundError:
    lines = None
if lines is not None:
    out["swap.devices"] = len(lines)
    for l in lines:
        name, typ, size, used, prio = l.rsplit(None, 4)
        base = name.rsplit("/", 1)[-1]
        kind = "zram" if typ == "partition" and re.fullmatch(r"zram[0-9]+", base) else typ
        for k, v in (("devices", 1), ("size_kb", int(size)), ("used_kb", int(used))):
            out[f"swap.{kind}.{k}"] = out.get(f"swap.{kind}.{k}", 0) + v
        if int(prio) >= 0:
            out[f"swap.{kind}.priority"] = max(int(prio), out.get(f"swap.{kind}.priority", 0))
d = "/sys/module/zswap/parameters/"
if os.path.exists(d + "enabled"):
    on = open(d + "enabled").read().strip() == "Y"
    for p in ("enabled", "max_pool_percent", "shrinker_enabled"):
        if os.path.exists(d + p) and (on or p == "enabled"):
            v = open(d + p).read().strip()
            out["zswap." + p] = {"Y": 1, "N": 0}.get(v, None) if p != "max_pool_percent" else int(v)
print(json.dumps(out))
PY
}
swapstate >"$tmp/swaps.before"
"$AGENT" --once --stdout --cgroup-depth 0 >"$tmp/real.once" 2>/dev/null
"$AGENT" --stdout --interval 0.3 --cgroup-depth 0 >"$tmp/real.run" 2>/dev/null &
rpid=$!
sleep 1.2
kill "$rpid"; wait "$rpid" 2>/dev/null
swapstate >"$tmp/swaps.after"
check "this machine: swap and zswap settings match /proc/swaps and zswap's parameters" python3 - \
	"$tmp/swaps.before" "$tmp/swaps.after" "$tmp/real.once" "$tmp/real.run" <<'PY'
import json, sys
before, after = (json.load(open(p)) for p in sys.argv[1:3])
samples = [json.loads(l) for p in sys.argv[3:] for l in open(p) if l.strip()]
assert len(samples) >= 3, len(samples)
for s in samples:
    got = {k: v for k, v in s.get("settings", {}).items() if k.startswith(("swap.", "zswap."))}
    assert "swap.devices" in got, got
    ok = got == before or got == after
    if not ok and set(got) == set(before):
        ok = all(got[k] == before[k] or (k.endswith("used_kb") and
                 min(before[k], after.get(k, 0)) <= got[k] <= max(before[k], after.get(k, 0)))
                 for k in got)
    assert ok, (got, before, after)
PY

echo "agent_fixtures: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
