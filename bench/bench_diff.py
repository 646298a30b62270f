"""Diffs that cost what changed (issue 29, item 2): a catalogue history, replayed.

Generates, seeded, the history of one catalogue document of realistic shape — ~2,000
``item`` elements (attributes ``id`` and ``cat``; children ``name``, ``price``, ``stock``,
sometimes a ``note``), ~150 KB — where each version makes 1–5 changes
to the one before: a price or a stock changed, a name edited, a category changed, a note added
or removed, an item inserted, deleted or moved. Nothing is read from ``../shared/data``.

Then replays it, each measurement in a fresh process: ``inproc`` (:func:`replay_history`, the
whole history in one call), ``local`` (``xmlevents replay --engine local``, end to end) and
``spark`` (``--engine spark --master local[2]``), with the code as it is (``now``; the command
line's defaults, keys inferred since issue 30; in process no key), with the
fast path (``on``: unchanged subtrees matched whole by their canonical forms, the default) and
without it (``off``: ``--no-identical-subtrees``, xmldiff node by node), and with the code of
the day issue 29 was filed (``today``: ``git archive`` of ``--today-rev``, 53a30cc, unpacked
and laid out by its own ``tools/linktree.py`` in a temporary folder, put first on
``PYTHONPATH``; its default options). Prints, per run, the versions, the wall-clock seconds,
seconds per version, the peak RSS of the process (and its children, for the CLI), the events
(in process) and the machine's load average before the run. Target (issue 29): at least 10x
faster per version than ``today``.

    python3 bench/bench_diff.py [--versions 100 400 1600 6400] [--modes inproc local spark]
                                [--fast on off] [--code now today] [--today-rev REV]
                                [--items 2000] [--seed 29] [--write PATH]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

CATEGORIES = ("tools", "garden", "kitchen", "toys", "books", "paint", "lighting", "storage")
NOUNS = ("hex key", "hammer", "trowel", "kettle", "lamp", "shelf", "brush", "ladder", "hose",
         "spanner", "drill bit", "jar", "rake", "bulb", "crate", "glue", "saw", "bucket")
ADJECTIVES = ("small", "large", "blue", "steel", "oak", "folding", "cordless", "classic")
NOTES = ("back soon", "discontinued", "new", "bulk only", "sale")


class Catalogue:
    """The live state of the generated catalogue: items in document order."""

    def __init__(self, items: int, rng: random.Random) -> None:
        self.rng = rng
        self.next_id = 1
        self.items: list[dict[str, Any]] = [self._item() for _ in range(items)]

    def _item(self) -> dict[str, Any]:
        rng = self.rng
        item = {"id": f"i{self.next_id}", "category": rng.choice(CATEGORIES),
                "name": f"{rng.choice(NOUNS)} {rng.randint(1, 99)}",
                "price": f"{rng.randint(1, 300)}.{rng.randint(0, 99):02d}",
                "stock": str(rng.randint(0, 500)),
                "note": rng.choice(NOTES) if rng.random() < 0.1 else None}
        self.next_id += 1
        return item

    def change(self) -> None:
        """One change, chosen by weight."""
        rng, items = self.rng, self.items
        kind = rng.choices(("price", "stock", "name", "category", "note", "insert", "delete",
                            "move"), weights=(25, 20, 10, 8, 7, 12, 10, 8))[0]
        i = rng.randrange(len(items))
        item = items[i]
        if kind == "price":
            item["price"] = f"{rng.randint(1, 300)}.{rng.randint(0, 99):02d}"
        elif kind == "stock":
            item["stock"] = str(max(0, int(item["stock"]) + rng.randint(-20, 20)))
        elif kind == "name":
            noun = item["name"].split()[-2]
            item["name"] = f"{rng.choice(ADJECTIVES)} {noun} {rng.randint(1, 99)}"
        elif kind == "category":
            item["category"] = rng.choice(CATEGORIES)
        elif kind == "note":
            item["note"] = None if item["note"] else rng.choice(NOTES)
        elif kind == "insert":
            items.insert(i, self._item())
        elif kind == "delete" and len(items) > 1:
            del items[i]
        elif kind == "move":
            items.insert(rng.randrange(len(items)), items.pop(i))

    def xml(self, version: int) -> str:
        parts = ['<?xml version="1.0" encoding="UTF-8"?>\n',
                 '<catalogue xmlns="urn:example:catalogue">\n']
        for it in self.items:
            note = f'<note>{it["note"]}</note>' if it["note"] else ""
            parts.append(f'  <item id="{it["id"]}" cat="{it["category"]}"><name>{it["name"]}'
                         f'</name><price>{it["price"]}</price><stock>{it["stock"]}</stock>'
                         f'{note}</item>\n')
        parts.append("</catalogue>\n")
        return "".join(parts)


def history(versions: int, items: int = 2000, seed: int = 29) -> Iterator[dict[str, Any]]:
    """The rows (doc, version, time, xml) of the catalogue's first ``versions`` versions."""
    rng = random.Random(seed)
    cat = Catalogue(items, rng)
    for v in range(versions):
        if v:
            for _ in range(rng.randint(1, 5)):
                cat.change()
        yield {"doc": "catalogue", "version": v, "time": 1_700_000_000 + 3600 * v,
               "xml": cat.xml(v)}


def write(path: str, versions: int, items: int, seed: int) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for row in history(versions, items, seed):
            f.write(json.dumps(row) + "\n")


def _inproc(path: str, fast: bool | None) -> None:
    """In this (fresh) process: replay_history over the file; prints one JSON line."""
    from xmlevents.replay import DiffOptions, replay_history

    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    start = time.perf_counter()
    # The code of another day has the options of its day (identical_subtrees meant another
    # thing before issue 29): its defaults.
    options = None if fast is None else DiffOptions(identical_subtrees=fast)
    result = replay_history(rows, options=options)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "versions": result.versions,
                      "events": len(result.events)}))


def today_tree(rev: str, folder: str) -> str:
    """The package as it was at ``rev``, laid out for import under ``folder``: the folder to
    put first on ``PYTHONPATH``."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = os.path.join(folder, "today")
    os.makedirs(src)
    archive = subprocess.run(["git", "-C", repo, "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    subprocess.run([sys.executable, "tools/linktree.py"], cwd=src, check=True,
                   capture_output=True)
    return os.path.join(src, "build", "tree")


def _run(argv: list[str], path: str | None = None) -> tuple[float, float, str]:
    """Run ``argv`` (with ``path`` first on ``PYTHONPATH``, if given): its wall-clock seconds,
    its peak RSS in MB (its own, with the children it waited for) and its standard output."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([path, *filter(None, [env.get("PYTHONPATH")])])
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        # Not from the repository, whose xmlevents/ holds only the facade.
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, text=True,
                                cwd=tempfile.gettempdir(), env=env)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{err}")
        out.seek(0)
        return seconds, usage.ru_maxrss / 1024, out.read()


def measure(mode: str, fast: bool, path: str, out: str, code: str | None = None
            ) -> dict[str, Any]:
    """One run of ``mode`` over the history at ``path``, in a fresh process (``code``: the
    folder of another version of the package, run with its default options)."""
    if mode == "inproc":
        flags = ["--defaults"] if code else [] if fast else ["--no-identical-subtrees"]
        _, rss, stdout = _run([sys.executable, __file__, "--inproc", path, *flags], code)
        got = dict(json.loads(stdout.splitlines()[-1]))
        got["rss_mb"] = rss
        return got
    argv = [sys.executable, "-m", "xmlevents", "replay", path, "--out", out, "--engine", mode,
            "-q"]
    if mode == "spark":
        argv += ["--master", "local[2]"]
    if not fast and not code:
        argv.append("--no-identical-subtrees")
    seconds, rss, _ = _run(argv, code)
    return {"seconds": seconds, "rss_mb": rss}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--versions", type=int, nargs="+", default=[100, 400, 1600, 6400])
    p.add_argument("--modes", nargs="+", default=["inproc", "local"],
                   choices=["inproc", "local", "spark"])
    p.add_argument("--items", type=int, default=2000)
    p.add_argument("--seed", type=int, default=29)
    p.add_argument("--write", metavar="PATH", help="only write the history (.jsonl.gz)")
    p.add_argument("--fast", nargs="+", default=["on", "off"], choices=["on", "off"],
                   help="with the fast path (on), without it (off), or both")
    p.add_argument("--code", nargs="+", default=["now"], choices=["now", "today"],
                   help="the code as it is, and/or as it was at --today-rev")
    p.add_argument("--today-rev", default="53a30cc",
                   help="the commit of 'today' (default: 53a30cc, when issue 29 was filed)")
    p.add_argument("--inproc", metavar="PATH", help=argparse.SUPPRESS)
    p.add_argument("--defaults", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--no-identical-subtrees", dest="identical", action="store_false",
                   help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.inproc:
        _inproc(args.inproc, None if args.defaults else args.identical)
        return
    if args.write:
        write(args.write, max(args.versions), args.items, args.seed)
        return
    print(f"{'code':<5} {'mode':<7} {'fast':<4} {'versions':>8} {'seconds':>8} "
          f"{'s/version':>9} {'peak MB':>8}  {'load':>14}", flush=True)
    with tempfile.TemporaryDirectory(prefix="xmlevents-bench-diff-") as folder:
        today = today_tree(args.today_rev, folder) if "today" in args.code else None
        runs = [("now", fast) for fast in args.fast if "now" in args.code]
        runs += [("today", "-")] if today else []
        for versions in args.versions:
            path = os.path.join(folder, f"catalogue-{versions}.jsonl.gz")
            write(path, versions, args.items, args.seed)
            for mode in args.modes:
                for code, fast in runs:
                    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                    got = measure(mode, fast != "off", path,
                                  os.path.join(folder, f"out-{code}-{mode}-{fast}-{versions}"),
                                  today if code == "today" else None)
                    print(f"{code:<5} {mode:<7} {fast:<4} {versions:>8} {got['seconds']:>8.1f} "
                          f"{got['seconds'] / versions:>9.3f} {got['rss_mb']:>8.0f}  {load:>14}"
                          + (f"  events {got['events']}" if "events" in got else ""),
                          flush=True)


if __name__ == "__main__":
    main()
