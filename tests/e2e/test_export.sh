#!/usr/bin/env bash
# test_export.sh - GET /api/v1/hosts/{host}/samples (docs/api.md
# "Export"): every corpus trace (tests/corpus/*.jsonl*, shifted to end now) is
# posted to a real server, exported with curl as JSON lines, and
#   - the answer is 200, application/x-ndjson, chunked;
#   - every exported line equals the posted sample semantically (numbers
#     normalised: ts to the ms, PSI averages to 0.01, interval_s to the ms;
#     cgroups compared by path and version; keys the server ignores dropped);
#   - bin/vmscope-replay over the export gives the same alerts as over the
#     original trace;
# and the parameters are checked: limit, sub-range, 404, 400s.
. "$(dirname "$0")/_lib.sh"
REPLAY=${REPLAY:-$E2E_ROOT/bin/san/vmscope-replay}
e2e_init export
e2e_server_start

shopt -s nullglob
traces=("$E2E_ROOT"/tests/corpus/*.jsonl*)
check "the corpus has traces" test "${#traces[@]}" -ge 1
for t in "${traces[@]}"; do
	name=$(basename "$t")
	e2e_shift_trace "$t" "$E2E_DIR/trace.jsonl"
	tr=$E2E_DIR/trace.jsonl
	python3 - "$tr" "$E2E_URL" "$E2E_TOKEN" <<'PY' >"$E2E_DIR/post.out" 2>&1
import json, sys, urllib.request
path, url, token = sys.argv[1:]
lines = [l for l in open(path) if l.strip()]
for i in range(0, len(lines), 30):
    body = ("[" + ",".join(lines[i:i + 30]) + "]").encode()
    req = urllib.request.Request(url + "/api/v1/samples", data=body, method="POST",
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status == 202, r.status
PY
	check_eq "$?" 0 "$name: posted $(tail -1 "$E2E_DIR/post.out")"
	read -r host since until < <(python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(rows[0]["host"], min(r["ts"] for r in rows), max(r["ts"] for r in rows))' "$tr")
	curl -s -D "$E2E_DIR/xh" -o "$E2E_DIR/export.jsonl" -w '%{http_code}' \
		"$E2E_URL/api/v1/hosts/$host/samples?since=$since&until=$until" >"$E2E_DIR/xcode"
	check_eq "$(cat "$E2E_DIR/xcode")" 200 "$name: export answers 200"
	check "$name: application/x-ndjson" grep -qi '^content-type: application/x-ndjson' "$E2E_DIR/xh"
	check "$name: chunked" grep -qi '^transfer-encoding: chunked' "$E2E_DIR/xh"
	check "$name: exported lines equal the posted samples" python3 - "$tr" "$E2E_DIR/export.jsonl" <<'PY'
import json, sys
TOP = {"host", "boot_id", "ts", "interval_s", "kernel", "page_size", "mglru", "vmstat", "meminfo",
       "psi", "cgroups", "settings", "labels", "agent_version"}
CG = {"path", "version", "memory_stat", "psi", "memory_current", "memory_max", "swap_current",
      "events", "settings"}
def psi(p):
    # averages are kept to 0.01 (the kernel's precision), totals exactly
    if isinstance(p, dict):
        return {k: (round(v * 100) if k.startswith("avg") else v) if not isinstance(v, dict) else psi(v)
                for k, v in p.items()}
    return p
def norm(s):
    s = {k: v for k, v in s.items() if k in TOP}
    s["ts"] = round(s["ts"] * 1000)
    if "interval_s" in s:
        s["interval_s"] = round(s["interval_s"] * 1000)
    if "psi" in s:
        s["psi"] = psi(s["psi"])
    s.setdefault("page_size", 4096)
    if not s.get("labels"):
        s.pop("labels", None)
    cgs = []
    for c in s.get("cgroups", []):
        c = {k: v for k, v in c.items() if k in CG}
        if "psi" in c:
            c["psi"] = psi(c["psi"])
        cgs.append(c)
    s["cgroups"] = sorted(cgs, key=lambda c: (c["path"], c["version"]))
    if not s["cgroups"]:
        del s["cgroups"]
    for k in ("meminfo", "settings"):
        if k in s and not s[k]:
            del s[k]
    return s
posted = sorted((norm(json.loads(l)) for l in open(sys.argv[1]) if l.strip()), key=lambda s: s["ts"])
# a repeated (host, ts) keeps the first copy
seen, first = set(), []
for s in posted:
    if s["ts"] not in seen:
        seen.add(s["ts"]); first.append(s)
got = [norm(json.loads(l)) for l in open(sys.argv[2]) if l.strip()]
assert len(got) == len(first), f"{len(got)} exported, {len(first)} posted"
for a, b in zip(got, first):
    if a != b:
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                print("ts", b["ts"], k, "exported", json.dumps(a.get(k))[:300], "posted", json.dumps(b.get(k))[:300])
        sys.exit(1)
PY
	"$REPLAY" "$tr" >"$E2E_DIR/replay-orig.json" 2>"$E2E_DIR/replay.err"
	check_eq "$?" 0 "$name: replay of the original runs"
	"$REPLAY" "$E2E_DIR/export.jsonl" >"$E2E_DIR/replay-export.json" 2>"$E2E_DIR/replay.err"
	check_eq "$?" 0 "$name: replay of the export runs $(head -c 300 "$E2E_DIR/replay.err")"
	check "$name: the export replays to the same alerts" python3 - "$E2E_DIR/replay-orig.json" \
		"$E2E_DIR/replay-export.json" <<'PY'
import json, sys
def keys(p):
    return sorted(json.dumps({k: v for k, v in a.items() if k != "id"}, sort_keys=True)
                  for a in json.load(open(p))["alerts"])
a, b = keys(sys.argv[1]), keys(sys.argv[2])
assert a == b, f"original {a}\nexport {b}"
PY
done

# parameters, on the last trace's host
req GET "/api/v1/hosts/$host/samples?since=$since&until=$until&limit=2"
check_status 200 "limit=2 answers 200"
check_eq "$(printf '%s\n' "$BODY" | grep -c .)" 2 "limit=2 gives two lines"
mid=$(python3 -c "import sys; print(round(($since + $until) / 2, 3))")
req GET "/api/v1/hosts/$host/samples?since=$mid&until=$until"
n_half=$(printf '%s\n' "$BODY" | grep -c .)
n_all=$(grep -c . "$E2E_DIR/export.jsonl")
check "a sub-range gives a part ($n_half of $n_all)" test "$n_half" -ge 1 -a "$n_half" -lt "$n_all"
check "a sub-range starts at since" python3 -c "
import json, sys
ts = [json.loads(l)['ts'] for l in sys.stdin if l.strip()]
assert min(ts) >= $mid and ts == sorted(ts), ts" <<<"$BODY"
req GET "/api/v1/hosts/no-such-host/samples"
check_status 404 "unknown host: 404"
req GET "/api/v1/hosts/$host/samples?since=yesterday"
check_status 400 "bad since: 400"
check_contains "since" "the 400 names since"
req GET "/api/v1/hosts/$host/samples?since=$until&until=$since"
check_status 400 "until before since: 400"
req GET "/api/v1/hosts/$host/samples?since=0&until=$until"
check_status 400 "a range over 31 days: 400"
req GET "/api/v1/hosts/$host/samples?limit=0"
check_status 400 "limit=0: 400"
req GET "/api/v1/hosts/$host/samples?since=1&until=2"
check_status 200 "an empty range: 200"
check_eq "${#BODY}" 0 "an empty range: no lines"

e2e_server_stop
e2e_done
