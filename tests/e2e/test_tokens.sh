#!/usr/bin/env bash
# test_tokens.sh - ingest tokens managed with `vmscope-server token`:
# a new token is accepted by a running server, a revocation takes effect
# within seconds without a restart, `token list` shows it revoked, the
# table holds only SHA-256 hashes (never a token), the static --token still
# works, and an ingest token cannot read when --read-token is set.
. "$(dirname "$0")/_lib.sh"

e2e_init tokens
READ=e2e-read-$RANDOM$RANDOM
tok() { "$SERVER" token "$@" --db "$E2E_DB" --schema "$E2E_ROOT/schema"; }
post_with() {
	printf '%s' "$2" >"$E2E_DIR/post"
	req POST /api/v1/samples -H "Authorization: Bearer $1" \
		-H 'Content-Type: application/json' --data-binary @"$E2E_DIR/post"
}

# --- the CLI on a fresh database (it applies the migrations itself)
T1=$(tok add agent-one 2>"$E2E_DIR/add.err")
check_eq "$?" 0 "token add exits 0"
if [[ "$T1" =~ ^vms_[0-9a-f]{48}$ ]]; then ok; else bad "token add printed \"$T1\""; fi
T2=$(tok add agent-two 2>/dev/null)
[ -n "$T2" ] && [ "$T2" != "$T1" ] && ok || bad "a second token differs from the first"
tok add agent-one >/dev/null 2>"$E2E_DIR/dup.err"
check_eq "$?" 1 "adding an existing name fails"
tok add 'bad name' >/dev/null 2>&1
check_eq "$?" 2 "a bad name is refused"

# --- hashed at rest: the hash of each token, never the token
rows=$(e2e_psql "SELECT name || ' ' || sha256 FROM ingest_tokens ORDER BY name")
h1=$(printf '%s' "$T1" | sha256sum | cut -d' ' -f1)
check_eq "$(sed -n 1p <<<"$rows")" "agent-one $h1" "the table holds the SHA-256 of token one"
dump=$(e2e_psql "SELECT ingest_tokens::text FROM ingest_tokens")
if [[ "$dump" != *"$T1"* && "$dump" != *"$T2"* && "$dump" != *"${T1#vms_}"* ]]; then ok
else bad "a plaintext token is stored"; fi

# --- a running server accepts both table tokens and the static one
e2e_server_start --read-token "$READ"
NOW=$(e2e_now)
post_with "$T1" "$(e2e_sample tok-01 $((NOW - 30)))"
check_status 202 "table token one posts"
post_with "$T2" "$(e2e_sample tok-02 $((NOW - 30)))"
check_status 202 "table token two posts"
post_with "$E2E_TOKEN" "$(e2e_sample tok-03 $((NOW - 30)))"
check_status 202 "the static --token still posts"
post_with "${T1}x" "$(e2e_sample tok-04 $((NOW - 30)))"
check_status 401 "a token with an extra character is refused"

# a token added while the server runs is accepted within seconds
T3=$(tok add agent-three 2>/dev/null)
got=
for _ in $(seq 100); do
	post_with "$T3" "$(e2e_sample tok-05 $((NOW - 25)))"
	[ "$STATUS" = 202 ] && { got=1; break; }
	sleep 0.1
done
check_eq "$got" 1 "a token added at run time is accepted without a restart"

# --- revocation takes effect without a restart (the cache is 3 s)
tok revoke agent-one 2>/dev/null
check_eq "$?" 0 "token revoke exits 0"
t0=$(date +%s)
refused=
for i in $(seq 150); do
	post_with "$T1" "$(e2e_sample tok-01 $((NOW - 20 + i % 10)))"
	[ "$STATUS" = 401 ] && { refused=1; break; }
	sleep 0.1
done
t1=$(date +%s)
check_eq "$refused" 1 "a revoked token is refused without a restart"
echo "revocation took effect after about $((t1 - t0)) s" >&2
post_with "$T2" "$(e2e_sample tok-02 $((NOW - 20)))"
check_status 202 "the other table token still posts"
tok revoke agent-one >/dev/null 2>&1
check_eq "$?" 1 "revoking twice fails"

# --- list shows the revocation
list=$(tok list 2>/dev/null)
check "list shows agent-one revoked" grep -Eq '^agent-one +[0-9T:Z-]+ +[0-9T:Z-]+ +revoked +- +\*$' <<<"$list"
check "list shows agent-two active (unscoped, no new-host budget)" grep -Eq '^agent-two +[0-9T:Z-]+ +- +active +- +\*$' <<<"$list"
if [[ "$list" != *"$T2"* ]]; then ok; else bad "list prints a token"; fi

# --- an ingest token cannot read when --read-token is set
for t in "$T2" "$E2E_TOKEN"; do
	req GET /api/v1/hosts -H "Authorization: Bearer $t"
	if [ "$STATUS" = 401 ] || [ "$STATUS" = 403 ]; then ok; else bad "ingest token reads: $STATUS"; fi
done
req GET /api/v1/hosts -H "Authorization: Bearer $READ"
check_status 200 "the read token reads"
check_jq '[.hosts[].host] | index("tok-01") != null and index("tok-03") != null' "hosts posted with table and static tokens are stored"
# the read token is not an ingest token either
post_with "$READ" "$(e2e_sample tok-06 $((NOW - 10)))"
check_status 401 "the read token cannot post"

e2e_server_stop

# --- --db-tokens: a server with no --token at all, only the table's
"$SERVER" --db "$E2E_DB" --schema "$E2E_ROOT/schema" >"$E2E_DIR/notok.log" 2>&1
check_eq "$?" 2 "without --token nor --db-tokens the server does not start"
check "the message names --db-tokens" grep -q -- "--db-tokens" "$E2E_DIR/notok.log"
port=$("$E2E_ROOT/scripts/freeport.sh")
E2E_URL="http://127.0.0.1:$port"
E2E_LOG="$E2E_DIR/dbtokens.log"
"$SERVER" --listen "127.0.0.1:$port" --db "$E2E_DB" --schema "$E2E_ROOT/schema" --db-tokens \
	--web "$E2E_ROOT/web" >"$E2E_LOG" 2>&1 &
E2E_PID=$!
E2E_PIDS+=("$E2E_PID")
for _ in $(seq 300); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$E2E_URL/healthz")" = 200 ] && break
	sleep 0.1
done
post_with "$T2" "$(e2e_sample tok-07 $((NOW - 5)))"
check_status 202 "--db-tokens: a table token posts"
post_with "$T1" "$(e2e_sample tok-07 $((NOW - 4)))"
check_status 401 "--db-tokens: the revoked token is refused"
post_with "$E2E_TOKEN" "$(e2e_sample tok-07 $((NOW - 3)))"
check_status 401 "--db-tokens: a token the server was not given is refused"
e2e_server_stop
e2e_done
