#!/usr/bin/env bash
# test_agent_spool_faults.sh - the agent's spool failing under it, against
# the real server (docs/reliability.md, guarantee 11):
#   1. the spool's filesystem turns read-only under a running agent (ext4
#      mounted errors=remount-ro on a loop device, an error triggered
#      through /sys/fs/ext4/*/trigger_fs_error: every write, also to the
#      open segment, fails with EROFS): the failure is logged once, not
#      once per sample, and every sample taken is stored (posted from the
#      memory queue);
#   2. the agent restarted on that read-only spool starts (it cannot create
#      its lock file), says once that it runs from memory, posts the unsent
#      samples the spool holds and its new ones, and exits 0;
#   3. the spool directory removed (rm -rf) while the server is down: the
#      agent creates it again, counts the unsent samples it held as lost
#      (its log, its totals, the counters in its samples), and delivers
#      every sample taken after: taken = delivered + lost.
# Needs root (loop device, mount).
. "$(dirname "$0")/_lib.sh"
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}
e2e_init spool_faults
export E2E_PORT=$("$E2E_ROOT/scripts/freeport.sh")
e2e_server_start
printf '%s\n' "$E2E_TOKEN" >"$E2E_DIR/token"
chmod 600 "$E2E_DIR/token"
# the agent's backoff 0.1..6 s instead of 1..60 s
export VMSCOPE_TEST_TIME_SCALE=0.1

IMG=$E2E_DIR/fs.img
MNT=$E2E_DIR/mnt
LOOP=
cleanup() {
	e2e_cleanup
	umount "$MNT" 2>/dev/null
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	rm -f "$IMG"
}
trap cleanup EXIT
truncate -s 16M "$IMG" && mkfs.ext4 -q -F "$IMG" && LOOP=$(losetup -f --show "$IMG") && mkdir -p "$MNT" &&
	mount -o errors=remount-ro "$LOOP" "$MNT" || { bad "could not mount an ext4 image on a loop device (needs root)"; e2e_done; }

rows() { e2e_psql "SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = '$1'"; }
tot_of() { grep -o 'totals: .*' "$1" | tail -1; }
num() { grep -oE "[0-9]+ $2" <<<"$1" | head -1 | awk '{print $1}'; }
agent() { # agent HOST SPOOL LOG
	"$AGENT" --server "$E2E_URL" --token-file "$E2E_DIR/token" --interval 0.5 --timeout 2 --host "$1" \
		--spool "$2" >"$3" 2>&1 &
	APID=$!
	E2E_PIDS+=("$APID")
}

# ---- 1. the filesystem turns read-only under the agent ----
HOST=rofs-$$
LOG1=$E2E_DIR/agent1.log
agent "$HOST" "$MNT/spool" "$LOG1"
sleep 3
echo 1 >"/sys/fs/ext4/$(basename "$LOOP")/trigger_fs_error"
ro=0
for _ in $(seq 20); do
	# (newer kernels show "emergency_ro" in the options rather than "ro")
	touch "$MNT/probe" 2>/dev/null || { ro=1; break; }
	sleep 0.25
done
check_eq "$ro" 1 "the spool's filesystem is read-only now"
sleep 6
kill -TERM "$APID"
wait "$APID"
check_eq "$?" 0 "the agent exits 0"
tot=$(tot_of "$LOG1")
echo "$tot"
check "the read-only spool is logged" grep -q "could not write a sample to the spool in .*Read-only file system; keeping samples in memory" "$LOG1"
nro=$(grep -c "Read-only file system" "$LOG1")
kept=$(num "$tot" "kept in memory")
check "the failure is logged once, not once per sample ($nro lines for $kept samples kept in memory)" \
	test "$nro" -le 6 -a "${kept:-0}" -ge 8
check_eq "$(rows "$HOST")" "$(num "$tot" "delivered")" "every delivered sample is stored"
check_eq "$(num "$tot" "delivered")" "$(num "$tot" "samples taken")" "every sample taken was delivered"

# ---- 2. restarted on the read-only spool ----
before=$(rows "$HOST")
LOG2=$E2E_DIR/agent2.log
agent "$HOST" "$MNT/spool" "$LOG2"
sleep 4
check "the agent runs on a read-only spool" kill -0 "$APID"
kill -TERM "$APID"
wait "$APID"
check_eq "$?" 0 "the agent started on the read-only spool exits 0"
tot=$(tot_of "$LOG2")
echo "$tot"
check_eq "$(grep -c "cannot be written" "$LOG2")" 1 "it says once that the spool cannot be written"
check "and that it keeps samples in memory" grep -q "cannot be written: Read-only file system; keeping samples in memory" "$LOG2"
taken=$(num "$tot" "samples taken")
check "it took samples ($taken)" test "${taken:-0}" -ge 5
new=$(($(rows "$HOST") - before))
check_eq "$new" "$(($(num "$tot" "delivered") - $(num "$tot" "delivered as duplicates")))" \
	"the samples it delivered are stored (duplicates: re-posted from the spool whose head could not be written)"
check "its samples taken are stored ($new new rows, $taken taken)" test "$new" -ge "$taken"

# ---- 3. the spool directory removed while the server is down ----
HOST=spooldel-$$
LOG3=$E2E_DIR/agent3.log
SP3=$E2E_DIR/spool3
agent "$HOST" "$SP3" "$LOG3"
sleep 2
e2e_server_stop
sleep 3
rm -rf "$SP3"
sleep 3
e2e_server_start
for _ in $(seq 60); do
	req GET "/api/v1/hosts/$HOST"
	[ "$STATUS" = 200 ] && [ "$(json '(now - .last_seen_ts) < 1.2')" = true ] && break
	sleep 0.25
done
check "the spool directory is there again" test -d "$SP3"
kill -TERM "$APID"
wait "$APID"
check_eq "$?" 0 "the agent exits 0"
tot=$(tot_of "$LOG3")
echo "$tot"
check "the removal is logged with the samples lost" \
	grep -qE "spool directory .* was removed while the agent ran: its [0-9]+ unsent samples are lost" "$LOG3"
lost=$(num "$tot" "lost with the spool directory")
check "the totals count the samples lost with the directory ($lost)" test "${lost:-0}" -ge 4
delivered=$(num "$tot" "delivered")
check_eq "$((delivered + lost))" "$(num "$tot" "samples taken")" "taken = delivered + lost ($tot)"
check_eq "$(rows "$HOST")" "$delivered" "rows in the database = samples delivered"
req GET "/api/v1/hosts/$HOST/samples?since=$(($(e2e_now) - 120))"
check_eq "$(tail -1 <<<"$BODY" | jq '.agent.samples_lost_spool_removed')" "$lost" \
	"the last stored sample reports the loss"
check "no error reading a spool segment after the removal" test "$(grep -c "could not open spool segment" "$LOG3")" = 0
e2e_server_stop
e2e_done
