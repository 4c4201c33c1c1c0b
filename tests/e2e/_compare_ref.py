#!/usr/bin/env python3
"""_compare_ref.py - a straightforward second computation of GET
/api/v1/compare, to check the server's fast path (binary COPY of the
rollups, values in a reused block, selection instead of sorting) against.

    _compare_ref.py CONNINFO ANSWER.json [LABEL_KEY:VALUE ...]

Reads the answer's group_by (kernel only), a, b, since and until, then
from the database with plain SELECTs: the hosts and their kernel at until
(host_meta), every host-level rollup_5m row of the window (sum and count of
each slot, the slot numbers parsed from server/store/store_rollup.c) and the
alerts. Recomputes every figure by the definitions of docs/api.md
"Compare" (compare.c's header) with sorted lists and plain loops, and
prints one line per mismatch ("ok N" when there is none). Exit status 0
only when everything matches within 1e-9 relative.
"""
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
STEP = 300000


def slots():
    src = open(os.path.join(ROOT, "server", "store", "store_rollup.c")).read()
    body = src[src.index("rollup_metric[ROLLUP_NSLOT] = {"):]
    body = body[:body.index("};")]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names = re.findall(r'"([^"]+)"', body)
    return {n: i for i, n in enumerate(names)}


def psql(db, sql):
    out = subprocess.run(["psql", db, "-qtAF", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql],
                         check=True, capture_output=True, text=True).stdout
    return [l.split("\t") for l in out.splitlines() if l]


def percentile(v, p):
    """Hyndman & Fan 7 over the sorted list v."""
    if not v:
        return None
    h = (len(v) - 1) * p
    k = int(math.floor(h))
    if k >= len(v) - 1:
        return v[-1]
    return v[k] + (h - k) * (v[k + 1] - v[k])


def exact_cdf(m, n, u):
    """P(U <= u) by counting: f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1)."""
    memo = {}

    def f(uu, i, j):
        if uu < 0:
            return 0
        if i == 0 or j == 0:
            return 1 if uu == 0 else 0
        key = (uu, i, j)
        if key not in memo:
            memo[key] = f(uu - j, i - 1, j) + f(uu, i, j - 1)
        return memo[key]
    total = math.comb(m + n, m)
    return sum(f(x, m, n) for x in range(0, int(math.floor(u)) + 1)) / total


def mwu(a, b):
    allv = sorted([(x, 1) for x in a] + [(x, 0) for x in b])
    n = len(allv)
    ra = ties = 0.0
    i = 0
    while i < n:
        j = i
        while j + 1 < n and allv[j + 1][0] == allv[i][0]:
            j += 1
        t = j - i + 1
        avg = (i + j) / 2.0 + 1.0
        ra += avg * sum(1 for k in range(i, j + 1) if allv[k][1])
        ties += t ** 3 - t
        i = j + 1
    m, k = float(len(a)), float(len(b))
    N = m + k
    u = ra - m * (m + 1) / 2.0
    var = m * k / 12.0 * ((N + 1) - ties / (N * (N - 1)))
    d = u - m * k / 2.0
    z, p = 0.0, 1.0
    if var > 0:
        cd = abs(d) - 0.5
        z = (cd if cd > 0 else 0) / math.sqrt(var)
        if d < 0:
            z = -z
        p = math.erfc(abs(z) / math.sqrt(2.0))
    exact = False
    if ties == 0 and len(a) <= 20 and len(b) <= 20:
        lo = exact_cdf(len(a), len(b), u)
        hi = exact_cdf(len(a), len(b), m * k - u)
        p = 2 * min(lo, hi)
        exact = True
    return {"u": u, "z": z, "p": min(p, 1.0), "exact": exact}


def hist(va, vb):
    vals = va + vb
    if not vals:
        return None
    lo, hi = min(vals), max(vals)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    w = (hi - lo) / 10
    cnt = [[0] * 10, [0] * 10]
    for s, v in enumerate((va, vb)):
        for x in v:
            k = int((x - lo) / w)
            cnt[s][min(max(k, 0), 9)] += 1
    return {"edges": [hi if i == 10 else lo + w * i for i in range(11)], "a": cnt[0], "b": cnt[1]}


def main():
    db, answer = sys.argv[1], json.load(open(sys.argv[2]))
    filters = [f.split(":", 1) for f in sys.argv[3:]]
    assert answer["group_by"] == "kernel"
    since, until = answer["since"], answer["until"]
    slot = slots()

    hosts = {}
    for hid, name, kernel, labels, last in psql(db, f"""
        SELECT h.id, h.name, coalesce((SELECT hm.kernel FROM host_meta hm WHERE hm.host_id = h.id
                 ORDER BY hm.ts_ms > {until}, abs(hm.ts_ms - {until}) LIMIT 1), h.kernel),
               coalesce((SELECT hm.labels FROM host_meta hm WHERE hm.host_id = h.id
                 ORDER BY hm.ts_ms > {until}, abs(hm.ts_ms - {until}) LIMIT 1), h.labels)::text,
               h.last_ts_ms
        FROM hosts h WHERE h.samples > 0 AND h.first_ts_ms <= {until} AND h.last_ts_ms >= {since}"""):
        lab = json.loads(labels) if labels else {}
        if any(lab.get(k) != v for k, v in filters):
            continue
        side = 0 if kernel == answer["a"] else 1 if kernel == answer["b"] else -1
        if side >= 0:
            hosts[int(hid)] = {"name": name, "side": side, "last": int(last)}

    want = ["psi.memory.some.avg10", "psi.memory.full.avg10", "psi.io.some.avg10", "psi.io.full.avg10",
            "vmstat.workingset_refault_file", "vmstat.workingset_refault", "vmstat.workingset_refault_anon",
            "vmstat.pgsteal_kswapd", "vmstat.pgsteal_direct", "vmstat.pgscan_kswapd", "vmstat.pgscan_direct",
            "vmstat.pswpin", "vmstat.pswpout", "vmstat.nr_vmscan_write", "vmstat.nr_vmscan_immediate_reclaim",
            "vmstat.allocstall"]
    cols = ", ".join(f"s{slot[m]}, n{slot[m]}" for m in want)
    rows = psql(db, f"SELECT host_id, bucket_ms, {cols} FROM rollup_5m WHERE cgroup_id = 0 "
                    f"AND bucket_ms > {since} - {STEP} AND bucket_ms <= {until}")

    alerts = {}
    for name, kind, o, e in psql(db, f"""
        SELECT a.host, a.kind, (extract(epoch FROM a.opened_at) * 1000)::bigint,
               (extract(epoch FROM a.ended_at) * 1000)::bigint FROM alerts a
        WHERE a.opened_at <= to_timestamp({until}::float8 / 1000)
          AND (a.ended_at IS NULL OR a.ended_at >= to_timestamp({since}::float8 / 1000))"""):
        alerts.setdefault(name, []).append((kind, int(o), int(e) if e else None))
    kinds = sorted({k for h in hosts.values() for k, _, _ in alerts.get(h["name"], [])})[:24]

    # figure -> side -> host-interval values; figure -> host -> its bucket values
    names = ["kswapd_efficiency", "direct_efficiency", "scan_kswapd", "scan_direct", "steal_kswapd",
             "steal_direct", "refault_file", "refault_anon", "vmscan_write", "immediate_reclaim", "allocstall",
             "swap_in", "swap_out", "psi_memory_some", "psi_memory_full", "psi_io_some", "psi_io_full"]
    names += ["alert_minutes_" + k for k in kinds]
    vals = {f: ([], []) for f in names}
    per_host = {f: {} for f in names}
    eff_w = {f: {} for f in names[:2]}

    def put(f, hid, x):
        if x is None:
            return
        vals[f][hosts[hid]["side"]].append(x)
        per_host[f].setdefault(hid, []).append(x)

    for r in rows:
        hid, bucket = int(r[0]), int(r[1])
        if hid not in hosts:
            continue
        mean = {}
        for i, m in enumerate(want):
            s, n = float(r[2 + 2 * i]), int(r[3 + 2 * i])
            mean[m] = s / n if n else None
        for f, st, sc in (("kswapd_efficiency", "vmstat.pgsteal_kswapd", "vmstat.pgscan_kswapd"),
                          ("direct_efficiency", "vmstat.pgsteal_direct", "vmstat.pgscan_direct")):
            if mean[st] is not None and mean[sc] is not None and mean[sc] > 0:
                put(f, hid, min(max(100.0 * mean[st] / mean[sc], 0.0), 100.0))
                w = eff_w[f].setdefault(hid, [0.0, 0.0])
                w[0] += mean[st]
                w[1] += mean[sc]
        rf = mean["vmstat.workingset_refault_file"]
        for f, x in (("scan_kswapd", mean["vmstat.pgscan_kswapd"]), ("scan_direct", mean["vmstat.pgscan_direct"]),
                     ("steal_kswapd", mean["vmstat.pgsteal_kswapd"]), ("steal_direct", mean["vmstat.pgsteal_direct"]),
                     ("refault_file", rf if rf is not None else mean["vmstat.workingset_refault"]),
                     ("refault_anon", mean["vmstat.workingset_refault_anon"]),
                     ("vmscan_write", mean["vmstat.nr_vmscan_write"]),
                     ("immediate_reclaim", mean["vmstat.nr_vmscan_immediate_reclaim"]),
                     ("allocstall", mean["vmstat.allocstall"]),
                     ("swap_in", mean["vmstat.pswpin"]), ("swap_out", mean["vmstat.pswpout"]),
                     ("psi_memory_some", mean["psi.memory.some.avg10"]),
                     ("psi_memory_full", mean["psi.memory.full.avg10"]),
                     ("psi_io_some", mean["psi.io.some.avg10"]), ("psi_io_full", mean["psi.io.full.avg10"])):
            put(f, hid, x)
        for k in kinds:
            mins = 0.0
            for kind, o, e in alerts.get(hosts[hid]["name"], []):
                end = e if e is not None else hosts[hid]["last"]
                lo, up = max(o, bucket), min(end, bucket + STEP)
                if kind == k and up > lo:
                    mins += (up - lo) / 60000.0
            put("alert_minutes_" + k, hid, min(mins, 5.0) * 288.0)

    higher = {"kswapd_efficiency", "direct_efficiency"}
    out = []
    for f in names:
        hv = ([], [])
        for hid, xs in per_host[f].items():
            if f in eff_w:
                w = eff_w[f][hid]
                x = min(max(100.0 * w[0] / w[1], 0.0), 100.0) if w[1] > 0 else None
            else:
                x = sum(xs) / len(xs)
            if x is not None and math.isfinite(x):
                hv[hosts[hid]["side"]].append(x)
        g = []
        for s in (0, 1):
            v = sorted(vals[f][s])
            g.append({"hosts": len(hv[s]), "n": len(v), "mean": sum(v) / len(v) if v else None,
                      "p50": percentile(v, 0.5), "p95": percentile(v, 0.95), "p99": percentile(v, 0.99)})
        test = mwu(hv[0], hv[1]) if hv[0] and hv[1] else None
        sig = test is not None and test["p"] < answer["alpha"]
        verdict = "same"
        if sig:
            b_higher = test["u"] < len(hv[0]) * len(hv[1]) / 2.0
            verdict = "better" if b_higher == (f in higher) else "worse"

        def chg(x, y):
            return None if x is None or y is None or x == 0 else (y - x) / abs(x) * 100.0
        out.append({"name": f, "a": g[0], "b": g[1],
                    "change_pct": {k: chg(g[0][k], g[1][k]) for k in ("mean", "p50", "p95", "p99")},
                    "test": test, "significant": sig, "verdict": verdict,
                    "hist": hist(vals[f][0], vals[f][1])})

    bad = []

    def same(path, x, y):
        if isinstance(x, dict):
            for k in x:
                same(path + "." + k, x[k], (y or {}).get(k) if isinstance(y, dict) else None)
        elif isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                bad.append(f"{path}: {y!r}, expected {x!r}")
            else:
                for i, (p, q) in enumerate(zip(x, y)):
                    same(f"{path}[{i}]", p, q)
        elif isinstance(x, float) or isinstance(y, float):
            if x is None or y is None or not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
                bad.append(f"{path}: {y!r}, expected {x!r}")
        elif x != y:
            bad.append(f"{path}: {y!r}, expected {x!r}")

    got = {fg["name"]: fg for fg in answer["figures"]}
    same("figures", [f["name"] for f in out], [fg["name"] for fg in answer["figures"]])
    same("hosts", {"a": sum(1 for h in hosts.values() if h["side"] == 0),
                   "b": sum(1 for h in hosts.values() if h["side"] == 1)}, answer["hosts"])
    for f in out:
        g = dict(got.get(f["name"], {}))
        if f["test"] is None:
            f["test"] = {"u": None, "z": None, "p": None, "exact": False}
        same(f["name"], f, g)
    checked = sum(len(vals[f][0]) + len(vals[f][1]) for f in names)
    for b in bad[:20]:
        print(b)
    if not bad:
        print("ok %d host-interval values, %d figures" % (checked, len(out)))
    sys.exit(1 if bad else 0)


main()
