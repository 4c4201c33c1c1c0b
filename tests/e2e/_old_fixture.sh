#!/usr/bin/env bash
# _old_fixture.sh - sourced by tests that migrate a database written before
# schema 090 (tests/fixtures/schema-080, see its dump's header):
#   old_fixture_load CONNINFO     loads the dump into the database
#   old_fixture_check URL         every answer the old server gave for it,
#                                 asked of the server at URL, compared
# The answers were the old server's: the same hosts, alerts (ids, times,
# evidence, silenced), overrides, silences, raw and rollup series, cgroup
# series from cgroup rollups, cgroups, and exports (every field of every
# sample).
OLD_FIX="$E2E_ROOT/tests/fixtures/schema-080"

old_fixture_load() {
	zcat "$OLD_FIX/dump.sql.gz" | psql "$1" -v ON_ERROR_STOP=1 -q >/dev/null 2>"$E2E_DIR/restore.err" ||
		{ echo "e2e: could not load the old database: $(tail -3 "$E2E_DIR/restore.err")" >&2; return 1; }
}

# same_json WANT_FILE GOT_FILE: equal as JSON (key order aside)
same_json() {
	python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
if a != b:
    print("differs:\n want", json.dumps(a, sort_keys=True)[:600], "\n got ", json.dumps(b, sort_keys=True)[:600])
    sys.exit(1)
PY
}

old_fixture_check() {
	local url=$1 since=1795150000 until=1795176100 h f
	ask() { curl -s -o "$E2E_DIR/got.json" -w '%{http_code}' "$url$1"; }
	for f in hosts:/api/v1/hosts "alerts:/api/v1/alerts?state=all&limit=1000" overrides:/api/v1/overrides \
		"silences:/api/v1/silences?all=1"; do
		check_eq "$(ask "${f#*:}")" 200 "${f%%:*} answered"
		if [ "${f%%:*}" = hosts ]; then
			# "clock" came after these answers: no host of them has one
			check_eq "$(jq -c '[.hosts[].clock] | unique' "$E2E_DIR/got.json")" "[null]" "hosts: no clock to report"
			jq 'del(.hosts[].clock)' "$E2E_DIR/got.json" >"$E2E_DIR/got.tmp" && mv "$E2E_DIR/got.tmp" "$E2E_DIR/got.json"
		fi
		if [ "${f%%:*}" = silences ]; then
			# "subject" (silences of the fleet's alerts) came after them too
			check_eq "$(jq -c '[.silences[].subject] | unique' "$E2E_DIR/got.json")" "[null]" "silences: no subject"
			jq 'del(.silences[].subject)' "$E2E_DIR/got.json" >"$E2E_DIR/got.tmp" && mv "$E2E_DIR/got.tmp" "$E2E_DIR/got.json"
		fi
		check "${f%%:*}: as before the migrations" same_json "$OLD_FIX/${f%%:*}.json" "$E2E_DIR/got.json"
	done
	for h in old-a old-b old-c; do
		ask "/api/v1/hosts/$h/series?metric=vmstat.pgscan_kswapd&since=$since&until=$until" >/dev/null
		check "$h: raw series as before" same_json "$OLD_FIX/series-$h.json" "$E2E_DIR/got.json"
		ask "/api/v1/hosts/$h/series?metric=psi.memory.some.avg10&since=$((until - 7 * 86400))&until=$until&points=50&source=rollup" >/dev/null
		check "$h: rollup series as before" same_json "$OLD_FIX/rollup-$h.json" "$E2E_DIR/got.json"
		ask "/api/v1/hosts/$h/cgroups" >/dev/null
		check "$h: cgroups as before" same_json "$OLD_FIX/cgroups-$h.json" "$E2E_DIR/got.json"
		# the keys' order inside an object follows the process's name
		# dictionary: compared with sorted keys
		curl -s "$url/api/v1/hosts/$h/samples?since=$since&until=$until" | jq -S -c . >"$E2E_DIR/canon-$h.jsonl"
	done
	ask "/api/v1/hosts/old-b/series?metric=stat.pgscan&cgroup=/machine.slice/vm1.scope&since=$((until - 7 * 86400))&until=$until&points=20" >/dev/null
	check "old-b: cgroup series from the cgroup rollups as before" same_json "$OLD_FIX/cgseries-old-b.json" "$E2E_DIR/got.json"
	check "exports as before, every field of every sample" sh -c "cd '$E2E_DIR' && sha256sum -c --quiet '$OLD_FIX/exports.sha256'"
}
