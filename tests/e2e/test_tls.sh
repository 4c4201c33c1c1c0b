#!/usr/bin/env bash
# test_tls.sh - HTTPS between agent and server: a throwaway CA and a server
# certificate for 127.0.0.1 (openssl); the server with --tls-cert/--tls-key
# answers over https; the agent with --cacert delivers (sample stored); the
# agent without the CA refuses the server (verification failure logged, the
# sample stays in its spool); plain http to the TLS port gets no answer;
# a key that does not match the certificate stops the start with a message.
. "$(dirname "$0")/_lib.sh"
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}
cd "$E2E_ROOT"
e2e_init tls

# --- a CA and a server certificate signed by it, for IP 127.0.0.1
P=$E2E_DIR/pki
mkdir -p "$P"
(
	set -e
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$P/ca.key" -out "$P/ca.pem" -days 2 -subj "/CN=vmscope e2e CA"
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$P/server.key" -out "$P/server.csr" -subj "/CN=127.0.0.1"
	printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$P/ext"
	openssl x509 -req -in "$P/server.csr" -CA "$P/ca.pem" -CAkey "$P/ca.key" -CAcreateserial \
		-out "$P/server.pem" -days 2 -extfile "$P/ext"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$P/other.key" -out "$P/other-ca.pem" -days 2 -subj "/CN=another CA"
) >"$E2E_DIR/openssl.log" 2>&1 || { cat "$E2E_DIR/openssl.log" >&2; bad "openssl could not make the certificates"; e2e_done; }

# --- a key that does not belong to the certificate: no start, a message
port=$(scripts/freeport.sh)
"$SERVER" --listen "127.0.0.1:$port" --db "$E2E_DB" --token "$E2E_TOKEN" --schema schema \
	--tls-cert "$P/server.pem" --tls-key "$P/other.key" >"$E2E_DIR/badkey.log" 2>&1 &
bpid=$!
E2E_PIDS+=("$bpid")
for _ in $(seq 100); do kill -0 "$bpid" 2>/dev/null || break; sleep 0.1; done
wait "$bpid"
check_eq "$?" 1 "a mismatched key stops the start"
check "the message names TLS" grep -q "TLS certificate and key" "$E2E_DIR/badkey.log"
"$SERVER" --db "$E2E_DB" --token "$E2E_TOKEN" --tls-cert "$P/server.pem" >"$E2E_DIR/nokey.log" 2>&1
check_eq "$?" 2 "--tls-cert without --tls-key is a usage error"

# --- the server over TLS
port=$(scripts/freeport.sh)
E2E_URL="https://127.0.0.1:$port"
E2E_LOG="$E2E_DIR/server.log"
"$SERVER" --listen "127.0.0.1:$port" --db "$E2E_DB" --token "$E2E_TOKEN" --schema schema \
	--web web --tls-cert "$P/server.pem" --tls-key "$P/server.key" >"$E2E_LOG" 2>&1 &
E2E_PID=$!
E2E_PIDS+=("$E2E_PID")
code=
for _ in $(seq 300); do
	code=$(curl -s --cacert "$P/ca.pem" -o /dev/null -w '%{http_code}' "$E2E_URL/healthz" || true)
	[ "$code" = 200 ] && break
	kill -0 "$E2E_PID" 2>/dev/null || break
	sleep 0.1
done
check_eq "$code" 200 "healthz over https with the CA"
[ "$code" = 200 ] || { tail -20 "$E2E_LOG" >&2; e2e_done; }

req GET /healthz --cacert "$P/ca.pem"
check_status 200 "req over https"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' "$E2E_URL/healthz" 2>/dev/null)
check_eq "$STATUS" 000 "curl without the CA refuses the server certificate"
curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$port/healthz"
rc=$?
if [ "$rc" != 0 ]; then ok; else bad "plain http to the TLS port got an answer"; fi
check_eq "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/healthz")" 000 \
	"plain http to the TLS port gets no HTTP status"

# --- the agent with --cacert delivers
check "agent --cacert posts" "$AGENT" --once --server "$E2E_URL" --token "$E2E_TOKEN" \
	--cacert "$P/ca.pem" --root tests/fixtures/k6.1 --host tls-ok --spool "$E2E_DIR/spool-ok" \
	--log-level warn
req GET /api/v1/hosts/tls-ok --cacert "$P/ca.pem"
check_status 200 "the sample sent over TLS is stored"
check_eq "$(json .samples)" 1 "one sample stored"

# --- the agent without the CA: verification fails, logged, the sample kept
"$AGENT" --once --server "$E2E_URL" --token "$E2E_TOKEN" --root tests/fixtures/k6.1 \
	--host tls-bad --spool "$E2E_DIR/spool-bad" --timeout 3 >"$E2E_DIR/agent-bad.log" 2>&1
rc=$?
if [ "$rc" != 0 ]; then ok; else bad "agent without the CA exited 0"; fi
check "the agent logs the verification failure" grep -q "TLS verification failed" "$E2E_DIR/agent-bad.log"
grep -m1 -i "could not deliver" "$E2E_DIR/agent-bad.log" >&2
spooled=$(find "$E2E_DIR/spool-bad" -type f -size +0 2>/dev/null | xargs -r cat | grep -c '"host":"tls-bad"')
check "the undelivered sample stays in the spool ($spooled)" test "${spooled:-0}" -ge 1
req GET /api/v1/hosts/tls-bad --cacert "$P/ca.pem"
check_status 404 "nothing stored from the agent without the CA"

# --- the CA of someone else does not help either
"$AGENT" --once --server "$E2E_URL" --token "$E2E_TOKEN" --cacert "$P/other-ca.pem" \
	--root tests/fixtures/k6.1 --host tls-bad2 --spool "$E2E_DIR/spool-bad2" --timeout 3 \
	>"$E2E_DIR/agent-bad2.log" 2>&1
rc=$?
if [ "$rc" != 0 ]; then ok; else bad "agent trusting another CA exited 0"; fi
check "agent --cacert FILE missing is a usage error" bash -c \
	"! '$AGENT' --once --server '$E2E_URL' --token x --cacert '$P/nope.pem' --spool '$E2E_DIR/s3'"

e2e_server_stop
e2e_done
