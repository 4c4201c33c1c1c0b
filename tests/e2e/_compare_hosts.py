#!/usr/bin/env python3
"""_compare_hosts.py - copies of a recorded corpus trace as several hosts,
for test_compare.sh and test_regression.sh. Host i of N (named PREFIX-i)
gets KEEP samples of the trace starting at sample i * DROP, so that no two
hosts are identical and the hosts' means interleave by i; `kernel` and
`labels` (role ROLE, rack r1 for even i, r2 for odd) are set, and the
timestamps are shifted so that every host's slice ends END seconds before
now. The recorded spacing is kept: the rollups bucket by the samples' ts.
Writes JSON arrays of at most 50 samples as DIR/PREFIX-KERNEL-NNN.json.

usage: _compare_hosts.py SRC PREFIX N KERNEL ROLE DROP KEEP END DIR
(or import it: load() and write_copies() do the same for several groups
in one process)
"""
import gzip
import json
import sys
import time


def load(src):
    """The samples of a JSON-lines trace, plain or gzip."""
    op = gzip.open if src.endswith(".gz") else open
    with op(src, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_copies(rows, prefix, n, kernel, role, drop, keep, end, dst, now=None):
    """N host copies of rows as described above, written under dst. The
    boot_id names the kernel too: the same hosts copied again on another
    kernel have rebooted into it."""
    now = time.time() if now is None else now
    nfile = 0
    for i in range(n):
        part = rows[i * drop:i * drop + keep]
        shift = now - end - part[-1]["ts"]
        out = []
        for r in part:
            r = dict(r)
            r["host"] = "%s-%d" % (prefix, i)
            r["boot_id"] = "boot-%s-%d-%s" % (prefix, i, kernel)
            r["ts"] = round(r["ts"] + shift, 3)
            r["kernel"] = kernel
            r["labels"] = {"role": role, "rack": "r%d" % (i % 2 + 1)}
            out.append(r)
        for k in range(0, len(out), 50):
            with open("%s/%s-%s-%03d.json" % (dst, prefix, kernel, nfile), "w") as f:
                json.dump(out[k:k + 50], f)
            nfile += 1


if __name__ == "__main__":
    src, prefix, n, kernel, role, drop, keep, end, dst = sys.argv[1:]
    write_copies(load(src), prefix, int(n), kernel, role, int(drop), int(keep), float(end), dst)
