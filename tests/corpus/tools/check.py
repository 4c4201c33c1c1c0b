#!/usr/bin/env python3
"""check.py - corpus helpers for tests/corpus_test.sh.

  check.py prepare OUTDIR TRACE... writes OUTDIR/<base>.<variant>.jsonl for
                                 every variant of every trace (one process:
                                 interpreter start-up is slow on some hosts)
  check.py verify OUTDIR EXPECTED... checks OUTDIR/<base>.<variant>.json of
                                 every variant against <base>.expected
  check.py variant NAME IN OUT   write a variant of trace IN (plain or .gz) to OUT:
                                 asis | retime (keep samples >= 9.5 s apart, as a
                                 10 s agent would have seen) | drop (lose every
                                 5th sample after the first: agent hiccups)
  check.py expect EXPECTED ALERTS_JSON   check replay output against the
                                 must/never lines: every must is raised, no never
                                 is, and nothing outside the musts is (the exact
                                 set); prints what failed, exit 1
"""
import gzip
import json
import os
import sys


def read_lines(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return [l for l in f if l.strip()]


def variant(name, src, dst):
    lines = read_lines(src)
    out = []
    if name == "asis":
        out = lines
    elif name == "retime":
        last = None
        for l in lines:
            ts = json.loads(l)["ts"]
            if last is None or ts - last >= 9.5:
                out.append(l)
                last = ts
    elif name == "drop":
        out = [l for i, l in enumerate(lines) if i == 0 or i % 5 != 0]
    else:
        sys.exit("unknown variant " + name)
    with open(dst, "w") as f:
        f.writelines(out)
    return 0


def scope_ok(want, cgroup):
    if want == "*":
        return True
    if want == "host":
        return cgroup is None
    return cgroup == want


def expect(exp_path, alerts_path):
    bad = expect_list(exp_path, alerts_path)
    for b in bad:
        print("  " + b)
    return 1 if bad else 0


def expect_list(exp_path, alerts_path):
    with open(alerts_path) as f:
        alerts = json.load(f)["alerts"]
    bad = []
    for line in open(exp_path):
        p = line.split("#")[0].split()
        if not p:
            continue
        verb, kind, scope = p[0], p[1], p[2] if len(p) > 2 else "*"
        hits = [a for a in alerts if (kind == "*" or a["kind"] == kind) and scope_ok(scope, a["cgroup"])]
        if verb == "must" and not hits:
            bad.append("missing: %s %s" % (kind, scope))
        elif verb == "never" and hits:
            bad.append("unexpected: %s" % "; ".join(
                "%s %s (%s)" % (a["kind"], a["cgroup"] or "host", a["summary"]) for a in hits))
        elif verb not in ("must", "never"):
            bad.append("bad line: " + line.strip())
    # the exact set: every alert raised must be one a `must` line asks for
    musts = []
    for line in open(exp_path):
        p = line.split("#")[0].split()
        if p and p[0] == "must":
            musts.append((p[1], p[2] if len(p) > 2 else "*"))
    extra = [a for a in alerts
             if not any((k == "*" or a["kind"] == k) and scope_ok(sc, a["cgroup"]) for k, sc in musts)]
    if extra:
        bad.append("not in the expected set: %s" % "; ".join(
            "%s %s (%s)" % (a["kind"], a["cgroup"] or "host", a["summary"]) for a in extra))
    return bad


VARIANTS = ("asis", "retime", "drop")


def base_of(path):
    b = os.path.basename(path)
    for suf in (".gz", ".jsonl", ".expected"):
        if b.endswith(suf):
            b = b[:-len(suf)]
    return b


def prepare(outdir, traces):
    for t in traces:
        for v in VARIANTS:
            variant(v, t, os.path.join(outdir, "%s.%s.jsonl" % (base_of(t), v)))
    return 0


def verify(outdir, exps):
    fails = 0
    for e in exps:
        for v in VARIANTS:
            out = os.path.join(outdir, "%s.%s.json" % (base_of(e), v))
            if not os.path.exists(out):
                print("FAIL %s [%s]: no replay output" % (base_of(e), v))
                fails += 1
                continue
            bad = expect_list(e, out)
            if bad:
                print("FAIL %s [%s]:" % (base_of(e), v))
                for b in bad:
                    print("  " + b)
                fails += 1
    print("corpus checks: %d passed, %d failed" % (len(exps) * len(VARIANTS) - fails, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        sys.exit(prepare(sys.argv[2], sys.argv[3:]))
    if sys.argv[1] == "verify":
        sys.exit(verify(sys.argv[2], sys.argv[3:]))
    if sys.argv[1] == "variant":
        sys.exit(variant(sys.argv[2], sys.argv[3], sys.argv[4]))
    sys.exit(expect(sys.argv[2], sys.argv[3]))
