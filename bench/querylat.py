#!/usr/bin/env python3
"""querylat.py URL N - GETs URL N times over one keep-alive connection and
prints {"url","n","p50_ms","p99_ms","max_ms","bytes"} as JSON. Fails when an
answer is not 200, so a broken endpoint cannot pass as a fast one."""
import http.client, json, sys, time, urllib.parse

url, n = sys.argv[1], int(sys.argv[2])
u = urllib.parse.urlsplit(url)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
path = u.path + ("?" + u.query if u.query else "")
lat, size = [], 0
for i in range(n + 2):
    t0 = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    dt = (time.perf_counter() - t0) * 1000
    if r.status != 200:
        sys.exit(f"querylat: {url} answered {r.status}: {body[:200]!r}")
    if i >= 2:  # the first two warm caches
        lat.append(dt)
    size = len(body)
lat.sort()
print(json.dumps({"url": path, "n": n, "p50_ms": round(lat[len(lat) // 2], 2),
                  "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))], 2),
                  "max_ms": round(lat[-1], 2), "bytes": size}))
