#!/usr/bin/env python3
"""fixture_tree.py OUTDIR N [--kind hybrid|v1|v2] - a recorded-looking --root tree
with N memory cgroups, for bench/agent_footprint.sh: what the agent costs per
cgroup when the kernel does not generate the files (regular files on disk,
read from the page cache), so the agent's own work shows.

Built at bench time (not committed) from the committed fixtures, which hold
the documented formats (tests/fixtures/gen_fixtures.py):

  hybrid  from k6.8-hybrid: /proc and /sys/kernel copied; N cgroup v1 memory
          directories under sys/fs/cgroup/memory, each with the files of the
          fixture's system.slice/ssh.service (memory.stat with total_*,
          usage, limit, memsw, swappiness, ...), and their twins under
          sys/fs/cgroup/unified holding memory.pressure only, as systemd's
          hybrid mode leaves them: 2N entries per sample
  v1      the same v1 directories without the v2 twins (a v1-only machine,
          or a hybrid one whose unified tree holds no cgroups): N entries,
          6 files each (~1,200 files for 200 cgroups)
  v2      from k6.1: N cgroup v2 directories under sys/fs/cgroup, each with
          the files of the fixture's system.slice/postgresql.service
          (memory.stat, pressure, current, max, swap, events, low/high):
          N entries per sample

The hierarchy is a systemd-like one, within the default --cgroup-depth 2:
system.slice, user.slice and kubepods at the top (counted in N), the rest
spread below them (services, user slices, pods).
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "tests", "fixtures")

KINDS = {
    # fixture, hierarchy dir below sys/fs/cgroup, template leaf, v2 twin dir
    "hybrid": ("k6.8-hybrid", "memory", "system.slice/ssh.service", "unified"),
    "v1": ("k6.8-hybrid", "memory", "system.slice/ssh.service", None),
    "v2": ("k6.1", "", "system.slice/postgresql.service", None),
}


def layout(n):
    """N relative cgroup paths, parents before children."""
    tops = ["system.slice", "user.slice", "kubepods"][:n]
    rest = n - len(tops)
    # most cgroups of a server are services; a few users; some pods
    nuser = min(rest // 20, 10)
    npod = rest // 10
    nsvc = rest - nuser - npod
    paths = list(tops)
    paths += ["system.slice/svc-%03d.service" % i for i in range(nsvc)]
    paths += ["user.slice/user-%d.slice" % (1000 + i) for i in range(nuser)]
    paths += ["kubepods/pod%03d" % i for i in range(npod)]
    return paths


def copy_files(src, dst):
    """The regular files of directory src (not its subdirectories) into dst."""
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        p = os.path.join(src, name)
        if os.path.isfile(p):
            shutil.copyfile(p, os.path.join(dst, name))


def build(out, n, kind):
    fixture, hier, leaf, twin = KINDS[kind]
    src = os.path.join(FIX, fixture)
    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(os.path.join(src, "proc"), os.path.join(out, "proc"))
    shutil.copytree(os.path.join(src, "sys", "kernel"), os.path.join(out, "sys", "kernel"))
    cg_src = os.path.join(src, "sys", "fs", "cgroup")
    hroot = os.path.join(out, "sys", "fs", "cgroup", hier)
    copy_files(os.path.join(cg_src, hier), hroot)
    if twin:
        copy_files(os.path.join(cg_src, twin), os.path.join(out, "sys", "fs", "cgroup", twin))
    for rel in layout(n):
        copy_files(os.path.join(cg_src, hier, leaf), os.path.join(hroot, rel))
        if twin:
            copy_files(os.path.join(cg_src, twin, leaf),
                       os.path.join(out, "sys", "fs", "cgroup", twin, rel))


def main():
    args = sys.argv[1:]
    kind = "hybrid"
    if "--kind" in args:
        i = args.index("--kind")
        kind = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2 or kind not in KINDS:
        sys.exit("usage: fixture_tree.py OUTDIR N [--kind hybrid|v1|v2]")
    build(args[0], int(args[1]), kind)


if __name__ == "__main__":
    main()
