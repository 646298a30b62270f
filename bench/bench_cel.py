"""CEL's automaton evaluator (issue 19): time per event flat in the number of partial matches.

Prints (1) the paper's stress test (its Figure 4): random streams of A, B and C of length n
whose last event, a D, completes every match of A;B;C;D — the time to process the stream
without enumerating, per event, and the number of complex events the last node holds;
enumeration time per complex event at a size where enumerating is feasible; (2) the update
throughput on a uniformly random stream for the six queries of the paper's experiments with
WITHIN 100 and 1,000 EVENTS (the runs are updated, the complex events not enumerated). The
machine is shared: compare the ratios of one run.

    python3 bench/bench_cel.py [--events 200000]
"""

from __future__ import annotations

import argparse
import os
import random
import time

from xmlevents.cel import Event, compile_query
from xmlevents.cel._cea import Runs, compile_cea, enumerate_node

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
              f"{node.count:>12,} complex events at the last position")
        if n == 500:
            start = time.perf_counter()
            k = sum(1 for _ in enumerate_node(node))
            t = time.perf_counter() - start
            print(f"           enumerating them: {k:,} in {t:.2f} s ({t / k * 1e6:.2f} µs each)")


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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=200_000)
    args = p.parse_args()
    print(f"bench_cel (load average {os.getloadavg()[0]:.2f})")
    rng = random.Random(19)
    stress(rng)
    throughput(rng, args.events)


if __name__ == "__main__":
    main()
