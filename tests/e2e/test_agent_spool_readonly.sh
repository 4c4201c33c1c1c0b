#!/usr/bin/env bash
# test_agent_spool_readonly.sh - an agent whose spool cannot be written loses
# nothing silently (docs/reliability.md). The agent runs unprivileged (user
# nobody, setpriv) at 0.5 s against the real server; its spool directory is
# made read-only with chmod (new segment files: permission denied; segments
# are ~20 KiB, so about every other sample needs one) and writable again:
#   1. server up, spool read-only for 8 s: the samples are kept in memory
#      and posted all the same: every sample taken is stored, in order
#      (no gap in the stored timestamps), the error is logged once, and the
#      totals and the counters the agent reports in its samples ("agent":
#      samples_kept_in_memory) count them;
#   2. spool read-only and the server down for 10 s: the memory queue
#      (128 KiB, ~6 of these samples) overflows; what it drops is logged,
#      counted in the totals ("dropped (spool unwritable, memory queue
#      full)") and in the counters of the next stored samples, and
#      taken = stored + dropped: nothing is lost without a count.
# Needs root (setpriv to nobody; chmod of nobody's directory).
. "$(dirname "$0")/_lib.sh"
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}
e2e_init spool_ro
export E2E_PORT=$("$E2E_ROOT/scripts/freeport.sh")
e2e_server_start

# a directory nobody can reach: the spool, and the token it reads
RO=$(mktemp -d /tmp/vmscope-ro.XXXXXX)
trap 'e2e_cleanup; rm -rf "$RO"' EXIT
chmod 0755 "$RO"
printf '%s\n' "$E2E_TOKEN" >"$RO/token"
chmod 0644 "$RO/token"
mkdir "$RO/spool"
chown nobody:nogroup "$RO/spool"
chmod 0700 "$RO/spool"
HOST=spool-ro-$$
LOG=$E2E_DIR/agent.log
# VMSCOPE_TEST_TIME_SCALE: the agent's backoff 0.1..6 s instead of 1..60 s
VMSCOPE_TEST_TIME_SCALE=0.1 setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$AGENT" --server "$E2E_URL" \
	--token-file "$RO/token" --interval 0.5 --timeout 2 --host "$HOST" --spool "$RO/spool" \
	--spool-max-bytes 160k >"$LOG" 2>&1 &
APID=$!
E2E_PIDS+=("$APID")
sleep 1
check_eq "$(ps -o user= -p "$APID" | tr -d ' ')" nobody "the agent runs as nobody"
rows() { e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = '$HOST'"; }
sleep 3

# ---- 1. read-only spool, server up ----
chmod 0500 "$RO/spool"
sleep 8
chmod 0700 "$RO/spool"
sleep 3
check "the spool failure is logged" grep -q "could not write a sample to the spool.*Permission denied; keeping samples in memory" "$LOG"
check_eq "$(grep -c "could not write a sample to the spool" "$LOG")" 1 "logged once, not once per sample"
check "the spool taking writes again is logged" grep -q "takes writes again" "$LOG"
# the samples kept in memory were posted while the spool was read-only
gaps=$(e2e_psql "SELECT count(*) FROM (SELECT ts_ms - lag(ts_ms) OVER (ORDER BY ts_ms) AS g FROM samples s
	JOIN hosts h ON h.id = s.host_id WHERE h.name = '$HOST') x WHERE g > 1100")
# a tick the agent itself was too late for (a loaded machine) is "skipped" in its log, not lost
skipped=$(grep -oE 'skipped [0-9]+ samples' "$LOG" | awk '{s += $2} END {print s + 0}')
check "no gap in the stored samples across the read-only spool ($gaps gaps, $skipped ticks skipped)" \
	test "$gaps" -le "$skipped"
req GET "/api/v1/hosts/$HOST/samples?since=$(($(e2e_now) - 120))"
last=$(tail -1 <<<"$BODY")
kept=$(jq '.agent.samples_kept_in_memory' <<<"$last")
check "the agent reports the samples it kept in memory ($kept)" test "${kept:-0}" -ge 8
check_eq "$(jq '.agent.samples_dropped_unspoolable' <<<"$last")" 0 "and none dropped while the server was up"

# ---- 2. read-only spool and the server down: the memory queue overflows ----
chmod 0500 "$RO/spool"
sleep 1
e2e_server_stop
sleep 10
recovered=$(grep -c "delivery recovered" "$LOG")
e2e_server_start
# the memory queue drains to the server (the spool still read-only)
for _ in $(seq 40); do
	[ "$(grep -c "delivery recovered" "$LOG")" -gt "$recovered" ] && break
	sleep 0.25
done
sleep 2
chmod 0700 "$RO/spool"
# everything delivered: the newest stored sample is fresh
for _ in $(seq 40); do
	req GET "/api/v1/hosts/$HOST"
	[ "$(json '(now - .last_seen_ts) < 1.2')" = true ] && break
	sleep 0.25
done
kill -TERM "$APID"
wait "$APID"
check_eq "$?" 0 "the agent exits 0"
check "the memory queue's drops are logged" grep -q "memory queue full (128 KiB) while the spool cannot be written: dropped" "$LOG"
tot=$(grep -o 'totals: .*' "$LOG" | tail -1)
echo "$tot"
num() { grep -oE "[0-9]+ $1" <<<"$tot" | head -1 | awk '{print $1}'; }
taken=$(num "samples taken")
delivered=$(num "delivered")
refused=$(num "refused by the server")
full=$(num "dropped \(spool full\)")
ro=$(num "dropped \(spool unwritable")
lost=$(num "lost at exit")
inmem=$(num "kept in memory")
check "the totals count the samples dropped because neither spool nor memory could take them ($ro)" test "${ro:-0}" -gt 0
check "the totals count the samples kept in memory ($inmem)" test "${inmem:-0}" -ge 16
check_eq "$((delivered + refused + full + ro + lost))" "$taken" "taken = delivered + refused + dropped + lost ($tot)"
stored=$(rows)
check_eq "$stored" "$delivered" "rows in the database = samples delivered"
req GET "/api/v1/hosts/$HOST/samples?since=$(($(e2e_now) - 120))"
last=$(tail -1 <<<"$BODY")
check_eq "$(jq '.agent.samples_dropped_unspoolable' <<<"$last")" "$ro" \
	"the last stored sample reports the same drop count as the totals"
check_eq "$(jq '.agent.samples_taken' <<<"$last")" "$((taken - 1))" "and the samples taken before it"
req GET "/api/v1/hosts/$HOST/metrics"
check_contains "agent.samples_dropped_unspoolable" "the agent's counters are stored as metrics of the host"
e2e_server_stop
e2e_done
