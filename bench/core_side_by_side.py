"""Measure the CEP engine CORE (PyPI ``pycer``) and the xmlevents engine side by side.

A development script, not a test and not run in CI: ``pycer`` ships wheels for CPython 3.13
only, and xmlevents is installed for the project's interpreter (3.11), so each engine runs in
a subprocess of its own interpreter, prints one JSON line of figures per measurement, and this
parent prints the table. It exits non-zero with a one-line message when no CPython 3.13 or no
``pycer`` for it is found, or when the engines' match counts differ where they should agree.

The workload, the same for both: ``size // 3`` items interleaved 20 at a time, in blocks: for
each block of 20 items the A of each, then the B of each, then the C of each, so every item
emits A, B, C in that order and 20 items are open at once (an item spans at most 41 events).

- xmlevents: ``S := ins(item/a) ; ins(item/b) ; ins(item/c)`` (one n-ary sequence) in the
  default hierarchical chronicle context, ``EventGraph(text)``; the events
  ``PrimitiveEvent(id, ts, Op.INS, PathInstance.of("/order/item/a", ["o1", "i<n>", "a<n>"]))``
  and so on, built beforehand; timed: ``feed`` of every event and ``close``, gc disabled, as in
  ``bench/bench_engine.py``. The hierarchy correlates each item's A, B and C (their common
  item node), so it raises one composite per item. Example 10 (``ins(item) ;
  (ins(item/price) & ins(item/quantity))`` on ``bench/po_stream.py``'s ``events(size // 5,
  window=20)``) is timed in the same run so that the documentation can relate the figures.
- CORE: the in-process offline server, ``pycer.PyOfflineServer``: ``declare_stream("CREATE
  STREAM S { EVENT A { id:int }, EVENT B { id:int }, EVENT C { id:int } }")`` (pycer 0.1.6
  parses ``CREATE STREAM``, not the ``DECLARE STREAM`` of the grammar files on GitHub),
  ``add_query(query)``, the events pre-built as ``PyEvent(type id, [PyIntValue(item)])`` (no
  primary-time attribute: CORE stamps each event on arrival); timed: ``send_events(list)``
  then ``get_output()``. ``send_events`` copies each event to the engine's worker thread and
  returns before it is done; ``get_output`` joins the workers, tears the server down and
  returns the text CORE printed, one line per complex event, which is parsed after the clock
  stops (matches, and how many of them hold a single item's A, B and C). Server start-up
  (constructor, declarations) is excluded. Why this way: it is the lowest-overhead path the
  binding offers, one call for the whole list with the loop in C++ (the per-event
  ``send_event`` crosses into C++ once an event); the online mode (``PyOnlineServer``, a
  ``PyClient`` adding the query and subscribing a callback, a ``PyStreamer`` sending over ZMQ
  on TCP) would time the transport and the callback thread as much as the engine.
  ``get_output`` costs about 0.15 s even on an empty stream (the teardown: threads joined at
  their next poll), printed as ``floor``; with events that wait overlaps the processing (30,000
  events take hardly more than the floor), so it cannot simply be subtracted: CORE's own
  throughput lies between ``events/s`` (send and teardown included, the primary figure) and
  ``bound`` (the floor subtracted; shown when the run takes more than twice the floor).

CORE queries (``CORE_QUERIES``), and where the semantics legitimately differ from ours:

- ``SELECT * FROM S WHERE A ; B ; C PARTITION BY [id]``: the partition by the item's id
  attribute is the fair equivalent of our correlation by the item's node: one match per item,
  checked against ours. Without a window CORE keeps every partition's state to the end (its
  per-event time grows with the stream, and the process peaked at about 3 GB at 10^6 events
  against 0.75 GB with the window below).
- the same with ``WITHIN 60 EVENTS``: bounded state; an item's events are at most 41 apart,
  so the matches are the same.
- ``SELECT * FROM S WHERE A ; B ; C WITHIN 60 EVENTS LIMIT 1``: no partition, so CORE's
  sequence matches any A before any B before any C (CEQL has no join of two events'
  attributes, and its selection strategies do not help: the probe printed first shows that
  ALL, ANY, LAST, MAX, NEXT and STRICT all give the same counts on this workload, the full
  cross product without a partition and one match per item with it). ``LIMIT 1`` keeps one
  complex event per C, so the count equals ours, but the matches mix items (the "one item"
  column: none holds a single item's events on this stream); it measures CORE without
  correlation.

Run from the repository's root: ``python3 bench/core_side_by_side.py [--sizes 100000,1000000]
[--repeat 3] [--core-python PATH]``; CPython 3.13 with ``pycer`` is found as ``--core-python``,
else ``$CORE_PYTHON``, else ``~/.pyenv/versions/3.13*/bin/python``, else ``python3.13`` on the
PATH. Medians of ``--repeat`` runs; the engines run one after the other, never at once. CORE
works in more than one thread (the caller's ``send_events`` while a worker processes, and its
logger's), ours in one: on a 2-core machine a busy second core slows CORE more than ours, so
note the load averages printed at the start and the end.
"""

from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pycer

WINDOW = 20  # items open at a time
TYPES = ("A", "B", "C")
DECLARATION = "CREATE STREAM S { EVENT A { id:int }, EVENT B { id:int }, EVENT C { id:int } }"
SEQUENCE = "SELECT * FROM S WHERE A ; B ; C"
#: label -> (query, whether every match must hold one item's events)
CORE_QUERIES: dict[str, tuple[str, bool]] = {
    "partition": (f"{SEQUENCE} PARTITION BY [id]", True),
    "partition+within": (f"{SEQUENCE} PARTITION BY [id] WITHIN 60 EVENTS", True),
    "no partition": (f"{SEQUENCE} WITHIN 60 EVENTS LIMIT 1", False),
}
STRATEGIES = ("", "ALL", "ANY", "LAST", "MAX", "NEXT", "STRICT")
PROBE_ITEMS = 40
OURS = "S := ins(item/a) ; ins(item/b) ; ins(item/c)"
EXAMPLE_10 = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"
_ATTRIBUTE = re.compile(r"attributes: \[(-?\d+) \]")
_NAME = "core_side_by_side"


def flat_order(items: int, window: int = WINDOW) -> Iterator[tuple[int, int]]:
    """(type index 0-2, item number) of every event: blocks of ``window`` items, the A of
    each, then the B of each, then the C of each."""
    for base in range(0, items, window):
        block = range(base, min(items, base + window))
        for kind in range(len(TYPES)):
            for n in block:
                yield kind, n


def emit(record: dict[str, Any]) -> None:
    """One JSON line for the parent (which reads only the lines that start with ``{``)."""
    print(json.dumps(record), flush=True)


# --- CORE, under CPython 3.13 ----------------------------------------------------------------


def core_output(output: str) -> tuple[int, int, int]:
    """Matches in ``get_output()``'s text, those whose events all have one id, and the
    distinct ids among the latter."""
    matches = single = 0
    items: set[str] = set()
    for line in output.splitlines():
        if not line.startswith("["):
            continue
        matches += 1
        ids = set(_ATTRIBUTE.findall(line))
        if len(ids) == 1:
            single += 1
            items |= ids
    return matches, single, len(items)


def core_server(query: str) -> tuple[pycer.PyOfflineServer, dict[str, int]]:
    """A started offline server with the stream declared and ``query`` added; the event type
    ids by name."""
    import pycer

    server = pycer.PyOfflineServer()
    info = server.declare_stream(DECLARATION)
    server.add_query(query)
    return server, {e.name: e.id for e in info.events_info}


def core_events(items: int, window: int, type_ids: dict[str, int]) -> list[pycer.PyEvent]:
    import pycer

    ids = [type_ids[t] for t in TYPES]
    return [pycer.PyEvent(ids[kind], [pycer.PyIntValue(n)])
            for kind, n in flat_order(items, window)]


def core_run(query: str, events: Sequence[pycer.PyEvent]) -> tuple[float, str]:
    """Seconds to send ``events`` and get the output back (start-up excluded); the output."""
    server, _ = core_server(query)
    gc.collect()
    gc.disable()
    start = time.perf_counter()
    server.send_events(events)
    output = server.get_output()
    elapsed = time.perf_counter() - start
    gc.enable()
    return elapsed, output


def core_child(sizes: list[int], repeat: int) -> None:
    from importlib.metadata import version

    _, type_ids = core_server(SEQUENCE)  # the ids the declaration gives; a warm-up too
    emit({"kind": "core-info", "pycer": version("pycer"), "python": platform.python_version()})

    probe: dict[str, list[int]] = {}
    events = core_events(PROBE_ITEMS, WINDOW, type_ids)
    for strategy in STRATEGIES:
        counts = []
        for tail in ("", " PARTITION BY [id]"):
            query = f"SELECT {strategy} * FROM S WHERE A ; B ; C{tail}".replace("  ", " ")
            counts.append(core_output(core_run(query, events)[1])[0])
        probe[strategy or "(default)"] = counts
    emit({"kind": "core-probe", "items": PROBE_ITEMS, "counts": probe})

    for size in sizes:
        items = size // len(TYPES)
        events = core_events(items, WINDOW, type_ids)
        floor = statistics.median(core_run(CORE_QUERIES["partition"][0], [])[0]
                                  for _ in range(repeat))
        for label, (query, _) in CORE_QUERIES.items():
            samples = []
            output = ""
            for _ in range(repeat):
                elapsed, output = core_run(query, events)
                samples.append(elapsed)
            matches, single, distinct = core_output(output)
            emit({"kind": "core", "size": size, "label": label, "query": query,
                  "events": len(events), "items": items, "seconds": statistics.median(samples),
                  "floor": floor, "matches": matches, "single": single, "distinct": distinct})
        del events


# --- xmlevents, under the project's interpreter ----------------------------------------------


def ours_child(sizes: list[int], repeat: int) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from po_stream import EVENTS_PER_ITEM
    from po_stream import events as po_events

    from xmlevents.algebra import CompositeEvent, EventGraph, Op, PathInstance, PrimitiveEvent

    def timed(definition: str, stream: list[PrimitiveEvent]) -> tuple[float, list[CompositeEvent]]:
        samples = []
        raised: list[CompositeEvent] = []
        for _ in range(repeat):
            graph = EventGraph(definition)
            feed = graph.feed
            raised = []
            extend = raised.extend
            gc.collect()
            gc.disable()
            start = time.perf_counter()
            for e in stream:
                extend(feed(e))
            extend(graph.close())
            samples.append(time.perf_counter() - start)
            gc.enable()
        return statistics.median(samples), raised

    emit({"kind": "ours-info", "python": platform.python_version()})
    names = [t.lower() for t in TYPES]
    for size in sizes:
        items = size // len(TYPES)
        stream = [PrimitiveEvent(f"e{ts}", ts, Op.INS, PathInstance.of(
                      f"/order/item/{names[kind]}", ["o1", f"i{n}", f"{names[kind]}{n}"]))
                  for ts, (kind, n) in enumerate(flat_order(items), 1)]
        seconds, raised = timed(OURS, stream)
        single = sum(1 for c in raised
                     if all(p.pi.ids[:2] == c.pi.ids for p in c.constituents))
        distinct = len({c.pi.ids for c in raised})
        emit({"kind": "ours", "size": size, "label": "S", "query": OURS, "events": len(stream),
              "items": items, "seconds": seconds, "matches": len(raised), "single": single,
              "distinct": distinct})
        del stream, raised

        po_items = size // EVENTS_PER_ITEM
        stream = list(po_events(po_items, window=WINDOW))
        seconds, raised = timed(EXAMPLE_10, stream)
        emit({"kind": "ours", "size": size, "label": "Example 10", "query": EXAMPLE_10,
              "events": len(stream), "items": po_items, "seconds": seconds,
              "matches": len(raised), "single": len(raised), "distinct": len(raised)})
        del stream, raised


# --- the parent -----------------------------------------------------------------------------


def find_core_python(given: str | None) -> str:
    """The interpreter for CORE, or exit with a one-line message."""
    candidates = [given or os.environ.get("CORE_PYTHON") or ""]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.13*/bin/python")),
                         reverse=True)
    candidates.append(shutil.which("python3.13") or "")
    for python in filter(None, candidates):
        try:
            probe = subprocess.run([python, "-c", "import sys, pycer; "
                                    "print('%d.%d' % sys.version_info[:2])"],
                                   capture_output=True, text=True, timeout=120)
        except OSError:
            if python == given:
                break
            continue
        if probe.returncode == 0:
            return python
        if "No module named 'pycer'" in probe.stderr:
            sys.exit(f"{_NAME}: pycer is not installed for {python} (pip install pycer; it "
                     f"has wheels for CPython 3.13 only)")
        if given:
            break
    sys.exit(f"{_NAME}: no CPython 3.13 with pycer found (tried --core-python, $CORE_PYTHON, "
             "~/.pyenv/versions/3.13*/bin/python, python3.13 on the PATH)")


def run_child(python: str, engine: str, size: int, repeat: int) -> list[dict[str, Any]]:
    """Run this script as ``engine``'s child in a scratch directory (CORE writes ``logs/``
    where it runs); its JSON lines."""
    with tempfile.TemporaryDirectory(prefix="core-bench-") as scratch:
        proc = subprocess.run([python, os.path.abspath(__file__), "--child", engine,
                               "--sizes", str(size), "--repeat", str(repeat)],
                              capture_output=True, text=True, cwd=scratch)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        sys.exit(f"{_NAME}: the {engine} child failed ({proc.returncode}): {tail}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def report(size: int, repeat: int, core: list[dict[str, Any]],
           ours: list[dict[str, Any]]) -> list[str]:
    """Print one size's table; the disagreements found."""
    mine = next(r for r in ours if r["label"] == "S")
    rate = mine["events"] / mine["seconds"]
    print(f"{mine['events']:,} events ({mine['items']:,} items, {WINDOW} open at a time), "
          f"median of {repeat}")
    print(f"  {'engine':<9} {'query':<17} {'matches':>9} {'one item':>9} {'events/s':>10} "
          f"{'CORE/ours':>9} {'bound':>10} {'CORE/ours':>9}")
    print(f"  {'xmlevents':<9} {'S':<17} {mine['matches']:>9,} {mine['single']:>9,} "
          f"{rate:>10,.0f} {'':>9} {'':>10} {'':>9}")
    problems = []
    if not mine["matches"] == mine["single"] == mine["distinct"] == mine["items"]:
        problems.append(f"xmlevents at {size}: {mine['matches']} matches, {mine['single']} "
                        f"of one item, {mine['distinct']} items, {mine['items']} expected")
    floor = 0.0
    for r in core:
        floor = r["floor"]
        theirs = r["events"] / r["seconds"]
        bound = (f"{r['events'] / (r['seconds'] - floor):>10,.0f} "
                 f"{r['events'] / (r['seconds'] - floor) / rate:>9.2f}"
                 if r["seconds"] > 2 * floor else f"{'-':>10} {'-':>9}")
        print(f"  {'CORE':<9} {r['label']:<17} {r['matches']:>9,} {r['single']:>9,} "
              f"{theirs:>10,.0f} {theirs / rate:>9.2f} {bound}")
        correlated = CORE_QUERIES[r["label"]][1]
        if r["events"] != mine["events"] or r["matches"] != mine["matches"] or (
                correlated and not r["single"] == r["distinct"] == mine["matches"]):
            problems.append(f"CORE {r['label']!r} at {size}: {r['matches']} matches "
                            f"({r['single']} of one item, {r['distinct']} items) against "
                            f"xmlevents' {mine['matches']}")
    print(f"  CORE's floor, send_events + get_output on an empty stream (median): {floor:.3f} s; "
          f"bound: the floor subtracted")
    ex10 = next(r for r in ours if r["label"] == "Example 10")
    print(f"  xmlevents Example 10 ({EXAMPLE_10}), po_stream events({ex10['items']:,}, "
          f"window={WINDOW}): {ex10['events']:,} events, {ex10['matches']:,} raised, "
          f"{ex10['events'] / ex10['seconds']:,.0f} events/s "
          f"({ex10['events'] / ex10['seconds'] / rate:.2f}x S)")
    if ex10["matches"] != ex10["items"]:
        problems.append(f"Example 10 at {size}: {ex10['matches']} raised, {ex10['items']} "
                        f"items")
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="100000,1000000")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--core-python", help="CPython 3.13 with pycer installed")
    p.add_argument("--child", choices=("core", "ours"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    if args.child == "core":
        try:
            import pycer  # noqa: F401
        except ImportError:
            sys.exit(f"{_NAME}: pycer is not installed for {sys.executable}")
        core_child(sizes, args.repeat)
        return 0
    if args.child == "ours":
        ours_child(sizes, args.repeat)
        return 0

    core_python = find_core_python(args.core_python)
    print(f"load average at start: {load()} ({os.cpu_count()} CPUs)")
    print("CORE queries (stream S: events A, B, C, each with id:int):")
    for label, (query, _) in CORE_QUERIES.items():
        print(f"  {label:<17} {query}")
    print(f"xmlevents: {OURS} (hierarchical chronicle context)")
    print("CORE/ours: CORE's events/s over xmlevents' on the same stream")
    problems: list[str] = []
    for k, size in enumerate(sizes):
        core = run_child(core_python, "core", size, args.repeat)
        ours = run_child(sys.executable, "ours", size, args.repeat)
        if k == 0:
            info = next(r for r in core if r["kind"] == "core-info")
            mine = next(r for r in ours if r["kind"] == "ours-info")
            print(f"CORE: pycer {info['pycer']} on CPython {info['python']}, PyOfflineServer "
                  f"in process, send_events + get_output; xmlevents on CPython "
                  f"{mine['python']}, EventGraph.feed")
            probe = next(r for r in core if r["kind"] == "core-probe")
            counts = ", ".join(f"{s} {a:,}/{b:,}" for s, (a, b) in probe["counts"].items())
            print(f"CORE selection strategies on {probe['items']} items, matches without/with "
                  f"PARTITION BY [id]: {counts}")
        print()
        problems += report(size, args.repeat, [r for r in core if r["kind"] == "core"],
                           [r for r in ours if r["kind"] == "ours"])
    print(f"\nload average at end: {load()}")
    if problems:
        sys.exit(f"{_NAME}: match counts differ: " + "; ".join(problems))
    return 0


if __name__ == "__main__":
    sys.exit(main())
