#!/usr/bin/env python3
"""_fleet.py - many simulated agents with an agent's delivery semantics, for
the fault tests (test_pg_restart.sh, make soak).

Each simulated agent is a thread that takes one numbered sample per second
(host sim-N, ts = start + k), keeps every sample not yet answered 202 in
its own queue, and posts the queue (oldest first, up to 60 a batch) after
each tick. 503, 429, 5xx and connection errors keep the samples and retry
after a backoff (Retry-After when given), like bin/vmscope-agent; any other
answer is a failure of the test. After --duration the agents stop sampling
and drain until --drain seconds have passed.

Prints one JSON line: taken and accepted per host, answers by status,
whether every 503 carried Retry-After, and left (samples still queued).
Usage: _fleet.py URL TOKEN AGENTS DURATION DRAIN
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse

url, token = sys.argv[1], sys.argv[2]
nagents, duration, drain = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
u = urllib.parse.urlparse(url)
lock = threading.Lock()
statuses = {}
retry_after_missing = 0
unexpected = []
result = {}
start = int(time.time())


def sample(host, k):
    ts = start + k
    return ('{"host":"%s","boot_id":"b-1","ts":%d,"interval_s":1,"kernel":"6.1.0-fleet",'
            '"page_size":4096,"vmstat":{"pgpgin":%d,"pgscan_kswapd":%d,"pgsteal_kswapd":%d,'
            '"workingset_refault_file":%d,"pswpin":0,"pswpout":0},'
            '"meminfo":{"MemTotal":16000000,"MemFree":%d},'
            '"psi":{"memory":{"some":{"avg10":0.5,"avg60":0.2,"avg300":0.1,"total":%d},'
            '"full":{"avg10":0.1,"avg60":0.0,"avg300":0.0,"total":%d}}}}'
            % (host, ts, 1000 * k, 20 * k, 10 * k, k, 1000000 + k, 100 * k, 10 * k))


def count(status):
    with lock:
        statuses[status] = statuses.get(status, 0) + 1


def agent(i):
    global retry_after_missing
    host = "sim-%d" % i
    queue = []          # sample numbers not yet acknowledged
    taken = accepted = 0
    conn = None
    t_end = time.time() + duration
    t_drain = t_end + drain
    next_tick = time.time() + (i % 10) / 10.0  # spread the fleet over the second
    backoff_until = 0.0
    backoff = 0.5
    while True:
        now = time.time()
        if now < t_end and now >= next_tick:
            queue.append(taken)
            taken += 1
            next_tick += 1.0
        if not queue and now >= t_end:
            break
        if now >= t_drain:
            break
        if queue and now >= backoff_until:
            batch = queue[:60]
            body = "[" + ",".join(sample(host, k) for k in batch) + "]"
            status, retry = None, None
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
                conn.request("POST", "/api/v1/samples", body,
                             {"Authorization": "Bearer " + token,
                              "Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                status, retry = resp.status, resp.getheader("Retry-After")
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException):
                status = "conn"
                if conn is not None:
                    conn.close()
                conn = None
            count(status)
            if status == 202:
                del queue[:len(batch)]
                accepted += len(batch)
                backoff = 0.5
                continue
            if status == 503 and retry is None:
                with lock:
                    retry_after_missing += 1
            if status in (503, 429, 500, 502, "conn"):
                wait = float(retry) if retry else backoff
                backoff = min(backoff * 2, 4.0)
                backoff_until = time.time() + min(wait, 4.0)
            else:
                with lock:
                    unexpected.append("%s: %s" % (host, status))
                break
        wake = t_drain
        if now < t_end:
            wake = min(wake, next_tick)
        if queue:
            wake = min(wake, max(backoff_until, now))
        time.sleep(max(0.005, wake - time.time()))
    if conn is not None:
        conn.close()
    with lock:
        result[host] = {"taken": taken, "accepted": accepted, "left": len(queue),
                        "first_ts": start, "last_ts": start + taken - 1}


threads = [threading.Thread(target=agent, args=(i,)) for i in range(nagents)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({
    "hosts": result,
    "taken": sum(h["taken"] for h in result.values()),
    "accepted": sum(h["accepted"] for h in result.values()),
    "left": sum(h["left"] for h in result.values()),
    "statuses": {str(k): v for k, v in statuses.items()},
    "retry_after_missing": retry_after_missing,
    "unexpected": unexpected[:20],
}))
