"""One document's replay, version by version, as tagged output rows (issue 29, item 1).

:func:`~._history.replay_document` feeds a whole history and adds every row to one
:class:`~._history.HistoryResult`: what it returns is the document's whole output.
:class:`DocumentRows` is the same replay fed one version at a time, each call giving the rows
that version produced (built as they are read, not kept), and :meth:`DocumentRows.close` the
rows of the end (the composites raised by closing, the CEL complex events); so the Spark apply
stage (:mod:`._spark`) holds the live document, never its history nor its rows. It follows
``replay_document`` step for step — the same rows in the same order — and the Spark tests
check it against the in-process replay (local equals Spark).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

from ._actions import Action
from ._cel import CEL_STAGE, CelQuery, CelStream
from ._errors import BadVersion
from ._history import KEY_STAGE, DocumentHistory, composite_row, error_row, event_row

__all__ = ["DocumentRows", "TaggedRow"]

#: An output row and the output it belongs to: ``version`` (one per version replayed:
#: ``doc`` and ``version`` only), ``event``, ``composite``, ``error`` or ``cel``.
TaggedRow = tuple[str, dict[str, Any]]


class DocumentRows:
    """One document's replay, fed in version order (see the module).

    Args:
        history: the document's :class:`~._history.DocumentHistory`, new or resumed; closed by
            :meth:`close`.
        queries: CEL queries (checked: :func:`~._cel.check_queries`) over the document's
            primitive events.
    """

    def __init__(self, history: DocumentHistory, queries: Sequence[CelQuery] = ()) -> None:
        self.history = history
        self.doc = history.name
        self._stream = CelStream(self.doc, queries) if queries else None
        self._last: int | None = None  # the last version read
        self._origin: dict[str, Any] = {}  # the commit and time of the last version read
        self._good: dict[str, Any] = {}  # ... and of the last good one
        self._stopped = False  # a version failed unexpectedly: the rest is not replayed
        self._closed = False

    @property
    def stopped(self) -> bool:
        """Whether a version failed other than by being bad XML: the versions fed after it
        are ignored, as ``replay_document`` stops reading them."""
        return self._stopped

    def feed(self, version: int, xml: Any, script: list[Action] | None = None,
             expect: str | None = None, time: float | None = None,
             commit: str | None = None) -> Iterator[TaggedRow]:
        """Replay one version (:meth:`~._history.DocumentHistory.advance`, now) and give its
        rows, built as the iterator is read: its ``version`` row, its key notes as errors,
        its events and its composites; or the error row of a bad version. Feed the versions
        in order and read each iterator before the next call."""
        if self._closed:
            raise RuntimeError(f"{self.doc}: fed version {version} after close()")
        if self._stopped:
            return iter(())
        doc = self.doc
        self._last = version
        origin = self._origin = {"commit": commit, "time": time}
        try:
            r = self.history.advance(version, xml, script=script, expect=expect, time=time)
        except BadVersion as bad:
            return iter([("error", error_row(doc, version, "parse", bad.message, bad.line,
                                             bad.column, **origin))])
        except Exception as exc:  # one document never stops the others
            self._stopped = True
            return iter([("error", error_row(
                doc, version, "replay", f"{type(exc).__name__}: {exc}; the rest of this "
                "document is not replayed", **origin))])
        self._good = origin
        if self._stream is not None:
            self._stream.add(version, r.events, commit=commit,
                             time=None if time is None else float(time))
        ns = self.history.namespaces
        return itertools.chain(
            [("version", {"doc": doc, "version": version})],
            (("error", error_row(doc, version, KEY_STAGE, n.message(), **origin))
             for n in r.notes),
            (("event", event_row(doc, version, e, time, commit=commit, namespaces=ns))
             for e in r.events),
            (("composite", composite_row(doc, version, c, **origin, namespaces=ns))
             for c in r.composites))

    def close(self) -> Iterator[TaggedRow]:
        """End the document (the history closes now) and give the rows of its end: the
        composites raised by closing, carrying the last version (good, if there was one),
        then the CEL complex events and the error rows of queries that failed."""
        if self._closed:
            return iter(())
        self._closed = True
        history, doc, ns = self.history, self.doc, self.history.namespaces
        closing = history.close()
        rows: list[TaggedRow] = []
        # Composites raised by closing carry the last version (None only when there was
        # none, and then nothing was fed that could raise one).
        end = history.version if history.version is not None else self._last
        if end is not None:
            at = self._good if history.version is not None else self._origin
            rows.extend(("composite", composite_row(doc, end, c, **at, namespaces=ns))
                        for c in closing)
        if self._stream is not None:
            found, failed = self._stream.rows()
            rows.extend(("cel", r) for r in found)
            rows.extend(("error", error_row(
                doc, history.version, CEL_STAGE, f"CEL query {q.index}: {type(exc).__name__}: "
                f"{exc}", **self._good)) for q, exc in failed)
        return iter(rows)
