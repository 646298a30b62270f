"""A document's version history replayed into primitive events, in process (issue 6).

:class:`DocumentHistory` keeps one watched document (:mod:`xmlevents.dom`) alive across the
versions: version 0 is the insertion of the whole document (``setroot`` on an empty one); each
later version is an edit script (:mod:`._script`) applied with lxml's element methods, so the
watched document reports it as primitive events and node ids carry over from version to
version. An optional monitor detects composite events over the stream as it goes, with
termination conditions evaluated against the document at that version. The Spark job
(:mod:`._spark`) runs the same class per document; :func:`replay_history` is the plain loop.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lxml import etree

from xmlevents._foundation.rows import COMPOSITES_TABLE, CONSTITUENT, ERRORS_TABLE, EVENTS_TABLE
from xmlevents.algebra import (
    CompositeEvent,
    DefinitionSet,
    Duration,
    NamespaceWarning,
    PrimitiveEvent,
    XmlEventsError,
    namespace_hints,
)
from xmlevents.dom import Monitor, Snapshot, empty, from_snapshot

from ._actions import Action
from ._cel import CEL_STAGE, CelQuery, CelStream, check_queries
from ._digests import Forms
from ._errors import BadVersion, KeyWarning, MissingXmlError
from ._infer import InferredKey, infer_keys
from ._keys import KeyNote
from ._match import key_notes
from ._script import (
    DiffOptions,
    apply_script,
    diff_script,
    digest,
    finish,
    parse_plain,
    parse_version,
    sync,
)
from ._state import CheckpointError, DocumentState, dump, load

if TYPE_CHECKING:
    from ._index import VersionIndex

__all__ = ["DocumentHistory", "VersionResult", "HistoryResult", "VersionRows",
           "replay_history", "iter_history", "history_steps", "replay_grouped",
           "replay_document", "iter_document", "event_row", "composite_row", "error_row",
           "ordered_versions", "grouped_versions", "inferred_keys", "DUPLICATE", "KEY_STAGE"]

#: The message of a second row with the same version (in process and on Spark).
DUPLICATE = "duplicate version: the first row is kept"

#: The ``stage`` of the error rows that report key values repeated among siblings.
KEY_STAGE = "key"


@dataclass
class VersionResult:
    """What one version added: its primitive events and the composites they raised; the
    key values that repeat among siblings in it (``notes``, when it was diffed here)."""

    version: int
    events: list[PrimitiveEvent]
    composites: list[CompositeEvent]
    synced: int = 0  # actions added to make the replay equal the version (0: the script held)
    notes: list[KeyNote] = field(default_factory=list)


# The rows of the three outputs: their columns are ``xmlevents.algebra``'s EVENTS_TABLE,
# COMPOSITES_TABLE and ERRORS_TABLE, the same the Spark schemas are made from. Every row
# carries its version's ``commit`` and ``time`` (where the version table has them), and paths
# also in the prefixed form of the user's namespace bindings, so that a data engineer needs
# no join to know when and where (issue 14).


def _time(time: float | None) -> float | None:
    return None if time is None else float(time)


def event_row(doc: str, version: int, e: PrimitiveEvent, time: float | None = None, *,
              commit: str | None = None, namespaces: Mapping[str, str] | None = None
              ) -> dict[str, Any]:
    """A primitive event as a row of the ``events`` output (:data:`EVENTS_TABLE`); ``time``
    and ``commit`` are its version's (an event carries its own time only where a window
    measures it)."""
    row = EVENTS_TABLE.row(e, doc=doc, version=version, commit=commit,
                           path_prefixed=e.pi.pt.prefixed(namespaces))
    if row["time"] is None:
        row["time"] = _time(time)
    return row


def composite_row(doc: str, version: int, c: CompositeEvent, *, commit: str | None = None,
                  time: float | None = None, namespaces: Mapping[str, str] | None = None
                  ) -> dict[str, Any]:
    """A composite event as a row of the ``composites`` output (:data:`COMPOSITES_TABLE`),
    with its version's ``commit`` and ``time``, and its primitive events' ids, operations,
    paths and values (``constituents``: "which artifact was added" is then one query)."""
    parts = [CONSTITUENT.row(p, path_prefixed=p.pi.pt.prefixed(namespaces))
             for p in c.primitives()]
    return COMPOSITES_TABLE.row(c, doc=doc, version=version, commit=commit, time=_time(time),
                                path_prefixed=c.pi.pt.prefixed(namespaces),
                                constituents=parts)


def error_row(doc: str | None, version: int | None, stage: str, message: str,
              line: int | None = None, column: int | None = None, *,
              commit: str | None = None, time: float | None = None) -> dict[str, Any]:
    """A row of the ``errors`` output (:data:`ERRORS_TABLE`): where (document, version, its
    commit and time, line, column) and why."""
    return ERRORS_TABLE.row(None, doc=doc, version=version, commit=commit, time=_time(time),
                            stage=stage, message=message, line=line, column=column)


@dataclass
class _Spare:
    """The version diffed to last, as parsed (equal to the document by C14N, of no other use)
    and the forms computed of it: the next diff's old side, with no copy and half the forms
    (:func:`~._script.diff_script`)."""

    root: Any
    forms: Forms


class DocumentHistory:
    """One document's versions, replayed in order (see the module).

    Args:
        doc: the document's name (every event and composite carries it).
        definitions: event definitions to detect (text or a ``DefinitionSet``), or None.
        options: xmldiff settings for versions given as XML only.
        namespaces, context, hierarchical, semantics, within: as for
            :class:`~xmlevents.dom.Monitor` (``within``: the graph's window, in ticks).
        start: the version before the first to replay, with its ids (a
            :class:`~xmlevents.dom.Snapshot`, e.g. ``history.document.snapshot()`` of an
            earlier run): the next version is diffed against it and its ids carry on.
        queries: CEL queries (checked: :func:`~._cel.check_queries`) the history runs over
            its events as they come (:attr:`cel`, a :class:`~._cel.CelStream`: take its rows
            with ``history.cel.take()``); their state is part of :meth:`checkpoint`.

    A whole history's replay state is :meth:`checkpoint` (a :class:`~._state.DocumentState`)
    and :meth:`resume` goes on from it exactly, in another process or run (issue 29, item
    4): the same events, ids, composites and CEL rows as if it had never stopped.
    """

    def __init__(self, doc: str, definitions: Any = None, *,
                 options: DiffOptions | None = None, namespaces: dict[str, str] | None = None,
                 context: str = "chronicle", hierarchical: bool = True,
                 semantics: str = "interval", start: Snapshot | None = None,
                 within: int | Duration | str | None = None,
                 queries: Sequence[CelQuery] = ()) -> None:
        self.name = doc
        self.options = options or DiffOptions()
        #: The namespace bindings: definitions use them, and rows show paths with them.
        self.namespaces = dict(namespaces or {})
        # A version's events happen at its time (the commit's, from the table's ``time``
        # column): the clock a window given as a duration measures (None: no time).
        self.time: float | None = None
        #: The last good version's commit (where advance was told it) and time.
        self.commit: str | None = None
        self.good_time: float | None = None
        self._commit: str | None = None  # the commit of the version being replayed
        self.monitor = Monitor(definitions, namespaces=namespaces, context=context,
                               hierarchical=hierarchical, semantics=semantics, within=within,
                               clock=lambda: self.time,
                               detect_aliases=True)  # every definition is written out
        self.document = (empty(name=doc, monitor=self.monitor) if start is None else
                         from_snapshot(start, name=doc, monitor=self.monitor))
        self.version: int | None = None  # the last good version replayed
        self.read: int | None = None  # the last version read, good or bad
        #: Why the replay stops for good: the last version raised other than as bad XML
        #: (the loops replay nothing more of the document; None once a version succeeds).
        self.stopped: str | None = None
        #: The CEL queries' evaluation over the events (None without queries).
        self.cel: CelStream | None = CelStream(doc, queries) if queries else None
        #: With ``suspend`` set, :meth:`close` ends a run, not the history: it keeps the
        #: :meth:`checkpoint` here (``state``) and raises nothing (the composites the
        #: monitor holds stay held for the next run).
        self.suspend = False
        self.state: DocumentState | None = None
        self._raised: list[CompositeEvent] = []
        self._spare: _Spare | None = None
        self.monitor.composites.connect(self._collect, weak=False)
        self._stack = contextlib.ExitStack()
        self._events = self._stack.enter_context(self.document.record()).events

    def _collect(self, doc: Any, event: CompositeEvent) -> None:
        self._raised.append(event)

    def _take(self, version: int, synced: int = 0, notes: list[KeyNote] | None = None
              ) -> VersionResult:
        events, self._events[:] = list(self._events), []
        raised, self._raised = self._raised, []
        self.version = version
        self.stopped = None  # a caller that went on past a failure: it did not stop
        self.commit, self.good_time = self._commit, self.time
        if self.cel is not None:
            self.cel.add(version, events, commit=self.commit, time=_time(self.time))
        return VersionResult(version, events, raised, synced, notes or [])

    def advance(self, version: int, xml: str | bytes | None = None, *,
                script: list[Action] | None = None, expect: str | None = None,
                time: float | None = None, commit: str | None = None) -> VersionResult:
        """Replay one version: from its ``xml`` (diffed here against the document as it is),
        or from a ``script`` made elsewhere against the last good version (the Spark diff
        stage) with the ``expect``-ed :func:`~._script.digest`; ``xml`` is then only read if
        the replay does not match it. Its events carry ``time`` (seconds), if given; its
        ``commit`` goes to the CEL rows and the :meth:`checkpoint`.

        Raises:
            BadVersion: if ``xml`` is needed and is not well-formed (nothing is changed).
            MissingXmlError: if ``xml`` is needed and is None.
        """
        self.read = version
        self.time = time
        self._commit = commit
        try:
            return self._advance(version, xml, script, expect)
        except BadVersion:
            raise
        except Exception as exc:
            # The loops stop the document here (it may be left half-way): a checkpoint
            # says so, and a resumed run replays nothing more of it, as one run would not.
            self.stopped = f"version {version}: {type(exc).__name__}: {exc}"
            raise

    def _advance(self, version: int, xml: str | bytes | None, script: list[Action] | None,
                 expect: str | None) -> VersionResult:
        root = self.document.getroot()
        new = None
        if root is None or script is None:
            # The first version becomes the document (watched elements); a later one is
            # only diffed (lxml's own: several times faster to walk).
            new = self._parse(version, xml, plain=root is not None)
        self._spare = None if script is not None else self._spare
        if root is None:
            first = key_notes(new, self.options.keys)
            self.document.setroot(new)  # the document's own from now on: no spare
            return self._take(version, notes=first)
        notes: list[KeyNote] = []
        if script is None:
            # The old version's notes were taken when it was the new one (or the first).
            if self.options.keys:
                notes = key_notes(new, self.options.keys, "new")
            spare, self._spare = self._spare, None
            forms = spare.forms if spare is not None else Forms()
            script = diff_script(root if spare is None else spare.root, new, self.options,
                                 forms=forms, spare=spare is not None) or []
            # Tried on the document itself, and completed there as edit_script completes it
            # on a copy (the same actions, the same events).
            apply_script(self.document, script)
            finish(self.document, new)
            forms.keep(new)
            self._spare = _Spare(new, forms)
            return self._take(version, 0, notes)
        if new is None and expect is None:
            new = self._parse(version, xml)  # nothing else to check the replay against
        apply_script(self.document, script)
        synced = 0
        if digest(self.document.getroot()) != (expect if new is None else digest(new)):
            # The replay does not give the version (a script made against another state):
            # make it so, with the events that takes.
            if new is None and xml is None:
                raise MissingXmlError(
                    f"{self.name} version {version}: the replayed document is not the version "
                    "its script was made for, and the version's XML was not kept to sync it")
            new = new if new is not None else self._parse(version, xml)
            synced = len(sync(self.document, new))
        return self._take(version, synced, notes)

    def _parse(self, version: int, xml: str | bytes | None, plain: bool = True) -> Any:
        if xml is None:
            raise MissingXmlError(f"{self.name} version {version}: no XML to replay")
        try:
            return parse_version(xml, plain=plain)
        except etree.XMLSyntaxError as exc:
            raise BadVersion.of(self.name, version, exc) from None
        except UnicodeEncodeError as exc:  # text with a lone surrogate: not a document
            raise BadVersion(self.name, version, f"not Unicode text: {exc.reason} at character "
                             f"{exc.start + 1}") from None

    def checkpoint(self) -> DocumentState:
        """The replay state now, between two versions (see :class:`~._state.DocumentState`):
        what :meth:`resume` needs to go on exactly. The CEL rows found must be taken first
        (``history.cel.take()``).

        Raises:
            CheckpointError: a part of the state that cannot be saved (named), or a history
                already closed.
        """
        if self.monitor.closed:
            raise CheckpointError(f"{self.name}: the history is closed; checkpoint it before "
                                  "close() (or set suspend)")
        if self.stopped is not None:  # never resumed: only what says so is kept
            return DocumentState(self.name, self.version, self.read, stopped=self.stopped)
        root = self.document.getroot()
        graph = self.monitor.graph
        externals = {id(self.monitor.resolver): "documents"}
        return DocumentState(
            self.name, self.version, self.read,
            snapshot=None if root is None else self.document.snapshot(),
            issued=self.document.issued, ts=self.monitor.tick,
            digest=None if root is None else digest(root), commit=self.commit,
            time=self.good_time,
            graph=None if graph is None else dump(graph, externals,
                                                  part=f"event graph of {self.name}"),
            cel=None if self.cel is None else self.cel.checkpoint())

    @classmethod
    def resume(cls, state: DocumentState, definitions: Any = None, *,
               options: DiffOptions | None = None, namespaces: dict[str, str] | None = None,
               context: str = "chronicle", hierarchical: bool = True,
               semantics: str = "interval", within: int | Duration | str | None = None,
               queries: Sequence[CelQuery] = ()) -> DocumentHistory:
        """The history :meth:`checkpoint` saved, going on after ``state.version`` with the
        same ids, detection state and CEL state. The arguments must be the ones the state
        was made with (the checkpoint folder's fingerprint checks them, :mod:`._checkpoint`);
        the definitions are parsed again and must be the saved graph's.

        Raises:
            CheckpointError: the state is damaged, was made with other definitions or
                queries, or its replay stopped for good.
        """
        if state.stopped is not None:
            raise CheckpointError(f"{state.doc}: its replay stopped for good "
                                  f"({state.stopped}); nothing to resume")
        if (state.graph is None) != (definitions is None):
            raise CheckpointError(f"{state.doc}: the state was made "
                                  f"{'without' if state.graph is None else 'with'} "
                                  "definitions")
        if (state.cel is None) != (not queries):
            raise CheckpointError(f"{state.doc}: the state was made "
                                  f"{'without' if state.cel is None else 'with'} CEL queries")
        history = cls(state.doc, definitions, options=options, namespaces=namespaces,
                      context=context, hierarchical=hierarchical, semantics=semantics,
                      start=state.snapshot, within=within)
        monitor = history.monitor
        resolver = monitor.resolver

        def external(token: Any) -> Any:
            if token != "documents":
                raise CheckpointError(f"{state.doc}: the state names {token!r}")
            return resolver

        try:
            graph = None if state.graph is None else load(state.graph, external)
            monitor.resume(graph, state.ts)
            history.document.issued = state.issued
        except XmlEventsError as exc:
            history.close()
            raise CheckpointError(f"{state.doc}: the state cannot be resumed: {exc}") from None
        if queries:
            assert state.cel is not None
            history.cel = CelStream.resume(state.doc, queries, state.cel)
        history.version, history.read = state.version, state.read
        history.time = history.good_time = state.time
        history.commit = state.commit
        return history

    def close(self) -> list[CompositeEvent]:
        """End the history: the monitor closes (composites it held are raised) and the
        document is released. With :attr:`suspend`, end this run only: the
        :meth:`checkpoint` is kept in :attr:`state`, nothing is raised, the document is
        released."""
        if self.suspend and not self.monitor.closed:
            self.state = self.checkpoint()
            self._stack.close()
            self.monitor.release(self.document)
            self._raised = []
            return []
        self._stack.close()
        raised = self.monitor.close()
        self._raised = []
        return raised


def grouped_versions(rows: Iterable[Mapping[str, Any]]
                     ) -> tuple[dict[str, list[Mapping[str, Any]]], list[Mapping[str, Any]]]:
    """Rows grouped by document (by name) and ordered by version, the first row of each
    version kept; and the second rows of a version, in input order."""
    docs: dict[str, dict[int, Mapping[str, Any]]] = {}
    seconds: list[Mapping[str, Any]] = []
    for row in rows:
        versions = docs.setdefault(str(row["doc"]), {})
        v = int(row["version"])
        if v in versions:
            seconds.append(row)
        else:
            versions[v] = row
    return {d: [vs[v] for v in sorted(vs)] for d, vs in sorted(docs.items())}, seconds


def ordered_versions(rows: Iterable[Mapping[str, Any]]
                     ) -> tuple[dict[str, list[Mapping[str, Any]]], list[dict[str, Any]]]:
    """Rows grouped by document and ordered by version; a second row with the same version
    is an error (the first is kept)."""
    grouped, seconds = grouped_versions(rows)
    return grouped, [error_row(str(r["doc"]), int(r["version"]), "input", DUPLICATE,
                               commit=r.get("commit"), time=r.get("time")) for r in seconds]


@dataclass(frozen=True)
class VersionRows:
    """The rows one step of a replay added to each output (:func:`iter_history`).

    Attributes:
        kind: ``"input"`` (what reading the table found: duplicate versions), ``"keys"``
            (the keys inferred, before any version: ``inferred``, and an error row each
            saying so), ``"version"`` (one version, replayed or refused) or ``"end"`` (a
            document's end: the composites its closing raised, its CEL rows and the CEL
            queries' errors).
        doc: the document (None for ``"input"``).
        version: the version (for ``"end"``, the last one replayed, else the last read).
        replayed: whether the version was replayed (False: refused, an error row says why).
        events, composites, errors, cel: rows of the four outputs (see the ``*_row``
            functions and :data:`~._cel.CEL_TABLE`).
        inferred: for ``"keys"``, the keys inferred with their evidence.
    """

    kind: str
    doc: str | None = None
    version: int | None = None
    replayed: bool = False
    events: tuple[dict[str, Any], ...] = ()
    composites: tuple[dict[str, Any], ...] = ()
    errors: tuple[dict[str, Any], ...] = ()
    cel: tuple[dict[str, Any], ...] = ()
    inferred: tuple[InferredKey, ...] = ()


@dataclass
class HistoryResult:
    """The outputs of a replay, as rows (see the ``*_row`` functions; ``cel``: the complex
    events of CEL queries, rows of :data:`~._cel.CEL_TABLE`)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    composites: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    documents: int = 0
    versions: int = 0
    replayed: list[tuple[str, int]] = field(default_factory=list)  # (doc, version) in order
    cel: list[dict[str, Any]] = field(default_factory=list)
    #: The keys inferred (``DiffOptions(keys="auto")``), with their evidence.
    inferred: list[InferredKey] = field(default_factory=list)

    def add(self, step: VersionRows) -> None:
        """Keep one step's rows (:func:`iter_history`); a replayed version and a document's
        end are counted."""
        if step.replayed and step.doc is not None and step.version is not None:
            self.versions += 1
            self.replayed.append((step.doc, step.version))
        elif step.kind == "end":
            self.documents += 1
        self.keep(step)

    def keep(self, step: VersionRows) -> None:
        """Keep one step's rows, counting nothing (a caller that counts its documents
        itself)."""
        self.inferred.extend(step.inferred)
        self.errors.extend(step.errors)
        self.events.extend(step.events)
        self.composites.extend(step.composites)
        self.cel.extend(step.cel)


def replay_history(rows: Iterable[Mapping[str, Any]] | VersionIndex, definitions: Any = None,
                   *, options: DiffOptions | None = None,
                   namespaces: dict[str, str] | None = None,
                   within: int | Duration | str | None = None,
                   queries: Sequence[str] = ()) -> HistoryResult:
    """Replay a version table (rows with ``doc``, ``version``, ``xml``) in this process: the
    reference the Spark job must equal, and the loop its overhead is measured against.
    ``within`` is the graph's window in ticks (None: no window); ``queries`` are CEL queries
    (CEQL text) run over each document's primitive events (:mod:`._cel`), their complex
    events the result's ``cel`` rows. The rows of :func:`iter_history`, collected: every
    output row is kept (iterate :func:`iter_history` to hold only the live state).

    Raises:
        CELSyntaxError, CELQueryError: for a query that does not parse or that the automaton
            evaluator does not take, before any work.

    Warns:
        KeyWarning: for a key of ``options`` that selected no element of any version.
        NamespaceWarning: for a definition that matched no event while the documents have
            events on its paths in a namespace it does not name, with the ``namespaces=`` to
            give and the path to write (issue 15).
    """
    result = HistoryResult()
    for step in iter_history(rows, definitions, options=options, namespaces=namespaces,
                             within=within, queries=queries):
        result.add(step)
    for key in (options.keys if options is not None else ()):
        # Every element is inserted once (version 0 inserts the whole document).
        if not any(e["op"] == "ins" and key.selects(e["path"]) for e in result.events):
            warnings.warn(key.nothing_selected(), KeyWarning, stacklevel=2)
    if definitions is not None and result.events:
        defs = DefinitionSet.of(definitions, namespaces=namespaces or None)
        for hint in namespace_hints(defs, namespaces, Counter(e["path"] for e in result.events),
                                    Counter(c["type"] for c in result.composites)):
            warnings.warn(hint.python(), NamespaceWarning, stacklevel=2)
    return result


def iter_history(rows: Iterable[Mapping[str, Any]] | VersionIndex, definitions: Any = None,
                 *, options: DiffOptions | None = None,
                 namespaces: dict[str, str] | None = None,
                 within: int | Duration | str | None = None,
                 queries: Sequence[str] = ()) -> Iterator[VersionRows]:
    """Replay a version table step by step (issue 29): the rows each step adds to the
    outputs (:class:`VersionRows`), as they are produced — first the duplicate versions'
    error rows, then for each document (by name) each version in order, then the
    document's end.

    What it holds: one :class:`DocumentHistory` (the document at its last good version,
    its ids, the detection's state and, with ``queries``, the CEL runs and what they found)
    and the version being replayed — no earlier output row and no other document. The rows
    given: from a :class:`~._index.VersionIndex` (:func:`~._index.index_versions` over a
    table on disk), they are read one at a time, in order; any other iterable is grouped
    and ordered first, keeping a reference to each row (the caller holds them already).

    Args:
        rows, definitions, options, namespaces, within, queries: as for
            :func:`replay_history`.

    Raises:
        CELSyntaxError, CELQueryError: for a query that does not parse or that the automaton
            evaluator does not take, when called (before any work).

    >>> steps = list(iter_history([{"doc": "d", "version": 0, "xml": "<a/>"}]))
    >>> [(s.kind, s.version, len(s.events)) for s in steps]
    [('version', 0, 1), ('end', 0, 0)]
    """
    cel = check_queries(queries)  # refused here, before any work
    return history_steps(rows, definitions, options=options, namespaces=namespaces,
                         within=within, queries=cel)


def history_steps(rows: Iterable[Mapping[str, Any]] | VersionIndex, definitions: Any = None,
                  *, options: DiffOptions | None = None,
                  namespaces: dict[str, str] | None = None,
                  within: int | Duration | str | None = None,
                  on_document: Callable[[str, int], None] | None = None,
                  on_version: Callable[[], None] | None = None,
                  queries: Sequence[CelQuery] = ()) -> Iterator[VersionRows]:
    """:func:`iter_history`'s generator, with its ``queries`` checked already
    (:func:`~._cel.check_queries`); ``on_document(name, versions)`` is called as a document
    begins and ``on_version()`` as each version is done (a progress display)."""
    from ._index import VersionIndex  # the index reads tables; it builds on this module

    groups: Iterable[tuple[str, int, Iterable[Mapping[str, Any]]]]
    options = options or DiffOptions()
    if isinstance(rows, VersionIndex):
        if rows.duplicates:
            yield VersionRows("input", errors=tuple(rows.duplicates))
        if options.infer_keys:  # a first pass over the table, reading the sample only
            options, step = inferred_keys(options, rows, dict(rows.documents))
            yield step
        groups = _index_groups(rows)
    else:
        grouped, duplicates = ordered_versions(rows)
        if duplicates:
            yield VersionRows("input", errors=tuple(duplicates))
        if options.infer_keys:
            options, step = inferred_keys(options, (r for vs in grouped.values() for r in vs),
                                          {d: len(vs) for d, vs in grouped.items()})
            yield step
        groups = ((doc, len(vs), vs) for doc, vs in grouped.items())
    for doc, count, versions in groups:
        if on_document is not None:
            on_document(doc, count)
        history = DocumentHistory(doc, definitions, options=options, namespaces=namespaces,
                                  within=within)
        rows = iter(versions)
        yield from iter_document(history, ((int(r["version"]), r["xml"], None, None,
                                            r.get("time"), r.get("commit"))
                                           for r in rows), on_version, queries=queries)
        # A document whose replay stopped leaves its later versions unread: they are
        # passed over here, so that the next document begins at its own (the index's
        # rows are one stream).
        collections.deque(rows, maxlen=0)


def inferred_keys(options: DiffOptions, rows: Iterable[Mapping[str, Any]],
                  counts: Mapping[str, int]) -> tuple[DiffOptions, VersionRows]:
    """The options with the keys inferred from a sample of ``rows`` (in (document, version)
    order; ``counts``: each document's versions) added, and the step that reports them
    (:mod:`._infer`)."""
    found = infer_keys(rows, counts, parse_plain).keys(
        exclude=[k.element for k in options.keys])
    step = VersionRows("keys", errors=tuple(error_row(None, None, KEY_STAGE, k.message())
                                            for k in found), inferred=tuple(found))
    return options.with_inferred([k.key for k in found]), step


def _index_groups(index: VersionIndex
                  ) -> Iterator[tuple[str, int, Iterator[Mapping[str, Any]]]]:
    """The index's rows as (document, versions, its rows), read as they are replayed."""
    rows = iter(index)
    for doc, count in index.documents:
        yield doc, count, itertools.islice(rows, count)


def replay_grouped(grouped: Mapping[str, Sequence[Mapping[str, Any]]], result: HistoryResult,
                   definitions: Any = None, *, options: DiffOptions | None = None,
                   namespaces: dict[str, str] | None = None,
                   within: int | Duration | str | None = None,
                   on_document: Callable[[str, int], None] | None = None,
                   on_version: Callable[[], None] | None = None,
                   queries: Sequence[CelQuery] = ()) -> None:
    """Replay each document's versions (:func:`ordered_versions`' groups), one
    :class:`DocumentHistory` each, adding the rows to ``result``. ``on_document(name,
    versions)`` is called as a document begins and ``on_version()`` as each version is done
    (a progress display); ``queries`` (checked: :func:`~._cel.check_queries`) run over each
    document's events."""
    for doc, versions in grouped.items():
        if on_document is not None:
            on_document(doc, len(versions))
        history = DocumentHistory(doc, definitions, options=options, namespaces=namespaces,
                                  within=within)
        replay_document(history, ((int(r["version"]), r["xml"], None, None, r.get("time"),
                                   r.get("commit")) for r in versions),
                        result, on_version, queries=queries)


def replay_document(history: DocumentHistory,
                    versions: Iterable[tuple[int, Any, list[Action] | None, str | None,
                                             float | None, str | None]],
                    result: HistoryResult, on_version: Callable[[], None] | None = None,
                    *, queries: Sequence[CelQuery] = ()) -> None:
    """Feed ``(version, xml, script, expect, time, commit)`` in order to ``history``, adding
    its rows to ``result`` (:func:`iter_document`'s rows, collected; the document's end is
    not counted in ``result.documents``, as it never was here)."""
    for step in iter_document(history, versions, on_version, queries=queries):
        if step.kind == "end":
            result.keep(step)
        else:
            result.add(step)


def iter_document(history: DocumentHistory,
                  versions: Iterable[tuple[int, Any, list[Action] | None, str | None,
                                           float | None, str | None]],
                  on_version: Callable[[], None] | None = None,
                  *, queries: Sequence[CelQuery] = ()) -> Iterator[VersionRows]:
    """Feed ``(version, xml, script, expect, time, commit)`` in order to ``history``,
    yielding the rows of each version as it is done (a bad version is an error row and the
    history goes on), then those of the document's end: the composites its closing raised,
    then the CEL ``queries``' rows over the document's primitive events, in the order they
    were produced (:class:`~._cel.CelStream`; a query that fails on them is an error row).
    ``on_version()`` is called after each version (a progress display). Holds the history
    and the version being fed, no earlier row (the CEL stream keeps what its queries' runs
    need, and the complex events found until the document's end, where they are ordered
    query by query)."""
    doc = history.name
    ns = history.namespaces
    stream = CelStream(doc, queries) if queries else None
    last: int | None = None
    origin: dict[str, Any] = {}  # the commit and time of the last version read
    good: dict[str, Any] = {}  # ... and of the last good one
    try:
        for version, xml, script, expect, time, commit in versions:
            last = version
            origin = {"commit": commit, "time": time}
            try:
                r = history.advance(version, xml, script=script, expect=expect, time=time)
            except BadVersion as bad:
                step = VersionRows("version", doc, version, errors=(
                    error_row(doc, version, "parse", bad.message, bad.line, bad.column,
                              **origin),))
                if on_version is not None:
                    on_version()
                yield step
                continue
            except Exception as exc:  # one document never stops the others
                yield VersionRows("version", doc, version, errors=(error_row(
                    doc, version, "replay", f"{type(exc).__name__}: {exc}; the rest of this "
                    "document is not replayed", **origin),))
                break
            good = origin
            if stream is not None:
                stream.add(version, r.events, commit=commit, time=_time(time))
            step = VersionRows(
                "version", doc, version, replayed=True,
                errors=tuple(error_row(doc, version, KEY_STAGE, n.message(), **origin)
                             for n in r.notes),
                events=tuple(event_row(doc, version, e, time, commit=commit, namespaces=ns)
                             for e in r.events),
                composites=tuple(composite_row(doc, version, c, **origin, namespaces=ns)
                                 for c in r.composites))
            del r  # the version's events: the rows are what is kept
            if on_version is not None:
                on_version()
            yield step
    finally:
        closing = history.close()
    # Composites raised by closing carry the last version (None only when there was none,
    # and then nothing was fed that could raise one).
    end = history.version if history.version is not None else last
    composites: tuple[dict[str, Any], ...] = ()
    if end is not None:
        at = good if history.version is not None else origin
        composites = tuple(composite_row(doc, end, c, **at, namespaces=ns) for c in closing)
    cel: tuple[dict[str, Any], ...] = ()
    errors: tuple[dict[str, Any], ...] = ()
    if stream is not None:
        rows, failed = stream.rows()
        cel = tuple(rows)
        errors = tuple(error_row(
            doc, history.version, CEL_STAGE, f"CEL query {q.index}: {type(exc).__name__}: "
            f"{exc}", **good) for q, exc in failed)
    yield VersionRows("end", doc, end, composites=composites, errors=errors, cel=cel)
