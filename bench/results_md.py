#!/usr/bin/env python3
"""results_md.py - bench/out/results.json (written by bench/run.sh, `make
bench`) as one markdown table: bench/out/results.md. docs/benchmarks.md is
this table from a run on a quiet machine.

  bench/results_md.py [RESULTS_JSON [OUT_MD]]

One row per measured figure, in the order the phases run; a phase that did
not run is left out. Rows come only from the JSON, so the table says what
that run measured and nothing else.
"""
import json
import os
import platform
import sys
from urllib.parse import urlsplit


def num(v, nd=1):
    if v is None:
        return "–"
    if isinstance(v, float) and nd == 0:
        v = round(v)
    if isinstance(v, int) or (isinstance(v, float) and nd == 0):
        return f"{v:,}"
    return f"{v:,.{nd}f}"


def ingest_row(r, what):
    held = num(r.get("samples_per_s"), 1)
    target = r.get("target_rate")
    rate = f"{held}/s held of {num(target, 0)}/s offered" if target else f"{held}/s"
    failed = r.get("requests_failed", 0)
    cpu = " / ".join(num(r.get(k), 2) for k in ("server_cpu_s_per_1000", "postgres_cpu_s_per_1000",
                                                  "loadgen_cpu_s_per_1000"))
    return (f"| {what}, {r.get('concurrency', '–')} connections | {rate}, {num(failed, 0)} failed; "
            f"p50 {num(r.get('p50_ms'))} ms, p99 {num(r.get('p99_ms'))} ms; "
            f"CPU per 1,000 samples (server / PostgreSQL / load generator) {cpu} s; "
            f"{num(r.get('samples_per_commit'), 1)} samples per transaction |")


def query_name(url):
    u = urlsplit(url)
    path = u.path.replace("/api/v1/", "")
    q = u.query
    for drop in ("since=", "until="):
        q = "&".join(p for p in q.split("&") if not p.startswith(drop))
    return f"`{path}{'?' + q if q else ''}`"


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "bench/out/results.json"
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(src), "results.md")
    rows = json.load(open(src))
    out = ["| figure | measured |", "|---|---|"]
    names = {"ingest_closed_loop_20cg": "ingest, 20-cgroup samples, closed loop",
             "ingest_at_1000_per_s": "ingest, 20-cgroup samples, open loop at 1,000/s",
             "ingest_at_2000_per_s": "ingest, 20-cgroup samples, open loop at 2,000/s"}
    for r in rows:
        p = r.get("phase")
        if p in names:
            out.append(ingest_row(r, names[p]))
            if "bytes_per_sample_20cg" in r:
                out.append(f"| bytes on disk per 20-cgroup sample (tables and indexes, this short run) | "
                           f"{num(r['bytes_per_sample_20cg'], 0)} B |")
        elif p == "host_level_size":
            out.append(f"| bytes on disk per host-level sample (this short run; each host's first row of a "
                       f"day is self-contained) | {num(r['bytes_per_host_sample'], 0)} B |")
        elif p in ("bulkload_fleet", "bulkload_week", "bulkload_compare"):
            what = {"bulkload_fleet": "host level", "bulkload_week": f"{r.get('cgroups', 0)} cgroups",
                    "bulkload_compare": "compare data"}[p]
            out.append(f"| bulk load through the storage layer, {what}: {num(r.get('hosts'), 0)} hosts × "
                       f"{num(r.get('hours'), 0)} h | {num(r.get('samples'), 0)} samples in "
                       f"{num(r.get('seconds'), 1)} s, {num(r.get('samples_per_s'), 0)} samples/s |")
        elif p == "query":
            extra = ""
            if "rollup_rows" in r:
                extra = f" ({num(r['rollup_rows'], 0)} rollup rows)"
            cpu = ""
            if "server_cpu_ms" in r or "postgres_cpu_ms" in r:
                cpu = (f"; CPU per answer: server {num(r.get('server_cpu_ms'), 0)} ms + "
                       f"PostgreSQL {num(r.get('postgres_cpu_ms'), 0)} ms")
            out.append(f"| {query_name(r['url'])}{extra} | p50 {num(r.get('p50_ms'))} ms, "
                       f"p99 {num(r.get('p99_ms'))} ms, {num(r.get('bytes'), 0)} B{cpu} |")
        elif p == "regression_run":
            tested = sum(1 for x in r.get("releases", []) if x.get("status") == "tested")
            out.append(f"| one kernel-regression watch run: {num(r.get('hosts'), 0)} hosts × "
                       f"{num((r.get('window_s') or 0) / 3600, 0)} h, {tested} release(s) tested, "
                       f"{num(r.get('tests'), 0)} tests | {num(r.get('duration_ms'), 0)} ms |")
        elif p == "browser":
            labels = {"fleet": "fleet view: table, states and visible sparklines drawn",
                      "fleet_interactive": "fleet view, painted and input free",
                      "host7d": "7-day host view, every chart drawn",
                      "host7d_interactive": "7-day host view, first viewport drawn and input free"}
            for k, label in labels.items():
                v = r.get(k)
                if v:
                    out.append(f"| browser: {label} ({len(v.get('runs_ms', []))} fresh loads) | "
                               f"p50 {num(v.get('p50_ms'), 0)} ms, p99 {num(v.get('p99_ms'), 0)} ms |")
    head = (f"`make bench` on a {os.cpu_count()}-CPU machine, kernel "
            f"{platform.release()}; PostgreSQL, the server and the load generator on the same machine.\n\n")
    with open(dst, "w") as f:
        f.write(head + "\n".join(out) + "\n")
    print(f"results table: {dst}")


if __name__ == "__main__":
    main()
