"""CEL queries over each document's primitive event stream in the replay (issue 19, item 5).

``xmlevents replay HISTORY --cel QUERY --out DIR``: every document's primitive events, in the
order the replay produces them (its versions in order, each version's events as the watched
document reported them; a bad version adds none), are one CEL stream whose positions are
0, 1, ... per document. Each event becomes a CEL event by the function
``xmlevents cel --primitive`` reads ``xmlevents detect``'s lines with
(:func:`xmlevents.cel.primitive_event`), its time the version's where it has none: type
``ins``/``upd``/``del``, attributes ``id``, ``ts``, ``path``, ``ids``, ``kind``, ``value``,
``old``, ``doc``. Each query runs over each document's stream with the
automaton evaluator (:func:`xmlevents.cel.evaluate`) and every complex event is a row of the
``cel`` output (:data:`CEL_TABLE`): the document, the version, commit and time of its last
event, the query (its index among the queries given, from 0, and its text), its last position
``end``, its ``positions`` and the ``ids`` of the events there.

A query is compiled and checked before any work (:func:`check_queries`): it must parse, be
well-formed and safe, name only the primitive events' types and attributes, and be one the
automaton evaluator takes (unary filters; a window on events, on the versions' times or on
an attribute's values); the error says where, by line and column. The same code runs in
process (:func:`~._history.replay_document`) and in the Spark job's apply stage, per
document, so both give the same rows.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xmlevents._foundation.rows import Column, RowSchema
from xmlevents.algebra import PrimitiveEvent
from xmlevents.cel import (
    PRIMITIVE_SCHEMA,
    CELQueryError,
    CELSyntaxError,
    Event,
    Query,
    check_automaton,
    compile_query,
    evaluate,
    primitive_event,
)

__all__ = ["CEL_TABLE", "CEL_STAGE", "CelQuery", "check_queries", "compiled_queries",
           "CelStream"]

#: The ``stage`` of an error row for a query that failed on one document's stream.
CEL_STAGE = "cel"

# The ``cel`` output. ``doc``, ``version``, ``commit``, ``time`` and ``ids`` have the types
# of the other outputs' columns of those names (the Spark job keeps all of them in one table).
CEL_TABLE: RowSchema[None] = RowSchema("cel", (
    Column("doc", str), Column("version", int), Column("commit", str, nullable=True),
    Column("time", float, nullable=True), Column("query", int, bits=32),
    Column("text", str), Column("end", int), Column("positions", list[int]),
    Column("ids", list[str])))


@dataclass(frozen=True)
class CelQuery:
    """One query of a replay: its ``index`` among the queries given (from 0), its ``text``
    and the compiled ``query``."""

    index: int
    text: str
    query: Query = field(compare=False)


def check_query(text: str) -> Query:
    """``text`` compiled against the primitive events' schema and checked to be one the
    automaton evaluator takes.

    Raises:
        CELSyntaxError: the text does not parse (line and column).
        CELQueryError: not well-formed or not safe, an event type other than ``ins``,
            ``upd``, ``del`` or an attribute primitive events do not have, or a filter that
            is not unary (with line and column where the query has them).
    """
    query = compile_query(text, PRIMITIVE_SCHEMA)
    try:
        check_automaton(query.formula, text)
    except CELQueryError as exc:
        raise CELQueryError(f"{exc.reason} (the replay runs CEL queries with the automaton "
                            "evaluator only)", text=exc.text, line=exc.line,
                            column=exc.column) from None
    return query


def check_queries(texts: Sequence[str]) -> tuple[CelQuery, ...]:
    """The queries of a replay, compiled and checked (:func:`check_query`), in order.

    Raises:
        CELSyntaxError, CELQueryError: for the first bad one; when there are several, its
            ``context`` names it (``query 0`` for the first).
    """
    out = []
    for i, text in enumerate(texts):
        try:
            out.append(CelQuery(i, text, check_query(text)))
        except (CELSyntaxError, CELQueryError) as exc:
            if len(texts) == 1:
                raise
            context = f"query {i}" + (f": {exc.context}" if exc.context else "")
            raise type(exc)(exc.reason, text=exc.text, line=exc.line, column=exc.column,
                            context=context) from None
    return tuple(out)


@functools.lru_cache(maxsize=16)
def compiled_queries(texts: tuple[str, ...]) -> tuple[CelQuery, ...]:
    """:func:`check_queries`, once per process for the same texts (a Spark worker compiles
    them for its first document and reuses them for the others)."""
    return check_queries(texts)


class CelStream:
    """One document's primitive events as a CEL stream, and the complex events the queries
    find in it (see the module)."""

    def __init__(self, doc: str, queries: Sequence[CelQuery]) -> None:
        self.doc = doc
        self.queries = tuple(queries)
        self._events: list[Event] = []
        # Per position: the version, commit and time of the event there.
        self._origin: list[tuple[int, str | None, float | None]] = []

    def add(self, version: int, events: Sequence[PrimitiveEvent], *,
            commit: str | None = None, time: float | None = None) -> None:
        """Append one version's events (in the order the replay produced them)."""
        for e in events:
            event = primitive_event(e, len(self._events))
            if event.time is None and time is not None:
                # the version's time, as the events output carries it
                event = dataclasses.replace(event, time=time)
            self._events.append(event)
        self._origin.extend([(version, commit, time)] * len(events))

    def rows(self) -> tuple[list[dict[str, Any]], list[tuple[CelQuery, Exception]]]:
        """The rows of :data:`CEL_TABLE` of every query, query by query, each in the
        evaluator's order (by last position, then positions); and the queries that failed
        on this stream with their exception (their rows are left out)."""
        events = self._events
        if not self.queries or not events:
            return [], []
        ids = [str(e.attrs["id"]) for e in events]
        rows: list[dict[str, Any]] = []
        failed: list[tuple[CelQuery, Exception]] = []
        for q in self.queries:
            found: list[dict[str, Any]] = []
            try:
                for m in evaluate(q.query, events):
                    version, commit, time = self._origin[m.end]
                    found.append({"doc": self.doc, "version": version, "commit": commit,
                                  "time": time, "query": q.index, "text": q.text,
                                  "end": m.end, "positions": list(m.positions),
                                  "ids": [ids[p] for p in m.positions]})
            except Exception as exc:  # one query on one document never stops the others
                failed.append((q, exc))
                continue
            rows.extend(found)
        return rows, failed
