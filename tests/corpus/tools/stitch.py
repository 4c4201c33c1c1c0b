#!/usr/bin/env python3
"""stitch.py - join real recordings into one long trace at a coarser interval,
for checking the detectors for zero alerts over hours of healthy operation.

  stitch.py --out FILE[.gz] [--hours 6] [--interval 10] [--host NAME]
            [--cgroup PATH] [--provenance FILE] SEGMENT.jsonl[.gz]...

Every interval of the output is an interval of a real recording: each
segment is subsampled to samples at least INTERVAL apart (a phase of 0..9
first samples skipped, so that passes over the same recording take other
windows), and the pieces are laid end to end, pass after pass over the
segments (their order rotated each pass), until HOURS are covered. Then:

  - counters (vmstat events, PSI totals, cgroup memory.stat events,
    memory.events) are made continuous: a piece's first sample is only the
    base of its first interval, and its counters are shifted so that each
    interval keeps exactly the delta it had in the recording;
  - gauges (meminfo, vmstat nr_* sizes, PSI averages, settings, cgroup
    sizes and limits) are the recorded values;
  - timestamps are re-timed to start at the first segment's first sample
    and advance by exactly INTERVAL; interval_s says INTERVAL;
  - boot_id is the first segment's (all segments must share it: the same
    boot), host is HOST, and every segment's cgroup entries (one per
    version) are renamed to PATH, so one cgroup runs through the trace.

Nothing is invented: a value is either recorded or a recorded value plus a
per-piece constant (counters). A counter that goes down inside a piece
(which a real kernel counter never does between two samples of one boot)
stops the tool: the name would be misclassified. The provenance of every
piece (file, phase, recorded and output time ranges) goes to stderr; with
--provenance, one JSON line per output sample after the first says which
recorded interval it carries: {"ts", "src", "src_ts", "src_prev_ts"}.
"""
import argparse
import gzip
import json
import sys

# vmstat: every field counts events or pages since boot except the current
# sizes (nr_*, but for these nr_ counters) and workingset_nodes
VMSTAT_NR_COUNTERS = {
    "nr_vmscan_write", "nr_vmscan_immediate_reclaim", "nr_dirtied", "nr_written",
    "nr_throttled_written", "nr_foll_pin_acquired", "nr_foll_pin_released",
    "nr_unaccepted_pages_accepted",
}
VMSTAT_GAUGES = {"workingset_nodes"}
# cgroup memory.stat (v1 and v2; v1's total_* twins alike): event counters;
# every other field is a size
CG_STAT_COUNTER_PREFIXES = (
    "pgfault", "pgmajfault", "workingset_refault", "workingset_activate", "workingset_restore",
    "workingset_nodereclaim", "pgscan", "pgsteal", "pgactivate", "pgdeactivate", "pglazyfree",
    "pgrefill", "pgpgin", "pgpgout", "pgdemote", "pgpromote", "thp_", "zswpin", "zswpout",
    "zswpwb", "numa_", "pgrotated", "pswpin", "pswpout", "swpin_zero", "swpout_zero",
)


def vmstat_is_counter(name):
    if name in VMSTAT_GAUGES:
        return False
    return not name.startswith("nr_") or name in VMSTAT_NR_COUNTERS


def cg_stat_is_counter(name):
    if name.startswith("total_"):
        name = name[len("total_"):]
    return name.startswith(CG_STAT_COUNTER_PREFIXES)


def counter_paths(s):
    """(path, value) of every counter in sample s; a path is a tuple."""
    out = []
    for k, v in s.get("vmstat", {}).items():
        if vmstat_is_counter(k):
            out.append((("vmstat", k), v))
    for res, r in s.get("psi", {}).items():
        for kind, line in r.items():
            if "total" in line:
                out.append((("psi", res, kind, "total"), line["total"]))
    for c in s.get("cgroups", []):
        ver = c["version"]
        for k, v in c.get("memory_stat", {}).items():
            if cg_stat_is_counter(k):
                out.append((("cg", ver, "memory_stat", k), v))
        for k, v in c.get("events", {}).items():
            out.append((("cg", ver, "events", k), v))
        for kind, line in c.get("psi", {}).items():
            if "total" in line:
                out.append((("cg", ver, "psi", kind, "total"), line["total"]))
    return out


def set_path(s, path, v):
    if path[0] == "vmstat":
        s["vmstat"][path[1]] = v
    elif path[0] == "psi":
        s["psi"][path[1]][path[2]]["total"] = v
    else:
        c = next(c for c in s["cgroups"] if c["version"] == path[1])
        if path[2] == "psi":
            c["psi"][path[3]]["total"] = v
        else:
            c[path[2]][path[3]] = v


def read_trace(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        rows = [json.loads(l) for l in f if l.strip()]
    rows.sort(key=lambda r: r["ts"])
    return rows


def subsample(rows, phase, interval):
    out, last = [], None
    for r in rows[phase:]:
        if last is None or r["ts"] - last >= interval - 0.05 * interval:
            out.append(r)
            last = r["ts"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--hours", type=float, default=6.0)
    ap.add_argument("--interval", type=float, default=10.0)
    ap.add_argument("--host", default="rec-healthy-stitched")
    ap.add_argument("--cgroup", default="/vmscope-rec-healthy")
    ap.add_argument("--provenance")
    ap.add_argument("segments", nargs="+")
    a = ap.parse_args()

    segs = [(p, read_trace(p)) for p in a.segments]
    boot = segs[0][1][0].get("boot_id")
    for p, rows in segs:
        if any(r.get("boot_id") != boot for r in rows):
            sys.exit(f"stitch.py: {p}: boot_id differs from {segs[0][0]}'s: counters of "
                     "another boot cannot be joined")
    need = int(round(a.hours * 3600 / a.interval))     # intervals wanted
    out, prov, lines = [], [], []
    t0 = segs[0][1][0]["ts"]
    last_out = {}          # path -> output value of the last emitted sample
    npass = 0
    while len(out) - 1 < need:
        if npass >= 10:
            sys.exit("stitch.py: ten passes over the segments do not cover the hours asked")
        order = segs[npass % len(segs):] + segs[:npass % len(segs)]
        for path, rows in order:
            piece = subsample(rows, npass, a.interval)
            if len(piece) < 2:
                continue
            base = dict(counter_paths(piece[0]))
            prev_in = base
            first = len(out) == 0
            offset = {}
            for p, v in base.items():
                offset[p] = 0 if first or p not in last_out else last_out[p] - v
            start_i = len(out)
            src_first = piece[0]["ts"]
            for j, r in enumerate(piece):
                if j == 0 and not first:
                    continue
                cur = dict(counter_paths(r))
                s = json.loads(json.dumps(r))
                for p, v in cur.items():
                    if p in prev_in and v < prev_in[p]:
                        sys.exit(f"stitch.py: {path}: counter {'.'.join(map(str, p))} goes "
                                 f"down at ts {r['ts']} ({prev_in[p]} -> {v})")
                    if p not in offset:
                        # a counter the piece's base lacked: continue it from
                        # the output when it was there, else start it here
                        offset[p] = last_out[p] - v if p in last_out and not first else 0
                    set_path(s, p, v + offset[p])
                    last_out[p] = v + offset[p]
                prev_in = cur
                s["ts"] = round(t0 + a.interval * len(out), 3)
                s["interval_s"] = a.interval
                s["host"] = a.host
                if boot is not None:
                    s["boot_id"] = boot
                for c in s.get("cgroups", []):
                    c["path"] = a.cgroup
                out.append(s)
                if j > 0:
                    lines.append({"ts": s["ts"], "src": path, "src_ts": r["ts"],
                                  "src_prev_ts": piece[j - 1]["ts"]})
                src_last = r["ts"]
                if len(out) - 1 >= need:
                    break
            prov.append((path, npass, src_first, src_last, out[start_i]["ts"],
                         out[-1]["ts"], len(out) - start_i))
            if len(out) - 1 >= need:
                break
        npass += 1
    op = gzip.open if a.out.endswith(".gz") else open
    with op(a.out, "wt") as f:
        for s in out:
            f.write(json.dumps(s, separators=(",", ":")) + "\n")
    if a.provenance:
        with open(a.provenance, "w") as f:
            for l in lines:
                f.write(json.dumps(l) + "\n")
    print(f"# {a.out}: {len(out)} samples, {len(out) - 1} intervals of {a.interval:g} s "
          f"({(len(out) - 1) * a.interval / 3600:.2f} h) from {len(prov)} pieces", file=sys.stderr)
    print("# source  phase  source_first_ts  source_last_ts  out_first_ts  out_last_ts  samples",
          file=sys.stderr)
    for p in prov:
        print("%s %d %.3f %.3f %.3f %.3f %d" % p, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
