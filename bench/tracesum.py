#!/usr/bin/env python3
"""tracesum.py TRACE.json - where a page load's main-thread time went, from a
Chromium trace (bench/browser.mjs with TRACE=DIR): the renderer main thread's
top-level tasks' time split by the trace event names inside them (self CPU time:
a nested event's time is counted once, under the innermost name), largest
first; and the thread's busy time (wall time of its tasks, CPU time when the
trace has it). Helps tell script from compile, style, layout and paint."""
import collections
import json
import sys


def main():
    data = json.load(open(sys.argv[1]))
    ev = data["traceEvents"] if isinstance(data, dict) else data
    names = {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    mains = [k for k, v in names.items() if v == "CrRendererMain"]
    # the page's renderer main thread: the one that parsed an http(s) page
    # (others are Chromium's own pages); else the one with the most events
    web = [(e["pid"], e["tid"]) for e in ev if e.get("name") == "ParseHTML" and
           str(e.get("args", {}).get("beginData", {}).get("url", "")).startswith("http")]
    count = collections.Counter((e.get("pid"), e.get("tid")) for e in ev if (e.get("pid"), e.get("tid")) in mains)
    main_t = web[0] if web else count.most_common(1)[0][0]
    xs = sorted((e for e in ev if (e.get("pid"), e.get("tid")) == main_t and e.get("ph") == "X" and "dur" in e),
                key=lambda e: (e["ts"], -e["dur"]))
    selft = collections.Counter()
    stack = []
    busy = 0
    tcpu = 0
    t0 = None
    for e in xs:
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
            stack.pop()
        d = e.get("tdur", e["dur"])	# thread (CPU) time when the trace has it
        if stack:
            selft[stack[-1]["name"]] -= d
        else:
            busy += e["dur"]
            tcpu += e.get("tdur", 0)
            t0 = e["ts"] if t0 is None else t0
        selft[e["name"]] += d
        stack.append(e)
    print(f"main thread busy {busy / 1000:.0f} ms wall, {tcpu / 1000:.0f} ms CPU (top-level tasks)")
    for n, d in selft.most_common(25):
        if d > 2000:
            print(f"  {d / 1000:8.1f} ms  {n}")


main()
