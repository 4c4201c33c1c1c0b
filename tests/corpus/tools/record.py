#!/usr/bin/env python3
"""record.py - record contract samples (CONTRACT.md section 1) from this
machine as JSON lines, for the detector corpus.

The C agent is written in parallel; this small recorder reads the same
files so that real traces of real memory pressure can be captured now:
/proc/vmstat, /proc/meminfo, /proc/pressure/*, /proc/sys/vm/* and the
named memory cgroups (v1 under /sys/fs/cgroup/memory, v2 PSI under
/sys/fs/cgroup/unified on a hybrid machine, or pure v2).

usage: record.py --out FILE --seconds N [--interval S] [--host NAME]
                 [--cgroup PATH]...   (PATH below the hierarchy root, e.g. /vmscope-rec)
"""
import argparse
import json
import os
import resource
import sys
import time

PAGE_COUNTER_MAX = 0x7FFFFFFFFFFFFFFF // resource.getpagesize() * resource.getpagesize()


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def kv_ints(text, strip_kb=False):
    out = {}
    if not text:
        return out
    for line in text.splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) < 2:
            continue
        try:
            v = int(parts[1])
        except ValueError:
            continue
        if 0 <= v < 2**63:
            out[parts[0]] = v
    return out


def psi(path):
    text = read(path)
    if not text:
        return None
    res = {}
    for line in text.splitlines():
        p = line.split()
        d = {}
        for kv in p[1:]:
            k, v = kv.split("=")
            d[k] = int(v) if k == "total" else float(v)
        res[p[0]] = d
    return res


def one_int(path):
    t = read(path)
    if t is None:
        return None
    t = t.strip()
    if t == "max":
        return "max"
    try:
        return int(t)
    except ValueError:
        return None


def cgroup_entries(paths):
    out = []
    v1 = "/sys/fs/cgroup/memory"
    v2 = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else "/sys/fs/cgroup"
    for p in paths:
        d1 = v1 + p
        if os.path.isdir(d1):
            e = {"path": p, "version": 1, "memory_stat": kv_ints(read(d1 + "/memory.stat"))}
            use = one_int(d1 + "/memory.usage_in_bytes")
            if isinstance(use, int):
                e["memory_current"] = use
            lim = one_int(d1 + "/memory.limit_in_bytes")
            if isinstance(lim, int):
                e["memory_max"] = None if lim >= PAGE_COUNTER_MAX else lim
            msw = one_int(d1 + "/memory.memsw.usage_in_bytes")
            # the two files are read apart: clamp a race to 0
            e["swap_current"] = max(0, msw - use) if isinstance(msw, int) and isinstance(use, int) else None
            sw = one_int(d1 + "/memory.swappiness")
            if isinstance(sw, int):
                e["settings"] = {"memory.swappiness": sw}
            out.append(e)
        d2 = v2 + p
        if os.path.isdir(d2):
            e = {"path": p, "version": 2}
            st = read(d2 + "/memory.stat")
            if st:
                e["memory_stat"] = kv_ints(st)
                ev = kv_ints(read(d2 + "/memory.events"))
                if ev:
                    e["events"] = ev
                cur = one_int(d2 + "/memory.current")
                if isinstance(cur, int):
                    e["memory_current"] = cur
                mx = one_int(d2 + "/memory.max")
                if mx is not None:
                    e["memory_max"] = None if mx == "max" else mx
                sc = one_int(d2 + "/memory.swap.current")
                if isinstance(sc, int):
                    e["swap_current"] = sc
            ps = psi(d2 + "/memory.pressure")
            if ps:
                e["psi"] = ps
            out.append(e)
    return out


def sample(host, interval, cgroups):
    s = {
        "host": host,
        "boot_id": read("/proc/sys/kernel/random/boot_id").strip(),
        "ts": round(time.time(), 3),
        "interval_s": interval,
        "kernel": read("/proc/sys/kernel/osrelease").strip(),
        "page_size": resource.getpagesize(),
        "vmstat": kv_ints(read("/proc/vmstat")),
        "meminfo": kv_ints(read("/proc/meminfo")),
    }
    lg = read("/sys/kernel/mm/lru_gen/enabled")
    if lg is not None:
        s["mglru"] = int(lg.strip(), 16) & 1 == 1
    p = {}
    for r in ("memory", "io", "cpu"):
        v = psi("/proc/pressure/" + r)
        if v:
            p[r] = v
    if p:
        s["psi"] = p
    st = {}
    for k in ("swappiness", "dirty_ratio", "dirty_background_ratio", "dirty_bytes",
              "dirty_background_bytes", "min_free_kbytes", "watermark_scale_factor"):
        v = one_int("/proc/sys/vm/" + k)
        if isinstance(v, int):
            st["vm." + k] = v
    s["settings"] = st
    cg = cgroup_entries(cgroups)
    if cg:
        s["cgroups"] = cg
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--host", default="rec-host")
    ap.add_argument("--cgroup", action="append", default=[])
    a = ap.parse_args()
    end = time.time() + a.seconds
    with open(a.out, "w") as f:
        nxt = time.time()
        while time.time() < end:
            f.write(json.dumps(sample(a.host, a.interval, a.cgroup), separators=(",", ":")) + "\n")
            f.flush()
            nxt += a.interval
            time.sleep(max(0.0, nxt - time.time()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
