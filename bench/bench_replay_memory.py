"""Peak memory of the local replay at N and 16·N versions (issue 29, item 1): memory that
follows the live state, not the history.

Two generated histories (``bench_diff.py``'s catalogue generator, seeded), each at 1x and
16x its size, written as gzip-compressed JSON lines:

- **one document, many versions**: one catalogue of ~2,000 items (~150 KB), 1–5 changes a
  version, at 100 and 1,600 versions (in (doc, version) order: the index reads the table
  through again);
- **many small documents**: catalogues of 15 items, 5 versions each, at 1,250 and 20,000
  documents, the rows interleaved as a history by time is (every document's version 0,
  then every version 1, ...: not in order, so the XML is spilled and read back).

Each table is written and each measurement runs in a fresh process, and prints its seconds
(the run's own, without the interpreter's start and imports) and the process's peak RSS
(``ru_maxrss``; and ``VmHWM``, the high-water mark of its own memory map, which agrees: Linux
carries ``ru_maxrss`` across ``exec``, so the parent that starts the measurement must stay
small, hence the tables written by another process). ``local`` is
:func:`run_local` (``xmlevents replay --engine local``'s job, the outputs written), ``iter``
is :func:`iter_history` over :func:`index_versions` in process (every step read and
dropped). The catalogue is diffed with ``identical_subtrees`` (as ``bench_diff.py`` runs
it: without it a version costs seconds). Target: the peak at 16x at most 1.3x the peak at
1x for the local replay.

    python3 bench/bench_replay_memory.py [--cases catalogue documents] [--modes local iter]
                                         [--versions 100] [--documents 1250]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_diff import Catalogue, history


def documents(count: int, versions: int = 5, items: int = 15, seed: int = 29
              ) -> Iterator[dict[str, Any]]:
    """``count`` small catalogues of ``versions`` versions each, interleaved by version
    (every document's version 0 first, then every version 1, ...)."""
    cats = [Catalogue(items, random.Random(seed * 100_003 + d)) for d in range(count)]
    for v in range(versions):
        for d, cat in enumerate(cats):
            if v:
                for _ in range(cat.rng.randint(1, 3)):
                    cat.change()
            yield {"doc": f"docs/{d:06d}.xml", "version": v,
                   "time": 1_700_000_000 + 86_400 * v + d, "xml": cat.xml(v)}


def write(path: str, rows: Iterator[dict[str, Any]]) -> tuple[int, int]:
    """Write rows as gzip-compressed JSON lines; how many, and the bytes of their XML."""
    n = size = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
            n += 1
            size += len(row["xml"])
    return n, size


def run(mode: str, path: str, out: str) -> None:
    """(In a fresh process) one measurement; prints a JSON line."""
    from xmlevents.replay import DiffOptions, index_versions, iter_history, run_local

    options = DiffOptions(identical_subtrees=True)
    start = time.perf_counter()
    if mode == "local":
        report = run_local(path, out, options=options)
        events, versions = report.events, report.versions
        times = dict(report.times)
    else:
        events = versions = 0
        with index_versions(path, []) as index:
            for step in iter_history(index, options=options):
                events += len(step.events)
                versions += step.replayed
        times = {}
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open("/proc/self/status", encoding="ascii") as f:
        hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "hwm_mb": hwm, "events": events,
                      "versions": versions, "times": times}))


def measure(mode: str, path: str, out: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--run", mode, path, out], check=True,
                          capture_output=True, text=True, cwd=tempfile.gettempdir())
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", nargs="+", default=["catalogue", "documents"],
                   choices=["catalogue", "documents"])
    p.add_argument("--modes", nargs="+", default=["local", "iter"], choices=["local", "iter"])
    p.add_argument("--versions", type=int, default=100, help="N for the catalogue (100)")
    p.add_argument("--documents", type=int, default=1250, help="N for the documents (1,250)")
    p.add_argument("--run", nargs=3, help=argparse.SUPPRESS)
    p.add_argument("--write", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.run:
        run(*args.run)
        return
    if args.write:
        case, count, path = args.write
        write(path, history(int(count)) if case == "catalogue" else documents(int(count)))
        return
    print(f"{'case':<10} {'mode':<6} {'versions':>8} {'events':>10} {'seconds':>8} "
          f"{'peak MB':>8} {'VmHWM':>6} {'growth':>7}  load (1, 5, 15 min)", flush=True)
    with tempfile.TemporaryDirectory(prefix="xmlevents-bench-memory-") as folder:
        for case in args.cases:
            tables = []
            for scale in (1, 16):
                path = os.path.join(folder, f"{case}-{scale}.jsonl.gz")
                count = scale * (args.versions if case == "catalogue" else args.documents)
                subprocess.run([sys.executable, __file__, "--write", case, str(count), path],
                               check=True)
                tables.append(path)
            for mode in args.modes:
                first = None
                for path in tables:
                    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                    got = measure(mode, path, os.path.join(folder, "out"))
                    first = first or got["peak_mb"]
                    print(f"{case:<10} {mode:<6} {got['versions']:>8,} {got['events']:>10,} "
                          f"{got['seconds']:>8.1f} {got['peak_mb']:>8.1f} {got['hwm_mb']:>6.1f} "
                          f"{got['peak_mb'] / first:>6.2f}x  {load}", flush=True)


if __name__ == "__main__":
    main()
