"""Operator nodes: the parts an operator is made of, and the one owner of its stored events.

An operator node of an event tree (seed 000, sections 2.2-3.3) is composed, when it is built,
of parts with one job each:

* its **grouping** (:mod:`._grouping`): which child events may be combined — by projection on
  the operator's path type in the hierarchical context, by document in the plain contexts;
* its **Snoop context** (:mod:`._contexts`): inside one group, which *stored* events an
  arrival combines with and which it consumes (chronicle, recent, continuous, cumulative,
  unrestricted), one selection function per operator kind;
* its **termination** (:mod:`._termination`): whether a detected *potential* event is raised
  at once or *held* (modes non-local and custom, conditions), and when a held one goes.

The multiplicity operator adds its integration bookkeeping (:mod:`._multiplicity`). A node
owns its stored events: another node (a multiplicity child waiving a composite it integrated)
asks through :meth:`OperatorNode.unconsumed` and :meth:`OperatorNode.waive`, never edits the
node's lists.

Assumptions: events arrive tick by tick with increasing ticks, and within a tick a tree is
processed once (``processTree`` of section 4), so every operator is evaluated once a tick,
after its children, with the events its children delivered in that tick, in arrival order.

References:
    M. Bernauer, G. Kappel, G. Kramler. Composite Events for XML. WWW 2004, sections 2.3-4.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from xmlevents._foundation.tables import complete

from . import ast
from ._contexts import (
    ANY,
    NOT,
    SEQ,
    Before,
    Group,
    Picks,
    remove,
    select_disj,
)
from ._definitions import OperatorSpec
from ._errors import ConditionError
from ._events import (
    CompositeEvent,
    CompositeEventType,
    Event,
    PrimitiveEvent,
    _new,
    _set_c_constituents,
    _set_c_doc,
    _set_c_id,
    _set_c_interval,
    _set_c_pi,
    _set_c_ts,
    _set_c_type,
    _set_pi_ids,
    _set_pi_pt,
    start_time,
    trusted_path_instance,
)
from ._grouping import NULL, Grouping, Projection, grouping
from ._paths import SHARE_DEPTH, PathInstance, PathType, _shared, intersect_ab
from ._termination import (
    Held,
    Holding,
    Immediate,
    NonLocal,
    Termination,
    compile_condition,
    span,
    span2,
)
from ._window import Bounds, Expired, Windows
from .ast import Duration

if TYPE_CHECKING:
    from ._sharing import Sharing
    from ._tree import EventTree

__all__ = ["TreeOptions", "OperatorNode", "SEMANTICS", "before_interval", "before_detection",
           "DIRECT", "NonLocalConj"]


@dataclass(frozen=True, slots=True)
class TreeOptions:
    """The graph-wide defaults an operator uses where its ``with`` modifiers are silent."""

    context: ast.Context = ast.Context.CHRONICLE
    hierarchical: bool = True
    semantics: str = "interval"
    #: Resolves path instances and compiles termination conditions (None: conditions refused).
    documents: Any = None
    #: Receives a failing condition's error; by default it becomes a RuntimeWarning.
    report: Callable[[ConditionError], Any] | None = None
    #: The window of operators that set none (None: unbounded), and the graph's clock.
    within: int | Duration | None = None
    windows: Windows | None = None
    #: The graph's shared subtrees (:mod:`._sharing`); None: every tree builds its own.
    sharing: Sharing | None = None


def before_interval(a: Event, b: Event) -> bool:
    """Interval-based order (section 3.1): ``a``'s interval ends before ``b``'s starts."""
    return a.end < b.start


def before_detection(a: Event, b: Event) -> bool:
    """Snoop's detection-based order: ``a`` was detected at an earlier tick than ``b``."""
    return a.ts < b.ts


SEMANTICS: dict[str, Before] = {"interval": before_interval, "detection": before_detection}

_Select = Callable[[Group[Event], int, Event], list[Picks]]


def _earliest(mode: ast.Mode, condition: Any, raise_: Any, report: Any) -> Termination:
    # without a condition: at once, the paper's default (_termination.Immediate)
    return Immediate() if condition is None else Holding(mode, condition, raise_, report)


def _non_local(mode: ast.Mode, condition: Any, raise_: Any, report: Any) -> Termination:
    # the non-local mode alone: its fast path (_termination.NonLocal)
    return (NonLocal(raise_, report) if condition is None
            else Holding(mode, condition, raise_, report))


#: A node's termination, by its mode (section 3.3), chosen once when the node is built;
#: complete when the module is imported (issue 28: a mode forgotten here fails, not falls
#: through to another mode's termination).
_TERMINATION: dict[ast.Mode, Callable[[ast.Mode, Any, Any, Any], Termination]] = complete(
    ast.Mode, {
        ast.Mode.EARLIEST: _earliest,
        ast.Mode.NON_LOCAL: _non_local,
        ast.Mode.CUSTOM: Holding,
    }, "the termination of each mode")
#: The child index of an arrival ``(child, event)``.
_child = itemgetter(0)


class OperatorNode:
    """An operator node: its path type and its parts (see the module), chosen once.

    Child events arrive in ``pending`` during a tick; :meth:`evaluate` sorts them into groups
    (``groups``, keyed by the grouping), lets the context combine them into potential events
    and hands those to the termination, which raises or holds them.
    """

    __slots__ = (
        "_before",
        "_bounds",
        "_defers",
        "_seen",
        "_select",
        "_terminators_first",
        "_text",
        "_tree",
        "_types",
        "absorbs",
        "context",
        "duration",
        "grouping",
        "groups",
        "hierarchical",
        "index",
        "mode",
        "name",
        "observes",
        "parent",
        "pending",
        "pt",
        "spec",
        "termination",
        "width",
        "window",
        "windows",
    )

    def __init__(self, spec: OperatorSpec, tree: EventTree, options: TreeOptions,
                 before: Before, bounds: Bounds | None = None) -> None:
        mods = spec.mods
        self.spec = spec
        self.pt: PathType = spec.pt
        self.name = tree.name
        self._tree = tree
        self.context: ast.Context = mods.context or options.context
        self.hierarchical: bool = (options.hierarchical if mods.hierarchical is None
                                   else mods.hierarchical)
        self.mode: ast.Mode = mods.mode or ast.Mode.EARLIEST
        condition = (None if mods.when is None
                     else compile_condition(options.documents, mods.when))
        self.grouping: Grouping = grouping(self.pt, self.hierarchical)
        #: The projection's cache of where its ids lie (``_grouping.Projection``), read by
        #: the fast paths' ``push`` inline (an empty dict: not a projection, ask ``key``).
        self._bounds: dict[PathType, tuple[int, int] | None] = (
            self.grouping.bounds if isinstance(self.grouping, Projection) else {})
        self.termination: Termination = _TERMINATION[self.mode](
            self.mode, condition, self._raise, tree.report)
        #: Whether it must see every primitive event while it holds potential events.
        self.observes = self.termination.observes
        self._defers = self.termination.defers
        self.parent: OperatorNode | None = None
        self.index = 0
        self.width = len(spec.children)
        self.groups: dict[Hashable, Group[Event]] = {}
        self.pending: list[tuple[int, Event]] = []
        self._select: _Select | None = _selector(spec.expr, self.context, before)
        self._before = before
        # One event can reach several leaves of a sequence. Within a tick it must end the
        # chains that older events started before it starts its own: otherwise, in the recent
        # context, it would replace the initiator it should pair with. (Same-tick events never
        # precede each other, so no other context can tell the difference.)
        self._terminators_first = isinstance(spec.expr, (ast.Seq, ast.Not))
        # Children whose events a held potential event takes in (cumulative context): those
        # that can terminate the operator.
        expr = spec.expr
        absorbs: frozenset[int] = frozenset()
        if self.termination.defers and self.context is ast.Context.CUMULATIVE:
            if isinstance(expr, (ast.Conj, ast.AnyOf)):
                absorbs = frozenset(range(self.width))
            elif isinstance(expr, (ast.Seq, ast.Not)):
                absorbs = frozenset((self.width - 1,))
        self.absorbs = absorbs
        #: The windows bounding this node (its own ``within``, an ancestor's, or the graph's;
        #: the smallest of each kind): in ticks, in milliseconds of event time; and the
        #: graph's clock that expires what it stores (_window).
        self.window = bounds.ticks if bounds is not None else None
        self.duration = bounds.ms if bounds is not None else None
        bounded = self.window is not None or self.duration is not None
        self.windows = options.windows if bounded else None
        self._text: str | None = None
        # Per path type of arriving events: the type (with the absolute path type) of the
        # composites built from them (∩ab, section 3.1), and that path type's length.
        self._types: dict[PathType, tuple[CompositeEventType, int]] = {}
        # The last path type _compose looked up there, and what it found: a node's composites
        # mostly start with events of one path type (no dict lookup, no __hash__ call).
        self._seen: tuple[PathType | None, tuple[CompositeEventType, int] | None] = (
            None, None)

    @property
    def held(self) -> dict[Hashable, Any]:
        """The potential events the termination holds, by group."""
        return self.termination.held

    def arrive(self, child: int, event: Event) -> None:
        self.pending.append((child, event))

    def key(self, event: Event) -> Hashable:
        """The group ``event`` belongs to, or ``NULL`` if its projection is null."""
        return self.grouping.key(event)

    # --- the one owner of its stored events ------------------------------------------------

    def unconsumed(self, event: Event, child: int) -> bool:
        """Whether this node still has ``event`` of child ``child``: stored, or a constituent
        of a potential event it holds (a held event has consumed nothing, section 3.3)."""
        return self.holder(event, child) is not NULL

    def holder(self, event: Event, child: int) -> Hashable:
        """The key of the group that still has ``event`` of child ``child`` (stored, or a
        constituent of a potential event it holds), :data:`NULL` if none has it (consumed, or
        an event this node never combines) — not None, a group's key (a document) may be; for
        :meth:`waive_in`: a multiplicity with one consumer asks this, then waives there,
        finding the group once (``_multiplicity.EarliestMult.push``)."""
        pi = event.pi  # the projection's key (Projection.key), inline
        b = self._bounds.get(pi.pt)
        key = self.grouping.key(event) if b is None else (event.doc, pi.ids[b[0]:b[1]])
        if key is NULL:
            return NULL
        group = self.groups.get(key)
        if group is not None:
            for x in group.bufs[child]:
                if x is event:
                    return key
        # Termination.contains, inline
        for h in self.termination.held.get(key, ()):
            for x in h.event.constituents:
                if x is event:
                    return key
        return NULL

    def waive_in(self, key: Hashable, event: Event, child: int, replacement: Event) -> bool:
        """:meth:`waive` in group ``key``, the one :meth:`holder` found."""
        group = self.groups.get(key)
        if group is not None:
            buf = group.bufs[child]
            buf[:] = [x for x in buf if x is not event]
        return self.termination.substitute(key, event, replacement)

    def waive(self, event: Event, child: int, replacement: Event) -> bool:
        """Take ``event`` of child ``child`` out of what this node stores; in the potential
        events it holds, ``replacement`` takes its place (section 3.2). True if one did."""
        pi = event.pi  # the projection's key (Projection.key), inline: at every integration
        b = self._bounds.get(pi.pt)
        key = self.grouping.key(event) if b is None else (event.doc, pi.ids[b[0]:b[1]])
        if key is NULL:
            return False
        group = self.groups.get(key)
        if group is not None:
            buf = group.bufs[child]
            buf[:] = [x for x in buf if x is not event]
        return self.termination.substitute(key, event, replacement)

    # --- evaluation ------------------------------------------------------------------------

    def evaluate(self, tick: int) -> list[CompositeEvent]:
        """Combine this tick's arrivals, in arrival order; return the composites raised.

        Each arrival joins the group its grouping gives it; an arrival whose projection is
        null is never combined (section 3.1).
        """
        arrivals, self.pending = self.pending, []
        if self._terminators_first and len(arrivals) > 1:
            # By child, descending; stable (reverse=True keeps equal keys in order): the same
            # order as a key of -child, with the key read in C.
            arrivals.sort(key=_child, reverse=True)
        raised: list[CompositeEvent] = []
        touched: list[tuple[Hashable, Group[Event]]] = []
        groups = self.groups
        select = self._select
        assert select is not None
        key_of = self.grouping.key
        absorbs = self.absorbs
        termination = self.termination
        emit = termination.emit
        bounded = self.windows is not None
        for child, event in arrivals:
            key = key_of(event)
            if key is NULL:
                continue
            if bounded and not self._fits(key, child, event, tick):
                continue
            if absorbs and child in absorbs and termination.absorb(key, event):
                continue
            group = groups.get(key)
            if group is None:
                group = groups[key] = Group(self.width)
            touched.append((key, group))
            for picks in select(group, child, event):
                emit(self._compose(picks, tick), key, raised)
        for key, group in touched:
            if group.taken is not None:
                group.end_tick()
            if not any(group.bufs) and key in groups:
                del groups[key]
        return raised

    def drop(self, key: Hashable) -> None:
        """Group ``key`` can never receive another event (its node was deleted): forget what
        it stores, and the potential events held for it by a condition alone."""
        self.groups.pop(key, None)
        self.termination.forget(key)

    # --- the window ----------------------------------------------------------------------------

    def _due(self, event: Event) -> float | None:
        """The event time at which ``event`` leaves this node's duration window (None: it
        starts at no time)."""
        assert self.duration is not None
        started = start_time(event)
        # None: untimed (the graph refuses those under a duration); inf: a composite without
        # constituents, which spans no time.
        if started is None or started == math.inf:
            return None
        return started + self.duration / 1000

    def _fits(self, key: Hashable, child: int, event: Event, tick: int) -> bool:
        """Whether ``event`` may still take part in a composite inside the windows; if so, the
        clock is told when it expires (if it is stored), else it is reported dropped."""
        if not self._admits(key, event, tick):
            return False
        self._stores(key, child, event)
        return True

    def _admits(self, key: Hashable, event: Event, tick: int) -> bool:
        """:meth:`_fits` without telling the clock: the fast paths tell it (:meth:`_stores`)
        only for an arrival they store. One they do not (a sequence's terminator, the
        arrival that completes a conjunction) the clock would only find gone at its expiry:
        nothing is dropped, nothing reported, for it."""
        windows = self.windows
        assert windows is not None
        # The tick window inline: it is checked for every arrival at a windowed node.
        at = None if self.window is None else event.start + self.window
        due = None if self.duration is None else self._due(event)
        if (at is not None and at <= tick) or (due is not None and due <= windows.now):
            # a child's composite that already spans a window
            if windows.listening:
                windows.dropped += self.expired(key, [event], tick)
            return False
        return True

    def _stores(self, key: Hashable, child: int, event: Event) -> None:
        """Tell the clock when ``event``, stored for ``child`` in group ``key``, expires
        (:meth:`_fits` does it for every arrival it admits, stored or not)."""
        windows = self.windows
        assert windows is not None
        if self.window is not None:
            windows.schedule(self, key, child, event, event.start + self.window)
        if self.duration is not None:
            due = self._due(event)
            if due is not None:
                windows.schedule_time(self, key, child, event, due)

    def _inside(self, c: CompositeEvent, tick: int) -> bool:
        """Whether composite ``c`` may still grow inside the windows (multiplicity)."""
        assert self.windows is not None
        at = None if self.window is None else c.start + self.window
        due = None if self.duration is None else self._due(c)
        return not ((at is not None and at <= tick)
                    or (due is not None and due <= self.windows.now))

    def expire(self, key: Hashable, child: int, event: Event) -> bool:
        """Drop ``event`` of child ``child`` from group ``key`` (its window ended); False if
        it is no longer stored (consumed, or never stored)."""
        group = self.groups.get(key)
        if group is None or not remove(group.bufs[child], event):
            return False
        if not any(group.bufs):
            del self.groups[key]
        return True

    def expired(self, key: Hashable, events: list[Event], tick: int) -> list[Expired]:
        """The report of ``events`` of group ``key`` dropped at ``tick`` (one for each
        definition sharing the node, if it is a shared subtree's)."""
        first = events[0]
        group = None
        if isinstance(key, tuple):  # (doc, ids) of the projection: the hierarchical context
            pt = intersect_ab(self.pt, first.pi.pt)
            if pt is not None:  # the group's instance, absolute (∩ab, section 3.1)
                group = trusted_path_instance(pt, first.pi.ids[:len(pt)])
        events = sorted(events, key=lambda e: (e.start, e.end, e.ts))
        if self._text is None:  # printed once: reports of one node repeat it
            self._text = str(self.spec.expr)
        report = Expired(self.name, self._text, first.doc, group, tuple(events), tick)
        core = self._tree.core
        return [report] if core is None else core.reports(self.spec, report)

    def _compose(self, picks: Picks, tick: int, pi: PathInstance | None = None
                 ) -> CompositeEvent:
        first = picks[0]
        pt = first.pi.pt
        seen, found = self._seen
        if seen is not pt:
            found = self._types.get(pt)
            if found is None:
                abs_pt = intersect_ab(self.pt, pt)
                assert abs_pt is not None, "arrivals with a null projection are filtered out"
                abs_pt = abs_pt.interned()  # so that its consumers' dicts find it by identity
                found = self._types[pt] = (CompositeEventType(self.name, abs_pt), len(abs_pt))
            self._seen = (pt, found)
        assert found is not None
        et, n = found  # n: the path type's length, kept (len() of a path type is a call)
        if pi is None:
            pi = first.pi
            if pi.pt is not et.pt:  # else the first constituent's own instance is the group's
                # trusted_path_instance(et.pt, pi.ids[:n]), inline
                ids = pi.ids[:n]
                pi = _new(PathInstance)
                _set_pi_pt(pi, et.pt)
                _set_pi_ids(pi, ids if len(ids) <= SHARE_DEPTH else _shared(ids))
        # A held event gets its id when it is raised, so ids follow the order raised.
        if self._defers:
            ident = ""
        else:  # EventTree.next_id, inline
            tree = self._tree
            tree._count += 1
            ident = f"{self.name}#{tree._count}"
        interval = span2(picks[0], picks[1]) if len(picks) == 2 else span(picks)
        # _composite(ident, et, pi, picks, interval, tick, first.doc), inline
        c = _new(CompositeEvent)
        _set_c_id(c, ident)
        _set_c_type(c, et)
        _set_c_pi(c, pi)
        _set_c_constituents(c, picks)
        _set_c_interval(c, interval)
        _set_c_ts(c, tick)
        _set_c_doc(c, first.doc)
        return c

    def _raise(self, c: CompositeEvent, tick: int) -> CompositeEvent:
        """A held potential event, let go: its id and its detection tick."""
        # Not dataclasses.replace: that checks again what the node built (8% of the
        # non-local tree's time); EventTree.next_id and _composite inline.
        tree = self._tree
        tree._count += 1
        out = _new(CompositeEvent)
        _set_c_id(out, f"{self.name}#{tree._count}")
        _set_c_type(out, c.type)
        _set_c_pi(out, c.pi)
        _set_c_constituents(out, c.constituents)
        _set_c_interval(out, c.interval)
        _set_c_ts(out, tick)
        _set_c_doc(out, c.doc)
        return out

    def observe(self, event: Any, tick: int) -> list[CompositeEvent]:
        """Let go of held events as primitive ``event`` decides (section 3.3)."""
        return self.termination.observe(event, tick)

    def flush(self, tick: int) -> list[CompositeEvent]:
        """Let go of every event held by non-local or custom mode; raise those that pass."""
        return self.termination.flush(tick)

    def held_events(self) -> list[Event]:
        """Every event stored in this node's groups (for inspection and tests)."""
        return [e for g in self.groups.values() for e in g.events()]

    def potential_events(self) -> list[CompositeEvent]:
        """The potential composite events this node holds back."""
        return self.termination.potential()


# --- fast paths --------------------------------------------------------------------------------
#
# The paper's running example and most definitions users write are conjunctions and two-step
# sequences in the default configuration: hierarchical chronicle context, earliest mode, no
# condition (a window is checked as in the general path). For those a node's class is
# switched, once when it is built (:func:`specialise`), to one whose ``evaluate`` does the same
# as the general one with the context's selection inlined: no selection call, no list of
# touched groups, an empty group deleted as soon as it empties. Its ``push`` takes one arrival
# and returns the one composite it may complete, so that a tree made only of such nodes takes
# an event up its chain of nodes directly (no pending lists, no walk over every node:
# ``EventTree.direct`` and ``EventTree.walk``). The same holds for a conjunction in the
# non-local mode (issue 4's tree): its ``push`` holds what it completes and returns nothing,
# its termination (``_termination.NonLocal``) lets held events go as primitive events pass;
# and for a multiplicity that raises at once (``_multiplicity.EarliestMult``). The property
# tests against the reference evaluator (windows included), the direct-against-general tests
# (``tests/algebra/test_fast_paths.py``) and the tables of the paper run through them.
#
# Inside ``push``, the same work as the general path with less: the projection's key computed
# inline (``Projection.key``: a call less), binary nodes without comprehensions or all()/any(),
# and under a window the clock told only about an arrival the node stores (``_admits`` then
# ``_stores``; ``_fits`` tells it about every arrival, and the entries of those not stored
# would only find them gone at their expiry). ``_compose`` serves both paths: it remembers the
# composite type of the last path type it saw (no dict lookup, no ``PathType.__hash__``
# call), reuses the first constituent's path instance when it is the group's, and numbers the
# composite without calling ``next_id``.


class ChronicleConj(OperatorNode):
    """A conjunction in the hierarchical chronicle context that raises at once (fast path)."""

    __slots__ = ()

    def evaluate(self, tick: int) -> list[CompositeEvent]:
        arrivals, self.pending = self.pending, []
        push = self.push
        return [c for child, event in arrivals if (c := push(child, event, tick)) is not None]

    def push(self, child: int, event: Event, tick: int) -> CompositeEvent | None:
        """One arrival: stored, or the composite it completes (at most one: one event of
        each child, the oldest, consumed as select_any does)."""
        pi = event.pi  # the projection's key (Projection.key), inline
        b = self._bounds.get(pi.pt)
        key = self.grouping.key(event) if b is None else (event.doc, pi.ids[b[0]:b[1]])
        windowed = self.windows is not None
        if key is NULL or (windowed and not self._admits(key, event, tick)):
            return None
        groups = self.groups
        group = groups.get(key)
        if group is None:
            # Group(self.width), its slots set here (no __init__ frame): a group is
            # made for every item the node sees
            group = groups[key] = _new(Group)
            group.bufs = [[], []] if self.width == 2 else [[] for _ in range(self.width)]
            group.taken = None
        bufs = group.bufs
        mine = bufs[child]
        mine.append(event)
        if len(bufs) == 2:  # binary: no comprehension, no all() or any()
            first, second = bufs
            if not first or not second:
                c = None
            else:
                c = self._compose((first.pop(0), second.pop(0)), tick)
                if not first and not second:
                    del groups[key]
        elif not all(bufs):
            c = None
        else:
            c = self._compose(tuple([buf.pop(0) for buf in bufs]), tick)
            if not any(bufs):
                del groups[key]
        if windowed and mine:  # the arrival, last of its buffer, is still there: stored
            self._stores(key, child, event)
        return c


class NonLocalConj(ChronicleConj):
    """A conjunction in the hierarchical chronicle context, in the non-local mode without a
    condition (fast path): what an arrival completes is held (``_termination.NonLocal``)
    until a primitive event outside its subtree lets it go; ``push`` never returns one."""

    __slots__ = ()

    def evaluate(self, tick: int) -> list[CompositeEvent]:
        arrivals, self.pending = self.pending, []
        push = self.push
        for child, event in arrivals:
            push(child, event, tick)
        return []

    def push(self, child: int, event: Event, tick: int) -> CompositeEvent | None:
        """One arrival: stored, or the potential event it completes held (as ChronicleConj
        picks it, then as Holding.emit holds it)."""
        c = ChronicleConj.push(self, child, event, tick)
        if c is None:
            return None
        pi = event.pi  # its group's key again (once a composite, not once an arrival)
        b = self._bounds.get(pi.pt)
        key = self.grouping.key(event) if b is None else (event.doc, pi.ids[b[0]:b[1]])
        # Held(c, False), its slots set here (no __init__ frame): held by the non-local mode
        h = _new(Held)
        h.event = c
        h.terminated = False
        h.fresh = True
        held = self.termination.held
        entries = held.get(key)
        if entries is None:
            held[key] = [h]
        else:
            entries.append(h)
        return None


class ChronicleSeq(OperatorNode):
    """A two-step sequence in the hierarchical chronicle context that raises at once (fast
    path): an initiator is stored; a terminator takes the oldest initiator before it."""

    __slots__ = ()

    def evaluate(self, tick: int) -> list[CompositeEvent]:
        arrivals, self.pending = self.pending, []
        if len(arrivals) > 1:  # terminators first (see OperatorNode.__init__, evaluate)
            arrivals.sort(key=_child, reverse=True)
        push = self.push
        return [c for child, event in arrivals if (c := push(child, event, tick)) is not None]

    def push(self, child: int, event: Event, tick: int) -> CompositeEvent | None:
        """One arrival: an initiator stored, or the composite a terminator makes with the
        oldest initiator before it (a terminator alone is never stored)."""
        pi = event.pi  # the projection's key (Projection.key), inline
        b = self._bounds.get(pi.pt)
        key = self.grouping.key(event) if b is None else (event.doc, pi.ids[b[0]:b[1]])
        if key is NULL or (self.windows is not None and not self._admits(key, event, tick)):
            return None
        groups = self.groups
        group = groups.get(key)
        if child == 0:
            if group is None:
                group = groups[key] = _new(Group)  # Group(2), as in ChronicleConj.push
                group.bufs = [[], []]
                group.taken = None
            group.bufs[0].append(event)
            if self.windows is not None:  # an initiator is stored (a terminator never is)
                self._stores(key, child, event)
            return None
        if group is None:
            return None
        starts = group.bufs[0]
        before = self._before
        if before is before_interval:
            # before_interval inline (x.end < event.start, without the properties' calls)
            begin = event.ts if type(event) is PrimitiveEvent else event.interval[0]
            for i, x in enumerate(starts):
                if (x.ts if type(x) is PrimitiveEvent else x.interval[1]) < begin:
                    del starts[i]
                    if not starts:
                        del groups[key]
                    return self._compose((x, event), tick)
            return None
        for i, x in enumerate(starts):
            if before(x, event):
                del starts[i]
                if not starts:
                    del groups[key]
                return self._compose((x, event), tick)
        return None


#: The fast paths' classes whose nodes never hold potential events: a tree made only of them
#: takes a primitive event straight up its chain of nodes (``EventTree.direct``, used by
#: ``EventGraph.feed``).
DIRECT = frozenset((ChronicleConj, ChronicleSeq))


def specialise(node: OperatorNode) -> OperatorNode:
    """Switch ``node`` to its fast path's class, if its configuration has one (see above)."""
    if (type(node) is not OperatorNode or node.absorbs or not node.hierarchical
            or node.context is not ast.Context.CHRONICLE):
        return node
    expr = node.spec.expr
    kind = type(node.termination)
    if kind is Immediate:
        if isinstance(expr, ast.Conj):
            node.__class__ = ChronicleConj
        elif isinstance(expr, ast.Seq) and node.width == 2:
            node.__class__ = ChronicleSeq
    elif kind is NonLocal and isinstance(expr, ast.Conj):
        node.__class__ = NonLocalConj
    return node


def _selector(expr: ast.Operator, context: ast.Context, before: Before) -> _Select | None:
    # partial objects call in C: one Python frame less per arrival than a lambda. The
    # context's rules are looked up once, here (_contexts' tables: every context has them).
    if isinstance(expr, ast.Conj):
        return partial(ANY[context], len(expr.children), before=before)
    if isinstance(expr, ast.AnyOf):
        return partial(ANY[context], expr.n, before=before)
    if isinstance(expr, ast.Seq):
        return partial(SEQ[context], before=before)
    if isinstance(expr, ast.Not):
        return partial(NOT[context], before=before)
    if isinstance(expr, ast.Disj):
        return partial(select_disj, context, before=before)
    if isinstance(expr, ast.Mult):
        return None  # a multiplicity node integrates on its own
    raise NotImplementedError(f"{type(expr).__name__} operators are not evaluated")
