"""Run after run (issue 29, item 4): what a checkpointed replay of "a day's new versions"
costs against replaying the whole history again, and what the checkpoint weighs.

The example purchase-order history (3 documents, 353 versions) with its definitions and a
CEL query: one replay of everything (``resume_history`` into a fresh folder), then the same
history as a first run of all but the last ``--tail`` versions of each document and a second
run of the whole input (only the tail is replayed). Prints the seconds of each, the folder's
size and the largest state, and checks that the two runs' rows equal the one run's.

Then the same with the command line's local engine (``xmlevents replay --engine local
--checkpoint``, each run a fresh process: its seconds and peak RSS), the outputs of the two
runs (``OUT/<output>/run=N``) read back and compared with the one run's (``--no-cli``: not).

    python3 bench/bench_checkpoint.py [--tail 5] [--no-cli]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from xmlevents.replay import resume_history

ROOT = Path(__file__).resolve().parents[1]
QUERY = ("SELECT * FROM S WHERE ins AS i ; upd AS u FILTER i[path MATCHES 'item'] AND "
         "u[path MATCHES 'item/price/text()'] PARTITION BY [PROJECT(ids, 'orders/order/item')]")


def _size(folder: str) -> tuple[int, int]:
    sizes = [os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(folder) for f in fs]
    return sum(sizes), max(sizes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tail", type=int, default=5, help="versions of each document in "
                        "the second run")
    parser.add_argument("--no-cli", dest="cli", action="store_false",
                        help="not the command line's local engine")
    args = parser.parse_args()
    with gzip.open(ROOT / "examples" / "purchase_orders.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    defs = (ROOT / "examples" / "purchase_orders.xev").read_text()
    top: dict[str, int] = {}
    for r in rows:
        top[r["doc"]] = max(top.get(r["doc"], -1), r["version"])
    head = [r for r in rows if r["version"] <= top[r["doc"]] - args.tail]
    print(f"load {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f}; {len(rows)} versions, "
          f"the last {args.tail} of each document in the second run")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        one = resume_history(rows, os.path.join(tmp, "one"), defs, queries=[QUERY])
        whole = time.perf_counter() - t
        folder = os.path.join(tmp, "two")
        t = time.perf_counter()
        first = resume_history(head, folder, defs, queries=[QUERY])
        t1 = time.perf_counter() - t
        t = time.perf_counter()
        second = resume_history(rows, folder, defs, queries=[QUERY])
        t2 = time.perf_counter() - t
        total, largest = _size(folder)
    same = all(
        sorted(json.dumps(x, sort_keys=True) for x in getattr(one, n))
        == sorted(json.dumps(x, sort_keys=True) for x in getattr(first, n) + getattr(second, n))
        for n in ("events", "composites", "errors", "cel"))
    print(f"one run of everything: {whole:.2f} s ({one.versions} versions replayed)")
    print(f"first run: {t1:.2f} s ({first.versions} versions); second run: {t2:.2f} s "
          f"({second.versions} versions, {t2 / max(second.versions, 1) * 1000:.0f} ms a "
          f"version with the states read and written)")
    print(f"checkpoint: {total / 1024:.0f} KiB, largest state {largest / 1024:.0f} KiB; "
          f"two runs = one run: {same}")
    if args.cli:
        _cli(rows, head)


def _replay(table: str, out: str, checkpoint: str | None) -> tuple[float, float]:
    """One ``xmlevents replay --engine local`` in a fresh process: its seconds and peak
    RSS (MiB)."""
    cmd = [sys.executable, "-m", "xmlevents", "replay", table, "--engine", "local", "-q",
           "--definitions", str(ROOT / "examples" / "purchase_orders.xev"), "--cel", QUERY,
           "--out", out, *(["--checkpoint", checkpoint] if checkpoint else [])]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: status {proc.returncode}")
    return time.perf_counter() - t, usage.ru_maxrss / 1024


def _rows(folder: str) -> Counter[str]:
    import pyarrow.dataset as ds  # type: ignore[import-untyped]

    table = ds.dataset(folder, partitioning="hive").to_table()
    return Counter(json.dumps({k: v for k, v in r.items() if k != "run"}, sort_keys=True,
                              default=str) for r in table.to_pylist())


def _cli(rows: list[dict[str, object]], head: list[dict[str, object]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tables = {}
        for name, some in (("all", rows), ("head", head)):
            tables[name] = os.path.join(tmp, f"{name}.jsonl")
            with open(tables[name], "w", encoding="utf-8") as f:
                f.writelines(json.dumps(r) + "\n" for r in some)
        whole, whole_rss = _replay(tables["all"], os.path.join(tmp, "one"), None)
        ck, out = os.path.join(tmp, "ck"), os.path.join(tmp, "runs")
        t1, rss1 = _replay(tables["head"], out, ck)
        t2, rss2 = _replay(tables["all"], out, ck)
        same = all(_rows(os.path.join(tmp, "one", n)) == _rows(os.path.join(out, n))
                   for n in ("events", "composites", "errors", "cel"))
    print(f"replay --engine local, one run of everything: {whole:.2f} s, peak {whole_rss:.0f} "
          "MiB")
    print(f"replay --engine local --checkpoint: first run {t1:.2f} s (peak {rss1:.0f} MiB), "
          f"second run {t2:.2f} s (peak {rss2:.0f} MiB); two runs = one run: {same}")


if __name__ == "__main__":
    main()
