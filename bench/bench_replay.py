"""Replay of the commons-lang pom history: in process, and on Spark with local[1] and local[2].

Prints versions per second and primitive events per second for the whole replay, and the time
of the diff stage alone (checking, pairing and diffing; the part that runs in parallel across
version pairs), with the same xmldiff settings everywhere (F=0.5, ratio_mode="fast",
fast_match=True) and the matching chosen with ``--matching``: ``default`` (``DiffOptions()``:
unique tags), ``before`` (no unique tags: the matching before issue 14), ``keyed`` (unique
tags and the key ``pom:dependency=pom:groupId,pom:artifactId``). Targets (issue 6): local[2]
at least 1.6x faster than local[1] on the diff stage; the Spark job's overhead over the
in-process loop under 30% at local[1]; (issue 14) the keyed replay within 1.2x of ``before``.
Each configuration runs in its own process, after a warm-up job; session start-up is reported
apart.

    python3 bench/bench_replay.py [--history PATH] [--repeat N] [--matching M ...]
                                  [--modes inproc local[1] local[2]]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / \
    "commons-lang-pom.jsonl.gz"
POM = {"pom": "http://maven.apache.org/POM/4.0.0"}
MATCHINGS = ("default", "before", "keyed")


def options(matching: str) -> Any:
    """The DiffOptions of a ``--matching`` choice."""
    from xmlevents.replay import DiffOptions, Key

    if matching == "before":
        return DiffOptions(unique_tags=False)
    if matching == "keyed":
        return DiffOptions(keys=(Key.parse("pom:dependency=pom:groupId,pom:artifactId", POM),))
    return DiffOptions()


def _rows(path: str) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def in_process(path: str, repeat: int, matching: str) -> dict[str, float]:
    from lxml import etree

    from xmlevents.replay import edit_script, parse_version, replay_history

    opts = options(matching)
    rows = _rows(path)
    best, best_diff = float("inf"), float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        result = replay_history(rows, options=opts)
        best = min(best, time.perf_counter() - t)
        # the diff stage alone: check every version, diff consecutive good ones
        t = time.perf_counter()
        good = []
        for r in rows:
            try:
                parse_version(r["xml"])
                good.append(r["xml"])
            except etree.XMLSyntaxError:  # not well-formed: skipped, as the replay does
                pass
        for old, new in itertools.pairwise(good):
            edit_script(old, new, opts)
        best_diff = min(best_diff, time.perf_counter() - t)
    return {"seconds": best, "diff_seconds": best_diff, "versions": result.versions,
            "events": len(result.events)}


def on_spark(path: str, master: str, repeat: int, matching: str) -> dict[str, float]:
    from xmlevents.replay import diff_stage, make_session, read_versions_df, replay_frames

    opts = options(matching)
    t = time.perf_counter()
    spark = make_session(master, progress=False)
    startup = time.perf_counter() - t
    versions, _ = read_versions_df(spark, path)
    versions = versions.persist()
    versions.count()

    def job() -> tuple[float, float, int, int]:
        t = time.perf_counter()
        # the diff stage alone, forced by writing nowhere
        checked, _, diffed = diff_stage(spark, versions, opts)
        diffed.write.format("noop").mode("overwrite").save()
        checked.unpersist()
        diff = time.perf_counter() - t
        frames = replay_frames(spark, versions, options=opts)
        t = time.perf_counter()
        counts = {r["record"]: r["count"] for r in
                  frames.tagged.groupBy("record").count().collect()}
        whole = time.perf_counter() - t
        frames.unpersist()
        return whole, diff, counts.get("version", 0), counts.get("event", 0)

    job()  # warm-up: Python workers started, code loaded
    runs = [job() for _ in range(repeat)]
    spark.stop()
    whole = min(r[0] for r in runs)
    diff = min(r[1] for r in runs)
    return {"seconds": whole, "diff_seconds": diff, "versions": runs[0][2],
            "events": runs[0][3], "startup": startup}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--history", default=str(DEFAULT))
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--matching", nargs="+", choices=MATCHINGS, default=["default"])
    p.add_argument("--modes", nargs="+", choices=["inproc", "local[1]", "local[2]"],
                   default=["inproc", "local[1]", "local[2]"])
    p.add_argument("--one", choices=["inproc", "local[1]", "local[2]"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if not Path(args.history).exists():
        sys.exit(f"{args.history}: not found (the pom history lives in ../shared/data)")
    if args.one:
        matching = args.matching[0]
        result = (in_process(args.history, args.repeat, matching) if args.one == "inproc"
                  else on_spark(args.history, args.one, args.repeat, matching))
        print(json.dumps(result))
        return
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    results = {}
    for matching in args.matching:
        for mode in args.modes:
            out = subprocess.run([sys.executable, __file__, "--history", args.history,
                                  "--repeat", str(args.repeat), "--one", mode,
                                  "--matching", matching],
                                 capture_output=True, text=True, env=env, check=True).stdout
            results[(matching, mode)] = json.loads(out.strip().splitlines()[-1])
    print(f"history: {args.history}; xmldiff F=0.5 ratio_mode=fast fast_match=True; "
          f"best of {args.repeat}")
    print(f"{'matching':<8} {'run':<10} {'versions':>8} {'events':>8} {'seconds':>8} "
          f"{'versions/s':>10} {'events/s':>9} {'diff stage s':>12} {'start-up s':>10}")
    for (matching, mode), r in results.items():
        print(f"{matching:<8} {mode:<10} {r['versions']:>8} {r['events']:>8} "
              f"{r['seconds']:>8.2f} {r['versions'] / r['seconds']:>10.1f} "
              f"{r['events'] / r['seconds']:>9.0f} {r['diff_seconds']:>12.2f} "
              f"{r.get('startup', 0):>10.1f}")
    for matching in args.matching:
        one, two = results.get((matching, "local[1]")), results.get((matching, "local[2]"))
        local = results.get((matching, "inproc"))
        if one and two:
            print(f"{matching}: diff stage local[1] / local[2]: "
                  f"{one['diff_seconds'] / two['diff_seconds']:.2f}x (target >= 1.6x)")
        if one and local:
            print(f"{matching}: Spark local[1] overhead over in-process: "
                  f"{(one['seconds'] / local['seconds'] - 1) * 100:+.0f}% (target < 30%)")
    for mode in args.modes:
        keyed, before = results.get(("keyed", mode)), results.get(("before", mode))
        if keyed and before:
            print(f"{mode}: keyed / before: {keyed['seconds'] / before['seconds']:.2f}x "
                  "(target <= 1.2x)")


if __name__ == "__main__":
    main()
