#!/usr/bin/env bash
# stitch_test.sh - tests/corpus/tools/stitch.py on real recordings: two
# segments cut from one corpus trace (same boot) joined into a trace at
# 10 s that passes over them several times. Checks that
#   - every interval carries the counter deltas of the recorded interval
#     its provenance names, and every gauge is the recorded value;
#   - timestamps advance by exactly 10 s, counters never go down, host,
#     boot_id and the cgroup path are one each, and the hours are covered;
#   - segments of two boots, and a counter that goes down, are refused.
set -uo pipefail
cd "$(dirname "$0")/.."
TOOLS=tests/corpus/tools
tmp=$(mktemp -d /tmp/vmscope-stitch.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() {	# name, command...
	local name=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "ok   $name"
	else failed=$((failed + 1)); echo "FAIL $name"; fi
}

# two segments of one real recording (2 s samples of an agent, one boot)
python3 - tests/corpus/real-streamread.jsonl.gz "$tmp" <<'PY'
import gzip, json, sys
rows = [l for l in gzip.open(sys.argv[1], "rt") if l.strip()]
half = len(rows) // 2
open(sys.argv[2] + "/a.jsonl", "w").writelines(rows[:half])
open(sys.argv[2] + "/b.jsonl", "w").writelines(rows[half:])
PY
python3 "$TOOLS/stitch.py" --out "$tmp/out.jsonl.gz" --hours 0.25 --provenance "$tmp/prov.jsonl" \
	--host stitched --cgroup /healthy "$tmp/a.jsonl" "$tmp/b.jsonl" 2>"$tmp/stitch.err"
check "stitch.py runs" test $? = 0

check "every interval is a recorded one, every gauge a recorded value" python3 - "$tmp" <<'PY'
import gzip, json, sys
sys.path.insert(0, "tests/corpus/tools")
import stitch
d = sys.argv[1]
out = [json.loads(l) for l in gzip.open(d + "/out.jsonl.gz", "rt")]
prov = [json.loads(l) for l in open(d + "/prov.jsonl")]
src = {}
for name in ("a.jsonl", "b.jsonl"):
    for l in open(f"{d}/{name}"):
        r = json.loads(l)
        src[(d + "/" + name, r["ts"])] = r
assert len(prov) == len(out) - 1, (len(prov), len(out))
assert (len(out) - 1) * 10 >= 0.25 * 3600, len(out)
def gauges(s):
    g = {("meminfo", k): v for k, v in s.get("meminfo", {}).items()}
    g.update({("vmstat", k): v for k, v in s["vmstat"].items() if not stitch.vmstat_is_counter(k)})
    g.update({("settings", k): v for k, v in s.get("settings", {}).items()})
    for c in s.get("cgroups", []):
        for k, v in c.get("memory_stat", {}).items():
            if not stitch.cg_stat_is_counter(k):
                g[("cg", c["version"], k)] = v
        for k in ("memory_current", "memory_max", "swap_current"):
            if k in c:
                g[("cg", c["version"], k)] = c[k]
    return g
for i, p in enumerate(prov):
    prev_out, cur_out = out[i], out[i + 1]
    assert cur_out["ts"] == p["ts"]
    rec, rec_prev = src[(p["src"], p["src_ts"])], src[(p["src"], p["src_prev_ts"])]
    before = dict(stitch.counter_paths(rec_prev))
    want = {k: v - before[k] for k, v in stitch.counter_paths(rec) if k in before}
    got_prev = dict(stitch.counter_paths(prev_out))
    for k, v in stitch.counter_paths(cur_out):
        if k in want:
            assert v - got_prev[k] == want[k], (i, k, v - got_prev[k], want[k])
    assert gauges(cur_out) == gauges(rec), i
# the joins really are in the trace: more than one pass, both segments
assert len({p["src"] for p in prov}) == 2
assert sum(1 for a, b in zip(prov, prov[1:]) if a["src"] != b["src"]) >= 3
PY

check "ts every 10 s, counters never down, one host, boot_id and cgroup path" python3 - "$tmp" <<'PY'
import gzip, json, sys
sys.path.insert(0, "tests/corpus/tools")
import stitch
out = [json.loads(l) for l in gzip.open(sys.argv[1] + "/out.jsonl.gz", "rt")]
assert all(abs(b["ts"] - a["ts"] - 10) < 1e-6 for a, b in zip(out, out[1:]))
assert len({s["host"] for s in out}) == 1 and out[0]["host"] == "stitched"
assert len({s["boot_id"] for s in out}) == 1
assert {c["path"] for s in out for c in s.get("cgroups", [])} == {"/healthy"}
assert all(s["interval_s"] == 10 for s in out)
for a, b in zip(out, out[1:]):
    pa = dict(stitch.counter_paths(a))
    for k, v in stitch.counter_paths(b):
        assert k not in pa or v >= pa[k], k
PY

# refusals
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(d + "/b.jsonl")]
with open(d + "/otherboot.jsonl", "w") as f:
    for r in rows:
        r["boot_id"] = "00000000-0000-4000-8000-000000000000"
        f.write(json.dumps(r) + "\n")
rows = [json.loads(l) for l in open(d + "/b.jsonl")]
for r in rows[10:]:	# below the first sample from the 11th on: every phase sees it
    r["vmstat"]["pgscan_kswapd"] = rows[0]["vmstat"]["pgscan_kswapd"] - 1
with open(d + "/down.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
PY
python3 "$TOOLS/stitch.py" --out "$tmp/x.jsonl" --hours 0.1 "$tmp/a.jsonl" "$tmp/otherboot.jsonl" 2>"$tmp/err1"
check "segments of two boots are refused" bash -c "test $? != 0 && grep -q 'boot_id differs' '$tmp/err1'"
python3 "$TOOLS/stitch.py" --out "$tmp/x.jsonl" --hours 0.1 "$tmp/down.jsonl" 2>"$tmp/err2"
check "a counter going down is refused" bash -c "test $? != 0 && grep -q 'vmstat.pgscan_kswapd goes down' '$tmp/err2'"

echo "stitch_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
