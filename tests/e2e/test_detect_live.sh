#!/usr/bin/env bash
# test_detect_live.sh - replay = live: real recordings posted to the real
# server (in batches, with a server restart in the middle and a re-post)
# give the same alerts through GET /api/v1/alerts as bin/vmscope-replay
# prints for the same file: same kinds, scopes, severities, states and
# sample times. Timestamps are shifted to end now (retention, clock skew).
. "$(dirname "$0")/_lib.sh"
REPLAY=${REPLAY:-$E2E_ROOT/bin/san/vmscope-replay}
e2e_init detect
e2e_server_start

post_file() { # FILE FROM TO: posts lines FROM..TO as one JSON array
	sed -n "$2,$3p" "$1" | jq -s -c . >"$E2E_DIR/batch.json"
	req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" \
		-H 'Content-Type: application/json' --data-binary @"$E2E_DIR/batch.json"
}

project='[.alerts[] | select(.kind != "host_silent") | [.host, .cgroup, .kind, .severity, .state, .started_at, .opened_at, .ended_at]] | sort'

for trace in coldanon writeback; do
	src=$E2E_ROOT/tests/corpus/real-$trace.jsonl.gz
	f=$E2E_DIR/$trace.jsonl
	now=$(date +%s)
	zcat "$src" | jq -c --slurp --argjson now "$now" \
		'(.[-1].ts) as $last | .[] | .ts = ((.ts - $last + $now - 2) * 1000 | round / 1000)' >"$f"
	n=$(wc -l <"$f")
	half=$((n / 2))
	for ((i = 1; i <= half; i += 8)); do
		post_file "$f" $i $((i + 7 > half ? half : i + 7))
		check_status 202 "$trace: batch at line $i accepted"
	done
	# the server restarts: detector state lives in the database
	e2e_server_stop
	e2e_server_start
	post_file "$f" 1 8
	check_status 202 "$trace: a re-post of old samples is accepted"
	for ((i = half + 1; i <= n; i += 8)); do
		post_file "$f" $i $((i + 7 > n ? n : i + 7))
		check_status 202 "$trace: batch at line $i accepted"
	done
	host=$(head -1 "$f" | jq -r .host)
	req GET "/api/v1/alerts?host=$host&limit=1000"
	check_status 200 "$trace: alerts answer"
	jq -c "$project" <<<"$BODY" >"$E2E_DIR/live.json"
	"$REPLAY" "$f" | jq -c "$project" >"$E2E_DIR/replay.json"
	check "$trace: replay raised alerts" test "$(jq length "$E2E_DIR/replay.json")" -gt 0
	if cmp -s "$E2E_DIR/live.json" "$E2E_DIR/replay.json"; then
		ok
	else
		bad "$trace: live alerts differ from replay: live $(cat "$E2E_DIR/live.json") replay $(cat "$E2E_DIR/replay.json")"
	fi
	check_eq "$(e2e_psql "SELECT count(*) FROM alerts WHERE host = '$host' AND state = 'open' GROUP BY kind, cgroup HAVING count(*) > 1" | wc -l)" 0 \
		"$trace: never two open alerts of one kind and scope"
done
e2e_server_stop
e2e_done
