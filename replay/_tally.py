"""The report of an in-process replay, counted as its rows pass (issue 29, item 1).

:func:`~._report.report_of` makes a :class:`~._report.ReplayReport` from a replay's kept
rows; :class:`ReportTally` makes the same report from the rows as they are produced and
written, keeping only what the report shows: counts (per composite type, per CEL query,
per event path), the paths inserted, the error rows, and the first composites of each
type — so that ``xmlevents replay --engine local`` keeps no output row once it is written.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from xmlevents.algebra import DefinitionSet, namespace_hints

from ._history import VersionRows
from ._infer import InferredKey
from ._keys import Key
from ._report import Record, ReplayReport, sorted_errors

__all__ = ["ReportTally"]


class ReportTally:
    """The counts of a replay's rows as they pass (see the module).

    Args:
        show: the composites of each type to keep (the first by document, then tick: as
            :func:`~._report.first_composites` picks them, ties in the order produced).
        keys: the keys of the diff (those that selected nothing are reported).
    """

    def __init__(self, show: int = 5, keys: Iterable[Key] = ()) -> None:
        self.show = show
        self.keys = list(keys)
        self.inferred: list[InferredKey] = []
        self.documents = 0
        self.versions = 0
        self.events = 0
        self.composites: Counter[str] = Counter()
        self.cel: Counter[int] = Counter()
        self.paths: Counter[str] = Counter()  # one entry a distinct path: bounded by the
        self.inserted: set[str] = set()  # documents' shapes, not by their histories
        self.errors: list[Record] = []
        self._first: dict[str, list[tuple[str, int, int, Record]]] = {}
        self._seen = 0  # composites so far: the tie-breaker of equal (doc, tick)
        self._doc: str | None = None

    def add(self, step: VersionRows) -> None:
        """Count one step's rows (:func:`~._history.iter_history`); its documents come one
        after the other, so a document is counted when its first replayed version passes."""
        self.inferred.extend(step.inferred)
        if step.replayed:
            self.versions += 1
            if step.doc != self._doc:
                self._doc = step.doc
                self.documents += 1
        self.add_rows(events=step.events, composites=step.composites, errors=step.errors,
                      cel=step.cel)

    def add_rows(self, *, events: Iterable[Mapping[str, Any]] = (),
                 composites: Iterable[Mapping[str, Any]] = (),
                 errors: Iterable[Mapping[str, Any]] = (),
                 cel: Iterable[Mapping[str, Any]] = ()) -> None:
        """Count rows of the outputs."""
        paths = self.paths
        for e in events:
            self.events += 1
            path = e["path"]
            paths[path] += 1
            if e["op"] == "ins":
                self.inserted.add(path)
        for c in composites:
            self._composite(c)
        self.errors.extend(errors)
        for r in cel:
            self.cel[r["query"]] += 1

    def _composite(self, c: Mapping[str, Any]) -> None:
        kind = c["type"]
        self.composites[kind] += 1
        self._seen += 1
        if self.show <= 0:
            return
        first = self._first.setdefault(kind, [])
        entry = (c["doc"], c["ts"], self._seen, c)
        if len(first) < self.show or entry[:3] < first[-1][:3]:
            bisect.insort(first, entry, key=lambda x: x[:3])
            del first[self.show:]

    def report(self, *, engine: str, where: str, definitions: DefinitionSet | None = None,
               namespaces: Mapping[str, str] | None = None, queries: int = 0
               ) -> ReplayReport:
        """The report of the rows counted (``queries``: how many CEL queries ran)."""
        shown = [c for kind in sorted(self._first) for *_, c in self._first[kind]]
        unselected = [k for k in self.keys if not any(k.selects(p) for p in self.inserted)]
        return ReplayReport(
            engine=engine, where=where, documents=self.documents, versions=self.versions,
            events=self.events, composites=dict(self.composites),
            errors=sorted_errors(self.errors), shown=shown, unselected=unselected,
            hints=namespace_hints(definitions, namespaces, self.paths, self.composites),
            cel={i: self.cel[i] for i in range(queries)})
