#!/usr/bin/env bash
# test_metrics.sh - GET /metrics (docs/api.md "/metrics"): valid Prometheus
# text exposition, checked twice before and after data arrives: by the real
# `promtool check metrics` (Debian's prometheus package; scripts/deps.sh
# extracts promtool alone into .tools/bin, a promtool on PATH wins) and by
# tests/e2e/_promcheck.py, a strict parser that also refuses what promtool
# 2.42 lets through (a duplicate series, a family split in two); both are
# first shown to refuse broken expositions; vmscope_alert_active has
# exactly the open alerts of /api/v1/alerts?state=open (host-wide and cgroup
# ones); the derived host signals have the values two known samples give,
# and a newer sample shows after the cache period.
. "$(dirname "$0")/_lib.sh"
CHECKER="$E2E_ROOT/tests/e2e/_promcheck.py"
PROMTOOL=${PROMTOOL:-$(command -v promtool || echo "$E2E_ROOT/.tools/bin/promtool")}
e2e_init metrics

# promtool check metrics: exit 0 and no output for a clean exposition (it
# prints lint problems and exits 3, or a parse error and exits 1)
promtool_ok() {
	local out rc
	out=$("$PROMTOOL" check metrics 2>&1 <"$1")
	rc=$?
	[ "$rc" = 0 ] && [ -z "$out" ] && return 0
	echo "promtool (exit $rc): $out" >&2
	return 1
}
check "promtool is there ($PROMTOOL; make deps fetches it)" test -x "$PROMTOOL"
"$PROMTOOL" --version 2>&1 | head -1
printf '# HELP c x\n# TYPE c counter\nc 1\n' >"$E2E_DIR/bad1.txt"
printf '# HELP d x\n# TYPE d gauge\nd{l="a\\qb"} 1\n' >"$E2E_DIR/bad2.txt"
printf '# HELP ok_total x\n# TYPE ok_total counter\nok_total{a="q"} 1\n' >"$E2E_DIR/good.txt"
check "promtool refuses a counter without _total" bash -c "! \"$PROMTOOL\" check metrics <\"$E2E_DIR/bad1.txt\" >/dev/null 2>&1"
check "promtool refuses a bad escape" bash -c "! \"$PROMTOOL\" check metrics <\"$E2E_DIR/bad2.txt\" >/dev/null 2>&1"
check "promtool accepts a valid exposition" promtool_ok "$E2E_DIR/good.txt"

# --- the checker refuses what promtool refuses ---
bad_expo() {
	printf "$1" | python3 "$CHECKER" >/dev/null
	check_eq "$?" 1 "checker refuses: $2"
}
bad_expo '# HELP a_total x\n# TYPE a_total counter\na_total 1\na_total 2\n' "a duplicate series"
bad_expo 'b 1\n' "a sample without TYPE"
bad_expo '# HELP c x\n# TYPE c counter\nc 1\n' "a counter not ending in _total"
bad_expo '# HELP d x\n# TYPE d gauge\nd{l="a\\qb"} 1\n' "a bad escape"
bad_expo '# HELP e x\n# TYPE e gauge\ne{l="a"} one\n' "a bad value"
bad_expo '# HELP f x\n# TYPE f histogram\nf_bucket{le="1"} 5\nf_bucket{le="+Inf"} 3\nf_sum 1\nf_count 3\n' \
	"a histogram that is not cumulative"
bad_expo '# HELP g x\n# TYPE g gauge\ng 1\n# HELP h x\n# TYPE h gauge\nh 1\ng{a="b"} 1\n' "a family split in two"
bad_expo '# HELP i x\n# TYPE i gauge\ni 1' "no final newline"
printf '# HELP ok_total x\n# TYPE ok_total counter\nok_total{a="q\\"\\\\\\n"} 1 1700000000000\n' |
	python3 "$CHECKER" >/dev/null
check_eq "$?" 0 "checker accepts a valid exposition with escapes and a timestamp"

e2e_server_start
req GET /metrics
check_status 200 "/metrics answers"
check "an empty server's /metrics is valid exposition" python3 "$CHECKER" <<<"$BODY"
printf '%s\n' "$BODY" >"$E2E_DIR/empty.txt"
check "promtool check metrics passes an empty server's /metrics" promtool_ok "$E2E_DIR/empty.txt"
check_contains "# TYPE vmscope_alert_active gauge" "alert family present with no alerts"

# --- two traces with open alerts (cgroup ones and host-wide ones) ---
for name in synth-s004-memcg.jsonl synth-s003-writeback.jsonl; do
	python3 - "$E2E_ROOT/tests/corpus/$name" "$E2E_URL" "$E2E_TOKEN" <<'PY' >"$E2E_DIR/post.out" 2>&1
import json, sys, time, urllib.request
src, url, token = sys.argv[1:]
rows = [json.loads(l) for l in open(src) if l.strip()]
shift = time.time() - 2 - max(r["ts"] for r in rows)
for r in rows:
    r["ts"] = round(r["ts"] + shift, 3)
body = json.dumps(rows).encode()
req = urllib.request.Request(url + "/api/v1/samples", data=body, method="POST",
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=60) as r:
    assert r.status == 202, r.status
PY
	check_eq "$?" 0 "$name posted $(tail -1 "$E2E_DIR/post.out")"
done

# --- a host with known counters: 10 s apart ---
now=$(date +%s)
t1=$((now - 30)); t2=$((now - 20)); t3=$((now - 10))
sig() { # ts refault scan steal pswpin pswpout
	printf '{"host":"sig-01","ts":%s,"boot_id":"b1","vmstat":{"workingset_refault_file":%s,"pgscan_kswapd":%s,"pgscan_direct":0,"pgsteal_kswapd":%s,"pgsteal_direct":0,"pswpin":%s,"pswpout":%s}}' "$@"
}
post "[$(sig $t1 0 1000 500 10 0),$(sig $t2 300 2000 1250 60 100)]"
check_status 202 "two known samples posted"

# the empty answer above is cached for 5 s: read after it expired
sleep 5.5
req GET /metrics
check_status 200 "/metrics answers with data"
printf '%s\n' "$BODY" >"$E2E_DIR/metrics.txt"
check "/metrics with alerts and signals is valid exposition" python3 "$CHECKER" <"$E2E_DIR/metrics.txt"
check "promtool check metrics passes /metrics with alerts and signals" promtool_ok "$E2E_DIR/metrics.txt"
req GET "/api/v1/alerts?state=open&limit=10000"
printf '%s\n' "$BODY" >"$E2E_DIR/open.json"
check "vmscope_alert_active lists exactly the open alerts" python3 - "$E2E_DIR/open.json" "$E2E_DIR/metrics.txt" <<'PY'
import json, re, sys
want = sorted({(a["host"], a["cgroup"] or "", a["kind"], a["severity"])
               for a in json.load(open(sys.argv[1]))["alerts"]})
got = []
for line in open(sys.argv[2]):
    m = re.match(r'vmscope_alert_active\{host="([^"]*)",cgroup="([^"]*)",kind="([^"]*)",severity="([^"]*)"\} 1$', line)
    if m:
        got.append(m.groups())
    elif line.startswith("vmscope_alert_active"):
        sys.exit("unexpected line " + line)
got.sort()
assert len(want) >= 4, want
assert any(w[1] == "" for w in want) and any(w[1] != "" for w in want), want
assert got == want, f"metrics {got}\nalerts {want}"
PY
val() { sed -n "s/^$1{host=\"sig-01\"} //p" "$E2E_DIR/metrics.txt"; }
check_eq "$(val vmscope_host_refault_file_per_second)" 30 "refaults: 300 pages in 10 s"
check_eq "$(val vmscope_host_reclaim_efficiency)" 0.75 "efficiency: 750 stolen of 1000 scanned"
check_eq "$(val vmscope_host_swap_in_per_second)" 5 "swap-in: 50 pages in 10 s"
check_eq "$(val vmscope_host_swap_out_per_second)" 10 "swap-out: 100 pages in 10 s"
check_eq "$(val vmscope_host_last_sample_timestamp_seconds)" "$t2.000" "last sample time"

# a newer sample shows once the cache period (5 s) is over
post "$(sig $t3 400 2000 1250 60 100)"
check_status 202 "a third sample posted"
sleep 5.5
req GET /metrics
printf '%s\n' "$BODY" >"$E2E_DIR/metrics.txt"
check_eq "$(val vmscope_host_refault_file_per_second)" 10 "refaults from the newest two samples"
check_eq "$(val vmscope_host_reclaim_efficiency)" "" "no efficiency when nothing was scanned"
check_eq "$(val vmscope_host_swap_out_per_second)" 0 "swap-out 0 when flat"
check "still valid exposition" python3 "$CHECKER" <"$E2E_DIR/metrics.txt"
check "promtool still passes it" promtool_ok "$E2E_DIR/metrics.txt"

e2e_server_stop
e2e_done
