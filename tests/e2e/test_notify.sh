#!/usr/bin/env bash
# test_notify.sh - notifications and silences end to end (docs/notify.md):
# the real server with four --webhook receivers pointing at a local HTTP
# receiver (_receiver.py) that records every POST. A recorded thrash trace
# (tests/corpus/real-filethrash) opens an alert, a quiet tail resolves it.
# Checked: the Alertmanager payload on open, its re-send (--notify-resend 2)
# and the resolve with endsAt = ended_at; the generic webhook's payload; a
# receiver answering 500 first gets the retry; a kinds= filter; a silence
# made before the alert holds its notification back while the alerts API
# still shows it (silenced: true), and ending the silence lets it out; who
# may write silences; an event made while the server was down goes out
# when it starts again (the outbox survives restarts).
. "$(dirname "$0")/_lib.sh"

e2e_init notify
ADMIN=admin-token-$RANDOM$RANDOM
printf '%s\n' "$ADMIN" >"$E2E_DIR/admin.token"
# the receiver, the traces and the server start side by side
e2e_receiver_start
TRACE=$E2E_ROOT/tests/corpus/real-filethrash.jsonl.gz
python3 "$E2E_ROOT/tests/e2e/_notify_trace.py" "$TRACE" 20 "$E2E_DIR" nt-silenced nt-a &
TRACE_PID=$!
SERVER_ARGS=(--admin-token-file "$E2E_DIR/admin.token" --notify-resend 2 --public-url "http://vmscope.example:8080/"
	--webhook "$R/am" --webhook "$R/hook,format=json"
	--webhook "$R/flaky,format=json,name=flaky"
	--webhook "$R/swaponly,format=json,kinds=swap_imbalance|writeback_storm,severity=critical")
e2e_server_start "${SERVER_ARGS[@]}"
e2e_receiver_wait
wait "$TRACE_PID" || { echo "e2e: _notify_trace.py failed" >&2; exit 1; }

# wait_recv JQ_FILTER SECONDS: waits until the filter (over the array of
# everything received so far) is true
wait_recv() {
	local i
	for i in $(seq $(($2 * 5))); do
		jq -se "$1" "$RECV_LOG" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}
recv() { jq -sc "$1" "$RECV_LOG"; }
# wait_sql SQL WANT SECONDS: waits until SQL prints WANT
wait_sql() {
	local i
	for i in $(seq $(($3 * 5))); do
		[ "$(e2e_psql "$1")" = "$2" ] && return 0
		sleep 0.2
	done
	return 1
}

post_file() {
	jq -sc . "$1" >"$E2E_DIR/batch.json"
	req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Type: application/json' \
		--data-binary @"$E2E_DIR/batch.json"
}
silence() {
	req POST /api/v1/silences -H 'Content-Type: application/json' --data-binary "$1" "${@:2}"
}

# --- who may write silences -------------------------------------------------
silence '{"host":"nt-silenced","duration_s":600}'
check_status 401 "a silence without a token"
check_json_error "401 silence"
silence '{"host":"nt-silenced","duration_s":600}' -H "Authorization: Bearer $E2E_TOKEN"
check_status 403 "an ingest token cannot create silences"
req POST /api/v1/silences -H "Authorization: Bearer $ADMIN" -H 'Content-Type: text/plain' \
	--data-binary '{"host":"nt-silenced","duration_s":600}'
check_status 415 "a silence must be posted as JSON"
silence '{"host":"nt silenced","duration_s":600}' -H "Authorization: Bearer $ADMIN"
check_status 400 "a bad host name"
check_contains "host:" "the 400 names the field"
silence '{"host":"nt-silenced","until":"2001-01-01T00:00:00Z"}' -H "Authorization: Bearer $ADMIN"
check_status 400 "a silence ending in the past"
silence '{"host":"nt-silenced","duration_s":600,"comment":"maintenance"}' -H "Authorization: Bearer $ADMIN"
check_status 201 "the admin token creates a silence"
SIL_ID=$(json .id)
check_jq '.host == "nt-silenced" and .cgroup == null and .kind == null and .active and .comment == "maintenance" and .created_by == "admin-token"' \
	"the silence as created"
req GET /api/v1/silences
check_status 200 "silences are listed"
check_jq "[.silences[] | select(.id == $SIL_ID)] | length == 1" "the new silence is listed"
req DELETE /api/v1/silences/$SIL_ID -H "Authorization: Bearer $E2E_TOKEN"
check_status 403 "an ingest token cannot end silences"
req DELETE /api/v1/silences/999999 -H "Authorization: Bearer $ADMIN"
check_status 404 "ending a silence that does not exist"

# --- the silenced host first, then nt-a -------------------------------------
post_file "$E2E_DIR/nt-silenced-open.jsonl"
check_status 202 "the silenced host's trace is stored"
req GET "/api/v1/alerts?host=nt-silenced&kind=thrash&state=open"
check_jq '.alerts | length == 1 and .[0].silenced == true' "a silenced alert is recorded and marked silenced"

post_file "$E2E_DIR/nt-a-open.jsonl"
check_status 202 "nt-a's trace is stored"
req GET "/api/v1/alerts?host=nt-a&kind=thrash&state=open"
check_jq '.alerts | length == 1 and .[0].silenced == false' "nt-a's thrash alert is open and not silenced"
A_ID=$(json '.alerts[0].id')
A_STARTED=$(json '.alerts[0].started_at')
A_CGROUP=$(json '.alerts[0].cgroup')

AM_A='[.[] | select(.path == "/am/api/v2/alerts") | .body[] | select(.labels.host == "nt-a" and .labels.kind == "thrash")]'
check "Alertmanager gets the open alert" wait_recv "$AM_A | length >= 1" 30
first=$(recv "$AM_A | .[0]")
check_eq "$(jq -c .labels <<<"$first")" \
	"$(jq -nc --arg c "$A_CGROUP" '{alertname:"vmscope_thrash",host:"nt-a",kind:"thrash",severity:"critical",cgroup:$c}')" \
	"Alertmanager labels"
check_eq "$(jq -r .startsAt <<<"$first")" "$A_STARTED" "startsAt is the alert's started_at"
check "endsAt of an open alert lies ahead of its sending (Alertmanager keeps it firing)" \
	jq -se '[.[] | select(.path == "/am/api/v2/alerts") | . as $p | .body[] | select(.labels.host == "nt-a")
		| (.endsAt | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) > $p.t][0]' "$RECV_LOG"
check "annotations: summary and description" jq -e '(.annotations.summary | length > 10) and (.annotations.description | test("thrash on host nt-a"))' <<<"$first"
check_eq "$(jq -r .generatorURL <<<"$first")" \
	"http://vmscope.example:8080/#/alerts?host=nt-a&kind=thrash&cgroup=$(jq -rn --arg c "$A_CGROUP" '$c|@uri')" \
	"generatorURL points at the dashboard's alerts view"
check "the POST is JSON" jq -se '[.[] | select(.path == "/am/api/v2/alerts")][0].ctype == "application/json"' "$RECV_LOG"

HOOK_A='[.[] | select(.path == "/hook" and .body.alert.host == "nt-a" and .body.alert.kind == "thrash")]'
check "the JSON webhook gets the open event" wait_recv "$HOOK_A | length >= 1" 30
hook=$(recv "$HOOK_A | .[0].body")
check "webhook body: text, event, alert" jq -e --argjson id "$A_ID" \
	'(.text | startswith("[vmscope] FIRING critical thrash on nt-a")) and .event == "open" and .alert.id == $id and .alert.state == "open" and (.alert.evidence | type == "object") and (.generatorURL | test("host=nt-a"))' <<<"$hook"

FLAKY_A='[.[] | select(.path == "/flaky" and .body.alert.host == "nt-a" and .body.event == "open")]'
check "the receiver answering 500 first gets the retry" wait_recv "$FLAKY_A | length == 2 and .[0].status == 500 and .[1].status == 200 and .[0].body == .[1].body" 30

# three posts: the last is at least one re-send interval after the first, so
# their endsAt differ in whole seconds and compare as strings
check "Alertmanager gets the open alert re-sent with a later endsAt" \
	wait_recv "$AM_A | length >= 3 and .[-1].endsAt > .[0].endsAt" 30

# events go out in order: nt-silenced's (earlier) open was decided before nt-a's was sent
check_eq "$(recv '[.[] | select((.body | tostring) | test("nt-silenced"))] | length')" 0 \
	"nothing was sent about the silenced host"
check_eq "$(e2e_psql "SELECT count(*) FROM notify_outbox o JOIN alerts a ON a.id = o.alert_id WHERE a.host = 'nt-silenced' AND a.kind = 'thrash' AND o.suppressed")" \
	1 "the silenced open event is recorded as held back"
check_eq "$(recv '[.[] | select(.path == "/swaponly")] | length')" 0 "kinds= keeps thrash from a swap_imbalance receiver"

# --- resolve ------------------------------------------------------------------
post_file "$E2E_DIR/nt-a-tail.jsonl"
check_status 202 "the quiet tail is stored"
req GET "/api/v1/alerts?host=nt-a&kind=thrash"
check_jq '.alerts | length == 1 and .[0].state == "resolved"' "the quiet tail resolves nt-a's alert"
A_ENDED=$(json '.alerts[0].ended_at')
check "Alertmanager gets the resolve with endsAt = ended_at" \
	wait_recv "$AM_A | map(select(.endsAt == \"$A_ENDED\")) | length == 1" 30
check "the JSON webhook gets the resolve event" \
	wait_recv "$HOOK_A | map(select(.body.event == \"resolve\" and (.body.text | startswith(\"[vmscope] RESOLVED\")) and .body.alert.ended_at == \"$A_ENDED\")) | length == 1" 30
sleep 3	# more than a re-send interval: a resolved alert is not re-sent as firing
check_eq "$(recv "$AM_A | .[-1].endsAt")" "\"$A_ENDED\"" "no re-send after the resolve"

# --- ending the silence lets the open alert out --------------------------------
req DELETE /api/v1/silences/$SIL_ID -H "Authorization: Bearer $ADMIN"
check_status 200 "the admin token ends the silence"
req GET "/api/v1/alerts?host=nt-silenced&kind=thrash&state=open"
check_jq '.alerts[0].silenced == false' "the alert is no longer marked silenced"
check "the alert is notified once its silence ended" \
	wait_recv '[.[] | select(.path == "/hook" and .body.alert.host == "nt-silenced" and .body.alert.kind == "thrash" and .body.event == "open")] | length == 1' 30

# --- /metrics counts the outcomes seen above ----------------------------------
req GET /metrics
notif() { awk -v r="result=\"$1\"" 'index($0, "vmscope_notifications_total{" r "}") == 1 {print $2}' <<<"$BODY"; }
sent_n=$(recv '[.[] | select(.status >= 200 and .status < 300 and (.body | type) == "object")] | length')
check "notifications sent are counted (at least the webhook deliveries the receiver logged: $sent_n)" \
	test "$(notif sent)" -ge "$sent_n"
check "the receiver's 500 is counted as a retry" test "$(notif retry)" -ge 1
check "the silenced alert's open is counted as held back" test "$(notif held_back)" -ge 1
check "the Alertmanager re-send is counted" test "$(notif resent)" -ge 1
check_eq "$(notif gave_up)" 0 "nothing was given up"
e2e_server_stop

# --- an event made while the server is down goes out when it starts -------------
e2e_psql "UPDATE alerts SET state = 'resolved', ended_at = now(), updated_at = now() WHERE host = 'nt-silenced' AND kind = 'thrash' AND state = 'open'" >/dev/null
check_eq "$(e2e_psql "SELECT count(*) FROM notify_outbox o JOIN alerts a ON a.id = o.alert_id WHERE o.done_at IS NULL AND a.kind = 'thrash'")" 1 "the outbox holds the resolve"
e2e_server_start "${SERVER_ARGS[@]}"
check "the resolve made while the server was down is sent after the restart" \
	wait_recv '[.[] | select(.path == "/hook" and .body.alert.host == "nt-silenced" and .body.alert.kind == "thrash" and .body.event == "resolve")] | length == 1' 30
check "the outbox is drained" wait_sql "SELECT count(*) FROM notify_outbox o JOIN alerts a ON a.id = o.alert_id WHERE o.done_at IS NULL AND a.kind = 'thrash'" 0 30
e2e_server_stop
if [ "$E2E_FAIL" != 0 ]; then
	echo "--- server logs:" >&2
	tail -n 40 "$E2E_DIR"/server-*.log >&2
fi
e2e_done
