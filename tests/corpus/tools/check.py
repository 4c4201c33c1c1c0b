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

Expected lines: VERB KIND [SCOPE] [ATTR...], VERB must|never, KIND a kind or
*, SCOPE host, a cgroup path or * (default), ATTR one of
  shape=NAME        evidence.shape is NAME
  severity=LEVEL    the alert's severity (warning|critical)
  summary~REGEX     the summary matches REGEX (Python re.search)
A must line's attributes narrow what counts as raised and what the exact set
allows; a never line matches on kind and scope alone.
"""
import gzip
import json
import os
import re
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


def parse_line(line):
    """(verb, kind, scope, attrs) or None for a blank/comment line."""
    p = line.split("#")[0].split()
    if not p:
        return None
    verb, kind = p[0], p[1] if len(p) > 1 else "*"
    scope = p[2] if len(p) > 2 and "=" not in p[2] and "~" not in p[2] else "*"
    attrs = [a for a in p[2:] if "=" in a or "~" in a]
    return verb, kind, scope, attrs


def attrs_ok(attrs, a):
    for t in attrs:
        if t.startswith("shape="):
            if (a.get("evidence") or {}).get("shape") != t[6:]:
                return False
        elif t.startswith("severity="):
            if a["severity"] != t[9:]:
                return False
        elif t.startswith("summary~"):
            if not re.search(t[8:], a["summary"]):
                return False
        else:
            raise ValueError("unknown attribute " + t)
    return True


def matches(kind, scope, attrs, a):
    return (kind == "*" or a["kind"] == kind) and scope_ok(scope, a["cgroup"]) and attrs_ok(attrs, a)


def expect_list(exp_path, alerts_path):
    with open(alerts_path) as f:
        alerts = json.load(f)["alerts"]
    bad = []
    musts = []
    for line in open(exp_path):
        p = parse_line(line)
        if not p:
            continue
        verb, kind, scope, attrs = p
        if verb == "must":
            musts.append((kind, scope, attrs))
            if not [a for a in alerts if matches(kind, scope, attrs, a)]:
                near = [a for a in alerts if matches(kind, scope, [], a)]
                bad.append("missing: %s %s %s%s" % (kind, scope, " ".join(attrs), "".join(
                    " (raised: %s, shape %s: %s)" % (a["severity"], (a.get("evidence") or {}).get("shape"),
                                                     a["summary"]) for a in near)))
        elif verb == "never":
            hits = [a for a in alerts if matches(kind, scope, [], a)]
            if hits:
                bad.append("unexpected: %s" % "; ".join(
                    "%s %s (%s)" % (a["kind"], a["cgroup"] or "host", a["summary"]) for a in hits))
        else:
            bad.append("bad line: " + line.strip())
    # the exact set: every alert raised must be one a `must` line asks for
    extra = [a for a in alerts if not any(matches(k, sc, at, a) for k, sc, at in musts)]
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
