#!/usr/bin/env python3
"""show.py - print per-interval rates of the reclaim counters in a recording
(host and cgroups), to see what the detectors see. usage: show.py FILE[.gz]"""
import gzip
import json
import sys

HOST = ["workingset_refault_file", "workingset_refault_anon", "workingset_activate_file", "pgscan_anon",
        "pgscan_file", "pgscan_kswapd", "pgsteal_file", "pswpin", "pswpout", "nr_vmscan_write",
        "nr_vmscan_immediate_reclaim", "allocstall_normal", "pglazyfree", "pglazyfreed", "oom_kill"]
CG = ["total_workingset_refault_file", "total_workingset_refault_anon", "total_pgmajfault",
      "workingset_refault_file", "workingset_refault_anon", "pgscan", "pgsteal", "pswpin"]


def main():
    op = gzip.open if sys.argv[1].endswith(".gz") else open
    prev = None
    with op(sys.argv[1], "rt") as f:
        for line in f:
            s = json.loads(line)
            if prev:
                dt = s["ts"] - prev["ts"]
                out = ["%6.1f" % (s["ts"] - t0)]
                for k in HOST:
                    if k in s["vmstat"] and k in prev["vmstat"]:
                        out.append("%s=%.0f" % (k.replace("workingset_", "ws_"), (s["vmstat"][k] - prev["vmstat"][k]) / dt))
                p = s.get("psi", {}).get("memory", {}).get("some", {})
                pp = prev.get("psi", {}).get("memory", {}).get("some", {})
                if p and pp:
                    out.append("psi_some=%.1f%%" % ((p["total"] - pp["total"]) / dt / 1e4))
                vm = s["vmstat"]
                out.append("ia=%dM if=%dM dirty=%dM wb=%dM swapfree=%dM" % (
                    vm["nr_inactive_anon"] * 4 // 1024, vm["nr_inactive_file"] * 4 // 1024,
                    vm["nr_dirty"] * 4 // 1024, vm["nr_writeback"] * 4 // 1024,
                    s["meminfo"].get("SwapFree", 0) // 1024))
                for c, pc in zip(s.get("cgroups", []), prev.get("cgroups", [])):
                    ms, pms = c.get("memory_stat", {}), pc.get("memory_stat", {})
                    cg = ["  cg%d" % c["version"]]
                    for k in CG:
                        if k in ms and k in pms:
                            cg.append("%s=%.0f" % (k, (ms[k] - pms[k]) / dt))
                    if "psi" in c and "psi" in pc:
                        cg.append("psi_some=%.1f%%" % ((c["psi"]["some"]["total"] - pc["psi"]["some"]["total"]) / dt / 1e4))
                    for k in ("total_inactive_anon", "total_inactive_file", "total_dirty", "total_writeback", "inactive_anon", "inactive_file", "file_dirty"):
                        if k in ms:
                            cg.append("%s=%dM" % (k, ms[k] >> 20))
                    if "swap_current" in c:
                        cg.append("swap=%s" % (c["swap_current"] if c["swap_current"] is None else c["swap_current"] >> 20))
                    out.append(" ".join(cg))
                print(" ".join(out))
            else:
                t0 = s["ts"]
            prev = s


main()
