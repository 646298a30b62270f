"""The detection service's engine in process (issue 18): signals per second against the number
of registered expressions, and the event graph's size with and without sharing; the service's
state at 10,000 expressions (issue 31, item 7): restart time and GET /expressions/{id}.

Prints, for 10, 1,000 and 10,000 registered expressions of which only a few can take each
signal, the signals per second and the time per signal against the 10-expression run (the
target: 10,000 within 1.5x of 10, i.e. flat in the number of expressions that do not match);
then the node counts of 1,000 random expressions over 50 event types built with and without
sharing. The machine is shared: compare the ratios of one run, not the seconds.

``--state N`` (default 10,000; 0: skip) writes a database whose log holds N live
registrations (one client's), as many registered and deleted again, and 100,000 signals in
requests of 100, then prints the seconds of two starts of the service on it in process (the
first replays the whole history, and compacts the log where the code does; the second
replays what the first left) and, over HTTP with ``xmlevents serve`` started on it, the
time of ``GET /expressions/{id}`` (mean and median of 200) and of the first page of
``GET /expressions``. It uses only what the service had before issue 31, so the same script
run by an interpreter whose ``xmlevents`` is older code prints the figures before:

    python3 bench/bench_service.py [--signals 20000] [--seed 1] [--state 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import http.client
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from xmlevents.service import Engine


def per_signal(expressions: int, signals: int) -> float:
    """Seconds per signal with ``expressions`` registered, each signal taken by two."""
    engine = Engine()
    for i in range(expressions):
        engine.register(f'SEQ(newCD(title=T, artist="artist {i}"), '
                        f'newMusicDVD(title=T, artist="artist {i}"))')
    batch = [("newCD" if k % 2 == 0 else "newMusicDVD",
              {"title": f"t{k // 2 % 50}", "artist": f"artist {k // 2 % 2}"})
             for k in range(signals)]
    gc.collect()
    start = time.perf_counter()
    detected = 0
    for etype, params in batch:
        detected += len(engine.signal(etype, params))
    elapsed = time.perf_counter() - start
    assert detected == signals // 2, detected  # every DVD completes its CD's SEQ
    return elapsed / signals


def random_expression(rng: random.Random, types: int) -> str:
    def atom() -> str:
        return (f'e{rng.randrange(types)}(x=X{rng.randrange(2)}, '
                f'k="{rng.randrange(3)}")')

    def sub(depth: int) -> str:
        if depth == 0 or rng.random() < 0.3:
            return atom()
        op = rng.choice(["OR", "SEQ", "ANY"])
        left, right = sub(depth - 1), sub(depth - 1)
        return f"ANY(1, {left}, {right})" if op == "ANY" else f"{op}({left}, {right})"
    return sub(3)


def write_history(db: str, live: int, churn: int, signals: int, seed: int) -> list[str]:
    """The database of ``--state`` (see the module), written straight into the journal;
    returns the live expressions' ids."""
    from xmlevents.service._db import Journal

    rng = random.Random(seed)
    journal = Journal(db)

    def body(ident: str, i: int) -> dict[str, object]:
        text = (f'SEQ(newCD(title=T, artist="artist {i}"), '
                f'newMusicDVD(title=T, artist="artist {i}"))')
        return {"id": ident, "format": "text", "source": text, "variables": {},
                "callback": None, "text": text}

    ids = []
    for i in range(live + churn):
        ident = f"x{i:08x}"
        journal.write([("register", "bench", body(ident, i))], [],
                      add=(ident, "bench", body(ident, i)))
        if i % 2 and i < 2 * churn:  # every other one of the first 2 * churn goes
            journal.write([("unregister", "bench", {"id": ident})], [], remove=ident)
        else:
            ids.append(ident)
    for _ in range(signals // 100):
        batch = [{"type": "newCD", "params": {"title": f"t{rng.randrange(2)}",
                                              "artist": f"artist {2 * rng.randrange(live)}"}}
                 for _ in range(100)]
        journal.write([("signals", "bench", batch)], [])
    journal.close()
    return ids


def start_seconds(db: str) -> tuple[float, float, int]:
    """Seconds to open a service on ``db`` (the log replayed), on the clock and of CPU (the
    process's: less sensitive to a shared machine's load), and its log's rows after."""
    import sqlite3

    from xmlevents.service import Service

    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    service = Service(db)
    took, cpu = time.perf_counter() - started, time.process_time() - cpu
    asyncio.run(_stop(service))
    con = sqlite3.connect(db)
    rows = con.execute("SELECT COUNT(*) FROM log").fetchone()[0]
    con.close()
    return took, cpu, int(rows)


async def _stop(service: object) -> None:
    await service.stop()  # type: ignore[attr-defined]


def http_figures(db: str, ids: list[str], seed: int) -> tuple[float, float, float, int]:
    """(mean, median) ms of GET /expressions/{id} over 200 random ids, and the ms and bytes
    of GET /expressions (its first page, or the whole listing where it has no pages)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "xmlevents", "serve", "--port", str(port),
                             "--db", db, "--token", "bench=bench"], stderr=subprocess.DEVNULL)
    headers = {"Authorization": "Bearer bench"}
    try:
        end = time.monotonic() + 300
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                conn.request("GET", "/health")
                conn.getresponse().read()
                break
            except OSError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.1)
        rng = random.Random(seed)
        times = []
        for ident in rng.sample(ids, 200):
            started = time.perf_counter()
            conn.request("GET", f"/expressions/{ident}", headers=headers)
            r = conn.getresponse()
            r.read()
            times.append(time.perf_counter() - started)
            assert r.status == 200, r.status
        started = time.perf_counter()
        conn.request("GET", "/expressions", headers=headers)
        listing = conn.getresponse().read()
        listed = time.perf_counter() - started
        conn.close()
    finally:
        proc.terminate()
        proc.wait(30)
    return (statistics.mean(times) * 1e3, statistics.median(times) * 1e3, listed * 1e3,
            len(listing))


def state(live: int, seed: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "state.db")
        started = time.perf_counter()
        ids = write_history(db, live, live, 100_000, seed)
        print(f"the service's state: {live:,} live expressions, {live:,} deleted, 100,000 "
              f"signals ({os.path.getsize(db) / 1e6:.0f} MB, written in "
              f"{time.perf_counter() - started:.1f} s); load {os.getloadavg()[0]:.2f}")
        for which in ("first start (the whole history)", "next start", "next start"):
            took, cpu, rows = start_seconds(db)
            print(f"  {which}: {took:6.2f} s ({cpu:6.2f} s of CPU); the log then holds "
                  f"{rows:,} rows")
        mean, median, listed, size = http_figures(db, ids, seed)
        print(f"  GET /expressions/{{id}}: {mean:.2f} ms mean, {median:.2f} ms median; "
              f"GET /expressions: {listed:.1f} ms, {size:,} bytes; load "
              f"{os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signals", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--state", type=int, default=10_000)
    args = parser.parse_args()
    print("signals per second (each signal taken by 2 of the expressions, 1 detection "
          "every 2 signals)")
    base = None
    for n in (10, 1_000, 10_000):
        t = min(per_signal(n, args.signals) for _ in range(3))
        base = base or t
        print(f"  {n:>6,} expressions: {1 / t:>10,.0f} signals/s   {t * 1e6:6.1f} µs/signal"
              f"   {t / base:4.2f}x of 10")
    rng = random.Random(args.seed)
    exprs = [random_expression(rng, 50) for _ in range(1_000)]
    engine = Engine()
    for e in exprs:
        engine.register(e)
    stats = engine.stats()
    print("graph of 1,000 random expressions over 50 event types (depth <= 3):")
    print(f"  nodes with sharing {stats['nodes']:,} (leaves {stats['leaves']:,}, operators "
          f"{stats['operators']:,}); without sharing {stats['nodes_without_sharing']:,}")
    if args.state:
        state(args.state, args.seed)


if __name__ == "__main__":
    main()
