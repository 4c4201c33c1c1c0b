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
  workload.py anonwalk MIB MIBPS   fill MIB of anon with pages half random, half zero
                                   (compressible about 2:1, as program data is), then
                                   write one byte of a random page of it at MIBPS MiB/s
                                   (0: as fast as it can): in a smaller cgroup the
                                   pages not resident are swapped in at a steady rate
  workload.py grow MIB STEP STEP_S HOT  anon growing by STEP MiB every STEP_S seconds up
                                   to MIB (virtual machines booting), each page written
                                   once; then only the first HOT MiB are touched, every
                                   second (what was written once is cold)
  workload.py readn FILE N [MIB PERIOD_S]  read FILE N times (a cache nobody needs;
                                   N >= 2 activates its pages: the second access of an
                                   inactive page moves it to the active list), then every
                                   PERIOD_S seconds read its first MIB again (rarely re-read)
  workload.py mapcache FILE N [MIB PERIOD_S]  as readn, and the file is also mapped
                                   (MAP_SHARED) and each page touched once, so the cache
                                   is mapped: a machine whose DAMON pages out cold
                                   unmapped cache (DAMOS pageout, "unmapped" filter)
                                   keeps it; re-reads go through the mapping
  workload.py streamloop FILE MIBPS  read FILE at MIBPS MiB/s, drop it from the cache
                                   (FADV_DONTNEED: no refault on the next pass), repeat
  workload.py fsyncwrite FILE MIB CHUNK [MIBPS]  as fsyncwrite, at most MIBPS MiB/s
Runs until killed."""
import mmap
import os
import random
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


def fsync_write(path, mib, chunk, mibps=0.0):
    data = b"\x03" * MB
    start = time.monotonic()
    done = 0
    while True:
        with open(path, "wb") as f:
            for i in range(1, mib + 1):
                f.write(data)
                done += 1
                if i % chunk == 0:
                    f.flush()
                    os.fsync(f.fileno())
                if mibps > 0:
                    pace(start, done / mibps)
        os.unlink(path)


def pace(start, due):
    """Sleeps until `due` seconds after start (monotonic), if ahead."""
    ahead = start + due - time.monotonic()
    if ahead > 0:
        time.sleep(ahead)


def fill_half_random(m, first_page, pages):
    """Pages of 2 KiB random bytes then 2 KiB of zeros: compressible about 2:1."""
    page = mmap.PAGESIZE
    half = page // 2
    rnd = os.urandom(16 * MB)
    for i in range(first_page, first_page + pages):
        off = (i * 4093 * 8) % (len(rnd) - half)
        m[i * page:i * page + half] = rnd[off:off + half]


def anon_walk(mib, mibps):
    page = mmap.PAGESIZE
    npages = mib * MB // page
    m = mmap.mmap(-1, mib * MB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    fill_half_random(m, 0, npages)
    rate = mibps * MB / page
    start = time.monotonic()
    done = 0
    rnd = random.Random(1)
    while True:
        for _ in range(256):
            off = rnd.randrange(npages) * page + page - 1
            m[off] = (m[off] + 1) & 0xFF
        done += 256
        if rate > 0:
            pace(start, done / rate)


def grow(mib, step, step_s, hot):
    page = mmap.PAGESIZE
    m = mmap.mmap(-1, mib * MB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    have = 0
    nxt = time.monotonic()
    while True:
        if have < mib and time.monotonic() >= nxt:
            n = min(step, mib - have)
            fill_half_random(m, have * MB // page, n * MB // page)
            have += n
            nxt += step_s
        for off in range(0, min(hot, have) * MB, page):
            m[off + page - 1] = (m[off + page - 1] + 1) & 0xFF
        time.sleep(1)


def read_file(path, first_mib=None):
    buf = bytearray(MB)
    left = first_mib
    with open(path, "rb", buffering=0) as f:
        while (left is None or left > 0) and f.readinto(buf):
            if left is not None:
                left -= 1


def read_n(path, n, mib, period):
    for _ in range(n):
        read_file(path)
    while True:
        time.sleep(period if period > 0 else 3600)
        if mib > 0 and period > 0:
            read_file(path, mib)


def map_cache(path, n, mib, period):
    for _ in range(n):
        read_file(path)
    page = mmap.PAGESIZE
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    total = 0
    for off in range(0, len(m), page):
        total += m[off]
    while True:
        time.sleep(period if period > 0 else 3600)
        if mib > 0 and period > 0:
            for off in range(0, min(len(m), mib * MB), page):
                total += m[off]


def stream_loop(path, mibps):
    buf = bytearray(MB)
    while True:
        start = time.monotonic()
        done = 0
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buf):
                done += 1
                pace(start, done / mibps)
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


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
        fsync_write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                    float(sys.argv[5]) if len(sys.argv) > 5 else 0.0)
    elif cmd == "anonwalk":
        anon_walk(int(sys.argv[2]), float(sys.argv[3]))
    elif cmd == "grow":
        grow(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "readn":
        read_n(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 0,
               float(sys.argv[5]) if len(sys.argv) > 5 else 0.0)
    elif cmd == "mapcache":
        map_cache(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 0,
                  float(sys.argv[5]) if len(sys.argv) > 5 else 0.0)
    elif cmd == "streamloop":
        stream_loop(sys.argv[2], float(sys.argv[3]))
    elif cmd == "swapburst":
        swapburst(int(sys.argv[2]), int(sys.argv[3]))
    elif cmd == "cpu":
        cpu()
    else:
        sys.exit("unknown workload " + cmd)


if __name__ == "__main__":
    main()
