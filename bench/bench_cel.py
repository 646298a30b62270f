"""CEL's automaton evaluator (issue 19): time per event flat in the number of partial matches.

Prints (1) the paper's stress test (its Figure 4): random streams of A, B and C of length n
whose last event, a D, completes every match of A;B;C;D — the time to process the stream
without enumerating, per event, and the number of complex events the last node holds;
enumeration time per complex event at a size where enumerating is feasible; (2) the update
throughput on a uniformly random stream for the six queries of the paper's experiments with
WITHIN 100 and 1,000 EVENTS (the runs are updated, the complex events not enumerated); (3)
whole queries: ``count`` under windows of 100 and 1,000 events (the runs that fit counted
per deterministic state, a sliding-window sum), ``LIMIT 1`` (best-first, no enumeration of
the rest), and the strategies NEXT and MAX in the automaton. At n = 2,000 the stress test
also times the first 100,000 of its complex events: enumeration has constant delay, so they
come at the same rate as all of them at n = 500, before the rest are looked at. The machine
is shared: compare the ratios of one run.

    python3 bench/bench_cel.py [--events 200000]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import time

from xmlevents.cel import Event, compile_query, count, evaluate
from xmlevents.cel._cea import Runs, compile_cea, enumerate_found

QUERIES = ["A ; B ; C", "A ; B ; C ; D", "(A OR B OR C) ; D", "A+ ; B", "A+ ; B+ ; C",
           "(A+ ; B)+ ; C"]


def runs_for(query: str, window: int | None = None) -> Runs:
    return Runs(compile_cea(compile_query(f"SELECT * FROM S WHERE {query}").formula), window)


def stress(rng: random.Random) -> None:
    print("stress (Figure 4): A;B;C;D, the last event completes every match")
    for n in (200, 500, 1000, 2000):
        stream = [Event(i, rng.choice("ABC")) for i in range(n - 1)] + [Event(n - 1, "D")]
        runs = runs_for("A ; B ; C ; D")
        start = time.perf_counter()
        node = None
        for j, e in enumerate(stream):
            node = runs.step(j, e)
        elapsed = time.perf_counter() - start
        assert node is not None
        print(f"  n={n:>5,}: {elapsed:.4f} s to process ({elapsed / n * 1e6:5.1f} µs/event), "
              f"{sum(x.count for x in node):>12,} complex events at the last position")
        if n == 500:
            start = time.perf_counter()
            k = sum(1 for _ in enumerate_found(node))
            t = time.perf_counter() - start
            print(f"           enumerating them: {k:,} in {t:.2f} s ({t / k * 1e6:.2f} µs each)")
        if n == 2000:
            start = time.perf_counter()
            k = sum(1 for _ in itertools.islice(enumerate_found(node), 100_000))
            t = time.perf_counter() - start
            print(f"           the first {k:,} of them: {t:.3f} s ({t / k * 1e6:.2f} µs each)")


def throughput(rng: random.Random, n: int) -> None:
    stream = [Event(i, rng.choice("ABCD")) for i in range(n)]
    print(f"update throughput, {n:,} uniformly random events of A, B, C, D (no enumeration)")
    for query in QUERIES:
        rates = []
        for window in (100, 1000):
            runs = runs_for(query, window)
            start = time.perf_counter()
            for j, e in enumerate(stream):
                runs.step(j, e)
            rates.append(n / (time.perf_counter() - start))
        print(f"  {query:<20} WITHIN 100: {rates[0]:>9,.0f} events/s   WITHIN 1,000: "
              f"{rates[1]:>9,.0f} events/s   ({len(runs.active)} active states)")


def timed(query: str, stream: list[Event], run: str) -> tuple[float, int]:
    """Events/s of ``count`` or of ``evaluate`` consumed, and what they found."""
    q = compile_query(f"SELECT {query}")
    start = time.perf_counter()
    found = count(q, stream) if run == "count" else sum(1 for _ in evaluate(q, stream))
    return len(stream) / (time.perf_counter() - start), found


def magnitude(n: int) -> str:
    """``n`` to three digits (beyond a float's range too)."""
    return f"{n:.3g}" if n < 10 ** 300 else f"{str(n)[0]}.{str(n)[1:3]}e+{len(str(n)) - 1}"


def whole_queries(rng: random.Random, n: int) -> None:
    stream = [Event(i, rng.choice("ABCD")) for i in range(n)]
    print(f"whole queries on {n:,} uniformly random events (events/s; complex events found):")
    print(f"  {'':<20} {'--count WITHIN 100':>26} {'--count WITHIN 1,000':>26} "
          f"{'LIMIT 1 WITHIN 100':>26} {'NEXT, no window':>26} {'MAX, no window':>26}")
    for query in QUERIES:
        cells = [timed(f"* FROM S WHERE {query} WITHIN 100 EVENTS", stream, "count"),
                 timed(f"* FROM S WHERE {query} WITHIN 1000 EVENTS", stream, "count"),
                 timed(f"* FROM S WHERE {query} WITHIN 100 EVENTS LIMIT 1", stream, "all"),
                 timed(f"NEXT * FROM S WHERE {query}", stream, "count"),
                 timed(f"MAX * FROM S WHERE {query}", stream, "count")]
        print(f"  {query:<20} " + " ".join(f"{rate:>10,.0f} ({magnitude(found):>13})"
                                           for rate, found in cells))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument("--whole", type=int, default=50_000,
                   help="events for the whole-query part (count, LIMIT, strategies)")
    args = p.parse_args()
    print(f"bench_cel (load average {os.getloadavg()[0]:.2f})")
    rng = random.Random(19)
    stress(rng)
    throughput(rng, args.events)
    whole_queries(rng, args.whole)
    print(f"(load average at the end {os.getloadavg()[0]:.2f})")

if __name__ == "__main__":
    main()
