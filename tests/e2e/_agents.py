#!/usr/bin/env python3
"""_agents.py - simulated agents for tests/e2e/test_citus.sh: many hosts
posting one sample per request, like vmscope-agent does, to the servers
behind a balancer that hashes on the host (host i to server i % len(URLS)).

  _agents.py load TEMPLATE TOKEN PREFIX NHOSTS SAMPLES CLIENTS URL...
      NHOSTS hosts (PREFIX00 ...) post SAMPLES samples each, 10 s apart in
      sample time starting two hours ago, from CLIENTS threads at once.
      Prints JSON {"ok", "status": {code: n}} (every answer counted).
  _agents.py spool TEMPLATE TOKEN PREFIX NHOSTS SAMPLES ACKED URL...
      The same, one thread per host, each sample posted until it is
      answered 202 (an agent's spool: 503 and refused connections are
      retried after a short pause), its (host, ts) appended to ACKED once
      accepted. Prints JSON {"ok", "retries"}.
  _agents.py race TEMPLATE TOKEN PREFIX NHOSTS URL_A URL_B
      NHOSTS hosts never seen before, each posted to both servers at the
      same instant (a barrier per host). Prints JSON {"status": {code: n}}.

TEMPLATE is one sample (vmscope-agent --once --stdout): its counters grow
from sample to sample, its descriptive fields stay.
"""
import copy
import json
import sys
import threading
import time
import urllib.error
import urllib.request


def post(url, token, rows):
    req = urllib.request.Request(url + "/api/v1/samples", data=json.dumps(rows).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0


def grow(obj, k):
    """The template's counters moved on by k steps (every integer of a
    counter-looking object: vmstat, memory_stat, events), gauges as they are."""
    out = copy.deepcopy(obj)
    for key in ("vmstat",):
        for name, v in list(out.get(key, {}).items()):
            if isinstance(v, int) and not name.startswith("nr_"):
                out[key][name] = v + k * (1 + hash(name) % 997)
    for cg in out.get("cgroups", []):
        for sect in ("memory_stat", "events"):
            for name, v in list(cg.get(sect, {}).items()):
                if isinstance(v, int) and (sect == "events" or name.startswith(("pg", "workingset", "thp"))):
                    cg[sect][name] = v + k * (1 + hash(name) % 131)
    return out


def sample(tmpl, host, k, t0):
    s = grow(tmpl, k)
    s["host"] = host
    s["ts"] = round(t0 + 10 * k, 3)
    return s


def main():
    mode, tmpl_path, token, prefix, nhosts = sys.argv[1:6]
    tmpl = json.load(open(tmpl_path))
    nhosts = int(nhosts)
    hosts = ["%s%02d" % (prefix, i) for i in range(nhosts)]
    t0 = time.time() - 7200
    if mode == "load":
        nsamples, clients = int(sys.argv[6]), int(sys.argv[7])
        urls = sys.argv[8:]
        work = [(i, k) for k in range(nsamples) for i in range(nhosts)]
        lock = threading.Lock()
        status, pos = {}, [0]

        def run():
            while True:
                with lock:
                    if pos[0] >= len(work):
                        return
                    i, k = work[pos[0]]
                    pos[0] += 1
                code = post(urls[i % len(urls)], token, [sample(tmpl, hosts[i], k, t0)])
                with lock:
                    status[code] = status.get(code, 0) + 1
        ts = [threading.Thread(target=run) for _ in range(clients)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        print(json.dumps({"ok": status.get(202, 0), "status": status}))
    elif mode == "spool":
        nsamples, acked = int(sys.argv[6]), sys.argv[7]
        urls = sys.argv[8:]
        lock = threading.Lock()
        stats = {"ok": 0, "retries": 0}

        def run(i):
            for k in range(nsamples):
                s = sample(tmpl, hosts[i], k, t0)
                while True:
                    code = post(urls[i % len(urls)], token, [s])
                    if code == 202:
                        break
                    with lock:
                        stats["retries"] += 1
                    time.sleep(0.2)
                with lock:
                    stats["ok"] += 1
                    with open(acked, "a") as f:
                        f.write("%s %d\n" % (s["host"], round(s["ts"] * 1000)))
        ts = [threading.Thread(target=run, args=(i,)) for i in range(nhosts)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        print(json.dumps(stats))
    elif mode == "race":
        url_a, url_b = sys.argv[6:8]
        status = {}
        lock = threading.Lock()
        for i in range(nhosts):
            bar = threading.Barrier(2)

            def one(url, i=i, bar=bar):
                s = sample(tmpl, hosts[i], 0, t0)
                bar.wait()
                code = post(url, token, [s])
                with lock:
                    status[code] = status.get(code, 0) + 1
            ts = [threading.Thread(target=one, args=(u,)) for u in (url_a, url_b)]
            [t.start() for t in ts]
            [t.join() for t in ts]
        print(json.dumps({"status": status}))


if __name__ == "__main__":
    main()
