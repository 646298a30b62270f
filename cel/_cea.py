"""Complex event automata (seed 003, section 6): unary CEL compiled to a CEA, evaluated through
its lazy I/O-determinisation over a compact structure of runs (section 7).

**Filters to their variables (LP normal form, section 5).** A filter's conjuncts are unary
(``x[...]``, CEQL's atomic filters); each is pushed to the definitions of its variable inside
the filtered formula (every branch of an ``OR`` that defines it), where it becomes part of the
transition's predicate — the paper's local push-down. A filter that cannot be pushed so (a
disjunction over two variables, a variable defined outside the filtered formula, a filter
naming two variables) is refused: the reference evaluator takes it.

**The automaton (Theorem 3's construction, reconstructed).** States are numbered; a transition
``(p, leaf, mark, q)`` reads an event satisfying the leaf's type and predicate, and with mark
``•`` puts its position in the complex event (``◦`` skips it). ``R AS x`` is one ``•``
transition; ``φ ; ψ`` links φ's final states to ψ's first transitions through a waiting state
with a ``◦`` loop on every event (the events skipped between them); ``φ OR ψ`` is the union;
``φ+`` links φ's final states back to its own first transitions the same way. The initial
state loops ``◦`` on every event (a complex event may start anywhere). A complex event is
output at position ``j`` by a run that enters a final state by a ``•`` transition at ``j``.

**Evaluation (Algorithms 1-3, reconstructed).** The automaton is determinised lazily: a
deterministic state is a set of automaton states, and its successor for an event is looked up
by the set of leaves the event satisfies (computed once per event) and the mark, then
memoised. Each active deterministic state holds one list of the paper's structure of runs
(section 7.2): a node is a ``bottom`` (the empty set) or extends a list with a position
(every set of the list plus ``j``), and is also a cell of the list it was created in; a
state's old list joins its skip successor's new list by linking cells (:class:`Bag`), in
constant time. So an event costs work proportional to the number of active states, not to
the number of partial complex events. Determinism makes every complex event the output of
exactly one run, so enumeration never repeats one; it walks cells, not unions, with a stack
of the lists' remaining cells only, so the work before each output is linear in it
(:func:`enumerate_found`, Appendix D.1's guarantee). Nodes carry the largest and smallest
start among their sets, so a window skips whole nodes whose every set started too long ago
(a list's first piece is the one with the latest start, so an expired cell begins a piece
that expired whole), and its rebuild (:func:`prune`) looks only into nodes holding both.

**Selection strategies (Theorem 6 and Appendix D.3, reconstructed).** ``STRICT`` (Algorithm
8): only the empty run (deterministic state 0) skips events, so every complex event is an
interval. ``NEXT`` and ``LAST`` (Algorithms 5-6, :class:`OrderedRuns`): the automaton's runs
kept as an ordered sequence of classes of states, one complex event each, so an event costs
time linear in the automaton. ``MAX`` (Algorithm 7): a deterministic state is a pair ``(T, U)``
— the states reached by the runs of one complex event ``C``, and those reached by runs of a
strict superset of ``C``. Marking ``j``: ``T' = δ•(T) - δ•(U)``, ``U' = δ•(U)``; skipping it:
``U' = δ•(U) | δ◦(U) | δ•(T)`` (a run of ``C`` that marked ``j`` now holds a superset) and
``T' = δ◦(T) - U'`` (a run that a superset's run shares a state with can never end maximal).
A complex event is output where ``T'`` holds a final state and ``U'`` none. NEXT, LAST and
MAX are evaluated so only without a window (a window applies before the strategy, and these
keep the preferred runs only); with one, each position's complex events are enumerated and
selected.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from xmlevents._foundation.tables import complete

from ._errors import CELQueryError, StreamError
from ._events import Event, Value, closed, floor, limit, measure, partition_key
from ._predicates import FilterAnd, Predicate, VarFilter
from ._projection import project_all, projects
from ._reference import recent_first, select
from ._specialised import LeafTests
from .ast import (
    As,
    ContiguousPlus,
    ContiguousSeq,
    EventType,
    Filter,
    Formula,
    Match,
    Or,
    Plus,
    Query,
    Seq,
    Strategy,
    Window,
)

__all__ = ["Leaf", "CEA", "compile_cea", "check_automaton", "Runs", "OrderedRuns",
           "WindowCounter", "Evaluation", "evaluate", "count"]


@dataclass(frozen=True, slots=True)
class Leaf:
    """What one marking transition reads: an event of ``type`` (of ``stream``) satisfying the
    pushed-down unary filters on its variable."""

    type: str
    var: str
    filters: tuple[VarFilter, ...] = ()
    stream: str | None = None

    def test(self, event: Event) -> bool:
        if event.type != self.type and self.type != "*":  # "*": the core dialect's NOT
            return False
        if self.stream is not None and event.stream not in (None, self.stream):
            return False
        valuation = {self.var: event}
        return all(f.evaluate(valuation) for f in self.filters)


@dataclass
class CEA:
    """States 0..n-1, ``initial`` (one state), ``final``; ``marks[p]`` are the ``•``
    transitions ``(leaf index, q)`` out of ``p``, ``skips[p]`` the ``◦`` transitions on every
    event."""

    leaves: list[Leaf] = field(default_factory=list)
    marks: list[list[tuple[int, int]]] = field(default_factory=list)
    skips: list[set[int]] = field(default_factory=list)
    initial: int = 0
    final: set[int] = field(default_factory=set)

    def state(self) -> int:
        self.marks.append([])
        self.skips.append(set())
        return len(self.marks) - 1


def _conjuncts(p: Predicate) -> list[Predicate]:
    return _conjuncts(p.left) + _conjuncts(p.right) if isinstance(p, FilterAnd) else [p]


def _refusal(c: Predicate, inner: Formula) -> str | None:
    """Why the automaton cannot place ``c``, a conjunct of a filter on ``inner``, or None.

    The one place that decides whether the automaton evaluator takes a query (issue 28:
    the command line and the replay each had their own test): :func:`_push` refuses with
    it while compiling, :func:`check_automaton` before any work.
    """
    if not isinstance(c, VarFilter) or len(c.variables) != 1:
        return (f"the filter {c} is not unary (it compares several variables' events, as "
                "CORE's y[id = x.id] does): the automaton evaluator takes unary filters only, "
                "its automata test one event at a time (seed 003, section 6)")
    if not _definitions(inner, c.var):
        return (f"the filter {c} is on {c.var}, which the filtered pattern does not define "
                "outside a '+': it cannot be pushed to its definition")
    return None


def check_automaton(formula: Formula, text: str = "") -> None:
    """Refuse, before any work, a well-formed and safe formula the automaton evaluator does
    not take (the reference evaluator takes every one), naming the filter's line and column
    in ``text`` where the formula was parsed from one.

    Raises:
        CELQueryError: a filter that is not unary, or on a variable the filtered pattern
            defines only inside a ``+``.
    """
    for g in formula.walk():
        if isinstance(g, Filter):
            for c in _conjuncts(g.predicate):
                reason = _refusal(c, g.formula)
                if reason is not None:
                    line, column = g.pos if g.pos is not None else (None, None)
                    raise CELQueryError(reason, text=text if line is not None else "",
                                        line=line, column=column)


def _push(f: Formula, filters: dict[int, list[VarFilter]]) -> Formula:
    """Record every filter's conjuncts against the definitions of their variables in the
    filtered formula (by id of the defining node); return the formula without filters."""
    if isinstance(f, Filter):
        inner = _push(f.formula, filters)
        for c in _conjuncts(f.predicate):
            reason = _refusal(c, inner)
            if reason is not None:
                raise CELQueryError(f"{reason}; use the reference evaluator",
                                    line=None, column=None)
            assert isinstance(c, VarFilter)
            for t in _definitions(inner, c.var):
                filters.setdefault(id(t), []).append(c)
        return inner
    if isinstance(f, As):
        return f
    if isinstance(f, EventType):
        return f
    if isinstance(f, Seq | ContiguousSeq | Or):
        return type(f)(_push(f.left, filters), _push(f.right, filters))
    assert isinstance(f, Plus | ContiguousPlus)
    return type(f)(_push(f.formula, filters))


def _definitions(f: Formula, var: str) -> list[Formula]:
    """The nodes of ``f`` defining ``var`` outside any ``+`` (those a filter on ``f`` reads)."""
    out: list[Formula] = []
    stack = [f]
    while stack:
        g = stack.pop()
        if (isinstance(g, As) and g.var == var) or (isinstance(g, EventType) and g.name == var):
            out.append(g)
        elif isinstance(g, Seq | ContiguousSeq | Or):
            stack.extend(g.children)
        elif isinstance(g, Filter):  # a filter not pushed yet (check_automaton's walk)
            stack.append(g.formula)
    return out


def compile_cea(formula: Formula) -> CEA:
    """The CEA of a well-formed, safe, unary formula (see the module).

    Raises:
        CELQueryError: a filter the local push-down cannot place (see the module).
    """
    filters: dict[int, list[VarFilter]] = {}
    plain = _push(formula, filters)
    a = CEA()
    a.initial = a.state()
    a.skips[a.initial].add(a.initial)
    first, last = _build(a, plain, filters)
    for leaf, q in first:
        a.marks[a.initial].append((leaf, q))
    a.final = set(last)
    return a


def _build(a: CEA, f: Formula, filters: dict[int, list[VarFilter]]
           ) -> tuple[list[tuple[int, int]], set[int]]:
    """The fragment of ``f``: its first transitions (leaf, target) and its final states."""
    if isinstance(f, EventType | As):
        et = f if isinstance(f, EventType) else f.formula
        assert isinstance(et, EventType)
        var = et.name if isinstance(f, EventType) else f.var
        a.leaves.append(Leaf(et.name, var, tuple(filters.get(id(f), ())), et.stream))
        q = a.state()
        return [(len(a.leaves) - 1, q)], {q}
    if isinstance(f, Or):
        f1, l1 = _build(a, f.left, filters)
        f2, l2 = _build(a, f.right, filters)
        return f1 + f2, l1 | l2
    if isinstance(f, Seq | ContiguousSeq):
        f1, l1 = _build(a, f.left, filters)
        f2, l2 = _build(a, f.right, filters)
        _link(a, l1, f2, contiguous=isinstance(f, ContiguousSeq))
        return f1, l2
    assert isinstance(f, Plus | ContiguousPlus)
    f1, l1 = _build(a, f.formula, filters)
    _link(a, l1, f1, contiguous=isinstance(f, ContiguousPlus))
    return f1, l1


def _link(a: CEA, ends: set[int], starts: list[tuple[int, int]], contiguous: bool) -> None:
    """From each state of ``ends``, the transitions ``starts`` at once or, unless
    ``contiguous`` (CEQL's ``:`` and ``:+``: the very next event), after a waiting state that
    skips any number of events."""
    if contiguous:
        for e in ends:
            a.marks[e].extend(starts)
        return
    wait = a.state()
    a.skips[wait].add(wait)
    for leaf, q in starts:
        a.marks[wait].append((leaf, q))
    for e in ends:
        a.skips[e].add(wait)
        for leaf, q in starts:
            a.marks[e].append((leaf, q))


# --- the compact structure of runs -----------------------------------------------------------

#: A deterministic state: a set of automaton states, or under MAX a pair of them.
_Key = frozenset[int] | tuple[frozenset[int], frozenset[int]]

_INF = float("inf")

#: The fewest events between two rebuilds of a window's runs (:meth:`Runs.step`).
_REBUILD_LEAST = 32


class Node:
    """A node of section 7.2's structure and, at once, a cell of the lists it lives in.

    ``pred`` None: a *bottom*, the set holding the empty complex event (the sink of the
    paper's graph). Otherwise an *extend* node: every set of the list ``pred`` with ``pos``
    added. ``next`` links the cell to the one after it in the list it was created in (set
    once by appending, see :class:`Bag`; relinked only where a window's rebuild cuts).
    ``start`` and ``low`` are the largest and the smallest first position among its sets
    (``inf`` for a bottom), so a window drops whole nodes and its rebuild does not look into
    the nodes with nothing old; ``count`` how many sets it holds; ``top`` its largest last
    position (``pos``; -1 for a bottom), which guides ``LIMIT``'s best-first search
    (:func:`first_recent`)."""

    __slots__ = ("count", "jump", "low", "next", "pos", "pred", "start", "top")
    pos: int
    pred: Node | Bag | None
    next: Node | None
    jump: Node | None
    start: float
    low: float
    count: int
    top: int

    def __init__(self, pos: int, pred: Node | Bag) -> None:
        self.pos = self.top = pos
        self.pred = pred
        self.next = self.jump = None
        start = pred.start
        if start == _INF:  # extends a bottom: its one set starts here
            self.start = self.low = pos
        else:
            self.start = start
            self.low = pred.low
        self.count = pred.count


def bottom() -> Node:
    """A fresh bottom node. Each run structure has its own: a bottom is a cell, and a cell
    belongs to one list (under MAX the empty run's list is appended to others)."""
    n = Node.__new__(Node)
    n.pos, n.top, n.pred, n.next, n.jump = -1, -1, None, None, None
    n.start = n.low = _INF
    n.count = 1
    return n


class Bag:
    """A list of the paper's Algorithm 1 made of ``pieces`` — nodes and older lists, each
    a piece of one list only — appended in constant time per piece: the last cell of each
    piece is linked to the first of the next (``first`` .. ``last`` are the cells to walk).

    Why the links are safe though lists are shared (reconstruction of section 7.2's "lazy
    copy"): a live list (a deterministic state's, after an event) is a piece of at most one
    new list, the state's skip successor's (I/O-determinism); so the live lists never share
    a cell, appending sets a cell's ``next`` at most once, when its list stops being the
    last piece, and a list kept as an extend node's ``pred`` walks from its ``first`` to
    its own ``last`` only, never past it. (A window's rebuild cuts lists in place and links
    what is left: :func:`prune`.) ``pieces`` keeps the tree of unions for what walks by
    structure rather than by cells: ``LIMIT``'s best-first search and the window's rebuild."""

    __slots__ = ("count", "first", "last", "low", "pieces", "start", "top")
    pieces: tuple[Node | Bag, ...]
    first: Node
    last: Node
    start: float
    low: float
    count: int
    top: int

    def __init__(self, a: Node | Bag, b: Node | Bag) -> None:
        # Two pieces (a state's list with several pieces is a chain of these, as the
        # paper's appends are one after the other); straight-line for speed. The piece
        # with the later start goes first, so a list's first cell has its largest start
        # and a window's walk can pass over a whole piece that expired at once (``jump``).
        x, y = a.start, b.start
        if y > x:
            a, b = b, a
            x, y = y, x
        self.start = x
        self.pieces = (a, b)
        if type(a) is Bag:
            self.first, tail = a.first, a.last
        else:
            self.first = tail = a  # type: ignore[assignment]
        if type(b) is Bag:
            head, self.last = b.first, b.last
        else:
            head = self.last = b  # type: ignore[assignment]
        tail.next = head
        tail.jump = self.last  # the piece starting at ``next`` ends there
        x, y = a.low, b.low
        self.low = x if x < y else y
        self.count = a.count + b.count
        i, k = a.top, b.top
        self.top = i if i > k else k


def _cells(lst: Node | Bag) -> tuple[Node, Node]:
    """The first and last cells of a list."""
    if type(lst) is Bag:
        return lst.first, lst.last
    assert isinstance(lst, Node)
    return lst, lst


def enumerate_found(found: Iterable[Node], oldest: float = -_INF
                    ) -> Iterator[tuple[int, ...]]:
    """The sets of the nodes ``found`` whose first position is at least ``oldest``, each once,
    as sorted tuples, with constant delay: the work between two outputs is linear in the
    next output (Algorithm 3's guarantee, reconstructed).

    A depth-first walk of the graph over cells, not over union nodes: going down a cell
    emits its position; the stack holds only the rest of lists not yet walked (never an
    exhausted level, the role of Algorithm 3's black-white stack), so backtracking is one
    pop; the positions after a cell are shared as a linked list (``(pos, rest)``), so
    nothing is copied before the output. Under a window, a cell whose every set started
    too long ago is the first of a piece that all did (its first cell has its latest
    start, :class:`Bag`), which the walk passes over in one step (``jump``); pieces that
    expired one after another since the last rebuild (:func:`prune`) cost a step each.
    """
    todo = [n for n in found if n.start >= oldest]
    todo.reverse()
    # (the cell after which the rest of a list is still to walk, the list's last cell,
    # the positions after the list as a linked list)
    stack: list[tuple[Node, Node, tuple[int, object] | None]] = []
    pop, push = stack.pop, stack.append
    cell: Node
    while True:
        if stack:
            prior, last, after = pop()
            nxt = prior.next
            assert nxt is not None
            while nxt.start < oldest:  # the piece starting here expired: pass it over
                end = prior.jump  # its last cell
                assert end is not None
                if end is last:
                    break
                prior, nxt = end, end.next
                assert nxt is not None
            else:
                cell = nxt
                if cell is not last:
                    push((cell, last, after))  # the rest of this list: the next alternative
            if nxt.start < oldest:
                continue  # the rest of this list expired
        elif todo:
            cell, after = todo.pop(), None
        else:
            return
        # down from ``cell`` (young) to a bottom, pushing the rest of each list passed
        while True:
            pred = cell.pred
            if pred is None:  # a bottom: the positions after it are one complex event
                out: list[int] = []
                link = after
                while link is not None:
                    out.append(link[0])
                    link = link[1]  # type: ignore[assignment]
                yield tuple(out)
                break
            after = (cell.pos, after)
            if type(pred) is Bag:
                # its first cell has its latest start, the cell's own: young
                cell, last = pred.first, pred.last
                if cell is not last:
                    push((cell, last, after))
            else:
                assert isinstance(pred, Node)
                cell = pred


def first_recent(found: Iterable[Node], limit: int, oldest: float = -_INF
                 ) -> list[tuple[int, ...]]:
    """The ``limit`` sets of the nodes ``found`` (first position at least ``oldest``) that
    come first in ``LIMIT``'s order (:func:`~._reference.recent_first`), found best-first
    without enumerating the others: a heap of partial sets — the positions so far, from the
    last backwards, negated, then ``-top`` of the list still to read, a bound no completion
    beats — so the most recent sets are reached first (``top`` of a bag is its pieces' best;
    a bag is opened into its pieces, a constant number)."""
    heap: list[tuple[tuple[int, ...], int, tuple[int, ...], Node | Bag]] = []
    tie = 0
    push, pop = heapq.heappush, heapq.heappop
    for f in found:
        push(heap, ((-f.top,), tie, (), f))
        tie += 1
    out: list[tuple[int, ...]] = []
    while heap and len(out) < limit:
        _, _, key, n = pop(heap)
        if n.start < oldest:
            continue
        if type(n) is Bag:
            for piece in n.pieces:
                push(heap, (_bound(key, piece), tie, key, piece))
                tie += 1
            continue
        assert isinstance(n, Node)
        pred = n.pred
        if pred is None:
            if -key[-1] >= oldest:  # (a found node put a position in the key)
                out.append(tuple(-p for p in reversed(key)))
            continue
        longer = (*key, -n.pos)
        push(heap, (_bound(longer, pred), tie, longer, pred))
        tie += 1
    return out


def _bound(key: tuple[int, ...], lst: Node | Bag) -> tuple[int, ...]:
    """What no completion of ``key`` through ``lst`` beats in ``LIMIT``'s order: ``key``
    itself for a bottom (the shorter comes first), else ``key`` and ``lst``'s best."""
    if type(lst) is Node and lst.pred is None:
        return key
    return (*key, -lst.top)


def prune(roots: dict[int, Node | Bag], oldest: float) -> dict[int, Node | Bag]:
    """The active lists without the sets that started before ``oldest`` (a window's end),
    cut in place: the thresholds only grow and every walk of the structure happens before
    the next event (:meth:`Evaluation.matches`), so no walk can need what is cut. A list
    whose every set is old (``start``) is dropped; one whose every set is young (``low``)
    is not looked into; the others lose their old pieces, the pieces left are linked
    again, and a node's figures follow its list's. Iterative, post-order (lists nest as
    deep as the window); shared lists (a node's ``pred`` is also a piece) cut once."""
    done: set[int] = set()
    out: dict[int, Node | Bag] = {}
    for d, root in roots.items():
        if root.start < oldest:
            continue
        stack: list[Node | Bag] = [root]
        while stack:
            n = stack[-1]
            if id(n) in done or n.low >= oldest:
                stack.pop()
                continue
            if type(n) is Bag:
                pending = [c for c in n.pieces if c.start >= oldest and c.low < oldest
                           and id(c) not in done]
                if pending:
                    stack.extend(pending)
                    continue
                stack.pop()
                done.add(id(n))
                kept = [c for c in n.pieces if c.start >= oldest]
                _restate(n, kept)
            else:
                assert isinstance(n, Node)
                pred = n.pred
                assert pred is not None  # a bottom's ``low`` is inf
                if pred.low < oldest and id(pred) not in done:
                    stack.append(pred)
                    continue
                stack.pop()
                done.add(id(n))
                n.low, n.count = pred.low, pred.count
        out[d] = root
    return out


def _restate(bag: Bag, pieces: list[Node | Bag]) -> None:
    """``bag`` made of ``pieces`` (a subsequence of its own, cut in place): linked again,
    its figures recomputed (its ``start``, the largest, is that of a piece kept)."""
    bag.pieces = tuple(pieces)
    prior: Node | None = None
    low, count, top = _INF, 0, -1
    for p in pieces:
        head, tail = _cells(p)
        if prior is None:
            bag.first = head
        else:
            prior.next, prior.jump = head, tail
        prior = tail
        low = p.low if p.low < low else low
        count += p.count
        top = p.top if p.top > top else top
    assert prior is not None
    # what followed the old last cell may be cut: a list holding this one links it again
    # (it is cut too: it holds something old), so nothing dropped is kept alive from here
    prior.next = prior.jump = None
    bag.last = prior
    bag.low, bag.count, bag.top = low, count, top


class Runs:
    """The evaluation of one CEA over one stream (see the module): :meth:`step` per event.

    Positions must increase but may skip (a partition's events carry the stream's
    positions). With a window of ``n`` events (a set fits while ``max - min <= n``), once
    the positions have advanced ``n`` since the last time the active nodes are rebuilt
    without the sets that can no longer fit (:func:`prune`): memory follows the window, not
    the stream, at a cost per event amortised over the window.
    """

    _ids: dict[_Key, int]
    _keys: list[_Key]
    _final: list[bool]
    _next: dict[tuple[int, int], tuple[int, int]]
    _by_type: dict[str, int | LeafTests]
    # for WindowCounter: per set of satisfied leaves, each state's successors that exist and
    # whether marking ends a run there
    _targets: dict[int, tuple[dict[int, tuple[int, ...]], dict[int, bool]]]
    # per set of satisfied leaves, the deterministic states it leaves as they are (skip to
    # themselves, mark nothing), found so far: an event leaving every active state so
    # changes nothing, and costs one set comparison (issue 32, item 4)
    _inert: dict[int, set[int]]

    def __init__(self, cea: CEA, window: int | None = None,
                 strategy: Strategy = Strategy.ALL, like: Runs | None = None) -> None:
        self.cea = cea
        self.window = window
        self.strategy = strategy
        self._maximal = strategy is Strategy.MAX
        self._strict = strategy is Strategy.STRICT
        self._bottom = bottom()
        self.active: dict[int, Node | Bag] = {0: self._bottom}
        self._pruned = -1  # the position of the last rebuild
        if like is not None:
            # Another partition's runs of the same automaton and strategy: the deterministic
            # states and transitions built so far are shared, not built again.
            assert like.cea is cea and like.strategy is strategy
            self._ids, self._keys, self._final = like._ids, like._keys, like._final
            self._next, self._by_type, self._targets = like._next, like._by_type, like._targets
            self._inert = like._inert
            return
        initial = frozenset((cea.initial,))
        start: _Key = (initial, frozenset()) if self._maximal else initial
        self._ids, self._keys, self._final = {}, [], []
        self._state(start)
        self._next, self._by_type, self._targets, self._inert = {}, {}, {}, {}

    @property
    def empty(self) -> bool:
        """Whether no partial complex event is held (as new or just reset)."""
        return len(self.active) == 1 and self.active.get(0) is self._bottom

    def reset(self) -> None:
        """Discard every partial complex event (CEQL's ``CONSUME BY``): what follows starts
        afresh."""
        self._bottom = bottom()
        self.active = {0: self._bottom}

    def _state(self, key: _Key) -> int:
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self._keys)
            self._keys.append(key)
            final = self.cea.final
            if isinstance(key, tuple):  # MAX: no run of a strict superset is accepting
                self._final.append(bool(key[0] & final) and not key[1] & final)
            else:
                self._final.append(bool(key & final))
        return found

    def _successors(self, d: int, satisfied: int) -> tuple[int, int]:
        """The deterministic successors of ``d`` (skip, mark) for an event satisfying the
        leaves in the bitmask ``satisfied``; -1 where empty. Memoised (lazy determinisation).

        Under ``STRICT`` a run that has marked an event may not skip one (Algorithm 8: only
        the empty run, deterministic state 0, skips), so every complex event is an interval.
        Under ``MAX`` a state is a pair ``(T, U)`` (Theorem 4's construction for MAX,
        reconstructed in the module)."""
        key = (d, satisfied)
        found = self._next.get(key)
        if found is not None:
            return found
        state = self._keys[d]
        if isinstance(state, tuple):
            here, larger = state
            m_here, m_larger = self._mark(here, satisfied), self._mark(larger, satisfied)
            s_larger = m_larger | self._skip(larger) | m_here
            k_here = m_here - m_larger
            s_here = self._skip(here) - s_larger
            found = (self._state((s_here, s_larger)) if s_here else -1,
                     self._state((k_here, m_larger)) if k_here else -1)
        else:
            skip, mark = self._skip(state), self._mark(state, satisfied)
            if self._strict and d != 0:
                skip = frozenset()
            found = (self._state(skip) if skip else -1, self._state(mark) if mark else -1)
        self._next[key] = found
        if found == (d, -1):
            self._inert.setdefault(satisfied, set()).add(d)
        return found

    def _skip(self, states: frozenset[int]) -> frozenset[int]:
        return frozenset(q for p in states for q in self.cea.skips[p])

    def _mark(self, states: frozenset[int], satisfied: int) -> frozenset[int]:
        return frozenset(q for p in states for leaf, q in self.cea.marks[p]
                         if satisfied >> leaf & 1)

    def satisfied(self, event: Event) -> int:
        """The bitmask of the leaves ``event`` satisfies: per type, the leaves without a
        filter give a constant part; only filtered leaves of its type are tested, by one
        function compiled for the type (:mod:`._specialised`); a type no leaf tests is a
        constant."""
        found = self._by_type.get(event.type)
        if found is None:
            found = self._tester(event.type)
        return found if isinstance(found, int) else found.fn(event)

    def _tester(self, etype: str) -> int | LeafTests:
        fixed, tested = 0, []
        for i, leaf in enumerate(self.cea.leaves):
            if leaf.type == etype or leaf.type == "*":
                if leaf.filters or leaf.stream is not None:
                    # (a filter is pushed to the definitions of its own variable: _push)
                    assert all(f.var == leaf.var for f in leaf.filters)
                    tested.append((1 << i, leaf.var, leaf.stream,
                                   tuple(f.condition for f in leaf.filters)))
                else:
                    fixed |= 1 << i
        found = LeafTests(fixed, tested) if tested else fixed
        self._by_type[etype] = found
        return found

    def step(self, position: int, event: Event, oldest: float | None = None,
             blind: bool = False) -> list[Node] | None:
        """Read the event at ``position``; the nodes of the complex events ending here (the
        extend nodes created here that entered a final state), None if there are none.

        ``oldest``: the smallest first position a complex event ending here may have (a
        duration window's, :class:`_Clock`), by default that of the window in events;
        ``blind``: the event may be in no complex event (it lacks what the window measures)
        — it is read, and skipped, but never marked."""
        if blind:
            bits = 0
        else:  # self.satisfied, inline
            test = self._by_type.get(event.type)
            if test is None:
                test = self._tester(event.type)
            bits = test if isinstance(test, int) else test.fn(event)
        if oldest is None:
            oldest = -_INF if self.window is None else position - self.window
        since = position - self._pruned
        if oldest > -_INF and since >= position - oldest and since >= _REBUILD_LEAST:
            # The thresholds only grow: what starts before this one can never fit again.
            # Rebuilding once the stream has advanced by the window's length (and at least
            # _REBUILD_LEAST events: a window of a few events rebuilt at every other one)
            # costs, amortised, a constant per event and keeps memory to about two windows
            # (plus those few events); what expired meanwhile is passed over by every walk,
            # which compares each list's start with the threshold. Done before the
            # event is read, so the nodes it returns are never relinked by a rebuild until
            # the next event (their enumeration walks their cells' links).
            self.active = prune(self.active, oldest)
            self._pruned = position
        active = self.active
        inert = self._inert.get(bits)
        if inert is not None and active.keys() <= inert:
            # Nothing changes: every state skips to itself and marks nothing (most events
            # of a selective query). A list whose sets all expired stays until the next
            # event that changes a state or the next rebuild (at most a window on) drops it,
            # as either would; none of its sets can be output meanwhile.
            return None
        # each new state's list (Algorithm 1, lines 9-13): the old lists that skip to it
        # and the new extend nodes that mark into it, appended in turn
        new: dict[int, Node | Bag] = {}
        out: list[Node] | None = None
        memo = self._next
        final = self._final
        for d, lst in active.items():
            if lst.start < oldest:
                continue  # nothing stored here can fit the window any more
            found = memo.get((d, bits))
            skip, mark = found if found is not None else self._successors(d, bits)
            if skip >= 0:
                prior = new.get(skip)
                new[skip] = lst if prior is None else Bag(prior, lst)
            if mark >= 0:
                extended = Node(position, lst)
                prior = new.get(mark)
                new[mark] = extended if prior is None else Bag(prior, extended)
                if final[mark]:
                    # A deterministic state is the set of automaton states every run with
                    # these marks is in; holding a final state, each of its sets is a run
                    # that entered a final state by marking this event: a complex event.
                    if out is None:
                        out = [extended]
                    else:
                        out.append(extended)
        self.active = new
        return out

    @property
    def states(self) -> int:
        """How many deterministic states were built."""
        return len(self._keys)


class OrderedRuns:
    """NEXT and LAST evaluated in time linear in the automaton per event (Algorithms 5-6,
    reconstructed): one best run per automaton state, not every run.

    The runs are kept as a sequence of classes, disjoint sets of automaton states, best
    first in the strategy's order, each with the one complex event (a chain of ``extend``
    nodes) its runs share. Reading an event, each class ``C`` gives ``C | {j}`` (its marking
    transitions) and ``C`` (its skips); under NEXT the new order is ``M1, K1, M2, K2, ...``
    (marking wins over not marking, and an older difference decides first), under LAST
    ``M1, M2, ..., K1, K2, ...`` (every complex event holding ``j`` beats every one without
    it). A state reached by several classes keeps the first: the others' runs through it can
    never give a preferred complex event. The complex event ending at ``j`` is the first
    marking class holding a final state. The sequence of classes is a deterministic state,
    built lazily and memoised with its plan per set of satisfied leaves.
    """

    _runs: Runs
    _ids: dict[tuple[frozenset[int], ...], int]
    _keys: list[tuple[frozenset[int], ...]]
    # (state, satisfied) -> (next state, for each new class (old class, marked), the index of
    # the class giving the output or -1)
    _plans: dict[tuple[int, int], tuple[int, tuple[tuple[int, bool], ...], int]]

    def __init__(self, cea: CEA, strategy: Strategy, like: OrderedRuns | None = None) -> None:
        assert strategy in (Strategy.NEXT, Strategy.LAST)
        self.cea = cea
        self.strategy = strategy
        self._last = strategy is Strategy.LAST
        self.state = 0
        self.nodes: list[Node] = [bottom()]
        if like is not None:  # share the states and plans built so far (see Runs)
            assert like.cea is cea and like.strategy is strategy
            self._runs, self._ids, self._keys = like._runs, like._ids, like._keys
            self._plans = like._plans
            return
        self._runs = Runs(cea)  # for its leaf tests and the automaton's successor sets
        start = (frozenset((cea.initial,)),)
        self._ids, self._keys, self._plans = {start: 0}, [start], {}

    @property
    def empty(self) -> bool:
        """Whether no partial complex event is held (as new or just reset)."""
        return self.state == 0

    def reset(self) -> None:
        """Discard every partial complex event (``CONSUME BY``)."""
        self.state, self.nodes = 0, [bottom()]

    def _plan(self, d: int, satisfied: int) -> tuple[int, tuple[tuple[int, bool], ...], int]:
        found = self._plans.get((d, satisfied))
        if found is not None:
            return found
        classes = self._keys[d]
        moves = [(i, True) for i in range(len(classes))]
        skips = [(i, False) for i in range(len(classes))]
        order = moves + skips if self._last else [m for i in range(len(classes))
                                                  for m in (moves[i], skips[i])]
        taken: set[int] = set()
        new: list[frozenset[int]] = []
        plan: list[tuple[int, bool]] = []
        out = -1
        runs = self._runs
        for i, marked in order:
            src = classes[i]
            reached = (runs._mark(src, satisfied) if marked else runs._skip(src)) - taken
            if not reached:
                continue
            taken |= reached
            if marked and out < 0 and reached & self.cea.final:
                out = len(new)
            new.append(reached)
            plan.append((i, marked))
        key = tuple(new)
        nd = self._ids.get(key)
        if nd is None:
            nd = self._ids[key] = len(self._keys)
            self._keys.append(key)
        found = self._plans[(d, satisfied)] = (nd, tuple(plan), out)
        return found

    def step(self, position: int, event: Event) -> list[Node] | None:
        """Read the event at ``position``; the node of the one complex event ending here."""
        d, plan, out = self._plan(self.state, self._runs.satisfied(event))
        nodes = self.nodes
        self.nodes = [Node(position, nodes[i]) if marked else nodes[i] for i, marked in plan]
        self.state = d
        return [self.nodes[out]] if out >= 0 else None

    @property
    def states(self) -> int:
        """How many deterministic states (sequences of classes) were built."""
        return len(self._keys)


Vector = dict[int, int]  # deterministic state -> how many runs are in it


class WindowCounter:
    """How many complex events that fit a window end at each position, without the
    structure of runs: the runs counted per deterministic state, at a cost per event that
    does not grow with the window (amortised).

    Reconstruction (the paper has no windows: this is its Algorithm 1's counting under a
    sliding window). Event ``t`` maps a vector of run counts ``V`` (deterministic state ->
    runs in it, the empty run left out) to ``V·M_t + u_t``: ``M_t`` sends each state's runs
    to its skip and mark successors, ``u_t`` is the run started by marking ``t`` (the empty
    run's mark successor). The runs that fit are those started at ``oldest`` or later, a
    sum over starts of their vectors carried through the events since. The queue of two
    stacks keeps that sum: the *front* holds, for each start up to the last turn ``f``, the
    vectors of the starts from it to ``f`` summed, carried to ``f`` (``A_i``); the *back*
    the product ``P`` of the maps since ``f`` (rows for the states the front uses) and the
    vector ``w`` of the starts since ``f``. The runs that fit are ``A_oldest·P + w``. When
    the front runs out, the back becomes the front: its ``A_i`` computed backwards through
    ``C_i = M_(i+1)·C_(i+1)`` (rows for the states occupied at ``i`` only), a cost spread
    over the events it covers.
    """

    def __init__(self, runs: Runs) -> None:
        self.det = runs  # its deterministic states and transitions (shared)
        cea = runs.cea
        # the leaves whose marking may enter a final state: no run ends on an event without
        self._ending = 0
        for transitions in cea.marks:
            for leaf, q in transitions:
                if q in cea.final:
                    self._ending |= 1 << leaf
        self.reset()

    def reset(self) -> None:
        """No run held (new, or ``CONSUME BY``)."""
        self.front: list[tuple[int, Vector]] = []  # (start, A_start), oldest first
        self.next = 0  # the first start of the front still in the window
        # since the turn: (position, satisfied leaves, the states w occupies after it)
        self.back: list[tuple[int, int, tuple[int, ...]]] = []
        # P, by row: the rows' vectors, and the state of each row's index (fixed per turn)
        self.rows: list[Vector] = []
        self.row_of: dict[int, int] = {}
        self.w: Vector = {}

    @property
    def empty(self) -> bool:
        """Whether no run is held."""
        return self.next >= len(self.front) and not self.w

    def _successors(self, d: int, bits: int) -> tuple[int, int]:
        found = self.det._next.get((d, bits))
        return found if found is not None else self.det._successors(d, bits)

    def _turn(self) -> None:
        """The back becomes the front (see the class). A row of ``C`` is shared, not copied,
        where a state has one successor (rows are never changed once made)."""
        back = self.back
        memo, successors = self.det._next, self.det._successors
        front: list[tuple[int, Vector]] = []
        total: Vector = {}
        # C for the events after the one read: rows for the states occupied after it
        columns: dict[int, Vector] = {d: {d: 1} for d in back[-1][2]} if back else {}
        for k in range(len(back) - 1, -1, -1):
            position, bits, _ = back[k]
            start = (memo.get((0, bits)) or successors(0, bits))[1]
            if start >= 0:
                total = dict(total)
                for d, c in columns[start].items():
                    total[d] = total.get(d, 0) + c
                front.append((position, total))
            if k:  # C one event earlier: each occupied state's row is its successors' rows
                earlier: dict[int, Vector] = {}
                for d in back[k - 1][2]:
                    skip, mark = memo.get((d, bits)) or successors(d, bits)
                    if skip < 0:
                        earlier[d] = columns[mark] if mark >= 0 else {}
                    elif mark < 0:
                        earlier[d] = columns[skip]
                    else:
                        row = dict(columns[skip])
                        for q, c in columns[mark].items():
                            row[q] = row.get(q, 0) + c
                        earlier[d] = row
                columns = earlier
        front.reverse()
        self.front, self.next, self.back, self.w = front, 0, [], {}
        support = list(front[0][1]) if front else []
        self.rows = [{d: 1} for d in support]
        self.row_of = {d: i for i, d in enumerate(support)}

    def step(self, position: int, event: Event, oldest: float, blind: bool = False) -> int:
        """Read the event at ``position``; how many complex events ending here start at
        ``oldest`` or later."""
        det = self.det
        bits = 0 if blind else det.satisfied(event)
        front = self.front
        while self.next < len(front) and front[self.next][0] < oldest:
            self.next += 1
        if self.next >= len(front) and self.back and self.back[0][0] < oldest:
            self._turn()  # the front is spent and the back holds starts that expired
            front = self.front
            while self.next < len(front) and front[self.next][0] < oldest:
                self.next += 1
        final, memo, successors = det._final, det._next, det._successors
        rows, w = self.rows, self.w
        found = 0
        start = (memo.get((0, bits)) or successors(0, bits))[1]
        # per set of satisfied leaves, kept for every event that has it (and shared by the
        # partitions): each state's successors (those that exist), and whether marking
        # ends a run there
        tables = det._targets.get(bits)
        if tables is None:
            tables = det._targets[bits] = ({}, {})
        targets, ends = tables
        if bits & self._ending:  # only then can a run end here (inlined for speed)
            fitting = dict(w)  # the runs that fit, by state: A_oldest·P + w
            if self.next < len(front):
                for e, c in front[self.next][1].items():
                    for d, x in rows[self.row_of[e]].items():
                        fitting[d] = fitting.get(d, 0) + c * x
            for d, c in fitting.items():
                end = ends.get(d)
                if end is None:
                    mark = (memo.get((d, bits)) or successors(d, bits))[1]
                    end = ends[d] = mark >= 0 and final[mark]
                if end:
                    found += c
            if start >= 0 and final[start]:
                found += 1  # a complex event of this one event
        # carry everything through this event (v·M, inlined); the run it starts joins w
        carried: list[Vector] = []
        for v in (w, *rows):
            out: Vector = {}
            for d, c in v.items():
                to = targets.get(d)
                if to is None:
                    to = targets[d] = tuple(
                        q for q in (memo.get((d, bits)) or successors(d, bits)) if q >= 0)
                for q in to:
                    out[q] = out.get(q, 0) + c
            carried.append(out)
        w = carried[0]
        self.rows = carried[1:]
        if start >= 0:
            w[start] = w.get(start, 0) + 1
        self.w = w
        self.back.append((position, bits, tuple(w)))
        return found


class _Clock:
    """A duration (``WITHIN d SECONDS``) or attribute (``WITHIN n [attr]``) window as the
    smallest first position that still fits: with the measures in order, a complex event
    fits when its first event's measure is at least the last one's minus the window. Keeps
    the measured events of the window only (a deque), so the cost is constant amortised.
    Measures and window as :func:`~._events.measure` and :func:`~._events.limit` give them
    (times in milliseconds, integers kept: exact where the values are integers)."""

    def __init__(self, window: Window) -> None:
        self.window = window
        self.size = limit(window)
        self.closed = closed(window)
        self.seen: deque[tuple[int | float, int]] = deque()
        self.oldest: float = -_INF

    def advance(self, event: Event, value: int | float | None) -> float:
        """The threshold after ``event`` (measured ``value``; None: unchanged)."""
        if value is None:
            return self.oldest
        seen = self.seen
        if seen and value < seen[-1][0]:
            # shown in the window's unit: seconds for a duration, as the events give them
            scale = 1000 if self.window.kind == "seconds" else 1
            raise StreamError(
                f"line {event.position + 1} (the event at position {event.position}): "
                f"WITHIN {self.window} measures {value / scale:g} here, less "
                f"than {seen[-1][0] / scale:g} before it; the automaton evaluator needs the "
                "measures in order (the reference evaluator, --reference, does not)")
        seen.append((value, event.position))
        # exact (an int, or a Fraction from a fractional float); an event at the floor is
        # inside a closed window, outside a half-open one (an attribute's: CORE's n - 1)
        least = value - self.size if type(value) is int else floor(self.window, value)
        if self.closed:
            while seen[0][0] < least:
                seen.popleft()
        else:
            while seen[0][0] <= least:
                seen.popleft()
        self.oldest = seen[0][1]
        return self.oldest


def _outside(window: Window, first: int | float, last: int | float) -> bool:
    """Whether a measure ``first`` is too old for a complex event ending at measure ``last``
    (exactly; :func:`~._events.fits`' convention for the window's unit)."""
    least = floor(window, last)
    return first < least if closed(window) else first <= least


@dataclass(frozen=True, slots=True)
class Native:
    """How the automaton evaluates one strategy (see :class:`_Partitions`)."""

    #: The automaton applies it under a window too (else only without one: with a window,
    #: the complex events of each position are enumerated and selected).
    windowed: bool
    #: Its runs are :class:`OrderedRuns` (the preferred run per state), not :class:`Runs`.
    ordered: bool


#: Each strategy's evaluation by the automaton; complete when the module is imported (issue
#: 28: a strategy forgotten in the test this replaces counted as native without a window and
#: was evaluated as ALL).
NATIVE: dict[Strategy, Native] = complete(Strategy, {
    Strategy.ALL: Native(windowed=True, ordered=False),
    Strategy.ANY: Native(windowed=True, ordered=False),
    Strategy.STRICT: Native(windowed=True, ordered=False),
    Strategy.NEXT: Native(windowed=False, ordered=True),
    Strategy.LAST: Native(windowed=False, ordered=True),
    Strategy.MAX: Native(windowed=False, ordered=False),
}, "how the automaton evaluates each strategy")


class _Partitions:
    """One run structure per partition key (:func:`~._events.partition_key`), created on the
    partition's first event; ``CONSUME BY`` resets them.

    The strategy is evaluated by the automaton where the paper gives an algorithm for it
    (:attr:`native`): ``STRICT`` always, ``NEXT``, ``LAST`` and ``MAX`` without a window —
    a window is applied before the strategy (a strategy chooses among the complex events
    that fit), which their algorithms, keeping only the preferred runs, cannot do; there the
    complex events of each position are enumerated and selected (:func:`~._reference.select`).
    """

    def __init__(self, query: Query, counting: bool = False) -> None:
        self.query = query
        self.cea = compile_cea(query.formula)
        window = query.within
        self.size = None if window is None or window.kind != "events" else int(window.size)
        self.measured = None if window is None or window.kind == "events" else window
        how = NATIVE[query.strategy]
        self.native = how.windowed or window is None
        self.ordered = self.native and how.ordered
        # counting under a window: run counts per state (WindowCounter), no structure of runs
        self.counting = counting and window is not None and self.native and not self.ordered
        self.runs: dict[tuple[Value, ...], Runs | OrderedRuns | WindowCounter] = {}
        self.clocks: dict[tuple[Value, ...], _Clock] = {}
        # the first runs built: the others share its deterministic states
        self._model: Runs | OrderedRuns | None = None
        self._last: dict[tuple[Value, ...], int] = {}  # each partition's last position
        self._latest: int | float | None = None  # the largest measure yet, while in order
        self._ordered_measures = True
        # without PARTITION BY: the one partition's runs and clock (see step)
        self._single: tuple[Runs | OrderedRuns | WindowCounter, _Clock | None] | None = None
        self._sweep_at = 0

    def _new(self) -> Runs | OrderedRuns | WindowCounter:
        strategy = self.query.strategy
        model = self._model
        r: Runs | OrderedRuns
        if self.ordered:
            r = OrderedRuns(self.cea, strategy,
                            model if isinstance(model, OrderedRuns) else None)
        else:
            r = Runs(self.cea, self.size, strategy if self.native else Strategy.ALL,
                     model if isinstance(model, Runs) else None)
        if model is None:
            self._model = r
        if self.counting:
            assert isinstance(r, Runs)
            return WindowCounter(r)
        return r

    def _sweep(self, position: int) -> None:
        """Drop the partitions that hold nothing a later event could complete: no partial
        complex event, or (under a window) every event of theirs too old for any complex
        event ending from now on. Run every so often (amortised: a constant per event), so
        that memory follows the partitions live in the window, not all there ever were."""
        size = self.size
        latest = self._latest if self._ordered_measures else None
        for key in [k for k in self.runs]:
            clock = self.clocks.get(key)
            # the clock keeps the partition's last measure (nothing pops the newest)
            last_measure = clock.seen[-1][0] if clock is not None and clock.seen else None
            stale = (size is not None and self._last[key] < position - size) or (
                self.measured is not None and latest is not None
                and last_measure is not None
                and _outside(self.measured, last_measure, latest))
            if stale or self.runs[key].empty:
                del self.runs[key], self._last[key]
                self.clocks.pop(key, None)
        self._sweep_at = position + max(64, 2 * len(self.runs))

    def step(self, event: Event
             ) -> tuple[Runs | OrderedRuns | WindowCounter, list[Node] | int | None, float] | None:
        """Read ``event`` in its partition: its runs, the node of the complex events ending
        here and the smallest first position they may have; None if it is in no partition.

        Raises:
            StreamError: under a duration or attribute window, a measure smaller than the
                one before it in the partition (the automaton needs them in order).
        """
        position = event.position
        if not self.query.partition_by:
            # One partition (most queries): its runs and clock kept at hand, no key, no sweep
            # (issue 32, item 4: a third of the automaton's time per event was here).
            single = self._single
            if single is None:
                single = self._single = (self.runs.setdefault((), self._new()),
                                         self.clocks.setdefault((), _Clock(self.measured))
                                         if self.measured is not None else None)
            one, single_clock = single
            if single_clock is None:
                oldest = -_INF if self.size is None else position - self.size
                if isinstance(one, OrderedRuns):  # no window
                    return one, one.step(position, event), oldest
                return one, one.step(position, event, oldest), oldest
            assert self.measured is not None and not isinstance(one, OrderedRuns)
            value = measure(self.measured, event)
            oldest = single_clock.advance(event, value)
            return one, one.step(position, event, oldest, blind=value is None), oldest
        key = partition_key(self.query.partition_by, event)
        if key is None:
            return None
        if position >= self._sweep_at:
            self._sweep(position)
        r = self.runs.get(key)
        if r is None:
            r = self.runs[key] = self._new()
        self._last[key] = position
        if self.measured is None:
            oldest = -_INF if self.size is None else position - self.size
            if isinstance(r, OrderedRuns):  # no window
                return r, r.step(position, event), oldest
            return r, r.step(position, event, oldest), oldest
        clock = self.clocks.get(key)
        if clock is None:
            clock = self.clocks[key] = _Clock(self.measured)
        value = measure(self.measured, event)
        oldest = clock.advance(event, value)
        if value is not None:
            if self._latest is not None and value < self._latest:
                self._ordered_measures = False  # in order per partition only: keep them all
            self._latest = value if self._latest is None else max(self._latest, value)
        assert not isinstance(r, OrderedRuns)  # a window: NEXT and LAST are not native
        return r, r.step(position, event, oldest, blind=value is None), oldest

    def horizon(self, position: int) -> float:
        """The smallest position a complex event ending after ``position`` (the last event
        read) may hold (issue 29): ``position + 1 - n`` under ``WITHIN n EVENTS``; under a
        duration or attribute window the oldest position still inside any partition's clock
        (measures only grow in a partition, so its floor only rises); ``-inf`` without a
        window (a run may still use any earlier event)."""
        if self.size is not None:
            return position + 1 - self.size
        if self.measured is None:
            return -_INF
        oldest = float(position + 1)  # a partition yet to come starts after this
        for clock in self.clocks.values():
            if clock.seen:
                oldest = min(oldest, clock.seen[0][1])
        return oldest

    def consume(self, runs: Runs | OrderedRuns | WindowCounter) -> None:
        """Complex events were output from ``runs``'s partition: under ``CONSUME BY ANY``
        every partial complex event is discarded, under ``PARTITION`` that partition's."""
        if self.query.consume == "ANY":
            for r in self.runs.values():
                r.reset()
        elif self.query.consume == "PARTITION":
            runs.reset()


class Evaluation:
    """A query evaluated by the automaton one event at a time, for events that arrive
    (a watched document's, a socket's): :meth:`push` returns the complex events that end at
    the event pushed. :func:`evaluate` is this over an iterable.

    Raises:
        CELQueryError: (when built) a filter the automaton does not take.
    """

    def __init__(self, query: Query) -> None:
        self.query = query
        self._parts = _Partitions(query)
        self._read = 0  # events read: an enumeration is valid until the next one
        self._position = -1  # the last event's position
        # SELECT x, y (issue 32, item 2d): the events a complex event may still hold, to
        # project it (:mod:`._projection`), released at the horizon as the window passes
        self._events: dict[int, Event] | None = {} if projects(query) else None
        self._since = 0  # events kept since the last release

    @property
    def horizon(self) -> float:
        """The smallest position that a complex event ending at an event yet to be read may
        hold: what is kept about earlier positions (their ids, say) can be released (issue
        29). ``-inf`` without a window: a run may still use any earlier event.

        >>> from xmlevents.cel import compile_query, Event
        >>> ev = Evaluation(compile_query("SELECT * FROM S WHERE A ; B WITHIN 3 EVENTS"))
        >>> for p in range(5):
        ...     _ = ev.push(Event(p, "A"))
        >>> ev.horizon
        2
        """
        return self._parts.horizon(self._position)

    def push(self, event: Event) -> list[Match]:
        """The complex events ending at ``event`` (its position must be past the last one's)
        as a list: :meth:`matches`, enumerated.

        Raises:
            StreamError: under a duration or attribute window, a measure going backwards.
        """
        return list(self.matches(event))

    def matches(self, event: Event) -> Iterator[Match]:
        """Read ``event`` (its position past the last one's); its complex events, produced
        as they are enumerated — the reference evaluator's clauses in its order: partitions
        apart, the window applied while reading, the strategy (in the automaton, or selecting
        among the position's complex events), ``CONSUME BY``, ``LIMIT``.

        Where the automaton evaluates the strategy and there is no ``LIMIT``, they come in
        the order of enumeration (:func:`enumerate_found`: constant delay, nothing
        materialised); where a strategy selects among the position's complex events, or
        ``LIMIT`` picks the most recent, the chosen ones come in order of their positions.
        The event is read when this is called, not when the iterator is consumed; consume it
        before the next event is read (the window's rebuild relinks the cells it walks).

        Raises:
            StreamError: under a duration or attribute window, a measure going backwards.
            RuntimeError: (from the iterator) the next event was read before it was
                consumed.
        """
        if self._events is not None:
            return iter(self._projected(event))
        return self._matches(event)

    def _projected(self, event: Event) -> list[Match]:
        kept = self._events
        assert kept is not None
        kept[event.position] = event
        found = project_all(self.query, self._matches(event), kept)
        self._since += 1
        if self._since > 64 + len(kept) // 2:  # a sweep per half of what is kept: amortised
            horizon = self.horizon
            for p in [p for p in kept if p < horizon]:
                del kept[p]
            self._since = 0
        return found

    def _matches(self, event: Event) -> Iterator[Match]:
        query, parts = self.query, self._parts
        self._read += 1
        self._position = event.position
        stepped = parts.step(event)
        if stepped is None:
            return iter(())
        runs, found, oldest = stepped
        if found is None:
            return iter(())
        assert isinstance(found, list)
        if parts.native and query.limit is None:
            if not any(n.start >= oldest for n in found):
                return iter(())  # every set here started too long ago
            parts.consume(runs)  # (the nodes found are not touched by a reset)
            return self._enumerated(found, oldest, self._read)
        if parts.native:
            assert query.limit is not None
            chosen = sorted(first_recent(found, query.limit, oldest))
        else:
            sets = enumerate_found(found, oldest)
            chosen = [tuple(sorted(c)) for c in select(query.strategy, map(frozenset, sets))]
            if query.limit is not None:
                chosen = sorted(chosen, key=recent_first)[:query.limit]
            chosen.sort()
        if chosen:
            parts.consume(runs)
        return iter([Match(c[-1], c) for c in chosen])


    def _enumerated(self, found: list[Node], oldest: float, read: int) -> Iterator[Match]:
        for c in enumerate_found(found, oldest):
            if self._read != read:
                raise RuntimeError(
                    "the complex events of an event were read after the next event: "
                    "consume Evaluation.matches() before pushing the next event (push() "
                    "gives them as a list)")
            yield Match(c[-1], c)


def evaluate(query: Query, events: Iterable[Event]) -> Iterator[Match]:
    """The complex events of ``query`` over ``events`` by the automaton, in order of their
    last position, within one as :meth:`Evaluation.matches` gives them.

    Raises:
        CELQueryError: a filter the automaton does not take.
        StreamError: under a duration or attribute window, a measure going backwards.
    """
    evaluation = Evaluation(query)
    for event in events:
        yield from evaluation.matches(event)


def count(query: Query, events: Iterable[Event]) -> int:
    """How many complex events ``query`` has over ``events``. Where the automaton evaluates
    the strategy (:class:`_Partitions`) and without ``LIMIT`` nothing is enumerated: each
    position's node knows how many sets it holds (they are distinct: the automaton is
    deterministic); under a window the runs are counted per state instead
    (:class:`WindowCounter`). Otherwise the complex events are enumerated."""
    parts = _Partitions(query, counting=True)
    if not parts.native or query.limit is not None or projects(query):
        return sum(1 for _ in evaluate(query, events))  # LIMIT: at most n per position
    total = 0
    for event in events:
        stepped = parts.step(event)
        if stepped is None:
            continue
        runs, found, _ = stepped
        if found is None:
            continue
        if isinstance(found, list):
            found = sum(n.count for n in found)
        total += found
        if found:
            parts.consume(runs)
    return total
