"""A watched document: an lxml tree whose every change becomes primitive events (issue 5)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from blinker import Signal
from lxml import etree

from xmlevents.algebra import (
    Axis,
    CompositeEvent,
    DefinitionSet,
    EventType,
    InvalidArgumentError,
    PrimitiveEvent,
)

from . import _ops
from ._errors import EventLogError, WatchError, WatchTypeError
from ._monitor import Monitor
from ._namespaces import repair_namespaces
from ._registry import ATTR, NODE, NODES, TEXT
from ._replay import Snapshot, replay, take_snapshot
from ._resync import resync

__all__ = ["WatchedDocument", "Recording"]


@dataclass
class Recording:
    """The events of a document from a snapshot on: replaying them onto ``start`` gives the
    document as it is (or was when the recording stopped)."""

    start: Snapshot
    events: list[PrimitiveEvent] = field(default_factory=list)

    def replay(self) -> Any:
        """The document replayed from ``start`` through ``events`` (an lxml ElementTree)."""
        return replay(self.start, self.events)


class WatchedDocument:
    """An lxml document whose changes are reported to a :class:`Monitor`.

    Build one with :func:`xmlevents.parse`, :func:`~xmlevents.fromstring` or
    :func:`~xmlevents.wrap`; edit ``doc.getroot()`` with lxml as usual. ``mutations`` is a
    blinker signal sent every primitive event (``fn(doc, event=e)``); ``define``,
    ``subscribe``, ``batch``, ``flush`` and ``close`` act on the monitor, which may watch other
    documents too (events of different documents never combine).
    """

    def __init__(self, tree: Any, *, name: str, monitor: Monitor,
                 ids: Iterable[str] | None = None) -> None:
        self.tree = tree
        self.name = name
        self.monitor = monitor
        self.mutations = Signal(f"xmlevents mutations of {name}")
        self.by_id: dict[str, Any] = {}
        self.recordings: list[list[PrimitiveEvent]] = []
        self._count = 0
        self._released = False
        monitor.watch(self)
        root = tree.getroot()
        if root is None:
            return  # an empty document: its first root comes with ``setroot``
        s = _ops.state
        s.depth += 1  # registering is no operation: nothing is reported
        try:
            if ids is None:
                _ops.ins_tree(self, root, None, -1, False)
            else:
                self._adopt(root, list(ids))
        except BaseException:
            self.release()
            raise
        finally:
            s.depth -= 1

    def _adopt(self, root: Any, ids: list[str]) -> None:
        """Register the tree with given ids, one per node in insertion order (a snapshot's)."""
        supply = iter(ids)

        def take(n: int) -> list[str]:
            got = list(itertools.islice(supply, n))
            if len(got) < n:
                raise StopIteration
            return got

        # ids from the snapshot, not new ones
        self.new_id = supply.__next__  # type: ignore[method-assign]
        self.new_ids = take  # type: ignore[method-assign]
        try:
            _ops.ins_tree(self, root, None, -1, False)
        except StopIteration:
            raise EventLogError(f"{len(ids)} ids for a document with more nodes") from None
        finally:
            del self.new_id, self.new_ids
        if next(supply, None) is not None:
            raise EventLogError(f"{len(ids)} ids for a document with fewer nodes")
        # New ids go on after the highest of the form n<number>, never reusing one.
        self._count = max((int(i[1:]) for i in ids if i[:1] == "n" and i[1:].isdigit()),
                          default=0)

    @property
    def issued(self) -> int:
        """How many ids of the form ``n<number>`` were issued (the next is one more). A
        document resumed from a snapshot (:func:`~xmlevents.dom.from_snapshot`) counts from
        the snapshot's highest id; ids of nodes deleted before it was taken were issued
        too: set this to the count then, and the ids go on exactly (issue 29)."""
        return self._count

    @issued.setter
    def issued(self, value: int) -> None:
        if value < self._count:
            raise InvalidArgumentError(f"issued={value}: ids up to n{self._count} were issued "
                                       "already, and an id is never reused")
        self._count = value

    # --- what the operations need ---------------------------------------------------------

    def new_id(self) -> str:
        self._count += 1
        return f"n{self._count}"

    def new_ids(self, n: int) -> list[str]:
        """The next ``n`` ids, as ``n`` calls of :meth:`new_id` would give them (an element's
        attributes are registered in one batch, issue 16)."""
        first = self._count + 1
        self._count += n
        return [f"n{i}" for i in range(first, first + n)]

    def listening(self) -> bool:
        """Whether anything wants this document's events (otherwise none are built)."""
        return bool(self.monitor.active or self.recordings or self.mutations.receivers)

    # --- the tree ---------------------------------------------------------------------------

    def getroot(self) -> Any:
        return self.tree.getroot()

    def id_of(self, node: Any) -> str | None:
        """The identifier of an element, comment or processing instruction of this document."""
        rec = NODES.get(node)
        return rec.id if rec is not None and rec.doc is self else None

    def node(self, ident: str) -> Any:
        """The node with identifier ``ident``, or None."""
        return self.by_id.get(ident)

    def node_of(self, event: PrimitiveEvent | CompositeEvent) -> Any:
        """The element an event of this document is about, as the document is now: the
        element inserted or deleted, the owner of the attribute, the element whose text it is
        (for a composite, the node at its path instance); None once that node is gone.

        The node is found by its identifier, so it follows a move (``moved`` events keep
        ids); an attribute or text counts as gone once it was removed, even though its
        element is still there.

        Raises:
            InvalidArgumentError: the event happened in another document.
        """
        if event.doc is not None and event.doc != self.name:
            raise InvalidArgumentError(
                f"the event {event.id} happened in document {event.doc!r}, not in "
                f"{self.name!r}: ask that document (or the monitor's node_of)")
        pi = event.pi
        ids = pi.ids
        axis = pi.pt.steps[-1].axis
        if axis is not Axis.ATTRIBUTE and axis is not Axis.TEXT:
            return self.by_id.get(ids[-1])
        owner: Any = self.by_id.get(ids[-2]) if len(ids) > 1 else None
        rec = NODES.get(owner)
        if rec is None:
            return None
        ident = ids[-1]
        if axis is Axis.ATTRIBUTE:
            entry = rec.attrs.get(str(pi.pt.steps[-1].name))
            return owner if entry is not None and entry[0] == ident else None
        if rec.text_id == ident:
            return owner
        # A text after a child is that child's tail, a text node of this element.
        for child in owner:
            crec = NODES.get(child)
            if crec is not None and crec.tail_id == ident:
                return owner
        return None

    def path_of(self, node: Any) -> Any:
        """The path instance of a node of this document (``/order[n1]/item[n4]``), or None."""
        rec = NODES.get(node)
        return rec.pi if rec is not None and rec.doc is self else None

    def setroot(self, element: Any) -> None:
        """Make ``element`` (with its subtree) the root element, replacing the root if any.

        Reported as the removal of the old root's subtree, then the insertion of the new one
        at index 0: from an empty document (:func:`~xmlevents.dom.empty`) that is the
        insertion of the whole document, as a version history's first version (issue 6).

        Raises:
            ValueError: if ``element`` has a parent or belongs to a watched document.
        """
        if not isinstance(element, _ops.WATCHED):
            raise WatchTypeError(f"{element!r} is not an element of xmlevents' classes; build it "
                                 "with lxml.etree after importing xmlevents, or copy it")
        el: Any = element
        if el.getparent() is not None or el in NODES:
            raise WatchError("the new root must be an element with no parent, watched by no "
                             "document")
        _ops.settle()
        _ops.begin()
        try:
            old = self.tree.getroot()
            if old is not None:
                _ops.remove_tree(old, False)
            self.tree._setroot(element)
            # Built with lxml's methods, it may hold a prefix their moves left shadowed
            # (issue 16, item 7): its text must say what its nodes' names say.
            repair_namespaces(element)
            _ops.ins_tree(self, element, None, 0, False)
        finally:
            _ops.end()

    def tostring(self, **options: Any) -> bytes:
        """``etree.tostring`` of the document's tree."""
        out: bytes = etree.tostring(self.tree, **options)
        return out

    # --- subscriptions (on the monitor, for this document) ----------------------------------

    def define(self, definitions: Any) -> DefinitionSet:
        """Add definitions to the monitor (see :meth:`Monitor.define`)."""
        return self.monitor.define(definitions)

    def undefine(self, name: str) -> DefinitionSet:
        """Remove a definition from the monitor (see :meth:`Monitor.undefine`)."""
        return self.monitor.undefine(name)

    def subscribe(self, event_type: str | EventType, fn: Callable[..., Any] | None = None, *,
                  weak: bool = False) -> Any:
        """Call ``fn(doc, event=e)`` for this document's events of ``event_type``; returns
        ``fn`` (without ``fn``, a decorator). See :meth:`Monitor.subscribe`."""
        return self.monitor.subscribe(event_type, fn, doc=self, weak=weak)

    def unsubscribe(self, event_type: str | EventType, fn: Callable[..., Any]) -> None:
        self.monitor.unsubscribe(event_type, fn, doc=self)

    def signal(self, event_type: str | EventType) -> Signal:
        """The blinker signal for this document's events of ``event_type``."""
        return self.monitor.signal(event_type, self)

    def batch(self) -> Any:
        """``with doc.batch():`` runs receivers at the end of the block, not after each edit."""
        return self.monitor.batch()

    def flush(self) -> list[CompositeEvent]:
        """Report changes made behind the wrapper's back and flush the graph (section 3.3)."""
        return self.monitor.flush()

    def close(self) -> list[CompositeEvent]:
        """Flush and stop watching: the monitor closes if this was its only document."""
        if self._released:
            return []
        if list(self.monitor.documents.values()) == [self]:
            return self.monitor.close()
        self.resync()
        self.monitor.release(self)
        return []

    @property
    def closed(self) -> bool:
        return self._released

    def __enter__(self) -> WatchedDocument:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- consistency and replay -------------------------------------------------------------

    def resync(self) -> None:
        """Report changes made without the element methods (e.g. ``etree.strip_tags`` bound
        before xmlevents was imported): compare the records with the live tree."""
        if not self._released:
            resync(self)

    def snapshot(self) -> Snapshot:
        """The document now, with the ids of its nodes (the start of a replay)."""
        self.resync()

        def ident(kind: str, e: Any, name: str | None) -> str:
            rec = NODES[e]
            if kind == NODE:
                return rec.id
            if kind == ATTR:
                return rec.attrs[name][0]  # type: ignore[index]  # an attribute has a name
            return (rec.text_id if kind == TEXT else rec.tail_id)  # type: ignore[return-value]  # a text or tail the snapshot holds has an id

        return take_snapshot(self.tree, True, ident)

    @contextmanager
    def record(self) -> Iterator[Recording]:
        """``with doc.record() as rec:`` collects the events of the block in ``rec.events``,
        from the snapshot ``rec.start``."""
        rec = Recording(self.snapshot())
        self.recordings.append(rec.events)
        try:
            yield rec
        finally:
            self.recordings[:] = [r for r in self.recordings if r is not rec.events]

    def release(self) -> None:
        """Forget every node's id (the monitor calls this when it stops watching)."""
        if self._released:
            return
        self._released = True
        pop = NODES.pop
        for e in self.by_id.values():
            pop(e, None)
        self.by_id.clear()

    def __repr__(self) -> str:
        state = "closed" if self._released else f"{len(self.by_id)} nodes"
        return f"<WatchedDocument {self.name!r}: {state}>"
