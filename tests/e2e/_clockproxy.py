#!/usr/bin/env python3
"""_clockproxy.py - an HTTP proxy that makes an agent's clock wrong, for
tests/e2e/test_clock_skew.sh.

  _clockproxy.py PORTFILE UPSTREAM SHIFT_S [AFTER_S:SHIFT2_S] [round]

Listens on a free port of 127.0.0.1 (written to PORTFILE once listening),
forwards every POST to UPSTREAM (the server's base URL) with each sample's
"ts" moved by SHIFT_S seconds (the body gunzipped when it came gzip'ed,
sent on plain), and answers with the server's status, Retry-After and
body: the agent behind it runs as on a machine whose clock is SHIFT_S
seconds off. With AFTER_S:SHIFT2_S, samples taken AFTER_S seconds after
the proxy started are moved by SHIFT2_S instead (the clock stepped, as
ntpd or chrony do); with "round", ts are rounded to the second (so that
samples of a clock stepped back land on the timestamps of stored ones).
"""
import time
import gzip
import json
import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

portfile, upstream, shift = sys.argv[1], sys.argv[2].rstrip("/"), float(sys.argv[3])
step_after, shift2 = (float(x) for x in sys.argv[4].split(":")) if len(sys.argv) > 4 else (float("inf"), 0.0)
rounding = len(sys.argv) > 5 and sys.argv[5] == "round"
t0 = time.time()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        doc = json.loads(raw)
        for s in doc if isinstance(doc, list) else [doc]:
            d = shift2 if s["ts"] >= t0 + step_after else shift
            s["ts"] = round(s["ts"] + d) if rounding else round(s["ts"] + d, 3)
        req = urllib.request.Request(upstream + self.path, data=json.dumps(doc).encode(), method="POST")
        for h in ("Authorization", "Content-Type"):
            if self.headers.get(h):
                req.add_header(h, self.headers[h])
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                status, headers, body = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, headers, body = e.code, e.headers, e.read()
        except OSError:
            status, headers, body = 502, {}, b'{"error":"upstream unreachable"}'
        self.send_response(status)
        if headers.get("Retry-After"):
            self.send_header("Retry-After", headers["Retry-After"])
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os  # noqa: E402

os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
