"""Benchmark the detection engine on purchase-order streams.

Two trees, each in hierarchical chronicle context: the paper's Example 10 tree
``ins(item) ; (ins(item/price) & ins(item/quantity))`` on items interleaved 20 at a time, and
a tree with a multiplicity and the non-local termination mode (issue 4),
``ins(item) ; ((ins(item/price) & [1,*] ins(item/quantity)) with mode=non-local)``, on items
with three quantities each, inserted one subtree after another. For streams of about 10^4,
10^5 and 10^6 primitive events it prints events per second and microseconds per event through
the Python API, the ratio of the per-event time to the smallest run's, and the peak memory of
the engine while streaming (events generated on the fly, so the input does not count) with the
events and multiplicity runs still held at the end. Then the cost of ``xmlevents detect`` end
to end against merely parsing the same JSON lines (Example 10 tree).

Run: ``python bench/bench_engine.py [--sizes 10000,100000,1000000] [--repeat 3]``.
Targets (issues 3, 4): >= 100,000 events/s; the largest run's per-event time <= 1.3x the
smallest's; memory flat in the number of completed items; detect <= 4x JSON parsing.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from po_stream import EVENTS_PER_ITEM, events, events_per_item

from xmlevents._cli import main as cli_main
from xmlevents.algebra import EventGraph, PrimitiveEvent
from xmlevents.algebra._multiplicity import MultNode  # white-box: the bench counts runs

DEFINITION = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"


@dataclass(frozen=True)
class Case:
    """A tree and the shape of the stream it is measured on."""

    definition: str
    window: int = 20
    quantities: int = 1

    def graph(self) -> EventGraph:
        return EventGraph(self.definition, context="chronicle", hierarchical=True)

    def events(self, size: int) -> Iterator[PrimitiveEvent]:
        items = size // events_per_item(self.quantities)
        return events(items, window=self.window, quantities=self.quantities)


CASES = [
    Case(DEFINITION),
    Case("Ei := ins(item) ; ((ins(item/price) & [1,*] ins(item/quantity)) "
         "with mode=non-local)", window=1, quantities=3),
]


def time_per_event(case: Case, size: int, repeat: int) -> tuple[float, int, int]:
    """Median seconds per event over ``repeat`` runs on a pre-built stream; raised count."""
    stream = list(case.events(size))
    samples = []
    raised = 0
    for _ in range(repeat):
        graph = case.graph()
        feed = graph.feed
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        raised = 0
        for e in stream:
            raised += len(feed(e))
        raised += len(graph.close())
        elapsed = time.perf_counter() - start
        gc.enable()
        samples.append(elapsed / len(stream))
    return statistics.median(samples), len(stream), raised


def peak_memory(case: Case, size: int) -> tuple[int, int]:
    """Peak traced bytes while streaming ``size`` events, and what is held at the end:
    stored events, potential events and multiplicity runs."""
    graph = case.graph()
    feed = graph.feed
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for e in case.events(size):
        feed(e)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    tree = graph.tree("Ei")
    runs = sum(len(n.runs) for n in tree.operators if isinstance(n, MultNode))
    return peak, len(tree.held()) + len(tree.potential()) + runs


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def cli_ratio(size: int, repeat: int) -> tuple[float, float]:
    """Seconds to json.loads every line, and to run ``xmlevents detect`` on the same file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "events.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for e in events(size // EVENTS_PER_ITEM):
                f.write(json.dumps(e.to_dict()) + "\n")

        def parse_only() -> None:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    json.loads(line)

        def detect() -> None:
            out = io.StringIO()
            status = cli_main(["detect", "--define", DEFINITION, path], stdout=out)
            assert status == 0

        parse = min(_timed(parse_only) for _ in range(repeat))
        full = min(_timed(detect) for _ in range(repeat))
    return parse, full


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--cli-size", type=int, default=100000)
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    for case in CASES:
        print(f"engine: {case.definition}\n  (hierarchical chronicle, interval semantics; "
              f"{case.quantities} quantities an item, {case.window} items open at a time)")
        print(f"{'events':>10} {'raised':>9} {'events/s':>11} {'us/event':>9} {'ratio':>6} "
              f"{'peak KiB':>9} {'held':>5}")
        first = None
        for size in sizes:
            per_event, count, raised = time_per_event(case, size, args.repeat)
            first = first or per_event
            peak, held = peak_memory(case, size)
            print(f"{count:>10,} {raised:>9,} {1 / per_event:>11,.0f} "
                  f"{per_event * 1e6:>9.2f} {per_event / first:>6.2f} {peak / 1024:>9,.0f} "
                  f"{held:>5}")
        print()

    parse, full = cli_ratio(args.cli_size, args.repeat)
    print(f"xmlevents detect on {args.cli_size:,} events: {full:.2f} s; json.loads of the "
          f"same lines: {parse:.2f} s; ratio {full / parse:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
