#!/usr/bin/env bash
# test_swap_settings.sh - what the swap is (settings swap.* and zswap.*,
# CONTRACT.md §1) from the real agent to the real server and back: the
# agent's samples of two fixture trees (zram, partitions and a file with
# priorities; zswap on with its shrinker) are posted, and
#   - ingest accepts them (202);
#   - the export returns every settings key with its value;
#   - the series API serves settings.swap.zram.used_kb in kB, as posted;
#   - bin/vmscope-replay accepts the export and gives the alerts it gives
#     for the posted trace.
. "$(dirname "$0")/_lib.sh"
REPLAY=${REPLAY:-$E2E_ROOT/bin/san/vmscope-replay}
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}
e2e_init swapset
e2e_server_start

# three samples per fixture, 10 s apart, zram use growing as it would
for fx in k6.1 k6.8-hybrid; do
	"$AGENT" --root "$E2E_ROOT/tests/fixtures/$fx" --once --stdout --host "swap-$fx" \
		2>/dev/null >"$E2E_DIR/$fx.one"
done
python3 - "$E2E_DIR/k6.1.one" "$E2E_DIR/k6.8-hybrid.one" >"$E2E_DIR/trace.jsonl" <<'PY'
import json, sys, time
now = time.time()
for path in sys.argv[1:]:
    s = json.load(open(path))
    assert "swap.devices" in s["settings"] and "zswap.enabled" in s["settings"], s["settings"]
    base = s["settings"].get("swap.zram.used_kb")
    for i in range(3):
        s["ts"] = round(now - 30 + 10 * i, 3)
        if base is not None:
            s["settings"]["swap.zram.used_kb"] = base + 4096 * i
        print(json.dumps(s))
PY
check "the fixtures' samples carry zram and zswap keys" grep -q '"swap.zram.used_kb"' "$E2E_DIR/trace.jsonl"

post "[$(paste -sd, "$E2E_DIR/trace.jsonl")]"
check_status 202 "samples with swap settings are accepted"
check_eq "$(json .accepted)" 6 "all six accepted"

for fx in k6.1 k6.8-hybrid; do
	req GET "/api/v1/hosts/swap-$fx/samples?since=$(($(e2e_now) - 60))"
	check_status 200 "$fx: export answers 200"
	printf '%s\n' "$BODY" >"$E2E_DIR/export-$fx.jsonl"
	check "$fx: the export returns every settings key as posted" python3 - \
		"$E2E_DIR/trace.jsonl" "$E2E_DIR/export-$fx.jsonl" "swap-$fx" <<'PY'
import json, sys
posted = {round(s["ts"] * 1000): s["settings"] for s in map(json.loads, open(sys.argv[1]))
          if s["host"] == sys.argv[3]}
got = {round(s["ts"] * 1000): s.get("settings") for s in map(json.loads, open(sys.argv[2])) if s}
assert sorted(got) == sorted(posted), (sorted(got), sorted(posted))
for ts in posted:
    assert got[ts] == posted[ts], (ts, got[ts], posted[ts])
PY
done

req GET "/api/v1/hosts/swap-k6.1/series?metric=settings.swap.zram.used_kb&since=$(($(e2e_now) - 60))"
check_status 200 "series of settings.swap.zram.used_kb"
check_jq '.unit == "kB" and .kind == "gauge"' "settings.swap.zram.used_kb is a gauge in kB"
check_jq '[.points[][1]] == [1234567, 1238663, 1242759]' "settings.swap.zram.used_kb as posted"

cat "$E2E_DIR"/export-*.jsonl >"$E2E_DIR/export.jsonl"
"$REPLAY" "$E2E_DIR/trace.jsonl" >"$E2E_DIR/replay-posted.json" 2>"$E2E_DIR/replay.err"
check_eq "$?" 0 "replay of the posted samples runs $(head -c 300 "$E2E_DIR/replay.err")"
"$REPLAY" "$E2E_DIR/export.jsonl" >"$E2E_DIR/replay-export.json" 2>"$E2E_DIR/replay.err"
check_eq "$?" 0 "replay of the export runs $(head -c 300 "$E2E_DIR/replay.err")"
check "the export replays to the same alerts" python3 - "$E2E_DIR/replay-posted.json" \
	"$E2E_DIR/replay-export.json" <<'PY'
import json, sys
def keys(p):
    return sorted(json.dumps({k: v for k, v in a.items() if k != "id"}, sort_keys=True)
                  for a in json.load(open(p))["alerts"])
assert keys(sys.argv[1]) == keys(sys.argv[2])
PY

e2e_server_stop
e2e_done
