#!/usr/bin/env python3
"""gen_synth.py - synthetic corpus traces built from the seed reports' shapes,
written in the counter dialects of several kernels (4.10/4.14 names without
PSI, 5.4, 6.1 with cgroup v2, arm64 64 KiB pages) so the detectors are
checked against kernels this machine does not run.

usage: gen_synth.py OUTDIR       writes OUTDIR/synth-<name>.jsonl and .expected
                                 (OUTDIR is tests/corpus), and into OUTDIR/derived
                                 the real recordings rewritten into other
                                 dialects (dialect.py) and the 6 h healthy trace
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

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
        self.grow = {}        # vmstat gauge -> pages/s (4 KiB pages, like rates)
        self.mi_grow = {}     # meminfo field -> kB/s
        self.mglru = None     # True/False: the sample's mglru flag
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
        for k, r in self.grow.items():
            self.g[k] = max(0, self.g.get(k, 0) + r * dt * scale)
        for k, r in self.mi_grow.items():
            self.mi[k] = max(0, int(self.mi.get(k, 0) + r * dt))

    def names(self, counters):
        """Translate canonical 6.x names into this kernel's dialect."""
        out = {}
        for k, v in counters.items():
            v = int(v)
            if self.dialect in ("4.10", "4.14", "5.4") and k.startswith("zswp"):
                continue  # zswap counters reached /proc/vmstat later
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
        if self.mglru is not None:
            s["mglru"] = self.mglru
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
            for k in ("memory_current", "memory_max", "swap_current", "settings"):
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
    s = run(h, [(3, dict(healthy_rates(), pglazyfree=0, pglazyfreed=0), {})])
    h.grow["nr_inactive_anon"] = 12000  # hinted pages pile up: anon grows 47 MiB/s
    s += run(h, [(15, bad, {})])[1:]
    write_trace(out, h.name, s,
                ["must swap_imbalance host shape=lazyfree_backlog", "never writeback_storm *", "never thrash *"],
                "seed 002's backlog on a 4.12 kernel (it has the fix and its counters), swapless, no\n"
                "PSI: 156 MiB/s marked MADV_FREE, almost none discarded, anon growing 47 MiB/s while\n"
                "file refaults run at 10 MiB/s")

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
          ["must writeback_storm host", "never swap_imbalance *", "never thrash *",
           "must direct_reclaim_stall host   # seed 003: direct reclaim stalls behind the dirty LRU tail"])

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
                                 "never swap_imbalance host", "never writeback_storm *",
                                 "must thrash /machine.slice/vm1.scope   # the swapped-out anon comes straight back "
                                 "(anon refaults)",
                                 "must thrash /machine.slice/vm2.scope"])

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
                                 "never * /system.slice/web.service", "never thrash host",
                                 "must swap_imbalance /system.slice/db.service   # file refaults while its inactive "
                                 "anon is never scanned, swap free"])

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

    seed004_overswap(out)
    compressed_swap(out)
    cold_active_churn(out)
    mglru_writeback(out)
    lazyfree_reuse(out)
    from_real(out, out)
    healthy_stitched(out, out)
    return 0


def write_trace(outdir, name, samples, expected, comment=None):
    """Like write() but for traces with a comment header in .expected."""
    with open(os.path.join(outdir, "synth-" + name + ".jsonl"), "w") as f:
        for smp in samples:
            f.write(json.dumps(smp, separators=(",", ":")) + "\n")
    with open(os.path.join(outdir, "synth-" + name + ".expected"), "w") as f:
        if comment:
            f.write("".join("# " + l + "\n" for l in comment.strip().split("\n")))
        f.write("\n".join(expected) + "\n")


def seed004_overswap(out):
    """Seed 004 as reported: swap-OUT volume with the cache kept, few swap-ins."""
    # host level, 4.20-era names (no pgscan_anon/file, unsplit workingset),
    # aarch64 64 KiB pages, 16 GiB, 8 GiB swap, ~4 GiB of buff/cache kept
    h = Host("s004-over-55-64k", "5.5.0-0.rc7.aarch64", "5.4", page_size=65536, mem_gib=16, swap_gib=8)
    base_gauges(h, ia_mib=1200, if_mib=2600)
    h.g["nr_active_file"] = h.pages(1450)
    bad = dict(healthy_rates(), pswpout=760, pswpin=15, pgscan_kswapd=1400, pgsteal_kswapd=1100,
               workingset_refault_file=20, workingset_activate_file=5, pgmajfault=10)
    samples = run(h, [(3, healthy_rates(), {})])
    h.mi_grow["SwapFree"] = -760 * 4  # kB/s: what pswpout adds to swap in use
    samples += run(h, [(26, bad, {"memory.some": 0.03})])[1:]
    h.mi_grow = {}
    samples += run(h, [(8, healthy_rates(), {})])[1:]
    write_trace(out, h.name, samples,
                ["must swap_imbalance host shape=over_swap severity=warning summary~swapped.out",
                 "never thrash *", "never writeback_storm *"],
                "seed 004 host-wide on a 5.5 arm64 kernel (64 KiB pages, 4.20-era counter names):\n"
                "3 MiB/s swapped out for 260 s (784 MB) while 4 GiB of file cache stays and\n"
                "barely refaults, few swap-ins, memory PSI 3%: over_swap, warning")

    # the same on 6.1 with stalls: critical, anon scanned far more than file
    h = Host("s004-over-61-psi", "6.1.0-18-arm64", "6.1", mem_gib=16, swap_gib=8)
    base_gauges(h, ia_mib=1200, if_mib=2600)
    bad = dict(healthy_rates(), pswpout=2000, pswpin=40, pgscan_kswapd=3000, pgsteal_kswapd=2600,
               pgscan_anon=2700, pgscan_file=300, pgsteal_anon=2300, pgsteal_file=300,
               workingset_refault_file=30, workingset_activate_file=5)
    samples = run(h, [(3, healthy_rates(), {})])
    h.mi_grow["SwapFree"] = -2000 * 4
    samples += run(h, [(12, bad, {"memory.some": 0.32, "memory.full": 0.12})])[1:]
    h.mi_grow = {}
    samples += run(h, [(8, healthy_rates(), {})])[1:]
    write_trace(out, h.name, samples,
                ["must swap_imbalance host shape=over_swap severity=critical", "never writeback_storm *"],
                "seed 004's shape on 6.1 with memory PSI 32%: critical (stall evidence)")

    # cgroup level, v1 on 5.4: two of four VMs' swap usage grows (memsw -
    # usage) while each keeps ~900 MiB of file cache; no memcg pswpin or anon
    # refaults on that kernel
    h = Host("s004-over-memcg-v1", "5.4.0-150-generic", "5.4", mem_gib=16, swap_gib=8)
    base_gauges(h, ia_mib=2000, if_mib=4000)
    vms = ["/machine.slice/vm%d.scope" % i for i in range(1, 5)]
    for p in vms:
        h.cgroups[p] = {"version": 1, "stat": {"total_pgmajfault": 0, "total_inactive_file": 700 << 20,
                                              "total_active_file": 200 << 20, "total_inactive_anon": 500 << 20,
                                              "total_active_anon": 300 << 20, "total_dirty": 1 << 20,
                                              "total_writeback": 0},
                        "memory_current": 1900 << 20, "memory_max": 2 << 30, "swap_current": 0}
    samples = [h.sample()]
    for i in range(30):
        bad = 3 <= i < 24
        h.step(dict(healthy_rates(), pswpout=1200 if bad else 0, pswpin=10 if bad else 0,
                    pgscan_kswapd=1500 if bad else 500, pgsteal_kswapd=1300 if bad else 490,
                    workingset_refault_file=10),
               {"memory.some": 0.02 if bad else 0.0})
        for j, p in enumerate(vms):
            if bad and j < 2:
                h.cgroups[p]["swap_current"] += int(600 * 4096 * 10 * (1 + h.rnd.uniform(-0.05, 0.05)))
        samples.append(h.sample())
    write_trace(out, h.name, samples,
                ["must swap_imbalance /machine.slice/vm1.scope shape=over_swap",
                 "must swap_imbalance /machine.slice/vm2.scope shape=over_swap",
                 "never * /machine.slice/vm3.scope", "never * /machine.slice/vm4.scope",
                 "never swap_imbalance host", "never thrash *"],
                "seed 004 per cgroup on 5.4 with cgroup v1: the VMs' swap usage (memsw - usage)\n"
                "grows 2.3 MiB/s each while they keep 900 MiB of file cache; no memcg swap-in\n"
                "counter on that kernel. The host yields to the cgroups that carry it.")

    # healthy controls: swappiness 200 asks for anon first; a zram host
    # swapping out at memory speed; neither stalls
    h = Host("swappiness200-healthy", "6.8.0-45-generic", "6.1", mem_gib=16, swap_gib=8, swappiness=200)
    base_gauges(h, ia_mib=1200, if_mib=2600)
    r = dict(healthy_rates(), pswpout=900, pswpin=20, pgscan_anon=1200, pgscan_file=100, pgsteal_anon=1000,
             pgsteal_file=90, pgscan_kswapd=1300, pgsteal_kswapd=1090)
    h.mi_grow["SwapFree"] = -900 * 4
    write_trace(out, h.name, run(h, [(40, r, {"memory.some": 0.005})]), ["never * *"],
                "healthy: vm.swappiness=200 asks reclaim to take anon first; 3.5 MiB/s swapped out\n"
                "with the cache kept and no stall is the configuration working")


def compressed_swap(out):
    """zram and zswap: swap-ins at memory speed without a stall are normal."""
    def zhost(name, zram, zswap, psi=True, swappiness=180):
        h = Host(name, "6.8.0-45-generic", "6.1", mem_gib=8, swap_gib=8, swappiness=swappiness, psi=psi)
        base_gauges(h, ia_mib=900, if_mib=1500)
        # the agent's swap settings (CONTRACT.md §1): one device of its kind
        kind = "zram" if zram else "partition"
        h.settings.update({"swap.devices": 1, "swap.%s.devices" % kind: 1, "swap.%s.size_kb" % kind: 8 << 20,
                           "swap.%s.used_kb" % kind: 1 << 20, "swap.%s.priority" % kind: 100,
                           "zswap.enabled": 1 if zswap else 0, "zswap.max_pool_percent": 20})
        return h

    def churn(zswap):
        if zswap:
            return dict(healthy_rates(), zswpin=6000, zswpout=6500, pswpin=0, pswpout=0, pgscan_anon=7000,
                        pgscan_file=500, pgsteal_anon=6500, pgscan_kswapd=7500, workingset_refault_anon=6000)
        return dict(healthy_rates(), pswpin=6000, pswpout=6500, pgscan_anon=7000, pgscan_file=500,
                    pgsteal_anon=6500, pgscan_kswapd=7500, workingset_refault_anon=6000)

    h = zhost("zram-healthy", True, False)
    write_trace(out, h.name, run(h, [(60, churn(False), {"memory.some": 0.012})]), ["never * *"],
                "healthy zram desktop: 23 MiB/s swapped in and out of zram, swappiness 180,\n"
                "memory PSI 1.2%: compressed swap at memory speed, as designed")
    h = zhost("zswap-healthy", False, True)
    write_trace(out, h.name, run(h, [(60, churn(True), {"memory.some": 0.008})]), ["never * *"],
                "healthy zswap host: zswpin/zswpout 23 MiB/s, PSI 0.8%")
    h = zhost("zram-nopsi", True, False, psi=False)
    h.kernel = "4.14.336"
    write_trace(out, h.name, run(h, [(60, churn(False), {})]), ["never * *"],
                "zram without PSI (4.14): 23 MiB/s of swap-ins alone is no evidence")
    h = zhost("disk-churn-nopsi", False, False, psi=False, swappiness=60)
    h.kernel = "4.14.336"
    del h.settings["zswap.enabled"]  # a kernel without zswap
    write_trace(out, h.name, run(h, [(3, healthy_rates(), {}), (12, churn(False), {})]),
                ["must swap_imbalance host shape=anon_swap_churn severity=warning"],
                "the same 23 MiB/s churn without PSI (4.14) on a host whose swap is a partition only:\n"
                "a disk-bound swap-in rate is evidence enough for a warning, never critical")
    h = zhost("zram-psi7", True, False)
    write_trace(out, h.name, run(h, [(60, churn(False), {"memory.some": 0.07, "memory.full": 0.07})]),
                ["never * *"],
                "zram swap-ins of 23 MiB/s costing 7% memory stall (decompression counts as stall):\n"
                "below what makes anon refaults from compressed swap a problem (10%)")
    h = zhost("disk-psi7", False, False)
    write_trace(out, h.name, run(h, [(60, churn(False), {"memory.some": 0.07, "memory.full": 0.07})]),
                ["must thrash host severity=warning", "must swap_imbalance host shape=anon_swap_churn"],
                "the same on a disk swap partition: 23 MiB/s of anon read back from disk at 7% stall\n"
                "is thrash and churn")
    h = zhost("zram-stall", True, False)
    bad = churn(False)
    write_trace(out, h.name, run(h, [(3, healthy_rates(), {}), (12, bad, {"memory.some": 0.14})]),
                ["must swap_imbalance host shape=anon_swap_churn severity=warning summary~zram",
                 "must thrash host"],
                "zram churn that stalls (memory PSI 14%): swap_imbalance says the swap is zram")

    # cgroup zswap: one cgroup's kernel reports zswpin only, the other's
    # pswpin too: the same verdict
    h = Host("cg-zswap", "6.12.0", "6.1", mem_gib=32, swap_gib=8)
    base_gauges(h, if_mib=6000)
    h.settings.update({"swap.devices": 1, "swap.partition.devices": 1, "swap.partition.size_kb": 8 << 20,
                       "swap.partition.used_kb": 0, "zswap.enabled": 1})
    paths = ["/kubepods/a", "/kubepods/b"]
    for p in paths:
        st = {"workingset_refault_anon": 0, "workingset_refault_file": 0, "pgscan": 0, "pgsteal": 0,
              "zswpin": 0, "zswpout": 0, "inactive_file": 50 << 20, "active_file": 700 << 20,
              "inactive_anon": 400 << 20, "active_anon": 300 << 20, "file_dirty": 0}
        if p.endswith("b"):
            st["pswpin"] = 0
            st["pswpout"] = 0
        h.cgroups[p] = {"version": 2, "stat": st, "memory_current": 1900 << 20, "memory_max": 2 << 30,
                        "swap_current": 0, "psi_some": 0, "psi_full": 0}
    samples = [h.sample()]
    for i in range(20):
        bad = i >= 3
        h.step(dict(healthy_rates(), zswpin=3000 if bad else 0, zswpout=3200 if bad else 0, pgscan_anon=3500,
                    pgscan_file=400, pgscan_kswapd=400), {"memory.some": 0.1 if bad else 0})
        for p in paths:
            st = h.cgroups[p]["stat"]
            st["zswpin"] += (1500 if bad else 0) * 10
            st["zswpout"] += (1600 if bad else 0) * 10
            st["workingset_refault_anon"] += (1500 if bad else 0) * 10
            st["pgscan"] += (1800 if bad else 10) * 10
            st["pgsteal"] += (1700 if bad else 10) * 10
            h.cgroups[p]["psi_some"] += (0.12 if bad else 0) * 10e6
        samples.append(h.sample())
    write_trace(out, h.name, samples,
                ["must swap_imbalance /kubepods/a shape=anon_swap_churn summary~zswap",
                 "must swap_imbalance /kubepods/b shape=anon_swap_churn summary~zswap",
                 "must thrash /kubepods/a", "must thrash /kubepods/b", "never * host"],
                "two v2 cgroups churning through zswap with 700 MiB of cold active file cache each:\n"
                "/kubepods/b's memory.stat also has pswpin/pswpout (0): swap-ins are pswpin + zswpin\n"
                "in both, the verdicts are the same")


def cold_active_churn(out):
    """Churn while the cold cache sits on the ACTIVE list (read twice)."""
    h = Host("churn-active-cache", "6.1.0-18-amd64", "6.1", mem_gib=8, swap_gib=4, swappiness=100)
    base_gauges(h, ia_mib=600, if_mib=40)
    h.g["nr_active_file"] = h.pages(3000)
    bad = dict(healthy_rates(), pswpin=3500, pswpout=3800, pgscan_anon=4500, pgscan_file=300,
               pgsteal_anon=3900, pgscan_kswapd=4800, workingset_refault_anon=3500, workingset_refault_file=30)
    write_trace(out, h.name, run(h, [(3, healthy_rates(), {}), (14, bad, {"memory.some": 0.16}),
                                     (10, healthy_rates(), {})]),
                ["must swap_imbalance host shape=anon_swap_churn summary~active", "must thrash host",
                 "never writeback_storm *"],
                "swap churn (14 MiB/s in and out, PSI 16%) while 3 GiB of file cache that nobody\n"
                "reads sits on the ACTIVE list (a cache read twice) and only 40 MiB is inactive")


def mglru_writeback(out):
    """MGLRU: immediate reclaim and reclaim writes stay flat in a storm."""
    h = Host("mglru-storm", "6.6.30", "6.1", mem_gib=32)
    h.mglru = True
    base_gauges(h, ia_mib=2000, if_mib=5000, dirty_mib=3000)
    h.g["nr_active_file"] = h.pages(3000)
    h.g["nr_writeback"] = h.pages(900)
    bad = dict(healthy_rates(), pgscan_kswapd=9000, pgsteal_kswapd=6000, pgscan_direct=3000, pgsteal_direct=1500,
               pgscan_file=12000, pgsteal_file=7500, pgrefill=30000, allocstall_normal=40,
               nr_vmscan_immediate_reclaim=0, nr_vmscan_write=0)
    write_trace(out, h.name, run(h, [(3, healthy_rates(), {}), (14, bad, {"memory.some": 0.3, "memory.full": 0.1,
                                                                        "io.full": 0.2}),
                                     (10, healthy_rates(), {})]),
                ["must writeback_storm host severity=critical", "must direct_reclaim_stall host", "never swap_imbalance *"],
                "a writeback storm on a multi-gen LRU kernel: 3.9 GiB dirty+writeback of 8 GiB file\n"
                "LRU, pgrefill 30000/s against pgscan 12000/s, nr_vmscan_immediate_reclaim and\n"
                "nr_vmscan_write flat (sort_folio diverts the dirty folios), PSI 30%")

    h = Host("mglru-stream-healthy", "6.6.30", "6.1", mem_gib=32)
    h.mglru = True
    base_gauges(h, ia_mib=2000, if_mib=5000, dirty_mib=2500)
    h.g["nr_active_file"] = h.pages(3000)
    h.g["nr_writeback"] = h.pages(600)
    ok = dict(healthy_rates(), pgscan_kswapd=12000, pgsteal_kswapd=11500, pgscan_file=12000, pgsteal_file=11500,
              pgrefill=7000, nr_vmscan_immediate_reclaim=0, nr_vmscan_write=0)
    write_trace(out, h.name, run(h, [(60, ok, {"memory.some": 0.01, "io.some": 0.2})]), ["never * *"],
                "healthy MGLRU streaming writer: 3 GiB dirty+writeback of 8 GiB file LRU, pgrefill\n"
                "half of pgscan, reclaim efficiency 96%, memory PSI 1%: no stall, no storm")


def lazyfree_reuse(out):
    """4.12+: pglazyfree far above pglazyfreed is normal reuse."""
    h = Host("s002-reuse", "4.19.0-27-amd64", "4.14", psi=False, swap_gib=0)
    base_gauges(h, ia_mib=600, if_mib=1500)
    r = dict(healthy_rates(), pglazyfree=40000, pglazyfreed=50, pgscan_kswapd=3000, pgsteal_kswapd=2900,
             workingset_refault_file=200, workingset_activate_file=20)
    write_trace(out, h.name, run(h, [(40, r, {})]), ["never * *"],
                "a jemalloc host on 4.19 without swap: MADV_FREE marks 156 MiB/s and the allocator\n"
                "reuses them before reclaim discards any (pglazyfreed ~0); anon stays flat: normal")


def from_real(out, corpus):
    """Real recordings rewritten into other kernels' and layouts' dialects."""
    import dialect as d
    real = lambda n: d.load(os.path.join(corpus, "real-" + n + ".jsonl.gz"))
    cg = lambda n: "/vmscope-rec-" + n
    out = os.path.join(out, "derived")
    os.makedirs(out, exist_ok=True)

    def put(name, samples, expected, comment):
        d.write(os.path.join(out, "synth-" + name + ".jsonl"), samples)
        with open(os.path.join(out, "synth-" + name + ".expected"), "w") as f:
            f.write("".join("# " + l + "\n" for l in comment.strip().split("\n")))
            f.write("\n".join(expected) + "\n")

    put("memhigh-filethrash", d.rename_host(d.to_v2(real("agentfilethrash"), memhigh=True), "memhigh-filethrash"),
        ["must thrash %s summary~memory.high" % cg("agentfilethrash"), "never * host", "never swap_imbalance *"],
        "real-agentfilethrash as a cgroup v2 limited only by memory.high (memory.max = max):\n"
        "measured against its 256 MiB memory.high, not the host's 24 GiB")
    put("v2-writeback", d.rename_host(d.to_v2(real("writeback")), "v2-writeback"),
        ["must writeback_storm %s" % cg("writeback"), "never * host", "never thrash *"],
        "real-writeback with its cgroup on the v2 memory controller")
    put("mglru-writeback", d.rename_host(d.retime(d.to_mglru(d.to_v2(real("writeback"))), 10), "mglru-writeback"),
        ["must writeback_storm %s" % cg("writeback"), "never * host", "never thrash *"],
        "real-writeback as a multi-gen LRU kernel counts it, read by a 10 s agent: the\n"
        "immediate-reclaim pages are sorted into younger generations (cgroup pgrefill, not\n"
        "pgscan), nr_vmscan_immediate_reclaim flat. (At the recording's 2 s the rewritten\n"
        "evidence comes in bursts: the rewrite cannot know how many writeback folios MGLRU\n"
        "would also have sorted, so it undercounts pgrefill.)")
    for n in ("fsyncbig", "fsyncwrite", "streamread"):
        put("mglru-" + n, d.rename_host(d.to_mglru(d.to_v2(real(n))), "mglru-" + n), ["never * *"],
            "healthy real-%s on a multi-gen LRU kernel with cgroup v2" % n)
    put("k54-coldanon", d.rename_host(d.to_k420(real("coldanon")), "k54-coldanon"),
        ["must thrash %s" % cg("coldanon"), "must swap_imbalance %s shape=cold_anon_file_thrash" % cg("coldanon"),
         "never * host"],
        "real-coldanon (seed 000) in 5.4's names: no pgscan_anon/file, no memcg workingset\n"
        "counters (refaults attributed from the host by major faults), swap usage stays 0")
    put("k414-filethrash", d.rename_host(d.no_psi(d.to_k420(real("agentfilethrash"), "4.14.336")),
                                         "k414-filethrash"),
        ["must thrash %s" % cg("agentfilethrash"), "never * host", "never swap_imbalance *"],
        "real-agentfilethrash on 4.14: no PSI, no workingset_restore, v1 without workingset counters")
    for n in ("swapburst", "streamread", "fsyncbig"):
        put("k414-" + n, d.rename_host(d.no_psi(d.to_k420(real(n), "4.14.336")), "k414-" + n), ["never * *"],
            "healthy real-%s on 4.14 (no PSI, old names)" % n)
    for n in ("swapburst", "fsyncbig"):
        put("v2-" + n, d.rename_host(d.to_v2(real(n)), "v2-" + n), ["never * *"],
            "healthy real-%s with its cgroup on the v2 memory controller" % n)


def healthy_stitched(out, corpus, hours=6, interval=10):
    """A long healthy trace at 10 s from the real healthy recordings."""
    import dialect as d
    names = ["idle", "streamread", "fsyncwrite", "cpubusy", "swapburst", "fsyncbig"]
    parts = {n: d.retime(d.load(os.path.join(corpus, "real-" + n + ".jsonl.gz")), interval) for n in names}
    rnd = random.Random("healthy")
    seq, n = [], 0
    need = hours * 3600 // interval
    while n < need:
        order = names[:]
        rnd.shuffle(order)
        for name in order:
            seq.append(parts[name])
            n += len(parts[name])
    samples = d.stitch(seq, "stitched-healthy", interval, T0)[:need]
    out = os.path.join(out, "derived")
    os.makedirs(out, exist_ok=True)
    d.write(os.path.join(out, "synth-healthy-6h.jsonl.gz"), samples)
    with open(os.path.join(out, "synth-healthy-6h.expected"), "w") as f:
        f.write("# %d h at %d s stitched from the real healthy recordings (idle, use-once streaming\n"
                "# read, fsync-driven writeback, CPU-bound, a swap burst that settles), each\n"
                "# subsampled to %d s, counters continued across the joins: zero alerts\n"
                "never * *\n" % (hours, interval, interval))


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
