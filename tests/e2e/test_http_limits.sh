#!/usr/bin/env bash
# test_http_limits.sh - what a browser or a hostile client meets at the HTTP
# layer (server/http/: respond.c, host_allow.c, http.c, static.c, body.c):
#   - every answer carries Content-Security-Policy (script-src 'self',
#     frame-ancestors 'none'), X-Frame-Options: DENY and Referrer-Policy:
#     no-referrer;
#   - Host allow-list: on a loopback address only loopback names and
#     addresses are answered (else 421 JSON) unless --allowed-hosts adds
#     more; on a wildcard address every name unless --allowed-hosts is
#     given, which then restricts; a port that is not digits is 421;
#     HTTP/1.1 without Host is the project's JSON 400, HTTP/1.0 is answered;
#   - a request URI over 8 KiB gets 414 and headers over 32 KiB 431, as the
#     project's JSON error (not libmicrohttpd's HTML page);
#   - %2F in a path segment is 404; dotfiles under --web are 404;
#   - a gzip body inflating past --max-body gets 413 naming the limit, every
#     time (not 503 + Retry-After, which agents retry forever), and a body
#     of nearly --max-body once inflated is taken even though its parse
#     reservation is over the in-flight budget on its own;
#   - Unicode bidirectional controls are refused in label values and the
#     kernel string (400 naming the field).
. "$(dirname "$0")/_lib.sh"
e2e_init limits
WEB=$E2E_DIR/web
cp -r "$E2E_ROOT/web" "$WEB"
printf 'SECRET=1\n' >"$WEB/.env"
mkdir -p "$WEB/.git" && printf '[core]\n' >"$WEB/.git/config"
ln -s .env "$WEB/env.txt"
E2E_WEB=$WEB e2e_server_start
PORT=${E2E_URL##*:}
NOW=$(e2e_now)

# --- security headers, on a page, an API answer and an error
for path in / /api/v1/hosts /nonexistent.js; do
	req GET "$path"
	check_header "content-security-policy: .*script-src 'self';" "$path: CSP script-src 'self'"
	check_header "content-security-policy: .*frame-ancestors 'none'" "$path: CSP frame-ancestors 'none'"
	check_header "x-frame-options: deny" "$path: X-Frame-Options"
	check_header "referrer-policy: no-referrer" "$path: Referrer-Policy"
done
check "the CSP allows no inline script" bash -c "! grep -i '^content-security-policy:.*script-src[^;]*unsafe-inline' <<<\"\$0\"" "$HEADERS"

# --- Host allow-list on loopback
req GET /healthz -H "Host: rebind.attacker.example:$PORT"
check_status 421 "a foreign Host on a loopback server"
check_json_error "421"
check_contains "rebind.attacker.example" "the 421 names the host"
req GET /healthz -H "Host: localhost:$PORT"
check_status 200 "Host: localhost"
req GET /healthz -H "Host: 127.0.0.1:$PORT"
check_status 200 "Host: 127.0.0.1"
req GET /healthz -H "Host: [::1]:$PORT"
check_status 200 "Host: [::1]"
req GET /healthz -H "Host: 127.0.0.1:80@rebind.attacker.example"
check_status 421 "a Host whose port is not digits"
# HTTP/1.1 without Host: the project's 400; HTTP/1.0 without it is answered
raw() { python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1",int(sys.argv[1]))); s.sendall(sys.argv[2].encode()); print(s.recv(65536).decode("latin1"))' "$PORT" "$1"; }
ans=$(raw $'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n')
[[ "$ans" == "HTTP/1.1 400"* && "$ans" == *'"error":"missing Host header"'* ]] && ok || bad "HTTP/1.1 without Host: ${ans:0:200}"
ans=$(raw $'GET /healthz HTTP/1.0\r\n\r\n')
[[ "$ans" == "HTTP/1.1 200"* ]] && ok || bad "HTTP/1.0 without Host: ${ans:0:200}"

# --- request line and header sizes answered as JSON
req GET "/api/v1/hosts?pad=$(head -c 16000 /dev/zero | tr '\0' a)"
check_status 414 "a 16 KB request URI"
check_json_error "414"
req GET /healthz -H "X-Pad: $(head -c 40000 /dev/zero | tr '\0' b)"
check_status 431 "40 KB of headers"
check_json_error "431"

# --- paths
e2e_sample real-01 $((NOW - 30)) >"$E2E_DIR/s.json"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" --data-binary @"$E2E_DIR/s.json"
check_status 202 "a sample for real-01"
req GET /api/v1/hosts/real-01/cgroups
check_status 200 "real-01's cgroups"
req GET /api/v1/hosts/real-01%2Fcgroups
check_status 404 "%2F in the host segment"
req GET /api/v1/hosts/real-01%2fx/cgroups
check_status 404 "%2f in the host segment"
req GET /js%2Fapp.js
check_status 404 "%2F in a file path"
req GET /js/app.js
check_status 200 "a dashboard file"
for f in /.env /.git/config /env.txt /js/../.env; do
	req GET "$f"
	check_status 404 "dotfile $f"
done

# --- gzip past --max-body: 413 naming the limit, every time
head -c $((20 * 1024 * 1024)) /dev/zero | gzip -9 >"$E2E_DIR/bomb.gz"
for i in 1 2 3; do
	req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Encoding: gzip' \
		--data-binary @"$E2E_DIR/bomb.gz"
	check_status 413 "a gzip body inflating to 20 MiB, attempt $i"
done
check_contains "8388608 bytes" "the 413 names the limit"
check_contains "--max-body" "the 413 names the flag"
# nearly --max-body inflated: its parse reservation (33 bytes a byte) is
# over the 256 MiB budget alone; a request alone may still take it
python3 - "$E2E_DIR/s.json" "$E2E_DIR/big.json" <<'PY'
import sys
s = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(s[:-1] + " " * (8 * 1024 * 1024 - len(s) - 100) + "}")
PY
gzip -c "$E2E_DIR/big.json" >"$E2E_DIR/big.gz"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" -H 'Content-Encoding: gzip' \
	--data-binary @"$E2E_DIR/big.gz"
check_status 202 "a gzip body of nearly --max-body inflated, alone"

# --- bidirectional controls
e2e_sample real-01 $((NOW - 20)) 1000 ',"labels":{"rack":"r1\u202egnp.exe"}' >"$E2E_DIR/bidi.json"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" --data-binary @"$E2E_DIR/bidi.json"
check_status 400 "a label value with U+202E"
check_contains "labels.rack" "the 400 names the label"
check_contains "bidirectional" "the 400 says why"
printf '%s' "$(e2e_sample real-01 $((NOW - 19)))" | jq -c '.kernel = "6.1\u2066-evil"' >"$E2E_DIR/bidi2.json"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" --data-binary @"$E2E_DIR/bidi2.json"
check_status 400 "a kernel string with U+2066"
check_contains "kernel" "the 400 names the field"
e2e_sample real-01 $((NOW - 18)) 1000 ',"labels":{"rack":"caf\u00e9"}' >"$E2E_DIR/ok.json"
req POST /api/v1/samples -H "Authorization: Bearer $E2E_TOKEN" --data-binary @"$E2E_DIR/ok.json"
check_status 202 "other non-ASCII text is taken"
e2e_server_stop

# --- --allowed-hosts on loopback adds names
E2E_WEB=$WEB e2e_server_start --allowed-hosts 'vmscope.example,*.lab.example'
req GET /healthz -H "Host: vmscope.example"
check_status 200 "--allowed-hosts adds a name on loopback"
req GET /healthz -H "Host: box.lab.example:8080"
check_status 200 "--allowed-hosts wildcard"
req GET /healthz -H "Host: localhost"
check_status 200 "loopback names stay"
req GET /healthz -H "Host: other.example"
check_status 421 "other names still refused"
e2e_server_stop

# --- a wildcard address: every name unless --allowed-hosts restricts
E2E_PORT=$PORT E2E_WEB=$WEB e2e_server_start --listen "0.0.0.0:$PORT"
req GET /healthz -H "Host: whatever.example"
check_status 200 "a wildcard address answers any name by default"
e2e_server_stop
E2E_PORT=$PORT E2E_WEB=$WEB e2e_server_start --listen "0.0.0.0:$PORT" --allowed-hosts 'vmscope.example,127.0.0.1'
req GET /healthz -H "Host: vmscope.example:$PORT"
check_status 200 "--allowed-hosts on a wildcard address: listed name"
req GET /healthz -H "Host: other.example"
check_status 421 "--allowed-hosts on a wildcard address restricts"
req GET /healthz -H "Host: localhost:$PORT"
check_status 421 "... loopback names too, unless listed"
e2e_server_stop
e2e_done
