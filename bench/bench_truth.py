"""Truth measured (issue 14, item 6): the replay's dependency events against the versions' own.

What the replay says a pom.xml history changed, against what the versions themselves changed.

For each history (the shared commons-lang ``pom.xml``, ``../shared/data``, and commons-csv's,
``bench/data``) the truth is computed from the versions by key, without any diff
(``tests/replay/pom_truth.py``: a dependency is its parent path, groupId and artifactId; a
version adds the keys the previous well-formed version lacks). The history is then replayed
in process (``replay_history``) with ``DependencyAdded := ins(pom:dependency) ;
(ins(pom:dependency/pom:groupId) & ins(pom:dependency/pom:artifactId))`` and
``DependencyRemoved := del(pom:dependency/pom:groupId) & del(pom:dependency/pom:artifactId)``
under several xmldiff configurations, and the composites per version are compared with the
truth (totals, versions that differ, the worst versions); the primitive events per version are
compared with the lines ``difflib.unified_diff`` marks changed. Each configuration's wall time
is printed (one run; the machine's load average is printed with it). No assertion: the test
that holds the keyed replay to the truth is ``tests/replay/test_truth.py``.

Configurations: ``today`` (``DiffOptions()`` before issue 14: F=0.5, ratio_mode="fast",
fast_match=True, xml:id unique), ``no-fast-match`` (the same with fast_match=False),
``default`` (``DiffOptions()`` of the code as it is now; the only one not run unless named),
``unique-tags`` and ``unique-tags-no-fast-match`` (children unique by tag among their siblings
matched to their namesakes first), ``keyed`` and ``keyed-no-fast-match`` (the key
``pom:dependency=pom:groupId,pom:artifactId`` plus unique tags), ``keyed-all`` and
``keyed-all-no-fast-match`` (keys also for the dependencies' ancestors that repeat among their
siblings: ``pom:profile=pom:id``, ``pom:plugin=pom:groupId,pom:artifactId``).

    python3 bench/bench_truth.py [--histories PATH ...] [--configs NAME ...] [--limit N]
                                 [--worst K] [--json FILE]

A whole history takes about a minute per configuration on a loaded 2-core machine; ``--limit``
replays the first N versions only.

Truth across kinds of history (issue 30, item 2): ``--kinds [KIND ...]`` (all five when none is
named: ``pom``, ``rss``, ``manifest``, ``strings``, ``tei``) replays each kind's history in
``bench/data`` (``bench/data/README.md``: repository, file, commits, licence) three ways —
``no-key`` (``DiffOptions()``: what ``xmlevents replay --no-key`` does), ``inferred``
(``DiffOptions(keys="auto")``: what ``xmlevents replay`` does with no ``--key``) and ``expert``
(the key a person who knows the format gives ``--key``) — with definitions written as a user
would (``Added := ins(item) ; ins(item/link)``, ``Removed := del(item/link) ; del(item)``), and
prints, per history, the versions, the truth's additions and removals (computed from the
versions by the natural key, no diff: ``tests/replay/kinds_truth.py``), each way's counts, their
ratio to the truth, the versions whose counts differ, the keys inferred for the entries, and
the time; then one table of all kinds. The test that holds the inferred replay within
0.8–1.25× of the truth is ``tests/replay/test_truth_kinds.py``.

    python3 bench/bench_truth.py --kinds [KIND ...] [--kind-configs NAME ...] [--limit N]
                                 [--json FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.replay.kinds_truth import KINDS, Kind, count  # noqa: E402
from tests.replay.kinds_truth import truth as kind_truth  # noqa: E402
from tests.replay.pom_truth import (  # noqa: E402  (after the path is set)
    DEFINITIONS,
    NAMESPACES,
    VersionTruth,
    changed_lines,
    read_rows,
    truth,
)
from xmlevents.replay import DiffOptions, Key, replay_history  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
HISTORIES = [SHARED / "commons-lang-pom.jsonl.gz", ROOT / "bench" / "data" /
             "commons-csv-pom.jsonl.gz"]
KEY = "pom:dependency=pom:groupId,pom:artifactId"
#: Keys for the dependencies' ancestors that repeat among their siblings, for ``keyed-all``.
ANCESTOR_KEYS = ("pom:profile=pom:id", "pom:plugin=pom:groupId,pom:artifactId")


def _keys(*specs: str) -> tuple[Key, ...]:
    return tuple(Key.parse(spec, NAMESPACES) for spec in (KEY, *specs))


def _today(fast_match: bool) -> DiffOptions:
    """``DiffOptions()`` as it was before issue 14, with ``fast_match`` as given."""
    return DiffOptions(F=0.5, ratio_mode="fast", fast_match=fast_match, unique_tags=False)


CONFIGS: dict[str, Callable[[], DiffOptions]] = {
    "today": lambda: _today(True),
    "no-fast-match": lambda: _today(False),
    "default": DiffOptions,
    "unique-tags": lambda: DiffOptions(fast_match=True, unique_tags=True),
    "unique-tags-no-fast-match": lambda: DiffOptions(fast_match=False, unique_tags=True),
    "keyed": lambda: DiffOptions(keys=_keys(), unique_tags=True, fast_match=True),
    "keyed-no-fast-match": lambda: DiffOptions(keys=_keys(), unique_tags=True, fast_match=False),
    "keyed-all": lambda: DiffOptions(keys=_keys(*ANCESTOR_KEYS), unique_tags=True,
                                     fast_match=True),
    "keyed-all-no-fast-match": lambda: DiffOptions(keys=_keys(*ANCESTOR_KEYS), unique_tags=True,
                                                   fast_match=False),
    # keys inferred from the history (issue 30): what xmlevents replay does with no --key
    "inferred": lambda: DiffOptions(infer_keys=True),
}
DEFAULT_CONFIGS = [c for c in CONFIGS if c != "default"]


def describe(options: DiffOptions) -> str:
    """The settings that tell the configurations apart, keys by their local names."""
    keys = "; ".join(k.label for k in options.keys) or "none"
    return (f"F={options.F} ratio_mode={options.ratio_mode} fast_match={options.fast_match} "
            f"unique_tags={options.unique_tags} keys: {keys}")


@dataclasses.dataclass
class Run:
    """One configuration's replay of one history, counted per version."""

    config: str
    options: str
    seconds: float
    added: Counter[int]
    removed: Counter[int]
    events: Counter[int]
    errors: int


def replay(rows: list[dict[str, Any]], config: str, options: DiffOptions) -> Run:
    """Replay ``rows`` with ``options``; composites and events counted per version."""
    t = time.perf_counter()
    result = replay_history(rows, DEFINITIONS, options=options, namespaces=NAMESPACES)
    seconds = time.perf_counter() - t
    added: Counter[int] = Counter()
    removed: Counter[int] = Counter()
    for c in result.composites:
        if c["type"] == "DependencyAdded":
            added[c["version"]] += 1
        elif c["type"] == "DependencyRemoved":
            removed[c["version"]] += 1
    events = Counter(e["version"] for e in result.events)
    return Run(config, describe(options), seconds, added, removed, events, len(result.errors))


def _ratio(events: int, lines: int) -> float:
    return events / lines if lines else float("inf") if events else 0.0


def report(name: str, rows: list[dict[str, Any]], truths: list[VersionTruth],
           lines: dict[int, int], runs: list[Run], worst: int) -> None:
    """Print the comparison of ``runs`` with the truth for one history."""
    versions = [t.version for t in truths]
    bad = len(rows) - len(truths)
    print(f"\n== {name}: {len(rows)} versions, {len(truths)} well-formed ({bad} skipped), "
          f"{sum(lines.values()):,} changed lines")
    ta, tr = sum(t.added for t in truths), sum(t.removed for t in truths)
    aa, ar = sum(t.added_anywhere for t in truths), sum(t.removed_anywhere for t in truths)
    print(f"truth by key: added {ta} in {sum(1 for t in truths if t.added)} versions, removed "
          f"{tr} in {sum(1 for t in truths if t.removed)}; anywhere in the document (moves "
          f"between parents not counted): added {aa}, removed {ar}")
    if not runs:
        return

    print(f"\n{'config':<26} {'seconds':>8} {'events':>8} {'Added':>6} {'≠ver':>5} "
          f"{'≠any':>5} {'Removed':>7} {'≠ver':>5} {'≠any':>5} {'errors':>6}")
    print(f"{'truth (by key)':<26} {'':>8} {'':>8} {ta:>6} {'':>5} {'':>5} {tr:>7}")
    for r in runs:
        da = sum(1 for t in truths if r.added[t.version] != t.added)
        dr = sum(1 for t in truths if r.removed[t.version] != t.removed)
        xa = sum(1 for t in truths if r.added[t.version] != t.added_anywhere)
        xr = sum(1 for t in truths if r.removed[t.version] != t.removed_anywhere)
        print(f"{r.config:<26} {r.seconds:>8.1f} {r.events.total():>8,} "
              f"{r.added.total():>6} {da:>5} {xa:>5} {r.removed.total():>7} {dr:>5} {xr:>5} "
              f"{r.errors:>6}")
    print("(≠ver: versions whose count differs from the truth under a parent; ≠any: from the "
          "truth anywhere in the document)")

    for r in runs:
        off = sorted(((abs(r.added[t.version] - t.added) + abs(r.removed[t.version] - t.removed),
                       t) for t in truths), key=lambda p: (-p[0], p[1].version))
        shown = [(d, t) for d, t in off if d][:worst]
        if not shown:
            print(f"\n{r.config}: every version equals the truth")
            continue
        print(f"\n{r.config}: worst versions (replay added/removed vs truth; events, changed "
              "lines)")
        for _, t in shown:
            v = t.version
            print(f"  v{v:<5} added {r.added[v]:>3} vs {t.added:<3} removed {r.removed[v]:>3} vs "
                  f"{t.removed:<3} (anywhere {t.added_anywhere}/{t.removed_anywhere}); "
                  f"{r.events[v]:,} events, {lines[v]} lines")

    print(f"\nprimitive events against changed lines (versions after the first; {len(versions)}"
          " well-formed)")
    print(f"{'config':<26} {'events':>8} {'lines':>7} {'ev/line':>7} {'median':>7} "
          f"{'p90':>6} {'>10x':>5} {'max':>7} {'at':>6} {'ev,0 ln':>7}")
    later = versions[1:]
    for r in runs:
        ratios = [_ratio(r.events[v], lines[v]) for v in later if lines[v]]
        events = sum(r.events[v] for v in later)
        total = sum(lines[v] for v in later)
        top = max(later, key=lambda v: (_ratio(r.events[v], lines[v]) if lines[v] else 0, -v),
                  default=None)
        no_lines = sum(1 for v in later if r.events[v] and not lines[v])
        p90 = statistics.quantiles(ratios, n=10)[-1] if len(ratios) > 1 else 0.0
        over = sum(1 for x in ratios if x > 10)
        print(f"{r.config:<26} {events:>8,} {total:>7,} {_ratio(events, total):>7.1f} "
              f"{statistics.median(ratios) if ratios else 0:>7.1f} {p90:>6.1f} {over:>5} "
              f"{max(ratios, default=0):>7.1f} {'v' + str(top):>6} {no_lines:>7}")
    print("(ev/line: events over changed lines, all versions after the first together; median, "
          "p90, max (at the version): of the ratio per version with changed lines; >10x: "
          "versions with more than 10 events a changed line; ev,0 ln: versions with events but "
          "no changed line)")
    for r in runs:
        most = sorted(later, key=lambda v: (-r.events[v], v))[:worst]
        print(f"{r.config}: most events: " + ", ".join(
            f"v{v} {r.events[v]:,} ev/{lines[v]} ln" for v in most))


#: The ways each kind is replayed: no key, keys inferred, the expert's key.
KIND_CONFIGS: dict[str, Callable[[Kind], DiffOptions]] = {
    "no-key": lambda kind: DiffOptions(),
    "inferred": lambda kind: DiffOptions(keys="auto"),
    "expert": lambda kind: DiffOptions(
        keys=tuple(Key.parse(spec, dict(kind.namespaces)) for spec in kind.expert)),
}
#: The range a replay's count must fall in, as a share of the truth's (issue 30).
LOW, HIGH = 0.8, 1.25


def ratio(replayed: int, truth: int) -> float:
    """``replayed / truth``; 1 where both are 0, infinite where only the truth is."""
    if truth == 0:
        return 1.0 if replayed == 0 else float("inf")
    return replayed / truth


def within(replayed: int, truth: int) -> bool:
    """Whether ``replayed`` is within :data:`LOW`–:data:`HIGH` of ``truth``."""
    return LOW <= ratio(replayed, truth) <= HIGH


@dataclasses.dataclass
class KindRun:
    """One way of replaying one kind's history, against its truth."""

    kind: str
    config: str
    seconds: float
    added: int
    removed: int
    versions_off: int  # versions whose additions or removals differ from the truth
    later_added: int  # after the first well-formed version (which adds all it has)
    later_removed: int
    keys: str  # the keys inferred or given for the entries
    errors: int


def _entry_keys(kind: Kind, keys: Any) -> str:
    """The keys among ``keys`` (Key objects) of the elements the definitions count."""
    names = {line.split("ins(", 1)[1].split(")", 1)[0].split(":")[-1]
             for line in kind.definitions.splitlines() if "Added :=" in line}
    return "; ".join(k.label for k in keys if k.element.rsplit("}", 1)[-1] in names) or "none"


def run_kind(kind: Kind, rows: list[dict[str, Any]], config: str) -> KindRun:
    """Replay ``rows`` of ``kind`` the way ``config`` says, counted against the truth."""
    options = KIND_CONFIGS[config](kind)
    t = time.perf_counter()
    result = replay_history(rows, kind.definitions, options=options,
                            namespaces=dict(kind.namespaces))
    seconds = time.perf_counter() - t
    added, removed = count(result.composites)
    truths = kind_truth(rows, kind)
    off = sum(1 for v in truths if (added[v.version], removed[v.version]) != (v.added,
                                                                                v.removed))
    keys = [k.key for k in result.inferred] if config == "inferred" else list(options.keys)
    first = truths[0].version if truths else 0
    return KindRun(kind.name, config, seconds, added.total(), removed.total(), off,
                   added.total() - added[first], removed.total() - removed[first],
                   _entry_keys(kind, keys), len(result.errors))


def _cell(run: KindRun, ta: int, tr: int) -> str:
    return (f"{run.added}/{run.removed} ({ratio(run.added, ta):.2f}/"
            f"{ratio(run.removed, tr):.2f})")


def run_kinds(names: list[str], configs: list[str], limit: int | None,
              json_out: str | None) -> None:
    """Print the truth across kinds of history (see the module)."""
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{os.cpu_count()} CPUs; one run per way")
    table: list[tuple[Kind, int, int, int, list[KindRun]]] = []
    for kind in (KINDS[n] for n in names):
        if not kind.path.exists():
            print(f"\n== {kind.name}: not found at {kind.path}, skipped")
            continue
        rows = sorted(read_rows(kind.path), key=lambda r: int(r["version"]))
        if limit is not None:
            rows = rows[:limit]
        truths = kind_truth(rows, kind)
        ta, tr = sum(t.added for t in truths), sum(t.removed for t in truths)
        la, lr = ta - truths[0].added, tr - truths[0].removed
        print(f"\n== {kind.name}: {kind.source} ({kind.file}): {len(rows)} versions, "
              f"{len(truths)} well-formed; truth by key: added {ta}, removed {tr} (after the "
              f"first version: {la}, {lr})", flush=True)
        runs = []
        for config in configs:
            run = run_kind(kind, rows, config)
            runs.append(run)
            print(f"  {config:<9} {run.seconds:>7.1f} s  added {run.added:>5} "
                  f"({ratio(run.added, ta):.2f}×)  removed {run.removed:>5} "
                  f"({ratio(run.removed, tr):.2f}×)  after the first: {run.later_added}/"
                  f"{run.later_removed} ({ratio(run.later_added, la):.2f}/"
                  f"{ratio(run.later_removed, lr):.2f}×)  versions off {run.versions_off:>4}  "
                  f"errors {run.errors:>3}  keys: {run.keys}", flush=True)
        table.append((kind, len(rows), ta, tr, runs))

    print(f"\n{'kind':<9} {'versions':>8} {'truth +/-':>11} " + " ".join(
        f"{c + ' +/- (×)':>27}" for c in configs) + "  in range (no key / inferred)")
    for kind, versions, ta, tr, runs in table:
        cells = " ".join(f"{_cell(r, ta, tr):>27}" for r in runs)
        verdict = " / ".join(
            "yes" if within(r.added, ta) and within(r.removed, tr) else "no"
            for r in runs if r.config in ("no-key", "inferred"))
        print(f"{kind.name:<9} {versions:>8} {f'{ta}/{tr}':>11} {cells}  {verdict}")
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if json_out:
        Path(json_out).write_text(json.dumps(
            {kind.name: {"versions": versions, "truth": [ta, tr],
                         "runs": [dataclasses.asdict(r) for r in runs]}
             for kind, versions, ta, tr, runs in table}), encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kinds", nargs="*", choices=list(KINDS), metavar="KIND",
                   help=f"the truth across kinds of history instead: of {', '.join(KINDS)} "
                   "(all when none is named)")
    p.add_argument("--kind-configs", nargs="+", default=list(KIND_CONFIGS),
                   choices=list(KIND_CONFIGS), metavar="NAME",
                   help=f"with --kinds: of {', '.join(KIND_CONFIGS)} (default: all)")
    p.add_argument("--histories", nargs="+", default=[str(h) for h in HISTORIES],
                   help="version tables (JSON lines, .gz)")
    p.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS, choices=list(CONFIGS),
                   metavar="NAME", help=f"of {', '.join(CONFIGS)} (default: "
                   f"{' '.join(DEFAULT_CONFIGS)})")
    p.add_argument("--limit", type=int, help="the first N versions only")
    p.add_argument("--worst", type=int, default=5, help="worst versions shown (default 5)")
    p.add_argument("--json", help="write the per-version counts to this file")
    args = p.parse_args()
    if args.kinds is not None:
        run_kinds(args.kinds or list(KINDS), args.kind_configs, args.limit, args.json)
        return

    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{os.cpu_count()} CPUs; one run per configuration")
    dump: dict[str, Any] = {}
    for history in map(Path, args.histories):
        if not history.exists():
            print(f"\n== {history.name}: not found at {history}, skipped")
            continue
        rows = sorted(read_rows(history), key=lambda r: int(r["version"]))
        if args.limit is not None:
            rows = rows[:args.limit]
        truths, lines = truth(rows), changed_lines(rows)
        runs = []
        for config in args.configs:
            options = CONFIGS[config]()
            run = replay(rows, config, options)
            print(f"{history.name}: {config}: {run.seconds:.1f} s ({describe(options)})",
                  flush=True)
            runs.append(run)
        report(history.name, rows, truths, lines, runs, args.worst)
        dump[history.name] = {
            "truth": [dataclasses.asdict(t) for t in truths], "lines": lines,
            "runs": {r.config: {"options": r.options, "seconds": r.seconds,
                                "added": r.added, "removed": r.removed, "events": r.events}
                     for r in runs}}
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        Path(args.json).write_text(json.dumps(dump), encoding="utf-8")


if __name__ == "__main__":
    main()
