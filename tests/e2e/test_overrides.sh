#!/usr/bin/env bash
# test_overrides.sh - detector overrides (docs/detectors.md "Overrides",
# docs/api.md): the admin API's refusals (401 without a token, 403 with an
# ingest token, 400 naming the bad field), then the same thrash +
# swap_imbalance trace (synth-s000-61) posted for four hosts:
#   ovr-a   a host rule raises thrash's min_magnitude: no thrash there
#   ovr-b   no rule: thrash and swap_imbalance as in the corpus
#   ovr-c   labelled team=db: the label rule disables swap_imbalance
#   ovr-d   labelled team=db, with a host rule that re-enables it (the host
#           beats the label)
# and vmscope-replay --overrides with the rules saved from GET gives the
# server's alerts exactly (replay == server). DELETE of a rule by id.
. "$(dirname "$0")/_lib.sh"
REPLAY=${REPLAY:-$E2E_ROOT/bin/san/vmscope-replay}
e2e_init overrides
ADMIN=admin-$RANDOM$RANDOM$RANDOM
printf '# vmscope admin token\n%s\n' "$ADMIN" >"$E2E_DIR/admin.token"
e2e_server_start --admin-token-file "$E2E_DIR/admin.token"

put() { # put BODY [curl args]: PUT /api/v1/overrides
	printf '%s' "$1" >"$E2E_DIR/put.json"
	shift
	req PUT /api/v1/overrides -H "Content-Type: application/json" --data-binary "@$E2E_DIR/put.json" "$@"
}

req GET /api/v1/overrides
check_status 200 "GET overrides"
check_jq '.overrides == []' "no overrides at first"

RULES='{"overrides":[
 {"host":"ovr-a","kind":"thrash","params":{"min_magnitude":1e12},"note":"batch box: refaults are its job"},
 {"label":"team=db","kind":"swap_imbalance","params":{"enabled":false}},
 {"host":"ovr-d","kind":"swap_imbalance","params":{"enabled":true}}]}'
put "$RULES"
check_status 401 "PUT without a token"
check_json_error "401 has the error shape"
put "$RULES" -H "Authorization: Bearer $E2E_TOKEN"
check_status 403 "PUT with the ingest token"
put '{"overrides":[{"host":"ovr-a","kind":"thrash","params":{"min_magnitud":1}}]}' -H "Authorization: Bearer $ADMIN"
check_status 400 "a misspelt parameter"
check_contains "overrides[0]: params.min_magnitud: unknown parameter" "the 400 names the field"
put '{"overrides":[{"host":"ovr-a","kind":"thrash","params":{"enabled":false}},{"host":"ovr-a","kind":"thrash","params":{"hold_s":9}}]}' \
	-H "Authorization: Bearer $ADMIN"
check_status 400 "two rules for one place and kind"
put 'not json' -H "Authorization: Bearer $ADMIN"
check_status 400 "a body that is not JSON"
req GET /api/v1/overrides
check_jq '.overrides == []' "refused PUTs stored nothing"

put "$RULES" -H "Authorization: Bearer $ADMIN"
check_status 200 "PUT with the admin token"
check_jq '.overrides | length == 3' "three rules stored"
check_jq '.overrides[0] | .host == "ovr-a" and .kind == "thrash" and .params.min_magnitude == 1e12 and (.id | type == "number") and (.updated_at | test("Z$"))' \
	"the stored rule as sent, with id and updated_at"
req GET /api/v1/overrides
echo "$BODY" >"$E2E_DIR/overrides.json"
check_jq '.overrides[1].label == "team=db"' "GET shows the label rule"

# --- the same trace for four hosts ---
SRC="$E2E_ROOT/tests/corpus/synth-s000-61.jsonl"
e2e_shift_trace "$SRC" "$E2E_DIR/base.jsonl"
python3 - "$E2E_DIR/base.jsonl" "$E2E_DIR/all.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
with open(sys.argv[2], "w") as f:
    for host, labels in (("ovr-a", None), ("ovr-b", None), ("ovr-c", {"team": "db"}),
                         ("ovr-d", {"team": "db", "env": "prod"})):
        for r in rows:
            r = dict(r, host=host)
            if labels:
                r["labels"] = labels
            f.write(json.dumps(r) + "\n")
PY
python3 - "$E2E_DIR/all.jsonl" "$E2E_URL" "$E2E_TOKEN" <<'PY' >"$E2E_DIR/post.out" 2>&1
import sys, urllib.request
path, url, token = sys.argv[1:]
lines = [l for l in open(path) if l.strip()]
for i in range(0, len(lines), 50):
    body = ("[" + ",".join(lines[i:i + 50]) + "]").encode()
    req = urllib.request.Request(url + "/api/v1/samples", data=body, method="POST",
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status == 202, r.status
PY
check_eq "$?" 0 "posted four hosts $(tail -1 "$E2E_DIR/post.out")"

kinds() { # kinds HOST: the sorted kinds of its alerts, space-separated (host_silent
	# left out: on a loaded machine the tick may open one once the trace is a minute old)
	req GET "/api/v1/alerts?host=$1&limit=1000"
	json '[.alerts[].kind | select(. != "host_silent")] | sort | unique | join(" ")'
}
check_eq "$(kinds ovr-b)" "swap_imbalance thrash" "ovr-b (no rule) alerts as the corpus says"
check_eq "$(kinds ovr-a)" "swap_imbalance" "ovr-a: the raised thrash threshold stops its thrash alert"
check_eq "$(kinds ovr-c)" "thrash" "ovr-c: the team=db label rule disables swap_imbalance"
check_eq "$(kinds ovr-d)" "swap_imbalance thrash" "ovr-d: its host rule beats the label rule"

# --- replay with the saved rules gives the server's alerts ---
"$REPLAY" --overrides "$E2E_DIR/overrides.json" "$E2E_DIR/all.jsonl" >"$E2E_DIR/replay.json" 2>"$E2E_DIR/replay.err"
check_eq "$?" 0 "replay --overrides runs $(tail -1 "$E2E_DIR/replay.err")"
"$REPLAY" "$E2E_DIR/all.jsonl" >"$E2E_DIR/replay-plain.json" 2>/dev/null
: >"$E2E_DIR/server.json"
for h in ovr-a ovr-b ovr-c ovr-d; do
	req GET "/api/v1/alerts?host=$h&limit=1000"
	echo "$BODY" >>"$E2E_DIR/server.json"
done
cmp_alerts() {
	python3 - "$1" "$E2E_DIR/server.json" <<'PY'
import json, sys
norm = lambda t: t.replace(".000Z", "Z") if t else ""
key = lambda a: (a["host"], a["cgroup"] or "", a["kind"], norm(a["started_at"]), norm(a["opened_at"]),
                 norm(a["ended_at"]), a["severity"], a["state"])
rep = sorted(key(a) for a in json.load(open(sys.argv[1]))["alerts"] if a["kind"] != "host_silent")
srv = []
for line in open(sys.argv[2]):
    if line.strip():
        srv += json.loads(line)["alerts"]
srv = sorted(key(a) for a in srv if a["kind"] != "host_silent")
assert rep == srv, f"replay {rep}\nserver {srv}"
print(len(rep), "alerts")
PY
}
check "replay --overrides equals the server" cmp_alerts "$E2E_DIR/replay.json"
check_eq "$(jq '.alerts | length' "$E2E_DIR/replay-plain.json")/$(jq '.alerts | length' "$E2E_DIR/replay.json")" "8/6" \
	"replay without the rules: 8 alerts, with them 6 (the rules matter)"

# --- replay refuses a bad file, naming it ---
echo '{"overrides":[{"kind":"thrash","params":{"hold":1}}]}' >"$E2E_DIR/bad.json"
"$REPLAY" --overrides "$E2E_DIR/bad.json" "$E2E_DIR/base.jsonl" >/dev/null 2>"$E2E_DIR/bad.err"
check_eq "$?" 2 "replay exits 2 on a bad overrides file"
check "and says which field" grep -q "params.hold: unknown parameter" "$E2E_DIR/bad.err"

# --- DELETE one rule ---
req GET /api/v1/overrides
id=$(json '.overrides[0].id')
req DELETE "/api/v1/overrides/$id"
check_status 401 "DELETE without a token"
req DELETE "/api/v1/overrides/$id" -H "Authorization: Bearer $ADMIN"
check_status 200 "DELETE rule $id"
check_jq ".deleted == $id" "answer names the rule"
req DELETE "/api/v1/overrides/$id" -H "Authorization: Bearer $ADMIN"
check_status 404 "DELETE it again"
req DELETE "/api/v1/overrides/x1" -H "Authorization: Bearer $ADMIN"
check_status 404 "DELETE a non-number id"
req GET /api/v1/overrides
check_jq '.overrides | length == 2 and all(.[]; .host != "ovr-a")' "two rules left"
req GET /api/v1/overrides/1
check_status 405 "GET of one rule is not an endpoint (405)"

e2e_server_stop
e2e_done
