#!/usr/bin/env bash
# test_conn_flood.sh - one address with no token cannot take the server's
# connections (server/http/conn_watch.c, http.c):
#   A. 1,500 connections from 127.0.0.2, each sending POST headers with
#      Content-Length: 1000000 and then one body byte at a time, against a
#      server with the default --max-connections (from the open-file
#      limit): a fresh client's /healthz and an agent's POST from 127.0.0.1
#      are answered (10 s allowed; the times are printed), and every
#      trickling connection is cut once --timeout has passed since it
#      started, body or not (a whole-request deadline, not an idle one);
#   B. --max-connections 100 taken by 300 idle connections: each new one
#      closes the connection that has waited longest, so the oldest idle
#      ones go, the newest stay, and a fresh client is served at once;
#   C. --max-connections-per-address 20: of 30 connections from 127.0.0.2
#      10 are closed at once (which ones depends on which of the server's
#      threads accepts first), 127.0.0.1 is still served.
. "$(dirname "$0")/_lib.sh"
# the test's own descriptors (1,500 sockets) and the server's (inherited)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
ulimit -n 16384 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 4096 ]; then
	echo "e2e: need 4096 open files for 1,500 test sockets, have $(ulimit -n)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
e2e_init flood
TIMEOUT=8
e2e_server_start --timeout "$TIMEOUT"
PORT=${E2E_URL##*:}
limit=$(grep -o 'at most [0-9]* connections' "$E2E_LOG" | tail -1 | grep -o '[0-9]*')
check "A: the default --max-connections comes from the open-file limit ($limit of $(ulimit -n))" \
	test "${limit:-0}" -ge $(( $(ulimit -n) / 2 < 16384 ? $(ulimit -n) / 2 : 16384 ))
e2e_sample flood-agent $(($(e2e_now) - 5)) >"$E2E_DIR/sample.json"

check "A: 1,500 trickling connections from one address: /healthz and an agent's POST answered; all cut at --timeout" \
	python3 - "$PORT" "$E2E_TOKEN" "$E2E_DIR/sample.json" "$TIMEOUT" <<'PY'
import socket, sys, time
port, token, sample_file, limit = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
sample = open(sample_file, "rb").read()

def request(raw, timeout=10.0):
    """Sends raw from 127.0.0.1, returns (status line, seconds)."""
    t = time.time()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(raw)
    data = b""
    while b"\r\n" not in data:
        b = s.recv(4096)
        if not b:
            break
        data += b
    s.close()
    return data.split(b"\r\n", 1)[0], time.time() - t

loris, started = [], []
t0 = time.time()
for i in range(1500):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"POST /api/v1/samples HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: 1000000\r\n\r\n[")
    s.setblocking(False)
    loris.append(s)
    started.append(time.time())
print(f"opened 1500 trickling connections from 127.0.0.2 in {time.time() - t0:.1f} s", flush=True)

def trickle():
    for s in loris:
        try:
            s.send(b" ")
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            pass

trickle()
worst = 0.0
for k in range(5):
    st, took = request(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert st.startswith(b"HTTP/1.1 200"), f"/healthz during the flood: {st!r}"
    worst = max(worst, took)
    print(f"/healthz during the flood: {took * 1000:.0f} ms", flush=True)
    trickle()
st, took = request(b"POST /api/v1/samples HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token.encode() +
                   b"\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                   str(len(sample)).encode() + b"\r\n\r\n" + sample)
assert st.startswith(b"HTTP/1.1 202"), f"agent POST during the flood: {st!r}"
print(f"agent POST during the flood: {took * 1000:.0f} ms", flush=True)
worst = max(worst, took)
assert worst < 10, f"an answer took {worst:.1f} s"

# every trickling connection is cut about --timeout after it started
closed_at = [None] * len(loris)
deadline = time.time() + limit + 6
while time.time() < deadline and None in closed_at:
    for i, s in enumerate(loris):
        if closed_at[i] is not None:
            continue
        try:
            s.send(b" ")
            b = s.recv(4096)
            if b == b"":
                closed_at[i] = time.time()
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            closed_at[i] = time.time()
    time.sleep(0.25)
open_left = sum(c is None for c in closed_at)
assert open_left == 0, f"{open_left} trickling connections still open {limit + 6:.0f} s after they started"
lived = [c - s for c, s in zip(closed_at, started)]
print(f"trickling connections cut after {min(lived):.1f} to {max(lived):.1f} s (--timeout {limit:.0f})")
assert min(lived) >= limit - 1, f"cut after {min(lived):.1f} s, before --timeout"
for s in loris:
    s.close()
PY
cat "$E2E_DIR/check.out"
req GET /metrics
n=$(awk '/^vmscope_http_connections_closed_total\{reason="timeout"\}/ {print $2}' <<<"$BODY")
check "A: /metrics counts the connections cut at --timeout ($n)" test "${n:-0}" -ge 1500
e2e_server_stop

e2e_server_start --max-connections 100 --max-connections-per-address 0 --timeout 30
PORT=${E2E_URL##*:}
check "B: past --max-connections the oldest waiting connection goes, the newest stay, a client is served" \
	python3 - "$PORT" "$E2E_ROOT/tests/e2e" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
sys.path.insert(0, sys.argv[2])
sys.dont_write_bytecode = True
from _sockets import closed

idle = []
for i in range(300):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", port))
    idle.append(s)
    time.sleep(0.002)  # distinct start times, in order
time.sleep(1.0)
shut = [closed(s) for s in idle]
old, new = sum(shut[:150]), sum(shut[-80:])
print(f"of the 150 oldest idle connections {old} were closed, of the 80 newest {new}")
assert old >= 140, "the oldest waiting connections were not the ones closed"
assert new <= 5, "new connections were refused instead of old ones closed"
t = time.time()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
line = s.recv(4096).split(b"\r\n", 1)[0]
assert line.startswith(b"HTTP/1.1 200"), f"a fresh client: {line!r}"
print(f"a fresh client served in {(time.time() - t) * 1000:.0f} ms with the limit full")
PY
cat "$E2E_DIR/check.out"
e2e_server_stop

e2e_server_start --max-connections-per-address 20
PORT=${E2E_URL##*:}
check "C: --max-connections-per-address 20: 10 of 30 connections from 127.0.0.2 closed, 127.0.0.1 served" \
	python3 - "$PORT" "$E2E_ROOT/tests/e2e" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
sys.path.insert(0, sys.argv[2])
sys.dont_write_bytecode = True
from _sockets import closed
conns = []
for i in range(30):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", port))
    conns.append(s)
time.sleep(0.5)
shut = [closed(s) for s in conns]
print(f"from 127.0.0.2: {sum(shut)} of 30 connections closed at once")
assert sum(shut) == 10, shut
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
assert s.recv(4096).startswith(b"HTTP/1.1 200")
PY
cat "$E2E_DIR/check.out"
e2e_server_stop
e2e_done
