#!/usr/bin/env python3
"""workload.py - memory-pressure workloads for recording corpus traces.

  workload.py read FILE            read FILE sequentially forever (page cache churn)
  workload.py anon MIB [touch]     allocate MIB of anonymous memory; with "touch",
                                   keep touching every page (hot anon), else sleep (cold)
  workload.py madvfree MIB         fill MIB of anon memory, MADV_FREE it, repeat (seed 002)
  workload.py write FILE MIB       write MIB of dirty data to FILE, truncate, repeat
  workload.py stream FILE MIBPS    read FILE once, sequentially, at MIBPS MiB/s (use-once
                                   page cache: a backup or log scan), then sleep
  workload.py fsyncwrite FILE MIB CHUNK  write MIB to FILE, fsync after every CHUNK MiB,
                                   unlink, repeat (a database checkpoint, a copy with sync)
  workload.py swapburst MIB HOT    touch MIB of anon once (in a smaller cgroup: a burst
                                   of swap-out), then keep touching only its first HOT MiB
                                   every second (swapped in once, then resident: settles)
  workload.py cpu                  busy loop, no memory (a CPU-bound service)
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


def stream(path, mibps):
    buf = bytearray(MB)
    start = time.monotonic()
    done = 0
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buf):
            done += 1
            ahead = start + done / mibps - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
    while True:
        time.sleep(1)


def fsync_write(path, mib, chunk):
    data = b"\x03" * MB
    while True:
        with open(path, "wb") as f:
            for i in range(1, mib + 1):
                f.write(data)
                if i % chunk == 0:
                    f.flush()
                    os.fsync(f.fileno())
        os.unlink(path)


def swapburst(mib, hot):
    m = mmap.mmap(-1, mib * MB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    page = mmap.PAGESIZE
    for off in range(0, mib * MB, page):
        m[off] = 1
    while True:
        for off in range(0, hot * MB, page):
            m[off] = (m[off] + 1) & 0xFF
        time.sleep(1)


def cpu():
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF


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
    elif cmd == "stream":
        stream(sys.argv[2], float(sys.argv[3]))
    elif cmd == "fsyncwrite":
        fsync_write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "swapburst":
        swapburst(int(sys.argv[2]), int(sys.argv[3]))
    elif cmd == "cpu":
        cpu()
    else:
        sys.exit("unknown workload " + cmd)


if __name__ == "__main__":
    main()
