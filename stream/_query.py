"""Queries and their evaluation over a document or a stream of events (seed 004, section 5).

A :class:`Query` is compiled when it is made (a query outside the subset fails before any
input is read); :meth:`Query.evaluate` runs it over one source and returns an
:class:`Evaluation`: an iterator of :class:`Match` in detection order, whose ``stats`` tell
what the run read and held.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from xmlevents.algebra import ArgumentTypeError

from ._compile import compile_xpath
from ._grammar import Grammar
from ._match import Detection, Match, Stats
from ._notation import parse_grammar
from ._poa import Automaton, Candidate, Run
from ._source import chunks_of, is_event_source, plain_events, xml_events

__all__ = ["Query", "Evaluation", "matches"]


def _lxml_attributes(el: Any) -> dict[str, str]:
    return dict(el.attrib)


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
        self._run = Run(query.automaton,
                        _lxml_attributes if chunks is not None else _plain_attributes)
        self._seconds = 0.0
        self._gen = self._document(chunks) if chunks is not None else \
            self._events(source)

    def __next__(self) -> Match:
        t0 = time.perf_counter()
        try:
            return next(self._gen)
        finally:
            self._seconds += time.perf_counter() - t0

    @property
    def stats(self) -> Stats:
        """Elements read, matches reported, peak and current candidates held, shapes, time."""
        c = self._run.counter
        return Stats(c.elements, c.matches, c.peak, c.held, self.query.automaton.shapes,
                     self._seconds)

    @staticmethod
    def _out(found: tuple[Candidate, ...], event: str, node: int) -> list[Match]:
        where = Detection(event, node)
        return [Match(c.node, c.path, c.attributes, where)
                for c in sorted(found, key=lambda c: c.node)]

    def _document(self, chunks: Iterator[bytes]) -> Iterator[Match]:
        run = self._run
        start, end = run.start, run.end
        counter = run.counter
        stack: list[int] = []
        push, pop = stack.append, stack.pop
        for event, el in xml_events(chunks):
            if event == "start":
                found = start(el.tag, el)
                push(counter.elements)
                if found:
                    yield from self._out(found, "start", counter.elements)
            else:
                node = pop()
                found = end()
                if found:
                    yield from self._out(found, "end", node)

    def _events(self, events: Any) -> Iterator[Match]:
        run = self._run
        start, end = run.start, run.end
        stack: list[int] = []
        for event, name, attrs in plain_events(events):
            if event == "start":
                found = start(name, attrs)
                node = run.counter.elements
                stack.append(node)
                if found:
                    yield from self._out(found, "start", node)
            else:
                node = stack.pop()
                found = end()
                if found:
                    yield from self._out(found, "end", node)


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
