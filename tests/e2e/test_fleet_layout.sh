#!/usr/bin/env bash
# test_fleet_layout.sh - GET /api/v1/fleet's two layouts (docs/api.md
# "Fleet") against the real server: the columnar answer (layout=columns,
# what the dashboard reads) carries the same hosts, states and sparkline
# values as the documented [ts, v] points, bucket for bucket; a host with
# no samples in the window has empty arrays in both; a bad layout is a 400.
set -uo pipefail
. "$(dirname "$0")/_lib.sh"
e2e_init fleet_layout
ADMIN="admin-$RANDOM$RANDOM"
printf '%s\n' "$ADMIN" >"$E2E_DIR/admin.token"
e2e_server_start --admin-token-file "$E2E_DIR/admin.token"

# two hosts, 25 min of 10 s samples ending now; a third only 3 h ago
now=$(e2e_now)
batch() {
	local host=$1 from=$2 n=$3 out="[" sep=""
	for i in $(seq 0 $((n - 1))); do
		out+="$sep$(e2e_sample "$host" $((from + i * 10)) $((1000 + i * (37 + ${#host}) + i * i)))"
		sep=","
	done
	printf '%s]' "$out"
}
for host in fl-a fl-bb; do
	post "$(batch "$host" $((now - 1500)) 150)"
	check_status 202 "posting $host"
done
post "$(batch fl-old $((now - 10800)) 6)"
check_status 202 "posting fl-old"
# the fleet reads the 5-minute rollups, which the server writes with its
# checkpoints (every second here)
check "the hosts' rollups are written" e2e_wait_checkpoints
# fl-old's newest sample is 3 h old but arrived just now: it is stale in the
# fleet, not silent (host_silent goes by arrival, and waits for the grace
# period after the server's start), so no tick changes a state between the
# two requests below.
req GET "/api/v1/alerts?host=fl-old&kind=host_silent&state=open"
check_jq '.alerts | length == 0' "fl-old posted just now: no host_silent"

# an open alert (silenced) and one that ended 10 minutes ago on fl-a, as rows
e2e_psql "INSERT INTO alerts (host_id, host, cgroup, kind, severity, state, started_at, opened_at, ended_at, updated_at, summary, evidence)
	SELECT n.id, v.* FROM host_names n, (VALUES
	       ('fl-a', '/system.slice/db.service', 'thrash', 'critical', 'open', now() - interval '20 minutes',
	        now() - interval '19 minutes', NULL::timestamptz, now(), 'refaults 4000 pages/s', '{}'::jsonb),
	       ('fl-a', NULL, 'oom_kill', 'critical', 'resolved', now() - interval '12 minutes',
	        now() - interval '12 minutes', now() - interval '10 minutes', now(), '1 OOM kill in 10 s', '{}'))
	       AS v(host, cgroup, kind, severity, state, started_at, opened_at, ended_at, updated_at, summary, evidence)
	WHERE n.name = v.host" >/dev/null ||
	bad "writing fl-a's alerts"
post_admin() { curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' -d "$1" "$E2E_URL$2"; }
[ "$(post_admin '{"host":"fl-a","kind":"thrash","duration_s":600,"comment":"fleet test"}' /api/v1/silences)" = 201 ] ||
	bad "silencing fl-a's thrash"

req GET "/api/v1/fleet?window=3600&points=13"
check_status 200 "fleet, points layout"
points=$BODY
# points: honoured up to the hour's 5-minute buckets, refused beyond
req GET "/api/v1/fleet?window=3600&points=60"
check_status 400 "fleet, more points than the window's 5-minute buckets"
check_contains "points: expected 1 to 13 for window=3600" "the error names the points allowed"
req GET "/api/v1/fleet?window=3600&layout=columns"
check_jq '.points == 13 and (.ts | length) == 13 and .step_s == 300' "fleet: the default is every 5-minute bucket of the window"
req GET "/api/v1/fleet?window=3600&points=4&layout=columns"
check_jq '.points == 4 and (.ts | length) <= 4 and (.ts | length) >= 3 and .step_s == 1200' "fleet: 4 points are 20-minute buckets"
# the alerts of a host: open ones with their start and summary, and those
# that ended within the window
req GET "/api/v1/fleet?window=3600&layout=columns"
check_jq '[.hosts[] | select(.host == "fl-a") | .open_alerts[]
	| (.started_at_ts | type) == "number" and .summary == "refaults 4000 pages/s" and .cgroup == "/system.slice/db.service"
	  and .silenced == true] == [true]' \
	"fleet: an open alert carries started_at_ts, cgroup, summary and silenced"
check_jq '[.hosts[] | select(.host == "fl-a") | .resolved_alerts[]
	| .kind == "oom_kill" and (.ended_at_ts - .started_at_ts | . > 100 and . < 140) and (has("silenced") | not)] == [true]' \
	"fleet: an alert that ended within the window carries ended_at_ts"
check_jq '[.hosts[] | .resolved_alerts | type == "array"] | all' "fleet: every host has resolved_alerts"
req GET "/api/v1/fleet?window=3600&points=13&layout=columns"
check_status 200 "fleet, columns layout"
columns=$BODY
check_jq '.layout == "columns" and (.ts | length) > 8 and (.ts | length) <= 14' "columns: bucket times once"
check_jq '[.hosts[] | select(.host != "fl-old") | .spark[] | length] | unique | length == 1' \
	"columns: every line of every host has one value per bucket"
# the same values, bucket for bucket: columns -> [ts, v] pairs without the
# buckets that had no samples (null in columns, absent in points)
same=$(jq -n --argjson p "$points" --argjson c "$columns" '
	def pairs($ts): [range(0; length) as $i | [$ts[$i], .[$i]]];
	def close(a; b): (a == null and b == null) or (a != null and b != null and ((a - b) | fabs) <= 1e-4 * ([1, (a | fabs)] | max));
	[$c.hosts[] as $h | ($p.hosts[] | select(.host == $h.host)) as $q
	 | ($h | del(.spark)) == ($q | del(.spark))
	   and ([$h.spark | to_entries[] | .key as $k | .value | pairs($c.ts)
	         | map(select(.[0] as $t | $q.spark[$k] | any(.[0] == $t)))
	         | length == ($q.spark[$k] | length)
	           and ([range(0; length) as $i | .[$i] as $x | $q.spark[$k][$i] as $y
	                 | $x[0] == $y[0] and close($x[1]; $y[1])] | all)] | all)] | all and length == 3')
check_eq "$same" "true" "columns and points carry the same hosts, fields and values"
check_jq '[.hosts[] | select(.host == "fl-a") | .spark.psi_memory_some[] | select(. != null)] | length >= 5 and all(. > 1.4 and . < 1.6)' \
	"columns: fl-a's PSI values are the posted 1.5 %"
check_jq '[.hosts[] | select(.host == "fl-old") | .spark[] | length] == [0,0,0,0,0]' "columns: a host without samples in the window has empty arrays"
check_jq '[.hosts[] | select(.host == "fl-old" and .stale)] | length == 1' "fl-old, 3 h behind its newest sample, is stale"
jq -e '[.hosts[] | select(.host == "fl-old") | .spark[] | length] == [0,0,0,0,0]' <<<"$points" >/dev/null && ok || bad "points: fl-old has empty arrays"
req GET "/api/v1/fleet?layout=rows"
check_status 400 "fleet, unknown layout"
check_contains "layout:" "the error names layout"
e2e_server_stop
e2e_done
