#!/usr/bin/env bash
# test_migrate_old.sh - a populated database of the schema before host
# ownership and host keys (migrations 001-080, tests/fixtures/schema-080)
# migrated in place by the current server keeps every row and answer
# (_old_fixture.sh), and works on: its hosts take new samples, their
# detectors go on from the migrated state, the new rows use the new keys.
. "$(dirname "$0")/_lib.sh"
. "$(dirname "$0")/_old_fixture.sh"
e2e_init migrate_old
check "the old database loads" old_fixture_load "$E2E_DB"
check_eq "$(e2e_psql "SELECT count(*) FROM schema_migrations WHERE name >= '090'")" 0 "it predates 090"
e2e_server_start --retention-days 36500 --admin-token-file <(echo adminadmin123)
# every migration from 090 on ran, one transaction each, in the order of
# their names (host keys and Citus placement before the all-reclaim slots)
check_eq "$(e2e_psql "SELECT string_agg(name, ' ' ORDER BY applied_at, name) FROM schema_migrations WHERE name >= '090'")" \
	"$(cd "$E2E_ROOT"/schema && ls [0-9]*.sql | LC_ALL=C sort | awk '$0 >= "090"' | paste -sd' ')" \
	"the new migrations ran, in order"
old_fixture_check "$E2E_URL"
# every per-host table's rows have the host's id
check_eq "$(e2e_psql "SELECT (SELECT count(*) FROM alerts WHERE host_id = 0) + (SELECT count(*) FROM notify_outbox WHERE host_id = 0)
	+ (SELECT count(*) FROM cgroup_rollup_5m r LEFT JOIN cgroups g ON g.host_id = r.host_id AND g.id = r.cgroup_id WHERE g.id IS NULL)")" 0 \
	"alerts, outbox rows and cgroup rollups carry their host's id"
check_eq "$(e2e_psql "SELECT count(*) FROM host_names n JOIN hosts h USING (id) WHERE h.name = n.name")" 3 "host names kept"
check_eq "$(e2e_psql "SELECT count(*) FROM detector_state d JOIN hosts h ON h.id = d.host_id WHERE d.last_ts_ms = h.last_ts_ms AND length(d.state) > 0")" 3 \
	"detector states moved to host ids, checkpointed at each host's newest sample"
# the migrated hosts go on: old-c's next samples (a day later) are stored,
# rolled up and fed to its detectors from the migrated state
python3 - "$E2E_URL" "$E2E_TOKEN" "$E2E_ROOT" <<'PY' >"$E2E_DIR/post.out"
import gzip, json, sys, urllib.request
url, token, root = sys.argv[1:]
rows = [json.loads(l) for l in gzip.open(root + "/tests/corpus/real-coldanon.jsonl.gz", "rt") if l.strip()]
last = max(r["ts"] for r in rows)
for r in rows[:12]:
    r["host"] = "old-c"
    r["ts"] = round(r["ts"] - rows[0]["ts"] + 1795176000 - 1200 + 86400, 3)
req = urllib.request.Request(url + "/api/v1/samples", data=json.dumps(rows[:12]).encode(), method="POST",
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
print(urllib.request.urlopen(req).status)
PY
check_eq "$(cat "$E2E_DIR/post.out")" 202 "old-c takes new samples"
check "they are checkpointed" e2e_wait_checkpoints
check_eq "$(e2e_psql "SELECT samples FROM hosts WHERE name = 'old-c'")" 62 "old-c has 50 + 12 samples"
check_eq "$(e2e_psql "SELECT sum(n) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = 'old-c'")" 62 \
	"every one of them rolled up once"
e2e_server_stop
e2e_done
