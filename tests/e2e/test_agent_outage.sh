#!/usr/bin/env bash
# test_agent_outage.sh - the agent end to end against the real server and
# PostgreSQL, and the outage guarantee of CONTRACT.md §2:
#   1. the agent samples this machine every second and its samples show up
#      through the API (hosts list, series with rates);
#   2. the server is stopped; the agent keeps sampling into its spool; the
#      agent itself is restarted during the outage (SIGTERM, same spool);
#      the server comes back on the same address;
#   3. the backlog drains and every sample taken arrives exactly once: the
#      stored timestamps are contiguous at the sampling interval except for
#      the moment the agent itself was down, and none is duplicated.
. "$(dirname "$0")/_lib.sh"
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}
e2e_init outage

port=$("$E2E_ROOT/scripts/freeport.sh")
export E2E_PORT=$port
e2e_server_start
printf '%s\n' "$E2E_TOKEN" >"$E2E_DIR/token"
chmod 600 "$E2E_DIR/token"
SPOOL=$E2E_DIR/spool
HOST=outage-$$

start_agent() {
	"$AGENT" --server "$E2E_URL" --token-file "$E2E_DIR/token" --interval 1 --host "$HOST" \
		--label test=outage --spool "$SPOOL" >>"$E2E_DIR/agent.log" 2>&1 &
	AGENT_PID=$!
	E2E_PIDS+=("$AGENT_PID")
}
stop_agent() {
	kill -TERM "$AGENT_PID"
	wait "$AGENT_PID"
	check_eq "$?" 0 "the agent exits 0 on SIGTERM"
}

# 1. live: samples arrive and are readable
start_agent
for _ in $(seq 100); do
	req GET "/api/v1/hosts/$HOST"
	[ "$STATUS" = 200 ] && [ "$(json .samples)" -ge 3 ] 2>/dev/null && break
	sleep 0.2
done
check_status 200 "the agent's host is listed"
check_eq "$(json .kernel)" "$(uname -r)" "kernel is this machine's release"
check_eq "$(json .labels.test)" outage "labels from --label"
check "at least 3 samples within 20 s" test "$(json .samples)" -ge 3
req GET "/api/v1/hosts/$HOST/series?metric=vmstat.pgfault&since=$(($(date +%s) - 120))"
check_status 200 "series of a counter"
check "pgfault comes back as a rate with points" \
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["kind"]=="rate"; v=[p[1] for p in d["points"] if p[1] is not None]; assert len(v)>=2 and all(x>=0 for x in v), d' "$BODY"

# 2. outage: server down, agent restarted meanwhile, server back on the same port
e2e_server_stop
sleep 3
stop_agent
start_agent
sleep 3
e2e_server_start
# 3. the backlog drains: the spool is first in, first out, so once the newest
# stored sample is recent, everything older has been posted too
deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ]; do
	req GET "/api/v1/hosts/$HOST"
	fresh=$(json "(now - .last_seen_ts) < 2.5")
	[ "$fresh" = true ] && break
	sleep 0.5
done
check_eq "$fresh" true "the backlog drained within 60 s"
stop_agent
sleep 0.5
req GET "/api/v1/hosts/$HOST"
total=$(json .samples)
req GET "/api/v1/hosts/$HOST/series?metric=meminfo.MemTotal&since=$(($(date +%s) - 600))"
check_status 200 "series of all samples"
check "every sample taken arrived exactly once (contiguous at 1 s, one agent restart)" python3 - "$BODY" "$total" <<'PY'
import json, sys
d = json.loads(sys.argv[1]); total = int(sys.argv[2])
ts = [p[0] for p in d["points"]]
assert len(ts) == total, f"series has {len(ts)} points, host says {total} samples"
assert len(set(ts)) == len(ts), "duplicate timestamps"
assert len(ts) >= 8, f"only {len(ts)} samples"  # ~3 s live, 3 s down, 3 s restarted, drain
gaps = [b - a for a, b in zip(ts, ts[1:])]
big = [g for g in gaps if g > 1.6]
# the agent was down once (SIGTERM then restart): one gap of a few seconds at most
assert len(big) <= 1 and all(g < 5 for g in big), f"gaps {big} in {len(ts)} samples"
# the restarted agent samples right at start, so the gap across the restart
# may be short; every other gap is at least half the interval
close = [g for g in gaps if g <= 0.4]
assert len(close) <= 1 and all(g > 0 for g in gaps), f"samples too close: {close}"
assert not (close and big), f"both a short and a long gap: {close} {big}"
PY
grep -qiE "spool|queued|backlog|retry|unreachable|connect" "$E2E_DIR/agent.log"
check_eq "$?" 0 "the agent logged the outage"
e2e_server_stop
e2e_done
