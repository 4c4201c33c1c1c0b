#!/usr/bin/env bash
# test_replay_vs_server.sh - CONTRACT.md §3: alert times are sample
# times, so posting a recorded trace to the server gives the same alerts as
# replaying it offline with bin/vmscope-replay. For every trace of the
# detector corpus (tests/corpus/*.jsonl[.gz], real-* and synth-*), shifted to end
# now (retention and clock skew), the trace is posted in batches, in order, to
# a real server with a real PostgreSQL, and the alerts the API returns (kind,
# host, cgroup, severity, state, started/opened/ended) must equal replay's
# for the same file, one for one, although each batch is shuffled (samples
# out of order within a batch). (test_detect_live.sh adds a server restart
# and re-posts on two of them.)
#
# This one runs the release build when it is there: it is about equality over
# ~3,000 samples of 26 traces, and under ASan the ingest of all of them takes
# minutes; every other e2e test runs the sanitizer build through the same paths.
ROOT_=$(cd "$(dirname "$0")/../.." && pwd)
if [ -x "$ROOT_/bin/vmscope-server" ] && [ -x "$ROOT_/bin/vmscope-replay" ]; then
	SERVER=$ROOT_/bin/vmscope-server REPLAY=$ROOT_/bin/vmscope-replay
fi
. "$(dirname "$0")/_lib.sh"
REPLAY=${REPLAY:-$E2E_ROOT/bin/san/vmscope-replay}
e2e_init replay
e2e_server_start

shopt -s nullglob
traces=("$E2E_ROOT"/tests/corpus/*.jsonl*)
check "the corpus has traces" test "${#traces[@]}" -ge 1
for t in "${traces[@]}"; do
	name=$(basename "$t")
	e2e_shift_trace "$t" "$E2E_DIR/trace.jsonl"
	t=$E2E_DIR/trace.jsonl
	"$REPLAY" "$t" >"$E2E_DIR/replay.json" 2>"$E2E_DIR/replay.err"
	check_eq "$?" 0 "$name: replay runs"
	# post the trace in batches of 50 lines (the agent's --batch-max), in file order
	python3 - "$t" "$E2E_URL" "$E2E_TOKEN" <<'PY' >"$E2E_DIR/post.out" 2>&1
import gzip, json, random, sys, urllib.request
path, url, token = sys.argv[1:]
op = gzip.open if path.endswith(".gz") else open
lines = [l for l in op(path, "rt") if l.strip()]
rnd = random.Random(7)
for i in range(0, len(lines), 50):
    # samples out of order within a batch: the server feeds the
    # detectors in ts order, so the alerts must still equal replay's
    chunk = lines[i:i + 50]
    rnd.shuffle(chunk)
    body = ("[" + ",".join(chunk) + "]").encode()
    req = urllib.request.Request(url + "/api/v1/samples", data=body, method="POST",
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status == 202, r.status
PY
	check_eq "$?" 0 "$name: posted (202 for every batch) $(tail -1 "$E2E_DIR/post.out")"
	hosts=$(python3 -c '
import gzip,json,sys
p=sys.argv[1]; op=gzip.open if p.endswith(".gz") else open
print(" ".join(sorted({json.loads(l)["host"] for l in op(p,"rt") if l.strip()})))' "$t")
	: >"$E2E_DIR/server.json"
	for h in $hosts; do
		req GET "/api/v1/alerts?host=$h&limit=10000"
		echo "$BODY" >>"$E2E_DIR/server.json"
	done
	check "$name: the server's alerts equal replay's" python3 - "$E2E_DIR/replay.json" "$E2E_DIR/server.json" <<'PY'
import json, sys
key = lambda a: (a["host"], a["cgroup"] or "", a["kind"], a["started_at"], a["opened_at"],
                 a["ended_at"] or "", a["severity"], a["state"])
norm = lambda t: t.replace(".000Z", "Z") if t else t
def keys(alerts):
    out = []
    for a in alerts:
        for f in ("started_at", "opened_at", "ended_at"):
            a[f] = norm(a[f])
        out.append(key(a))
    return sorted(out)
rep = keys(json.load(open(sys.argv[1]))["alerts"])
srv = []
for line in open(sys.argv[2]):
    if line.strip():
        srv += json.loads(line)["alerts"]
srv = keys([a for a in srv if a["kind"] != "host_silent"])
rep = [k for k in rep if k[2] != "host_silent"]
assert rep == srv, f"replay {rep}\nserver {srv}"
PY
done
e2e_server_stop
e2e_done
