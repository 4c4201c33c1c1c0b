#!/usr/bin/env python3
"""compare_hosts.py - two kernel groups of replayed hosts for the compare page
test (tests/test_compare_page.sh): recorded corpus traces (tests/corpus, real
machines) copied to several host names, kernels and labels, moved to end just
before now, and posted to POST /api/v1/samples in batches.

  cmp-ok-1..5   kernel 6.1.0-13-amd64  rollout=base    real-cpubusy (healthy busy)
  cmp-wb-1..5   kernel 6.6.0-3-amd64   rollout=canary  real-writeback (a cgroup
                writing into its limit: immediate reclaim ~2000/s, PSI 13-30 %)
  cmp-idle-1    kernel 5.10.0-28-amd64 rollout=base    real-idle

Every host also carries role=db (role=web for the idle one). Host i of a
group replays the last 30 samples of its trace without the first i - 1,
ending 3 i seconds before now, so no two hosts have the same means. Prints one line: hosts and samples posted;
exits 1 on any refused batch.
"""
import argparse
import gzip
import json
import os
import sys
import time
import urllib.request

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus")
GROUPS = [
    ("cmp-ok", 5, "6.1.0-13-amd64", {"rollout": "base", "role": "db"}, "real-cpubusy.jsonl.gz"),
    ("cmp-wb", 5, "6.6.0-3-amd64", {"rollout": "canary", "role": "db"}, "real-writeback.jsonl.gz"),
    ("cmp-idle", 1, "5.10.0-28-amd64", {"rollout": "base", "role": "web"}, "real-idle.jsonl.gz"),
]


def load(name):
    path = os.path.join(CORPUS, name)
    op = gzip.open if name.endswith(".gz") else open
    with op(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def post(url, token, batch):
    req = urllib.request.Request(url + "/api/v1/samples", data=json.dumps(batch).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=30) as r:
        if r.status // 100 != 2:
            raise RuntimeError("status %d" % r.status)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--token", required=True)
    args = ap.parse_args()
    now = time.time()
    hosts = samples = 0
    for prefix, n, kernel, labels, trace in GROUPS:
        rows = load(trace)[-30:]  # the last 30 samples: enough for the figures, quick to post
        last = max(r["ts"] for r in rows)
        for i in range(1, n + 1):
            host = "%s-%d" % (prefix, i)
            shift = now - 2 - 3 * i - last
            batch = []
            for r in rows[i - 1:]:  # host i drops i - 1 samples: no two hosts alike
                s = dict(r)
                s["host"] = host
                s["ts"] = round(r["ts"] + shift, 3)
                s["kernel"] = kernel
                s["labels"] = labels
                s["boot_id"] = "00000000-0000-4000-8000-%012d" % (hosts + 1)
                batch.append(s)
            for k in range(0, len(batch), 200):
                post(args.url, args.token, batch[k:k + 200])
            hosts += 1
            samples += len(batch)
    print("compare_hosts: %d hosts, %d samples posted" % (hosts, samples))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - any failure fails the test
        print("compare_hosts: %s" % e, file=sys.stderr)
        sys.exit(1)
