"""Look for random Core XPath queries whose first evaluation is slow (issue 33, item 5).

Draws queries from the stream tests' own generator (``tests/stream/reference.py``'s
``queries``) with hypothesis, and times, for each, the compilation (``Query(q)``) and the first
evaluation on a few three-element documents, the automaton built as the input asks for it
(the second evaluation reuses it). A query still running after ``--limit`` seconds is
stopped (an alarm) and reported as over it. Prints the slowest queries with their times and
the automaton's figures (shapes, enter'/leave' transitions, the general check's types).

    python3 tools/stream_slow_queries.py [--count 20000] [--depth 3] [--limit 5]
        [--seed 0] [--top 15]

Development only: it takes minutes, and its figures are the shared machine's.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, Phase, given, seed, settings

from tests.stream.reference import compiles, queries
from xmlevents.stream import Query

DOCUMENTS = (b"<a><b/><c/></a>", b"<r><a>t</a><b/></r>", b"<b><!--c--><a/>\n<a/></b>")


class _Late(Exception):
    pass


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise _Late


def figures(q: Query) -> dict[str, Any]:
    """The automaton's size: shapes, memoised transitions, the general check's types."""
    a = q.automaton
    shapes = list(a._shapes.values()) + [a.root, *a._twins.values()]
    out: dict[str, Any] = {
        "shapes": a.shapes,
        "enters": sum(len(s.enter) for s in shapes),
        "leaves": sum(len(s.leave) for s in shapes),
        "variables": len(q.grammar.variables) if hasattr(q.grammar, "variables") else None,
    }
    u = a._universality
    if u is not None:
        out["types"] = sum(len(m) for m in getattr(u.types, "_minimal", {}).values())
        out["work"] = getattr(u.types, "work", None)
    out["general_off"] = a.general_off
    return out


def time_one(text: str, limit: float) -> tuple[float, float, dict[str, Any]]:
    """(compile seconds, first evaluations' seconds, figures); inf past ``limit``."""
    signal.setitimer(signal.ITIMER_REAL, limit)
    t0 = time.process_time()
    q = None
    try:
        q = Query(text)
        t1 = time.process_time()
        for doc in DOCUMENTS:
            for _m in q.evaluate(doc):
                pass
        t2 = time.process_time()
    except _Late:
        now = time.process_time()
        return (now - t0, float("inf"), figures(q)) if q is None else \
            (t1 - t0, float("inf"), figures(q))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return t1 - t0, t2 - t1, figures(q)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--limit", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--max-work", type=int, default=0,
                        help="the general check's budget (stream._universal.MAX_WORK) for "
                             "this search, to calibrate it (0: as it is)")
    args = parser.parse_args(argv)
    if args.max_work:
        from xmlevents.stream import _universal
        _universal.MAX_WORK = args.max_work
    signal.signal(signal.SIGALRM, _alarm)
    rows: list[tuple[float, float, str, dict[str, Any]]] = []
    seen: set[str] = set()
    started = time.time()

    @seed(args.seed)
    @settings(max_examples=args.count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(queries(depth=args.depth))
    def search(text: str) -> None:
        if text in seen or not compiles(text):
            return
        seen.add(text)
        compile_s, first_s, fig = time_one(text, args.limit)
        rows.append((compile_s + first_s, compile_s, text, fig))
        if compile_s + first_s > 1.0:
            print(f"slow: {compile_s + first_s:.3f} s  {text}  {fig}", flush=True)

    search()
    rows.sort(key=lambda r: -r[0])
    slow = [r for r in rows if r[0] > 1.0]
    print(f"{len(rows)} distinct queries (depth {args.depth}, seed {args.seed}) in "
          f"{time.time() - started:.0f} s, load {os.getloadavg()[0]:.2f}: "
          f"{len(slow)} over 1 s to compile and first evaluate "
          f"({100 * len(slow) / max(len(rows), 1):.3f}%)")
    for total, compile_s, text, fig in rows[:args.top]:
        shown = f"> {args.limit:.0f}" if total == float("inf") else f"{total:7.3f}"
        print(f"{shown} s (compile {compile_s:.3f})  {text}  {fig}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
