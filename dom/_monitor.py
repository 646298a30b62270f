"""The monitor: one event graph over one or more watched documents, and its subscribers.

It numbers the primitive events of each finished top-level operation (one tick each, DESIGN
section 2), feeds them to the event graph at once — so the graph is always complete, whatever
the receivers do — and then delivers them, and the composite events they raised, to the
receivers (issue 5):

* per primitive event in tick order: the receivers of its document's ``mutations`` signal,
  then those of the subscriptions to primitive types it matches, then, for every composite
  event raised at its tick (in the order raised), those of the subscriptions it matches;
* subscriptions in the order their event types were first subscribed, receivers of one type
  in the order they were connected (blinker's).

Events caused by receivers are fed to the graph when their operation ends and delivered after
the current round; ``cascade_limit`` rounds end a runaway loop of rules with
:class:`CascadeError`. A receiver that raises does not stop the others; its exception
propagates from the operation that caused the delivery, once everything is delivered.
"""

from __future__ import annotations

import contextlib
import time
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from blinker import Signal

from xmlevents._foundation.subscriptions import check_receiver, check_weak, raise_collected
from xmlevents.algebra import (
    CompositeEvent,
    CompositeEventType,
    DefinitionSet,
    Duration,
    EventGraph,
    EventType,
    GraphStateError,
    InvalidArgumentError,
    Op,
    PathInstance,
    PrimitiveEvent,
    PrimitiveEventType,
    UnknownNameError,
    check_subscription,
    compatible,
    matches,
    subscription_type,
    trusted_primitive,
)

from ._conditions import XPathDocuments
from ._errors import CascadeError, SubscriptionWarning, WatchError
from ._ops import Raw
from ._registry import NODES

__all__ = ["Monitor"]

Receiver = Callable[..., Any]


def _forget_deleted(graph: EventGraph, raw: list[Raw]) -> None:
    """Tell the graph which nodes one operation deleted for good — removals that are not half
    of a move (a move keeps the ids: ``moved``) — so that it drops their groups
    (``EventGraph.forget``)."""
    by_doc: dict[str, list[PathInstance]] = {}
    for doc, op, pi, _, _, _, moved in raw:
        if op is Op.DEL and not moved:
            by_doc.setdefault(doc.name, []).append(pi)
    for name, pis in by_doc.items():
        graph.forget(name, pis)


def _in_order(signal: Signal, sender: Any) -> list[Any]:
    """The receivers of ``signal`` for ``sender`` in the order they were connected (blinker
    yields them from a set union, in no fixed order; its ``receivers`` mapping keeps the
    connection order)."""
    fns = list(signal.receivers_for(sender))
    if len(fns) < 2:
        return fns
    rank: dict[Any, int] = {}
    for i, r in enumerate(signal.receivers.values()):
        target = r() if isinstance(r, weakref.ref) else r
        with contextlib.suppress(TypeError):  # an unhashable receiver keeps its place
            rank.setdefault(target, i)
    order = {}
    for i, fn in enumerate(fns):
        try:
            order[i] = rank.get(fn, i)
        except TypeError:
            order[i] = i
    return [fns[i] for i in sorted(range(len(fns)), key=order.__getitem__)]


class _Subscription:
    """The receivers of one event type (of one document, or of all when ``doc`` is None)."""

    __slots__ = ("doc", "et", "key", "match", "name", "primitive", "signal")

    def __init__(self, key: str, event_type: str | EventType, doc: Any) -> None:
        self.key = key
        self.doc = doc
        self.signal = Signal(f"xmlevents {key}")
        et = subscription_type(event_type)
        if isinstance(et, str):
            # A bare name: the composite events of that definition, whatever their path.
            name = et
            self.et: EventType | None = None
            self.primitive = False
            self.name: str | None = name
            self.match: Callable[[Any], bool] = lambda e: e.type.name == name
            return
        self.et = et
        self.primitive = isinstance(et, PrimitiveEventType)
        # The definition it asks for, if any: a single-event one then detects (issue 14).
        self.name = et.name if isinstance(et, CompositeEventType) else None
        if isinstance(et, PrimitiveEventType):  # new(...) and gone(...) leave moves out
            self.match = lambda e: type(e) is PrimitiveEvent and matches(e, et)
        else:
            self.match = lambda e: compatible(e.type, et)

    def check(self, definitions: DefinitionSet | None, documents: XPathDocuments) -> None:
        """Refuse this subscription if it can never fire (composite types: once there are
        definitions to check them against)."""
        et = self.et if self.et is not None else self.name
        assert et is not None
        check_subscription(et, definitions, documents)

    def waiting(self) -> bool:
        """Whether receivers wait for the composites of a definition."""
        return not self.primitive and bool(self.signal.receivers)


class Monitor:
    """Detects composite events over the watched documents it is given (one or several).

    Args:
        definitions: definitions to start with (see :meth:`define`).
        context, hierarchical, semantics: as for :class:`~xmlevents.algebra.EventGraph`.
        namespaces: prefixes that definitions and ``when=`` conditions may use.
        cascade_limit: how many rounds of receivers changing documents may follow one
            operation before :class:`CascadeError` ends the cascade.
        within: the graph's window (ticks, or a duration such as ``"30s"``).
        detect_aliases: whether every single-event definition detects, also where others
            reference it (see :class:`~xmlevents.algebra.EventGraph`; the replay sets it).
        clock: the time an operation's events carry (read once per operation, and only
            when a window is given as a duration); ``time.time`` by default (None: no time,
            which such a window refuses).
    """

    def __init__(self, definitions: Any = None, *, context: str = "chronicle",
                 hierarchical: bool = True, semantics: str = "interval",
                 namespaces: dict[str, str] | None = None, cascade_limit: int = 100,
                 within: int | Duration | str | None = None,
                 clock: Callable[[], float | None] = time.time,
                 detect_aliases: bool = False) -> None:
        if cascade_limit < 1:
            raise InvalidArgumentError(
                f"cascade_limit={cascade_limit}: at least one round is needed")
        self._options: dict[str, Any] = {"context": context, "hierarchical": hierarchical,
                                         "semantics": semantics, "within": within,
                                         "detect_aliases": detect_aliases}
        self.namespaces = dict(namespaces or {})
        # Resolves path instances in the watched documents, compiles conditions, and says
        # which event types they never produce (subscriptions and definitions are checked).
        self._documents = XPathDocuments(self._resolve, namespaces=self.namespaces)
        self.cascade_limit = cascade_limit
        #: The time events carry, read once per operation, when a window is a duration.
        self.clock = clock
        self.documents: dict[str, Any] = {}
        self.graph: EventGraph | None = None
        self._definitions: DefinitionSet | None = None
        self._subscriptions: dict[tuple[str, int], _Subscription] = {}
        self._ts = 0
        self._outbox: list[tuple[Any, PrimitiveEvent | None, list[CompositeEvent]]] = []
        self._delivering = False
        self._batch = 0
        self._closed = False
        self.active = False  # whether anything needs events: a graph or a subscription
        #: sent every composite event raised by the root of a defined tree, after the
        #: subscriptions it matches (``fn(doc, event=c)``); a replay collects them here.
        self.composites = Signal("xmlevents composites")
        if definitions is not None:
            self.define(definitions)

    # --- documents ---------------------------------------------------------------------

    def watch(self, doc: Any) -> None:
        """Take ``doc`` (a :class:`WatchedDocument` being built) into this monitor."""
        if self._closed:
            raise GraphStateError("this monitor is closed; create a new one")
        if doc.name in self.documents:
            raise WatchError(f"a document named {doc.name!r} is already watched by this "
                             "monitor; give each document its own name")
        self.documents[doc.name] = doc

    def _resolve(self, doc: str | None, pi: PathInstance) -> Any:
        """The element at ``pi`` now (for an attribute or text node, its element), or None."""
        d = self.documents.get(doc) if doc is not None else None
        if d is None and doc is None and len(self.documents) == 1:
            d = next(iter(self.documents.values()))
        if d is None:
            return None
        element = d.by_id.get(pi.ids[-1])
        if element is None and len(pi.ids) > 1:
            element = d.by_id.get(pi.ids[-2])
            rec = NODES.get(element)
            return element if rec is not None and rec.pi.ids == pi.ids[:-1] else None
        rec = NODES.get(element)
        return element if rec is not None and rec.pi == pi else None

    def node_of(self, event: PrimitiveEvent | CompositeEvent) -> Any:
        """The element an event is about now, in the watched document it happened in (see
        :meth:`WatchedDocument.node_of`); None once it is gone or its document released."""
        doc = self.documents.get(event.doc) if event.doc is not None else None
        if doc is None and event.doc is None and len(self.documents) == 1:
            doc = next(iter(self.documents.values()))
        return doc.node_of(event) if doc is not None else None

    # --- definitions and subscriptions ---------------------------------------------------

    def define(self, definitions: Any) -> DefinitionSet:
        """Add definitions (text, one per line, or AST values) to the live event graph.

        Every partial detection is kept: the new definitions see the edits from now on, the
        ones defined before go on as if nothing happened (``EventGraph.add``). Returns the
        whole definition set.

        Raises:
            ExpressionSyntaxError, DefinitionError: the definitions are refused and the
                monitor keeps the ones it had, with their state.
        """
        namespaces = self.namespaces or None
        if self.graph is not None:
            defs = self.graph.add(definitions, namespaces=namespaces)
        else:
            defs = DefinitionSet.of(definitions, namespaces=namespaces)
            # Subscriptions made before any definition are checked against the first ones.
            for sub in self._subscriptions.values():
                try:
                    sub.check(defs, self._documents)
                except UnknownNameError as exc:
                    raise UnknownNameError(
                        f"{exc}; it was subscribed to before anything was defined: define "
                        f"{sub.name} in the same call, or subscribe after defining it") from None
            graph = EventGraph(defs, documents=self._documents, **self._options)
            if self._ts:
                graph.advance(self._ts)
            self.graph = graph
        self._definitions = defs
        self.active = True
        for sub in self._subscriptions.values():
            self._detect(sub)
        return defs

    def _detect(self, sub: _Subscription) -> None:
        """A single-event definition subscribed to by name detects (EventGraph.detect)."""
        graph = self.graph
        if graph is not None and sub.name is not None and sub.name in graph.definitions:
            graph.detect(sub.name)

    def undefine(self, name: str) -> DefinitionSet:
        """Remove definition ``name`` from the live event graph; the others keep their state.

        Raises:
            UnknownNameError: no definition is named ``name``.
            DefinitionError: other definitions reuse it (named in the message).
        """
        if self.graph is None:
            raise UnknownNameError(f"no definition named {name!r}; defined: none")
        subscribed = [sub.key for sub in self._subscriptions.values()
                      if sub.waiting() and sub.name == name]
        if subscribed:
            raise InvalidArgumentError(
                f"{name} has subscribers ({', '.join(map(repr, subscribed))}), which would "
                "never be called again: unsubscribe them first")
        defs = self.graph.remove(name)
        self._definitions = defs
        return defs

    @property
    def definitions(self) -> DefinitionSet | None:
        return self._definitions

    def signal(self, event_type: str | EventType, doc: Any = None) -> Signal:
        """The blinker signal sent for ``event_type`` (of ``doc``, or of every document)."""
        key = (str(event_type).strip(), id(doc))
        sub = self._subscriptions.get(key)
        if sub is None:
            sub = _Subscription(key[0], event_type, doc)
            sub.check(self._definitions, self._documents)  # before it is kept
            self._subscriptions[key] = sub
            self._detect(sub)
            self.active = True
        return sub.signal

    def subscribe(self, event_type: str | EventType, fn: Receiver | None = None, *,
                  doc: Any = None, weak: bool = False) -> Any:
        """Call ``fn(document, event=e)`` for every event of ``event_type``; returns ``fn``.

        ``event_type`` is a definition's name (its composite events), a composite type such
        as ``"ItemComplete(order/item)"`` or ``"%(item)"``, or a primitive type such as
        ``"upd(item/price/text())"``. Without ``fn``, returns a decorator. Receivers are held
        strongly unless ``weak`` (a method then lives as long as its object).

        Raises:
            UnknownNameError: no definition has the name (once something is defined; a
                subscription made before is checked by the first :meth:`define`).
            InvalidArgumentError: a type that can never occur (a path type the definition's
                events never have; an element's ``upd``), or ``weak=True`` for a receiver
                that nothing else holds (a lambda).
            ArgumentTypeError: ``fn`` cannot be called as ``fn(doc, event=e)``.
        """
        if fn is None:
            return lambda f: self.subscribe(event_type, f, doc=doc, weak=weak)
        check_receiver(fn, ("doc",), ("event",))
        if weak:
            check_weak(fn)
        self.signal(event_type, doc).connect(fn, weak=weak)
        return fn

    def unsubscribe(self, event_type: str | EventType, fn: Receiver, *, doc: Any = None
                    ) -> None:
        """Stop calling ``fn`` for ``event_type``."""
        sub = self._subscriptions.get((str(event_type).strip(), id(doc)))
        if sub is not None:
            sub.signal.disconnect(fn)

    # --- events --------------------------------------------------------------------------

    def take(self, raw: list[Raw]) -> None:
        """Number, record and detect on the events of one finished operation, then deliver."""
        if self._closed:
            return
        graph = self.graph
        ts = self._ts
        outbox = self._outbox
        # Events carry a time only where a window measures one: one reading per operation.
        now = self.clock() if graph is not None and graph.needs_time else None
        for doc, op, pi, value, old, index, moved in raw:
            ts += 1
            e = trusted_primitive(f"e{ts}", ts, op, pi, doc.name, value, old, index, now,
                                  moved)
            for log in doc.recordings:
                log.append(e)
            raised = graph.feed(e) if graph is not None else []
            outbox.append((doc, e, raised))
        self._ts = ts
        if graph is not None and graph.forgets:
            _forget_deleted(graph, raw)
        self.deliver()

    def deliver(self) -> None:
        """Run the receivers of everything undelivered, round after round (see the module)."""
        if self._delivering or self._batch or not self._outbox:
            return
        self._delivering = True
        errors: list[BaseException] = []
        rounds = 0
        try:
            while self._outbox:
                rounds += 1
                if rounds > self.cascade_limit:
                    pending = self._outbox
                    self._outbox = []
                    last = pending[-1][1]
                    raise CascadeError(
                        f"receivers were still changing the documents after "
                        f"{self.cascade_limit} rounds (cascade_limit); {len(pending)} "
                        f"deliveries dropped, the last for "
                        f"{last.type if last is not None else 'a flush'}: a rule loop?",
                        [x for x in errors if isinstance(x, Exception)])
                batch, self._outbox = self._outbox, []
                for doc, e, raised in batch:
                    self._call(doc, e, raised, errors)
        finally:
            self._delivering = False
        raise_collected(errors)

    def _call(self, doc: Any, e: PrimitiveEvent | None, raised: list[CompositeEvent],
              errors: list[BaseException]) -> None:
        subs = self._subscriptions.values()
        if e is not None:
            self._run(doc.mutations, doc, e, errors)
            for sub in subs:
                if sub.primitive and (sub.doc is None or sub.doc is doc) and sub.match(e):
                    self._run(sub.signal, doc, e, errors)
        for c in raised:
            cdoc = self.documents.get(c.doc, doc) if c.doc is not None else doc
            for sub in subs:
                if not sub.primitive and (sub.doc is None or sub.doc is cdoc) and sub.match(c):
                    self._run(sub.signal, cdoc, c, errors)
            self._run(self.composites, cdoc, c, errors)

    @staticmethod
    def _run(signal: Signal, doc: Any, event: Any, errors: list[BaseException]) -> None:
        if not signal.receivers:
            return
        for fn in _in_order(signal, doc):
            try:
                fn(doc, event=event)
            except BaseException as exc:  # the others still run; raised after all are
                errors.append(exc)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Defer receivers to the end of the block (the graph still sees every event)."""
        self._batch += 1
        try:
            yield
        finally:
            self._batch -= 1
            if not self._batch:
                self.deliver()

    # --- flush and close -----------------------------------------------------------------

    def flush(self) -> list[CompositeEvent]:
        """Report changes made behind the wrapper's back, then flush the graph (section 3.3):
        raise what non-local and custom operators hold. Returns the composites raised."""
        for doc in list(self.documents.values()):
            doc.resync()
        raised = self.graph.flush() if self.graph is not None and not self._closed else []
        return self._raise(raised)

    def close(self) -> list[CompositeEvent]:
        """Flush, close the graph and release every document (edits are no longer reported).

        Receivers of what closing raises may still edit: their events are fed, recorded and
        delivered like any (the graph is flushed again until nothing more is raised, at most
        ``cascade_limit`` times), and only then is the graph closed and are the documents
        released. Returns the composites raised by closing.
        """
        if self._closed:
            return []
        for doc in list(self.documents.values()):
            doc.resync()
        graph = self.graph
        closing: list[CompositeEvent] = []
        try:
            if graph is not None:
                for _ in range(self.cascade_limit):
                    raised = graph.flush()
                    if not raised:
                        break
                    closing += self._raise(raised)
                    for doc in list(self.documents.values()):
                        doc.resync()
                else:
                    raise CascadeError(
                        f"receivers kept raising composites while the monitor closed, "
                        f"{self.cascade_limit} flushes (cascade_limit): a rule loop?", [])
        finally:
            if graph is not None:
                closing += self._raise(graph.close())  # nothing is held after the flushes
            self._closed = True
            for doc in list(self.documents.values()):
                self.release(doc)
        if graph is None:
            waiting = [sub.key for sub in self._subscriptions.values() if sub.waiting()]
            if waiting:
                warnings.warn(
                    f"subscriptions to {', '.join(map(repr, waiting))} never ran: nothing was "
                    "defined (define the composite events they name with doc.define)",
                    SubscriptionWarning, stacklevel=2)
        return closing

    def release(self, doc: Any) -> None:
        """Stop watching ``doc``: its nodes lose their ids and its edits are not reported."""
        name = doc.name
        if self.documents.get(name) is doc:
            del self.documents[name]
        doc.release()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def resolver(self) -> XPathDocuments:
        """What the graph resolves path instances and compiles conditions with (this
        monitor's documents): a saved graph is given it back when resumed (:meth:`resume`)."""
        return self._documents

    @property
    def tick(self) -> int:
        """The tick of the last event numbered (0 before the first)."""
        return self._ts

    def resume(self, graph: EventGraph | None, tick: int) -> None:
        """Go on from a saved state (issue 29, the replay's checkpoint): ``graph`` — a copy
        of this monitor's graph as it was, its documents this monitor's — replaces the one
        built from the definitions, and events are numbered after ``tick``.

        Raises:
            InvalidArgumentError: the graph's definitions are not this monitor's, or
                events were numbered already.
        """
        if self._ts or self._outbox:
            raise InvalidArgumentError("this monitor numbered events already; resume a new one")
        mine = self._definitions
        if (graph is None) != (mine is None) or (
                graph is not None and mine is not None
                and [str(d.definition) for d in graph.definitions]
                != [str(d.definition) for d in mine]):
            raise InvalidArgumentError("the saved graph has other definitions than this monitor")
        if graph is not None:
            self.graph = graph
            self._definitions = graph.definitions
        self._ts = tick

    def _raise(self, raised: list[CompositeEvent]) -> list[CompositeEvent]:
        if raised:
            doc = next(iter(self.documents.values()), None)
            self._outbox.append((doc, None, raised))
            self.deliver()
        return raised

    def __repr__(self) -> str:
        names = ", ".join(self.documents) or "no documents"
        defined = ", ".join(self.graph.order) if self.graph is not None else "nothing"
        return f"<Monitor of {names}; detecting {defined}>"
