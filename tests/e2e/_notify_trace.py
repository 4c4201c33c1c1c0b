#!/usr/bin/env python3
"""_notify_trace.py - a thrash trace for tests/e2e/test_notify.sh.

  _notify_trace.py SRC HOST OPEN_OUT RESOLVE_OUT

Takes a recorded trace (JSON lines, .gz allowed) in which an alert opens,
renames its host to HOST and writes it to OPEN_OUT; RESOLVE_OUT gets a quiet
tail that resolves it: the last sample repeated every 10 s for 90 s with
every counter unchanged (no refaults, no reclaim) and PSI averages at 0.
Times are shifted so that the alert's part ends 2 s ago: the tail lies up to
90 s ahead of the clock (the server takes samples up to 10 minutes ahead),
so the host does not fall silent (host_silent) between the two posts.
"""
import copy
import gzip
import json
import sys
import time

src, host, open_out, resolve_out = sys.argv[1:]
op = gzip.open if src.endswith(".gz") else open
rows = [json.loads(l) for l in op(src, "rt") if l.strip()]
last = rows[-1]
tail = []
for k in range(1, 10):
    r = copy.deepcopy(last)
    r["ts"] = last["ts"] + 10 * k
    r["interval_s"] = 10

    def calm(psi):
        for part in psi.values():
            if isinstance(part, dict):
                for key in ("avg10", "avg60", "avg300"):
                    if key in part:
                        part[key] = 0.0

    for res in (r.get("psi") or {}).values():
        calm(res)
    for cg in r.get("cgroups") or []:
        calm(cg.get("psi") or {})
    tail.append(r)
shift = time.time() - 2 - rows[-1]["ts"]
for name, part in ((open_out, rows), (resolve_out, tail)):
    with open(name, "w") as f:
        for r in part:
            r["host"] = host
            r["ts"] = round(r["ts"] + shift, 3)
            f.write(json.dumps(r) + "\n")
