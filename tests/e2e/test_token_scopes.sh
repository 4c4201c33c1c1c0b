#!/usr/bin/env bash
# test_token_scopes.sh - a token speaks only for the hosts it may, brings
# in only as many new hosts as it may, and one sample from the future cannot
# blind a host's detection:
#   - `token add NAME --hosts 'web-*'` (and hosts= in --tokens-file): a
#     sample for a host outside the patterns is refused 403 naming the host,
#     nothing of the request is stored; an unscoped token posts for any host;
#   - `token add NAME --new-hosts-per-hour N` (and new-hosts-per-hour= in the
#     tokens file): past N hosts the server has never seen, 429 with
#     Retry-After; hosts already known keep posting; other tokens unlimited;
#   - `token list` shows the scopes;
#   - a sample 9 minutes, or 110 s, ahead of the server's clock (accepted:
#     within the 10-minute skew) followed by a recorded thrash of 100 s of
#     the same host: the thrash alert still opens (the detectors re-anchor,
#     CONTRACT.md §2).
. "$(dirname "$0")/_lib.sh"
e2e_init scopes
tok() { "$SERVER" token "$@" --db "$E2E_DB" --schema "$E2E_ROOT/schema"; }
post_as() { # TOKEN BODY
	printf '%s' "$2" >"$E2E_DIR/post"
	req POST /api/v1/samples -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
		--data-binary @"$E2E_DIR/post"
}

WEB=$(tok add web --hosts 'web-*,edge-0?' 2>/dev/null)
check "token add --hosts prints a token" test -n "$WEB"
FEW=$(tok add few --new-hosts-per-hour 2 2>/dev/null)
check "token add --new-hosts-per-hour prints a token" test -n "$FEW"
tok add bad --hosts 'web/*' >/dev/null 2>"$E2E_DIR/bad.err"
check_eq "$?" 2 "a malformed --hosts is refused"
grep -q -- "--hosts: expected host name patterns" "$E2E_DIR/bad.err" && ok || bad "the error names --hosts"
tok list >"$E2E_DIR/list"
grep -E '^web +.* web-\*,edge-0\?$' "$E2E_DIR/list" >/dev/null && ok || bad "token list shows the patterns: $(cat "$E2E_DIR/list")"
grep -E '^few +.* 2 +\*$' "$E2E_DIR/list" >/dev/null && ok || bad "token list shows the new-host budget: $(cat "$E2E_DIR/list")"

FILE_TOK=e2e-file-token-$RANDOM$RANDOM
printf '# scoped in the file\n%s name=db-agents hosts=db-* new-hosts-per-hour=1\n' "$FILE_TOK" >"$E2E_DIR/tokens"
chmod 600 "$E2E_DIR/tokens"
e2e_server_start --tokens-file "$E2E_DIR/tokens" --db-tokens
NOW=$(e2e_now)

# --- host patterns
post_as "$WEB" "$(e2e_sample web-01 $((NOW - 60)))"
check_status 202 "a scoped token posts for a host it covers"
post_as "$WEB" "$(e2e_sample edge-07 $((NOW - 60)))"
check_status 202 "... and for its second pattern"
post_as "$WEB" "[$(e2e_sample web-02 $((NOW - 60))),$(e2e_sample db-07 $((NOW - 60)))]"
check_status 403 "a sample for a host outside the patterns"
check_contains "may not post for host db-07" "the 403 names the host"
check_contains "web" "the 403 names the token"
check_json_error "403"
check_eq "$(e2e_psql "SELECT count(*) FROM hosts WHERE name IN ('web-02', 'db-07') AND samples > 0")" 0 \
	"nothing of the refused request is stored"
post_as "$FILE_TOK" "$(e2e_sample db-01 $((NOW - 60)))"
check_status 202 "a tokens-file token with hosts= posts for its host"
post_as "$FILE_TOK" "$(e2e_sample web-01 $((NOW - 50)))"
check_status 403 "... and not for another"
check_contains "db-agents" "the tokens file's name= names the token"
post_as "$FEW" "$(e2e_sample db-07 $((NOW - 60)))"
check_status 202 "an unscoped token posts for any host"

# --- new hosts per token and hour
post_as "$FEW" "$(e2e_sample new-02 $((NOW - 60)))"
check_status 202 "second new host of the few token"
post_as "$FEW" "$(e2e_sample new-03 $((NOW - 60)))"
check_status 429 "third new host within the hour"
check_contains "at most 2 new hosts per hour" "the 429 names the budget"
check_header "retry-after: " "429 with Retry-After"
post_as "$FEW" "$(e2e_sample db-07 $((NOW - 40)))"
check_status 202 "a host it brought keeps posting"
post_as "$FEW" "$(e2e_sample web-01 $((NOW - 40)))"
check_status 202 "a host the server knew already costs nothing"
post_as "$FILE_TOK" "$(e2e_sample db-02 $((NOW - 60)))"
check_status 429 "new-hosts-per-hour= in the tokens file (its 1 went to db-01)"
post_as "$E2E_TOKEN" "$(e2e_sample new-04 $((NOW - 60)))"
check_status 202 "a token without a budget brings new hosts"
req GET /metrics
check_contains 'vmscope_ingest_refusals_total{reason="host_scope"} 2' "403s counted"
check_contains 'vmscope_ingest_refusals_total{reason="new_hosts_per_token"} 2' "429s counted"

# --- a sample from the future cannot blind the host's detection
TRACE=$E2E_ROOT/tests/corpus/real-filethrash.jsonl.gz
e2e_shift_trace "$TRACE" "$E2E_DIR/thrash.jsonl"
for ahead in 540 110; do
	jq -c --arg h "fut-$ahead" '.host = $h' "$E2E_DIR/thrash.jsonl" >"$E2E_DIR/fut.jsonl"
	first=$(head -1 "$E2E_DIR/fut.jsonl")
	post_as "$E2E_TOKEN" "$(jq -c --argjson t $(($(e2e_now) + ahead)) '.ts = $t' <<<"$first")"
	check_status 202 "a sample $ahead s ahead is accepted (within the skew)"
	jq -sc . "$E2E_DIR/fut.jsonl" >"$E2E_DIR/fut-batch.json"
	req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Type: application/json' \
		--data-binary @"$E2E_DIR/fut-batch.json"
	check_status 202 "the recorded thrash (100 s) of the same host, posted now"
	req GET "/api/v1/alerts?host=fut-$ahead&kind=thrash"
	check_jq '.alerts | length >= 1' "the thrash alert opened behind the sample $ahead s ahead"
done
grep -q "re-anchored" "$E2E_LOG" && ok || bad "the server logs the re-anchoring"
e2e_server_stop
e2e_done
