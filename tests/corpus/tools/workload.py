#!/usr/bin/env python3
"""workload.py - memory-pressure workloads for recording corpus traces.

  workload.py read FILE            read FILE sequentially forever (page cache churn)
  workload.py anon MIB [touch]     allocate MIB of anonymous memory; with "touch",
                                   keep touching every page (hot anon), else sleep (cold)
  workload.py madvfree MIB         fill MIB of anon memory, MADV_FREE it, repeat (seed 002)
  workload.py write FILE MIB       write MIB of dirty data to FILE, truncate, repeat
Runs until killed."""
import mmap
import os
import sys
import time

MB = 1 << 20


def read_loop(path):
    buf = bytearray(MB)
    while True:
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass


def anon(mib, touch):
    m = mmap.mmap(-1, mib * MB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    page = mmap.PAGESIZE
    for off in range(0, mib * MB, page):
        m[off] = 1
    while True:
        if touch:
            for off in range(0, mib * MB, page):
                m[off] = (m[off] + 1) & 0xFF
        else:
            time.sleep(1)


def madvfree(mib):
    m = mmap.mmap(-1, mib * MB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    chunk = b"\x01" * MB
    while True:
        for off in range(0, mib * MB, MB):
            m[off:off + MB] = chunk
        m.madvise(mmap.MADV_FREE)
        time.sleep(0.5)


def write_loop(path, mib):
    chunk = b"\x02" * MB
    while True:
        with open(path, "wb") as f:
            for _ in range(mib):
                f.write(chunk)
        os.unlink(path)


def main():
    cmd = sys.argv[1]
    if cmd == "read":
        read_loop(sys.argv[2])
    elif cmd == "anon":
        anon(int(sys.argv[2]), len(sys.argv) > 3 and sys.argv[3] == "touch")
    elif cmd == "madvfree":
        madvfree(int(sys.argv[2]))
    elif cmd == "write":
        write_loop(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("unknown workload " + cmd)


if __name__ == "__main__":
    main()
