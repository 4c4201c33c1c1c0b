#!/usr/bin/env python3
"""gen_samples.py - synthetic contract samples (CONTRACT.md section 1) for the
dashboard test: three hosts over the last hour at a 10 s interval, posted to
POST /api/v1/samples in batches.

  db-07   6.1 kernel, 16 GiB, thrashing for the last 25 minutes: file refaults
          ~40k pages/s with activations, kswapd and direct reclaim at low
          efficiency, allocation stalls, PSI memory some ~45 %, and the same in
          its postgresql.service cgroup
  app-02  6.1 kernel, healthy, a trickle of swap traffic and more dirty pages
  web-03  4.19 kernel (no _file/_anon refault split, no PSI), stopped
          reporting 10 minutes ago (stale)

With --recordings (--only-recordings: these alone), two Kubernetes nodes
with 86-character names alike but for a number in the middle (pool-001
thrashing in a pod's 180-character container cgroup among 20 other pods
over its last 12 minutes, pool-002 healthy), 15 minutes each, and two
recorded traces of tests/corpus, moved in time:
  rec-07  real-filethrash: a 256 MiB cgroup at its v1 memory limit reading a
          1 GiB file, on a hybrid machine (v1 memory controller, v2
          pressure: each cgroup reported twice); ends 20 s before now
  oom-03  synth-oom-reboot: an OOM kill in a cgroup, then the host goes
          quiet; ends 150 s before now (silent by then)

Counters are cumulative and realistic in size; gauges wander. Deterministic
(seeded) apart from "now". Prints one line: hosts, samples posted.
"""
import argparse
import gzip
import json
import os
import math
import random
import sys
import time
import urllib.request

PAGE = 4096
GIB_KB = 1024 * 1024


def psi(avg10, total):
    return {"avg10": round(avg10, 2), "avg60": round(avg10 * 0.8, 2),
            "avg300": round(avg10 * 0.5, 2), "total": int(total)}


class Host:
    def __init__(self, name, kernel, labels, mem_gib, old=False, stop_before_s=0, thrash_last_s=0, swappy=False, cg_paths=None):
        self.name, self.kernel, self.labels = name, kernel, labels
        # (path, share of the host's activity, memory.max or None)
        self.cg_paths = cg_paths or (("/system.slice", 0.95, None), ("/system.slice/postgresql.service", 0.9, 12 * 2**30),
                                     ("/user.slice", 0.03, None))
        self.mem_kb = mem_gib * GIB_KB
        self.old, self.stop_before_s, self.thrash_last_s, self.swappy = old, stop_before_s, thrash_last_s, swappy
        self.c = {}          # host vmstat counters
        self.psi_tot = {}    # PSI totals
        self.cg = {}         # cgroup path -> counters
        self.boot_id = "%08x-0000-4000-8000-%012x" % (random.getrandbits(32), random.getrandbits(48))

    def add(self, d, k, per_s, dt):
        d[k] = d.get(k, random.randint(10**5, 10**7)) + max(0, int(per_s * dt * random.uniform(0.8, 1.2)))

    def sample(self, ts, now, dt):
        thrash = self.thrash_last_s and ts > now - self.thrash_last_s
        f = 1.0 + 0.3 * math.sin(ts / 300.0)
        v, c = {}, self.c
        if thrash:
            rates = {"refault_file": 40000, "refault_anon": 300, "activate_file": 30000, "activate_anon": 200,
                     "restore_file": 25000, "scan_k": 60000, "steal_k": 24000, "scan_d": 20000, "steal_d": 6000,
                     "stall": 60, "vmw": 20, "imm": 500, "rot": 800, "pswpin": 5, "pswpout": 10, "majflt": 4000}
        else:
            rates = {"refault_file": 40 * f, "refault_anon": 1, "activate_file": 15 * f, "activate_anon": 0.5,
                     "restore_file": 5, "scan_k": 1500 * f, "steal_k": 1450 * f, "scan_d": 0, "steal_d": 0,
                     "stall": 0, "vmw": 0.5, "imm": 2, "rot": 10, "pswpin": 0, "pswpout": 0, "majflt": 20}
        if self.swappy:
            rates["pswpin"], rates["pswpout"] = 4 * f, 12 * f
        if self.old:
            self.add(c, "workingset_refault", rates["refault_file"] + rates["refault_anon"], dt)
            self.add(c, "workingset_activate", rates["activate_file"] + rates["activate_anon"], dt)
        else:
            for k in ("refault", "activate", "restore"):
                self.add(c, "workingset_%s_file" % k, rates.get(k + "_file", 0), dt)
                self.add(c, "workingset_%s_anon" % k, rates.get(k + "_anon", 0), dt)
            self.add(c, "pgscan_anon", 0.1 * (rates["scan_k"] + rates["scan_d"]), dt)
            self.add(c, "pgscan_file", 0.9 * (rates["scan_k"] + rates["scan_d"]), dt)
            self.add(c, "pgsteal_anon", 0.1 * (rates["steal_k"] + rates["steal_d"]), dt)
            self.add(c, "pgsteal_file", 0.9 * (rates["steal_k"] + rates["steal_d"]), dt)
        self.add(c, "pgscan_kswapd", rates["scan_k"], dt)
        self.add(c, "pgsteal_kswapd", rates["steal_k"], dt)
        self.add(c, "pgscan_direct", rates["scan_d"], dt)
        self.add(c, "pgsteal_direct", rates["steal_d"], dt)
        self.add(c, "allocstall_normal", rates["stall"], dt)
        self.add(c, "allocstall_movable", rates["stall"] * 0.3, dt)
        self.add(c, "nr_vmscan_write", rates["vmw"] + rates["pswpout"], dt)
        self.add(c, "nr_vmscan_immediate_reclaim", rates["imm"], dt)
        self.add(c, "pgrotated", rates["rot"], dt)
        self.add(c, "pswpin", rates["pswpin"], dt)
        self.add(c, "pswpout", rates["pswpout"], dt)
        self.add(c, "pgmajfault", rates["majflt"], dt)
        self.add(c, "pgfault", 50000, dt)
        self.add(c, "pgpgin", 4 * rates["majflt"] + 2000, dt)
        self.add(c, "pgpgout", 3000, dt)
        self.add(c, "oom_kill", 0, dt)
        v.update(c)
        mem_pages = self.mem_kb // 4
        dirty_kb = int((60000 + 40000 * math.sin(ts / 120.0) + random.randint(0, 20000)) * (3 if self.swappy else 1))
        wb_kb = int(dirty_kb * random.uniform(0.05, 0.3))
        free_kb = int(self.mem_kb * (0.02 if thrash else 0.25))
        v.update({"nr_free_pages": free_kb // 4, "nr_dirty": dirty_kb // 4, "nr_writeback": wb_kb // 4,
                  "nr_dirty_threshold": int(mem_pages * 0.18), "nr_dirty_background_threshold": int(mem_pages * 0.09),
                  "nr_inactive_anon": mem_pages // 8, "nr_active_anon": mem_pages // 4,
                  "nr_inactive_file": mem_pages // (20 if thrash else 5), "nr_active_file": mem_pages // 6})
        swap_total = 4 * GIB_KB
        swap_used = int((1.2 if self.swappy else 0.05) * GIB_KB * (1 + 0.1 * math.sin(ts / 600.0)))
        meminfo = {"MemTotal": self.mem_kb, "MemFree": free_kb, "MemAvailable": free_kb + self.mem_kb // 5,
                   "Cached": self.mem_kb // 3, "Dirty": dirty_kb, "Writeback": wb_kb,
                   "SwapTotal": swap_total, "SwapFree": swap_total - swap_used,
                   "AnonPages": self.mem_kb // 3, "Active(file)": self.mem_kb // 6, "Inactive(file)": self.mem_kb // 5}
        s = {"host": self.name, "boot_id": self.boot_id, "ts": round(ts, 3), "interval_s": dt,
             "kernel": self.kernel, "page_size": PAGE, "labels": self.labels,
             "agent_version": "0.1.0-test", "vmstat": v, "meminfo": meminfo,
             "settings": {"vm.swappiness": 60, "vm.dirty_ratio": 20, "vm.dirty_background_ratio": 10}}
        if not self.old:
            mem_some = 45.0 if thrash else 0.1 * f
            mem_full = 20.0 if thrash else 0.0
            io_some = 30.0 if thrash else 1.5 * f
            io_full = 12.0 if thrash else 0.5
            t = self.psi_tot
            for k, a in (("ms", mem_some), ("mf", mem_full), ("is", io_some), ("if", io_full)):
                t[k] = t.get(k, 10**6) + int(a / 100.0 * dt * 1e6)
            s["psi"] = {"memory": {"some": psi(mem_some, t["ms"]), "full": psi(mem_full, t["mf"])},
                        "io": {"some": psi(io_some, t["is"]), "full": psi(io_full, t["if"])}}
            s["cgroups"] = self.cgroups(ts, dt, thrash, rates)
        return s

    def cgroups(self, ts, dt, thrash, rates):
        out = []
        for path, share, limit in self.cg_paths:
            d = self.cg.setdefault(path, {})
            hot = thrash and share > 0.5
            k = share if hot else 0.02
            for name, r in (("workingset_refault_file", rates["refault_file"] * k), ("workingset_refault_anon", rates["refault_anon"] * k),
                            ("workingset_activate_file", rates["activate_file"] * k), ("workingset_activate_anon", rates["activate_anon"] * k),
                            ("pgscan", (rates["scan_k"] + rates["scan_d"]) * k), ("pgsteal", (rates["steal_k"] + rates["steal_d"]) * k),
                            ("pgmajfault", rates["majflt"] * k), ("pgfault", 5000 * share)):
                self.add(d, name, r, dt)
            cur = int((limit or 8 * 2**30) * (0.99 if hot else 0.6) * share + 50 * 2**20)
            stat = dict(d)
            stat.update({"anon": cur // 3, "file": cur // 2, "file_dirty": int(40 * 2**20 * share), "file_writeback": int(2 * 2**20 * share)})
            ev = self.cg.setdefault(path + "#ev", {})
            self.add(ev, "high", 0, dt)
            self.add(ev, "max", 30 if hot and limit else 0, dt)
            for e in ("low", "oom", "oom_kill"):
                ev.setdefault(e, 0)
            a = 40.0 * share if hot else 0.05
            tk = path + "#psi"
            tot = self.psi_tot.setdefault(tk, 1000)
            self.psi_tot[tk] = tot + int(a / 100.0 * dt * 1e6)
            out.append({"path": path, "version": 2, "memory_stat": stat,
                        "psi": {"some": psi(a, self.psi_tot[tk]), "full": psi(a / 2, self.psi_tot[tk] // 2)},
                        "memory_current": cur, "memory_max": limit, "swap_current": 0, "events": dict(ev)})
        return out


def post(url, token, batch):
    if isinstance(url, dict):  # --jsonl: url is {"file": handle}
        for smp in batch:
            url["file"].write(json.dumps(smp) + "\n")
        return
    body = json.dumps(batch).encode()
    req = urllib.request.Request(url.rstrip("/") + "/api/v1/samples", data=body, method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=60) as r:
        ans = json.loads(r.read())
    if r.status != 202 or ans.get("accepted") != len(batch):
        sys.exit("post: unexpected answer %s %s" % (r.status, ans))


CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus")


def recording(name, host, end_ts):
    """The trace's samples as host, shifted to end at end_ts."""
    path = os.path.join(CORPUS, name)
    op = gzip.open if name.endswith(".gz") else open
    with op(path, "rt") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    shift = end_ts - max(r["ts"] for r in rows)
    for r in rows:
        r["ts"] = round(r["ts"] + shift, 3)
        r["host"] = host
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", help="server base URL to post to")
    ap.add_argument("--jsonl", help="write JSON lines to this file instead (for vmscope-replay)")
    ap.add_argument("--token", default="")
    ap.add_argument("--minutes", type=int, default=60)
    ap.add_argument("--interval", type=float, default=10.0)
    ap.add_argument("--now", type=float, default=None)
    ap.add_argument("--recordings", action="store_true", help="also replay two corpus traces (rec-07, oom-03)")
    ap.add_argument("--only-recordings", action="store_true", help="replay the two corpus traces only")
    a = ap.parse_args()
    if not a.url and not a.jsonl:
        ap.error("--url or --jsonl is required")
    if a.jsonl:
        a.url = {"file": open(a.jsonl, "w")}
    random.seed(7)
    now = a.now or time.time()
    hosts = [Host("db-07", "6.1.0-18-amd64", {"role": "db", "dc": "fra1"}, 16, thrash_last_s=25 * 60),
             Host("app-02", "6.1.0-18-amd64", {"role": "app", "dc": "fra1"}, 8, swappy=True),
             Host("web-03", "4.19.0-26-amd64", {"role": "web", "dc": "ams2"}, 4, old=True, stop_before_s=600)]
    n = int(a.minutes * 60 / a.interval)
    posted = 0
    if a.only_recordings:
        hosts, a.recordings = [], True
    for hst in hosts:
        batch = []
        for i in range(n + 1):
            ts = now - (n - i) * a.interval - 2.0
            if ts > now - hst.stop_before_s - 2.0 and hst.stop_before_s:
                break
            batch.append(hst.sample(ts, now, a.interval))
            if len(batch) == 60:
                post(a.url, a.token, batch)
                posted += len(batch)
                batch = []
        if batch:
            post(a.url, a.token, batch)
            posted += len(batch)
    nhosts = len(hosts)
    if a.recordings:
        # two Kubernetes nodes named alike but for a number in the middle,
        # one thrashing in a pod's container cgroup among 20 other pods
        def pod(i):
            uid = "%08x_%04x_4%03x_8%03x_%012x" % (0x5a17c0de + i, i, i, i, 0xfeed0000 + i)
            return ("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/cri-containerd-%s.scope"
                    % (uid, ("%064x" % (0xc0ffee * (i + 1)))))
        cgs = [("/kubepods.slice", 0.95, None), (pod(0), 0.9, 2 * 2**30)] + [(pod(i), 0.01, 2**30) for i in range(1, 21)]
        fqdn = "very-long-hostname-for-the-k8s-worker-pool-%03d.prod.eu-central-1.internal.example.com"
        long_hosts = [Host(fqdn % 1, "6.1.0-18-amd64", {"role": "k8s"}, 16, thrash_last_s=12 * 60, cg_paths=cgs),
                      Host(fqdn % 2, "6.1.0-18-amd64", {"role": "k8s"}, 16, cg_paths=cgs[:3])]
        for hst in long_hosts:
            batch = [hst.sample(now - (90 - i) * 10.0, now, 10.0) for i in range(91)]
            for i in range(0, len(batch), 30):
                post(a.url, a.token, batch[i:i + 30])
            posted += len(batch)
            nhosts += 1
        for name, host, ago in (("real-filethrash.jsonl.gz", "rec-07", 20), ("synth-oom-reboot.jsonl", "oom-03", 150)):
            rows = recording(name, host, now - ago)
            for i in range(0, len(rows), 60):
                post(a.url, a.token, rows[i:i + 60])
            posted += len(rows)
            nhosts += 1
    print("hosts %d, samples posted %d" % (nhosts, posted))


if __name__ == "__main__":
    main()
