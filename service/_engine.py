"""The SNOOP-R detector (seed 001, section 3): an event graph of shared nodes, expressions
registered and unregistered while it runs, atomic events signalled with parameters.

The graph is the paper's (sections 3.1-3.4):

* **Leaves** are one per atomic event type (:class:`Leaf`). Each holds the *event
  definitions* of every expression using that type — its parameters' literals, the variables
  they bind, the use it activates — indexed by one literal each, so that a signal is matched
  only against the definitions that can take it (a ``newCD(artist="U2")`` signal never looks
  at the 10,000 definitions asking for other artists).
* **Operator nodes** (:class:`OperatorNode`) are hash-consed: an equal subexpression (the same
  operators over the same atomic expressions, with the same input values) is built once, and
  the node keeps its stored instances *per use*, a use being one occurrence of the node in one
  expression's tree (:class:`Use`). So a shared node activates only its own expression's
  parent (section 3.3, Figure 2), and sharing never changes a result.
* **Opaque leaves** are one per opaque expression, never shared (section 3.2).

Detection is bottom-up (section 3.3). A signal gets the next tick; at the leaf of its type each
matching definition validates the bindings (the *binding validity* rule: every output
variable bound, nothing bound that is neither an output nor an input, inputs equal to their
values) and passes an :class:`Instance` to its use's parent. Operators pick and keep instances
in Snoop's *recent* context with the algebra's context functions
(:func:`xmlevents.algebra.select_seq`, :func:`~xmlevents.algebra.select_any`): a stored
instance is replaced by the next one of its child and never consumed. Time is the order of
detection: ``E1`` precedes ``E2`` if it occurred at an earlier tick (the occurrence of a
composite is its last constituent's, section 2.2).

**Joins.** Instances meeting at ``SEQ`` or ``ANY`` must agree on the variables they share
(section 3.3, "computing variable bindings"). Two behaviours, chosen per engine:

* ``join="correlate"`` (default): the *grouping key* of a use is the values of the variables
  every child always binds, so an instance meets only instances with the same values — the
  same part the algebra's hierarchical context plays with projections (seed 000, section 3.1).
  Variables some children share but not all are checked when instances meet.
* ``join="paper"``: one group per use, as the paper: when the most recent instances disagree,
  "the event detector discards the last instance received at the node".

The two differ only when an older instance would have matched: ``SEQ(newCD(title=T),
newDVD(title=T))`` after ``newCD("Boy")``, ``newCD("War")``, ``newDVD("Boy")`` detects with the
``correlate`` join and not with the paper's.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal as TypingLiteral

from xmlevents.algebra import (
    CompositeEvent,
    Context,
    Event,
    Group,
    GroupingKey,
    PrimitiveEvent,
    PrimitiveEventType,
    XmlEventsError,
    matches,
    parse_event_type,
    select_any,
    select_disj,
    select_seq,
)

from ._errors import RegistrationError, SignalError, UnknownExpressionError
from ._text import parse_expression
from .ast import (
    Any,
    Atomic,
    Expression,
    Literal,
    Opaque,
    Or,
    Registration,
    Seq,
    Value,
    check_value,
)

__all__ = [
    "Engine",
    "Signal",
    "Detection",
    "Instance",
    "OpaqueRequest",
    "Provider",
    "Leaf",
    "OperatorNode",
    "Use",
    "Join",
    "check_signal",
]

Join = TypingLiteral["correlate", "paper"]


@dataclass(frozen=True, slots=True)
class Signal:
    """An atomic event as the engine received it: its id, type, parameters, the tick the
    engine gave it (the order of arrival) and the time its provider gave, if any."""

    id: str
    type: str
    params: Mapping[str, Value]
    ts: int
    time: float | None = None

    def to_json(self) -> dict[str, object]:
        d: dict[str, object] = {"id": self.id, "type": self.type, "params": dict(self.params),
                                "tick": self.ts}
        if self.time is not None:
            d["time"] = self.time
        return d


# The engine's own constructors of its two frozen value types for the signal path: each
# slot set through its descriptor, without the generated __init__'s lookup of
# object.__setattr__ per field (40% of a Signal's construction, 6% of the writer's time in
# batches; issue 31, item 10). The same objects: equal, hashed and shown alike.
_new = object.__new__
_signal_slots = tuple(Signal.__dict__[name].__set__ for name in ("id", "type", "params", "ts",
                                                                  "time"))


def _signal(ident: str, etype: str, params: Mapping[str, Value], ts: int,
            time: float | None) -> Signal:
    """``Signal(ident, etype, params, ts, time)``, built faster (see above)."""
    s = _new(Signal)
    set_id, set_type, set_params, set_ts, set_time = _signal_slots
    set_id(s, ident)
    set_type(s, etype)
    set_params(s, params)
    set_ts(s, ts)
    set_time(s, time)
    return s


class Instance:
    """An occurrence of a node's event for one use: its variable bindings, its atomic events
    (by tick) and its interval of ticks (what the contexts compare)."""

    __slots__ = ("bindings", "end", "events", "start", "ts")

    def __init__(self, ts: int, start: int, end: int, bindings: dict[str, Value],
                 events: tuple[Signal, ...]) -> None:
        self.ts = ts
        self.start = start
        self.end = end
        self.bindings = bindings
        self.events = events


@dataclass(frozen=True, slots=True)
class Detection:
    """A notification (section 3.3): the expression, its output bindings, the atomic events
    that contributed (by tick), and the next evaluation id — the expression's id while it can
    occur again, None once it never can (then ``events`` is empty: the empty result)."""

    expression: str
    bindings: Mapping[str, Value]
    events: tuple[Signal, ...]
    next: str | None
    tick: int

    def to_json(self) -> dict[str, object]:
        return {"expression": self.expression, "bindings": dict(self.bindings),
                "events": [s.to_json() for s in self.events], "next": self.next,
                "tick": self.tick}


_detection_slots = tuple(Detection.__dict__[name].__set__
                        for name in ("expression", "bindings", "events", "next", "tick"))


def _detected(expression: str, bindings: Mapping[str, Value], events: tuple[Signal, ...],
              nxt: str | None, tick: int) -> Detection:
    """``Detection(expression, bindings, events, nxt, tick)``, built as :func:`_signal`."""
    d = _new(Detection)
    set_expression, set_bindings, set_events, set_next, set_tick = _detection_slots
    set_expression(d, expression)
    set_bindings(d, bindings)
    set_events(d, events)
    set_next(d, nxt)
    set_tick(d, tick)
    return d


@dataclass(frozen=True, slots=True)
class OpaqueRequest:
    """What a provider is asked to evaluate (section 3.3, evaluating atomic expressions): the
    opaque expression's language and text, the input variables' values, its outputs."""

    language: str
    text: str
    inputs: Mapping[str, Value]
    binds: tuple[str, ...]
    expression: str


#: A provider evaluates opaque expressions of one language: it returns an evaluation id under
#: which it later reports results (:meth:`Engine.report`), or raises (an evaluation error).
Provider = Callable[[OpaqueRequest], str]


def _before(a: Instance, b: Instance) -> bool:
    """``a`` occurred before ``b`` (section 2.2: the occurrence time of a composite is its
    last constituent's)."""
    return a.end < b.end


@dataclass(slots=True)
class _Definition:
    """An event definition stored at a leaf (Figure 1's ellipses): one atomic expression of
    one use, compiled against the registration's input values."""

    use: Use
    atomic: Atomic
    #: parameter -> value it must have (literals, and variables given as inputs)
    required: tuple[tuple[str, Value], ...]
    #: parameter -> output variable it binds
    binds: tuple[tuple[str, str], ...]

    def bindings(self, params: Mapping[str, Value]) -> dict[str, Value] | None:
        """The bindings this definition makes of ``params``; None if it does not take them
        (a literal or input differs, an output variable cannot be bound: binding validity)."""
        for name, value in self.required:
            got = params.get(name, _ABSENT)
            if got is _ABSENT or not _same(got, value):
                return None
        out: dict[str, Value] = {}
        for name, var in self.binds:
            got = params.get(name, _ABSENT)
            if got is _ABSENT:
                return None  # binding validity: an output variable left unbound
            prior = out.get(var, _ABSENT)
            if prior is not _ABSENT and not _same(prior, got):
                return None  # newCD(title=T, artist=T): both must be equal
            out[var] = got  # type: ignore[assignment]
        return out


_ABSENT: object = object()


def _same(a: object, b: object) -> bool:
    """Equal values of the same JSON kind: ``1`` is not ``"1"`` nor ``true``."""
    return a == b and (type(a) is type(b) or (isinstance(a, int | float)
                                              and isinstance(b, int | float)
                                              and not isinstance(a, bool)
                                              and not isinstance(b, bool)))


class Leaf:
    """The leaf of one atomic event type, with the event definitions stored at it (section
    3.2), indexed by one required parameter value each."""

    __slots__ = ("_all", "_index", "_loose", "doc_type", "type")

    def __init__(self, etype: str) -> None:
        self.type = etype
        #: For a primitive document event type (``ins(/order/item)``): the parsed type.
        self.doc_type: PrimitiveEventType | None = None
        self._all: dict[int, _Definition] = {}
        #: parameter name -> its required value (:func:`_hashable`) -> the definitions
        #: indexed under them: a signal's parameters no definition is indexed by are not
        #: looked up (the title of ``newCD(title=T, artist="U2")``).
        self._index: dict[str, dict[Hashable, dict[int, _Definition]]] = {}
        self._loose: dict[int, _Definition] = {}

    @property
    def definitions(self) -> list[tuple[str, Atomic]]:
        """(expression id, atomic expression) of every definition stored, in registration
        order."""
        return [(d.use.expression, d.atomic) for _, d in sorted(self._all.items())]

    def __len__(self) -> int:
        return len(self._all)

    def definition(self, use: Use) -> _Definition:
        return self._all[use.id]

    def add(self, d: _Definition) -> None:
        self._all[d.use.id] = d
        if d.required:
            name, value = d.required[0]
            by = self._index.setdefault(name, {})
            by.setdefault(_hashable(value), {})[d.use.id] = d
        else:
            self._loose[d.use.id] = d

    def discard(self, use: Use) -> None:
        d = self._all.pop(use.id, None)
        if d is None:
            return
        if d.required:
            name, value = d.required[0]
            by = self._index[name]
            key = _hashable(value)
            bucket = by[key]
            del bucket[use.id]
            if not bucket:
                del by[key]
                if not by:
                    del self._index[name]
        else:
            del self._loose[use.id]

    def candidates(self, params: Mapping[str, Value]) -> list[_Definition]:
        """The definitions that may take an event with ``params``, in registration order."""
        found = list(self._loose.values()) if self._loose else []
        index = self._index
        for name, value in params.items():
            by = index.get(name)
            if by is None:
                continue
            try:
                bucket = by.get(_hashable(value))
            except TypeError:  # pragma: no cover - values are checked scalars
                bucket = None
            if bucket:
                found.extend(bucket.values())
        if len(found) > 1:
            found.sort(key=lambda d: d.use.id)
        return found


def _hashable(value: Value) -> Hashable:
    # 1 == 1.0 == True hash alike; the kind keeps them apart as _same does.
    return (type(value) is bool, type(value) is str, value)


class OperatorNode:
    """An operator node, shared by every equal subexpression (section 3.1): its operator and,
    per use, the instances it stores by grouping key (section 3.3, "separate storage for
    instances of different expressions")."""

    __slots__ = ("key", "kind", "needed", "serial", "storage", "uses", "width")

    def __init__(self, kind: str, key: Hashable, width: int, needed: int, serial: int) -> None:
        self.kind = kind
        self.key = key
        #: Names the node in its parents' keys (never reused).
        self.serial = serial
        self.width = width
        self.needed = needed
        #: The uses of this node (its parents, keyed by use as Figure 2 keys them by rule).
        self.uses: dict[int, Use] = {}
        #: use id -> grouping key -> the stored instances of that group, one buffer a child.
        self.storage: dict[int, dict[Hashable, Group[Instance]]] = {}

    def stored(self, use: Use) -> list[Instance]:
        """The instances this node stores for ``use``."""
        return [i for g in self.storage.get(use.id, {}).values() for i in g.events()]

    def activate(self, use: Use, child: int, inst: Instance, tick: int) -> list[Instance]:
        """An instance of child ``child`` arrives for ``use``: store it as the recent context
        does and return the composite instances it completes."""
        group = _EMPTY
        kind = self.kind
        if kind == "OR":
            picked = select_disj(Context.RECENT, group, child, inst, _before)
        else:
            key = use.grouping.key(inst)
            groups = self.storage.get(use.id)
            if groups is None:
                groups = self.storage[use.id] = {}
            found = groups.get(key)
            if found is None:
                found = groups[key] = Group(self.width)
            group = found
            if kind == "SEQ":
                picked = select_seq(Context.RECENT, group, child, inst, _before)
            else:
                picked = select_any(Context.RECENT, self.needed, group, child, inst, _before)
        if not picked:  # an initiator stored: the common case, nothing to build
            return []
        out: list[Instance] = []
        for picks in picked:
            if kind == "ANY" and len(picks) > 1 and _overlap(picks):
                continue  # ANY's events are distinct (section 2.2): one signal counts once
            merged = _merge(picks)
            if merged is None:
                # Variables disagree: discard the last instance received (section 3.3).
                buf = group.bufs[child] if group.bufs else []
                if buf and buf[-1] is inst:
                    buf.pop()
                continue
            if len(picks) == 2:
                first, last = picks
                a, b = first.events, last.events
                # Each instance's signals are in tick order, one each (a tick names one
                # signal): two whose ticks follow each other are their merge already.
                if a and b and a[-1].ts < b[0].ts:
                    out.append(Instance(tick, min(first.start, last.start),
                                        max(first.end, last.end), merged, a + b))
                    continue
            events = sorted({s.id: s for p in picks for s in p.events}.values(),
                            key=_tick)
            out.append(Instance(tick, min(p.start for p in picks),
                                max(p.end for p in picks), merged, tuple(events)))
        return out


_EMPTY: Group[Instance] = Group(0)


def _tick(s: Signal) -> int:
    return s.ts


def _newest_child_first(arrival: tuple[int, Instance]) -> int:
    return -arrival[0]


def _order_found(item: tuple[int, int, Detection]) -> tuple[int, int]:
    return item[0], item[1]


class Bindings:
    """The grouping of a use (the ``correlate`` join): instances are grouped by the values of
    the variables every child of the use binds, as the hierarchical context groups events by
    their projection (seed 000, section 3.1). No variables: one group (the paper's join)."""

    __slots__ = ("names",)

    def __init__(self, names: tuple[str, ...] = ()) -> None:
        self.names = names

    def key(self, event: Instance) -> Hashable:
        bindings = event.bindings
        names = self.names
        if len(names) == 1:  # the common case, without a generator
            return (_hashable(bindings[names[0]]),)
        return tuple([_hashable(bindings[n]) for n in names])


_ONE_GROUP = Bindings()


def _overlap(picks: tuple[Instance, ...]) -> bool:
    """Whether two of the instances share an atomic event."""
    seen: set[str] = set()
    for p in picks:
        ids = {s.id for s in p.events}
        if seen & ids:
            return True
        seen |= ids
    return False


def _merge(picks: tuple[Instance, ...]) -> dict[str, Value] | None:
    """The bindings of instances joined, or None if two give a variable different values."""
    merged: dict[str, Value] = {}
    for p in picks:
        for name, value in p.bindings.items():
            prior = merged.get(name, _ABSENT)
            if prior is _ABSENT:
                merged[name] = value
            elif not _same(prior, value):
                return None
    return merged


@dataclass(eq=False, slots=True)
class Use:
    """One node of one expression's tree: the node (shared or not), its parent use, and which
    child of the parent it is, and its grouping: by the variables every child binds (the
    ``correlate`` join), or one group (the paper's)."""

    id: int
    expression: str
    node: OperatorNode | Leaf | _OpaqueLeaf
    parent: Use | None
    child: int
    #: Its distance from the root (children are evaluated before their parents).
    depth: int = 0
    grouping: GroupingKey[Instance] = _ONE_GROUP
    children: list[Use] = field(default_factory=list)


class _OpaqueLeaf:
    """An opaque expression's leaf: never shared; its evaluation id, or failed."""

    __slots__ = ("evaluation", "expr", "failed", "inputs")

    def __init__(self, expr: Opaque, inputs: Mapping[str, Value]) -> None:
        self.expr = expr
        self.inputs = inputs
        self.evaluation: str | None = None
        self.failed: str | None = None


@dataclass(slots=True)
class _Registered:
    id: str
    registration: Registration
    root: Use
    uses: list[Use]
    #: Whether it may still occur (False once it cannot: the empty result was sent).
    alive: bool = True
    opaque: list[Use] = field(default_factory=list)
    #: Its output variables (computed once: every detection filters by them).
    outputs: frozenset[str] = frozenset()


class Engine:
    """The detector: register expressions, signal atomic events, receive detections.

    Args:
        join: ``"correlate"`` (instances meet only when they bind their shared variables
            alike) or ``"paper"`` (the most recent instances meet; a mismatch discards the
            last one): see the module.
        share: build an equal subexpression once (the paper's event graph); False builds every
            expression's tree apart (same results: the test of the sharing).
        providers: language URI -> :data:`Provider`, for opaque expressions.
        trace: called with (expression id, operator kind, use id) on every operator
            activation, for tests and debugging (section 3.3's parent disambiguation).

    >>> engine = Engine()
    >>> a = engine.register('SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T))')
    >>> engine.signal("newCD", {"title": "Boy", "artist": "U2"})
    []
    >>> [d.bindings for d in engine.signal("newMusicDVD", {"title": "Boy"})]
    [{'T': 'Boy'}]
    """

    def __init__(self, *, join: Join = "correlate", share: bool = True,
                 providers: Mapping[str, Provider] | None = None,
                 trace: Callable[[str, str, int], object] | None = None) -> None:
        if join not in ("correlate", "paper"):
            raise RegistrationError(f"join must be 'correlate' or 'paper', got {join!r}")
        self.join: Join = join
        self.share = share
        self.providers: dict[str, Provider] = dict(providers or {})
        self.trace = trace
        self.tick = 0
        self._uses = itertools.count(1)
        self._serials = itertools.count(1)
        self._ids = itertools.count(1)
        self._leaves: dict[str, Leaf] = {}
        self._doc_leaves: dict[str, Leaf] = {}
        self._nodes: dict[Hashable, OperatorNode] = {}
        self._opaque: dict[int, _OpaqueLeaf] = {}
        self._evaluations: dict[str, Use] = {}
        self._expressions: dict[str, _Registered] = {}
        #: The registered expressions with an opaque leaf, the only ones that can die: what
        #: :meth:`dead` looks at (all of them made a restart of 10,000 expressions quadratic,
        #: 9 s of its 19; issue 31, item 7).
        self._mortal: dict[str, _Registered] = {}

    # --- registration (sections 3.2, 3.4) ---------------------------------------------------

    def register(self, expression: Expression | Registration | str,
                 inputs: Mapping[str, Value] | None = None, *, ident: str | None = None
                 ) -> str:
        """Add an expression to the graph and return its id (its first evaluation id).

        ``expression`` is a tree, its text form, or a :class:`Registration` (which carries the
        inputs). Every check happens before the graph is touched: a bad expression leaves it
        exactly as it was (section 3.2's cleaning, made unnecessary).

        Raises:
            ExpressionTextError: malformed text, with line and column.
            RegistrationError: an output variable no atomic expression binds, an input no
                expression uses, an opaque language without a provider, a used id.
        """
        if isinstance(expression, str):
            expression = parse_expression(expression)
        if isinstance(expression, Registration):
            if inputs:
                raise RegistrationError("inputs given twice: in the Registration and apart")
            registration = expression
        else:
            registration = Registration(expression, dict(inputs or {}))
        self._check(registration)
        if ident is None:
            ident = f"e{next(self._ids)}"
            while ident in self._expressions:
                ident = f"e{next(self._ids)}"
        elif not isinstance(ident, str) or not ident:
            raise RegistrationError("an expression id must be a non-empty string")
        elif ident in self._expressions:
            raise RegistrationError(f"an expression with the id {ident!r} is registered")
        uses: list[Use] = []
        root = self._build(ident, registration, uses)
        reg = _Registered(ident, registration, root, uses, outputs=registration.outputs)
        reg.opaque = [u for u in uses if isinstance(u.node, _OpaqueLeaf)]
        self._expressions[ident] = reg
        if reg.opaque:
            self._mortal[ident] = reg
        for use in reg.opaque:
            self._evaluate(reg, use)
        return ident

    def _check(self, reg: Registration) -> None:
        e = reg.expression
        used = e.variables
        unused = sorted(set(reg.inputs) - used)
        if unused:
            raise RegistrationError(
                f"input variable {unused[0]} is given a value but no atomic expression uses it")
        for node in e.walk():
            if isinstance(node, Opaque):
                if node.language not in self.providers:
                    known = ", ".join(sorted(self.providers)) or "none"
                    raise RegistrationError(
                        f"no provider evaluates the opaque language {node.language!r} "
                        f"(providers: {known})")
                given = sorted(set(node.binds) & set(reg.inputs))
                if given:
                    raise RegistrationError(
                        f"variable {given[0]} is an output of an opaque expression and is "
                        "given a value")
            elif isinstance(node, Atomic) and node.is_document_type:
                try:
                    et = parse_event_type(node.type)
                except XmlEventsError as exc:
                    raise RegistrationError(f"bad document event type {node.type}: {exc}"
                                            ) from None
                if not isinstance(et, PrimitiveEventType):  # pragma: no cover - parser
                    raise RegistrationError(f"{node.type} is not a primitive event type")

    def _build(self, ident: str, reg: Registration, uses: list[Use]) -> Use:
        """The uses of the expression's tree, nodes found or made (hash-consed), leaves given
        their definitions; pre-order in ``uses``. Iterative: trees may be deep.

        A node's key is flat: its operator and its children's keys, where an operator child
        is named by its node's serial number and an atomic child by its type, parameters and
        the input values they use. Equal subexpressions with equal inputs get equal keys; no
        key nests (deep trees hash and compare in constant time per node).
        """
        inputs = reg.inputs
        # The occurrences of subexpressions, pre-order: (expression, parent index, child).
        occ: list[tuple[Expression, int, int]] = []
        stack: list[tuple[Expression, int, int]] = [(reg.expression, -1, 0)]
        while stack:
            expr, parent, child = stack.pop()
            index = len(occ)
            occ.append((expr, parent, child))
            stack.extend((c, index, i) for i, c in reversed(list(enumerate(expr.children))))
        kids: list[list[int]] = [[] for _ in occ]
        for index, (_, parent, _) in enumerate(occ):
            if parent >= 0:
                kids[parent].append(index)
        # Nodes bottom-up (children come after their parent in pre-order).
        keys: list[Hashable | None] = [None] * len(occ)
        nodes: list[OperatorNode | None] = [None] * len(occ)
        for index in range(len(occ) - 1, -1, -1):
            expr = occ[index][0]
            if isinstance(expr, Atomic):
                keys[index] = ("atom", expr.type, _params_key(expr, inputs))
            elif not isinstance(expr, Opaque):
                child_keys = [keys[k] for k in kids[index]]
                shareable = self.share and all(k is not None for k in child_keys)
                node = self._operator(expr, tuple(child_keys) if shareable else None)
                nodes[index] = node
                keys[index] = ("op", node.serial) if shareable else None
        # Uses top-down, each linked to its parent's.
        made: list[Use] = []
        for index, (expr, parent, child) in enumerate(occ):
            parent_use = made[parent] if parent >= 0 else None
            if isinstance(expr, Atomic):
                leaf = self._leaf(expr.type)
                use = Use(next(self._uses), ident, leaf, parent_use, child)
                leaf.add(_definition(use, expr, inputs))
            elif isinstance(expr, Opaque):
                opaque = _OpaqueLeaf(expr, dict(inputs))
                use = Use(next(self._uses), ident, opaque, parent_use, child)
                self._opaque[use.id] = opaque
            else:
                found = nodes[index]
                assert found is not None
                use = Use(next(self._uses), ident, found, parent_use, child)
                found.uses[use.id] = use
            made.append(use)
            if parent_use is not None:
                use.depth = parent_use.depth + 1
                parent_use.children.append(use)
        uses.extend(made)
        # Grouping keys, bottom-up: the variables every child of a use always binds.
        always: dict[int, frozenset[str]] = {}
        for use in reversed(made):
            op = use.node
            if not isinstance(op, OperatorNode):
                always[use.id] = _always(use)
                continue
            sets = [always[c.id] for c in use.children]
            common = frozenset.intersection(*sets)
            if self.join == "correlate" and op.kind != "OR":
                use.grouping = Bindings(tuple(sorted(common)))
            if op.kind == "OR" or (op.kind == "ANY" and op.needed < op.width):
                always[use.id] = common
            else:
                always[use.id] = frozenset.union(*sets)
        return made[0]

    def _leaf(self, etype: str) -> Leaf:
        leaf = self._leaves.get(etype)
        if leaf is None:
            leaf = self._leaves[etype] = Leaf(etype)
            if "(" in etype:
                et = parse_event_type(etype)
                assert isinstance(et, PrimitiveEventType)
                leaf.doc_type = et
                self._doc_leaves[etype] = leaf
        return leaf

    def _operator(self, expr: Expression, children: tuple[Hashable, ...] | None
                  ) -> OperatorNode:
        """The node of operator ``expr`` over children with these keys: the existing one of
        an equal subexpression (hash-consing), or a new one (always new if ``children`` is
        None: not shareable)."""
        if isinstance(expr, Or):
            kind, width, needed = "OR", len(expr.operands), 1
        elif isinstance(expr, Seq):
            kind, width, needed = "SEQ", 2, 2
        else:
            assert isinstance(expr, Any)
            kind, width, needed = "ANY", len(expr.operands), expr.needed
        serial = next(self._serials)
        key: Hashable = (kind, needed, children) if children is not None else ("new", serial)
        node = self._nodes.get(key)
        if node is None:
            node = self._nodes[key] = OperatorNode(kind, key, width, needed, serial)
        return node

    def unregister(self, ident: str) -> None:
        """Take an expression's tree out of the graph (section 3.4): pre-order, a node used by
        another tree only loses this expression's stored instances and parent link; a node no
        other tree uses is deleted."""
        reg = self._expressions.pop(ident, None)
        if reg is None:
            raise UnknownExpressionError(ident, self._expressions)
        self._mortal.pop(ident, None)
        for use in reg.uses:  # pre-order
            node = use.node
            if isinstance(node, Leaf):
                node.discard(use)
                if not len(node):
                    del self._leaves[node.type]
                    self._doc_leaves.pop(node.type, None)
            elif isinstance(node, _OpaqueLeaf):
                del self._opaque[use.id]
                if node.evaluation is not None:
                    self._evaluations.pop(node.evaluation, None)
            else:
                node.uses.pop(use.id, None)
                node.storage.pop(use.id, None)
                if not node.uses:
                    del self._nodes[node.key]

    # --- detection (section 3.3) ------------------------------------------------------------

    def signal(self, etype: str, params: Mapping[str, object] | None = None, *,
               time: float | None = None) -> list[Detection]:
        """An atomic event occurred: detect what it completes. Returns the detections, by
        expression in registration order.

        Raises:
            SignalError: no type, or parameters that are not names to strings, numbers or
                booleans. Nothing is changed (the tick is not spent).
        """
        return self.signal_checked(etype, check_signal(etype, params, time), time)

    def signal_checked(self, etype: str, params: dict[str, Value], time: float | None
                       ) -> list[Detection]:
        """:meth:`signal` of parameters that :func:`check_signal` returned already: the
        service checks a request's events in the event loop, and its one writer thread
        applies them without checking them again (issue 31, item 10)."""
        self.tick += 1
        s = _signal(f"s{self.tick}", etype, params, self.tick, time)
        leaf = self._leaves.get(etype)
        if leaf is None or leaf.doc_type is not None:
            return []
        return self._take(leaf, s)

    def feed(self, event: Event) -> list[Detection]:
        """An event of the algebra (a watched document's primitive event, or a composite of its
        definitions) as an atomic event: ``ins(/order/item)(id=I)`` or ``ItemComplete(id=I)``
        take it, with parameters :data:`~.ast.DOCUMENT_PARAMS`."""
        params: dict[str, Value] = {"path": str(event.pi)}
        if event.pi.ids:
            params["id"] = event.pi.ids[-1]
        if event.doc is not None:
            params["doc"] = event.doc
        time: float | None = None
        if isinstance(event, PrimitiveEvent):
            if event.value is not None:
                params["value"] = event.value
            if event.old is not None:
                params["old"] = event.old
            time = event.time
            self.tick += 1
            s = Signal(f"s{self.tick}", str(event.type), params, self.tick, time)
            starts: list[tuple[Use, Instance]] = []
            for leaf in self._doc_leaves.values():
                assert leaf.doc_type is not None
                if matches(event, leaf.doc_type):
                    starts.extend(self._matching(leaf, s))
            return self._propagate(starts)
        assert isinstance(event, CompositeEvent)
        name = event.type.name
        assert name is not None
        self.tick += 1
        s = Signal(f"s{self.tick}", name, params, self.tick, None)
        named = self._leaves.get(name)
        return [] if named is None or named.doc_type is not None else self._take(named, s)

    def _take(self, leaf: Leaf, s: Signal) -> list[Detection]:
        return self._propagate(self._matching(leaf, s))

    @staticmethod
    def _matching(leaf: Leaf, s: Signal) -> list[tuple[Use, Instance]]:
        """The instances of ``s`` at the definitions of ``leaf`` that take it."""
        starts: list[tuple[Use, Instance]] = []
        params, ts, events = s.params, s.ts, (s,)
        for d in leaf.candidates(params):
            bindings = d.bindings(params)
            if bindings is not None:
                starts.append((d.use, Instance(ts, ts, ts, bindings, events)))
        return starts

    def _propagate(self, starts: list[tuple[Use, Instance]]) -> list[Detection]:
        """Take this tick's leaf instances up their trees (``processTree`` of seed 000,
        section 4, over the uses touched): a use is evaluated once, after every child that
        delivered to it, with its arrivals in order — a sequence's terminators first, so an
        instance reaching both children of ``SEQ`` ends the chain an older instance started
        before it starts its own. Deepest uses first guarantees children before parents.
        Detections are returned by expression in registration order."""
        tick, trace = self.tick, self.trace
        if len(starts) == 1:
            # One leaf instance (the common case): up its one chain of uses while each gives
            # one instance, without the heap (what the loops below do then, step by step).
            use, inst = starts[0]
            insts = [inst]
            while True:
                parent = use.parent
                if parent is None:
                    return [self._detection(use.expression, i) for i in insts]
                if len(insts) > 1:
                    starts = [(use, i) for i in insts]
                    break
                node = parent.node
                assert isinstance(node, OperatorNode)
                if trace is not None:
                    trace(parent.expression, node.kind, parent.id)
                insts = node.activate(parent, use.child, insts[0], tick)
                if not insts:
                    return []
                use = parent
        # A use with no parent is its expression's root: its id orders the expressions by
        # registration (the root is the first use made). The loops below deliver an
        # instance inline (a closure per signal cost more than the delivery itself).
        found: list[tuple[int, int, Detection]] = []
        arrivals: dict[int, list[tuple[int, Instance]]] = {}
        heap: list[tuple[int, int, Use]] = []
        for use, inst in starts:
            parent = use.parent
            if parent is None:
                found.append((use.id, len(found), self._detection(use.expression, inst)))
                continue
            waiting = arrivals.get(parent.id)
            if waiting is None:
                waiting = arrivals[parent.id] = []
                heapq.heappush(heap, (-parent.depth, parent.id, parent))
            waiting.append((use.child, inst))
        while heap:
            _, _, use = heapq.heappop(heap)
            waiting = arrivals.pop(use.id)
            node = use.node
            assert isinstance(node, OperatorNode)
            if node.kind == "SEQ" and len(waiting) > 1:
                waiting.sort(key=_newest_child_first)
            if trace is not None:
                trace(use.expression, node.kind, use.id)
            parent = use.parent
            for child, inst in waiting:
                for c in node.activate(use, child, inst, tick):
                    if parent is None:
                        found.append((use.id, len(found), self._detection(use.expression, c)))
                        continue
                    up = arrivals.get(parent.id)
                    if up is None:
                        up = arrivals[parent.id] = []
                        heapq.heappush(heap, (-parent.depth, parent.id, parent))
                    up.append((use.child, c))
        if len(found) > 1:
            found.sort(key=_order_found)
        return [d for _, _, d in found]

    def _detection(self, ident: str, inst: Instance) -> Detection:
        reg = self._expressions[ident]
        outputs = reg.outputs
        found = inst.bindings
        # a copy (the instance stays stored); every variable an output: the common case
        bindings = (found.copy() if outputs.issuperset(found)
                    else {k: v for k, v in found.items() if k in outputs})
        alive = not reg.opaque or self._alive(reg)
        return _detected(ident, bindings, inst.events, ident if alive else None, self.tick)

    # --- opaque expressions ------------------------------------------------------------------

    def _evaluate(self, reg: _Registered, use: Use) -> None:
        leaf = use.node
        assert isinstance(leaf, _OpaqueLeaf)
        provider = self.providers[leaf.expr.language]
        used = {k: v for k, v in leaf.inputs.items()}
        request = OpaqueRequest(leaf.expr.language, leaf.expr.text, used, leaf.expr.binds,
                                reg.id)
        try:
            evaluation = provider(request)
            if not isinstance(evaluation, str) or not evaluation:
                raise RegistrationError("the provider returned no evaluation id")
        except Exception as exc:  # an evaluation error (section 3.3)
            leaf.failed = f"{type(exc).__name__}: {exc}"
            return
        leaf.evaluation = evaluation
        self._evaluations[evaluation] = use

    def report(self, evaluation: str, bindings: Mapping[str, object], *,
               time: float | None = None) -> list[Detection]:
        """A provider's result for evaluation ``evaluation``: an instance of its opaque leaf,
        kept if its bindings are valid (section 3.3: every output bound, nothing else but
        inputs, inputs equal to their values), discarded otherwise."""
        use = self._evaluations.get(evaluation)
        if use is None:
            raise UnknownExpressionError(evaluation, self._evaluations)
        leaf = use.node
        assert isinstance(leaf, _OpaqueLeaf)
        checked = check_signal("opaque", bindings, time)
        self.tick += 1
        s = Signal(f"s{self.tick}", leaf.expr.language, checked, self.tick, time)
        valid = valid_bindings(checked, leaf.expr.binds, leaf.inputs)
        if valid is None:
            return []
        return self._propagate([(use, Instance(s.ts, s.ts, s.ts, valid, (s,)))])

    def fail(self, evaluation: str, reason: str = "") -> list[Detection]:
        """A provider says evaluation ``evaluation`` will never produce a result. If its
        expression can no longer occur, the empty result (next id None) is returned."""
        use = self._evaluations.pop(evaluation, None)
        if use is None:
            raise UnknownExpressionError(evaluation, ())
        leaf = use.node
        assert isinstance(leaf, _OpaqueLeaf)
        leaf.failed = reason or "failed"
        return self.dead()

    def dead(self) -> list[Detection]:
        """The empty result of every expression that can no longer occur and was not yet told
        (each once)."""
        out: list[Detection] = []
        for reg in self._mortal.values():
            if reg.alive and not self._alive(reg):
                reg.alive = False
                out.append(Detection(reg.id, {}, (), None, self.tick))
        return out

    def _alive(self, reg: _Registered) -> bool:
        """Whether the expression may occur again: its atomic leaves always can; a failed
        opaque leaf never; an operator as its operands and stored instances allow."""
        if not reg.opaque or not any(
                isinstance(u.node, _OpaqueLeaf) and u.node.failed for u in reg.opaque):
            return True
        can: dict[int, bool] = {}
        for use in reversed(reg.uses):  # children before parents
            node = use.node
            if isinstance(node, Leaf):
                can[use.id] = True
            elif isinstance(node, _OpaqueLeaf):
                can[use.id] = node.failed is None
            else:
                kids = [can[c.id] for c in use.children]
                if node.kind == "OR":
                    can[use.id] = any(kids)
                    continue
                have = [False] * node.width
                for group in node.storage.get(use.id, {}).values():
                    for i, buf in enumerate(group.bufs):
                        have[i] = have[i] or bool(buf)
                if node.kind == "SEQ":
                    can[use.id] = kids[1] and (kids[0] or have[0])
                else:
                    ready = sum(1 for k, h in zip(kids, have, strict=True) if k or h)
                    can[use.id] = any(kids) and ready >= node.needed
        return can[reg.root.id]

    # --- inspection ---------------------------------------------------------------------------

    @property
    def leaves(self) -> Mapping[str, Leaf]:
        """The leaves by atomic event type."""
        return dict(self._leaves)

    @property
    def operators(self) -> list[OperatorNode]:
        return list(self._nodes.values())

    def expressions(self) -> Iterator[tuple[str, Registration]]:
        """(id, registration) of every registered expression, in registration order."""
        for ident, reg in self._expressions.items():
            yield ident, reg.registration

    def registration(self, ident: str) -> Registration:
        reg = self._expressions.get(ident)
        if reg is None:
            raise UnknownExpressionError(ident, self._expressions)
        return reg.registration

    def __contains__(self, ident: object) -> bool:
        return ident in self._expressions

    def __len__(self) -> int:
        return len(self._expressions)

    def uses(self, ident: str) -> list[Use]:
        """The uses of an expression's tree, in pre-order."""
        reg = self._expressions.get(ident)
        if reg is None:
            raise UnknownExpressionError(ident, self._expressions)
        return list(reg.uses)

    def stats(self, expressions: Iterable[str] | None = None) -> dict[str, object]:
        """Node counts with and without sharing, and per expression (``GET /graph``), over
        ``expressions`` (ids; default: all). A node is counted once however many of them use
        it, and is ``shared`` in an expression when another use among them has it too: over
        one client's expressions, the counts say nothing of other clients' (issue 31,
        finding 10: ``/graph`` showed every client the global counts)."""
        chosen = (self._expressions if expressions is None
                  else {i: self._expressions[i] for i in expressions if i in self._expressions})
        uses: dict[int, int] = {}
        nodes: dict[int, object] = {}
        for reg in chosen.values():
            for u in reg.uses:
                uses[id(u.node)] = uses.get(id(u.node), 0) + 1
                nodes[id(u.node)] = u.node
        per = {ident: {"nodes": len(reg.uses),
                       "shared": sum(uses[id(u.node)] > 1 for u in reg.uses)}
               for ident, reg in chosen.items()}
        operators = sum(isinstance(n, OperatorNode) for n in nodes.values())
        return {"nodes": len(nodes), "leaves": len(nodes) - operators, "operators": operators,
                "nodes_without_sharing": sum(p["nodes"] for p in per.values()),
                "expressions": per}


def _definition(use: Use, expr: Atomic, inputs: Mapping[str, Value]) -> _Definition:
    required: list[tuple[str, Value]] = []
    binds: list[tuple[str, str]] = []
    for p in expr.params:
        if isinstance(p.term, Literal):
            required.append((p.name, p.term.value))
        elif p.term.name in inputs:
            required.append((p.name, inputs[p.term.name]))
        else:
            binds.append((p.name, p.term.name))
    return _Definition(use, expr, tuple(required), tuple(binds))


def _always(use: Use) -> frozenset[str]:
    """The output variables every instance of leaf ``use`` binds."""
    node = use.node
    if isinstance(node, _OpaqueLeaf):
        return frozenset(node.expr.binds)
    assert isinstance(node, Leaf)
    return frozenset(var for _, var in node.definition(use).binds)


def _params_key(expr: Atomic, inputs: Mapping[str, Value]) -> Hashable:
    """An atomic expression's parameters as they act: literals and input values by value
    (of their kind), output variables by name."""
    out: list[Hashable] = []
    for p in expr.params:
        if isinstance(p.term, Literal):
            out.append((p.name, 0, _hashable(p.term.value)))
        elif p.term.name in inputs:
            out.append((p.name, 0, _hashable(inputs[p.term.name])))
        else:
            out.append((p.name, 1, p.term.name))
    return tuple(out)


def valid_bindings(tuple_: Mapping[str, Value], free: Iterable[str],
                   inputs: Mapping[str, Value]) -> dict[str, Value] | None:
    """Section 3.3's binding validity: every variable of the tuple is an output (``free``) or
    an input variable, with an input's value; every output variable is bound. The valid
    tuple's outputs, or None."""
    free = frozenset(free)
    for name, value in tuple_.items():
        if name in inputs:
            if not _same(value, inputs[name]):
                return None
        elif name not in free:
            return None
    if not free <= set(tuple_):
        return None
    return {k: v for k, v in tuple_.items() if k in free}


def check_signal(etype: object, params: Mapping[str, object] | None, time: object
                 ) -> dict[str, Value]:
    """The parameters of an atomic event, checked (names to strings, finite numbers,
    booleans; a type; a numeric time); raises :class:`SignalError` naming what is wrong."""
    if not isinstance(etype, str) or not etype:
        raise SignalError("an atomic event needs its type, a non-empty string")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise SignalError(f"{etype}: parameters must be an object of names to values, got "
                          f"{type(params).__name__}")
    out: dict[str, Value] = {}
    for name, value in params.items():
        if not isinstance(name, str):
            raise SignalError(f"{etype}: parameter names must be strings")
        if type(value) is str and value.isascii():
            # the common case, what check_value finds at once (ASCII holds no surrogate),
            # without its call and its search (issue 31, item 10)
            out[name] = value
            continue
        try:
            out[name] = check_value(value, f"{etype}: parameter {name}")
        except XmlEventsError as exc:
            raise SignalError(str(exc)) from None
    if time is not None and (isinstance(time, bool) or not isinstance(time, int | float)
                             or time != time):
        raise SignalError(f"{etype}: time must be a number of seconds, got {time!r}")
    return out

