"""The detection service over HTTP on loopback (issue 18): one uvicorn worker, 1,000
registered expressions, the database on disk.

Prints single-event requests per second (target >= 1,000) and events per second in batches of
100 (target >= 20,000), each with 1 and with 8 concurrent clients, and first the floor of the
machine: ``GET /health`` (no engine, no database) per second with one client, what loopback
HTTP with uvicorn costs here whatever the service does. The server runs as
``xmlevents serve`` in its own process; the clients are keep-alive. The machine is shared and
its speed varies from one minute to the next: each figure is the best of ``--repeat`` runs;
note the load.

    python3 bench/bench_service_http.py [--expressions 1000] [--seconds 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from served import served

TOKEN = {"Authorization": "Bearer bench"}


def health(port: int, seconds: float) -> float:
    """Requests per second of ``GET /health`` from one keep-alive client."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        conn.request("GET", "/health")
        r = conn.getresponse()
        r.read()
        n += 1
    conn.close()
    return n / (time.perf_counter() - start)


def run(port: int, clients: int, seconds: float, batch: int) -> float:
    """Events per second from ``clients`` threads posting ``batch`` events per request (the
    standard library's keep-alive client: httpx would take more of the two cores than the
    server it measures)."""
    def work(i: int) -> int:
        sent = 0
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {**TOKEN, "Content-Type": "application/json"}
        bodies = []
        for n in range(0, 10_000, batch):
            events = [{"type": "newCD" if (n + k) % 2 else "newMusicDVD",
                       "params": {"title": f"t{(n + k) % 97}",
                                  "artist": f"artist {(n + k) % 7}"}} for k in range(batch)]
            bodies.append(json.dumps(events[0] if batch == 1 else events).encode())
        end = time.perf_counter() + seconds
        n = 0
        while time.perf_counter() < end:
            conn.request("POST", "/events", bodies[n % len(bodies)], headers)
            r = conn.getresponse()
            r.read()
            assert r.status == 202, r.status
            sent += batch
            n += 1
        conn.close()
        return sent

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        total = sum(pool.map(work, range(clients)))
    return total / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expressions", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, served(tmp, "bench", args.expressions) as (
            port, _, _):
        print(f"{args.expressions:,} expressions registered; load {os.getloadavg()[0]:.2f}")
        best = range(args.repeat)
        floor = max(health(port, args.seconds) for _ in best)
        print(f"  floor: GET /health {floor:8,.0f}/s (one client)")
        for clients in (1, 8):
            single = max(run(port, clients, args.seconds, 1) for _ in best)
            batched = max(run(port, clients, args.seconds, 100) for _ in best)
            print(f"  {clients} client(s): single-event requests {single:8,.0f}/s   "
                  f"events in batches of 100 {batched:9,.0f}/s")
        print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
