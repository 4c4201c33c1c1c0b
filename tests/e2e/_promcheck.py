#!/usr/bin/env python3
"""_promcheck.py - a strict checker of the Prometheus text exposition format
(version 0.0.4), standing in for `promtool check metrics` (the Debian
`prometheus` package that ships promtool is a 96 MB install with a server
and a service; too heavy for scripts/deps.sh).

Reads the exposition on stdin; prints one line per problem and exits 1 when
there is any, else prints the number of families and samples and exits 0.

Checked, as the format (and promtool's linter) require:
  - every line is a HELP, a TYPE, another comment, or a sample; the text
    ends with a newline; no blank lines inside
  - metric and label names are valid; label names do not start with __
  - label values use only the escapes \\\\, \\" and \\n; no duplicate label
  - values parse as Go floats (NaN, +Inf, -Inf included); an optional
    timestamp is an integer
  - each family has exactly one HELP and one TYPE, before its samples, and
    its samples are contiguous (a family never reappears later)
  - TYPE is counter, gauge, histogram, summary or untyped; a counter's name
    ends in _total (promtool lint), a non-counter's does not
  - sample names belong to their family (histogram: _bucket/_sum/_count)
  - no series (name + label set) appears twice
  - histograms: every bucket has le, buckets are cumulative and ordered,
    +Inf is present and equals _count
  - counters are not negative
"""
import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
FLOAT = re.compile(r"^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|Inf|inf|NaN)$")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def parse_labels(s, i, errs, ln):
    """Parses {a="b",...} starting at s[i] == '{'. Returns (dict, index after '}')."""
    labels = {}
    i += 1
    while True:
        if i < len(s) and s[i] == "}":
            return labels, i + 1
        m = LABEL.match(s, i)
        if not m:
            errs.append(f"line {ln}: bad label name at column {i + 1}")
            return labels, None
        name = m.group(0)
        if name.startswith("__"):
            errs.append(f"line {ln}: label name {name} is reserved")
        i = m.end()
        if s[i:i + 2] != '="':
            errs.append(f"line {ln}: expected =\" after label {name}")
            return labels, None
        i += 2
        val = []
        while i < len(s) and s[i] != '"':
            if s[i] == "\\":
                if i + 1 >= len(s) or s[i + 1] not in '\\"n':
                    errs.append(f"line {ln}: bad escape in label {name}")
                    return labels, None
                val.append({"\\": "\\", '"': '"', "n": "\n"}[s[i + 1]])
                i += 2
            else:
                val.append(s[i])
                i += 1
        if i >= len(s):
            errs.append(f"line {ln}: unterminated label value")
            return labels, None
        i += 1
        if name in labels:
            errs.append(f"line {ln}: duplicate label {name}")
        labels[name] = "".join(val)
        if i < len(s) and s[i] == ",":
            i += 1
        elif i < len(s) and s[i] == "}":
            continue
        else:
            errs.append(f"line {ln}: expected , or }} after a label")
            return labels, None


def fval(tok):
    if tok in ("+Inf", "Inf", "inf", "+inf"):
        return math.inf
    if tok in ("-Inf", "-inf"):
        return -math.inf
    return float(tok)


def check(text):
    errs = []
    if not text.endswith("\n"):
        errs.append("the exposition does not end with a newline")
    help_, type_, done, order = {}, {}, set(), []
    series = set()
    current = None
    nsamples = 0
    hist = {}  # family -> {labelset(without le): {"buckets": [(le, v)], "count": v}}
    for ln, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), 1):
        if line == "":
            errs.append(f"line {ln}: blank line")
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 2 and parts[1] in ("HELP", "TYPE"):
                if len(parts) < 3 or not NAME.fullmatch(parts[2]):
                    errs.append(f"line {ln}: {parts[1]} without a valid metric name")
                    continue
                fam = parts[2]
                if fam in done and fam != current:
                    errs.append(f"line {ln}: family {fam} appears again after other families")
                if current != fam:
                    if current is not None:
                        done.add(current)
                    current = fam
                    order.append(fam)
                if parts[1] == "HELP":
                    if fam in help_:
                        errs.append(f"line {ln}: second HELP for {fam}")
                    help_[fam] = parts[3] if len(parts) > 3 else ""
                    if not help_[fam].strip():
                        errs.append(f"line {ln}: empty HELP for {fam}")
                else:
                    if fam in type_:
                        errs.append(f"line {ln}: second TYPE for {fam}")
                    t = parts[3].strip() if len(parts) > 3 else ""
                    if t not in TYPES:
                        errs.append(f"line {ln}: unknown type {t!r} for {fam}")
                    type_[fam] = t
                    if any(s[0] == fam for s in series):
                        errs.append(f"line {ln}: TYPE for {fam} after its samples")
            continue
        m = NAME.match(line)
        if not m:
            errs.append(f"line {ln}: not a sample: {line[:80]}")
            continue
        name = m.group(0)
        i = m.end()
        labels = {}
        if i < len(line) and line[i] == "{":
            labels, i = parse_labels(line, i, errs, ln)
            if i is None:
                continue
        rest = line[i:]
        if not rest.startswith(" "):
            errs.append(f"line {ln}: expected a space before the value")
            continue
        toks = rest.split()
        if len(toks) not in (1, 2) or rest != " " + " ".join(toks):
            errs.append(f"line {ln}: expected one value and an optional timestamp, single-spaced")
            continue
        if not FLOAT.match(toks[0]):
            errs.append(f"line {ln}: bad value {toks[0]!r}")
            continue
        if len(toks) == 2 and not re.fullmatch(r"-?\d+", toks[1]):
            errs.append(f"line {ln}: bad timestamp {toks[1]!r}")
        v = fval(toks[0])
        fam = current
        t = type_.get(fam)
        if fam is None or t is None:
            errs.append(f"line {ln}: sample {name} without a TYPE")
            continue
        if fam not in help_:
            errs.append(f"line {ln}: family {fam} has no HELP")
        ok_names = {fam}
        if t == "histogram":
            ok_names = {fam + "_bucket", fam + "_sum", fam + "_count"}
        elif t == "summary":
            ok_names = {fam, fam + "_sum", fam + "_count"}
        if name not in ok_names:
            errs.append(f"line {ln}: sample {name} does not belong to family {fam} ({t})")
        key = (name, tuple(sorted(labels.items())))
        if key in series:
            errs.append(f"line {ln}: duplicate series {name}{labels}")
        series.add(key)
        nsamples += 1
        if t == "counter" and v < 0:
            errs.append(f"line {ln}: negative counter {name}")
        if t == "histogram":
            base = tuple(sorted((k, x) for k, x in labels.items() if k != "le"))
            h = hist.setdefault(fam, {}).setdefault(base, {"buckets": [], "count": None})
            if name.endswith("_bucket"):
                if "le" not in labels or not FLOAT.match(labels["le"].replace("+Inf", "Inf")):
                    errs.append(f"line {ln}: bucket without a valid le")
                else:
                    h["buckets"].append((fval(labels["le"]), v))
            elif name.endswith("_count"):
                h["count"] = v
    if current is not None:
        done.add(current)
    for fam, t in type_.items():
        if t == "counter" and not fam.endswith("_total"):
            errs.append(f"{fam}: counter names should end in _total")
        if t != "counter" and fam.endswith("_total"):
            errs.append(f"{fam}: only counters should end in _total")
        if fam not in help_:
            errs.append(f"{fam}: no HELP")
    for fam in help_:
        if fam not in type_:
            errs.append(f"{fam}: HELP without TYPE")
    for fam, sets in hist.items():
        for base, h in sets.items():
            b = h["buckets"]
            if not b or b[-1][0] != math.inf:
                errs.append(f"{fam}{dict(base)}: no +Inf bucket last")
                continue
            if [x[0] for x in b] != sorted(x[0] for x in b):
                errs.append(f"{fam}{dict(base)}: buckets not in le order")
            if any(b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
                errs.append(f"{fam}{dict(base)}: buckets not cumulative")
            if h["count"] is None or h["count"] != b[-1][1]:
                errs.append(f"{fam}{dict(base)}: _count differs from the +Inf bucket")
    return errs, len(order), nsamples


def main():
    text = sys.stdin.read()
    errs, nfam, nsamples = check(text)
    for e in errs:
        print(e)
    if errs:
        return 1
    print(f"ok: {nfam} families, {nsamples} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
