"""Shared subtrees: an operator subtree that several definitions have is built once (issue 13).

Equal subtrees — the same operators with the same path types, modifiers and effective window,
over the same event types — receive the same events and, their state being a function of
those events alone, store and combine them alike. So the subtree is built once, as a *shared
core*: a hidden event tree of its own, processed like any tree, before the trees that use it.
Each definition that has the subtree gets a :class:`SharedView` in its place, at the same
post-order position, which passes on the core's composites as the definition's own.

Sharing never changes a result (a property test compares graphs with sharing on and off):

* **Names and ids.** A composite carries its definition's name and an id from its tree's
  counter, intermediate composites included. The core counts its composites as the subtree
  would; each view, visited at the subtree's place in its tree's post-order, gives every
  composite the core raised since its last visit (in the core's order) the id the tree's own
  subtree would have given, advances the tree's counter by as much, and copies the composite
  under its definition's name, constituents copied alike (``copies``: the view's copy of each
  intermediate composite that the core may still combine; swept when it doubles).
* **What is shared.** Only subtrees whose every operator terminates at once (earliest mode, no
  condition): a held potential event is let go by its tree's own ``flush``/``close`` and
  observed per tree, which a shared node could not do for one tree alone. The subtree's root
  is not a multiplicity, whose integration asks its consumers — they differ per definition.
* **When.** Definitions built together (the graph's, one :meth:`EventGraph.add`) share a
  subtree two of them have. A definition added later, or a tree reopened, shares a core only
  while that core stores nothing — its state then equals a fresh subtree's: sharing a core with
  history would hand the newcomer events from before it existed.
* **Removal** is counted: a core goes with its last view (a removed or closed tree's views let
  go of their cores).

A window's report of a core's dropped partial match goes to every definition sharing it, under
its name, with the definition's copies of the events.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING

from . import ast
from ._contexts import Before
from ._definitions import LeafSpec, NodeSpec, OperatorSpec, ResolvedDefinition
from ._events import CompositeEvent, CompositeEventType, Event, _composite
from ._operator import OperatorNode, TreeOptions
from ._window import Bounds, Expired, Windows

if TYPE_CHECKING:
    from ._multiplicity import MultNode
    from ._tree import EventTree

__all__ = ["Core", "SharedView", "Sharing", "signature"]

#: Hidden trees are named with this prefix, which no definition name can have.
PREFIX = "~"

# A view's pending entries: (ROOT, c) for the core's root composites, (INNER, c) for others.
_ROOT = 1
_INNER = 0


def signature(spec: OperatorSpec, options: TreeOptions, bounds: Bounds,
              memo: dict[tuple[int, Bounds], Hashable | None] | None = None
              ) -> Hashable | None:
    """What the subtree at ``spec`` is, as built under ``bounds`` (its ancestors' windows);
    equal signatures, equal subtrees. None: it cannot be shared (see the module)."""
    if memo is not None:
        found = memo.get((id(spec), bounds), memo)
        if found is not memo:
            return found  # type: ignore[return-value]
    sig = _signature(spec, options, bounds, memo)
    if memo is not None:
        memo[(id(spec), bounds)] = sig
    return sig


def _signature(spec: OperatorSpec, options: TreeOptions, bounds: Bounds,
               memo: dict[tuple[int, Bounds], Hashable | None] | None) -> Hashable | None:
    mods = spec.mods
    if mods.mode not in (None, ast.Mode.EARLIEST) or mods.when is not None:
        return None
    bounds = bounds.tighten(mods.within)
    children: list[Hashable] = []
    for child in spec.children:
        if isinstance(child, OperatorSpec):
            sub = signature(child, options, bounds, memo)
            if sub is None:
                return None
            children.append(sub)
        else:
            children.append((child.et, child.ref))
    expr = spec.expr
    shape = (type(expr).__name__, getattr(expr, "n", None), getattr(expr, "low", None),
             getattr(expr, "high", None))
    hierarchical = options.hierarchical if mods.hierarchical is None else mods.hierarchical
    return (shape, spec.pt, mods.context or options.context, hierarchical, bounds,
            tuple(children))


class Core:
    """A shared subtree: its hidden event tree and the views standing for it in the trees
    that share it."""

    __slots__ = ("count", "name", "positions", "signature", "tree", "views", "windows")

    def __init__(self, name: str, sig: Hashable, tree: EventTree,
                 windows: Windows | None) -> None:
        self.name = name
        self.windows = windows
        self.signature = sig
        self.tree = tree
        self.views: list[SharedView] = []
        #: The hidden tree's composite count when its views were last told.
        self.count = 0
        #: The positions of the trees that share it (the graph's processing order).
        self.positions: list[int] = []
        tree.trace = self._log

    def _log(self, node: OperatorNode, c: CompositeEvent) -> None:
        """Every composite the core raises goes to every view, in the order raised."""
        entry = (_ROOT if node.parent is None else _INNER, c)
        for view in self.views:
            view.pending.append(entry)

    def reports(self, spec: OperatorSpec, x: Expired) -> list[Expired]:
        """The reports, one a sharer, of what the core's node ``spec`` dropped."""
        views = sorted(self.views, key=lambda v: v.tree.position)
        return [r for view in views for r in view.report(spec, x)]

    def moved(self) -> bool:
        """Whether the core raised something since the last call: then every tree sharing it
        is processed in this tick (its ids follow the tree's post-order)."""
        count = self.tree.counted
        if count == self.count:
            return False
        self.count = count
        return True

    def pristine(self) -> bool:
        """Whether the core stores nothing: a fresh subtree would behave exactly alike."""
        from ._multiplicity import MultNode

        return not any(node.pending or node.groups or node.held
                       or (isinstance(node, MultNode) and node.runs)
                       or (isinstance(node, SharedView) and not node.core.pristine())
                       for node in self.tree.operators)

    def live(self) -> set[str]:
        """The ids of the core's composites it may still combine: stored, integrating, or
        in a report not yet delivered."""
        from ._multiplicity import MultNode

        ids: set[str] = set()
        stack: list[Event] = list(self.tree.held())
        for node in self.tree.operators:
            if isinstance(node, MultNode):
                stack += _runs(node)
        if self.windows is not None:
            stack += [e for x in self.windows.dropped for e in x.events]
        while stack:
            e = stack.pop()
            if type(e) is CompositeEvent and e.type.name == self.name and e.id not in ids:
                ids.add(e.id)
                stack += e.constituents
        return ids


def _operators(spec: NodeSpec) -> list[OperatorSpec]:
    """The operators of a subtree in post-order (the order its tree builds its nodes)."""
    return [s for s in spec.walk() if isinstance(s, OperatorSpec)]


def _runs(node: MultNode) -> Iterator[Event]:
    for run in node.runs.values():
        if run.cur is not None:
            yield run.cur
        yield from run.waiting


class SharedView(OperatorNode):
    """Stands, in one definition's tree, for a shared subtree (see the module): passes on the
    core's composites as the tree's own, in its post-order place."""

    __slots__ = ("_copies", "_specs", "_sweep_at", "core", "seen")

    def __init__(self, spec: OperatorSpec, tree: EventTree, options: TreeOptions,
                 before: Before, bounds: Bounds, core: Core) -> None:
        super().__init__(spec, tree, options, before, bounds)
        self.core = core
        self.windows = None  # the core's nodes keep the window
        self.seen = core.tree.counted
        self._copies: dict[str, CompositeEvent] = {}
        # Swept when it doubles: what the core combines at once (most) goes soon.
        self._sweep_at = 16
        #: The view's operator for each of the core's (by id), made at the first report.
        self._specs: dict[int, OperatorSpec] | None = None

    @property
    def tree(self) -> EventTree:
        """The tree the view stands in."""
        return self._tree

    @property
    def attached(self) -> bool:
        """Whether the core still counts this view (a closed tree's views let go of it)."""
        return any(v is self for v in self.core.views)

    def evaluate(self, tick: int) -> list[CompositeEvent]:
        entries, self.pending = self.pending, []
        tree = self._tree
        base = tree.counted - self.seen
        counted = self.core.tree.counted
        raised: list[CompositeEvent] = []
        copies = self._copies
        trace = tree.trace
        for kind, c in entries:
            assert isinstance(c, CompositeEvent)
            number = base + int(c.id[c.id.rindex("#") + 1:])
            copy = self._copy(c, f"{tree.name}#{number}")
            if kind == _ROOT:
                raised.append(copy)
            else:
                copies[c.id] = copy
                if trace is not None:
                    trace(self, copy)
        tree.advance(counted - self.seen)
        self.seen = counted
        if len(copies) >= self._sweep_at:
            live = self.core.live()
            self._copies = {k: v for k, v in copies.items() if k in live}
            self._sweep_at = max(16, 2 * len(self._copies))
        return raised

    def _copy(self, c: CompositeEvent, ident: str) -> CompositeEvent:
        """The tree's copy of the core's composite ``c``, with id ``ident``."""
        et = self._types.get(c.type.pt)
        if et is None:
            et = self._types[c.type.pt] = (CompositeEventType(self.name, c.type.pt),
                                           len(c.type.pt))
        return _composite(ident, et[0], c.pi, tuple(self.translate(x) for x in c.constituents),
                          c.interval, c.ts, c.doc)

    def translate(self, e: Event) -> Event:
        """The tree's copy of event ``e`` of the core (others are shared as they are)."""
        if type(e) is CompositeEvent and e.type.name == self.core.name:
            copy = self._copies.get(e.id)
            # Not yet given to this tree (a report of what a window dropped before it was
            # raised cannot name one): keep the core's id, under the tree's name.
            return copy if copy is not None else self._copy(e, e.id)
        return e

    def held_events(self) -> list[Event]:
        return [self.translate(e) for e in self.core.tree.held()]

    def potential_events(self) -> list[CompositeEvent]:
        return []  # a shared subtree holds nothing back

    def report(self, spec: OperatorSpec, x: Expired) -> list[Expired]:
        """A core's report of a partial match its node ``spec`` dropped, as this tree's: its
        definition, its copies of the events, the operator as the tree writes it (modifiers
        may be written differently); for a shared subtree's tree, its sharers' reports."""
        if self._specs is None:  # the two subtrees are equal: their post-orders correspond
            self._specs = {id(theirs): mine for theirs, mine in zip(
                _operators(self.core.tree.definition.root), _operators(self.spec), strict=True)}
        mine = self._specs[id(spec)]
        report = Expired(self.name, str(mine.expr), x.doc, x.group,
                         tuple(self.translate(e) for e in x.events), x.tick)
        outer = self._tree.core
        return [report] if outer is None else outer.reports(mine, report)


class Sharing:
    """The shared cores of one event graph: planned per batch of definitions built together,
    looked up while trees are built, counted when trees go."""

    def __init__(self, options: TreeOptions,
                 build: Callable[[ResolvedDefinition, Bounds], EventTree]
                 ) -> None:
        self.options = options
        self._build = build
        self.cores: dict[Hashable, list[Core]] = {}
        self._counts: Counter[Hashable] = Counter()
        self._memo: dict[tuple[int, Bounds], Hashable | None] = {}
        self._made: list[Core] = []
        self._attached: list[SharedView] = []
        self._next = 0

    # --- one batch ---------------------------------------------------------------------------

    def plan(self, roots: list[OperatorSpec]) -> None:
        """Count, among ``roots`` (the trees about to be built), the subtrees that will be
        shared: those two places have. Inside a shared subtree, count once (it is built once)."""
        start = Bounds().tighten(self.options.within)
        sigs: list[list[tuple[OperatorSpec, Bounds, Hashable | None]]] = []
        every: Counter[Hashable] = Counter()
        for root in roots:
            found = list(self._subtrees(root, start))
            sigs.append(found)
            every.update(sig for _, _, sig in found if sig is not None)
        counts: Counter[Hashable] = Counter()
        expanded: set[Hashable] = set()

        def visit(spec: OperatorSpec, bounds: Bounds) -> None:
            sig = signature(spec, self.options, bounds, self._memo)
            if sig is not None and every[sig] >= 2:
                counts[sig] += 1
                if sig in expanded:
                    return
                expanded.add(sig)
            inner = bounds.tighten(spec.mods.within)
            for child in spec.children:
                if isinstance(child, OperatorSpec):
                    visit(child, inner)

        for root in roots:
            visit(root, start)
        self._counts = counts

    def _subtrees(self, spec: OperatorSpec, bounds: Bounds
                  ) -> Iterator[tuple[OperatorSpec, Bounds, Hashable | None]]:
        yield spec, bounds, signature(spec, self.options, bounds, self._memo)
        inner = bounds.tighten(spec.mods.within)
        for child in spec.children:
            if isinstance(child, OperatorSpec):
                yield from self._subtrees(child, inner)

    def commit(self) -> list[Core]:
        """End the batch: its cores and views stay. Returns the cores it made."""
        made = self._made
        self._reset()
        return made

    def rollback(self) -> None:
        """End the batch undone (a tree failed to build): the graph is as before it."""
        for view in self._attached:
            view.core.views.remove(view)
        for core in self._made:
            self._forget(core)
        self._reset()

    def _reset(self) -> None:
        self._counts = Counter()
        self._memo = {}
        self._made = []
        self._attached = []

    # --- building ----------------------------------------------------------------------------

    def view(self, spec: OperatorSpec, tree: EventTree, before: Before, bounds: Bounds
             ) -> SharedView | None:
        """A view of the core for ``spec``'s subtree (built under ``bounds``), or None: build
        it in the tree."""
        if isinstance(spec.expr, ast.Mult):
            return None
        sig = signature(spec, self.options, bounds, self._memo)
        if sig is None:
            return None
        core = next((c for c in self.cores.get(sig, ()) if c.pristine()), None)
        if core is None:
            if self._counts[sig] < 2:
                return None
            core = self._core(spec, sig, bounds)
        view = SharedView(spec, tree, self.options, before, bounds, core)
        core.views.append(view)
        self._attached.append(view)
        return view

    def _core(self, spec: OperatorSpec, sig: Hashable, bounds: Bounds) -> Core:
        self._next += 1
        name = f"{PREFIX}{self._next}"
        refs = tuple(sorted({leaf.ref for leaf in spec.walk()
                             if isinstance(leaf, LeafSpec) and leaf.ref is not None}))
        definition = ResolvedDefinition(ast.Definition(name, spec.expr), spec, refs)
        core = Core(name, sig, self._build(definition, bounds), self.options.windows)
        core.tree.core = core
        self.cores.setdefault(sig, []).append(core)
        self._made.append(core)
        return core

    # --- trees that go -----------------------------------------------------------------------

    def release(self, tree: EventTree) -> list[Core]:
        """``tree`` goes (removed, closed or replaced): its views let go of their cores.
        Returns the cores left without views (gone too, with the cores only they used)."""
        gone: list[Core] = []
        for node in tree.operators:
            if isinstance(node, SharedView) and node.attached:
                core = node.core
                core.views.remove(node)
                if not core.views:
                    self._forget(core)
                    gone.append(core)
                    gone += self.release(core.tree)
        return gone

    def _forget(self, core: Core) -> None:
        """``core`` is no longer shared: later trees cannot find it."""
        found = self.cores[core.signature]
        found.remove(core)
        if not found:
            del self.cores[core.signature]
