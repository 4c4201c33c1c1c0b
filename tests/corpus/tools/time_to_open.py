#!/usr/bin/env python3
"""time_to_open.py - how long after a signature's onset each kind opens, at
several sampling intervals, with critical-level and warning-level evidence.

usage: time_to_open.py REPLAY [INTERVAL...]     (default intervals 1 10 15)

For each kind a host runs healthy, then from the onset instant on shows the
kind's signature (gen_synth.py's dialect of a 6.1 kernel with PSI), and
bin/vmscope-replay says when the alert opened. Prints one table row per
kind and level: seconds from onset to opened_at per interval ("-" when
nothing opened within 120 s)."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_synth as g  # noqa: E402

SIGS = {
    # kind: (level, rates, psi, gauges)
    ("thrash", "critical"): (dict(workingset_refault_file=4100, workingset_activate_file=3300,
                                  pgscan_kswapd=9000, pgscan_file=9000, pgsteal_kswapd=8800, pgsteal_file=8800),
                             {"memory.some": 0.34, "memory.full": 0.12}, {}),
    ("thrash", "warning"): (dict(workingset_refault_file=4100, workingset_activate_file=3300,
                                 pgscan_kswapd=9000, pgscan_file=9000, pgsteal_kswapd=8800, pgsteal_file=8800),
                            {"memory.some": 0.08}, {}),
    ("swap_imbalance", "critical"): (dict(workingset_refault_file=4100, workingset_activate_file=3300,
                                          pgscan_kswapd=9000, pgscan_file=9000, pgsteal_kswapd=8800),
                                     {"memory.some": 0.34, "memory.full": 0.12}, {"ia_mib": 1900}),
    ("swap_imbalance", "warning"): (dict(workingset_refault_file=4100, workingset_activate_file=3300,
                                         pgscan_kswapd=9000, pgscan_file=9000, pgsteal_kswapd=8800),
                                    {"memory.some": 0.08}, {"ia_mib": 1900}),
    ("writeback_storm", "critical"): (dict(pgscan_kswapd=60000, pgsteal_kswapd=59000, pgscan_direct=20000,
                                           pgsteal_direct=4000, nr_vmscan_write=1600,
                                           nr_vmscan_immediate_reclaim=9000, allocstall_normal=120,
                                           pgrotated=8000),
                                      {"memory.some": 0.3}, {"dirty_mib": 2500}),
    ("writeback_storm", "warning"): (dict(pgscan_kswapd=6000, pgsteal_kswapd=5900,
                                          nr_vmscan_immediate_reclaim=900, pgrotated=800),
                                     {"memory.some": 0.03}, {"dirty_mib": 2500}),
    ("direct_reclaim_stall", "critical"): (dict(allocstall_normal=50, pgscan_direct=8000, pgsteal_direct=7000),
                                           {"memory.some": 0.45, "memory.full": 0.15}, {}),
    ("direct_reclaim_stall", "warning"): (dict(allocstall_normal=5, pgscan_direct=2000, pgsteal_direct=1900),
                                          {"memory.some": 0.15}, {}),
    ("compaction_stall", "critical"): (dict(compact_stall=20, compact_fail=18), {"memory.some": 0.3}, {}),
    ("compaction_stall", "warning"): (dict(compact_stall=20, compact_fail=18), {"memory.some": 0.08}, {}),
    ("oom_kill", "critical"): (dict(oom_kill=0.2), {}, {}),
}


def trace(kind, level, interval):
    rates, psi, gauges = SIGS[(kind, level)]
    h = g.Host("tto", "6.1.0-18-amd64", "6.1", interval=interval, mem_gib=16)
    g.base_gauges(h, ia_mib=gauges.get("ia_mib", 200), if_mib=30 if "ia_mib" in gauges else 2000,
                  dirty_mib=gauges.get("dirty_mib", 4))
    healthy = dict(g.healthy_rates(), compact_stall=0, compact_fail=0)
    n_before = max(3, int(30 / interval))
    samples = g.run(h, [(n_before, healthy, {})])
    onset = h.ts
    bad = dict(healthy, **rates)
    samples += g.run(h, [(int(120 / interval), bad, psi)])[1:]
    return samples, onset


def main():
    replay = sys.argv[1]
    ivs = [float(x) for x in sys.argv[2:]] or [1, 10, 15]
    print("| kind | evidence | " + " | ".join("%g s" % i for i in ivs) + " |")
    print("|---|---|" + "---|" * len(ivs))
    for (kind, level) in SIGS:
        row = []
        for iv in ivs:
            samples, onset = trace(kind, level, iv)
            with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
                for smp in samples:
                    f.write(json.dumps(smp) + "\n")
                path = f.name
            out = subprocess.run([replay, path], capture_output=True, text=True, check=True).stdout
            os.unlink(path)
            got = [a for a in json.loads(out)["alerts"] if a["kind"] == kind and a["cgroup"] is None]
            if not got:
                row.append("-")
                continue
            a = got[-1]
            import datetime
            t = datetime.datetime.strptime(a["opened_at"].rstrip("Z").split(".")[0], "%Y-%m-%dT%H:%M:%S")
            t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
            sev = "" if a["severity"] == level else " (%s)" % a["severity"]
            row.append("%.0f%s" % (t - onset, sev))
        print("| %s | %s | %s |" % (kind, level, " | ".join(row)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
