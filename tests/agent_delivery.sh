#!/usr/bin/env bash
# agent_delivery.sh - the real agent against a scripted receiver
# (tests/fixtures/receiver.py): every sample arrives exactly once through
# outages (503), refusals (400: only the refused samples are dropped, and
# counted), size limits (413: batches split), 401 (kept), 429 with
# Retry-After (honoured), kill -9 and restart (the spool survives), and a
# full spool (the newest samples are kept, the drop is logged). Syncing: a
# sample delivered in its cycle is never fdatasync'ed, an undelivered one
# is, and kill -9 while samples are in flight (written, not synced) loses
# none of them. Streamed bodies: in the steady state a sample's request
# body is built while it is written to the spool (not read back); one
# posted that way whose answer the agent never saw (kill -9) is re-posted
# from the spool after a restart and stored once.
set -uo pipefail
cd "$(dirname "$0")/.."
export AGENT=${AGENT:-$PWD/bin/vmscope-agent}
export PORT=$(scripts/freeport.sh)
export TMPD=$(mktemp -d /tmp/vmscope-deliv.XXXXXX)
. tests/e2e/_logtails.sh
trap 'rc=$?; [ "$rc" = 0 ] || log_tails "$TMPD"; [ -n "${KEEP:-}" ] || rm -rf "$TMPD"' EXIT
python3 - <<'PYEOF'
import json, os, re, signal, subprocess, sys, time, urllib.request

AGENT, PORT, TMPD = os.environ["AGENT"], os.environ["PORT"], os.environ["TMPD"]
BASE = f"http://127.0.0.1:{PORT}"
TICK = 0.2
passed = failed = 0
procs = []


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}")


def control(**kw):
    req = urllib.request.Request(BASE + "/control", data=json.dumps(kw).encode(), method="POST")
    urllib.request.urlopen(req).read()


def stats():
    return json.loads(urllib.request.urlopen(BASE + "/stats").read())


def start_agent(name, spool, *extra, token="t1", interval=TICK):
    log = open(f"{TMPD}/{name}.log", "a")
    p = subprocess.Popen([AGENT, "--server", BASE, "--token", token, "--interval", str(interval),
                          "--host", name, "--root", "tests/fixtures/k6.1", "--cgroup-depth", "1",
                          "--spool", spool, "--timeout", "2", "--log-level", "debug", *extra],
                         stdout=log, stderr=log)
    procs.append(p)
    return p


def stop_agent(p, sig=signal.SIGTERM):
    p.send_signal(sig)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    return p.returncode


def totals(name):
    """The agent's final "totals:" line as a dict."""
    text = open(f"{TMPD}/{name}.log").read()
    line = [l for l in text.splitlines() if "totals:" in l][-1]
    words = line.split("totals:")[1].replace(",", "").split()
    return {"taken": int(words[0]), "skipped": int(words[3]), "delivered": int(words[5]),
            "refused": int(words[7]), "dropped": int(words[12]), "left": int(words[16])}, text


def ticks(ms_list, tick=TICK):
    return [int(ms // (tick * 1000)) for ms in ms_list]


def wait_until(cond, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def spooled_ts(spool):
    """ts (ms) of the records in a spool after its head."""
    head = open(f"{spool}/head").read().split() if os.path.exists(f"{spool}/head") else ["0", "0"]
    hseq, hoff = int(head[0]), int(head[1])
    out = []
    for name in sorted(os.listdir(spool)):
        if not name.startswith("seg-"):
            continue
        seq = int(name[4:])
        if seq < hseq:
            continue
        data = open(f"{spool}/{name}", "rb").read()
        if seq == hseq:
            data = data[hoff:]
        for line in data.split(b"\n"):
            try:
                out.append(round(json.loads(line)["ts"] * 1000))
            except ValueError:
                pass    # empty, or being written right now
    return out


def drained(spool):
    """At most the sample of the current interval is still spooled."""
    try:
        return len(spooled_ts(spool)) <= 1 and len(stats()["accepted"]) > 0
    except (OSError, ValueError):
        return False


recv = subprocess.Popen([sys.executable, "tests/fixtures/receiver.py", PORT])
procs.append(recv)
def receiver_up():
    try:
        return urllib.request.urlopen(BASE + "/stats").status == 200
    except OSError:
        return False


if not wait_until(receiver_up, 20):
    recv.kill()
    print("receiver did not start\nagent_delivery: 0 passed, 1 failed")
    sys.exit(1)

try:
    # --- A: outage, then refusals and a batch size limit
    control(status=503)
    a = start_agent("a", f"{TMPD}/spool-a", "--batch-max", "50")
    time.sleep(2.5)
    check(len(stats()["accepted"]) == 0, "nothing accepted during the 503 outage")
    control(max_batch=4, refuse=[5, 2])
    # the agent is in backoff (up to 8 s after a 2.5 s outage): wait for it
    # to catch up, then a little longer so that splits get exercised anew
    check(wait_until(lambda: drained(f"{TMPD}/spool-a"), 25), "agent a catches up after the outage")
    time.sleep(1.0)
    rc = stop_agent(a)
    t, log = totals("a")
    st = stats()
    acc = [ms for ms in st["accepted"]]
    acc_t = ticks(acc)
    ref_t = sorted(set(ticks(st["refused"])))
    reqs = st["requests"]
    check(rc == 0, "agent a exits 0 on SIGTERM")
    if t["skipped"]:
        print(f"note: the agent skipped {t['skipped']} samples (a loaded machine); gaps allowed")
    check(st["dups"] == 0, f"no duplicates ({st['dups']})")
    check(any(r[1] == 503 for r in reqs) and any(r[1] == 413 for r in reqs)
          and any(r[1] == 400 for r in reqs), "503, 413 and 400 were all exercised")
    check(all(r[2] <= 4 for r in reqs if r[1] == 202), "accepted batches respect the 413 limit")
    check(all(k % 5 != 2 for k in acc_t), "no refused sample was stored")
    check(t["refused"] == len(ref_t) and t["refused"] > 0,
          f"agent counted {t['refused']} refused, receiver refused {len(ref_t)} distinct")
    check("server refused a sample" in log, "refused samples are logged")
    left_t = ticks(spooled_ts(f"{TMPD}/spool-a"))
    allt = sorted(acc_t + ref_t + left_t)
    # the first sample is taken at start, the next one on the first aligned
    # tick at least half a tick later: the tick right after the first may
    # be passed over, no other
    rest = allt[1:]
    check(len(set(allt)) == t["taken"] and
          (t["skipped"] > 0 or (rest == list(range(rest[0], rest[0] + len(rest))) and
                                1 <= rest[0] - allt[0] <= 2)),
          f"every sample taken ({t['taken']}) was stored ({len(acc_t)}), refused ({len(ref_t)}) "
          f"or is still spooled ({len(left_t)}), no gaps")
    check(t["delivered"] == len(acc) and len(left_t) <= 2, "spool drained, delivered == stored")
    check(any(r[3] for r in reqs), "big batches are gzip'ed")

    # --- B: kill -9 during an outage, restart: the spool survives
    before = len(st["accepted"])
    control(status=503)
    b = start_agent("b", f"{TMPD}/spool-b")
    # until a few samples are spooled (a fixed sleep found none when a
    # loaded machine started the sanitizer build slowly)
    wait_until(lambda: os.path.isdir(f"{TMPD}/spool-b") and len(spooled_ts(f"{TMPD}/spool-b")) >= 6, 30)
    stop_agent(b, signal.SIGKILL)
    pending = spooled_ts(f"{TMPD}/spool-b")
    check(len(pending) >= 5, f"samples spooled before kill -9 ({len(pending)})")
    control()
    b2 = start_agent("b", f"{TMPD}/spool-b")
    wait_until(lambda: set(pending) <= set(stats()["accepted"]), 8)
    time.sleep(0.5)
    stop_agent(b2)
    t, log = totals("b")
    st = stats()
    got = st["accepted"][before:]
    left = spooled_ts(f"{TMPD}/spool-b")	# taken just before SIGTERM, not posted yet
    check(set(pending) <= set(got), "every sample spooled before kill -9 arrived after restart")
    check(st["dups"] == 0 and not set(left) & set(got) and
          len(got) + len(left) == len(pending) + t["taken"],
          f"exactly once: {len(got)} stored + {len(left)} still spooled = {len(pending)} from before "
          f"+ {t['taken']} new")
    check("holds" in log, "restart reports the spool it found")

    # --- C: 401 keeps samples, logged loudly, delivered once the token works
    before = len(st["accepted"])
    control(token="right")
    c = start_agent("c", f"{TMPD}/spool-c", token="wrong")
    time.sleep(1.5)
    check(len(stats()["accepted"]) == before, "nothing accepted with a wrong token")
    stop_agent(c)
    t1, log = totals("c")
    check("error: server refused the token" in log, "401 logged at error level")
    check(t1["left"] > 0, "samples kept in the spool after 401")
    control()
    c2 = start_agent("c", f"{TMPD}/spool-c", token="wrong")
    wait_until(lambda: len(stats()["accepted"]) >= before + t1["taken"], 8)
    stop_agent(c2)
    t2, _ = totals("c")
    st = stats()
    check(len(st["accepted"]) - before == t1["taken"] + t2["taken"] and st["dups"] == 0,
          "all samples of the 401 period arrived once the server took them")

    # --- D: 429 with Retry-After is honoured
    before = len(st["accepted"])
    nreq = len(st["requests"])
    control(status=429, retry_after=2)
    d = start_agent("d", f"{TMPD}/spool-d")
    time.sleep(5.0)
    control()
    wait_until(lambda: drained(f"{TMPD}/spool-d"), 25)
    stop_agent(d)
    t, _ = totals("d")
    st = stats()
    r429 = [r[0] for r in st["requests"][nreq:] if r[1] == 429]
    gaps = [b - a for a, b in zip(r429, r429[1:])]
    check(len(r429) >= 2 and min(gaps) >= 1.9, f"retries wait for Retry-After (gaps {[round(g, 2) for g in gaps]})")
    check(len(st["accepted"]) - before == t["taken"] and st["dups"] == 0, "all samples arrived after 429")

    # --- E: spool full keeps the newest samples and logs the drop
    before = len(st["accepted"])
    control(status=503)
    e = start_agent("e", f"{TMPD}/spool-e", "--spool-max-bytes", "64k")
    time.sleep(5.0)
    control()
    check(wait_until(lambda: drained(f"{TMPD}/spool-e"), 25), "agent e catches up after the outage")
    stop_agent(e)
    t, log = totals("e")
    st = stats()
    got = sorted(ticks(st["accepted"][before:]))
    check(t["dropped"] > 0 and "spool full" in log, f"spool full: {t['dropped']} dropped and logged")
    check(len(got) + t["dropped"] == t["taken"], f"stored {len(got)} + dropped {t['dropped']} = taken {t['taken']}")
    newest = int(max(spooled_ts(f"{TMPD}/spool-e") + st["accepted"][before:]) // (TICK * 1000))
    check(got[-1] >= newest - 1 and (t["skipped"] > 0 or
          got == list(range(got[-1] - len(got) + 1, got[-1] + 1))),
          "the stored ones are the newest, no gaps")
    check(st["dups"] == 0, "no duplicates")
    spool_bytes = sum(os.path.getsize(f"{TMPD}/spool-e/{n}") for n in os.listdir(f"{TMPD}/spool-e")
                      if n.startswith("seg-"))
    check(spool_bytes <= 64 * 1024 + 16384, f"spool stays near its bound ({spool_bytes} bytes)")

    # --- F: syncing only what stays undelivered
    def run_counting_syncs(name, secs):
        """An agent run for secs against the receiver as set: its totals
        and how many spool syncs it logged at the stop."""
        a = start_agent(name, f"{TMPD}/spool-{name}")
        time.sleep(secs)
        stop_agent(a)
        t, log = totals(name)
        return t, int(re.search(r"(\d+) spool syncs", log).group(1))

    control()
    t, syncs = run_counting_syncs("f", 2.0)
    # delivered within its cycle: no fdatasync (before: one per sample)
    check(t["taken"] >= 5 and syncs <= t["taken"] // 2,
          f"delivered samples are not synced ({syncs} syncs for {t['taken']} samples)")
    nreq, nstream = map(int, re.search(r"(\d+) requests \((\d+) built while", open(f"{TMPD}/f.log").read()).groups())
    check(nreq >= 5 and nstream >= nreq - 2,
          f"steady state: request bodies built while the sample was written ({nstream} of {nreq})")
    # requests answered within the grace but after the next sample was
    # taken (they overlap it): still no sample waits 1 s, so none is synced
    # but what is left in flight at the stop (before: the next sample kept
    # the spool "unsynced" across accepted ones, and a request answered in
    # a step left the sample just taken looking undelivered: 14 syncs for
    # 25 samples here)
    control(delay=0.3)
    t, syncs = run_counting_syncs("f3", 4.0)
    check(t["taken"] >= 10 and syncs <= t["taken"] // 5,
          f"samples accepted within the grace are not synced when requests overlap the "
          f"next sample ({syncs} syncs for {t['taken']} samples)")
    control(status=503)
    t, syncs = run_counting_syncs("f2", 2.0)
    check(t["delivered"] == 0 and syncs >= t["taken"] - 1 and t["taken"] >= 5,
          f"undelivered samples are synced ({syncs} syncs for {t['taken']} samples)")
    # kill -9 while requests are in flight: their samples are written, not
    # synced (in the page cache, which a killed process does not lose)
    before = len(stats()["accepted"])
    control(delay=0.6)
    g = start_agent("g", f"{TMPD}/spool-g")
    time.sleep(2.0)
    wait_until(lambda: os.path.isdir(f"{TMPD}/spool-g") and len(spooled_ts(f"{TMPD}/spool-g")) >= 1, 30)
    stop_agent(g, signal.SIGKILL)
    pending = spooled_ts(f"{TMPD}/spool-g")
    dups0 = stats()["dups"]
    check(len(pending) >= 1, f"samples in flight at kill -9 ({len(pending)})")
    control()
    g2 = start_agent("g", f"{TMPD}/spool-g")
    wait_until(lambda: set(pending) <= set(stats()["accepted"]), 8)
    time.sleep(0.5)
    stop_agent(g2)
    t, log = totals("g")
    st = stats()
    got = st["accepted"][before:]
    left = spooled_ts(f"{TMPD}/spool-g")
    check(set(pending) <= set(got), "every sample spooled before kill -9 arrived after restart")
    # a batch answered by the receiver but not by the agent's head is
    # re-posted: counted once (a duplicate), never lost
    check(len(set(got)) == len(got) and not set(left) & set(got) and
          len(got) + len(left) >= len(pending) + t["taken"] - 1 and st["dups"] - dups0 <= 2 * 50,
          f"exactly once: {len(got)} stored + {len(left)} still spooled, {len(pending)} from before "
          f"+ {t['taken']} new, {st['dups'] - dups0} re-posted duplicates")

    # --- H: a sample posted from its streamed body, answered by the
    # receiver but not seen by the agent (kill -9 during the answer's
    # delay), is re-posted from the spool after the restart: stored once
    control(delay=1.5)
    dups0 = stats()["dups"]
    before = len(stats()["accepted"])
    h = start_agent("h", f"{TMPD}/spool-h")
    check(wait_until(lambda: len(stats()["accepted"]) > before, 20), "first streamed sample reached the receiver")
    stop_agent(h, signal.SIGKILL)
    first = stats()["accepted"][before]
    pending = spooled_ts(f"{TMPD}/spool-h")
    check(first in pending, "the sample posted from memory is still spooled (its answer never seen)")
    control()
    h2 = start_agent("h", f"{TMPD}/spool-h")
    wait_until(lambda: stats()["dups"] > dups0, 10)
    time.sleep(1.0)
    stop_agent(h2)
    t, log = totals("h")
    st = stats()
    got = st["accepted"][before:]
    check(st["dups"] - dups0 >= 1 and got.count(first) == 1,
          f"re-posted from the spool after restart, stored once ({st['dups'] - dups0} duplicates)")
    check(set(pending) <= set(got) and len(set(got)) == len(got),
          "every spooled sample arrived exactly once")
    nreq, nstream = map(int, re.search(r"(\d+) requests \((\d+) built while",
                                  [l for l in log.splitlines() if "totals:" in l][-1]).groups())
    check(nstream >= 1 and nreq > nstream, f"after the restart: the backlog read from the spool, then streamed ({nstream} of {nreq})")
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()

print(f"agent_delivery: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PYEOF
