"""Sets of definitions, checked when defined: the event trees they describe, path types and all.

A :class:`DefinitionSet` resolves every ``Name := expr`` into a tree of :class:`LeafSpec` and
:class:`OperatorSpec` nodes whose path types are fixed, so that an engine can be built on it
without looking at the syntax again (seed 000, section 3.1):

* an operator node's path type is ``with at=...`` if given, else for ``[l,u] E`` the child's
  path type minus its last step (section 3.2), else the left-bound intersection of its
  children's path types, derived bottom-up (Example 10, Figure 1);
* it must be non-null with at least one step, and every child ``Ej`` must satisfy the child
  constraints of section 3.1: (a) if the operator's and ``Ej``'s path types are both
  absolute, their left-bound intersection is not null; (b) if only ``Ej``'s is absolute, the
  operator's is contained in it; a relative ``Ej`` is unconstrained;
* a reference ``Name`` or ``Name(pt)`` must name a definition, and ``pt`` must be able to
  match events of that definition (the two path types end alike); ``%(pt)`` refers to every
  definition whose events it can match;
* no definition may depend on itself, directly or through others (section 4).

A definition whose body is a single event type, such as the paper's ``Ep := ins(item/price)``,
is an *alias*: it defines no event tree, and references to it stand for that event type.

Raises:
    DefinitionError: with the definition, the node, the reason, and line and column.

References:
    M. Bernauer, G. Kappel, G. Kramler. Composite Events for XML. WWW 2004, sections 3.1-4.
"""

from __future__ import annotations

import graphlib
import heapq
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

from . import ast
from ._errors import ArgumentTypeError, DefinitionError, UnknownNameError
from ._events import CompositeEventType, EventType, PrimitiveEventType
from ._paths import (
    WILDCARD,
    Axis,
    Kind,
    PathType,
    Step,
    contained,
    derivation_problem,
    ends_alike,
    intersect_lb,
)

__all__ = [
    "LeafSpec",
    "OperatorSpec",
    "NodeSpec",
    "ResolvedDefinition",
    "DefinitionSet",
    "may_match",
]


@dataclass(frozen=True, slots=True)
class LeafSpec:
    """An event type node: stores events whose type is compatible with ``et`` (section 2.2).

    ``ref`` names the definition whose composite events it receives (None for primitive
    types and for the wildcard name).
    """

    et: EventType
    expr: ast.Expr
    ref: str | None = None

    @property
    def pt(self) -> PathType:
        return self.et.pt

    def walk(self) -> Iterator[NodeSpec]:
        yield self

    def receives(self, root: NodeSpec, name: str) -> bool:
        """Whether composite events of definition ``name`` (tree ``root``) reach this leaf.

        A named reference receives its definition's; the wildcard ``%(pt)`` those of every
        definition with a tree whose path type can match ``pt``.
        """
        if self.ref is not None:
            return self.ref == name
        # A single-event definition of a primitive type raises composites where it detects
        # (see ResolvedDefinition.detecting): the wildcard receives them too.
        detects = isinstance(root, OperatorSpec) or (
            isinstance(root, LeafSpec) and isinstance(root.et, PrimitiveEventType))
        return (isinstance(self.et, CompositeEventType) and detects
                and may_match(root.pt, self.et.pt))


@dataclass(frozen=True, slots=True)
class OperatorSpec:
    """An operator node with its fixed path type; ``explicit`` tells ``at=`` gave it."""

    expr: ast.Operator
    pt: PathType
    children: tuple[NodeSpec, ...]
    explicit: bool = False

    @property
    def mods(self) -> ast.Modifiers:
        return self.expr.mods

    def walk(self) -> Iterator[NodeSpec]:
        """This node and its descendants, post-order (the order processTree visits them)."""
        for child in self.children:
            yield from child.walk()
        yield self


NodeSpec = LeafSpec | OperatorSpec
#: Resolving a definition (or a node of it): yields the names of the definitions it needs
#: resolved first, is sent their trees, and returns its own.
_Resolving = Generator[str, "NodeSpec | None", NodeSpec]


@dataclass(frozen=True, slots=True)
class ResolvedDefinition:
    """One checked definition: its source, its tree and the composite event type it defines.

    ``depends_on`` lists the definitions whose composite events its leaves receive.
    """

    definition: ast.Definition
    root: NodeSpec
    depends_on: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def is_alias(self) -> bool:
        """Whether the body is a single event type: references to it stand for that type."""
        return isinstance(self.root, LeafSpec)

    @property
    def references(self) -> frozenset[str]:
        """The definition names its expression names (an alias it names is inlined in its
        tree, so it is not among ``depends_on``; it is here)."""
        return frozenset(e.name for e in self.definition.expr.walk()
                         if isinstance(e, ast.Ref) and e.name is not None)

    def detecting(self) -> ResolvedDefinition:
        """This definition with a tree of its own: for a single event type ``E``, the
        operator ``any(1, E)``, which raises one composite per event of ``E`` and stores
        nothing (issue 14: a single-event definition detects where it is not only an alias).
        Any other definition is returned as it is."""
        root = self.root
        if not isinstance(root, LeafSpec):
            return self
        one = ast.AnyOf(1, (root.expr,), pos=root.expr.pos)
        return ResolvedDefinition(self.definition, OperatorSpec(one, root.pt, (root,)),
                                  self.depends_on)

    @property
    def event_type(self) -> CompositeEventType:
        return CompositeEventType(self.name, self.root.pt)


def may_match(produced: PathType, wanted: PathType) -> bool:
    """Whether some absolute path type is both ``produced``'s and ``wanted``'s (or ends them).

    Composite events of a definition with path type ``produced`` occur at absolute path types
    that equal or end in it; a leaf with path type ``wanted`` stores those that equal or end in
    ``wanted`` (compatibility, section 2.2). The two can meet only if they end alike.

    >>> may_match(PathType.parse("address"), PathType.parse("shipTo/address"))
    True
    >>> may_match(PathType.parse("/order/item"), PathType.parse("billTo"))
    False
    """
    return ends_alike(produced, wanted)  # with * (issue 15): their last steps meet


class DefinitionSet:
    """An immutable, checked set of definitions, in dependency order.

    >>> ds = DefinitionSet.parse("Ei := ins(item) ; (ins(item/price) & ins(item/quantity))")
    >>> [str(n.pt) for n in ds["Ei"].root.walk()]
    ['item', 'item/price', 'item/quantity', 'item', 'item']
    """

    __slots__ = ("_defs", "_order")

    def __init__(self, definitions: Iterable[ast.Definition]) -> None:
        defs = tuple(definitions)
        by_name: dict[str, ast.Definition] = {}
        for d in defs:
            if d.name in ast.KEYWORDS:
                raise _error(d, d, f"{d.name!r} is a keyword and cannot name a definition")
            if d.name in by_name:
                first = by_name[d.name].pos
                where = f" (first defined at line {first[0]})" if first else ""
                raise _error(d, d, f"{d.name} is defined twice{where}")
            by_name[d.name] = d
        resolver = _Resolver(by_name)
        roots = {name: resolver.resolve(name) for name in by_name}
        deps = _dependencies(roots)
        self._order: tuple[str, ...] = _dependency_order(deps, roots, by_name)
        self._defs: Mapping[str, ResolvedDefinition] = {
            name: ResolvedDefinition(by_name[name], roots[name], deps[name]) for name in by_name}

    @classmethod
    def parse(cls, text: str, namespaces: Mapping[str, str] | None = None, *,
              source: str = "") -> DefinitionSet:
        """Parse and check definitions, one per line (DESIGN section 3)."""
        from ._parser import parse_definitions

        return cls(parse_definitions(text, namespaces, source=source))

    @classmethod
    def of(cls, *items: str | ast.Definition | DefinitionSet | Iterable[str | ast.Definition],
           namespaces: Mapping[str, str] | None = None) -> DefinitionSet:
        """Accept definitions as text (each may hold several lines), AST values, definition sets
        or lists of these."""
        return cls(cls.collect(*items, namespaces=namespaces))

    @staticmethod
    def collect(*items: str | ast.Definition | DefinitionSet | Iterable[str | ast.Definition],
                namespaces: Mapping[str, str] | None = None) -> list[ast.Definition]:
        """The definitions ``items`` hold, parsed but not checked (:meth:`of` checks them)."""
        from ._parser import parse_definitions

        defs: list[ast.Definition] = []

        def add(item: object) -> None:
            if isinstance(item, ast.Definition):
                defs.append(item)
            elif isinstance(item, str):
                defs.extend(parse_definitions(item, namespaces))
            elif isinstance(item, DefinitionSet):
                defs.extend(r.definition for r in item)
            elif isinstance(item, Iterable):
                for sub in item:
                    add(sub)
            else:
                raise ArgumentTypeError(f"expected definition text or a Definition, got {item!r}")

        for item in items:
            add(item)
        return defs

    def __iter__(self) -> Iterator[ResolvedDefinition]:
        """The definitions in dependency order: each after the ones it depends on."""
        return (self._defs[name] for name in self._order)

    def __len__(self) -> int:
        return len(self._defs)

    def __contains__(self, name: object) -> bool:
        return name in self._defs

    def __getitem__(self, name: str) -> ResolvedDefinition:
        try:
            return self._defs[name]
        except KeyError:
            raise UnknownNameError(f"no definition named {name!r}; defined: "
                                   f"{', '.join(self._order) or 'none'}") from None

    @property
    def names(self) -> tuple[str, ...]:
        return self._order

    def trees(self, detecting: Iterable[str] = ()) -> Iterator[ResolvedDefinition]:
        """The definitions that have an event tree, in dependency order: every one but the
        aliases, and the aliases named in ``detecting`` as trees of their own
        (:meth:`ResolvedDefinition.detecting`)."""
        wanted = set(detecting)
        return (d.detecting() if d.is_alias else d for d in self
                if not d.is_alias or d.name in wanted)

    def referenced(self) -> set[str]:
        """The names other definitions name (an alias among them stands for its event type
        there), in one pass over the definitions."""
        return {name for d in self for name in d.references if name != d.name}

    def __repr__(self) -> str:
        return f"DefinitionSet({', '.join(self._order)})"


def _error(d: ast.Definition, node: ast.Expr | ast.Definition, reason: str,
           at: ast.Pos | None = None) -> DefinitionError:
    """The error of definition ``d`` at ``node`` (at position ``at`` if given: a modifier)."""
    pos = at or node.pos or d.pos
    shown = "" if isinstance(node, ast.Definition) else str(node)
    return DefinitionError(reason, definition=d.name, node=shown, text=d.source,
                           line=pos[0] if pos else None, column=pos[1] if pos else None)


class _Resolver:
    """Turns each definition's syntax into a checked tree, resolving named references.

    A reference's path type defaults to its target's, so a target is resolved before the
    reference that names it. The wildcard ``%(pt)`` always carries its path type, so it needs
    no target and its dependencies are added once every tree is known (:func:`_dependencies`).

    Without recursion across definitions (issue 16: thousands of definitions may each name
    the next): resolving one is a generator that yields the name of a target not resolved
    yet and is resumed with its tree, and :meth:`resolve` runs a stack of them. The checks
    and their errors come in the order a recursive walk would give them.
    """

    def __init__(self, by_name: Mapping[str, ast.Definition]) -> None:
        self._by_name = by_name
        self._done: dict[str, NodeSpec] = {}
        self._active: list[str] = []  # the definitions being resolved, outermost first
        self._active_set: set[str] = set()

    def resolve(self, name: str) -> NodeSpec:
        done = self._done.get(name)
        if done is not None:
            return done
        stack = [(name, self._definition(name))]
        self._enter(name)
        value: NodeSpec | None = None
        while stack:
            current, resolving = stack[-1]
            try:
                target = resolving.send(value)
            except StopIteration as stop:
                stack.pop()
                self._active.pop()
                self._active_set.discard(current)
                self._done[current] = value = stop.value
                continue
            value = None  # a new generator starts with send(None)
            stack.append((target, self._definition(target)))
            self._enter(target)
        return self._done[name]

    def _enter(self, name: str) -> None:
        self._active.append(name)
        self._active_set.add(name)

    def _definition(self, name: str) -> _Resolving:
        d = self._by_name[name]
        return (yield from self._node(d, d.expr))

    def _node(self, d: ast.Definition, expr: ast.Expr) -> _Resolving:
        if isinstance(expr, ast.Primitive):
            return LeafSpec(expr.event_type, expr)
        if isinstance(expr, ast.Ref):
            return (yield from self._ref(d, expr))
        assert isinstance(expr, ast.Operator)
        kids: list[NodeSpec] = []
        for c in expr.children:
            if isinstance(c, ast.Primitive):  # the common leaf, without a generator
                kids.append(LeafSpec(c.event_type, c))
            else:
                kids.append((yield from self._node(d, c)))
        children = tuple(kids)
        pt, explicit = self._path_type(d, expr, children)
        for child in children:
            _check_child(d, expr, pt, child)
        return OperatorSpec(expr, pt, children, explicit)

    def _ref(self, d: ast.Definition, expr: ast.Ref) -> _Resolving:
        if expr.name is None:
            assert expr.path is not None
            return LeafSpec(CompositeEventType(None, expr.path), expr)
        if expr.name not in self._by_name:
            known = ", ".join(n for n in self._by_name if n != d.name) or "none"
            raise _error(d, expr, f"unknown definition {expr.name!r} (defined: {known})")
        if expr.name in self._active_set:
            cycle = " -> ".join(self._active[self._active.index(expr.name):] + [expr.name])
            raise _error(d, expr, f"definitions depend on themselves: {cycle}")
        target = self._done.get(expr.name)
        if target is None:
            target = yield expr.name  # resolved by resolve(), then back here
            assert target is not None
        if isinstance(target, LeafSpec):
            if expr.path is not None:
                raise _error(d, expr, f"{expr.name} is an alias of {target.expr} and takes no "
                                      "path type; use the name alone")
            return target
        if expr.path is not None and not may_match(target.pt, expr.path):
            raise _error(d, expr, f"{expr} can never hold an event of {expr.name}, whose path "
                                  f"type is {target.pt}: the two path types do not end alike")
        return LeafSpec(expr.event_type(target.pt), expr, expr.name)

    def _path_type(self, d: ast.Definition, expr: ast.Operator,
                   children: tuple[NodeSpec, ...]) -> tuple[PathType, bool]:
        if expr.mods.at is not None:
            problem = derivation_problem(expr.mods.at)
            if problem is not None:
                raise _error(d, expr, problem, expr.mods.pos("at"))
            return expr.mods.at, True
        if isinstance(expr, ast.Mult):
            child_pt = children[0].pt
            parent = child_pt.parent()
            if parent is None:
                raise _error(d, expr, f"cannot derive the path type of [l,u]: its operand's path "
                                      f"type {child_pt} has a single step to drop; give one "
                                      "with `with at=...`")
            problem = derivation_problem(parent)
            if problem is not None:
                raise _error(d, expr, f"the path type of [l,u] (its operand's without the last "
                                      f"step): {problem}")
            return parent, False
        pt: PathType | None = children[0].pt
        for child in children[1:]:
            pt = intersect_lb(pt, child.pt)
        if pt is None:
            shown = " ∩lb ".join(str(c.pt) for c in children)
            meets = _meeting_types([c.pt for c in children])
            if not meets:
                raise _error(d, expr, f"cannot derive the operator's path type: {shown} is "
                                      "null (their first steps differ) and no path type is "
                                      "uniquely contained in all of them; give one with "
                                      "`with at=...`")
            pasted = " or ".join(f"`{d.name} := {_swapped(d.expr, expr, expr.with_(at=m))}`"
                                 for m in meets)
            raise _error(d, expr, f"cannot derive the operator's path type: {shown} is null "
                                  "(their first steps differ), but their events meet at "
                                  f"{' or '.join(map(str, meets))}: write {pasted}")
        problem = derivation_problem(pt, [child.pt for child in children])
        if problem is not None:
            raise _error(d, expr, f"cannot derive the operator's path type: {problem}")
        return pt, False


def _meeting_types(pts: list[PathType]) -> list[PathType]:
    """The relative path types equal to or uniquely contained in every one of ``pts`` (⊂,
    section 2.1),
    longest first and, among equals, nearest the end of the first: where events of operands
    whose ∩lb is null still meet (``order/items/item`` and ``item/price/text()`` meet at
    ``item``; issue 30, item 3). Each is a valid ``with at=`` for them: section 3.1's child
    constraint (b) is ``at ⊂ pt`` for an absolute operand, and it holds for every one."""
    first = pts[0].steps
    for n in range(len(first), 0, -1):
        found: list[PathType] = []
        for i in range(len(first) - n, -1, -1):
            try:
                candidate = PathType(Kind.RELATIVE, first[i:i + n])
            except ValueError:
                continue  # an attribute or text() step before the last
            if (candidate not in found
                    and all(candidate == p or contained(candidate, p) for p in pts)
                    and derivation_problem(candidate, pts) is None):
                found.append(candidate)
        if found:
            return found
    return []


def _swapped(node: ast.Expr, old: ast.Expr, new: ast.Expr) -> ast.Expr:
    """``node`` with its subexpression ``old`` (that very object) replaced by ``new``."""
    if node is old:
        return new
    if isinstance(node, ast.Mult):
        child = _swapped(node.child, old, new)
        return node if child is node.child else replace(node, child=child)
    if isinstance(node, ast.Operator):
        kids = tuple(_swapped(k, old, new) for k in node.children)
        if all(k is c for k, c in zip(kids, node.children, strict=True)):
            return node
        return replace(node, children=kids)  # type: ignore[type-var]  # every Operator but Mult has children
    return node


def _check_child(d: ast.Definition, expr: ast.Operator, pt: PathType, child: NodeSpec) -> None:
    """The constraints on child nodes of section 3.1, so projections are likely non-null."""
    cpt = child.pt
    if cpt.kind is not Kind.ABSOLUTE:
        return
    at = expr.mods.pos("at")  # a path type given with at=: the caret goes under it
    if pt.kind is Kind.ABSOLUTE:
        if intersect_lb(pt, cpt) is None:
            raise _error(d, expr, f"operator path type {pt} and operand path type {cpt} are "
                                  "both absolute but share no leading step (section 3.1 (a))",
                         at)
    elif not contained(pt, cpt):
        raise _error(d, expr, f"operator path type {pt} is relative, so it must be contained "
                              f"in the absolute operand path type {cpt} (section 3.1 (b))", at)


def _leaves(node: NodeSpec) -> Iterator[LeafSpec]:
    return (n for n in node.walk() if isinstance(n, LeafSpec))


def _dependencies(roots: Mapping[str, NodeSpec]) -> dict[str, tuple[str, ...]]:
    """Which trees feed each definition's leaves: named references and matching wildcards.

    A named reference is looked up; only a wildcard leaf is compared with every tree, so the
    work grows with the definitions, not with their square (a live graph re-checks its whole
    set on every change).
    """
    deps: dict[str, tuple[str, ...]] = {}
    endings: _Endings | None = None  # built for the first wildcard leaf
    rank = {name: i for i, name in enumerate(roots)}
    for name, root in roots.items():
        found: dict[str, None] = {}
        for leaf in _leaves(root):
            if leaf.ref is not None:
                if leaf.ref in roots and leaf.receives(roots[leaf.ref], leaf.ref):
                    found[leaf.ref] = None
            elif isinstance(leaf.et, CompositeEventType):
                if endings is None:
                    endings = _Endings.of(roots)
                found.update((other, None) for other in sorted(
                    set(endings.candidates(leaf.pt)), key=rank.__getitem__)
                    if leaf.receives(roots[other], other))
        deps[name] = tuple(found)
    return deps


class _Endings:
    """The trees by their path types read backwards (a trie of last steps): a wildcard
    ``%(pt)`` can only receive from trees whose path type ends like ``pt`` (the shorter one
    ends the other, section 2.2), so it looks at those, not at every tree — a scan each was
    quadratic over 10,000 definitions (issue 16). ``*`` meets any element step (issue 15)."""

    __slots__ = ("kids", "trees")

    def __init__(self) -> None:
        self.kids: dict[Step, _Endings] = {}
        self.trees: list[str] = []

    @classmethod
    def of(cls, roots: Mapping[str, NodeSpec]) -> _Endings:
        top = cls()
        for name, root in roots.items():
            node = top
            for step in reversed(root.pt.steps):
                node = node.kids.setdefault(step, cls())
            node.trees.append(name)
        return top

    def candidates(self, pt: PathType) -> list[str]:
        """The trees whose path type ends like ``pt``'s (kinds are left to ``receives``)."""
        found: list[str] = []
        frontier = [self]
        for step in reversed(pt.steps):
            found.extend(n for node in frontier for n in node.trees)  # shorter: they end pt
            frontier = [kid for node in frontier for kid in node._meeting(step)]
        stack = frontier  # longer or as long: pt ends them
        while stack:
            node = stack.pop()
            found.extend(node.trees)
            stack.extend(node.kids.values())
        return found

    def _meeting(self, step: Step) -> list[_Endings]:
        kids = self.kids
        if step.name == WILDCARD:
            return [kid for s, kid in kids.items() if s.axis is Axis.CHILD]
        out = [kids[step]] if step in kids else []
        if step.axis is Axis.CHILD and _ANY in kids:
            out.append(kids[_ANY])
        return out


_ANY = Step(Axis.CHILD, WILDCARD)


def _dependency_order(deps: Mapping[str, tuple[str, ...]], roots: Mapping[str, NodeSpec],
                      by_name: Mapping[str, ast.Definition]) -> tuple[str, ...]:
    """Definitions ordered so that each follows those it depends on (graphlib); among those
    ready at once, source order, so the order is the same from run to run.

    Raises:
        DefinitionError: for a cycle (only wildcards can still form one here: named cycles
            are caught while resolving).
    """
    sorter = graphlib.TopologicalSorter({name: deps[name] for name in by_name})
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        # graphlib lists each node before the one that depends on it; say it the other way,
        # from the definition that comes first in the source.
        ring = list(reversed(exc.args[1][:-1]))
        first = min(range(len(ring)), key=lambda i: list(by_name).index(ring[i]))
        cycle = ring[first:] + ring[:first] + [ring[first]]
        d = by_name[cycle[-2]]
        # Point at the leaf of the last definition that leads back into the cycle.
        culprit: ast.Expr | ast.Definition = next(
            (leaf.expr for leaf in _leaves(roots[cycle[-2]])
             if leaf.receives(roots[cycle[-1]], cycle[-1])), d)
        raise _error(d, culprit, "definitions depend on themselves: " + " -> ".join(cycle)
                     ) from None
    rank = {name: i for i, name in enumerate(by_name)}
    ready: list[tuple[int, str]] = [(rank[n], n) for n in sorter.get_ready()]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        sorter.done(name)
        for n in sorter.get_ready():
            heapq.heappush(ready, (rank[n], n))
    return tuple(order)
