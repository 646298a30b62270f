"""Queries and their evaluation over a document or a stream of events (seed 004, section 5).

A :class:`Query` is compiled when it is made (a query outside the subset fails before any
input is read); :meth:`Query.evaluate` runs it over one source and returns an
:class:`Evaluation`: an iterator of :class:`Match` in detection order, whose ``stats`` tell
what the run read and held.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from itertools import chain
from typing import Any

from xmlevents._foundation.collector import collector_paused
from xmlevents.algebra import ArgumentTypeError

from ._compile import compile_xpath
from ._errors import DocumentError
from ._grammar import Grammar
from ._match import Match, Stats, _node, matches_of
from ._notation import parse_grammar
from ._poa import Automaton, Report, Run
from ._source import (
    MAX_DEPTH,
    chunks_of,
    document_attributes,
    feed_document,
    is_event_source,
    plain_events,
)

__all__ = ["Query", "Evaluation", "matches"]


def _plain_attributes(attrs: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(attrs).items()} if attrs else {}


class Query:
    """A compiled streaming query: Core XPath (default) or, with ``grammar=True``, a grammar
    in the paper's notation. The automaton's transitions, built lazily, are kept and shared
    by the evaluations of the query.

    Raises:
        QuerySyntaxError: the text does not parse (line and column).
        UnsupportedQueryError: it parses but lies outside the subset (column and reason).

    >>> q = Query("//a[c]/b")
    >>> [m.to_json() for m in q.evaluate(b"<r><a><b/><c/></a></r>")]
    [{'node': 3, 'path': '/r[1]/a[1]/b[1]', 'attributes': {},
      'detected': {'event': 'start', 'node': 4}}]
    """

    def __init__(self, text: str, *, namespaces: Mapping[str, str] | None = None,
                 grammar: bool = False) -> None:
        self.text = text
        self.namespaces = dict(namespaces or {})
        self.grammar: Grammar = parse_grammar(text, namespaces) if grammar \
            else compile_xpath(text, namespaces)
        self.automaton = Automaton(self.grammar)

    def evaluate(self, source: object) -> Evaluation:
        """Run the query over ``source``: a path (``str`` or ``os.PathLike``), bytes, a binary
        file object, or an iterable of start/end events."""
        return Evaluation(self, source)

    def __repr__(self) -> str:
        return f"Query({self.text!r})"


class Evaluation(Iterator[Match]):
    """One run of a query over one source: iterate for the matches (each once, at its
    earliest detection location, in detection order); ``stats`` at any time.

    Raises (while iterating):
        DocumentError: the input stops being a well-formed, safe document; every match
            decided before was given first.
    """

    def __init__(self, query: Query, source: object) -> None:
        self.query = query
        chunks = chunks_of(source)
        if chunks is None and not is_event_source(source):
            raise ArgumentTypeError(f"source: expected a path, bytes, a binary file or an "
                                    f"iterable of start/end events, found "
                                    f"{type(source).__name__}")
        # a parser target's attribute values need decoding; events carry them as given
        self._run = Run(query.automaton,
                        _plain_attributes if chunks is None else document_attributes,
                        MAX_DEPTH if chunks is not None else 0)
        # the matches come in batches (those a chunk of input or an event decided), handed
        # out one by one by a C iterator over them (issue 33, item 4: no Python call per
        # match), which ``for`` and next() share; the clock runs while a batch is made
        self._clock = [0.0]
        batches = self._document(chunks, _rereader(source)) if chunks is not None \
            else self._events(source)
        self._matches: Iterator[Match] = chain.from_iterable(_timed(batches, self._clock))

    def __iter__(self) -> Iterator[Match]:
        return self._matches

    def __next__(self) -> Match:
        return next(self._matches)

    @property
    def stats(self) -> Stats:
        """Elements read, matches reported, peak and current candidates held, shapes, time."""
        run = self._run
        c = run.counter
        return Stats(run.elements, c.matches, c.peak, c.held, self.query.automaton.shapes,
                     self._clock[0])

    @staticmethod
    def _out(reports: list[Report]) -> Iterator[list[Match]]:
        """The matches of the reports so far, in detection order (and by node within one
        event), in batches of at most :data:`SLICE`, each made when it is asked for; the
        reports are taken from the run at once. A report can hold every line of a document
        (``/*[not(d)]//l`` decides them all at the root's end): made all at once, the
        matches, their paths and the rows they came from were all alive together, a fifth
        more memory than the rows alone (issue 33, item 4); made a slice at a time, each
        slice's rows are let go as it is made. The cyclic garbage collector is paused while
        a slice is made, as while a chunk is parsed (:func:`._source.feed_document`): the
        matches make no cycles, and would otherwise start a collection every 700, some of
        them over every candidate still held (7% of the time)."""
        taken = reports[:]
        reports.clear()
        small: list[Report] = []  # reports made together, SLICE matches at most
        count = 0
        for event, at, found in taken:
            if count + len(found) > SLICE and small:
                yield _paused(small)
                small, count = [], 0
            if len(found) <= SLICE:
                small.append((event, at, found))
                count += len(found)
                continue
            found.sort(key=_node, reverse=True)  # the slices taken from the end
            while found:
                part = found[-SLICE:]
                del found[-SLICE:]
                part.reverse()
                yield _paused([(event, at, part)])
        if small:
            yield _paused(small)

    def _document(self, chunks: Iterator[bytes],
                  reread: Callable[[], Iterator[bytes]] | None) -> Iterator[list[Match]]:
        """The batches of matches, each handed out after the chunk that decided it. The
        cyclic garbage collector is paused from one batch to the next, not only while a
        chunk is parsed (:func:`._source.feed_document`): between batches only the run and
        the reading of the input execute, and the run makes no cycles; re-enabled after
        every chunk, the collector ran at each, and every tenth over every candidate held
        (a sixth of the time where all of a large file's lines wait for the root's end,
        issue 33, item 4). It is on again whenever a batch is handed out or an error
        raised."""
        run = self._run
        reports = run.reports
        texts = run.text_event if self.query.grammar.texts else None
        fed = feed_document(chunks, run.start_event, run.end_event, reread, texts)
        more = True
        while more:
            error: DocumentError | None = None
            try:
                with collector_paused():
                    more = _until_reports(fed, reports)
                    if not more:
                        run.finish_event()
            except DocumentError as exc:
                error, more = exc, False
            if reports:  # the matches decided before an error come first
                yield from self._out(reports)
            if error is not None:
                raise error

    def _events(self, events: Any) -> Iterator[list[Match]]:
        run = self._run
        start, end, text = run.start_event, run.end_event, run.text_event
        texts = self.query.grammar.texts
        reports = run.reports
        for event, name, attrs in plain_events(events):
            if event == "start":
                start(name, attrs)
            elif event == "end":
                end()
            elif texts:
                text()
            if reports:
                yield from self._out(reports)
        run.finish_event()
        if reports:
            yield from self._out(reports)


#: The most matches made at once (:meth:`Evaluation._out`).
SLICE = 4096


def _paused(reports: list[Report]) -> list[Match]:
    """:func:`matches_of` with the cyclic garbage collector paused (see ``_out``)."""
    with collector_paused():
        return matches_of(reports)


def _timed(batches: Iterator[list[Match]], clock: list[float]) -> Iterator[list[Match]]:
    """The batches, the time spent making each added to ``clock[0]``."""
    while True:
        t0 = time.perf_counter()
        try:
            batch = next(batches)
        except StopIteration:
            return
        finally:
            clock[0] += time.perf_counter() - t0
        yield batch


def _until_reports(fed: Iterator[None], reports: list[Report]) -> bool:
    """Feed chunks until one decides a match (True) or the input ends (False)."""
    return any(reports for _ in fed)


def _rereader(source: object) -> Callable[[], Iterator[bytes]] | None:
    """How to read a path or bytes source again from its start (None for a stream)."""
    if isinstance(source, str | os.PathLike | bytes | bytearray | memoryview):
        return lambda: chunks_of(source)  # type: ignore[return-value]
    return None


def matches(query: str, source: object, *,
            namespaces: Mapping[str, str] | None = None) -> Iterator[Match]:
    """The matches of a Core XPath ``query`` in ``source`` (a path, bytes, a binary file or
    an iterable of start/end events), each at its earliest detection location.

    >>> doc = b"<r><a><b/><c/></a><b><d/></b><a><b/><c/></a></r>"
    >>> [(m.node, m.detected.event, m.detected.node) for m in matches("//a[c]/b", doc)]
    [(3, 'start', 4), (8, 'start', 9)]
    >>> [m.path for m in matches("//b", [("start", "r"), ("start", "b"), ("end",), ("end",)])]
    ['/r[1]/b[1]']
    """
    return Query(query, namespaces=namespaces).evaluate(source)
