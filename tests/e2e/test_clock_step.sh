#!/usr/bin/env bash
# test_clock_step.sh - a host's clock stepped back under a running agent,
# as ntpd or chrony do (docs/reliability.md, guarantees 12 and 13), with
# the server at VMSCOPE_TEST_TIME_SCALE=0.1 (silence threshold 6 s, the
# clock window 30 s, the clock_skew hold 12 s, tick 1 s). Real agents at
# 1 s behind tests/e2e/_clockproxy.py, which moves their samples' ts:
#   - stepped-$$: 90 s ahead for 42 s (accepted; clock_skew "ahead" opens
#     once a window is complete), then right: its new samples are older
#     than the stored ones for 90 s. It is never host_silent (its samples
#     arrive), and its clock_skew resolves one hold period after the step,
#     not a window or two later;
#   - collide-$$: 10 s ahead for 8 s, then right, ts rounded to the second:
#     its samples after the step land on the timestamps of stored ones. The
#     server's 202 counts them as duplicates, the agent logs them and counts
#     them ("delivered as duplicates"), and rows = delivered - duplicates:
#     none vanishes without a count.
. "$(dirname "$0")/_lib.sh"
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}
export VMSCOPE_TEST_TIME_SCALE=0.1
e2e_init clockstep
e2e_server_start
printf '%s\n' "$E2E_TOKEN" >"$E2E_DIR/token"
chmod 600 "$E2E_DIR/token"

proxy() { # proxy NAME ARGS...: its port in $E2E_DIR/NAME.port
	local name=$1
	shift
	python3 "$E2E_ROOT/tests/e2e/_clockproxy.py" "$E2E_DIR/$name.port" "$E2E_URL" "$@" 2>"$E2E_DIR/$name.err" &
	E2E_PIDS+=($!)
	for _ in $(seq 50); do [ -s "$E2E_DIR/$name.port" ] && break; sleep 0.1; done
}
agent() { # agent HOST PROXY: its pid in the variable named by $3
	"$AGENT" --server "http://127.0.0.1:$(cat "$E2E_DIR/$2.port")" --token-file "$E2E_DIR/token" --interval 1 \
		--host "$1" --spool "$E2E_DIR/spool-$1" >"$E2E_DIR/$1.log" 2>&1 &
	E2E_PIDS+=($!)
	printf -v "$3" '%s' $!
}
STEP=stepped-$$
COL=collide-$$
t0=$SECONDS
proxy ps 90 42:0
proxy pc 10 8:0 round
agent "$STEP" ps PS
agent "$COL" pc PC

# the clock 90 s ahead: clock_skew once a window (30 s) is complete
opened=0
while [ $((SECONDS - t0)) -lt 42 ]; do
	[ "$(e2e_psql "SELECT count(*) FROM alerts WHERE host = '$STEP' AND kind = 'clock_skew' AND state = 'open'")" = 1 ] &&
		opened=1
	sleep 0.5
done
check_eq "$opened" 1 "clock_skew opens while the clock is 90 s ahead"
echo "the clock is stepped back at $((SECONDS - t0)) s"
step_at=$SECONDS
resolved=
while [ $((SECONDS - step_at)) -lt 30 ]; do
	if [ "$(e2e_psql "SELECT count(*) FROM alerts WHERE host = '$STEP' AND kind = 'clock_skew' AND state = 'open'")" = 0 ]; then
		resolved=$((SECONDS - step_at))
		break
	fi
	sleep 0.5
done
echo "clock_skew resolved ${resolved:-never} s after the step"
check "clock_skew resolves about one hold period (12 s) after the step, not a window or two later (${resolved:-never} s)" \
	test -n "$resolved" -a "${resolved:-99}" -le 22
sleep 3
check_eq "$(e2e_psql "SELECT count(*) FROM alerts WHERE host = '$STEP' AND kind = 'clock_skew'")" 1 \
	"one clock_skew for the stepped host, not reopened"
kill -TERM "$PS" "$PC"
wait "$PS" "$PC"
for h in "$STEP" "$COL"; do
	check_eq "$(e2e_psql "SELECT count(*) FROM alerts WHERE host = '$h' AND kind = 'host_silent'")" 0 \
		"$h: no host_silent while its samples arrived with older timestamps"
done

# the collisions are counted, never silent
tot=$(grep -o 'totals: .*' "$E2E_DIR/$COL.log" | tail -1)
echo "$tot"
num() { grep -oE "[0-9]+ $1" <<<"$tot" | head -1 | awk '{print $1}'; }
dups=$(num "delivered as duplicates")
delivered=$(num "delivered")
check "the agent counts the samples the server had already ($dups)" test "${dups:-0}" -ge 4
check "and logs them" grep -q "server had [0-9]* of the samples posted already" "$E2E_DIR/$COL.log"
rows=$(e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = '$COL'")
check_eq "$rows" "$((delivered - dups))" "rows = delivered - duplicates ($rows rows, $delivered delivered, $dups duplicates)"
check_eq "$delivered" "$(num "samples taken")" "every sample taken was delivered"
req GET "/api/v1/hosts/$COL/samples?since=$(($(e2e_now) - 120))"
check "the stored samples report the duplicates (agent.samples_duplicate)" \
	test "$(tail -1 <<<"$BODY" | jq '.agent.samples_duplicate')" -ge 1
e2e_server_stop
e2e_done
