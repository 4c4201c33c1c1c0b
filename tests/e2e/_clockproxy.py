#!/usr/bin/env python3
"""_clockproxy.py - an HTTP proxy that makes an agent's clock wrong, for
tests/e2e/test_clock_skew.sh.

  _clockproxy.py PORTFILE UPSTREAM SHIFT_S

Listens on a free port of 127.0.0.1 (written to PORTFILE once listening),
forwards every POST to UPSTREAM (the server's base URL) with each sample's
"ts" moved by SHIFT_S seconds (the body gunzipped when it came gzip'ed,
sent on plain), and answers with the server's status, Retry-After and
body: the agent behind it runs as on a machine whose clock is SHIFT_S
seconds off.
"""
import gzip
import json
import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

portfile, upstream, shift = sys.argv[1], sys.argv[2].rstrip("/"), float(sys.argv[3])


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        doc = json.loads(raw)
        for s in doc if isinstance(doc, list) else [doc]:
            s["ts"] = round(s["ts"] + shift, 3)
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
