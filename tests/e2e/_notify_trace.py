#!/usr/bin/env python3
"""_notify_trace.py - thrash traces for tests/e2e/test_notify.sh.

  _notify_trace.py SRC N OUTDIR HOST...

Takes a recorded trace (JSON lines, .gz allowed) in which an alert opens,
keeps its first N samples and writes, for each HOST, OUTDIR/HOST-open.jsonl
(those samples under that host name) and OUTDIR/HOST-tail.jsonl, a quiet
tail that resolves the alert: the last sample repeated every 10 s for 90 s
with every counter unchanged (no refaults, no reclaim) and PSI averages at
0. Times are shifted so that the alert's part ends 2 s ago: the tail lies
up to 90 s ahead of the clock (the server takes samples up to 10 minutes
ahead), so the host does not fall silent (host_silent) between the posts.
"""
import copy
import gzip
import json
import sys
import time

src, n, outdir, hosts = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
op = gzip.open if src.endswith(".gz") else open
rows = [json.loads(l) for l in op(src, "rt") if l.strip()][:n]


def calm(psi):
    for part in psi.values():
        if isinstance(part, dict):
            for key in ("avg10", "avg60", "avg300"):
                if key in part:
                    part[key] = 0.0


last = rows[-1]
tail = []
for k in range(1, 10):
    r = copy.deepcopy(last)
    r["ts"] = last["ts"] + 10 * k
    r["interval_s"] = 10
    for res in (r.get("psi") or {}).values():
        calm(res)
    for cg in r.get("cgroups") or []:
        calm(cg.get("psi") or {})
    tail.append(r)
shift = time.time() - 2 - last["ts"]
for host in hosts:
    for name, part in (("open", rows), ("tail", tail)):
        with open("%s/%s-%s.jsonl" % (outdir, host, name), "w") as f:
            for r in part:
                r = dict(r, host=host, ts=round(r["ts"] + shift, 3))
                f.write(json.dumps(r) + "\n")
