#!/usr/bin/env bash
# test_compare.sh - GET /api/v1/compare on replayed recordings: 10 hosts
# replaying real-writeback (reclaim at a cgroup's limit meets dirty pages,
# writeback_storm alerts) as kernel 6.1.0-wb and 10 replaying real-cpubusy
# (healthy: CPU busy, no memory pressure) as 6.1.0-ok, labelled role and
# rack. The writeback group must come out worse, with significance, on the
# figures the recordings move; two racks of the same scenario must differ
# on nothing; the group listing, label grouping and filters, the kernel as
# of the window (host_meta) and the 400s naming the parameter.
. "$(dirname "$0")/_lib.sh"
CORPUS="$E2E_ROOT/tests/corpus"

e2e_init compare
e2e_server_start

# post_file FILE: one batch, 202 expected
post_file() {
	req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" \
		-H 'Content-Type: application/json' --data-binary @"$1"
	[ "$STATUS" = 202 ] && ok || bad "post $(basename "$1")"
}

# two scenarios, 10 hosts each: host i replays a slice of the recording
# starting i samples (2 s apart) or 2 samples (1 s apart) in, so the hosts'
# means differ and the racks (i even / odd) interleave. 40 s of the
# writeback storm is enough for its alert to open (30 s).
mkdir -p "$E2E_DIR/batches"
H="$(dirname "$0")/_compare_hosts.py"
python3 "$H" "$CORPUS/real-writeback.jsonl.gz" wb 10 6.1.0-wb wb 1 35 3 "$E2E_DIR/batches" &&
python3 "$H" "$CORPUS/real-cpubusy.jsonl.gz" ok 10 6.1.0-ok ok 2 40 3 "$E2E_DIR/batches" ||
	{ bad "could not build the host copies"; e2e_done; }
# three uploads at a time (each host's batches are in one file, so a
# host's samples still arrive in order)
ls "$E2E_DIR"/batches/*.json | xargs -P 3 -I{} curl -s -o /dev/null -w '%{http_code}\n' \
	-H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Type: application/json' \
	--data-binary @{} "$E2E_URL/api/v1/samples" >"$E2E_DIR/codes"
check_eq "$(sort -u "$E2E_DIR/codes" | tr -d '\n')" 202 "every batch stored"
check_eq "$(wc -l <"$E2E_DIR/codes")" 20 "20 batches"

# a host that moved from kernel 6.1.0-old to 6.1.0-new half-way (two
# batches: host_meta records the change)
python3 - "$CORPUS/real-cpubusy.jsonl.gz" "$E2E_DIR" <<'PY'
import gzip, json, sys, time
rows = [json.loads(l) for l in gzip.open(sys.argv[1], "rt") if l.strip()][:40]
shift = time.time() - 3 - rows[-1]["ts"]
half = len(rows) // 2
for k, (part, kernel) in enumerate(((rows[:half], "6.1.0-old"), (rows[half:], "6.1.0-new"))):
    out = [dict(r, host="mv-0", boot_id="boot-mv", ts=round(r["ts"] + shift, 3), kernel=kernel,
                labels={"role": "mv"}) for r in part]
    json.dump(out, open("%s/mv-%d.json" % (sys.argv[2], k), "w"))
open(sys.argv[2] + "/mv-switch", "w").write("%d" % int((rows[half]["ts"] + shift) * 1000 - 1))
PY
mv_switch=$(cat "$E2E_DIR/mv-switch")
post_file "$E2E_DIR/mv-0.json"
post_file "$E2E_DIR/mv-1.json"
# the figures come from the 5-minute rollups, written with each host's checkpoint
check "the rollups are checkpointed" e2e_wait_checkpoints

# the detectors saw the storm on every writeback host and nothing elsewhere
req GET "/api/v1/alerts?kind=writeback_storm&limit=1000"
check_jq '[.alerts[].host] | unique | length == 10 and all(startswith("wb-"))' "writeback_storm on all 10 wb hosts"

# ---- listing ----
req GET "/api/v1/compare?group_by=kernel"
check_status 200 "list kernels"
check_jq '.group_by == "kernel" and (.since | type == "number") and .until - .since == 86400000' "listing window: last 24 h in ms"
check_jq '.since_ts * 1000 == .since and .until_ts * 1000 == .until' "listing window in seconds too (since_ts, until_ts)"
check_jq '.groups[0:2] == [{"value":"6.1.0-ok","hosts":10},{"value":"6.1.0-wb","hosts":10}]' "two kernels with 10 hosts each, sorted by hosts"
check_jq '[.groups[] | select(.value == "6.1.0-new")] == [{"value":"6.1.0-new","hosts":1}] and ([.groups[].value] | index("6.1.0-old") == null)' "the upgraded host counts under its current kernel"
req GET "/api/v1/compare?group_by=kernel&until=$mv_switch"
check_jq '[.groups[] | select(.value == "6.1.0-old")] == [{"value":"6.1.0-old","hosts":1}] and ([.groups[].value] | index("6.1.0-new") == null)' "before the upgrade: the kernel at the window"
req GET "/api/v1/compare?group_by=label:rack&label=role:wb"
check_jq '.group_by == "label:rack" and .groups == [{"value":"r1","hosts":5},{"value":"r2","hosts":5}]' "label grouping with a label filter"
req GET "/api/v1/compare?group_by=label:role&label=rack:r1&label=role:ok"
check_jq '.groups == [{"value":"ok","hosts":5}]' "two filters are ANDed"

# ---- ok (a) vs writeback (b) ----
req GET "/api/v1/compare?group_by=kernel&a=6.1.0-ok&b=6.1.0-wb"
check_status 200 "compare kernels"
cp "$E2E_DIR/body" "$E2E_DIR/cmp.json"
[ -n "${COMPARE_KEEP:-}" ] && cp "$E2E_DIR/body" "$COMPARE_KEEP"
check_jq '.a == "6.1.0-ok" and .b == "6.1.0-wb" and .hosts == {"a":10,"b":10} and .alpha == 0.05 and .interval_s == 300' "compare header"
check_jq '.since_ts * 1000 == .since and .until_ts * 1000 == .until' "compare window in seconds too (since_ts, until_ts)"
check_jq '.figures[] | select(.name == "immediate_reclaim") | (.hosts_top.b | length) == 5 and all(.hosts_top.b[].host; startswith("wb-"))
	and ([.hosts_top.b[].value] | . == (sort | reverse)) and .hosts_top.b[0].value > 500 and all(.hosts_top.a[].host; startswith("ok-"))' \
	"hosts_top: each group's worst hosts first (highest immediate reclaim)"
check_jq '.figures[] | select(.name == "kswapd_efficiency") | [.hosts_top.a[].value] | . == sort' "hosts_top: lowest first where higher is better"
check_jq '[.figures[].name] | contains(["kswapd_efficiency","direct_efficiency","scan_kswapd","scan_direct","steal_kswapd","steal_direct","refault_file","refault_anon","vmscan_write","immediate_reclaim","allocstall","swap_in","swap_out","psi_memory_some","psi_memory_full","alert_minutes_writeback_storm"])' "every figure of the contract"
# the server's figures equal a plain recomputation from the rollups
# (_compare_ref.py: plain SELECTs, sorted lists, the definitions of
# docs/api.md), with and without a label filter
ref=$(python3 "$(dirname "$0")/_compare_ref.py" "$E2E_DB" "$E2E_DIR/cmp.json" 2>&1)
check_eq "$(head -c 3 <<<"$ref")" "ok " "figures equal a recomputation from the rollups: $ref"
req GET "/api/v1/compare?group_by=kernel&a=6.1.0-ok&b=6.1.0-wb&label=rack:r1"
cp "$E2E_DIR/body" "$E2E_DIR/cmp-r1.json"
ref=$(python3 "$(dirname "$0")/_compare_ref.py" "$E2E_DB" "$E2E_DIR/cmp-r1.json" rack:r1 2>&1)
check_eq "$(head -c 3 <<<"$ref")" "ok " "with label=rack:r1 too: $ref"
check_jq '.hosts == {"a":5,"b":5}' "label=rack:r1: 5 hosts each"
BODY=$(cat "$E2E_DIR/cmp.json")
fig() { jq -c --arg n "$1" '.figures[] | select(.name == $n)' "$E2E_DIR/cmp.json"; }
# memory pressure: ~10 % some-avg10 in the storm, 0 on the busy CPUs
BODY=$(fig psi_memory_some)
check_jq '.significant and .verdict == "worse" and .better == "lower" and .unit == "%" and .b.mean > 5 and .a.mean < 1 and .test.p < 0.05 and .test.unit == "host" and .a.hosts == 10 and .b.hosts == 10' "psi_memory_some worse on 6.1.0-wb"
# minutes of open writeback_storm alerts: none on the healthy group
BODY=$(fig alert_minutes_writeback_storm)
check_jq '.significant and .verdict == "worse" and .unit == "min/host-day" and .a.mean == 0 and .b.mean > 0 and .change_pct.mean == null' "writeback_storm minutes worse on 6.1.0-wb"
# memory stalls: PSI full moves with some in the storm
BODY=$(fig psi_memory_full)
check_jq '.significant and .verdict == "worse"' "psi_memory_full worse on 6.1.0-wb"
# file refaults: higher in the storm (the writer's pages read back) but
# bursty across the hosts' slices: never better
BODY=$(fig refault_file)
check_jq '.verdict != "better" and .b.mean > .a.mean' "refault_file not better on 6.1.0-wb"
# pages tagged for immediate reclaim: ~1700/s in the recording (reclaim
# meets pages under writeback and rotates them), 0 on the healthy hosts
BODY=$(fig immediate_reclaim)
check_jq '.significant and .verdict == "worse" and .b.mean > 500 and .a.mean < 1' "immediate_reclaim worse on 6.1.0-wb"
# the flushers' I/O shows in I/O pressure
BODY=$(fig psi_io_full)
check_jq '.significant and .verdict == "worse"' "psi_io_full worse on 6.1.0-wb"
# nr_vmscan_write: reclaim never writes file pages itself at a cgroup limit
# (only kswapd may; the recording shows 0), so no difference
BODY=$(fig vmscan_write)
check_jq '.significant == false and .verdict == "same"' "vmscan_write: no difference (0 in both recordings)"
BODY=$(cat "$E2E_DIR/cmp.json")
check_jq '[.figures[] | select(.verdict == "better")] == []' "the writeback group is better on nothing"
check_jq '[.figures[] | select(.verdict != "same") | .significant] | all' "a verdict only with significance"
check_jq '[.figures[] | select(.hist != null) | (.hist.edges | length) == 11 and (.hist.a | add) == .a.n and (.hist.b | add) == .b.n] | all' "histograms: 10 shared bins counting every host-interval"
check_jq '[.figures[] | select(.a.n > 0) | .a.p50 <= .a.p95 and .a.p95 <= .a.p99] | all' "percentiles ordered"
# the reverse question flips the verdicts
req GET "/api/v1/compare?group_by=kernel&a=6.1.0-wb&b=6.1.0-ok"
check_jq '[.figures[] | select(.name == "psi_memory_some" or .name == "alert_minutes_writeback_storm") | .verdict] == ["better","better"]' "a/b swapped: better"

# ---- same scenario, two racks: no difference on any figure ----
for role in wb ok; do
	req GET "/api/v1/compare?group_by=label:rack&a=r1&b=r2&label=role:$role"
	check_status 200 "racks of $role"
	check_jq '.hosts == {"a":5,"b":5} and ([.figures[] | select(.a.n > 0)] | length) >= 5' "racks of $role: 5 hosts each, figures with data"
	check_jq '[.figures[] | select(.significant or .verdict != "same")] == []' "racks of $role: no significant difference"
done

# an empty group is not an error
req GET "/api/v1/compare?group_by=kernel&a=6.1.0-ok&b=9.9.9-none"
check_status 200 "compare with an empty group"
check_jq '.hosts == {"a":10,"b":0} and ([.figures[] | select(.b.mean != null or .test.p != null or .significant)] == [])' "empty group: null stats, no test"

# ---- errors name the parameter ----
bad_req() {
	req GET "/api/v1/compare?$1"
	check_status 400 "$1"
	check_json_error "$1"
	if jq -e --arg p "$2" '.error | startswith($p + ":")' <<<"$BODY" >/dev/null 2>&1; then
		ok
	else
		bad "$1: the error does not name $2"
	fi
}
bad_req "" group_by
bad_req "group_by=rack" group_by
bad_req "group_by=label:" group_by
bad_req "group_by=kernel&a=x" b
bad_req "group_by=kernel&b=x" a
bad_req "group_by=kernel&a=x&b=x" b
bad_req "group_by=kernel&since=2026-11-30T10:00:00Z&until=2026-11-30T10:00:00Z" since
bad_req "group_by=kernel&since=1700000000&until=1800000000" since
bad_req "group_by=kernel&since=yesterday" since
bad_req "group_by=kernel&label=role" label

e2e_server_stop
[ -n "${COMPARE_KEEP:-}" ] && cp "$E2E_LOG" "$COMPARE_KEEP.log"
e2e_done
