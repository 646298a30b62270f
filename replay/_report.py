"""What a run of ``xmlevents replay`` found, whichever engine ran it (issue 15): the counts, the
errors, the first composites of each type, the warnings' facts and the time each part took.

The Spark job (:func:`~._spark_job.run_spark`) and the in-process one
(:func:`~._local.run_local`) each fill one :class:`ReplayReport`; the command line prints it.
Rows are mappings with the columns of ``xmlevents.algebra``'s tables (dicts in process,
Spark's ``Row`` objects on Spark).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from xmlevents.algebra import DefinitionSet, NamespaceHint, namespace_hints

from ._history import HistoryResult
from ._keys import Key

if TYPE_CHECKING:
    from ._checkpoint import RunSummary
    from ._infer import InferredKey

__all__ = ["ReplayReport", "Record", "report_of", "first_composites", "sorted_errors",
           "unselected_keys"]


class Record(Protocol):
    """A row read by column name: a dict in process, a Spark ``Row`` on Spark."""

    def __getitem__(self, name: str, /) -> Any:
        """The value of column ``name``."""


@dataclass
class ReplayReport:
    """The outcome of one replay run.

    Attributes:
        engine: which engine ran it: ``"spark"`` or ``"local"``.
        where: where it ran: the Spark master (``local[*]``, a URL) and where it was named
            (``spark://h:7077, from spark-defaults.conf``), or ``in process``.
        documents: documents with at least one version replayed.
        versions: versions replayed.
        events: primitive events.
        composites: composite events per definition.
        errors: the rows of the ``errors`` output, by document and version.
        shown: the first composites of each type (by document, then tick).
        unselected: the keys that selected no element of any version.
        hints: the definitions that matched nothing for want of a namespace.
        cel: complex events per CEL query, by the query's index (every query given, 0
            included; empty without queries).
        times: the parts of the run and their seconds, in order (``Spark start``,
            ``reading``, ``replay``, ``writing``: those that exist).
        run: with a checkpoint, what the run did (:class:`~._checkpoint.RunSummary`).
        inferred: the keys inferred (``DiffOptions(keys="auto")``), with their evidence;
            None where none were asked for, or where ``reused`` says the checkpoint's.
        reused: the keys a checkpoint's first run inferred, used again (declarations).
    """

    engine: str
    where: str
    documents: int = 0
    versions: int = 0
    events: int = 0
    composites: dict[str, int] = field(default_factory=dict)
    errors: list[Record] = field(default_factory=list)
    shown: list[Record] = field(default_factory=list)
    unselected: list[Key] = field(default_factory=list)
    hints: list[NamespaceHint] = field(default_factory=list)
    cel: dict[int, int] = field(default_factory=dict)
    times: list[tuple[str, float]] = field(default_factory=list)
    run: RunSummary | None = None
    inferred: list[InferredKey] | None = None
    reused: list[str] | None = None


def sorted_errors(rows: Iterable[Record]) -> list[Record]:
    """Error rows by document, then version, rows without either first (as Spark orders
    them: nulls first)."""
    def key(r: Record) -> tuple[bool, str, bool, int]:
        return (r["doc"] is not None, r["doc"] or "", r["version"] is not None,
                r["version"] if r["version"] is not None else 0)
    return sorted(rows, key=key)


def first_composites(rows: Sequence[Mapping[str, Any]], n: int) -> list[Record]:
    """The first ``n`` composites of each type, by document, then tick (what ``xmlevents
    replay`` prints)."""
    if n <= 0:
        return []
    ordered = sorted(rows, key=lambda r: (r["type"], r["doc"], r["ts"]))
    taken: Counter[str] = Counter()
    shown: list[Record] = []
    for r in ordered:
        if taken[r["type"]] < n:
            taken[r["type"]] += 1
            shown.append(r)
    return shown


def unselected_keys(keys: Iterable[Key], events: Iterable[Mapping[str, Any]]) -> list[Key]:
    """The keys that selected no element (every element is inserted once: version 0 inserts
    the whole document)."""
    keys = list(keys)
    if not keys:
        return []
    inserted = {e["path"] for e in events if e["op"] == "ins"}
    return [k for k in keys if not any(k.selects(p) for p in inserted)]


def report_of(result: HistoryResult, *, engine: str, where: str, show: int = 5,
              keys: Iterable[Key] = (), definitions: DefinitionSet | None = None,
              namespaces: Mapping[str, str] | None = None, queries: int = 0
              ) -> ReplayReport:
    """The report of an in-process replay's rows (``queries``: how many CEL queries ran)."""
    composites = Counter(c["type"] for c in result.composites)
    found = Counter(r["query"] for r in result.cel)
    paths = Counter(e["path"] for e in result.events)
    return ReplayReport(
        engine=engine, where=where, documents=len({d for d, _ in result.replayed}),
        versions=len(result.replayed), events=len(result.events), composites=dict(composites),
        errors=sorted_errors(result.errors), shown=first_composites(result.composites, show),
        unselected=unselected_keys(keys, result.events),
        hints=namespace_hints(definitions, namespaces, paths, composites),
        cel={i: found[i] for i in range(queries)})
