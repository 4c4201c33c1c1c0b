#!/usr/bin/env bash
# agent_spool_enospc.sh - the agent's spool on a filesystem that fills up
# before --spool-max-bytes (a 256 KiB tmpfs) while the server is down
# (docs/reliability.md, 4): the agent keeps sampling and running, drops the OLDEST samples
# (whole segments, sized from the filesystem), logs and counts the drop, and
# what is left in the spool is the newest samples without a gap:
# taken = dropped + spooled. (The --spool-max-bytes bound itself is tested
# in agent_delivery.sh.) Needs root for the mount.
set -uo pipefail
cd "$(dirname "$0")/.."
AGENT=${AGENT:-$PWD/bin/vmscope-agent}
M=$(mktemp -d /tmp/vmscope-enospc.XXXXXX)
cleanup() {
	local rc=$?
	[ -n "${APID:-}" ] && kill -KILL "$APID" 2>/dev/null
	umount "$M" 2>/dev/null
	if [ "$rc" != 0 ] && [ -f "$M.log" ]; then
		echo "---- last 40 lines of the agent's log ----" >&2
		tail -40 "$M.log" >&2
	fi
	[ -n "${KEEP:-}" ] || rm -rf "$M" "$M.log"
}
trap cleanup EXIT
if ! mount -t tmpfs -o size=256k tmpfs "$M"; then
	echo "could not mount a 256 KiB tmpfs (needs root)"
	echo "0 passed, 1 failed"
	exit 1
fi
PORT=$(scripts/freeport.sh) # nothing listens there: the server is down
"$AGENT" --server "http://127.0.0.1:$PORT" --token x --interval 0.1 --host enospc \
	--spool "$M/spool" >"$M.log" 2>&1 &
APID=$!
sleep 8
alive=0
kill -0 "$APID" 2>/dev/null && alive=1
kill -TERM "$APID"
wait "$APID"
rc=$?
APID=
cat "$M.log" | sort | uniq -c | sort -rn | head -5
python3 - "$M/spool" "$M.log" "$alive" "$rc" <<'PY'
import json, os, re, sys
spool, log, alive, rc = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3], sys.argv[4]
passed = failed = 0
def check(cond, what):
    global passed, failed
    passed, failed = passed + bool(cond), failed + (not cond)
    print(("ok   " if cond else "FAIL ") + what)
check(alive == "1", "the agent kept running with its spool filesystem full")
check(rc == "0", f"the agent exits 0 on SIGTERM (exit {rc})")
m = re.search(r"totals: (\d+) samples taken, (\d+) skipped, (\d+) delivered, \d+ refused by the server, (\d+) dropped", log)
check(m is not None, "the agent logs its totals")
taken, skipped, delivered, dropped = map(int, m.groups()) if m else (0, 0, 0, 0)
check("filesystem full, dropped the" in log, "the drop is logged")
check(dropped > 0, f"samples were dropped ({dropped} of {taken})")
hseq, hoff = map(int, open(os.path.join(spool, "head")).read().split()) if os.path.exists(os.path.join(spool, "head")) else (0, 0)
recs = []
for name in sorted(f for f in os.listdir(spool) if f.startswith("seg-")):
    seq = int(name[4:])
    if seq < hseq:
        continue
    with open(os.path.join(spool, name), "rb") as f:
        data = f.read()
    if seq == hseq:
        data = data[hoff:]
    recs += [json.loads(l) for l in data.split(b"\n") if l]
ts = [r["ts"] for r in recs]
check(len(recs) + dropped + delivered == taken, f"spooled {len(recs)} + dropped {dropped} = taken {taken}")
# samples are taken about every 0.1 s (a loaded machine makes some late and
# skips ticks, counted as skipped; a sample taken after a drop is later
# still): no more than a few ticks beyond the skipped ones may be missing
# between the oldest and newest spooled sample (an agent that kept the
# oldest would miss every sample after the disk filled; a sample that comes
# while the older ones are in flight cannot be kept and counts as dropped)
ticks = [round(t * 10) for t in ts]
holes = sum(b - a - 1 for a, b in zip(ticks, ticks[1:]))
check(len(recs) > 0 and all(b > a for a, b in zip(ts, ts[1:])) and holes <= skipped + 3,
      f"the spooled samples follow each other at 0.1 s, no hole in the middle "
      f"({holes} missing ticks, {skipped} skipped; gaps {[round(b - a, 3) for a, b in zip(ts, ts[1:])]})")
last = max(os.path.getmtime(os.path.join(spool, f)) for f in os.listdir(spool) if f.startswith("seg-"))
check(ts and ts[-1] > last - 1.0, "the newest sample taken is in the spool (the oldest were dropped)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
