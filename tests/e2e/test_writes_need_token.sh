#!/usr/bin/env bash
# test_writes_need_token.sh - every state-changing endpoint needs a token in
# every configuration (ingest under --insecure-no-auth aside), the ingest
# token never writes, and secrets need not appear on the command line:
#   - a server with neither --admin-token-file nor a read token refuses
#     silences (POST, DELETE), overrides (PUT, DELETE) and forgetting a host
#     (DELETE) with 401/403, with or without the ingest token; --insecure-no-auth
#     opens ingest only;
#   - with --read-token-file, silences take the read token, never the
#     ingest token;
#   - an ingest token equal to the read or admin token stops the start;
#   - started with --tokens-file, --read-token-file, --admin-token-file and
#     the database in VMSCOPE_DB, the server's command line (what `ps`
#     shows) holds none of them.
. "$(dirname "$0")/_lib.sh"
e2e_init writes
NOW=$(e2e_now)
sil() { req POST /api/v1/silences -H 'Content-Type: application/json' \
	--data-binary '{"host":"w-01","duration_s":600}' "$@"; }
writes_refused() { # LABEL [CURL ARGS]: every write is refused
	local label=$1
	shift
	sil "$@"
	case $STATUS in 401|403) ok ;; *) bad "$label: POST silences answered $STATUS" ;; esac
	req DELETE /api/v1/silences/1 "$@"
	case $STATUS in 401|403) ok ;; *) bad "$label: DELETE silence answered $STATUS" ;; esac
	req PUT /api/v1/overrides -H 'Content-Type: application/json' --data-binary '{"overrides":[]}' "$@"
	case $STATUS in 401|403) ok ;; *) bad "$label: PUT overrides answered $STATUS" ;; esac
	req DELETE /api/v1/overrides/1 "$@"
	case $STATUS in 401|403) ok ;; *) bad "$label: DELETE override answered $STATUS" ;; esac
	req DELETE /api/v1/hosts/w-01 "$@"
	case $STATUS in 401|403) ok ;; *) bad "$label: DELETE host answered $STATUS" ;; esac
}

# --- no admin token, no read token (a loopback server started as before)
e2e_server_start
e2e_sample w-01 $((NOW - 30)) >"$E2E_DIR/s.json"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" --data-binary @"$E2E_DIR/s.json"
check_status 202 "ingest with its token"
writes_refused "no token"
writes_refused "the ingest token" -H "Authorization: Bearer $E2E_TOKEN"
sil
check_status 403 "silences without any operator token configured"
check_contains "admin-token-file" "the 403 says how to allow them"
check_eq "$(e2e_psql "SELECT count(*) FROM silences")" 0 "no silence was made"
check_eq "$(e2e_psql "SELECT count(*) FROM hosts WHERE name = 'w-01' AND samples > 0")" 1 "the host was not forgotten"
e2e_server_stop

# --- --insecure-no-auth opens ingest, not writes
e2e_server_start --insecure-no-auth
req POST /api/v1/samples --data-binary @"$E2E_DIR/s.json"
check_status 202 "ingest without a token under --insecure-no-auth"
writes_refused "--insecure-no-auth, no token"
e2e_server_stop

# --- the read token (from a file) writes silences; the ingest token never
READ=e2e-read-$RANDOM$RANDOM
ADMIN=e2e-admin-$RANDOM$RANDOM
printf '%s\n' "$READ" >"$E2E_DIR/read.token"
printf '%s\n' "$ADMIN" >"$E2E_DIR/admin.token"
printf '%s\n' "$E2E_TOKEN" >"$E2E_DIR/ingest.token"
chmod 600 "$E2E_DIR"/*.token
e2e_server_start --read-token-file "$E2E_DIR/read.token"
sil -H "Authorization: Bearer $E2E_TOKEN"
check_status 403 "the ingest token cannot create a silence"
sil -H "Authorization: Bearer $READ"
check_status 201 "the read token creates a silence"
check_jq '.created_by == "read-token"' "created_by names the credential"
req GET /api/v1/hosts -H "Authorization: Bearer $READ"
check_status 200 "the read token from a file reads"
req GET /api/v1/hosts
check_status 401 "reads need it"
e2e_server_stop

# --- an ingest token that is also an operator's token stops the start
out=$(timeout 20 "$SERVER" --listen 127.0.0.1:1 --db "$E2E_DB" --token "$E2E_TOKEN" --read-token-file "$E2E_DIR/ingest.token" 2>&1)
check_eq "$?" 2 "an ingest token equal to the read token is refused"
[[ "$out" == *"give each its own"* ]] && ok || bad "the refusal says why: $out"
out=$(timeout 20 "$SERVER" --listen 127.0.0.1:1 --db "$E2E_DB" --tokens-file "$E2E_DIR/ingest.token" --admin-token-file "$E2E_DIR/ingest.token" 2>&1)
check_eq "$?" 2 "an ingest token equal to the admin token is refused"

# --- nothing secret on the command line
PORT=$("$E2E_ROOT/scripts/freeport.sh")
VMSCOPE_DB="$E2E_DB" "$SERVER" --listen "127.0.0.1:$PORT" --tokens-file "$E2E_DIR/ingest.token" \
	--read-token-file "$E2E_DIR/read.token" --admin-token-file "$E2E_DIR/admin.token" \
	--schema "$E2E_ROOT/schema" >"$E2E_DIR/ps-server.log" 2>&1 &
PS_PID=$!
E2E_PIDS+=("$PS_PID")
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
cmd=$(tr '\0' ' ' <"/proc/$PS_PID/cmdline")
check "the server runs" kill -0 "$PS_PID"
for secret in "$E2E_TOKEN" "$READ" "$ADMIN" "$E2E_DB"; do
	[[ "$cmd" != *"$secret"* ]] && ok || bad "the command line shows a secret: $cmd"
done
E2E_URL=http://127.0.0.1:$PORT req GET /api/v1/hosts -H "Authorization: Bearer $READ"
check_status 200 "and reads with the token of its file"
kill -TERM "$PS_PID"
wait "$PS_PID"
check_eq "$?" 0 "that server stops cleanly"
e2e_done
