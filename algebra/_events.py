"""Event types, events, type compatibility and the JSON-lines form (seed 000, section 2.2).

Primitive event types are ``op(pt)`` with op ``ins``, ``upd``, ``del`` or the wildcard ``*``;
composite event types are ``Name(pt)`` or ``%(pt)`` for the wildcard name (the paper writes
``*`` for both; the expression language needs two symbols). ``compatible(a, b)`` is the
paper's ``a ⪰ b``: an event of type ``a`` is an (indirect) instance of ``b``.

The clock is logical: one tick per primitive event; composite events raised while a primitive
event is processed share its tick (DESIGN section 2).
"""

from __future__ import annotations

import enum
import math
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from xmlevents._foundation.jsonlines import JSON_SPACE, SCAN, JsonLineError, is_blank, load_line
from xmlevents._foundation.time import is_time

from ._errors import (
    EventFormatError,
    InvalidArgumentError,
    NoSoleEventError,
    PathSyntaxError,
)
from ._paths import (
    _PARSED,
    SHARE_DEPTH,
    Axis,
    Kind,
    PathInstance,
    PathType,
    _shared,
    ends,
    subsumes,
)
from ._reused import BATCH, RecentIds

__all__ = [
    "Op",
    "NodeKind",
    "PrimitiveEventType",
    "CompositeEventType",
    "EventType",
    "compatible",
    "PrimitiveEvent",
    "CompositeEvent",
    "Event",
    "read_events",
    "EventReader",
]


class Op(enum.Enum):
    """The operation of a primitive event type. ``ANY`` (``*``), ``NEW`` and ``GONE`` only
    appear in types: ``new`` is an insertion and ``gone`` a removal that is not half of a
    move (:attr:`PrimitiveEvent.moved`; issue 14, not in the paper)."""

    __hash__ = object.__hash__  # singletons: identity hashing, in C (see Axis)

    INS = "ins"
    UPD = "upd"
    DEL = "del"
    ANY = "*"
    NEW = "new"
    GONE = "gone"

    def __str__(self) -> str:
        return self.value


class NodeKind(enum.Enum):
    """The kind of node a primitive event manipulated, read off its path's last step."""

    ELEMENT = "element"
    ATTRIBUTE = "attribute"
    TEXT = "text"
    COMMENT = "comment"
    PI = "processing-instruction"


_KIND_OF_AXIS = {Axis.CHILD: NodeKind.ELEMENT, Axis.ATTRIBUTE: NodeKind.ATTRIBUTE,
                 Axis.TEXT: NodeKind.TEXT, Axis.COMMENT: NodeKind.COMMENT, Axis.PI: NodeKind.PI}


@dataclass(frozen=True, slots=True)
class PrimitiveEventType:
    """``op(pt)``: where (``pt``) and how (``op``) primitive events of this type occur.

    >>> str(PrimitiveEventType(Op.INS, PathType.parse("item/price")))
    'ins(item/price)'
    """

    op: Op
    pt: PathType

    def __str__(self) -> str:
        return f"{self.op.value}({self.pt})"


@dataclass(frozen=True, slots=True)
class CompositeEventType:
    """``Name(pt)``, or ``%(pt)`` when ``name`` is None: any composite type with that path type."""

    name: str | None
    pt: PathType

    def __str__(self) -> str:
        return f"{self.name if self.name is not None else '%'}({self.pt})"


EventType = PrimitiveEventType | CompositeEventType


def compatible(et1: EventType, et2: EventType) -> bool:
    """``et1 ⪰ et2``: events of type ``et1`` are instances of ``et2`` (section 2.2, Example 8).

    The operation (or name) must match or ``et2`` must use the wildcard, and ``et2``'s path
    type must equal or end ``et1``'s, so that a leaf only stores events that occur directly at
    its path type, never in descendants. A step ``*`` of ``et2``'s path type takes any element
    there (issue 15): "equal" is then :func:`subsumes` and "end" :func:`ends` with ``*``.

    >>> e = PrimitiveEventType(Op.INS, PathType.parse("/order/item/price"))
    >>> compatible(e, PrimitiveEventType(Op.ANY, PathType.parse("price")))
    True
    >>> compatible(e, PrimitiveEventType(Op.INS, PathType.parse("item")))
    False
    >>> compatible(e, PrimitiveEventType(Op.INS, PathType.parse("/order/*/price")))
    True
    """
    if isinstance(et1, PrimitiveEventType):
        if not isinstance(et2, PrimitiveEventType):
            return False
        # ins ⪰ new and del ⪰ gone as types: whether an event is half of a move is the
        # event's, not its type's (see matches)
        if et1.op is not et2.op and et2.op is not Op.ANY and MOVE_FREE.get(et2.op) is not et1.op:
            return False
    else:
        if not isinstance(et2, CompositeEventType):
            return False
        if et1.name != et2.name and et2.name is not None:
            return False
    pt2 = et2.pt
    return pt2 == et1.pt or ends(pt2, et1.pt) or (pt2.has_wildcard and subsumes(pt2, et1.pt))


#: The operation a move-free operation narrows (``new`` an ``ins``, ``gone`` a ``del``).
MOVE_FREE = {Op.NEW: Op.INS, Op.GONE: Op.DEL}


def matches(event: PrimitiveEvent, et: PrimitiveEventType) -> bool:
    """Whether primitive ``event`` is an instance of ``et``: compatible, and for ``new`` and
    ``gone`` not half of a move (issue 14).

    >>> pi = PathInstance.of("/order/item", "oi")
    >>> moved = PrimitiveEvent("e1", 1, Op.INS, pi, moved=True)
    >>> [matches(moved, PrimitiveEventType(op, PathType.parse("item"))) for op in (Op.INS, Op.NEW)]
    [True, False]
    """
    return compatible(event.type, et) and not (event.moved and et.op in MOVE_FREE)


# --- events ----------------------------------------------------------------------------------

_EVENT_KEYS = ("id", "ts", "op", "path", "ids", "doc", "kind", "value", "old", "index",
               "time", "moved")
_EVENT_KEY_SET = frozenset(_EVENT_KEYS)
_FAST_KEYS = frozenset(("id", "ts", "op", "path", "ids", "doc", "value", "old", "time"))
_CONCRETE_OPS = {"ins": Op.INS, "upd": Op.UPD, "del": Op.DEL}
_EVENT_OPS = frozenset(_CONCRETE_OPS.values())


@dataclass(frozen=True, slots=True)
class PrimitiveEvent:
    """A primitive event ``<id, ts, et, pi>`` plus what a user and a replayer need (DESIGN 5).

    Args:
        id: the event's identifier.
        ts: its tick on the logical clock.
        op: ``Op.INS``, ``Op.UPD`` or ``Op.DEL`` (never the wildcard).
        pi: the absolute path instance of the manipulated node; the event's type is
            ``op(pi.pt)``.
        doc: the document it happened in (events of different documents never combine).
        value: the node's new value (attribute value or text), where it has one.
        old: the node's old value, for updates and deletions.
        index: for insertions, the position among the parent's children.
        time: when it happened, in seconds (a Unix time, a commit time): what windows given
            as a duration (``within=30s``) measure; None where the stream has only ticks.
        moved: whether it is half of a move: the removal or insertion of a node that keeps
            its id (moved within its document, or renamed, which removes and inserts it
            again). ``ins`` and ``del`` match such events as the paper says; ``new`` and
            ``gone`` leave them out (issue 14).

    >>> e = PrimitiveEvent("ep1", 3, Op.INS, PathInstance.of("/order/item/price", "oip"))
    >>> str(e.type), e.kind.value, e.interval
    ('ins(/order/item/price)', 'element', (3, 3))
    """

    id: str
    ts: int
    op: Op
    pi: PathInstance
    doc: str | None = None
    value: str | None = None
    old: str | None = None
    index: int | None = None
    time: float | None = None
    moved: bool = False

    def __post_init__(self) -> None:
        if self.op not in _EVENT_OPS:
            raise InvalidArgumentError(
                f"PrimitiveEvent {self.id!r}: op='{self.op}' is only for event types; "
                "an event is an ins, upd or del")
        if self.moved and self.op is Op.UPD:
            raise InvalidArgumentError(
                f"PrimitiveEvent {self.id!r}: an update is never half of a move")
        if not self.pi.pt.is_absolute:
            raise InvalidArgumentError(
                f"PrimitiveEvent {self.id!r}: path {self.pi.pt} is relative; "
                "events occur at absolute path instances")

    @property
    def type(self) -> PrimitiveEventType:
        return PrimitiveEventType(self.op, self.pi.pt)

    @property
    def kind(self) -> NodeKind:
        return _KIND_OF_AXIS[self.pi.pt.last.axis]

    @property
    def interval(self) -> tuple[int, int]:
        """A primitive event detected at ``ts`` occurs in ``[ts, ts]`` (section 3.1)."""
        return (self.ts, self.ts)

    @property
    def start(self) -> int:
        return self.ts

    @property
    def end(self) -> int:
        return self.ts

    def primitives(self) -> tuple[PrimitiveEvent, ...]:
        return (self,)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-lines form of DESIGN section 6 (:data:`EVENT_LINE`): optional fields only
        where set."""
        return (_event_row or _load_event_row())(self)

    @classmethod
    def from_dict(cls, d: Any, *, line: int | None = None, default_id: str | None = None,
                  default_ts: int | None = None) -> PrimitiveEvent:
        """Build an event from its JSON form, checking every field.

        ``default_id`` and ``default_ts`` fill a missing ``id`` and ``ts`` (the reader passes
        the line number).

        Raises:
            EventFormatError: naming the field, its value and ``line``.

        >>> PrimitiveEvent.from_dict({"op": "ins", "path": "/order", "ids": ["o1"]},
        ...                          default_id="1", default_ts=1).to_dict()
        {'id': '1', 'ts': 1, 'op': 'ins', 'path': '/order', 'ids': ['o1']}
        """
        if cls is PrimitiveEvent:  # the one validator (EventReader._read), over one object
            return next(EventReader((d,), "", None, decoded=True, line=line,
                                    default_id=default_id, default_ts=default_ts))
        return cls._checked_from_dict(d, line, default_id, default_ts)

    @classmethod
    def _checked_from_dict(cls, d: Any, line: int | None, default_id: str | None,
                           default_ts: int | None, source: str = "") -> PrimitiveEvent:
        """The second stage of the one validator (:meth:`EventReader._read`): every field
        checked in turn, and the first that
        is wrong worded (naming ``line`` and ``source``); also builds what the first stage
        leaves to it (an integer id, an index, a kind, a move, a path not parsed before)."""
        def fail(reason: str) -> EventFormatError:
            return EventFormatError(reason, line=line, source=source)

        if not isinstance(d, dict):
            raise fail(f"expected a JSON object, got {type(d).__name__}")
        unknown = sorted(d.keys() - _EVENT_KEY_SET)
        if unknown:
            raise fail(f"unknown field(s) {', '.join(map(repr, unknown))}; "
                       f"an event has {', '.join(_EVENT_KEYS)}")
        for key in ("op", "path", "ids"):
            if key not in d:
                raise fail(f"missing required field {key!r} (op, path and ids are required)")
        op = _CONCRETE_OPS.get(d["op"]) if isinstance(d["op"], str) else None
        if op is None:
            raise fail(f"op={d['op']!r} is not an operation; use 'ins', 'upd' or 'del'")
        if not isinstance(d["path"], str):
            raise fail(f"path={d['path']!r} must be a string such as '/order/item'")
        try:
            pt = PathType.parse(d["path"])
        except PathSyntaxError as exc:
            raise fail(f"path={d['path']!r}: col {exc.column}: {exc.reason}") from None
        if not pt.is_absolute:
            raise fail(f"path={d['path']!r} is relative; events occur at absolute paths "
                       f"(write '/{d['path']}' if that is meant)")
        if pt.has_wildcard:
            raise fail(f"path={d['path']!r} has the wildcard step *; an event is about one "
                       "node: write its element's name")
        ids = d["ids"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise fail(f"ids={ids!r} must be a list of strings, one node identifier per step")
        if len(ids) != len(pt.steps):
            raise fail(f"ids={ids!r} has {len(ids)} identifier(s) but path {pt} has "
                       f"{len(pt.steps)} step(s)")
        ident = d.get("id", default_id)
        if isinstance(ident, bool) or not isinstance(ident, (str, int)):
            raise fail(f"id={ident!r} must be a string or an integer")
        ts = d.get("ts", default_ts)
        if isinstance(ts, bool) or not isinstance(ts, int):
            raise fail(f"ts={ts!r} must be an integer tick")
        for key in ("doc", "value", "old"):
            if d.get(key) is not None and not isinstance(d[key], str):
                raise fail(f"{key}={d[key]!r} must be a string or null")
        index = d.get("index")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)
                                  or index < 0):
            raise fail(f"index={index!r} must be a non-negative integer or null")
        kind = d.get("kind")
        actual = _KIND_OF_AXIS[pt.last.axis].value
        if kind is not None and kind != actual:
            raise fail(f"kind={kind!r} contradicts path {pt}, whose last step is an {actual}")
        time = d.get("time")
        if time is not None and not is_time(time):
            raise fail(f"time={time!r} must be a number of seconds or null")
        moved = d.get("moved", False)
        if type(moved) is not bool:
            raise fail(f"moved={moved!r} must be true or false")
        if moved and op is Op.UPD:
            raise fail("moved=true is for an insertion or a removal, not an update")
        return cls(str(ident), ts, op, PathInstance(pt, tuple(ids)), d.get("doc"),
                   d.get("value"), d.get("old"), index, time, moved)


# The reader's fast path. A detect run spends most of its time reading events, so a
# well-formed line is checked in one pass and its event assembled through the slot setters;
# anything unusual returns None and takes ``_checked_from_dict``, which alone words errors.
_new = object.__new__
_MISSING: Any = object()
_set_pi = tuple(PathInstance.__dict__[f].__set__ for f in ("pt", "ids"))
_set_event = tuple(PrimitiveEvent.__dict__[f].__set__
                   for f in ("id", "ts", "op", "pi", "doc", "value", "old", "index", "time",
                             "moved"))


_set_pi_pt, _set_pi_ids = _set_pi
(_set_e_id, _set_e_ts, _set_e_op, _set_e_pi, _set_e_doc, _set_e_value, _set_e_old, _set_e_index,
 _set_e_time, _set_e_moved) = _set_event


def trusted_path_instance(pt: PathType, ids: tuple[str, ...]) -> PathInstance:
    """A path instance whose ids the caller has counted against ``pt``, built unchecked.

    For producers that guarantee the invariants themselves (the watched documents, the event
    reader's fast path): ``PathInstance(pt, ids)`` checks them, at a cost per event.
    """
    pi = _new(PathInstance)
    _set_pi[0](pi, pt)
    # Deep ids become a chain, so that a child's (``ids + (id,)``) shares them (issue 16).
    _set_pi[1](pi, ids if len(ids) <= SHARE_DEPTH else _shared(ids))
    return pi


def trusted_primitive(ident: str, ts: int, op: Op, pi: PathInstance, doc: str | None,
                      value: str | None, old: str | None, index: int | None,
                      time: float | None = None, moved: bool = False) -> PrimitiveEvent:
    """A primitive event whose producer guarantees the invariants (a concrete op, an absolute
    ``pi``): the event reader's fast path, and the watched documents for every node they
    change."""
    e = _new(PrimitiveEvent)
    (set_id, set_ts, set_op, set_pi, set_doc, set_value, set_old, set_index,
     set_time, set_moved) = _set_event
    set_id(e, ident)
    set_ts(e, ts)
    set_op(e, op)
    set_pi(e, pi)
    set_doc(e, doc)
    set_value(e, value)
    set_old(e, old)
    set_index(e, index)
    set_time(e, time)
    set_moved(e, moved)
    return e


def start_time(e: Event) -> float | None:
    """When ``e`` began: a primitive event's time, the earliest of a composite's primitives
    (None if one has no time; a composite without constituents does not count)."""
    if type(e) is PrimitiveEvent:
        return e.time
    times = [start_time(c) for c in e.constituents]  # type: ignore[union-attr]  # a composite
    if any(t is None for t in times):
        return None
    return min(times) if times else math.inf  # type: ignore[type-var]  # no None left


# An enum member read from its class costs an attribute lookup through the enum's metaclass
# (50 ns): read once here for the test a line below.
_ABSOLUTE = Kind.ABSOLUTE


#: The reader's defaults (:class:`EventReader`): the line number as the tick, and as text as
#: the id (made only if needed).
_TICK: Any = object()


# ``EVENT_LINE.row``, loaded when an event is first written: the rows module (the columns of
# every table) is not needed to read events and detect (``xmlevents detect``'s start-up).
_event_row: Callable[[PrimitiveEvent], dict[str, Any]] | None = None


def _load_event_row() -> Callable[[PrimitiveEvent], dict[str, Any]]:
    global _event_row
    from xmlevents._foundation.rows import EVENT_LINE

    _event_row = EVENT_LINE.row
    return _event_row


_tick_and_id = attrgetter("ts", "id")
_tick = attrgetter("ts")


@dataclass(frozen=True, slots=True)
class CompositeEvent:
    """A composite event ``<id, et, pi, cevts>`` with its interval and the tick it was raised.

    ``type`` has the definition's name and an absolute path type equal to ``pi.pt``
    (section 2.2); ``interval`` spans the constituents' intervals (section 3.1).
    """

    id: str
    type: CompositeEventType
    pi: PathInstance
    constituents: tuple[Event, ...]
    interval: tuple[int, int]
    ts: int
    doc: str | None = None

    def __post_init__(self) -> None:
        # Section 2.2: a composite event has a concrete name and an absolute path type, and
        # occurs at a path instance of exactly that type.
        if self.type.name is None:
            raise InvalidArgumentError(
                f"CompositeEvent {self.id!r}: type {self.type} has the wildcard "
                "name; an event's type names its definition")
        if not self.type.pt.is_absolute:
            raise InvalidArgumentError(
                f"CompositeEvent {self.id!r}: type {self.type} has a relative "
                "path type; events occur at absolute ones")
        if self.pi.pt != self.type.pt:
            raise InvalidArgumentError(
                f"CompositeEvent {self.id!r}: path instance {self.pi} does not "
                f"have the path type of {self.type}")

    @property
    def start(self) -> int:
        return self.interval[0]

    @property
    def end(self) -> int:
        return self.interval[1]

    # A definition of one event (``Repriced := upd(item/price/text())``) raises a composite
    # of that one primitive: the callback written for it asks the event what changed
    # (issue 30, item 3). These are the sole primitive's; a composite of several has no one
    # value, and says so.
    @property
    def op(self) -> Op:
        """The operation of the one primitive event under this one (see :meth:`sole`)."""
        return self.sole("op").op

    @property
    def value(self) -> str | None:
        """The new value of the one primitive event under this one (see :meth:`sole`)."""
        return self.sole("value").value

    @property
    def old(self) -> str | None:
        """The old value of the one primitive event under this one (see :meth:`sole`)."""
        return self.sole("old").old

    def sole(self, what: str = "the primitive") -> PrimitiveEvent:
        """The one primitive event under this one: what a single-event definition raised.

        Raises:
            NoSoleEventError: (an AttributeError) for a composite of several primitive
                events (naming ``what`` was asked, and where its events' values are).
        """
        found = self.primitives()
        if len(found) != 1:
            raise NoSoleEventError(
                f"{self.type.name} is a composite of {len(found)} primitive events, so it "
                f"has no one {what}: each of event.primitives() has its own")
        return found[0]

    def primitives(self) -> tuple[PrimitiveEvent, ...]:
        """Every primitive event under this one, flattened through nested composites, by tick.

        An event reached twice (one event can be an instance of two leaves' types) is listed
        once; events are told apart by value, so copies (e.g. after pickling) count as one.
        """
        found: list[PrimitiveEvent] = []
        stack: list[CompositeEvent] = [self]
        while stack:
            for e in stack.pop().constituents:
                if isinstance(e, PrimitiveEvent):
                    found.append(e)
                else:
                    stack.append(e)
        if len(found) < 2:
            return tuple(found)
        # Two events told apart by value have one tick: when the ticks all differ (as in any
        # composite a graph raises, one event a tick), there is nothing to remove and the
        # order by tick is the order by (tick, id); both found in C (``xmlevents detect``
        # asks this for every line it writes: the general way below cost it 3%).
        try:
            distinct = len(set(map(_tick, found))) == len(found)
        except TypeError:  # an unhashable tick (an event built by hand): as below
            distinct = False
        if distinct:
            found.sort(key=_tick)
            return tuple(found)
        found.sort(key=_tick_and_id)
        out = [e for i, e in enumerate(found)
               if i == 0 or _tick_and_id(found[i - 1]) != _tick_and_id(e)]
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        """The output line of ``xmlevents detect`` (DESIGN section 6): ``COMPOSITE_LINE.row``."""
        # Written out, not ``COMPOSITE_LINE.row(self)``: ``xmlevents detect`` calls this for
        # every composite it prints, and the generic loop costs it ~4% (bench_engine.py's
        # detect ratio). tests/replay/test_rows.py checks the two agree.
        d: dict[str, Any] = {"ts": self.ts, "type": self.type.name, "path": str(self.pi.pt),
                             "ids": list(self.pi.ids), "interval": list(self.interval),
                             "events": [p.id for p in self.primitives()]}
        if self.doc is not None:
            d["doc"] = self.doc
        return d


Event = PrimitiveEvent | CompositeEvent


_set_composite = tuple(CompositeEvent.__dict__[f].__set__ for f in (
    "id", "type", "pi", "constituents", "interval", "ts", "doc"))
(_set_c_id, _set_c_type, _set_c_pi, _set_c_constituents, _set_c_interval, _set_c_ts,
 _set_c_doc) = _set_composite


def _composite(ident: str, et: CompositeEventType, pi: PathInstance,
               constituents: tuple[Event, ...], interval: tuple[int, int], ts: int,
               doc: str | None) -> CompositeEvent:
    """A composite event from an operator node, which guarantees section 2.2's invariants
    (a named type, an absolute path type, ``pi`` of that type): the engine's fast path.

    The slot setters are called one by one, not in a loop: half the cost (0.44 against
    0.86 µs), and every composite the engine raises is made here.
    """
    c = _new(CompositeEvent)
    _set_c_id(c, ident)
    _set_c_type(c, et)
    _set_c_pi(c, pi)
    _set_c_constituents(c, constituents)
    _set_c_interval(c, interval)
    _set_c_ts(c, ts)
    _set_c_doc(c, doc)
    return c


def read_events(lines: Iterable[str | bytes], *, source: str = "",
                keep: Keep | None = None, check_ids: bool = False,
                id_horizon: int | None = None) -> EventReader:
    """Parse JSON lines into primitive events, one object a line (DESIGN section 6).

    Lines may be text or UTF-8 bytes (a file opened in binary mode: a byte that is not UTF-8
    is then reported at its line, where a text-mode file reports it a buffer later), or some
    of each.

    ``id`` defaults to the line number and ``ts`` to the 1-based line number; blank lines hold
    no event and are passed over (they still count for line numbers). Ticks must increase.
    With ``keep``, events whose ``(op, path type)`` it refuses are checked like every other
    but neither built nor yielded (an event graph's :meth:`takes` says which it needs); the
    reader's ``last_ts`` still counts them. With ``check_ids``, the reader keeps the ids of
    the events of a horizon (kept or not), and :meth:`EventReader.reused_ids` says which
    events reuse the id of an earlier one inside it: composites name their constituents by
    id, so a reused one is ambiguous. The horizon is ``id_horizon`` ticks (a graph whose
    every operator has a tick window: two events further apart share no composite), else
    the last :data:`~._reused.RECENT_IDS` events; memory follows it, not the stream (issue
    29, :mod:`._reused`).

    Raises:
        EventFormatError: naming ``source`` and the line of the first malformed event.

    >>> [e.id for e in read_events(['{"op": "ins", "path": "/a", "ids": ["a1"]}', '',
    ...                             '{"id": "x", "op": "del", "path": "/a", "ids": ["a1"]}'])]
    ['1', 'x']
    """
    return EventReader(lines, source, keep, check_ids, id_horizon=id_horizon)


Keep = Callable[[Op, PathType], bool]


class EventReader(Iterator[PrimitiveEvent]):
    """The iterator :func:`read_events` returns; ``last_ts`` is the tick of the last event read
    (kept or not), None before the first; ``line`` the line of the last event it yielded (to
    name the line of an event its consumer refuses), None before the first."""

    def __init__(self, lines: Iterable[Any], source: str,
                 keep: Keep | None, check_ids: bool = False, *, decoded: bool = False,
                 line: int | None = None, default_id: str | None = _TICK,
                 default_ts: int | None = _TICK, id_horizon: int | None = None) -> None:
        self.source = source
        self.last_ts: int | None = None
        self.line: int | None = None
        # With check_ids, each event's id as text, as its line gave it (its line number where
        # it gave none), and its tick, appended to the batch of a RecentIds, compared a batch
        # at a time in C (a dict test a line would cost detect 4%, bench_engine.py); kept as
        # text so that the batch's dict is made without a str() each. The blank lines hold
        # none (the lines of the ids held are counted past them; those before the oldest id
        # held are dropped, _pruned counts them).
        self._ids: RecentIds | None = RecentIds(id_horizon) if check_ids else None
        self._blank: list[int] = []
        self._pruned = 0
        self._events = self._read(lines, keep, decoded, line, default_id, default_ts)

    def __iter__(self) -> Iterator[PrimitiveEvent]:
        return self._events  # the generator itself: no extra call an event

    def __next__(self) -> PrimitiveEvent:
        return next(self._events)

    def reused_ids(self) -> tuple[int, tuple[str, int, int] | None]:
        """How many events read so far have the id of an earlier event inside the id
        horizon (see :func:`read_events`), and ``(id, line, first_line)`` for the first of
        them (None if none); ``(0, None)`` without ``check_ids``. An event without an id has
        its line number as its id.
        """
        ids = self._ids
        if ids is None:
            return 0, None
        ids.step(self.last_ts)
        if ids.first is None:
            return 0, None
        ident, index, first = ids.first
        return ids.reused, (ident, self._line_of(index), self._line_of(first))

    def _step_ids(self, ids: RecentIds, now: int) -> None:
        """A batch of ids compared and added; the blank lines before the oldest id held
        dropped (counted)."""
        ids.step(now)
        blank = self._blank
        if blank:
            oldest = self._line_of(ids.oldest)
            kept = [b for b in blank if b > oldest]
            self._pruned += len(blank) - len(kept)
            blank[:] = kept

    def _line_of(self, index: int) -> int:
        """The line of the ``index``-th event (from 0): blank lines hold none."""
        line = index + 1 + self._pruned
        for blank in self._blank:  # in order; few, if any
            if blank > line:
                break
            line += 1
        return line

    def _read(self, lines: Iterable[Any], keep: Keep | None, decoded: bool,
              at: int | None, default_id: str | None, default_ts: int | None
              ) -> Iterator[PrimitiveEvent]:
        """The one event-line validator (issue 28: it was written three times): the events of
        the lines (or, ``decoded``, of objects: :meth:`PrimitiveEvent.from_dict`, with its
        ``at`` line and defaults; the reader's are the line number, :data:`_TICK`).

        Two stages in one loop, no call between them (a call a line cost detect 3%): a
        common, well-formed object is accepted in one pass and its event assembled through
        the slot setters; anything else (an unusual field, a wrong one) goes to
        :meth:`PrimitiveEvent._checked_from_dict`, which checks field by field and alone
        words the errors. The first stage only accepts what the second would:
        tests/algebra/test_events.py compares them. A well-formed event that ``keep``
        refuses is not built, but its tick counts and its id is kept (``check_ids``).
        """
        source = self.source
        ids = self._ids
        add_id = None if ids is None else ids.ids.append
        add_ts = (None if ids is None else ids.ts.append)
        # The line at which the batch of ids is next compared (never without check_ids).
        step_at = BATCH if ids is not None else sys.maxsize
        last_ts: int | None = None
        scan = SCAN
        line: str
        for number, raw in enumerate(lines, start=1):
            if decoded:
                obj = raw
            else:
                line = _decode(raw, number, source) if type(raw) is bytes else raw
                # The C scanner alone, not json.loads: it halves the cost of decoding a
                # line. Anything it does not take whole (blank lines, leading space, bad
                # JSON, a constant, an integer too long) goes to the bounded decoder, which
                # words the error; so does a line with a surrogate escape, which it refuses
                # if unpaired (issue 16).
                try:
                    obj, end = scan(line, 0)
                    n = len(line)
                    whole = (end == n or (end == n - 1 and line[end] == "\n")
                             or not line[end:].strip(JSON_SPACE)) and ("\\u" not in line or (
                                 "\\ud" not in line and "\\uD" not in line))
                except (StopIteration, ValueError, RecursionError):
                    whole = False
                if not whole:
                    if is_blank(line):
                        self._blank.append(number)
                        continue
                    obj = _loads(line, number, source)
            # The first stage.
            event: Any = None
            d = obj
            if type(d) is dict and d.keys() <= _FAST_KEYS:
                try:
                    op = _CONCRETE_OPS[d["op"]]
                    pt = _PARSED[d["path"]]
                    pids = d["ids"]
                    "".join(pids)  # the cheapest test that ids hold only strings
                except (KeyError, TypeError):  # missing, unknown, unhashable, not strings
                    pass
                else:
                    get = d.get
                    optional = len(d) - 3  # fields besides op, path and ids
                    ident = get("id", _MISSING)
                    if ident is _MISSING:
                        ident = str(number) if default_id is _TICK else default_id
                    else:
                        optional -= 1
                    ts = get("ts", _MISSING)
                    if ts is _MISSING:
                        ts = number if default_ts is _TICK else default_ts
                    else:
                        optional -= 1
                    if (type(pids) is not list or pt.kind is not _ABSOLUTE
                            or len(pids) != len(pt.steps) or type(ts) is not int
                            or type(ident) is not str):
                        pass
                    elif optional and (
                            ((value := get("value")) is not None and type(value) is not str)
                            or ((old := get("old")) is not None and type(old) is not str)
                            or ((doc := get("doc")) is not None and type(doc) is not str)
                            or ((time := get("time")) is not None and not is_time(time))):
                        pass  # doc, value, old or time of the wrong type
                    elif keep is not None and not keep(op, pt):
                        event = ts
                        if add_id is not None:
                            add_id(ident)
                            add_ts(ts)  # type: ignore[misc]  # set with add_id
                    else:
                        if add_id is not None:
                            add_id(ident)
                            add_ts(ts)  # type: ignore[misc]  # set with add_id
                        if not optional:
                            doc = value = old = time = None
                        # trusted_path_instance and trusted_primitive, inline: two calls a
                        # line less (2% of ``xmlevents detect``'s time).
                        pi = _new(PathInstance)
                        _set_pi_pt(pi, pt)
                        tids = tuple(pids)
                        _set_pi_ids(pi, tids if len(tids) <= SHARE_DEPTH else _shared(tids))
                        event = _new(PrimitiveEvent)
                        _set_e_id(event, ident)
                        _set_e_ts(event, ts)
                        _set_e_op(event, op)
                        _set_e_pi(event, pi)
                        _set_e_doc(event, doc)
                        _set_e_value(event, value)
                        _set_e_old(event, old)
                        _set_e_index(event, None)
                        _set_e_time(event, time)
                        _set_e_moved(event, False)
            if event is None:  # the second stage
                event = PrimitiveEvent._checked_from_dict(
                    obj, number if at is None and not decoded else at,
                    str(number) if default_id is _TICK else default_id,
                    number if default_ts is _TICK else default_ts, source)
                if add_id is not None:
                    add_id(event.id)
                    add_ts(event.ts)  # type: ignore[misc]  # set with add_id
                if keep is not None and not keep(event.op, event.pi.pt):
                    event = event.ts
                ts = event if type(event) is int else event.ts
            # (else the first stage set ``ts``: the event's, or the tick of one not kept)
            if last_ts is not None and ts <= last_ts:
                raise EventFormatError(f"ts={ts} does not come after the previous event's "
                                       f"ts={last_ts}; ticks must increase", line=number,
                                       source=source)
            self.last_ts = last_ts = ts
            if number >= step_at:  # with check_ids only: a batch of ids compared
                step_at = number + BATCH
                self._step_ids(ids, ts)  # type: ignore[arg-type]  # set with step_at
            if type(event) is not int:
                self.line = number
                yield event


def _decode(raw: bytes, number: int, source: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EventFormatError(f"not UTF-8 text: {exc.reason} at byte {exc.start + 1} of the "
                               "line", line=number, source=source) from None


def _loads(raw: str, number: int, source: str) -> Any:
    """A line the fast path did not take whole, through the one bounded decoder (issue 16):
    its error, if any, at this line."""
    try:
        return load_line(raw)
    except JsonLineError as exc:
        at = f" at col {exc.column}" if exc.column is not None else ""
        raise EventFormatError(f"{exc.reason}{at}", line=number, source=source) from None
