"""``xmlevents replay`` end to end, as a user runs it, on each engine (issue 15).

Runs the command in a fresh process per run (interpreter start, imports, Spark's start-up,
writing the Parquet outputs: all of it, as ``time`` measures it) on the example history
``examples/purchase_orders.jsonl.gz`` with ``examples/purchase_orders.xev``, with ``--engine
local`` and ``--engine spark``, and prints for each run the wall-clock seconds, the summary's
own ``time`` line (its parts: Spark's start, the replay, the writing) and the machine's load
average before the run. Target (issue 15): ``--engine local`` under 5 s end to end.

    python3 bench/bench_replay_cli.py [--history PATH] [--definitions FILE]
                                      [--engines local spark] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(history: str, definitions: str, engine: str, out: str) -> tuple[float, str]:
    """One run: its wall-clock seconds and the summary's time line."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "xmlevents", "replay", history,
                           "--definitions", definitions, "--out", out, "--engine", engine,
                           "-q"], capture_output=True, text=True, check=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    line = next(x for x in done.stdout.splitlines() if x.startswith("  time"))
    return seconds, line.split(None, 1)[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--history", default="examples/purchase_orders.jsonl.gz")
    p.add_argument("--definitions", default="examples/purchase_orders.xev")
    p.add_argument("--engines", nargs="+", default=["local", "spark"],
                   choices=["local", "spark"])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    print(f"{'engine':<7} {'run':>3} {'wall s':>7}  {'load':>14}  summary's time")
    with tempfile.TemporaryDirectory(prefix="xmlevents-bench-") as folder:
        for engine in args.engines:
            for n in range(1, args.repeat + 1):
                load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                seconds, line = run(args.history, args.definitions, engine,
                                    os.path.join(folder, f"{engine}-{n}"))
                print(f"{engine:<7} {n:>3} {seconds:>7.2f}  {load:>14}  {line}", flush=True)


if __name__ == "__main__":
    main()
