"""Termination: when an operator raises the composite events its context detects (§3.3).

An operator's Snoop context detects *potential* composite events; its termination part,
chosen once when the node is built, decides when they are raised:

* :class:`Immediate` — earliest mode without a condition: at once (the paper's default);
* :class:`Holding` — non-local or custom mode, or a termination condition: the potential
  event is *held* back (it is not stored in the tree yet, so it has consumed nothing) until
  the mode lets it go and the condition holds:

  - non-local: at the first primitive event of the same document outside the subtree rooted
    at the potential event's path instance (the manipulation moved elsewhere);
  - custom: when the graph is flushed or closed;
  - a condition is tested when the potential event is detected or let go, and again at every
    later event inside its subtree (rule (ii) of processTree, section 4); a missing element
    is false; a condition that fails while evaluated drops that potential event and is
    reported.

  In the cumulative context a held event takes in the events its group receives at a
  terminating child until it is raised (the later a composite is raised, the more it has).

Words: events an operator keeps to combine are *stored* (in its groups); potential events
waiting here are *held*.

References:
    M. Bernauer, G. Kappel, G. Kramler. Composite Events for XML. WWW 2004, sections 3.3, 4.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable
from typing import Any

from . import ast
from ._errors import ConditionError
from ._events import (
    CompositeEvent,
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
)

__all__ = ["Held", "Termination", "Immediate", "Holding", "NonLocal", "span", "span2",
           "compile_condition"]

#: Raises a potential event at a tick: gives it its id and detection tick.
Raise = Callable[[CompositeEvent, int], CompositeEvent]
Condition = Callable[[CompositeEvent], bool]


def span(picks: tuple[Event, ...]) -> tuple[int, int]:
    """The interval of a composite: spans its constituents' (section 3.1).

    A composite without constituents (raised by a zero lower bound, Example 16) spans nothing,
    so it does not stretch the interval of a composite it becomes part of.
    """
    lo = hi = None
    for e in picks:
        if type(e) is PrimitiveEvent:
            start = end = e.ts
        elif e.constituents:  # type: ignore[union-attr]  # a composite: `type() is` does not narrow
            start, end = e.interval
        else:
            continue
        if lo is None or start < lo:
            lo = start
        if hi is None or end > hi:
            hi = end
    if lo is None or hi is None:  # only composites without constituents: their own ticks
        return (min(e.start for e in picks), max(e.end for e in picks))
    return (lo, hi)


def span2(a: Event, b: Event) -> tuple[int, int]:
    """:func:`span` of two constituents (a binary operator's: every composite of Example 10's
    tree, every integration under a held conjunction), without its loop: the same bounds."""
    if type(a) is PrimitiveEvent:
        lo = hi = a.ts
    elif a.constituents:  # type: ignore[union-attr]  # a composite
        lo, hi = a.interval
    else:
        return span((a, b))
    if type(b) is PrimitiveEvent:
        start = end = b.ts
    elif b.constituents:  # type: ignore[union-attr]  # a composite
        start, end = b.interval
    else:
        return span((a, b))
    return (start if start < lo else lo, end if end > hi else hi)


class Held:
    """A potential composite event held back.

    ``terminated`` tells its termination mode has let it go (always, for earliest); it is
    raised once its condition, if any, holds. ``fresh`` marks it as detected in this tick.
    """

    __slots__ = ("event", "fresh", "terminated")

    def __init__(self, event: CompositeEvent, terminated: bool) -> None:
        self.event = event
        self.terminated = terminated
        self.fresh = True


class Termination(ABC):
    """The termination part of an operator node (abstract; see the module).

    ``held`` maps a group's key to the potential events held for it; ``defers`` says whether
    potential events may be held at all, ``observes`` whether the node must see every
    primitive event while it holds some.
    """

    __slots__ = ("defers", "held", "observes")

    def __init__(self, defers: bool = False, observes: bool = False) -> None:
        self.held: dict[Hashable, list[Held]] = {}
        self.defers = defers
        self.observes = observes

    @abstractmethod
    def emit(self, c: CompositeEvent, key: Hashable, raised: list[CompositeEvent]) -> None:
        """A potential event ``c`` of group ``key`` was detected: raise it or hold it."""

    def absorb(self, key: Hashable, event: Event) -> bool:
        """Let the latest event held for ``key`` take in ``event`` (cumulative context);
        False if nothing is held there."""
        return False

    def observe(self, event: PrimitiveEvent, tick: int) -> list[CompositeEvent]:
        """Let go of held events as ``event`` decides; return those raised."""
        return []

    def forget(self, key: Hashable) -> None:
        """Group ``key`` can never receive another event (its node was deleted)."""
        return None  # nothing is held here

    def flush(self, tick: int) -> list[CompositeEvent]:
        """Let go of what the mode holds back; return those raised."""
        return []

    # --- the constituents of held events (multiplicity's waiving, section 3.2) ----------------

    def holds(self, key: Hashable, c: CompositeEvent) -> bool:
        """Whether ``c`` itself is held for ``key``."""
        return any(h.event is c for h in self.held.get(key, ()))

    def release(self, key: Hashable, c: CompositeEvent) -> None:
        """Stop holding ``c`` (it was waived for a newer composite)."""
        entries = self.held.get(key)
        if entries is not None:
            entries[:] = [h for h in entries if h.event is not c]
            if not entries:
                del self.held[key]

    def contains(self, key: Hashable, e: Event) -> bool:
        """Whether a potential event held for ``key`` has ``e`` among its constituents."""
        # Loops, not any() of generators: asked at every integration of a multiplicity.
        for h in self.held.get(key, ()):
            for x in h.event.constituents:
                if x is e:
                    return True
        return False

    def substitute(self, key: Hashable, old: Event, new: Event) -> bool:
        """Put ``new`` in the place of constituent ``old`` of the events held for ``key``;
        True if any held event had it."""
        found = False
        for h in self.held.get(key, ()):
            c = h.event
            for x in c.constituents:  # a loop, not any(): at every integration
                if x is old:
                    break
            else:
                continue
            # At every integration of a multiplicity under a held event: two constituents
            # (a binary operator's) without a comprehension, and span2 for them; not
            # dataclasses.replace, which checks again what the node built, and _composite
            # inline.
            cs = c.constituents
            if len(cs) == 2:
                a, b = cs
                if a is old:
                    a = new
                if b is old:
                    b = new
                picks: tuple[Event, ...] = (a, b)
                interval = span2(a, b)
            else:
                picks = tuple([new if x is old else x for x in cs])
                interval = span(picks)
            e = _new(CompositeEvent)
            _set_c_id(e, c.id)
            _set_c_type(e, c.type)
            _set_c_pi(e, c.pi)
            _set_c_constituents(e, picks)
            _set_c_interval(e, interval)
            _set_c_ts(e, c.ts)
            _set_c_doc(e, c.doc)
            h.event = e
            found = True
        return found

    def potential(self) -> list[CompositeEvent]:
        """The potential events held, for inspection."""
        return [h.event for entries in self.held.values() for h in entries]


class Immediate(Termination):
    """Earliest mode without a condition: every potential event is raised when detected."""

    __slots__ = ()

    def emit(self, c: CompositeEvent, key: Hashable, raised: list[CompositeEvent]) -> None:
        raised.append(c)


class Holding(Termination):
    """Non-local or custom mode, or a condition: potential events are held (see the module).

    Args:
        mode: the node's termination mode.
        condition: the compiled condition, or None.
        raise_: gives a let-go potential event its id and tick (the node's).
        report: receives the :class:`ConditionError` of a condition that failed.
    """

    __slots__ = ("_raise", "_report", "condition", "mode")

    def __init__(self, mode: ast.Mode, condition: Condition | None, raise_: Raise,
                 report: Callable[[ConditionError], Any]) -> None:
        super().__init__(defers=True,
                         observes=mode is ast.Mode.NON_LOCAL or condition is not None)
        self.mode = mode
        self.condition = condition
        self._raise = raise_
        self._report = report

    def emit(self, c: CompositeEvent, key: Hashable, raised: list[CompositeEvent]) -> None:
        self.held.setdefault(key, []).append(Held(c, terminated=self.mode is ast.Mode.EARLIEST))

    def forget(self, key: Hashable) -> None:
        """Potential events held only by a condition go with their group: the condition is
        tested again only at events inside its subtree, and there will be none. Those held by
        the non-local or custom mode are complete and go as their mode says."""
        if self.mode is ast.Mode.EARLIEST:
            self.held.pop(key, None)

    def absorb(self, key: Hashable, event: Event) -> bool:
        entries = self.held.get(key)
        if not entries:
            return False
        h = entries[-1]
        picks = h.event.constituents + (event,)
        h.event = dataclasses.replace(h.event, constituents=picks, interval=span(picks))
        return True

    def observe(self, event: PrimitiveEvent, tick: int) -> list[CompositeEvent]:
        """Non-local mode lets a held event go at the first event of its document outside its
        subtree; a condition is tested when the event was detected in this tick, has just been
        let go, or ``event`` happened inside its subtree."""
        non_local = self.mode is ast.Mode.NON_LOCAL
        out: list[CompositeEvent] = []
        for key in list(self.held):
            keep: list[Held] = []
            for h in self.held[key]:
                c = h.event
                if c.doc != event.doc:
                    h.fresh = False
                    keep.append(h)
                    continue
                inside = event.pi.ids[:len(c.pi.ids)] == c.pi.ids
                let_go = non_local and not h.terminated and not inside
                if let_go:
                    h.terminated = True
                test = h.terminated and (h.fresh or let_go or inside)
                h.fresh = False
                if not test:
                    keep.append(h)
                elif self._passes(h, keep):
                    out.append(self._raise(c, tick))
            self._keep(key, keep)
        return out

    def flush(self, tick: int) -> list[CompositeEvent]:
        """Events held only by a condition (earliest mode) stay held; those detected in this
        tick have their condition tested, as they would have at the next event."""
        earliest = self.mode is ast.Mode.EARLIEST
        out: list[CompositeEvent] = []
        for key in list(self.held):
            keep: list[Held] = []
            for h in self.held[key]:
                test = not earliest or h.fresh
                h.terminated = True
                h.fresh = False
                if not test:
                    keep.append(h)
                elif self._passes(h, keep):
                    out.append(self._raise(h.event, tick))
            self._keep(key, keep)
        return out

    def _keep(self, key: Hashable, keep: list[Held]) -> None:
        if keep:
            self.held[key] = keep
        else:
            del self.held[key]

    def _passes(self, h: Held, keep: list[Held]) -> bool:
        """Whether a let-go held event may be raised; if it must wait, it goes to ``keep``."""
        if self.condition is None:
            return True
        try:
            ok = self.condition(h.event)
        except ConditionError as exc:
            self._report(exc)
            return False  # not raised, not kept: it would fail again
        if not ok:
            keep.append(h)
        return ok


class NonLocal(Holding):
    """Non-local mode without a condition (a fast path, chosen when the node is built).

    :meth:`Holding.observe` specialised: a held event of this mode is never ``terminated``
    while it is held (it is let go and raised at once: nothing can make it wait), so it is
    raised exactly when ``event`` is of its document and outside its subtree, and kept
    otherwise; ``fresh`` plays no part (it only matters to a condition, and to ``flush`` in
    earliest mode). A group none of whose events goes keeps its list as it is. Same events
    raised, in the same order, as :class:`Holding`; the non-local trees of the paper's
    examples (and ``bench/bench_engine.py``'s) spend a third of their time observing.
    """

    __slots__ = ()

    def __init__(self, raise_: Raise, report: Callable[[ConditionError], Any]) -> None:
        super().__init__(ast.Mode.NON_LOCAL, None, raise_, report)

    def observe(self, event: PrimitiveEvent, tick: int) -> list[CompositeEvent]:
        held = self.held
        doc = event.doc
        ids = event.pi.ids
        # Most events pass inside what is held (the rest of its subtree): look first, and
        # change nothing if nothing goes.
        for entries in held.values():
            for h in entries:
                c = h.event
                inside = c.pi.ids
                if c.doc == doc and ids[:len(inside)] != inside:
                    break
            else:
                continue
            break
        else:
            return []
        out: list[CompositeEvent] = []
        for key, entries in list(held.items()):
            keep: list[Held] = []
            for h in entries:  # one pass sorts a group's events into those that go and stay
                c = h.event
                inside = c.pi.ids
                if c.doc == doc and ids[:len(inside)] != inside:
                    h.terminated = True
                    out.append(self._raise(c, tick))
                else:
                    keep.append(h)
            if len(keep) == len(entries):
                continue  # all stay: the group keeps its list as it is
            if keep:
                held[key] = keep
            else:
                del held[key]
        return out


def compile_condition(documents: Any, expression: str) -> Condition:
    """``expression`` compiled with the graph's documents into a test of a potential event."""
    assert documents is not None, "the graph rejects conditions without documents"
    return _Check(documents, expression)


class _Check:
    """A compiled termination condition. A class, not a closure, so that a graph's state can
    be pickled (issue 29, the replay's checkpoint): it pickles as its documents and its text
    and is compiled again when loaded (the compiled XPath is lxml's and cannot be pickled)."""

    __slots__ = ("documents", "expression", "test")

    def __init__(self, documents: Any, expression: str) -> None:
        self.documents = documents
        self.expression = expression
        self.test = documents.compile(expression)

    def __call__(self, c: CompositeEvent) -> bool:
        try:
            node = self.documents.resolve(c.doc, c.pi)
            return node is not None and bool(self.test(node))
        except Exception as exc:  # a failing condition must not stop detection (issue 4)
            raise ConditionError(f"{type(exc).__name__}: {exc}", definition=c.type.name or "",
                                 condition=self.expression, doc=c.doc, path=str(c.pi),
                                 cause=exc) from exc

    def __reduce__(self) -> tuple[Any, ...]:
        return (compile_condition, (self.documents, self.expression))
