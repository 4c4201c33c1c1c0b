#!/usr/bin/env bash
# test_forget_host.sh - DELETE /api/v1/hosts/{host} (docs/api.md "Forget a
# host"): a server without --admin-token-file answers 403; with it, 401
# without a token, 403 with the ingest token, 404 for an unknown or invalid
# host; the admin token removes the host's samples, rollups, alerts,
# detector state, cgroups, history and host rule in one go while another
# host with the same trace keeps all of its own; the host list, the fleet
# view, its alerts and its series are gone; a host that posts again comes
# back fresh.
. "$(dirname "$0")/_lib.sh"
e2e_init forget
ADMIN=admin-$RANDOM$RANDOM$RANDOM
printf '%s\n' "$ADMIN" >"$E2E_DIR/admin.token"

# --- a server without an admin token: the endpoint is off ---
e2e_server_start
req DELETE /api/v1/hosts/none-01 -H "Authorization: Bearer $E2E_TOKEN"
check_status 403 "no --admin-token-file: 403"
check_contains "admin endpoints are off" "and says why"
e2e_server_stop

e2e_server_start --admin-token-file "$E2E_DIR/admin.token"
SRC="$E2E_ROOT/tests/corpus/synth-s004-memcg.jsonl"
e2e_shift_trace "$SRC" "$E2E_DIR/base.jsonl"
post_as() { # post_as HOST FILE: every line of FILE as HOST, one batch
	python3 - "$2" "$1" "$E2E_URL" "$E2E_TOKEN" <<'PY'
import json, sys, urllib.request
path, host, url, token = sys.argv[1:]
rows = [dict(json.loads(l), host=host) for l in open(path) if l.strip()]
req = urllib.request.Request(url + "/api/v1/samples", data=json.dumps(rows).encode(), method="POST",
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=60) as r:
    assert r.status == 202, r.status
print(len(rows), "samples")
PY
}
check "posted gone-01" post_as gone-01 "$E2E_DIR/base.jsonl"
check "posted stay-01" post_as stay-01 "$E2E_DIR/base.jsonl"
check "their rollups were written" e2e_wait_checkpoints
printf '%s' '{"overrides":[{"host":"gone-01","kind":"oom_kill","params":{"enabled":false}}]}' >"$E2E_DIR/rules.json"
req PUT /api/v1/overrides -H "Authorization: Bearer $ADMIN" --data-binary "@$E2E_DIR/rules.json"
check_status 200 "a host rule for gone-01"

# what the database holds per host (samples rollups alerts state cgroups meta
# rules); host_silent left out: on a loaded machine the tick may open one
# for a host whose trace ended over a minute ago, in the middle of the test
counts() {
	e2e_psql "SELECT (SELECT count(*) FROM samples s JOIN hosts h ON h.id = s.host_id WHERE h.name = '$1')
		|| ' ' || (SELECT count(*) FROM rollup_5m r JOIN hosts h ON h.id = r.host_id WHERE h.name = '$1')
		|| ' ' || (SELECT count(*) FROM alerts WHERE host = '$1' AND kind <> 'host_silent')
		|| ' ' || (SELECT count(*) FROM detector_state d JOIN hosts h ON h.id = d.host_id WHERE h.name = '$1')
		|| ' ' || (SELECT count(*) FROM cgroups c JOIN hosts h ON h.id = c.host_id WHERE h.name = '$1')
		|| ' ' || (SELECT count(*) FROM host_meta m JOIN hosts h ON h.id = m.host_id WHERE h.name = '$1')
		|| ' ' || (SELECT count(*) FROM detector_overrides WHERE host = '$1')"
}
before_gone=$(counts gone-01)
before_stay=$(counts stay-01)
host_id=$(e2e_psql "SELECT id FROM hosts WHERE name = 'gone-01'")
check "gone-01 has samples, rollups, alerts, state, cgroups, history and a rule ($before_gone)" \
	python3 -c "import sys; v = list(map(int, sys.argv[1].split())); assert all(x > 0 for x in v), v" "$before_gone"
req GET /api/v1/fleet
check_jq '[.hosts[].host] | index("gone-01") != null' "the fleet view lists gone-01 before"

req DELETE /api/v1/hosts/gone-01
check_status 401 "DELETE without a token"
check_header "www-authenticate" "401 asks for a token"
req DELETE /api/v1/hosts/gone-01 -H "Authorization: Bearer $E2E_TOKEN"
check_status 403 "DELETE with the ingest token"
req DELETE /api/v1/hosts/gone-01 -H "Authorization: Bearer wrong-$ADMIN"
check_status 403 "DELETE with a wrong token"
req DELETE /api/v1/hosts/nosuch-01 -H "Authorization: Bearer $ADMIN"
check_status 404 "an unknown host"
check_json_error "404 has the error shape"
req DELETE "/api/v1/hosts/bad%20name" -H "Authorization: Bearer $ADMIN"
check_status 404 "an invalid host name"
check_eq "$(counts gone-01)" "$before_gone" "refused DELETEs changed nothing"

req DELETE /api/v1/hosts/gone-01 -H "Authorization: Bearer $ADMIN"
check_status 200 "DELETE with the admin token"
read -r s r a _ c m o <<<"$before_gone"
check_jq ".host == \"gone-01\" and .deleted.samples == $s and .deleted.rollups == $r and .deleted.alerts >= $a and .deleted.cgroups == $c and .deleted.meta == $m and .deleted.overrides == $o" \
	"the answer counts what was removed"
check_eq "$(e2e_psql "SELECT count(*) FROM hosts WHERE name = 'gone-01'")" 0 "no hosts row"
check_eq "$(e2e_psql "SELECT (SELECT count(*) FROM samples WHERE host_id = $host_id) + (SELECT count(*) FROM rollup_5m WHERE host_id = $host_id) + (SELECT count(*) FROM cgroups WHERE host_id = $host_id) + (SELECT count(*) FROM host_meta WHERE host_id = $host_id) + (SELECT count(*) FROM boots WHERE host_id = $host_id) + (SELECT count(*) FROM alerts WHERE host = 'gone-01') + (SELECT count(*) FROM detector_state WHERE host_id = $host_id) + (SELECT count(*) FROM detector_overrides WHERE host = 'gone-01')")" 0 \
	"no sample, rollup, cgroup, history, boot, alert, state or rule row of it left"
check_eq "$(counts stay-01)" "$before_stay" "stay-01 keeps everything"

req GET /api/v1/hosts
check_jq '[.hosts[].host] == ["stay-01"]' "the host list no longer has it"
req GET /api/v1/fleet
check_jq '[.hosts[].host] | index("gone-01") == null' "the fleet view no longer lists it"
check_jq '[.hosts[].host] | index("stay-01") != null' "the fleet view still lists stay-01"
req GET /api/v1/hosts/gone-01
check_status 404 "GET the host: 404"
req GET "/api/v1/alerts?host=gone-01"
check_jq '.alerts == []' "no alerts of it"
req GET /metrics
check "/metrics has no series of it" bash -c "! grep -q 'host=\"gone-01\"' <<<\"\$1\"" _ "$BODY"
req DELETE /api/v1/hosts/gone-01 -H "Authorization: Bearer $ADMIN"
check_status 404 "DELETE again: 404"

# --- posting again brings it back, fresh ---
check "gone-01 posts again" post_as gone-01 "$E2E_DIR/base.jsonl"
req GET /api/v1/hosts/gone-01
check_status 200 "it is back"
check_jq ".samples == $(wc -l <"$E2E_DIR/base.jsonl")" "with only the new samples"
req GET "/api/v1/alerts?host=gone-01&limit=1000"
check_jq '[.alerts[].kind] | index("thrash") != null' "and its detectors ran afresh"

e2e_server_stop
e2e_done
