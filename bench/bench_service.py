"""The detection service's engine in process (issue 18): signals per second against the number
of registered expressions, and the event graph's size with and without sharing.

Prints, for 10, 1,000 and 10,000 registered expressions of which only a few can take each
signal, the signals per second and the time per signal against the 10-expression run (the
target: 10,000 within 1.5x of 10, i.e. flat in the number of expressions that do not match);
then the node counts of 1,000 random expressions over 50 event types built with and without
sharing. The machine is shared: compare the ratios of one run, not the seconds.

    python3 bench/bench_service.py [--signals 20000] [--seed 1]
"""

from __future__ import annotations

import argparse
import gc
import random
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signals", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
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


if __name__ == "__main__":
    main()
