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

import contextlib
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from xmlevents._foundation.rows import COMPOSITES_TABLE, CONSTITUENT, ERRORS_TABLE, EVENTS_TABLE
from xmlevents.algebra import (
    CompositeEvent,
    DefinitionSet,
    Duration,
    PrimitiveEvent,
)
from xmlevents.dom import Monitor, Snapshot, empty, from_snapshot

from ._actions import Action
from ._cel import CEL_STAGE, CelQuery, CelStream, check_queries
from ._errors import BadVersion, KeyWarning, MissingXmlError
from ._hints import NamespaceWarning, namespace_hints
from ._keys import KeyNote
from ._match import key_notes
from ._script import DiffOptions, apply_script, digest, edit_script, parse_version, sync

__all__ = ["DocumentHistory", "VersionResult", "HistoryResult", "replay_history",
           "replay_grouped", "replay_document", "event_row", "composite_row", "error_row",
           "ordered_versions", "DUPLICATE", "KEY_STAGE"]

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
    """

    def __init__(self, doc: str, definitions: Any = None, *,
                 options: DiffOptions | None = None, namespaces: dict[str, str] | None = None,
                 context: str = "chronicle", hierarchical: bool = True,
                 semantics: str = "interval", start: Snapshot | None = None,
                 within: int | Duration | str | None = None) -> None:
        self.name = doc
        self.options = options or DiffOptions()
        #: The namespace bindings: definitions use them, and rows show paths with them.
        self.namespaces = dict(namespaces or {})
        # A version's events happen at its time (the commit's, from the table's ``time``
        # column): the clock a window given as a duration measures (None: no time).
        self.time: float | None = None
        self.monitor = Monitor(definitions, namespaces=namespaces, context=context,
                               hierarchical=hierarchical, semantics=semantics, within=within,
                               clock=lambda: self.time,
                               detect_aliases=True)  # every definition is written out
        self.document = (empty(name=doc, monitor=self.monitor) if start is None else
                         from_snapshot(start, name=doc, monitor=self.monitor))
        self.version: int | None = None  # the last good version replayed
        self._raised: list[CompositeEvent] = []
        self.monitor.composites.connect(self._collect, weak=False)
        self._stack = contextlib.ExitStack()
        self._events = self._stack.enter_context(self.document.record()).events

    def _collect(self, doc: Any, event: CompositeEvent) -> None:
        self._raised.append(event)

    def _take(self, version: int, synced: int = 0, notes: list[KeyNote] | None = None
              ) -> VersionResult:
        events, self._events[:] = list(self._events), []
        raised, self._raised = self._raised, []
        return VersionResult(version, events, raised, synced, notes or [])

    def advance(self, version: int, xml: str | bytes | None = None, *,
                script: list[Action] | None = None, expect: str | None = None,
                time: float | None = None) -> VersionResult:
        """Replay one version: from its ``xml`` (diffed here against the document as it is),
        or from a ``script`` made elsewhere against the last good version (the Spark diff
        stage) with the ``expect``-ed :func:`~._script.digest`; ``xml`` is then only read if
        the replay does not match it. Its events carry ``time`` (seconds), if given.

        Raises:
            BadVersion: if ``xml`` is needed and is not well-formed (nothing is changed).
            MissingXmlError: if ``xml`` is needed and is None.
        """
        self.time = time
        root = self.document.getroot()
        new = None
        if root is None or script is None:
            new = self._parse(version, xml)
        if root is None:
            first = key_notes(new, self.options.keys)
            self.document.setroot(new)
            self.version = version
            return self._take(version, notes=first)
        notes: list[KeyNote] = []
        if script is None:
            # The old version's notes were taken when it was the new one (or the first).
            script = edit_script(root, new, self.options, notes)
            notes = [n for n in notes if n.side == "new"]
        if new is None and expect is None:
            new = self._parse(version, xml)  # nothing else to check the replay against
        apply_script(self.document, script)
        synced = 0
        if digest(self.document.getroot()) != (expect if new is None else digest(new)):
            # The replay does not give the version (a script made against another state):
            # make it so, with the events that takes.
            new = new if new is not None else self._parse(version, xml)
            synced = len(sync(self.document, new))
        self.version = version
        return self._take(version, synced, notes)

    def _parse(self, version: int, xml: str | bytes | None) -> Any:
        if xml is None:
            raise MissingXmlError(f"{self.name} version {version}: no XML to replay")
        try:
            return parse_version(xml)
        except etree.XMLSyntaxError as exc:
            raise BadVersion.of(self.name, version, exc) from None
        except UnicodeEncodeError as exc:  # text with a lone surrogate: not a document
            raise BadVersion(self.name, version, f"not Unicode text: {exc.reason} at character "
                             f"{exc.start + 1}") from None

    def close(self) -> list[CompositeEvent]:
        """End the history: the monitor closes (composites it held are raised) and the
        document is released."""
        self._stack.close()
        raised = self.monitor.close()
        self._raised = []
        return raised


def ordered_versions(rows: Iterable[Mapping[str, Any]]
                     ) -> tuple[dict[str, list[Mapping[str, Any]]], list[dict[str, Any]]]:
    """Rows grouped by document and ordered by version; a second row with the same version
    is an error (the first is kept)."""
    docs: dict[str, dict[int, Mapping[str, Any]]] = {}
    errors: list[dict[str, Any]] = []
    for row in rows:
        versions = docs.setdefault(str(row["doc"]), {})
        v = int(row["version"])
        if v in versions:
            errors.append(error_row(str(row["doc"]), v, "input", DUPLICATE,
                                    commit=row.get("commit"), time=row.get("time")))
        else:
            versions[v] = row
    return {d: [vs[v] for v in sorted(vs)] for d, vs in sorted(docs.items())}, errors


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


def replay_history(rows: Iterable[Mapping[str, Any]], definitions: Any = None, *,
                   options: DiffOptions | None = None,
                   namespaces: dict[str, str] | None = None,
                   within: int | Duration | str | None = None,
                   queries: Sequence[str] = ()) -> HistoryResult:
    """Replay a version table (rows with ``doc``, ``version``, ``xml``) in this process: the
    reference the Spark job must equal, and the loop its overhead is measured against.
    ``within`` is the graph's window in ticks (None: no window); ``queries`` are CEL queries
    (CEQL text) run over each document's primitive events (:mod:`._cel`), their complex
    events the result's ``cel`` rows.

    Raises:
        CELSyntaxError, CELQueryError: for a query that does not parse or that the automaton
            evaluator does not take, before any work.

    Warns:
        KeyWarning: for a key of ``options`` that selected no element of any version.
        NamespaceWarning: for a definition that matched no event while the documents have
            events on its paths in a namespace it does not name, with the ``namespaces=`` to
            give and the path to write (issue 15).
    """
    cel = check_queries(queries)  # refused here, before any work
    grouped, errors = ordered_versions(rows)
    result = HistoryResult(errors=errors, documents=len(grouped))
    replay_grouped(grouped, result, definitions, options=options, namespaces=namespaces,
                   within=within, queries=cel)
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
    its rows to ``result``; a bad version becomes an error row and the history goes on.
    ``on_version()`` is called after each version (a progress display). The CEL
    ``queries`` then run over the document's primitive events, in the order they were
    produced (:class:`~._cel.CelStream`); a query that fails on them is an error row."""
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
                result.errors.append(error_row(doc, version, "parse", bad.message, bad.line,
                                               bad.column, **origin))
                if on_version is not None:
                    on_version()
                continue
            except Exception as exc:  # one document never stops the others
                result.errors.append(error_row(
                    doc, version, "replay", f"{type(exc).__name__}: {exc}; the rest of this "
                    "document is not replayed", **origin))
                break
            good = origin
            result.versions += 1
            result.replayed.append((doc, version))
            result.errors.extend(error_row(doc, version, KEY_STAGE, n.message(), **origin)
                                 for n in r.notes)
            result.events.extend(event_row(doc, version, e, time, commit=commit, namespaces=ns)
                                 for e in r.events)
            if stream is not None:
                stream.add(version, r.events, commit=commit, time=_time(time))
            result.composites.extend(composite_row(doc, version, c, **origin, namespaces=ns)
                                     for c in r.composites)
            if on_version is not None:
                on_version()
    finally:
        closing = history.close()
    # Composites raised by closing carry the last version (None only when there was none,
    # and then nothing was fed that could raise one).
    end = history.version if history.version is not None else last
    if end is not None:
        at = good if history.version is not None else origin
        result.composites.extend(composite_row(doc, end, c, **at, namespaces=ns)
                                 for c in closing)
    if stream is not None:
        rows, failed = stream.rows()
        result.cel.extend(rows)
        result.errors.extend(error_row(
            doc, history.version, CEL_STAGE, f"CEL query {q.index}: {type(exc).__name__}: "
            f"{exc}", **good) for q, exc in failed)
