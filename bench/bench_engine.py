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
to end against merely parsing the same JSON lines (Example 10 tree): in process (``main()``
writing to a StringIO), and as a subprocess with ``PYTHONUNBUFFERED=1`` whose stdout is a pipe
the parent reads (its user and system time too, and its start-up: the same command on an
empty input), once as the environment has it and once with the modules' bytecode kept (as an
installed package has it; the development machine sets ``PYTHONDONTWRITEBYTECODE=1``, so
there every run compiles every module it imports).

Run: ``python bench/bench_engine.py [--sizes 10000,100000,1000000] [--repeat 3]``.
Targets (issues 3, 4): >= 100,000 events/s; the largest run's per-event time <= 1.3x the
smallest's; memory flat in the number of completed items; detect <= 4x JSON parsing. Issue 13:
>= 500,000 events/s on the first tree, >= 250,000 on the second; detect <= 4x also piped and
unbuffered, start-up included.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from po_stream import EVENTS_PER_ITEM, events, events_per_item

from xmlevents._cli import main as cli_main
from xmlevents.algebra import EventGraph, Op, PathInstance, PrimitiveEvent
from xmlevents.algebra._multiplicity import MultNode  # white-box: the bench counts runs

DEFINITION = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"


@dataclass(frozen=True)
class Case:
    """A tree and the shape of the stream it is measured on."""

    definition: str
    window: int = 20
    quantities: int = 1
    within: int | None = None  # the graph's window (issue 13), in ticks
    complete: bool = True  # False: items never get their quantities

    def graph(self) -> EventGraph:
        return EventGraph(self.definition, context="chronicle", hierarchical=True,
                          within=self.within)

    def events(self, size: int) -> Iterator[PrimitiveEvent]:
        if not self.complete:
            return incomplete_items(size)
        items = size // events_per_item(self.quantities)
        return events(items, window=self.window, quantities=self.quantities)

    def describe(self) -> str:
        shape = (f"{self.quantities} quantities an item, {self.window} items open at a time"
                 if self.complete else "items with a price and never a quantity")
        window = f"within={self.within}" if self.within else "no window"
        return f"hierarchical chronicle, interval semantics; {shape}; {window}"


def incomplete_items(size: int) -> Iterator[PrimitiveEvent]:
    """Items inserted with a price and never a quantity: partial matches that never complete
    (without a window every one of them is kept)."""
    ts = 0
    for k in range(size // 2):
        for path, ids in (("/order/item", ("o1", f"i{k}")),
                          ("/order/item/price", ("o1", f"i{k}", f"p{k}"))):
            ts += 1
            yield PrimitiveEvent(f"e{ts}", ts, Op.INS, PathInstance.of(path, ids))


NON_LOCAL = ("Ei := ins(item) ; ((ins(item/price) & [1,*] ins(item/quantity)) "
             "with mode=non-local)")
CASES = [
    Case(DEFINITION),
    Case(NON_LOCAL, window=1, quantities=3),
    Case(DEFINITION, within=200),
    Case(NON_LOCAL, window=1, quantities=3, within=200),
    Case(DEFINITION, within=100, complete=False),
]


def add_remove_latency(count: int, repeat: int) -> tuple[float, float, float]:
    """Seconds to build a graph of ``count`` definitions, and the median seconds to add one
    more definition to it and to remove that one again (issue 13)."""
    text = "\n".join(f"D{k} := ins(item) ; (ins(item/p{k}) & ins(item/q{k}))"
                     for k in range(count))
    start = time.perf_counter()
    graph = EventGraph(text)
    build = time.perf_counter() - start
    adds, removes = [], []
    for r in range(repeat):
        adds.append(_timed(lambda r=r: graph.add(
            f"X{r} := D{r} & ins(item/x{r})")))
        removes.append(_timed(lambda r=r: graph.remove(f"X{r}")))
    return build, statistics.median(adds), statistics.median(removes)


def sharing_cost(count: int, size: int, repeat: int) -> list[tuple[bool, float, int, int]]:
    """Per sharing on and off: median seconds per event, peak traced bytes and the hidden
    trees on a graph of ``count`` definitions that all have Example 10's conjunction
    (``D_k := ins(item) ; (ins(item/price) & ins(item/quantity)) | ins(item/x_k)``, issue
    13): with sharing the conjunction is evaluated once, not ``count`` times."""
    text = "\n".join(f"D{k} := (ins(item) ; (ins(item/price) & ins(item/quantity))) "
                     f"| ins(item/x{k})" for k in range(count))
    stream = list(events(size // EVENTS_PER_ITEM, window=20))
    out = []
    for share in (True, False):
        samples = []
        for _ in range(repeat):
            graph = EventGraph(text, share=share)
            feed = graph.feed
            gc.collect()
            gc.disable()
            start = time.perf_counter()
            for e in stream:
                feed(e)
            samples.append((time.perf_counter() - start) / len(stream))
            gc.enable()
        graph = EventGraph(text, share=share)
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        for e in stream:
            graph.feed(e)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        out.append((share, statistics.median(samples), peak, len(graph.trees) - count))
    return out


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
    tree = graph.tree(graph.order[-1])
    runs = sum(len(n.runs) for n in tree.operators if isinstance(n, MultNode))
    return peak, len(tree.held()) + len(tree.potential()) + runs


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


@dataclass(frozen=True)
class PipeRun:
    """``xmlevents detect`` as a subprocess: seconds of wall-clock, user and system time."""

    real: float
    user: float
    sys: float
    lines: int


def detect_piped(path: str, pycache: str | None = None) -> PipeRun:
    """Run ``python -m xmlevents detect`` on ``path`` with ``PYTHONUNBUFFERED=1``, its stdout a
    pipe this process reads (as a consumer of the output would).

    With ``pycache`` (a folder), the command's modules are compiled once and their bytecode
    kept there (``PYTHONPYCACHEPREFIX``, and ``PYTHONDONTWRITEBYTECODE`` unset), as an
    installed package has it; otherwise the environment decides (where
    ``PYTHONDONTWRITEBYTECODE=1`` is set, as on the development machine, every run compiles
    every module it imports: start-up then costs some 0.05-0.1 s more).
    """
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "xmlevents", "detect", "--define",
                             DEFINITION, path], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    lines = sum(chunk.count(b"\n") for chunk in iter(lambda: proc.stdout.read(1 << 16), b""))
    status = proc.wait()
    real = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert status == 0
    return PipeRun(real, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime,
                   lines)


@dataclass(frozen=True)
class CliCost:
    """The detect measurements: json.loads alone, detect in process, detect piped."""

    parse: float
    full: float
    piped: PipeRun
    startup: PipeRun
    cached: PipeRun  # piped, with the modules' bytecode kept (see detect_piped)
    cached_startup: PipeRun


def cli_ratio(size: int, repeat: int) -> CliCost:
    """Seconds to json.loads every line, and to run ``xmlevents detect`` on the same file in
    process and as a subprocess writing to a pipe, unbuffered (best of ``repeat``)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "events.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for e in events(size // EVENTS_PER_ITEM):
                f.write(json.dumps(e.to_dict()) + "\n")
        empty = os.path.join(tmp, "empty.jsonl")
        open(empty, "w").close()

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
        piped = min((detect_piped(path) for _ in range(repeat)), key=lambda r: r.real)
        startup = min((detect_piped(empty) for _ in range(repeat)), key=lambda r: r.real)
        pycache = os.path.join(tmp, "pycache")
        detect_piped(empty, pycache)  # compiles the modules once
        cached = min((detect_piped(path, pycache) for _ in range(repeat)),
                     key=lambda r: r.real)
        cached_startup = min((detect_piped(empty, pycache) for _ in range(repeat)),
                             key=lambda r: r.real)
    return CliCost(parse, full, piped, startup, cached, cached_startup)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--cli-size", type=int, default=100000)
    p.add_argument("--definitions", type=int, default=1000,
                   help="definitions in the graph add/remove latency is measured on")
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    for case in CASES:
        print(f"engine: {case.definition}\n  ({case.describe()})")
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

    shared = 20
    print(f"sharing: {shared} definitions with Example 10's tree in common, "
          f"{sizes[0]:,} events")
    for share, per_event, peak, hidden in sharing_cost(shared, sizes[0], args.repeat):
        print(f"  share={share!s:<5} {1 / per_event:>11,.0f} events/s {per_event * 1e6:>8.2f} "
              f"us/event  peak {peak / 1024:>7,.0f} KiB  shared subtrees {hidden}")
    print()

    build, add, remove = add_remove_latency(args.definitions, max(args.repeat, 5))
    print(f"live graph of {args.definitions:,} definitions: built in {build:.2f} s; add one "
          f"{add * 1e3:.1f} ms, remove it {remove * 1e3:.1f} ms (median)")
    print()

    cost = cli_ratio(args.cli_size, args.repeat)
    parse, piped, startup = cost.parse, cost.piped, cost.startup
    print(f"xmlevents detect on {args.cli_size:,} events ({piped.lines:,} composites); "
          f"json.loads of the same lines: {parse:.2f} s (target: detect <= 4x)")
    print(f"  in process (main(), a StringIO): {cost.full:.2f} s; ratio {cost.full / parse:.2f}")
    print(f"  subprocess, PYTHONUNBUFFERED=1, stdout a pipe: {piped.real:.2f} s (user "
          f"{piped.user:.2f} s, sys {piped.sys:.2f} s); ratio {piped.real / parse:.2f}; "
          f"of which start-up {startup.real:.2f} s (ratio without it "
          f"{(piped.real - startup.real) / parse:.2f})")
    cached, cached_startup = cost.cached, cost.cached_startup
    print(f"  the same with the modules' bytecode kept (as installed): {cached.real:.2f} s "
          f"(user {cached.user:.2f} s, sys {cached.sys:.2f} s); ratio "
          f"{cached.real / parse:.2f}; of which start-up {cached_startup.real:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
