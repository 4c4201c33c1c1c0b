#!/usr/bin/env bash
# test_slow_clients.sh - slow and many clients (docs/reliability.md, 7):
#   A. a slowloris of 500 connections, each trickling a partial request
#      header a byte a second, while a real agent posts every second: the
#      agent's samples are still answered 202 and stored as they are taken,
#      /healthz still answers promptly, and the slow connections are closed
#      once --timeout has passed without a complete header (conn_watch.c:
#      libmicrohttpd's own timeout is only an idle timeout);
#   B. --timeout: a connection that sends nothing (or stops sending) is
#      closed by the server after about --timeout seconds;
#   C. --max-connections: with the limit taken by idle sockets, each new
#      connection closes the one that has waited longest, and a client is
#      served at once (tests/e2e/test_conn_flood.sh does it at scale);
#   D. the limit taken by connections trickling a header byte every 0.5 s
#      (never idle): they are closed after --timeout and a client is served
#      again.
# The per-token --rate-limit (429 + Retry-After) is tested in test_ingest.sh.
. "$(dirname "$0")/_lib.sh"
AGENT=${AGENT:-$E2E_ROOT/bin/san/vmscope-agent}
e2e_init slow

# A. slowloris + a real agent
e2e_server_start --timeout 10
printf '%s\n' "$E2E_TOKEN" >"$E2E_DIR/token"
chmod 600 "$E2E_DIR/token"
HOST=slow-$$
PORT=${E2E_URL##*:}
python3 - "$PORT" 500 16 >"$E2E_DIR/loris.out" 2>&1 <<'PY' &
# slowloris: N connections, a partial header each, one more header byte per
# connection every second, for S seconds; prints how many stayed open
import socket, sys, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
socks = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /api/v1/samples HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    s.setblocking(False)
    socks.append(s)
print("opened", len(socks), flush=True)
end = time.time() + secs
while time.time() < end:
    for s in list(socks):
        try:
            s.send(b"a")
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            socks.remove(s)
    time.sleep(1)
print("open at the end", len(socks), flush=True)
PY
LORIS=$!
E2E_PIDS+=($LORIS)
for _ in $(seq 100); do grep -q opened "$E2E_DIR/loris.out" && break; sleep 0.1; done
check "the slowloris opened its 500 connections" grep -q "opened 500" "$E2E_DIR/loris.out"
"$AGENT" --server "$E2E_URL" --token-file "$E2E_DIR/token" --interval 1 --host "$HOST" \
	--spool "$E2E_DIR/spool" >"$E2E_DIR/agent.log" 2>&1 &
APID=$!
E2E_PIDS+=($APID)
t0=$(e2e_now)
sleep 12
t_hz=$SECONDS
req GET /healthz --max-time 20
check_status 200 "/healthz answers during the slowloris"
check "/healthz answered within 5 s during the slowloris" test $((SECONDS - t_hz)) -le 5
req GET "/api/v1/hosts/$HOST"
check_status 200 "the agent's host is known during the slowloris"
n=$(json .samples)
check "the agent's samples were stored during the slowloris ($n in 12 s)" test "${n:-0}" -ge 6
check_jq '(now - .last_seen_ts) < 4' "the agent's newest stored sample is fresh (delivered as taken)"
kill -TERM "$APID"
wait "$APID"
check_eq "$?" 0 "the agent exits 0"
grep -q 'samples taken' "$E2E_DIR/agent.log" && tot=$(grep -o '[0-9]* samples taken, [0-9]* skipped, [0-9]* delivered' "$E2E_DIR/agent.log" | tail -1)
check_eq "$(awk '{print $6}' <<<"${tot:-}")" "$(awk '{print $1}' <<<"${tot:-}")" "the agent delivered every sample it took (${tot:-no totals})"
wait "$LORIS"
cat "$E2E_DIR/loris.out"
check "the 500 trickling connections were closed after --timeout 10" grep -q "open at the end 0" "$E2E_DIR/loris.out"
e2e_server_stop

# B and C. a small limit and a short timeout
e2e_server_start --max-connections 32 --timeout 2 --threads 2
PORT=${E2E_URL##*:}
check "idle, stalled and trickling connections are closed after --timeout; past --max-connections the oldest waiting go" \
	python3 - "$PORT" <<'PY'
import socket, sys, time
port = int(sys.argv[1])

def closed_within(s, secs):
    """True when the server closes s (EOF or reset) within secs seconds."""
    s.settimeout(secs)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False

def get_healthz(timeout):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        data += b
    return data.split(b"\r\n", 1)[0]

# B: silent and stalled (partial header) connections closed after ~2 s
silent = socket.create_connection(("127.0.0.1", port))
stalled = socket.create_connection(("127.0.0.1", port))
stalled.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
t = time.time()
assert closed_within(silent, 15), "a silent connection stays open past --timeout"
assert closed_within(stalled, 15), "a stalled request stays open past --timeout"
took = time.time() - t
assert took >= 1.0, f"closed after {took:.1f} s, before --timeout 2"
print(f"B: silent/stalled connections closed after {took:.1f} s (--timeout 2)")

# C: fill the limit with idle sockets, then more: each new connection
# closes the one that has waited longest, so the oldest idle ones go, the
# new ones stay, and a client is served at once
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(32)]
time.sleep(0.5)
extra = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
time.sleep(0.3)  # well within --timeout 2: nothing has timed out yet
shut_old = sum(closed_within(s, 0.01) for s in idle[:16])
shut_new = sum(closed_within(s, 0.01) for s in extra)
assert shut_old >= 14, f"only {shut_old} of the 16 oldest idle connections were closed for new ones"
assert shut_new <= 2, f"{shut_new} of 16 new connections were refused"
print(f"C: {shut_old} of the 16 oldest idle connections closed for 16 new ones")
t = time.time()
status = get_healthz(5)
assert status and status.startswith(b"HTTP/1.1 200"), f"not served with the limit full of idle sockets: {status}"
print(f"C: served at once ({time.time() - t:.2f} s)")
for s in idle + extra + [silent, stalled]:
    s.close()

# D: the limit taken by trickling connections (a header byte every 0.5 s)
time.sleep(3)  # the closed ones are gone
loris = []
for _ in range(48):
    try:
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        loris.append(s)
    except OSError:
        pass
t = time.time()
status = None
while time.time() - t < 20:
    for s in list(loris):
        try:
            s.send(b"a")
        except OSError:
            loris.remove(s)
    try:
        status = get_healthz(0.5)
        if status.startswith(b"HTTP/1.1 200"):
            break
    except OSError:
        pass
    time.sleep(0.5)
assert status and status.startswith(b"HTTP/1.1 200"), f"trickling connections starve clients: {status}"
print(f"D: served after {time.time() - t:.1f} s with the limit taken by trickling connections")
t = time.time()
while loris and time.time() - t < 10:
    for s in list(loris):
        try:
            s.send(b"a")
        except OSError:
            loris.remove(s)
    time.sleep(0.5)
assert not loris, f"{len(loris)} trickling connections still open 10 s later"
print("D: every trickling connection closed")
PY
cat "$E2E_DIR/check.out"
e2e_server_stop
e2e_done
