#!/usr/bin/env python3
"""gen_synth.py - synthetic corpus traces built from the seed reports' shapes,
written in the counter dialects of several kernels (4.10/4.14 names without
PSI, 5.4, 6.1 with cgroup v2, arm64 64 KiB pages) so the detectors are
checked against kernels this machine does not run.

usage: gen_synth.py OUTDIR       writes OUTDIR/synth-<name>.jsonl and .expected
                                 (OUTDIR is tests/corpus)
       gen_synth.py --bench FILE N   one busy 6.x host with 20 v2 cgroups, N samples

Every trace is deterministic (fixed seed). Rates are per second, converted to
counter increments in the trace's page size. The .expected lines:
  must KIND SCOPE    at least one such alert (SCOPE: host, a cgroup path, or *)
  never KIND SCOPE   no such alert (KIND may be *)
"""
import json
import os
import random
import sys

T0 = 1764518400.0


class Host:
    """A host whose counters advance by rates; dialect picks the names."""

    def __init__(self, name, kernel, dialect, page_size=4096, psi=True, interval=10, mem_gib=8,
                 swap_gib=4, swappiness=60):
        self.name, self.kernel, self.dialect = name, kernel, dialect
        self.ps, self.psi, self.interval = page_size, psi, interval
        self.ts = T0
        self.boot = "boot-" + name
        self.c = {}           # counter name -> value (pages/events)
        self.g = {}           # vmstat gauges (pages)
        self.mi = {"MemTotal": mem_gib << 20, "MemFree": 200 << 10, "MemAvailable": 1 << 20,
                   "SwapTotal": swap_gib << 20, "SwapFree": swap_gib << 20}
        self.psi_tot = {"memory.some": 0, "memory.full": 0, "io.some": 0, "io.full": 0}
        self.settings = {"vm.swappiness": swappiness, "vm.dirty_ratio": 20, "vm.dirty_background_ratio": 10}
        self.cgroups = {}     # path -> dict(stat counters, gauges, version)
        self.rnd = random.Random(name)

    def pages(self, mib):
        return int(mib * (1 << 20) / self.ps)

    # rates are given in pages/s of 4 KiB (as the seeds report them) and
    # rescaled to this host's page size so that bytes/s stay the same
    def step(self, rates, psi=None, jitter=0.05):
        dt = self.interval
        self.ts += dt
        scale = 4096.0 / self.ps
        for k, r in rates.items():
            r = r * (1 + self.rnd.uniform(-jitter, jitter))
            per = r * dt * (scale if not k.startswith("ev:") else 1)
            key = k[3:] if k.startswith("ev:") else k
            self.c[key] = self.c.get(key, 0) + per
        for k, share in (psi or {}).items():
            self.psi_tot[k] += share * dt * 1e6

    def names(self, counters):
        """Translate canonical 6.x names into this kernel's dialect."""
        out = {}
        for k, v in counters.items():
            v = int(v)
            if self.dialect in ("4.10", "4.14", "5.4"):
                if k.startswith("workingset_") and k.endswith("_anon"):
                    continue  # no anon workingset tracking before 5.9
                if k.startswith("workingset_") and k.endswith("_file"):
                    k = k[:-5]
                if k in ("pgscan_anon", "pgscan_file", "pgsteal_anon", "pgsteal_file"):
                    continue  # 5.8+
                if k.startswith("allocstall_") and self.dialect == "4.10":
                    pass
            out[k] = out.get(k, 0) + v
        return out

    def sample(self, extra_cgroups=None):
        vm = {k: int(v) for k, v in self.names(self.c).items()}
        vm.update({k: int(v) for k, v in self.g.items()})
        s = {"host": self.name, "boot_id": self.boot, "ts": round(self.ts, 3),
             "interval_s": self.interval, "kernel": self.kernel, "page_size": self.ps,
             "vmstat": vm, "meminfo": dict(self.mi), "settings": dict(self.settings)}
        if self.psi:
            p = {}
            for res in ("memory", "io"):
                p[res] = {}
                for kind in ("some", "full"):
                    p[res][kind] = {"avg10": 0.0, "avg60": 0.0, "avg300": 0.0,
                                    "total": int(self.psi_tot[res + "." + kind])}
            s["psi"] = p
        cgs = []
        for path, cg in self.cgroups.items():
            e = {"path": path, "version": cg["version"],
                 "memory_stat": {k: int(v) for k, v in cg["stat"].items()}}
            for k in ("memory_current", "memory_max", "swap_current"):
                if k in cg:
                    e[k] = cg[k]
            if "events" in cg:
                e["events"] = {k: int(v) for k, v in cg["events"].items()}
            if "psi_some" in cg:
                e["psi"] = {"some": {"avg10": 0.0, "avg60": 0.0, "avg300": 0.0, "total": int(cg["psi_some"])},
                            "full": {"avg10": 0.0, "avg60": 0.0, "avg300": 0.0, "total": int(cg.get("psi_full", 0))}}
            cgs.append(e)
        if cgs:
            s["cgroups"] = cgs
        return s


def base_gauges(h, ia_mib=200, if_mib=2000, dirty_mib=4):
    h.g.update({"nr_inactive_anon": h.pages(ia_mib), "nr_active_anon": h.pages(1500),
                "nr_inactive_file": h.pages(if_mib), "nr_active_file": h.pages(1500),
                "nr_dirty": h.pages(dirty_mib), "nr_writeback": 0, "nr_free_pages": h.pages(200)})


def healthy_rates():
    return {"pgscan_kswapd": 500, "pgsteal_kswapd": 490, "pgscan_file": 500, "pgsteal_file": 490,
            "pgscan_anon": 0, "pgsteal_anon": 0, "workingset_refault_file": 2, "workingset_refault_anon": 0,
            "workingset_activate_file": 1, "pgmajfault": 1, "pswpin": 0, "pswpout": 0,
            "nr_vmscan_write": 0, "nr_vmscan_immediate_reclaim": 0, "allocstall_normal": 0,
            "pgrefill": 100, "oom_kill": 0}


def write(outdir, name, samples, expected):
    with open(os.path.join(outdir, "synth-" + name + ".jsonl"), "w") as f:
        for s in samples:
            f.write(json.dumps(s, separators=(",", ":")) + "\n")
    with open(os.path.join(outdir, "synth-" + name + ".expected"), "w") as f:
        f.write("\n".join(expected) + "\n")


def run(h, phases):
    """phases: list of (n, rates, psi) -> samples"""
    out = [h.sample()]
    for n, rates, psi in phases:
        for _ in range(n):
            h.step(rates, psi)
            out.append(h.sample())
    return out


def seed000(dialect, kernel, psi, page_size=4096):
    """Seed 000: file refaults while 1.9 GiB of inactive anon is never scanned."""
    h = Host("s000-" + dialect.replace(".", "") + ("-64k" if page_size != 4096 else ""), kernel, dialect,
             page_size=page_size, psi=psi)
    base_gauges(h, ia_mib=1900, if_mib=30)
    bad = dict(healthy_rates(), pgscan_kswapd=9000, pgsteal_kswapd=8800, pgscan_file=9000,
               pgsteal_file=8800, workingset_refault_file=4100, workingset_activate_file=3300,
               pgmajfault=600)
    return h, run(h, [(4, healthy_rates(), {}), (18, bad, {"memory.some": 0.34, "memory.full": 0.12}),
                      (10, healthy_rates(), {})])


def main():
    if sys.argv[1] == "--bench":
        return bench(sys.argv[2], int(sys.argv[3]))
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    for dialect, kernel, psi in (("6.1", "6.1.0-18-amd64", True), ("4.14", "4.14.355", False),
                                 ("5.4", "5.4.0-150-generic", True)):
        h, s = seed000(dialect, kernel, psi)
        write(out, h.name, s, ["must thrash host", "must swap_imbalance host", "never writeback_storm *",
                               "never * /"])
    h, s = seed000("6.1", "6.1.0-arm64", True, page_size=65536)
    write(out, h.name, s, ["must thrash host", "must swap_imbalance host", "never writeback_storm *"])

    # seed 000 with swappiness 0: thrash yes, imbalance no (reclaim may not take anon)
    h = Host("s000-swappiness0", "6.1.0", "6.1", swappiness=0)
    base_gauges(h, ia_mib=1900, if_mib=30)
    bad = dict(healthy_rates(), pgscan_kswapd=9000, pgscan_file=9000, pgsteal_kswapd=8800, pgsteal_file=8800,
               workingset_refault_file=4100, workingset_activate_file=3300)
    write(out, h.name, run(h, [(2, healthy_rates(), {}), (15, bad, {"memory.some": 0.3})]),
          ["must thrash host", "never swap_imbalance *"])

    # seed 002: MADV_FREE on a swapless 4.12-era host, no PSI
    h = Host("s002-lazyfree", "4.12.14", "4.14", psi=False, swap_gib=0)
    base_gauges(h, ia_mib=2500, if_mib=80)
    bad = dict(healthy_rates(), pglazyfree=40000, pglazyfreed=50, pgscan_kswapd=6000, pgsteal_kswapd=5500,
               workingset_refault_file=2500, workingset_activate_file=200, pgmajfault=20)
    write(out, h.name, run(h, [(3, dict(healthy_rates(), pglazyfree=0, pglazyfreed=0), {}),
                               (15, bad, {})]),
          ["must swap_imbalance host", "never writeback_storm *", "never thrash *"])

    # seed 002 on a fixed kernel: pglazyfreed keeps up -> nothing
    h = Host("s002-fixed", "6.1.0", "6.1", swap_gib=0)
    base_gauges(h, ia_mib=300, if_mib=800)
    ok = dict(healthy_rates(), pglazyfree=40000, pglazyfreed=39000)
    write(out, h.name, run(h, [(15, ok, {"memory.some": 0.01})]), ["never * *"])

    # seed 003: kswapd writeback regression on 4.10 (no PSI): dirty pages at
    # the LRU tail, written from reclaim, immediate reclaim, allocstalls,
    # direct reclaim efficiency 77%
    h = Host("s003-writeback", "4.10.0-rc5", "4.10", psi=False, mem_gib=64)
    base_gauges(h, ia_mib=2000, if_mib=6000, dirty_mib=2500)
    h.g["nr_writeback"] = h.pages(900)
    bad = dict(healthy_rates(), pgscan_kswapd=60000, pgsteal_kswapd=59000, pgscan_direct=20000,
               pgsteal_direct=15400, nr_vmscan_write=1600, pswpout=0, nr_vmscan_immediate_reclaim=9000,
               allocstall_normal=120, pgrotated=8000, workingset_refault_file=300)
    bad.pop("allocstall_normal")
    bad["allocstall"] = 0  # placeholder removed below
    bad.pop("allocstall")
    bad["allocstall_normal"] = 120
    write(out, h.name, run(h, [(3, healthy_rates(), {}), (15, bad, {})]),
          ["must writeback_storm host", "never swap_imbalance *", "never thrash *"])

    # seed 004: small memcgs swapping while cold file cache sits in them
    h = Host("s004-memcg", "6.1.0", "6.1", mem_gib=16, swap_gib=8)
    base_gauges(h, ia_mib=3000, if_mib=4000)
    vms = ["/machine.slice/vm%d.scope" % i for i in range(1, 5)]
    for p in vms:
        h.cgroups[p] = {"version": 2, "stat": {"workingset_refault_anon": 0, "workingset_refault_file": 0,
                                              "pgscan": 0, "pgsteal": 0, "pgmajfault": 0},
                        "memory_current": 2 << 30, "memory_max": 2 << 30, "swap_current": 0,
                        "psi_some": 0}
    samples = [h.sample()]
    for i in range(20):
        bad = i >= 3
        r = dict(healthy_rates(), pgscan_anon=6000 if bad else 0, pgscan_file=500, pgsteal_anon=5000 if bad else 0,
                 pswpin=4000 if bad else 0, pswpout=5000 if bad else 0, workingset_refault_anon=4000 if bad else 0,
                 pgscan_kswapd=200)
        h.step(r, {"memory.some": 0.12 if bad else 0.0})
        for j, p in enumerate(vms):
            cg = h.cgroups[p]
            hot = bad and j < 2
            cg["stat"]["workingset_refault_anon"] += (2000 if hot else 0) * 10
            cg["stat"]["workingset_refault_file"] += 5 * 10
            cg["stat"]["pgscan"] += (3000 if hot else 10) * 10
            cg["stat"]["pgsteal"] += (2500 if hot else 10) * 10
            cg["stat"]["inactive_file"] = 900 << 20
            cg["stat"]["active_file"] = 100 << 20
            cg["stat"]["inactive_anon"] = 700 << 20
            cg["stat"]["file_dirty"] = 1 << 20
            cg["swap_current"] += (2500 * 4096 * 10) if hot else 0
            cg["psi_some"] += (0.15 if hot else 0.0) * 10 * 1e6
        samples.append(h.sample())
    write(out, h.name, samples, ["must swap_imbalance /machine.slice/vm1.scope",
                                 "must swap_imbalance /machine.slice/vm2.scope",
                                 "never swap_imbalance /machine.slice/vm3.scope",
                                 "never swap_imbalance host", "never writeback_storm *"])

    # cgroup v2 hierarchy (hierarchical memory.stat): a child at its limit
    # thrashes; its parent and the host see the same refaults but the alert
    # belongs to the child; the sibling is healthy
    h = Host("v2-hierarchy", "6.1.0", "6.1", mem_gib=32)
    base_gauges(h, if_mib=8000)
    paths = ["/system.slice", "/system.slice/db.service", "/system.slice/web.service"]
    for p in paths:
        h.cgroups[p] = {"version": 2, "stat": {"workingset_refault_file": 0, "workingset_refault_anon": 0,
                                              "workingset_activate_file": 0, "pgscan": 0, "pgsteal": 0,
                                              "inactive_file": 300 << 20, "active_file": 200 << 20,
                                              "inactive_anon": 100 << 20, "file_dirty": 0},
                        "memory_current": 1 << 30, "memory_max": None if p == "/system.slice" else 1 << 30,
                        "swap_current": 0, "psi_some": 0, "psi_full": 0}
    samples = [h.sample()]
    for i in range(20):
        bad = 3 <= i < 16
        rf = 12000 if bad else 5
        h.step(dict(healthy_rates(), pgscan_file=rf + 500, pgsteal_file=rf + 490, workingset_refault_file=rf,
                    workingset_activate_file=rf // 2, pgscan_kswapd=500, pgsteal_kswapd=490),
               {"memory.some": 0.2 if bad else 0.0})
        for p, share in (("/system.slice", 1.0), ("/system.slice/db.service", 1.0),
                         ("/system.slice/web.service", 0.0)):
            cg = h.cgroups[p]
            cg["stat"]["workingset_refault_file"] += rf * share * 10
            cg["stat"]["workingset_activate_file"] += rf * share * 5
            cg["stat"]["pgscan"] += (rf * share + 10) * 10
            cg["stat"]["pgsteal"] += (rf * share + 10) * 10
            cg["psi_some"] += (0.25 if bad and share else 0.0) * 10e6
        samples.append(h.sample())
    write(out, h.name, samples, ["must thrash /system.slice/db.service", "never thrash /system.slice",
                                 "never * /system.slice/web.service", "never thrash host"])

    # 4.14 with cgroup v1: memory.stat has no workingset counters and there
    # is no PSI; a container thrashes (host refaults, its major faults)
    h = Host("v1-414-docker", "4.14.336", "4.14", psi=False, mem_gib=16)
    base_gauges(h, if_mib=3000)
    for p in ("/docker", "/docker/abc", "/docker/def"):
        h.cgroups[p] = {"version": 1, "stat": {"total_pgmajfault": 0, "pgmajfault": 0,
                                              "total_inactive_file": 200 << 20, "total_active_file": 50 << 20,
                                              "total_inactive_anon": 300 << 20, "total_dirty": 0,
                                              "total_writeback": 0},
                        "memory_current": 1 << 30, "memory_max": None if p == "/docker" else 1 << 30,
                        "swap_current": None}
    samples = [h.sample()]
    for i in range(20):
        bad = 3 <= i < 17
        rf = 6000 if bad else 3
        maj = 700 if bad else 1
        h.step(dict(healthy_rates(), workingset_refault_file=rf, workingset_activate_file=rf // 3,
                    pgmajfault=maj + 2, pgscan_kswapd=200, pgsteal_kswapd=190))
        for p, share in (("/docker", 1.0), ("/docker/abc", 1.0), ("/docker/def", 0.0)):
            st = h.cgroups[p]["stat"]
            st["total_pgmajfault"] += maj * share * 10
            st["pgmajfault"] += (maj * share * 10) if p != "/docker" else 0
        samples.append(h.sample())
    write(out, h.name, samples, ["must thrash /docker/abc", "never thrash /docker", "never thrash host",
                                 "never * /docker/def"])

    # busy but healthy: heavy streaming reclaim, no refaults -> nothing;
    # with a 15-minute agent outage in the middle (the delta across the gap
    # is large but not a spike)
    h = Host("busy-gap", "6.8.0", "6.1")
    base_gauges(h)
    busy = dict(healthy_rates(), pgscan_kswapd=50000, pgsteal_kswapd=49500, pgscan_file=50000, pgsteal_file=49500)
    s = run(h, [(8, busy, {"memory.some": 0.002})])
    h.interval = 900
    h.step(dict(busy, workingset_refault_file=20000), {"memory.some": 0.3})
    s.append(h.sample())
    h.interval = 10
    s += run(h, [(8, busy, {"memory.some": 0.002})])[1:]
    write(out, h.name, s, ["never * *"])

    # OOM kill in a v2 cgroup; reboot later (counters restart, no spike)
    h = Host("oom-reboot", "6.1.0", "6.1")
    base_gauges(h)
    h.cgroups["/system.slice/app.service"] = {"version": 2, "stat": {"pgscan": 0, "pgsteal": 0,
                                              "workingset_refault_file": 0, "inactive_file": 1 << 20},
                                              "events": {"oom_kill": 0, "oom": 0, "max": 0},
                                              "memory_current": 1 << 30, "memory_max": 1 << 30}
    s = run(h, [(3, healthy_rates(), {})])
    h.cgroups["/system.slice/app.service"]["events"]["oom_kill"] += 1
    h.cgroups["/system.slice/app.service"]["events"]["oom"] += 1
    h.c["oom_kill"] = h.c.get("oom_kill", 0) + 1
    s += run(h, [(3, healthy_rates(), {})])[1:]
    h.boot = "boot-2"
    h.c = {k: 0 for k in h.c}
    h.psi_tot = {k: 0 for k in h.psi_tot}
    h.cgroups["/system.slice/app.service"]["events"] = {"oom_kill": 0, "oom": 0, "max": 0}
    s += run(h, [(5, healthy_rates(), {})])[1:]
    write(out, h.name, s, ["must oom_kill /system.slice/app.service", "never oom_kill host",
                           "never thrash *", "never swap_imbalance *"])
    return 0


def bench(path, n):
    """A realistic busy host: full-size vmstat, 20 v2 cgroups of ~60 keys."""
    h = Host("bench-1", "6.8.0", "6.1")
    base_gauges(h)
    for i in range(150):
        h.g["nr_misc_%d" % i] = i * 100
    for i in range(20):
        st = {k: 0 for k in ("anon", "file", "kernel", "sock", "shmem", "file_mapped", "file_dirty",
                             "file_writeback", "inactive_anon", "active_anon", "inactive_file", "active_file",
                             "workingset_refault_anon", "workingset_refault_file", "workingset_activate_anon",
                             "workingset_activate_file", "workingset_restore_anon", "workingset_restore_file",
                             "pgscan", "pgsteal", "pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd",
                             "pgsteal_direct", "pgfault", "pgmajfault", "pgrefill", "pgactivate",
                             "pgdeactivate", "pglazyfree", "pglazyfreed")}
        for j in range(30):
            st["misc_%d" % j] = j
        h.cgroups["/system.slice/svc%d.service" % i] = {"version": 2, "stat": st, "memory_current": 1 << 30,
                                                         "memory_max": 2 << 30, "swap_current": 0,
                                                         "events": {"low": 0, "high": 0, "max": 0, "oom": 0,
                                                                    "oom_kill": 0},
                                                         "psi_some": 0}
    with open(path, "w") as f:
        for i in range(n):
            h.step(dict(healthy_rates(), workingset_refault_file=50 + (i % 7)), {"memory.some": 0.01})
            for cg in h.cgroups.values():
                cg["stat"]["pgscan"] += 100
                cg["stat"]["workingset_refault_file"] += 5
                cg["psi_some"] += 1000
            f.write(json.dumps(h.sample(), separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
