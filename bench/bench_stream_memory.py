"""Peak memory of the stream commands at N and 16·N events (issue 29, item 1): memory that
follows the window, not the stream.

Each command runs in a fresh subprocess (its peak RSS is ``getrusage(RUSAGE_CHILDREN)`` of a
process that ran only it), on generated inputs: ``xmlevents detect --within 100`` on
purchase-order streams (``po_stream.py``), ``xmlevents cel`` on uniform A-Z streams with
ids and times (``WITHIN 100 EVENTS``, ``WITHIN 10 SECONDS``). Prints events/s, peak RSS and
the growth from N to 16·N; the target is at most 1.3x. Also ``detect`` without a window,
whose reused-id check keeps the last 65,536 events' ids (bounded, not flat below that).

    python3 bench/bench_stream_memory.py [--events 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import string
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from po_stream import events, events_per_item

DETECT = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"
CEL = "SELECT * FROM S WHERE A ; B ; C {window}"


def po_file(path: str, n: int) -> None:
    """About ``n`` purchase-order events, one JSON line each."""
    with open(path, "w", encoding="utf-8") as f:
        for e in events(n // events_per_item() + 1):
            f.write(json.dumps(e.to_dict()) + "\n")


def cel_file(path: str, n: int) -> None:
    """``n`` events of 26 types A-Z, uniform, with an id and a time (10 events a second):
    a complex event of A;B;C every few events."""
    rng = random.Random(7)
    with open(path, "w", encoding="utf-8") as f:
        for p in range(n):
            kind = rng.choice(string.ascii_uppercase)
            f.write(f'{{"type": "{kind}", "id": "e{p}", "time": {p / 10}}}\n')


def measure(argv: list[str]) -> None:
    """(In a fresh process) run ``argv`` with its output discarded; print seconds and the
    child's peak RSS in KiB."""
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    elapsed = time.perf_counter() - start
    print(elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def peak(argv: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of ``argv``, run from a process that runs nothing else."""
    out = subprocess.run([sys.executable, __file__, "--measure", *argv], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000, help="N (default 100,000)")
    parser.add_argument("--measure", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure)
        return
    xmlevents = [sys.executable, "-m", "xmlevents"]
    cases = [
        ("detect --within 100", po_file,
         lambda f: [*xmlevents, "detect", "--within", "100", "--define", DETECT, f]),
        ("detect (no window)", po_file,
         lambda f: [*xmlevents, "detect", "--define", DETECT, f]),
        ("cel WITHIN 100 EVENTS", cel_file,
         lambda f: [*xmlevents, "cel", CEL.format(window="WITHIN 100 EVENTS"), f]),
        ("cel WITHIN 10 SECONDS", cel_file,
         lambda f: [*xmlevents, "cel", CEL.format(window="WITHIN 10 SECONDS"), f]),
    ]
    print(f"load: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        made: dict[tuple[str, int], str] = {}
        for name, make, command in cases:
            row = []
            for n in (args.events, 16 * args.events):
                path = made.get((make.__name__, n))
                if path is None:
                    path = made[(make.__name__, n)] = os.path.join(tmp, f"{make.__name__}{n}")
                    make(path, n)
                with open(path, encoding="utf-8") as f:
                    lines = sum(1 for _ in f)
                seconds, mb = peak(command(path))
                row.append(mb)
                print(f"  {name:<24} {lines:>10,} events: {lines / seconds:>9,.0f} events/s, "
                      f"peak {mb:6.1f} MB")
            print(f"  {name:<24} growth x{row[1] / row[0]:.2f} for 16x the events")


if __name__ == "__main__":
    main()
