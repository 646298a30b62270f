"""``xmlevents cel``: CEL queries over JSON-lines event streams (issue 19).

Kept apart so that ``detect`` and ``graph`` never import the CEL package.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

from xmlevents.algebra import XmlEventsError

from ._cli_common import ArgumentFailure

if TYPE_CHECKING:
    from xmlevents.cel import Event, Match

__all__ = ["add_parsers", "run"]


def add_parsers(sub: Any) -> None:
    cel = sub.add_parser(
        "cel", help="run a CEL query (CORE's CEQL) over a stream of events",
        description="Find the complex events of a CEQL query in a JSON-lines stream (one "
                    "object a line with its \"type\"; positions are line numbers from 0). "
                    "Prints one JSON line per complex event, {\"end\": ..., \"events\": "
                    "[...]}, in order of their last position.")
    cel.add_argument("query", metavar="QUERY", help="the query text, or @FILE to read it")
    cel.add_argument("events", metavar="EVENTS", nargs="?", default="-",
                     help="the JSON-lines stream (default: standard input)")
    cel.add_argument("--count", action="store_true",
                     help="print only how many complex events there are (without "
                          "enumerating them, under ALL and no window)")
    cel.add_argument("--reference", action="store_true",
                     help="evaluate by the semantics as written (exponential: small streams; "
                          "takes filters over several variables)")


def _text(arg: str) -> str:
    if not arg.startswith("@"):
        return arg
    try:
        with open(arg[1:], encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ArgumentFailure(f"cannot read the query file {arg[1:]!r}: {exc}") from None


def _lines(path: str) -> Iterator[str]:
    if path == "-":
        yield from sys.stdin
        return
    try:
        with open(path, encoding="utf-8") as f:
            yield from f
    except (OSError, UnicodeDecodeError) as exc:
        raise ArgumentFailure(f"cannot read the stream {path!r}: {exc}") from None


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Evaluate the query; write what was found before a bad line, then report it (1)."""
    from xmlevents.cel import StreamError, compile_query, count, evaluate, read_jsonl, reference

    try:
        query = compile_query(_text(args.query))
    except XmlEventsError as exc:
        err.write(f"xmlevents: error: {exc.for_cli()}\n")
        return 1
    source = "standard input" if args.events == "-" else args.events
    failure: list[StreamError] = []

    def events() -> Iterator[Event]:
        try:
            yield from read_jsonl(_lines(args.events), source=source)
        except StreamError as exc:  # what was found before the bad line is written
            failure.append(exc)

    try:
        if args.reference:
            matches: Iterable[Match] = reference(query, list(events()))
            if args.count:
                out.write(f"{len(list(matches))}\n")
                matches = ()
        elif args.count:
            out.write(f"{count(query, events())}\n")
            matches = ()
        else:
            matches = evaluate(query, events())
        for m in matches:  # the automaton's are written as they are found
            out.write(json.dumps(m.to_json()) + "\n")
    except XmlEventsError as exc:
        err.write(f"xmlevents: error: {exc.for_cli()}\n")
        return 1
    out.flush()
    if failure:
        err.write(f"xmlevents: error: {failure[0]}\n")
        return 1
    return 0
