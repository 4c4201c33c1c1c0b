#!/usr/bin/env python3
"""_receiver.py - a local webhook receiver for tests/e2e/test_notify.sh.

  _receiver.py PORTFILE LOGFILE [PORT]

Listens on 127.0.0.1 on PORT (default: a free one; either way written to
PORTFILE once listening) and
appends one JSON line per POST to LOGFILE: {"path", "t" (receive time),
"status" (what it answered), "body" (the parsed JSON)}. Answers 200, except:
a path containing "/flaky" answers 500 to its first request and 200 after,
a path containing "/down" answers 503 always, a path containing "/hang"
is logged when it arrives (status 0) and answered only after 60 s.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

portfile, logfile = sys.argv[1], sys.argv[2]
port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
lock = threading.Lock()
seen = {}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparsable": raw.decode("utf-8", "replace")}
        if "/hang" in self.path:
            with lock, open(logfile, "a") as f:
                f.write(json.dumps({"path": self.path, "t": time.time(), "status": 0, "body": body}) + "\n")
            time.sleep(60)
        with lock:
            seen[self.path] = seen.get(self.path, 0) + 1
            count = seen[self.path]
            status = 200
            if "/flaky" in self.path and count == 1:
                status = 500
            if "/down" in self.path:
                status = 503
            with open(logfile, "a") as f:
                f.write(json.dumps({"path": self.path, "t": time.time(), "status": status,
                                    "ctype": self.headers.get("Content-Type"), "body": body}) + "\n")
        out = b'{"status":"success"}' if status == 200 else b'{"error":"try later"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
