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
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xmlevents._foundation.rows import Column, RowSchema
from xmlevents.algebra import PrimitiveEvent
from xmlevents.cel import (
    PRIMITIVE_SCHEMA,
    CELQueryError,
    CELSyntaxError,
    Evaluation,
    Query,
    check_automaton,
    compile_query,
    primitive_event,
)

from ._state import CheckpointError, dump, load

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


#: Events read between two releases of the ids no complex event can reach any more (as
#: ``xmlevents cel`` does; issue 29).
RELEASE_EVERY = 1024


class CelStream:
    """One document's primitive events as a CEL stream, and the complex events the queries
    find in it (see the module), evaluated as the events come (issue 29): each query is an
    :class:`~xmlevents.cel.Evaluation` fed every event once; what is kept of the events is
    the ids of the positions a complex event may still hold (released at the evaluations'
    :attr:`~xmlevents.cel.Evaluation.horizon`: under a window only the window's, without
    one every id), never the events.

    Rows are made as complex events are found: :meth:`take` hands over those found so far
    (position by position, the queries of one position in order), :meth:`rows` all of them
    at the end, query by query. A query that fails (a measure going backwards under a
    duration window) stops on this stream; :meth:`rows` then leaves all its rows out, as a
    whole evaluation at the end would, :meth:`take` keeps those already found (a
    checkpointed replay hands them out run by run: the run that fails cannot take them
    back). The state between two versions pickles (:meth:`checkpoint`, :meth:`resume`).
    """

    def __init__(self, doc: str, queries: Sequence[CelQuery]) -> None:
        self.doc = doc
        self.queries = tuple(queries)
        self._evaluations: list[Evaluation | None] = [Evaluation(q.query) for q in queries]
        self._position = 0  # the next event's
        self._ids: dict[int, str] = {}
        self._order: deque[int] = deque()  # the positions held, oldest first
        self._release_at = RELEASE_EVERY
        self._found: list[dict[str, Any]] = []
        self._failed: list[tuple[CelQuery, Exception]] = []
        self._failures: list[tuple[CelQuery, Exception, int, float | None]] = []

    @property
    def position(self) -> int:
        """How many events were read (the next one's position)."""
        return self._position

    def add(self, version: int, events: Sequence[PrimitiveEvent], *,
            commit: str | None = None, time: float | None = None) -> None:
        """Read one version's events (in the order the replay produced them): the complex
        events ending at them become rows."""
        evaluations = self._evaluations
        ids, order = self._ids, self._order
        for e in events:
            position = self._position
            event = primitive_event(e, position)
            if event.time is None and time is not None:
                # the version's time, as the events output carries it
                event = dataclasses.replace(event, time=time)
            ident = str(event.attrs["id"])
            ids[position] = ident
            order.append(position)
            self._position = position + 1
            for i, evaluation in enumerate(evaluations):
                if evaluation is None:
                    continue
                q = self.queries[i]
                try:
                    for m in evaluation.matches(event):
                        self._found.append({
                            "doc": self.doc, "version": version, "commit": commit,
                            "time": time, "query": q.index, "text": q.text, "end": m.end,
                            "positions": list(m.positions),
                            "ids": [ids[p] for p in m.positions]})
                except Exception as exc:  # one query on one document never stops the others
                    evaluations[i] = None
                    self._failed.append((q, exc))
                    self._failures.append((q, exc, version, time))
            if self._position >= self._release_at:
                self._release_at = self._position + RELEASE_EVERY
                self._release()

    def _release(self) -> None:
        horizon = min((ev.horizon for ev in self._evaluations if ev is not None),
                      default=float(self._position))
        order, ids = self._order, self._ids
        while order and order[0] < horizon:
            del ids[order.popleft()]

    def take(self) -> tuple[list[dict[str, Any]], list[tuple[CelQuery, Exception, int,
                                                              float | None]]]:
        """The rows found since the last take (by position, the queries of a position in
        order) and the queries that failed since, each with the version and time it failed
        at; both are handed over (a checkpointed replay writes them run by run)."""
        found, self._found = self._found, []
        failures, self._failures = self._failures, []
        return found, failures

    def rows(self) -> tuple[list[dict[str, Any]], list[tuple[CelQuery, Exception]]]:
        """The rows of :data:`CEL_TABLE` of every query, query by query, each in the
        evaluator's order (by last position, then positions); and the queries that failed
        on this stream with their exception (their rows are left out)."""
        failed = {q.index for q, _ in self._failed}
        found, self._found = self._found, []
        rows = sorted((r for r in found if r["query"] not in failed),
                      key=lambda r: r["query"])  # stable: each query's in the found order
        return rows, list(self._failed)

    def checkpoint(self) -> bytes:
        """The stream's state between two versions (what :meth:`resume` goes on from): the
        evaluations' runs and the ids they may still use. Rows not yet taken are not part
        of it (:meth:`take` them, before or after).

        Raises:
            CheckpointError: a part of the state cannot be saved.
        """

        externals = {id(q.query): ("query", q.index) for q in self.queries}
        state = (self._evaluations, self._position, self._ids, self._order,
                 self._release_at, [(q.index, exc) for q, exc in self._failed])
        return dump(state, externals, part=f"CEL state of {self.doc}")

    @classmethod
    def resume(cls, doc: str, queries: Sequence[CelQuery], data: bytes) -> CelStream:
        """The stream :meth:`checkpoint` saved, with ``queries`` (the same texts: the
        checkpoint's fingerprint sees to it) in place of the old ones.

        Raises:
            CheckpointError: the data is damaged or names a query not given.
        """

        by_index = {q.index: q for q in queries}

        def external(token: Any) -> Any:
            kind, index = token
            if kind != "query" or index not in by_index:
                raise CheckpointError(f"{doc}: the CEL state names query {index}, which is "
                                      "not given")
            return by_index[index].query

        stream = cls(doc, queries)
        evaluations, position, ids, order, release_at, failed = load(data, external)
        if len(evaluations) != len(stream.queries):
            raise CheckpointError(f"{doc}: the CEL state has {len(evaluations)} queries, "
                                  f"{len(stream.queries)} are given")
        stream._evaluations = evaluations
        stream._position, stream._ids, stream._order = position, ids, order
        stream._release_at = release_at
        stream._failed = [(by_index[i], exc) for i, exc in failed]
        return stream
