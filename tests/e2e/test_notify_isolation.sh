#!/usr/bin/env bash
# test_notify_isolation.sh - notifications cannot be held up or forged by
# what one receiver or one server does (server/notify/):
#   - a server without --webhook leaves the outbox's events unclaimed (not
#     marked done with nothing delivered), and a server with receivers
#     started later sends them;
#   - a receiver that takes the POST and never answers (listed first) does
#     not delay the others: the open and then the resolve reach the other
#     receivers within seconds while its first POST still hangs;
#   - format=slack escapes <, > and & in the text (a cgroup named
#     "<!here>&x" pages nobody), the generic format=json keeps the text as
#     the alert says, for scripts.
. "$(dirname "$0")/_lib.sh"
e2e_init notiso
e2e_receiver_start
TRACE=$E2E_ROOT/tests/corpus/real-filethrash.jsonl.gz
python3 "$E2E_ROOT/tests/e2e/_notify_trace.py" "$TRACE" 20 "$E2E_DIR" nt-b || { echo "e2e: _notify_trace.py failed" >&2; exit 1; }
# the cgroups of nt-b get a name with chat markup in it
for f in open tail; do
	jq -c '.cgroups |= map(.path = "/<!here>&x" + .path)' "$E2E_DIR/nt-b-$f.jsonl" >"$E2E_DIR/b-$f.jsonl"
done
e2e_receiver_wait
post_file() {
	jq -sc . "$1" >"$E2E_DIR/batch.json"
	req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Type: application/json' \
		--data-binary @"$E2E_DIR/batch.json"
}
wait_recv() { # JQ_FILTER SECONDS
	local i
	for i in $(seq $(($2 * 10))); do
		jq -se "$1" "$RECV_LOG" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
pending() { e2e_psql "SELECT count(*) FROM notify_outbox o JOIN alerts a ON a.id = o.alert_id
	WHERE a.host = 'nt-b' AND o.done_at IS NULL AND cardinality(o.delivered) = 0"; }

# --- a server without --webhook claims nothing
e2e_server_start
post_file "$E2E_DIR/b-open.jsonl"
check_status 202 "nt-b's thrash is stored"
req GET "/api/v1/alerts?host=nt-b&kind=thrash&state=open"
check_jq '.alerts | length == 1' "nt-b's thrash alert is open"
sleep 3	# more than the notifier's look-around (2 s)
check_eq "$(pending)" 1 "a server without --webhook leaves the open event pending"
e2e_server_stop

# --- a hanging receiver first, then the others
e2e_server_start --notify-timeout 30 --public-url "http://vmscope.example:8080" \
	--webhook "$R/hang,format=json,name=hung" --webhook "$R/hook,format=json" \
	--webhook "$R/chat,format=slack,name=chat"
t0=$(date +%s.%N)
HOOK='[.[] | select(.path == "/hook" and .body.alert.host == "nt-b")]'
CHAT='[.[] | select(.path == "/chat")]'
check "the hanging receiver got the open (and does not answer)" \
	wait_recv '[.[] | select(.path == "/hang" and .body.event == "open")] | length == 1' 10
check "the JSON receiver gets the open within 5 s of the start" wait_recv "$HOOK | map(select(.body.event == \"open\")) | length == 1" 5
check "the slack receiver gets it too" wait_recv "$CHAT | length == 1" 5
took=$(jq -s --argjson t0 "$t0" '[.[] | select(.path == "/hook")][0].t - $t0' "$RECV_LOG")
echo "open delivered to the JSON receiver $took s after the server's start, the hanging one still waiting"
chat=$(jq -sc "$CHAT | .[0].body" "$RECV_LOG")
check "slack: only a text" jq -e 'keys == ["text"]' <<<"$chat"
check "slack: <, > and & escaped" jq -e '.text | test("&lt;!here&gt;&amp;x/") and (test("<!here>") | not)' <<<"$chat"
check "slack: the dashboard link in Slack's form" jq -e '.text | test("<http://vmscope.example:8080/#/alerts\\?host=nt-b&kind=thrash[^|>]*\\|open in vmscope>$")' <<<"$chat"
check "json: the text as the alert says, for scripts" \
	jq -se "$HOOK | .[0].body.text | test(\"cgroup /<!here>&x/\")" "$RECV_LOG"

t1=$(date +%s.%N)
post_file "$E2E_DIR/b-tail.jsonl"
check_status 202 "nt-b's quiet tail is stored"
check "the resolve reaches the JSON receiver within 5 s while the hanging one still holds the open" \
	wait_recv "$HOOK | map(select(.body.event == \"resolve\")) | length == 1" 5
check_eq "$(jq -s '[.[] | select(.path == "/hang")] | length' "$RECV_LOG")" 1 "the hanging receiver is still on its first POST"
took=$(jq -s --argjson t1 "$t1" "$HOOK | map(select(.body.event == \"resolve\"))[0].t - \$t1" "$RECV_LOG")
echo "resolve delivered $took s after the post"
e2e_server_stop
e2e_done
