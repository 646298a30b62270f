"""Latency of ``replay --follow`` (issue 29, item 5): from a file's arrival in the followed
folder to its rows written.

A follower (:func:`xmlevents.replay.follow`, ``trigger`` seconds between micro-batches, the
example's definitions) is started on a ``local[2]`` session over a folder holding the
example history's first versions (the first micro-batch warms the Python workers up and is
not measured). Then, ``--files`` times, one file with the next version of each of the three
documents is renamed into the folder and the clock runs until the micro-batch that read it
has written its ``events`` partition (``OUT/events/batch=N/_SUCCESS``) and Spark committed
it (``CKPT/stream/commits/N``). Printed: each latency, then the median, least and most, and
the machine's load.

    python3 bench/bench_follow_latency.py [--trigger 1] [--files 5] [--start 10]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "purchase_orders.jsonl.gz"
DEFS = ROOT / "examples" / "purchase_orders.xev"


def _write(folder: Path, name: str, rows: list[dict[str, object]]) -> None:
    """A file arriving whole: written beside the folder, then renamed in."""
    tmp = folder.parent / f".{name}"
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    os.replace(tmp, folder / name)


def _wait(path: Path, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"no {path} in {timeout} s")
        time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trigger", type=float, default=1.0)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--start", type=int, default=10,
                        help="versions of each document in the folder before the clock")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from xmlevents.replay import follow, make_session

    with gzip.open(EXAMPLE, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    scratch = Path(tempfile.mkdtemp(prefix="xmlevents-follow-bench-"))
    src, out, ck = scratch / "in", scratch / "out", scratch / "ck"
    src.mkdir()
    _write(src, "start.jsonl", [r for r in rows if r["version"] < args.start])
    spark = make_session("local[2]", progress=False, **{"spark.sql.shuffle.partitions": "2"})
    follower = follow(spark, str(src), str(out), str(ck), DEFS.read_text(encoding="utf-8"),
                      trigger=args.trigger, partitions=2)
    commits = ck / "stream" / "commits"
    try:
        _wait(commits / "0")
        latencies = []
        for i in range(args.files):
            version = args.start + i
            batch = i + 1
            arrived = time.perf_counter()
            _write(src, f"v{version}.jsonl", [r for r in rows if r["version"] == version])
            _wait(out / "events" / f"batch={batch}" / "_SUCCESS")
            written = time.perf_counter()
            _wait(commits / str(batch))
            committed = time.perf_counter()
            latencies.append(written - arrived)
            print(f"version {version}: rows written {written - arrived:.2f} s after the "
                  f"file arrived, committed {committed - arrived:.2f} s after", flush=True)
        print(f"trigger {args.trigger} s, {args.files} files: median "
              f"{statistics.median(latencies):.2f} s, least {min(latencies):.2f} s, most "
              f"{max(latencies):.2f} s; load {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores")
    finally:
        follower.stop()
        spark.stop()


if __name__ == "__main__":
    main()
