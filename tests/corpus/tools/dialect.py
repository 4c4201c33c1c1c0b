#!/usr/bin/env python3
"""dialect.py - rewrite a real recording (this machine: 6.18, hybrid cgroups,
v1 memory controller) into what another kernel or cgroup layout would have
reported for the same workload, so the detectors are checked on kernels
this machine does not run with the timing, noise and PSI of a real run.

Each transform is a function from a list of samples to a new list; they
compose. What each one changes, and why that is what the other kernel
shows:

  to_v2(s, memhigh)  the recording's v1 memory cgroup (plus its v2 PSI twin)
                     becomes one cgroup-v2 entry: v2 memory.stat names
                     (file_dirty, file_writeback, ...), its PSI, and pgscan /
                     pgsteal, which v1 lacks: the host's cgroup-limit reclaim
                     (pgscan_anon+file minus kswapd/direct/khugepaged/
                     proactive: RECLAIM-NOTES "whose reclaim is counted
                     where"), all of it this cgroup's in these recordings.
                     memhigh: memory.max reads max and the limit is set as
                     memory.high (Kubernetes MemoryQoS, systemd MemoryHigh=).
  to_k420(s, kernel) a 4.20..5.7 kernel: no pgscan/pgsteal_anon/file (5.8),
                     no workingset_*_anon and unsplit workingset_* (5.9), no
                     _khugepaged (6.3) / _proactive, no zswap counters in
                     vmstat, v1 memory.stat without workingset counters.
  no_psi(s, kernel)  a kernel before 4.20 or booted psi=0: no PSI anywhere,
                     no workingset_restore (4.20).
  to_mglru(s)        MGLRU on: sort_folio() moves dirty/writeback file folios
                     to a younger generation before isolation, so the pages
                     the recording shows as nr_vmscan_immediate_reclaim are
                     counted in pgrefill instead (memcg pgrefill for
                     cgroup-limit reclaim, vmstat pgrefill only for
                     machine-wide reclaim), not in pgscan (never isolated),
                     and nr_vmscan_immediate_reclaim and the file part of
                     nr_vmscan_write stay flat.
  stitch(parts)      concatenates recordings into one host's trace: counters
                     continue from where the previous part ended (no reset),
                     times follow at the given interval.
"""
import copy
import gzip
import json

GLOBAL_SCANS = ("pgscan_kswapd", "pgscan_direct", "pgscan_khugepaged", "pgscan_proactive")
GLOBAL_STEALS = ("pgsteal_kswapd", "pgsteal_direct", "pgsteal_khugepaged", "pgsteal_proactive")


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return [json.loads(l) for l in f if l.strip()]


def retime(samples, interval):
    """Keeps samples at least interval*0.95 apart (what an agent at that
    interval would have read)."""
    out, last = [], None
    for s in samples:
        if last is None or s["ts"] - last >= interval * 0.95:
            out.append(s)
            last = s["ts"]
    return out


def rename_host(samples, host, kernel=None):
    out = []
    for s in samples:
        s = copy.deepcopy(s)
        s["host"] = host
        s["boot_id"] = "boot-" + host
        if kernel:
            s["kernel"] = kernel
        out.append(s)
    return out


def _cg_reclaim(vm, pre):
    v = vm.get(pre + "_anon", 0) + vm.get(pre + "_file", 0)
    g = sum(vm.get(k, 0) for k in (GLOBAL_SCANS if pre == "pgscan" else GLOBAL_STEALS))
    return max(0, v - g)


V1_TO_V2 = {"total_inactive_anon": "inactive_anon", "total_active_anon": "active_anon",
            "total_inactive_file": "inactive_file", "total_active_file": "active_file",
            "total_dirty": "file_dirty", "total_writeback": "file_writeback", "total_rss": "anon",
            "total_cache": "file", "total_shmem": "shmem", "total_mapped_file": "file_mapped",
            "total_pgfault": "pgfault", "total_pgmajfault": "pgmajfault",
            "total_workingset_refault_anon": "workingset_refault_anon",
            "total_workingset_refault_file": "workingset_refault_file",
            "total_unevictable": "unevictable"}


def to_v2(samples, memhigh=False):
    out = []
    base_scan = base_steal = None
    for s in samples:
        s = copy.deepcopy(s)
        vm = s["vmstat"]
        scan, steal = _cg_reclaim(vm, "pgscan"), _cg_reclaim(vm, "pgsteal")
        if base_scan is None:
            base_scan, base_steal = scan, steal
        cgs = []
        v1 = {c["path"]: c for c in s.get("cgroups", []) if c["version"] == 1}
        v2 = {c["path"]: c for c in s.get("cgroups", []) if c["version"] == 2}
        for path, c in v1.items():
            st = {V1_TO_V2[k]: v for k, v in c.get("memory_stat", {}).items() if k in V1_TO_V2}
            st["pgscan"] = scan - base_scan
            st["pgsteal"] = steal - base_steal
            e = {"path": path, "version": 2, "memory_stat": st,
                 "memory_current": c.get("memory_current", 0), "memory_max": c.get("memory_max"),
                 "swap_current": c.get("swap_current"), "events": {"low": 0, "high": 0, "max": 0, "oom": 0,
                                                                   "oom_kill": 0}}
            if path in v2 and "psi" in v2[path]:
                e["psi"] = v2[path]["psi"]
            settings = {}
            if memhigh:
                settings["memory.high"] = e["memory_max"]
                e["memory_max"] = None
            if settings:
                e["settings"] = settings
            cgs.append(e)
        for path, c in v2.items():
            if path not in v1:
                cgs.append(c)
        s["cgroups"] = cgs
        out.append(s)
    return out


def to_k420(samples, kernel="5.4.0-150-generic"):
    out = []
    for s in samples:
        s = copy.deepcopy(s)
        s["kernel"] = kernel
        vm = {}
        for k, v in s["vmstat"].items():
            if k in ("pgscan_anon", "pgscan_file", "pgsteal_anon", "pgsteal_file") or \
               k.endswith("_khugepaged") or k.endswith("_proactive") or k.startswith("zswp") or \
               k in ("swpin_zero", "swpout_zero", "ksm_swpin_copy", "pgscan_direct_throttle"):
                continue
            if k.startswith("workingset_") and k.endswith("_anon"):
                continue
            if k.startswith("workingset_") and k.endswith("_file"):
                k = k[:-5]
            vm[k] = v
        s["vmstat"] = vm
        for c in s.get("cgroups", []):
            st = c.get("memory_stat")
            if st is None:
                continue
            for k in list(st):
                if "workingset_" in k or k.startswith("zswp") or k in ("pswpin", "pswpout"):
                    del st[k]
        out.append(s)
    _pages_per_charge(out, samples)
    return out


def _pages_per_charge(out, src):
    """v1 memcg pgpgin/pgpgout count charge events. 6.x charges a large
    page-cache folio as one event; 4.x-5.x charged page by page, so one
    event was one page. Scales the cgroup's counters by this recording's
    pages read in (host pgpgin) per charge event, one factor for the whole
    recording."""
    ps = src[0].get("page_size", 4096)
    host = (src[-1]["vmstat"].get("pgpgin", 0) - src[0]["vmstat"].get("pgpgin", 0)) * 1024.0 / ps
    for name in ("total_pgpgin", "pgpgin", "total_pgpgout", "pgpgout"):
        def val(s):
            return [c["memory_stat"].get(name) for c in s.get("cgroups", [])
                    if c["version"] == 1 and "memory_stat" in c]
        first, last = val(src[0]), val(src[-1])
        if not first or first[0] is None or last[0] is None or last[0] <= first[0]:
            continue
        factor = max(1.0, host / float(last[0] - first[0]))
        for s in out:
            for c in s.get("cgroups", []):
                st = c.get("memory_stat", {})
                if c["version"] == 1 and name in st:
                    st[name] = int(first[0] + (st[name] - first[0]) * factor)


def no_psi(samples, kernel="4.14.336"):
    out = []
    for s in samples:
        s = copy.deepcopy(s)
        s["kernel"] = kernel
        s.pop("psi", None)
        s["vmstat"] = {k: v for k, v in s["vmstat"].items() if not k.startswith("workingset_restore")}
        for c in s.get("cgroups", []):
            c.pop("psi", None)
        s["cgroups"] = [c for c in s.get("cgroups", []) if "memory_stat" in c or c["version"] == 1]
        out.append(s)
    return out


def to_mglru(samples):
    """Immediate-reclaim pages become pgrefill (sorted, not isolated)."""
    out = []
    imm0 = write0 = None
    cg_refill = {}
    prev_imm = None
    for s in samples:
        s = copy.deepcopy(s)
        s["mglru"] = True
        vm = s["vmstat"]
        imm = vm.get("nr_vmscan_immediate_reclaim", 0)
        if imm0 is None:
            imm0, write0 = imm, vm.get("nr_vmscan_write", 0) - vm.get("pswpout", 0)
            prev_imm = imm
        d = imm - prev_imm
        prev_imm = imm
        global_scan = sum(vm.get(k, 0) for k in GLOBAL_SCANS)
        cg_scan = _cg_reclaim(vm, "pgscan")
        vm["nr_vmscan_immediate_reclaim"] = imm0
        vm["nr_vmscan_write"] = write0 + vm.get("pswpout", 0)
        # the diverted pages: vmstat pgrefill only for machine-wide reclaim
        share = global_scan / float(global_scan + cg_scan) if global_scan + cg_scan else 1.0
        vm["pgrefill"] = vm.get("pgrefill", 0) + int((imm - imm0) * share)
        # ... and were never isolated: not in pgscan_file (nor the cgroup's pgscan)
        diverted = imm - imm0
        vm["pgscan_file"] = max(vm.get("pgsteal_file", 0), vm.get("pgscan_file", 0) - diverted)
        for c in s.get("cgroups", []):
            if c["version"] == 2 and "memory_stat" in c:
                st = c["memory_stat"]
                cg_refill[c["path"]] = cg_refill.get(c["path"], 0) + max(0, d)
                st["pgrefill"] = st.get("pgrefill", 0) + cg_refill[c["path"]]
                if "pgscan" in st:
                    st["pgscan"] = max(st.get("pgsteal", 0), st["pgscan"] - cg_refill[c["path"]])
        out.append(s)
    return out


def _counters(s):
    """Paths of every counter (not gauge) in a sample, as (dict, key)."""
    from_names = lambda k: not (k.startswith("nr_") and k not in ("nr_vmscan_write", "nr_vmscan_immediate_reclaim",
                                                                  "nr_dirtied", "nr_written"))
    out = [(s["vmstat"], k) for k in s["vmstat"] if from_names(k) and k != "workingset_nodes"]
    for res in s.get("psi", {}).values():
        for line in res.values():
            out.append((line, "total"))
    for c in s.get("cgroups", []):
        st = c.get("memory_stat", {})
        out += [(st, k) for k in st if k.startswith(("pg", "workingset_refault", "workingset_activate",
                                                     "workingset_restore", "total_pg", "total_workingset",
                                                     "pswp", "zswp"))]
        for line in c.get("psi", {}).values():
            out.append((line, "total"))
        out += [(c.get("events", {}), k) for k in c.get("events", {})]
    return out


def stitch(parts, host, interval, t0):
    """parts: lists of samples (one recording each, already retimed). Returns
    one trace of host whose counters never go backwards."""
    out = []
    offset = {}
    last = {}
    ts = t0
    cg_map = {}
    for part in parts:
        first = None
        for s in part:
            s = copy.deepcopy(s)
            s["host"] = host
            s["boot_id"] = "boot-" + host
            s["interval_s"] = interval
            s.pop("agent_version", None)  # the parts came from different recorders
            for c in s.get("cgroups", []):
                c["path"] = cg_map.setdefault(c["path"], "/workload.slice")
            if first is None:
                first = s
                offset = {}  # this part starts where the last one ended
            for d, k in _counters(s):
                key = (id_key(s, d), k)
                off = offset.setdefault(key, last.get(key, 0) - d[k])
                d[k] = d[k] + off
                last[key] = d[k]
            ts += interval
            s["ts"] = round(ts, 3)
            out.append(s)
    return out


def id_key(s, d):
    """A stable name for the dict d inside sample s (which counter family)."""
    if d is s["vmstat"]:
        return "vmstat"
    for r, res in s.get("psi", {}).items():
        for n, line in res.items():
            if line is d:
                return "psi." + r + "." + n
    for c in s.get("cgroups", []):
        tag = "%s:%d" % (c["path"], c["version"])
        if d is c.get("memory_stat"):
            return tag + ".stat"
        if d is c.get("events"):
            return tag + ".events"
        for n, line in c.get("psi", {}).items():
            if line is d:
                return tag + ".psi." + n
    return "?"


def write(path, samples):
    """JSON lines; gzip (with a fixed mtime, so it is reproducible) for .gz."""
    if path.endswith(".gz"):
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            for s in samples:
                gz.write((json.dumps(s, separators=(",", ":")) + "\n").encode())
        return
    with open(path, "w") as f:
        for s in samples:
            f.write(json.dumps(s, separators=(",", ":")) + "\n")
