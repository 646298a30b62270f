"""``xmlevents query``: streaming regular tree queries over an XML document (issue 20, seed
004): one JSON line per match in detection order, a summary on stderr.

Kept apart so that ``detect`` and ``graph`` never import the stream package or lxml.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, TextIO

from xmlevents.algebra import XmlEventsError

from ._cli_common import parse_namespaces, query_text

__all__ = ["add_parsers", "run"]


def add_parsers(sub: Any) -> None:
    query = sub.add_parser(
        "query", help="find the elements a query selects in an XML document, as it is read",
        description="Evaluate a Core XPath query (or, with --grammar, a regular tree grammar "
                    "in the paper's notation) while the document is parsed. Prints one JSON "
                    "line per match, {\"node\", \"path\", \"attributes\", \"detected\"}, at "
                    "its earliest detection location (the start or end tag after which no "
                    "continuation could change the answer), and a summary on stderr. Exit "
                    "status: 0, 1 for a document that is not well-formed or not safe (after "
                    "the matches decided before the error), 2 for a query outside the subset.")
    query.add_argument("query", metavar="QUERY", help="the query text, or @FILE to read it")
    query.add_argument("file", metavar="FILE", nargs="?", default="-",
                       help="the XML document (default and '-': standard input)")
    query.add_argument("--count", action="store_true",
                       help="print only the number of matches")
    query.add_argument("--grammar", action="store_true",
                       help="QUERY is a grammar in the paper's notation (x -> a<x1, x2> | "
                            "*<x1, x2> | λ; start x0; select x)")
    query.add_argument("--ns", action="append", default=[], metavar="PREFIX=URI",
                       help="a namespace prefix the query uses (repeatable)")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Compile the query (2 if it cannot be), then stream the document (1 if it breaks)."""
    from xmlevents.stream import DocumentError, Query

    try:
        namespaces = parse_namespaces(args.ns)
        text = query_text(args.query)
    except XmlEventsError as exc:  # a bad prefix, or a query file that cannot be read
        err.write(f"xmlevents: error: {exc.for_cli()}\n")
        return 2
    try:
        query = Query(text, namespaces=namespaces, grammar=args.grammar)
    except XmlEventsError as exc:
        err.write(f"xmlevents: error: {exc.for_cli()}\n")
        return 2
    source: Any = sys.stdin.buffer if args.file == "-" else args.file
    t0 = time.perf_counter()
    status = 0
    try:
        evaluation = query.evaluate(source)
        for m in evaluation:
            if not args.count:
                out.write(json.dumps(m.to_json(), ensure_ascii=False) + "\n")
    except DocumentError as exc:
        out.flush()
        name = "standard input" if args.file == "-" else args.file
        err.write(f"xmlevents: error: {name}: {exc}\n")
        status = 1
    except OSError as exc:
        err.write(f"xmlevents: error: cannot read {args.file}: {exc.strerror or exc}\n")
        return 1
    stats = evaluation.stats
    if args.count:
        out.write(f"{stats.matches}\n")
    out.flush()
    err.write(f"xmlevents query: {stats.elements} elements read, {stats.matches} matches, "
              f"peak {stats.peak_candidates} candidates held, "
              f"{time.perf_counter() - t0:.3f} s\n")
    return status
