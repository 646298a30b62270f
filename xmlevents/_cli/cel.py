"""``xmlevents cel``: CEL queries over event streams (issue 19): JSON lines, CSV under CORE's
stream declarations, primitive events.

Kept apart so that ``detect`` and ``graph`` never import the CEL package. Every form of stream
is read through the one opener of inputs (``-``, ``.gz``, plain: :func:`~._common.open_input`).
"""

from __future__ import annotations

import argparse
import io
import json
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from xmlevents.algebra import XmlEventsError

from ._common import Failure, Streams, input_name, open_input, query_text

if TYPE_CHECKING:
    from xmlevents.cel import Evaluation, Event, Match, Schema, Value

__all__ = ["IdMap", "add_parser", "run"]


def add_parser(sub: Any) -> None:
    """``cel``'s parser."""
    cel = sub.add_parser(
        "cel", help="run a CEL query (CORE's CEQL) over a stream of events",
        description="Find the complex events of a CEQL query in a stream: JSON lines (one "
                    "object a line with its \"type\"; positions are line numbers from 0), "
                    "CSV under CORE's CREATE STREAM declarations (--schema), or the project's "
                    "primitive events (--primitive). Prints one JSON line per complex event, "
                    "{\"end\": ..., \"events\": [...]} (plus \"ids\" when its events carry "
                    "an id), in order of their last position.")
    cel.add_argument("query", metavar="QUERY", help="the query text, or @FILE to read it")
    cel.add_argument("events", metavar="EVENTS", nargs="?", default="-",
                     help="the stream ('-' or nothing: standard input; gzip-compressed "
                          "if the name ends in .gz)")
    cel.add_argument("--count", action="store_true",
                     help="print only how many complex events there are (the automaton "
                          "counts them without enumerating under ALL)")
    cel.add_argument("--reference", action="store_true",
                     help="evaluate by the semantics as written (exponential: small streams; "
                          "takes filters over several variables)")
    cel.add_argument("--dialect", choices=("paper", "core"), default="paper",
                     help="paper (the default): CEL as seed 003 defines it; core: CORE's "
                          "CEQL as CORE evaluates it (AS on any pattern, a name labels "
                          "every event it is written on, NOT, a one-second window without "
                          "WITHIN, integer division; event times in nanoseconds: "
                          "docs/semantics.md)")
    form = cel.add_mutually_exclusive_group()
    form.add_argument("--schema", metavar="FILE",
                      help="CORE's stream declarations (CREATE STREAM S { EVENT T { a:int, "
                           "... } }): the stream is CSV lines T,v1,v2,..., each value checked "
                           "against its type, and the query's attributes against the schema")
    form.add_argument("--primitive", action="store_true",
                      help="the stream is primitive events (xmlevents detect's input): types "
                           "ins/upd/del, attributes id, ts, path, ids, value, old, doc, kind")


def _lines(path: str) -> Iterator[str]:
    """The stream's lines, as text (UTF-8), split on ``\\n`` only: the one JSON-lines policy
    (xmlevents._foundation.jsonlines), as detect splits them (universal newlines also ended
    a line at ``\\r``, so one line was two events here and a malformed line there)."""
    stream = open_input(path)
    text = stream if isinstance(stream, io.TextIOBase) else io.TextIOWrapper(
        stream, encoding="utf-8", newline="\n")
    try:
        yield from text
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or "the compressed data ends early"
        raise Failure(f"cannot read the stream {path!r}: {reason}") from None
    finally:
        if path != "-":
            text.close()


def _ids(m: Match, ids: dict[int, Value]) -> dict[str, object]:
    obj = m.to_json()
    found = [ids.get(i) for i in m.positions]
    if found and all(v is not None for v in found):
        obj["ids"] = found
    return obj


#: Events read between two releases of the ids no complex event can reach any more: the
#: map holds the window's ids and at most this many more (issue 29).
RELEASE_EVERY = 1024


class IdMap:
    """The ids of the events a complex event may still hold, by position (issue 29): the
    command line prints them beside the positions. :meth:`release` drops the positions
    before the evaluation's horizon (:attr:`~xmlevents.cel.Evaluation.horizon`): under any
    window (``EVENTS``, a duration, an attribute) only the window's ids stay; without one a
    run may use any earlier event, and every id is kept.

    >>> m = IdMap()
    >>> for p in range(5):
    ...     m.add(p, f"e{p}")
    >>> m.release(3); len(m), m.ids
    (2, {3: 'e3', 4: 'e4'})
    """

    __slots__ = ("ids", "order")

    def __init__(self) -> None:
        self.ids: dict[int, Value] = {}
        # the positions held, oldest first (popping a dict's first keys again and again
        # would walk its deleted slots)
        self.order: deque[int] = deque()

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, position: int, ident: Value) -> None:
        """Remember ``ident`` for ``position`` (positions in increasing order)."""
        self.ids[position] = ident
        self.order.append(position)

    def release(self, horizon: float) -> None:
        """Forget the positions before ``horizon``."""
        order, ids = self.order, self.ids
        while order and order[0] < horizon:
            del ids[order.popleft()]


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Evaluate the query; write what was found before a bad line, then report it (1). A
    query that does not compile, or that the automaton does not take, is bad input (1)."""
    out = streams.out
    from xmlevents.cel import (
        PRIMITIVE_SCHEMA,
        CELQueryError,
        Evaluation,
        StreamError,
        check_automaton,
        compile_query,
        count,
        from_nanoseconds,
        parse_schema,
        read_csv,
        read_jsonl,
        read_primitive,
        reference,
    )

    try:
        schema: Schema | None = None
        if args.schema:
            schema = parse_schema(query_text("@" + args.schema))
        elif args.primitive:
            schema = PRIMITIVE_SCHEMA
        text = query_text(args.query)
        query = compile_query(text, schema, dialect=args.dialect)
        if not args.reference:
            try:
                check_automaton(query.formula, text)
            except CELQueryError as exc:
                raise Failure(f"{exc.for_cli()}\nRun it with --reference (exponential: "
                              "small streams).") from None
    except XmlEventsError as exc:
        if isinstance(exc, Failure):
            raise
        raise Failure(exc.for_cli()) from None
    source = input_name(args.events)
    failure: list[StreamError] = []
    ids = IdMap()
    # --reference evaluates the whole list at the end: it keeps every event anyway
    keep_ids = not args.count
    # The primitive events' path types, for the namespace hint when nothing matched (one per
    # type of the document, not one per event).
    paths: set[object] | None = set() if args.primitive else None

    def events() -> Iterator[Event]:
        lines = _lines(args.events)
        if args.schema:
            stream = read_csv(lines, schema or {}, source=source)
        elif args.primitive:
            stream = read_primitive(lines, source=source)
        else:
            stream = read_jsonl(lines, source=source)
        if args.dialect == "core" and not args.primitive:
            stream = map(from_nanoseconds, stream)  # CORE's times are nanoseconds
        held, order = ids.ids, ids.order.append  # IdMap.add inline, an event (issue 32)
        try:
            for e in stream:
                if paths is not None:
                    paths.add(e.attrs.get("path"))
                if keep_ids:
                    v = e.attrs.get("id")
                    if v is not None:
                        held[e.position] = v
                        order(e.position)
                yield e
        except StreamError as exc:  # what was found before the bad line is written
            failure.append(exc)

    found = 0
    try:
        if args.reference:
            matches: Iterable[Match] = reference(query, list(events()))
            if args.count:
                found = len(list(matches))
                out.write(f"{found}\n")
                matches = ()
        elif args.count:
            found = count(query, events())
            out.write(f"{found}\n")
            matches = ()
        else:
            matches = _evaluated(Evaluation(query), events(), ids)
        for m in matches:  # the automaton's are written as they are found
            found += 1
            out.write(json.dumps(_ids(m, ids.ids)) + "\n")
    except XmlEventsError as exc:
        if isinstance(exc, Failure):
            raise
        raise Failure(str(exc)) from None
    out.flush()
    if failure:
        raise Failure(str(failure[0]))
    if paths and found == 0:
        from xmlevents.algebra import path_type_hints
        from xmlevents.cel import path_types

        seen = (p for p in paths if isinstance(p, str))
        for hint in path_type_hints(path_types(query), seen):
            streams.err.write(f"xmlevents cel: warning: {hint}\n")
    return 0


def _evaluated(evaluation: Evaluation, events: Iterable[Event], ids: IdMap
               ) -> Iterator[Match]:
    """:func:`~xmlevents.cel.evaluate`, releasing from ``ids`` every
    :data:`RELEASE_EVERY` events what the evaluation's horizon leaves behind (after the
    complex events of the event are written: they name its ids)."""
    release_at = RELEASE_EVERY
    for n, event in enumerate(events, start=1):
        yield from evaluation.matches(event)
        if n >= release_at:
            release_at = n + RELEASE_EVERY
            ids.release(evaluation.horizon)
