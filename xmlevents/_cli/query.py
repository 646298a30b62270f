"""``xmlevents query``: streaming regular tree queries over an XML document (issue 20, seed
004): one JSON line per match in detection order, a summary on stderr.

Kept apart so that ``detect`` and ``graph`` never import the stream package or lxml. The
document is read through the one opener of inputs (``-``, ``.gz``, plain:
:func:`~._common.open_input`).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from xmlevents.algebra import XmlEventsError

from ._common import (
    Failure,
    Streams,
    add_namespace_option,
    input_name,
    open_input,
    parse_namespaces,
    query_text,
)
from ._query_hint import Head, namespace_hint

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """``query``'s parser."""
    query = sub.add_parser(
        "query", help="find the elements a query selects in an XML document, as it is read",
        description="Evaluate a Core XPath query (or, with --grammar, a regular tree grammar "
                    "in the paper's notation) while the document is parsed. Prints one JSON "
                    "line per match, {\"node\", \"path\", \"attributes\", \"detected\"}, at "
                    "its earliest detection location (the start or end tag after which no "
                    "continuation could change the answer), and a summary on stderr. Exit "
                    "status: 0, 1 for a query that does not parse or lies outside the subset, "
                    "or a document that is not well-formed or not safe (after the matches "
                    "decided before the error).")
    query.add_argument("query", metavar="QUERY", help="the query text, or @FILE to read it")
    query.add_argument("file", metavar="FILE", nargs="?", default="-",
                       help="the XML document ('-' or nothing: standard input; "
                            "gzip-compressed if the name ends in .gz)")
    query.add_argument("--count", action="store_true",
                       help="print only the number of matches")
    query.add_argument("--grammar", action="store_true",
                       help="QUERY is a grammar in the paper's notation (x -> a<x1, x2> | "
                            "*<x1, x2> | λ; start x0; select x)")
    add_namespace_option(query, "the query")
    # The option's name before issue 28, kept as an alias that --help does not list.
    query.add_argument("--ns", action="append", dest="namespace", help=argparse.SUPPRESS)


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Compile the query, then stream the document; 0, or a :class:`~._common.Failure`
    (status 1) for a bad query (the document is not read) or a document that breaks (after
    the matches decided before)."""
    from xmlevents.stream import DocumentError, Query

    out, err = streams.out, streams.err
    namespaces = parse_namespaces(args.namespace)
    try:
        query = Query(query_text(args.query), namespaces=namespaces, grammar=args.grammar)
    except XmlEventsError as exc:
        if isinstance(exc, Failure):
            raise
        raise Failure(exc.for_cli()) from None
    name = input_name(args.file)
    source = open_input(args.file)
    head = Head(source)  # its first bytes kept for the namespace hint
    t0 = time.perf_counter()
    try:
        evaluation = query.evaluate(head)
        for m in evaluation:
            if not args.count:
                out.write(json.dumps(m.to_json(), ensure_ascii=False) + "\n")
    except DocumentError as exc:
        out.flush()
        raise Failure(f"{name}: {exc}") from None
    except EOFError:  # gzip: the stream ends inside a member
        out.flush()
        raise Failure(f"{name}: the compressed data ends early (a truncated file?)") from None
    except OSError as exc:  # BadGzipFile among them
        out.flush()
        raise Failure(f"cannot read {name}: {exc.strerror or exc}") from None
    finally:
        if args.file != "-":
            source.close()
    stats = evaluation.stats
    if args.count:
        out.write(f"{stats.matches}\n")
    out.flush()
    err.write(f"xmlevents query: {stats.elements} elements read, {stats.matches} matches, "
              f"peak {stats.peak_candidates} candidates held, "
              f"{time.perf_counter() - t0:.3f} s\n")
    if stats.matches == 0 and not args.grammar:
        hint = namespace_hint(query.text, bytes(head.head), namespaces)
        if hint is not None:
            err.write(f"xmlevents query: hint: {hint}\n")
    return 0
