"""Pre-order automata built lazily from a grammar, and the online query algorithm (seed 004,
sections 4 and 5, Listing 1).

A state ``q_w`` maps pairs ``(x, x_first)`` — ``w`` may derive from ``x`` while ``first(w)``
derives from ``x_first`` — to ``(M, b)``: the undecided candidates ``M`` of derivations that
label ``w`` with ``x``, and ``b``, true when whether such a derivation exists depends on the
content of ``w`` alone (section 5.1, invariants (1)-(3)). The structural part of a state (its
pairs and flags: a :class:`Shape`) does not depend on the candidates, so the ``enter'`` and
``leave'`` transitions are computed once per shape and label class, when the input first
needs them, and memoised with the routes along which candidate sets flow (section 5.2).

Reconstruction of Listing 1 (the extraction lost its line breaks; this is the algorithm the
invariants and the proof of Theorem 1 pin down):

* ``enter`` at ``w`` labelled ``a``: for every ``q(x2, x1) = (M, b)`` and production
  ``x2 -> (a|*)<x3, x5>``: ``M' = M | {w}`` if ``x2`` is distinguished; ``b1 = b ∧ [[x5]] = T``;
  if ``b1`` and ``[[x3]] = T`` report ``M'`` (line 14); else ``q1(x3, x3) ⊕= (b1 ? M' : ∅,
  b1)`` (line 15: candidates enter the content only where it alone can decide them).
* ``leave`` at ``w``: for every ``q(x4, x3) = (M1, b1)`` with ``x4 -> λ``: if ``b1`` report
  ``M1``; for every ``q_father(x2, x1) = (M, b)`` with ``x2 -> (a|*)<x3, x5>``:
  ``q1(x5, x1) ⊕= ((b1 ? ∅ : M1) | (pushed ? ∅ : M | ({w} if x2 distinguished)), b)`` where
  ``pushed = b ∧ [[x5]] = T`` says that ``M`` and ``w`` went into the content at ``enter``
  (line 28): what was pushed is reported from there, so each match is reported once.
* After each transition, an entry with ``b`` true and a universal variable is a detection
  (Theorem 1): its candidates are reported and dropped.
* Then, where Theorem 1 can miss a decided match (several derivations together cover every
  continuation, none alone), the general check of :mod:`._universal` reports it: a test of
  universality of a union of products of the holes' languages across the stack, on only
  for queries whose unread parts can have a nullable, non-universal variable
  (:attr:`Automaton.risky`).

XML refines the paper's binary trees in one place: a document has one root element, so at the
root the only right completion is the empty tree; there ``[[x5]] = T`` reads ``x5 -> λ`` and
productions whose ``x5`` cannot derive λ are dropped. The end of the root is then the end of
the input (``endDocHandler``). Where the tree has text nodes (issue 33), the comments and PIs
before and after the root element are its siblings (one text node each side at most, as
adjacent ones are one): a prolog is read before the root as a first top-level node; at the
root the right completions are λ and one text node, so ``[[x5]] = T`` reads "``x5`` derives
both", productions whose ``x5`` derives neither are dropped, and what only one of them
decides is reported at the end of the input (:meth:`Run.finish`) or at the epilogue's node.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, repeat
from operator import is_not
from typing import Any, NamedTuple

from ._grammar import TEXT, Grammar
from ._match import HeldRow, Row
from ._universal import Detector, TooManyTypes, Universality

__all__ = ["Shape", "Automaton", "Candidate", "Counter", "Found", "Report", "Run", "TooDeep"]

Entry = tuple[int, int, bool]


class Shape:
    """The pairs of a POA state and their ``b`` flags, interned: equal shapes are one object,
    whose transitions are memoised on it.

    ``by_tag`` memoises ``enter'`` by element name rather than by label class, and each
    ``enter'`` keeps the ``leave'`` transitions that close it by the last child's shape
    (:attr:`_Enter.leaves`), so that the run's hot path is one dictionary lookup per event,
    without classifying the name or building a key (section 5.2: the transitions are computed
    once, when the input first needs them).
    """

    __slots__ = ("by_tag", "enter", "entries", "general", "id", "leave", "top")

    def __init__(self, sid: int, entries: tuple[Entry, ...], top: int = 0) -> None:
        self.id = sid
        self.entries = entries
        #: a state at the top level, whose transitions know what may follow the node entered
        #: from it (see :meth:`Automaton.twin`): 0 inside the root element; 1 before the root
        #: element when the tree has text nodes (a comment or PI may follow the root); 2
        #: where nothing may follow (the root without text nodes; a node after the root)
        self.top = top
        #: the general check's view of the shape (:class:`._universal.LevelInfo`), if needed
        self.general: Any = None
        self.enter: dict[int, _Enter] = {}
        self.leave: dict[tuple[int, int], _Leave] = {}
        self.by_tag: dict[str, _Enter] = {}


#: names memoised per shape at most (a flood of distinct names is classified each time)
NAMES_PER_SHAPE = 4096


class _Enter:
    """``enter'`` from a shape on a label class: the target shape, the sources whose
    candidates are reported (``(i, marked)``), and per target entry the sources pushed in;
    ``leaves`` memoises the ``leave'`` transitions at the end of such an element, by the shape
    of the state after its last child (``source`` and ``cls`` say how to compute one)."""

    __slots__ = ("cls", "general", "hold", "hold_mask", "hold_others", "inert", "instant",
                 "leaves", "marks", "push", "report", "source", "target", "waits")

    def __init__(self, source: Shape, cls: int, target: Shape,
                 report: tuple[tuple[int, bool], ...], push: Routes, marks: bool,
                 idle: frozenset[int] = frozenset(), hold: int = -1) -> None:
        self.source = source
        self.cls = cls
        self.target = target
        #: the sources reported, less the ``idle`` entries, which never hold a pending
        #: candidate (``b`` true and variable universal inside the root: Theorem 1 reports
        #: theirs at once), so that the run reads no set there
        self.report = tuple(r for r in report if r[0] not in idle)
        self.push = push
        self.marks = marks
        self.leaves: dict[Shape, _Leave] = {}
        #: the general check's view (:class:`._universal.FrameInfo`), if needed
        self.general: Any = None
        # the element's own candidate is decided at its start tag (a marked source reported):
        # the run reports it at once and makes no Candidate to hold
        self.instant = any(m for _i, m in report)
        #: nothing reported, pushed or marked: the state's sets wait in the frame, untouched
        #: (issue 33, item 4: the usual start tag while candidates wait)
        self.inert = not self.report and not push and not marks
        #: the element is a candidate that waits, and nothing else happens (a line while the
        #: lines wait for the root's end)
        self.waits = marks and not self.instant and not self.report and not push
        #: where the element's candidate goes with the entry's set whatever its content (see
        #: :meth:`Automaton.enter`): that entry, else -1; the run then adds it to the group
        #: that entry holds at the start tag, with no Candidate, route or view of its own
        self.hold = hold if self.waits else -1
        #: the general check's key for the state's sets when only ``hold`` holds candidates
        #: (:meth:`._universal.Detector.below`), and the other entries that may hold any
        self.hold_mask = tuple(k == hold for k in range(len(source.entries)))
        self.hold_others = tuple(k for k in range(len(source.entries))
                                 if k != hold and k not in idle)


# per target entry j: (j, child entries, father entries, whether the element's candidate goes in)
Routes = tuple[tuple[int, tuple[int, ...], tuple[int, ...], bool], ...]


class _Leave:
    """``leave'`` from a father shape and a child shape on a label class: the target shape,
    what is reported, and per target entry the child and father entries it collects."""

    __slots__ = ("keep", "marks", "one", "report_child", "report_father", "report_mark",
                 "reports", "route", "target", "width")

    def __init__(self, target: Shape, report_child: tuple[int, ...],
                 report_father: tuple[int, ...], report_mark: bool,
                 route: Routes, father_width: int = -1) -> None:
        self.target = target
        self.report_child = report_child
        self.report_father = report_father
        self.report_mark = report_mark
        self.route = route
        self.marks = report_mark or any(r[3] for r in route)
        #: whether anything can be reported here (else only routes are followed)
        self.reports = bool(report_child or report_father or report_mark)
        self.width = len(target.entries)
        #: the route, where there is one (see :func:`_routed_one`)
        self.one = route[0] if len(route) == 1 else None
        #: the entry whose father set is passed on to the same entry, nothing else routed or
        #: reported: the state's sets after the element are the father's as they are, when
        #: the content holds none and only that entry does (the end of a held line)
        self.keep = -1
        if self.one is not None and not self.reports and self.width == father_width:
            k, _cs, fs, _m = self.one
            if k in fs:
                self.keep = k


class Automaton:
    """The POA ``A_p`` of a grammar's query (section 5.1), built as the input asks for it."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self._shapes: dict[tuple[Entry, ...], Shape] = {}
        #: Whether some hole variable met so far is nullable but not universal: only then can
        #: a match be decided that no single derivation shows (Theorem 1), and the run's
        #: general check (:mod:`._universal`) is worth its cost; see :meth:`_risk`.
        self.risky = False
        #: set when the general check's subset construction grew too large for this query
        self.general_off = False
        self._universality: Universality | None = None
        # the runs' switches of their general check, told when either flag changes (a run
        # may meet a transition another run built: the flag is the automaton's)
        self._switches: weakref.WeakSet[Callable[[bool], None]] = weakref.WeakSet()
        self.initial = self._shape({(grammar.start, grammar.start): True})
        # The state before the root element: the initial shape's entries, but its own object,
        # so that the transitions memoised on it are the root's (section 5.1 read for XML:
        # the root has no following sibling but a text node's, see _right_free) and a run
        # needs no test for "is this the root" per event.
        self.root = Shape(-1, self.initial.entries, 1 if grammar.texts else 2)
        self._twins: dict[tuple[int, int], Shape] = {}
        self._prolog: Shape | None = None
        self._epilogue: dict[int, bool] = {}

    @property
    def general(self) -> bool:
        """Whether runs do the general check (:attr:`risky` and not :attr:`general_off`)."""
        return self.risky and not self.general_off

    def watch(self, switch: Callable[[bool], None]) -> None:
        """Call ``switch(general)`` whenever :attr:`general` changes (held weakly)."""
        self._switches.add(switch)

    def give_up_general(self) -> None:
        """Turn the general check off for this query (its types are too many)."""
        self.general_off = True
        for f in list(self._switches):
            f(False)

    def universality(self) -> Universality:
        """The general check's memo, made when a run first needs it."""
        if self._universality is None:
            self._universality = Universality(self.grammar, self.epilogue)
        return self._universality

    def _risk(self, x: int) -> None:
        """Note a variable that derives a hole. If every such variable that derives λ is
        universal, a match decided at an event is decided by one derivation: the completion
        that closes every open element at once is covered by a derivation whose hole
        variables derive λ, hence are universal, which Theorem 1 detects."""
        if not self.risky:
            g = self.grammar
            if g.nullable(x) and not g.universal(x):
                self.risky = True
                for f in list(self._switches):
                    f(self.general)

    @property
    def shapes(self) -> int:
        """How many distinct shapes the input has needed so far."""
        return len(self._shapes)

    def _shape(self, flags: dict[tuple[int, int], bool]) -> Shape:
        entries = tuple(sorted((x, f, b) for (x, f), b in flags.items()))
        found = self._shapes.get(entries)
        if found is None:
            found = self._shapes[entries] = Shape(len(self._shapes), entries)
            for x, _f, _b in entries:
                self._risk(x)
        return found

    def twin(self, shape: Shape, top: int) -> Shape:
        """A state with ``shape``'s entries at the top level (:attr:`Shape.top`): its own
        object, whose transitions are memoised apart from the interned shape's."""
        key = (shape.id, top)
        found = self._twins.get(key)
        if found is None:
            found = self._twins[key] = Shape(-2 - len(self._twins), shape.entries, top)
        return found

    def after_prolog(self) -> Shape:
        """The state before the root element when a comment or PI precedes it (a text node
        before the root, entered and left from the initial state as any node is)."""
        if self._prolog is None:
            tr = self.enter_named(self.initial, TEXT)
            after = self.leave_after(tr, tr.target)
            self._prolog = self.twin(after.target, 1)
        return self._prolog

    def epilogue(self, x: int) -> bool:
        """Whether ``x`` derives one text node (a comment or PI after the root element)."""
        found = self._epilogue.get(x)
        if found is None:
            g = self.grammar
            found = self._epilogue[x] = any(
                g.nullable(a) and g.nullable(b) for a, b, _m in
                g.productions(x, g.classify(TEXT)))
        return found

    def _kept(self, x5: int, top: int) -> bool:
        """Whether a production whose right variable is ``x5`` can derive a node entered
        from a state at the top level ``top``: something must follow it only inside."""
        if top == 0:
            return True
        return self.grammar.nullable(x5) or (top == 1 and self.epilogue(x5))

    def _right_free(self, x5: int, top: int) -> bool:
        """``[[x5]] = T`` for the right completions of a node entered at level ``top``."""
        g = self.grammar
        if top == 0:
            return g.universal(x5)
        return g.nullable(x5) and (top == 2 or self.epilogue(x5))

    def idle(self, shape: Shape, inside: bool = False) -> frozenset[int]:
        """The entries of a state that never hold a pending candidate: inside the root
        element (``shape.top`` 0, or ``inside``), those whose ``b`` is true and variable
        universal, whose candidates Theorem 1 reports at the transition that makes them
        (Listing 1 routes none there; ``tests/stream/test_pending.py`` checks it after
        every event)."""
        if shape.top and not inside:
            return frozenset()
        g = self.grammar
        return frozenset(k for k, (x, _f, b) in enumerate(shape.entries)
                         if b and g.universal(x))

    def enter_named(self, shape: Shape, label: str) -> _Enter:
        """``enter'`` on an element name: :meth:`enter` on its class, memoised by name."""
        found = self.enter(shape, self.grammar.classify(label))
        if len(shape.by_tag) < NAMES_PER_SHAPE:
            shape.by_tag[label] = found
        return found

    def leave_after(self, opened: _Enter, child: Shape) -> _Leave:
        """``leave'`` at the end of an element entered by ``opened`` whose content ended in a
        state of shape ``child``: :meth:`leave`, memoised on ``opened``."""
        found = opened.leaves[child] = self.leave(opened.source, child, opened.cls)
        return found

    def enter(self, shape: Shape, cls: int) -> _Enter:
        """``enter'(q, a)`` for a state of this shape (memoised); at the root when ``shape``
        is :attr:`root`."""
        memo = shape.enter
        found = memo.get(cls)
        if found is not None:
            return found
        root = shape.top
        g = self.grammar
        flags: dict[tuple[int, int], bool] = {}
        report: list[tuple[int, bool]] = []
        push: dict[tuple[int, int], list[tuple[int, bool]]] = {}
        marks = False
        # per entry, the right variables of its productions and whether one marks the element
        # with a universal content (see hold below)
        rights: dict[int, set[int]] = {}
        marking: set[int] = set()
        free: set[int] = set()
        for i, (x2, _x1, b) in enumerate(shape.entries):
            for x3, x5, marked in g.productions(x2, cls):
                if root and not self._kept(x5, root):
                    continue  # a document has one root element
                rights.setdefault(i, set()).add(x5)
                if marked:
                    marking.add(i)
                    if g.universal(x3):
                        free.add(i)
                marks = marks or marked
                if not root:
                    self._risk(x5)
                b1 = b and self._right_free(x5, root)
                key = (x3, x3)
                flags[key] = flags.get(key, False) or b1
                if b1:
                    if g.universal(x3):
                        report.append((i, marked))
                    else:
                        push.setdefault(key, []).append((i, marked))
        target = self._shape(flags)
        index = {(x, f): j for j, (x, f, _b) in enumerate(target.entries)}
        # per target entry: the state's entries whose sets go in, and whether the element's
        # own candidate does (the same form as a leave' route, without child sets)
        routes = tuple((index[k], (), tuple(dict.fromkeys(i for i, _m in v)),
                        any(m for _i, m in v)) for k, v in push.items())
        # The element's candidate is held in the entry's group (issue 33, item 4) where its
        # fate is that entry's: every production marking it is the entry's, with a universal
        # content, and all the entry's productions have one right variable. Then whatever the
        # content, the end tag routes the candidate exactly where it routes the entry's set
        # (one target pair (x5, x1), reached through the marking production, whose content
        # always derives), and the chains marking it are the chains through the entry (each
        # production's holes within the marking one's), so the general check decides or
        # rejects it with the entry's candidates.
        hold = -1
        if not root and len(marking) == 1:
            (i,) = marking
            if i in free and len(rights[i]) == 1:
                hold = i
        found = _Enter(shape, cls, target, tuple(dict.fromkeys(report)), routes, marks,
                       self.idle(shape), hold)
        memo[cls] = found
        return found

    def leave(self, father: Shape, child: Shape, cls: int) -> _Leave:
        """``leave'((q_w, q_last(w1)), a)`` for states of these shapes (memoised); the root's
        when ``father`` is :attr:`root`."""
        key0 = (child.id, cls)
        memo = father.leave
        found = memo.get(key0)
        if found is not None:
            return found
        root = father.top
        g = self.grammar
        flags: dict[tuple[int, int], bool] = {}
        sources: dict[tuple[int, int], tuple[set[int], set[int], list[bool]]] = {}
        report_child: list[int] = []
        by_left: list[dict[int, list[tuple[int, bool]]]] = []
        for x2, _x1, _b in father.entries:
            table: dict[int, list[tuple[int, bool]]] = {}
            for x3, x5, marked in g.productions(x2, cls):
                if root and not self._kept(x5, root):
                    continue
                table.setdefault(x3, []).append((x5, marked))
            by_left.append(table)
        for k, (x4, x3, b1) in enumerate(child.entries):
            if not g.nullable(x4):
                continue
            if b1:
                report_child.append(k)
            for i, (_x2, x1, b) in enumerate(father.entries):
                for x5, marked in by_left[i].get(x3, ()):
                    pushed = b and self._right_free(x5, root)
                    key = (x5, x1)
                    flags[key] = flags.get(key, False) or b
                    cs, fs, mark = sources.setdefault(key, (set(), set(), [False]))
                    if not b1:
                        cs.add(k)
                    if not pushed:
                        fs.add(i)
                        if marked:
                            mark[0] = True
        target = self._shape(flags)
        route = []
        report_father: set[int] = set()
        report_mark = False
        for j, (x, f, b) in enumerate(target.entries):
            cs, fs, mark = sources[(x, f)]
            if b and self._right_free(x, root):
                # Theorem 1: decided here. Child candidates were reported above or are
                # in a flagged entry; the father's are reported now.
                report_child.extend(cs)
                report_father.update(fs)
                report_mark = report_mark or mark[0]
            elif cs or fs or mark[0]:
                route.append((j, tuple(sorted(cs)), tuple(sorted(fs)), mark[0]))
        # entries that never hold a pending candidate are not read (see _Enter.report): the
        # child's are inside the element, the father's inside the root but at the root
        idle_child, idle_father = self.idle(child, True), self.idle(father)
        report_child = [k for k in report_child if k not in idle_child]
        report_father = {i for i in report_father if i not in idle_father}
        found = _Leave(target, tuple(dict.fromkeys(report_child)), tuple(sorted(report_father)),
                       report_mark, tuple(route), len(father.entries))
        memo[key0] = found
        return found


class Counter:
    """What a run counts: elements read, matches reported, candidates held now and at most."""

    __slots__ = ("elements", "held", "matches", "peak")

    def __init__(self) -> None:
        self.elements = 0
        self.matches = 0
        self.held = 0
        self.peak = 0


class Candidate:
    """A node that may be a match: its pre-order index, path and attributes, kept while some
    entry of the stack refers to it (freed, and no longer counted, once none does).

    A candidate in the sets may stand for a *group* (issue 33, item 4): ``more`` holds the
    candidates merged into it, which no set names. Candidates are merged only where nothing
    can tell them apart any more: the same entries of the current state hold them, no frame
    of the stack does, and all were marked in the innermost open element's content (so the
    general check's origins, by pre-order index, see each group whole). Reporting or
    rejecting the group does so for each of them; a set then holds one object where it held
    every line of a poem, and moving it costs the same whatever the group's size.

    ``rows`` holds the group's members added at their own start tag (``_Enter.hold``) as
    :data:`~._match.HeldRow` ``(node, parent's path/name, position, attributes)``: no object
    of their own while they wait, and no path until their match is made."""

    __slots__ = ("_counter", "attributes", "more", "node", "path", "reported", "rows")

    def __init__(self, node: int, path: str, attributes: dict[str, str],
                 counter: Counter) -> None:
        self.node = node
        self.path = path
        self.attributes = attributes
        self.reported = False
        self.more: list[Candidate] | None = None
        self.rows: list[HeldRow] | None = None
        self._counter = counter
        counter.held += 1
        if counter.held > counter.peak:
            counter.peak = counter.held

    def __del__(self) -> None:
        if not self.reported:
            self._counter.held -= 1 if self.rows is None else 1 + len(self.rows)

    def __repr__(self) -> str:
        return f"Candidate({self.node}, {self.path!r})"

    def members(self) -> list[Candidate]:
        """This candidate and those merged into it (not its ``rows``)."""
        return [self] if self.more is None else [self, *self.more]

    def nodes(self) -> list[int]:
        """The pre-order indexes of the group's candidates, rows included."""
        return [c.node for c in self.members()] + [r[0] for r in self.rows or ()]

    def absorb(self, other: Candidate) -> None:
        """Merge ``other``'s group into this one (the caller takes the larger as ``self``:
        each candidate is moved a logarithmic number of times)."""
        more = self.more
        if more is None:
            more = self.more = []
        more.append(other)
        if other.more is not None:
            more.extend(other.more)
            other.more = None
        if other.rows is not None:
            if self.rows is None:
                self.rows = other.rows
            else:
                self.rows.extend(other.rows)
            other.rows = None


class Bag:
    """Candidates held as a few frozensets ("chunks") whose sizes at least double from one
    to the next (Bentley and Saxe's logarithmic method), standing in for one frozenset where
    a large set meets a small one (issue 33, item 4).

    Listing 1 merges candidate sets at every event where candidates are pending (a route
    gathers the content's sets, the father's and the element's own candidate); made as one
    frozenset, the union copies every candidate each time, so a query holding n candidates
    (``/*[not(d)]//*`` until the root ends, ``//a[following-sibling::z]`` until the ``z``)
    took time quadratic in n. A bag adds the small chunks to the large ones, copying a chunk
    only into one at least as large: O(log n) copies per candidate. Immutable and shared as
    the frozensets are; a candidate may sit in two chunks (sets routed apart and merged
    again), which the readers tolerate: a candidate is reported once, by its flag."""

    __slots__ = ("chunks", "size")

    def __init__(self, chunks: tuple[frozenset[Candidate], ...], size: int) -> None:
        self.chunks = chunks
        #: the chunks' sizes summed, kept rather than counted at every merge
        self.size = size

    def __iter__(self) -> Iterator[Candidate]:
        return chain.from_iterable(self.chunks)

    def __bool__(self) -> bool:
        return True  # never empty: an empty set is None or _EMPTY

    def __len__(self) -> int:
        """At most this many candidates (a candidate in two chunks counts twice)."""
        return self.size

    def __repr__(self) -> str:
        return f"Bag({[len(c) for c in self.chunks]})"


#: the candidates of one entry of a state: a frozenset, or a :class:`Bag` once large; an
#: empty one is always :data:`_EMPTY` (so that the hot path tests identity, not a length)
Pending = frozenset[Candidate] | Bag
Sets = tuple[Pending, ...]


#: how many reported candidates the sets may keep beyond those held before they are compacted
SLACK = 16
#: up to how many candidates a merge makes one frozenset (a union in C) rather than a Bag
SMALL = 64


def _merge(parts: Sequence[Pending], cand: Candidate | None) -> Pending:
    """The union of ``parts`` and ``cand`` (unfiltered): their chunks, each once, the
    smaller ones merged into a chunk until each is under half of the next larger one."""
    total = 0
    for p in parts:
        total += p.size if p.__class__ is Bag else len(p)
    if total <= SMALL:
        # small sets (most of them): one union made in C beats keeping chunks
        return _EMPTY.union(*parts) if cand is None else _EMPTY.union(*parts, (cand,))
    chunks: list[frozenset[Candidate]]
    if len(parts) == 1 and cand is not None:
        # the usual case, one candidate more: a binary counter's carry over the chunks
        # (largest first), merging only those smaller than twice what is added
        one = parts[0]
        chunks = list(one.chunks) if isinstance(one, Bag) else [one]
        acc = frozenset((cand,))
        while chunks and len(chunks[-1]) < 2 * len(acc):
            acc = chunks.pop() | acc
        chunks.append(acc)
        return chunks[0] if len(chunks) == 1 else Bag(tuple(chunks), total + 1)
    chunks = []
    seen: set[int] = set()
    for p in parts:
        for ch in (p.chunks if isinstance(p, Bag) else (p,)):
            if id(ch) not in seen:
                seen.add(id(ch))
                chunks.append(ch)
    if cand is not None:
        chunks.append(frozenset((cand,)))
    if len(chunks) == 1:
        return chunks[0]
    chunks.sort(key=len)
    out: list[frozenset[Candidate]] = []
    acc = chunks[0]
    for ch in chunks[1:]:
        if len(ch) < 2 * len(acc):
            acc = ch | acc
        else:
            out.append(acc)
            acc = ch
    out.append(acc)
    return out[0] if len(out) == 1 else Bag(tuple(reversed(out)), sum(map(len, out)))


class Found(NamedTuple):
    """A match as the run reports it: pre-order index, path, attributes."""

    node: int
    path: str
    attributes: dict[str, str]


# (event, node of the event, the matches it decided as (node, path, attributes) tuples, or
# as held rows (node, the parent's path/name, position, attributes): see Candidate.rows)
Report = tuple[str, int, list[Row | HeldRow]]
_EMPTY: frozenset[Candidate] = frozenset()
#: the second operand of ``map(is_not, sets, _NOT_EMPTY)``: which sets are not ``_EMPTY``
_NOT_EMPTY = repeat(_EMPTY)


#: up to how many candidates a set may hold for :func:`_gathered` to look into it (a larger
#: one is passed on as it is: the work per event stays bounded)
FEW = 8


def _size(c: Candidate) -> int:
    return (1 if c.more is None else 1 + len(c.more)) + (0 if c.rows is None else len(c.rows))


def _gathered(parts: list[Pending], add: Candidate | None, limit: int) -> Pending:
    """The union of ``parts`` and ``add`` for the only entry a ``leave'`` fills, with the
    candidates marked after pre-order index ``limit`` (the innermost open element's) merged
    into one group (:class:`Candidate`): in that state they are all in this one entry, and
    no frame of the stack holds them (a frame's sets predate them), so nothing can tell them
    apart from here on. Where candidates wait for an ancestor's end (``/*[not(d)]//l``), the
    set stays one object however many wait, and each event moves it without copying."""
    movable: list[Candidate] = []
    fixed: list[Candidate] = []
    kept: list[Pending] = []
    for p in parts:
        if p.__class__ is frozenset and len(p) <= FEW:
            for c in p:
                if c.node > limit and not c.reported:
                    movable.append(c)
                else:
                    fixed.append(c)
        else:
            kept.append(p)
    if add is not None:
        movable.append(add)
    if len(movable) > 1:
        movable = list(dict.fromkeys(movable))  # a group in two parts is one
        lead = movable[0]
        most = _size(lead)
        for c in movable:
            if c.more is not None or c.rows is not None:
                size = _size(c)
                if size >= most:
                    lead, most = c, size
        for c in movable:
            if c is not lead:
                lead.absorb(c)
        movable = [lead]
        if not fixed and not kept:
            for p in parts:
                if len(p) == 1 and lead in p:
                    return p  # the group grew; its set is the same object
    if not kept:
        return _EMPTY.union(fixed, movable)
    if fixed or movable:
        kept.append(_EMPTY.union(fixed, movable))
    return kept[0] if len(kept) == 1 else _merge(kept, None)


def _met(parts: list[Pending], limit: int) -> Pending | None:
    """:func:`_gathered` for the usual meeting of two groups of the content (a line group's
    lines and those of the line groups before it): the smaller absorbed, the larger's set
    passed on; None where the parts are anything else."""
    p, q = parts
    if p.__class__ is frozenset and q.__class__ is frozenset and len(p) == len(q) == 1:
        (a,) = p
        (b,) = q
        if a.node > limit and b.node > limit and not a.reported and not b.reported \
                and a is not b:
            # _size(a) < _size(b), inlined (at every line group's end while lines wait)
            if (len(a.more) if a.more is not None else 0) + \
                    (len(a.rows) if a.rows is not None else 0) < \
                    (len(b.more) if b.more is not None else 0) + \
                    (len(b.rows) if b.rows is not None else 0):
                p, a, b = q, b, a
            a.absorb(b)
            return p
    return None


def _routed_one(route: tuple[int, tuple[int, ...], tuple[int, ...], bool], csets: Sets | None,
                fsets: Sets | None, live: Candidate | None, width: int,
                limit: int) -> Sets | None:
    """:func:`_routed` at a ``leave'`` that fills one entry (``live``: the element's own
    candidate, unless reported), the candidates marked after ``limit`` merged into one group
    (:func:`_gathered`). On the path of every end tag while candidates wait: one set passed
    on, or one candidate more beside one group, are handled here without a list."""
    k, cs, fs, mark = route
    empty = _EMPTY
    one: Pending | None = None
    parts: list[Pending] | None = None
    if csets is not None:
        for j in cs:
            p = csets[j]
            if p is not empty:
                if one is None:
                    one = p
                elif parts is None:
                    parts = [one, p]
                else:
                    parts.append(p)
    if fsets is not None:
        for i in fs:
            p = fsets[i]
            if p is not empty:
                if one is None:
                    one = p
                elif parts is None:
                    parts = [one, p]
                else:
                    parts.append(p)
    add = live if mark else None
    got: Pending
    if parts is not None:
        met = _met(parts, limit) if add is None and len(parts) == 2 else None
        got = _gathered(parts, add, limit) if met is None else met
    elif one is None:
        if add is None:
            return None
        got = frozenset((add,))
    elif add is None:
        got = one  # passed on as it is
    elif len(one) == 1 and add.more is None and add.rows is None:
        # the usual case: one more candidate beside one group (a line after the lines
        # before it), merged into it where it may be
        got = one
        for c in one:
            if c.node > limit and not c.reported:
                more = c.more  # c.absorb(add), inlined
                if more is None:
                    c.more = [add]
                else:
                    more.append(add)
            else:
                got = _EMPTY.union(one, (add,))
    else:
        got = _gathered([one], add, limit)
    if width == 2:
        return (got, empty) if k == 0 else (empty, got)
    lists: list[Pending] = [empty] * width
    lists[k] = got
    return tuple(lists)


def _routed(routes: Routes, csets: Sets | None, fsets: Sets | None, cand: Candidate | None,
            width: int, limit: int = -1) -> Sets | None:
    """The candidate sets of the shape entered (``width`` entries), each gathered along its
    routes from the content's sets ``csets`` and the enclosing ones ``fsets`` (at a start
    tag: none and the current ones) and, where the route says so, ``cand`` unless it is
    reported; None if they are all empty.

    One set passes through as it is, the usual case (candidates waiting while entry after
    entry hands them on): nothing is copied or scanned. Several are merged as a :class:`Bag`
    (the large chunks shared, not copied). Candidates reported (or rejected) since stay in
    the sets, skipped by every reader (a candidate is reported once, by its flag), until the
    run compacts its sets (:meth:`Run._machine`'s ``compact``): filtering them here, at every
    event after a report, cost time linear in the candidates held per event (issue 33, item
    4: ``//*[not(following-sibling::q)]`` reports at every end tag while the root's
    children wait). On the path of every event where candidates are pending: one function,
    empty sets told by identity (:data:`_EMPTY`).

    At a ``leave'`` that fills one entry (``limit`` the innermost open element's pre-order
    index, not negative), the candidates marked in that element's content are merged into
    one group (:func:`_gathered`)."""
    lists: list[Pending] | None = None
    live = None if cand is None or cand.reported else cand
    empty = _EMPTY
    if limit >= 0 and len(routes) == 1:
        return _routed_one(routes[0], csets, fsets, live, width, limit)
    for k, cs, fs, mark in routes:
        parts: list[Pending] = []
        if csets is not None:
            for j in cs:
                p = csets[j]
                if p is not empty:
                    parts.append(p)
        if fsets is not None:
            for i in fs:
                p = fsets[i]
                if p is not empty:
                    parts.append(p)
        add = live if mark else None
        if add is None:
            if not parts:
                continue
            got = parts[0] if len(parts) == 1 else _merge(parts, None)
        elif not parts:
            got = frozenset((add,))
        elif len(parts) == 1 and parts[0].__class__ is frozenset and len(parts[0]) < SMALL:
            got = parts[0] | {add}  # one more in a small set (an element after its siblings)
        else:
            got = _merge(parts, add)
        if lists is None:
            lists = [empty] * width
        lists[k] = got
    return None if lists is None else tuple(lists)


def _clean(p: Pending, memo: dict[int, frozenset[Candidate]]) -> Pending:
    """``p`` without its reported candidates (``_EMPTY`` if none is left); chunks without
    any kept as they are, and each chunk filtered once (``memo``, by identity: the sets
    share them)."""
    chunks: list[frozenset[Candidate]] = []
    for ch in (p.chunks if isinstance(p, Bag) else (p,)):
        got = memo.get(id(ch))
        if got is None:
            kept = frozenset(c for c in ch if not c.reported)
            got = memo[id(ch)] = ch if len(kept) == len(ch) else kept
        if got:
            chunks.append(got)
    if not chunks:
        return _EMPTY
    if len(chunks) == 1:
        return chunks[0]
    return _merge(chunks, None)




class TooDeep(Exception):
    """The document nests deeper than the run's ``max_depth`` (the driver says where)."""


def _plain_attributes(attrs: Any) -> dict[str, str]:
    return dict(attrs) if attrs else {}


class Run:
    """One run of an automaton over the start and end events of one document (Listing 1).

    The run is a pair of closures, :attr:`start_event` ``(name, attributes)`` and
    :attr:`end_event` ``(name=None)``, that a driver calls once per event — a parser target
    calls them straight from the parser, with no layer in between. What an event decides is
    appended to :attr:`reports` as ``(event, node, candidates)``; the driver takes them from
    there. :meth:`start` and :meth:`end` are the same steps returning the matches decided
    (:class:`Found`, each once), for traces and tests. The run knows nothing of lxml:
    ``attributes`` turns whatever the driver passes along with a start event into a dict, and
    is called for candidates only.
    """

    def __init__(self, automaton: Automaton,
                 attributes: Callable[[Any], dict[str, str]] | None = None,
                 max_depth: int = 0) -> None:
        self.automaton = automaton
        self.counter = Counter()
        self.reports: list[Report] = []
        (self.start_event, self.end_event, self.text_event, self.finish_event,
         self._view) = self._machine(attributes or _plain_attributes, max_depth or sys.maxsize)

    def _machine(self, attributes: Callable[[Any], dict[str, str]], max_depth: int) -> tuple[
            Callable[..., None], Callable[..., None], Callable[..., None], Callable[[], None],
            Callable[[], tuple[Shape, Sets | None, list[tuple[Any, ...]]]]]:
        """The run's state and its two event handlers, as closures: their variables are cells,
        read and written without the attribute lookups of an object (the hot path)."""
        automaton = self.automaton
        enter_named = automaton.enter_named
        leave_after = automaton.leave_after
        counter = self.counter
        emit = self.reports.append
        # candidates reported or rejected since the sets were last compacted: they stay in
        # the sets (see _routed) until they outnumber those held, then compact() filters
        # every set of the stack once, so memory follows the candidates held (amortised)
        garbage = 0
        # per open element, a tuple: (the enter' transition that opened it, from the state
        # before it, that state's candidate sets, its own undecided candidate, its name,
        # pre-order index, position among same-named siblings, the counts of names among
        # it and its preceding siblings, 1 + the entry whose group holds its candidate if
        # it went there at its start tag (_Enter.hold) or 0, the general check's view down
        # to it, or None, and the view down to its parent as ``here`` was when it was pushed)
        stack: list[tuple[Any, ...]] = []
        # the counts of names among the children of the innermost open element so far (None
        # before its first child), for the positions in paths
        counts: dict[str, int] | None = {}
        shape = automaton.root
        sets: Sets | None = None
        node = 0
        # the general check (earliest detection beyond Theorem 1), on once the automaton has
        # met a hole variable that makes it useful (Automaton.risky)
        general = automaton.general
        detector: Detector | None = None
        # the view of the innermost open element (its frame's) while the check is on, kept
        # here rather than read from the stack at every tag; None where unknown (the check
        # just turned on), which makes the next start tag compute the views of the stack
        here: Any = None
        # text nodes read (their detection locations are ("text", index)); ``last_text`` is
        # where the last one was read, as (elements read, depth): a tag changes one or the
        # other (a start tag the first, an end tag the second), so character data, a comment
        # or a PI where it has not changed continues that node, and the tag handlers keep no
        # flag for the text handler (issue 33, item 4: a store per tag, for every query)
        texts = 0
        last_text = (-1, -1)
        epilogue = False  # a text node (comment, PI) after the root element was read
        # The last held line's case (issue 33, item 4), for the next line to join the same
        # group without testing it again: its enter', the state's sets (the same tuple while
        # the lines wait: each held line's end passes them on as they are), the parent's view
        # and pre-order index, the group and its rows, the line's path less its position
        # (its parent's path and its name, one string for the case's rows), the line's view
        # (a group's rows stay one list while its set is the state's: the group is merged into
        # another only at an end tag that routes the sets anew) and its name (one string for
        # the case's rows and frames: the parser makes a new one per tag, which the run then
        # lets go at once rather than keep to the root's end); set where that
        # line needed no check at its start tag (so the next one, the same in all of these,
        # needs none either), and cleared when the check is switched. One cell, not nine:
        # a closure's cells are copied into its frame at every call.
        hold_case: tuple[_Enter, Sets, Any, int, Candidate, list[HeldRow], str, Any, str] \
            | None = None

        def switch(on: bool) -> None:
            nonlocal general, here, hold_case
            general = on
            here = None
            hold_case = None

        automaton.watch(switch)
        self._switch = switch  # held here: the automaton holds it weakly

        def report(found: list[Candidate], event: str, at: int,
                   now: tuple[int, str, dict[str, str]] | None = None) -> None:
            nonlocal garbage
            out: list[Row | HeldRow] = [now] if now is not None else []
            for c in found:
                if not c.reported:
                    c.reported = True
                    counter.held -= 1
                    out.append((c.node, c.path, c.attributes))
                    garbage += 1
                    if c.more is not None:  # a group: its other candidates too
                        for m in c.more:
                            m.reported = True
                            out.append((m.node, m.path, m.attributes))
                        counter.held -= len(c.more)
                    if c.rows is not None:  # and those held as rows
                        out.extend(c.rows)
                        counter.held -= len(c.rows)
            if out:
                counter.matches += len(out)
                emit((event, at, out))

        def detect() -> Detector:
            nonlocal detector
            if detector is None:
                detector = Detector(automaton.universality())
            return detector

        def view_of(tr: _Enter, fsets: Sets | None, cand: Candidate | None) -> Any:
            """The general check's view down to the element about to be pushed, or None if
            the check has just been given up; ``here`` made the view of the stack's top, which
            the caller pushes as the element's parent's."""
            nonlocal here
            try:
                if stack and stack[-1][8] is None:
                    # frames pushed before the check was on get their views now, once
                    above = detect().top
                    for j, view in enumerate(detect().views(stack)):
                        stack[j] = (*stack[j][:8], view, above)
                        above = view
                here = stack[-1][8] if stack else detect().top
                return detect().below(here, stack, tr, fsets, cand)
            except TooManyTypes:
                automaton.give_up_general()  # too large a subset construction: as Theorem 1
                return None

        def examine(event: str, at: int, view: Any, current: Sets | None) -> None:
            """After Listing 1's reports: the candidates decided only by several derivations
            together, and those no continuation can select any more, which are dropped
            (:mod:`._universal`); ``view`` is the innermost open element's."""
            nonlocal garbage
            try:
                if view is None:
                    view = detect().views(stack)[-1]
                found, rejected = detect().check(view, stack, shape, current)
            except TooManyTypes:
                automaton.give_up_general()
                return
            if found:
                report(found, event, at)
            for c in rejected:
                if not c.reported:
                    c.reported = True  # settled: no longer counted, skipped in sets
                    counter.held -= 1
                    garbage += 1
                    if c.more is not None:
                        for m in c.more:
                            m.reported = True
                        counter.held -= len(c.more)
                    if c.rows is not None:
                        counter.held -= len(c.rows)

        # the paths of open elements as far as a candidate below asked for them: per depth,
        # (pre-order index, path); an entry whose index is not the open element's at that
        # depth any more is stale (the element ended), and so is every deeper one
        paths: list[tuple[int, str]] = []

        def path_to(depth: int) -> str:
            """The path of the open element at ``depth`` (1-based; "" for 0), built from the
            nearest one built before: the siblings of a candidate share their parent's
            prefix, which is not rebuilt from the whole stack for each of them."""
            j = min(len(paths), depth)
            while j and paths[j - 1][0] != stack[j - 1][4]:
                j -= 1
            prefix = paths[j - 1][1] if j else ""
            del paths[j:]
            for f in stack[j:depth]:
                prefix = f"{prefix}/{f[3]}[{f[5]}]"
                paths.append((f[4], prefix))
            return prefix

        def compact() -> None:
            """The sets of the stack and the current ones without the reported candidates
            (each shared chunk filtered once), once these outnumber the candidates held:
            the cost, linear in what the sets hold, is paid for by the reports since the
            last compaction."""
            nonlocal sets, garbage
            memo: dict[int, frozenset[Candidate]] = {}

            def cleaned(ss: Sets | None) -> Sets | None:
                if ss is None:
                    return None
                out = tuple(_clean(p, memo) if p else p for p in ss)
                return out if any(out) else None

            for j, frame in enumerate(stack):
                if frame[1] is not None:
                    stack[j] = (frame[0], cleaned(frame[1]), *frame[2:])
            sets = cleaned(sets)
            garbage = 0

        def examine_start(view: Any) -> None:
            """:func:`examine` at the start tag of the element just pushed (``view``, its
            content's), then :func:`compact` if the settled candidates outnumber those held:
            the start path's ending wherever the general check has something to look at."""
            examine("start", node, view, None)
            if garbage > counter.held + SLACK:
                compact()

        def start(label: str, attrs: Any = None) -> None:
            nonlocal shape, sets, node, counts, here, hold_case
            node += 1
            if counts is None:
                # the parent's first child: the only event at which the depth grows
                if len(stack) >= max_depth:
                    raise TooDeep(len(stack) + 1)
                counts = {label: 1}
                pos = 1
            else:
                # a test and subscripts, not counts.get(): a method call by name where
                # the handlers run compiled (stream/_compiled.py), a dict's own code here
                pos = counts[label] + 1 if label in counts else 1
                counts[label] = pos
            # (whether this is the parent's first child, where the general check asks, is
            # ``pos == 1 and len(counts) == 1``: not stored at every start tag)
            # enter' memoised per (shape, name): one lookup once warm (section 5.2), a
            # subscript rather than a method call (a miss is once per shape and name)
            try:
                tr = shape.by_tag[label]
            except KeyError:
                tr = enter_named(shape, label)
            if sets is None and not tr.marks:
                # Fast path, the usual case: no candidate pending in this state and none made
                # here, so there is nothing to report or push (Listing 1 moves only sets).
                if general:
                    if here is not None:
                        calm = here.calm
                        if tr in calm:  # nothing to check (the usual case)
                            view = calm[tr]
                            stack.append((tr, None, None, label, node, pos, counts, 0, view,
                                          here))
                            here = view
                            shape = tr.target
                            counts = None
                            return
                    above = here
                    view = None if above is None else above.plain.get(tr)
                    if view is None:
                        view = view_of(tr, None, None)
                        above = here
                    stack.append((tr, None, None, label, node, pos, counts, 0, view, above))
                    here = view
                    shape = tr.target
                    counts = None
                    if view is not None and view.origins and counter.held \
                            and shape not in view.quiet:
                        examine_start(view)
                    elif view is not None and above is not None and (
                            not view.origins or shape in view.quiet):
                        above.calm[tr] = view
                    return
                stack.append((tr, None, None, label, node, pos, counts, 0, None, None))
                shape = tr.target
                counts = None
                return
            if tr.inert:
                # Candidates wait in this state, and this element neither reports, pushes
                # nor marks any: its content starts with no sets, the state's wait in its
                # frame (the usual case while candidates wait for an ancestor's end).
                view = None
                if general:
                    above = here
                    if (pos == 1 and len(counts) == 1) or not stack:
                        # the level has read nothing: no origin to make (see below)
                        view = None if above is None else above.plain.get(tr)
                        if view is None:
                            view = view_of(tr, None, None)
                    else:
                        if above is not None and not garbage:
                            view = above.next.get((tr, len(stack), False,
                                                   tuple(map(is_not, sets or (), _NOT_EMPTY))))
                        if view is None:
                            view = view_of(tr, sets, None)
                stack.append((tr, sets, None, label, node, pos, counts, 0, view, here))
                here = view
                shape = tr.target
                sets = None
                counts = None
                if view is not None and view.origins and counter.held \
                        and shape not in view.quiet:
                    examine_start(view)
                return
            case = hold_case
            if case is not None and tr is case[0] and sets is case[1] and here is case[2] \
                    and stack[-1][4] == case[3] and not case[4].reported \
                    and label == case[8]:
                # the next line of the group the last one joined, in the same state, under
                # the same parent and view, with the same name (see hold_case): it joins the
                # group the same way
                case[5].append((node, case[6], pos, attributes(attrs)))
                label = case[8]
                count = counter.held + 1
                counter.held = count
                if count > counter.peak:
                    counter.peak = count
                view = case[7]
                stack.append((tr, sets, None, label, node, pos, counts, tr.hold + 1, view, here))
                here = view
                shape = tr.target
                sets = None
                counts = None
                return
            hold = tr.hold
            if hold >= 0 and sets is not None and stack:
                # A line while the lines before it wait for an ancestor (issue 33, item 4):
                # its fate is that of the group the one entry holding candidates has, marked
                # in this content (see _Enter.hold), so it joins the group now, as the row a
                # report gives; its frame holds no candidate, and its end passes the sets on.
                held = sets[hold]
                if held.__class__ is frozenset and len(held) == 1:
                    (lead,) = held
                    if lead.node > stack[-1][4] and not lead.reported and (
                            not tr.hold_others or
                            all(sets[j] is _EMPTY for j in tr.hold_others)):
                        if paths and len(paths) == len(stack) and paths[-1][0] == stack[-1][4]:
                            prefix = paths[-1][1]
                        else:
                            prefix = path_to(len(stack))
                        # the row keeps its path less its position (its parent's path and
                        # its name, shared by the case's rows) and its position, the path
                        # itself made with its match: a row waits to the root's end
                        stem = f"{prefix}/{label}"
                        rows = lead.rows
                        if rows is None:
                            rows = lead.rows = [(node, stem, pos, attributes(attrs))]
                        else:
                            rows.append((node, stem, pos, attributes(attrs)))
                        parent = stack[-1][4]
                        counter.held += 1
                        if counter.held > counter.peak:
                            counter.peak = counter.held
                        view = None
                        if general:
                            above = here
                            if above is not None:
                                settled = above.held.get(tr)
                                if settled is not None and settled[0] == len(stack):
                                    # nothing to check here (the usual case, see calm)
                                    view = settled[1]
                                    stack.append((tr, sets, None, label, node, pos, counts,
                                                  hold + 1, view, above))
                                    hold_case = (tr, sets, above, parent, lead, rows, stem,
                                                 view, label)
                                    here = view
                                    shape = tr.target
                                    sets = None
                                    counts = None
                                    return
                                # the key Detector.below makes: only ``hold`` holds any
                                view = above.next.get((tr, len(stack), False, tr.hold_mask))
                            if view is None:
                                view = view_of(tr, sets, None)
                        else:
                            # no check: the next line in this case joins at once (hold_case)
                            hold_case = (tr, sets, here, parent, lead, rows, stem, None,
                                         label)
                        stack.append((tr, sets, None, label, node, pos, counts, hold + 1, view,
                                      here))
                        above, here = here, view
                        shape = tr.target
                        sets = None
                        counts = None
                        if view is not None and view.origins and counter.held \
                                and shape not in view.quiet:
                            examine_start(view)
                        elif view is not None and above is not None and (
                                not view.origins or shape in view.quiet):
                            above.held[tr] = (len(stack) - 1, view)
                            hold_case = (tr, stack[-1][1], above, parent, lead, rows, stem,
                                         view, label)
                        return
            if tr.waits:
                # a candidate that waits, nothing else (the start path below, shortened)
                if paths and len(paths) == len(stack) and paths[-1][0] == stack[-1][4]:
                    path = f"{paths[-1][1]}/{label}[{pos}]"
                else:
                    path = path_to(len(stack)) + f"/{label}[{pos}]"
                waiting = Candidate(node, path, attributes(attrs), counter)
                view = None
                if general:
                    above = here
                    if above is not None and not garbage:
                        first = pos == 1 and len(counts) == 1
                        if first or not stack or sets is None:
                            view = above.next.get((tr, len(stack), True, None))
                        else:
                            view = above.next.get((tr, len(stack), True,
                                                   tuple(map(is_not, sets, _NOT_EMPTY))))
                    if view is None:
                        view = view_of(tr, None if pos == 1 and len(counts) == 1 else sets,
                                       waiting)
                stack.append((tr, sets, waiting, label, node, pos, counts, 0, view, here))
                here = view
                shape = tr.target
                sets = None
                counts = None
                if view is not None and view.origins and counter.held \
                        and shape not in view.quiet:
                    examine_start(view)
                return
            cand = None
            now = None
            if tr.marks:
                # the path is built for candidates only, from the names and positions on
                # the stack
                if paths and len(paths) == len(stack) and paths[-1][0] == stack[-1][4]:
                    path = f"{paths[-1][1]}/{label}[{pos}]"  # a sibling's prefix
                else:
                    path = path_to(len(stack)) + f"/{label}[{pos}]"
                if tr.instant:
                    # Decided at its own start tag (//a/b): reported now, with no Candidate
                    # object to make and free; it counts as held for that moment (pot_max).
                    if counter.held >= counter.peak:
                        counter.peak = counter.held + 1
                    now = (node, path, attributes(attrs))
                else:
                    cand = Candidate(node, path, attributes(attrs), counter)
            found: list[Candidate] = []
            if sets is not None:
                for i, _marked in tr.report:
                    if sets[i] is not _EMPTY:
                        found.extend(sets[i])
            if found or now is not None:
                report(found, "start", node, now)
            new: Sets | None = None
            if tr.push:
                new = _routed(tr.push, None, sets, cand, len(tr.target.entries))
            view = None
            if general:
                # before a first child the level has read nothing: its sets hold only copies
                # pushed from above, no candidate of its own (no origin to make)
                fsets = None if pos == 1 and len(counts) == 1 else sets
                above = here
                if above is not None and not garbage:
                    # the view memoised under the key Detector.below makes, read here: with
                    # no reported candidate left in the sets (garbage 0), a set holds one iff
                    # it is not _EMPTY, told in C (this is every such start tag)
                    if fsets is None or not stack:
                        view = above.plain.get(tr) if cand is None else \
                            above.next.get((tr, len(stack), True, None))
                    else:
                        view = above.next.get((tr, len(stack), cand is not None,
                                               tuple(map(is_not, fsets, _NOT_EMPTY))))
                if view is None:
                    view = view_of(tr, fsets, cand)
            stack.append((tr, sets, cand, label, node, pos, counts, 0, view, here))
            here = view
            shape = tr.target
            sets = new
            counts = None
            if view is not None and view.origins and counter.held \
                    and shape not in view.quiet:
                examine("start", node, view, None)
            if garbage > counter.held + SLACK:
                compact()

        def end(label: object = None) -> None:
            nonlocal shape, sets, counts, here
            opened, fsets, cand, _name, at, _pos, counts, held, _view, here = stack.pop()
            # leave' memoised on the element's enter' by the shape its content ended in
            try:
                tr = opened.leaves[shape]
            except KeyError:
                tr = leave_after(opened, shape)
            csets = sets
            if csets is None and fsets is None and cand is None:
                shape = tr.target  # fast path: no candidate anywhere to move or report
                if general:
                    # the shapes at which no origin of the view is decided first (the usual
                    # case, one look-up), then whether any candidate is held at all
                    view = here
                    if view is None or shape not in view.quiet:
                        if view is not None and not view.origins:
                            view.quiet.add(shape)  # no origin: none to decide, whatever follows
                        elif counter.held and stack:
                            examine("end", at, view, None)
                            if garbage > counter.held + SLACK:
                                compact()
                return
            if csets is None and held and tr.keep == held - 1:
                # the end of a line held in its entry's group (see start): the state's sets
                # are the father's, as the route would rebuild them (nothing reported here,
                # so only the check can make a compaction due)
                shape = tr.target
                sets = fsets
                if general:
                    view = here
                    if (view is None or (shape not in view.still and (
                            fsets is not None or (view.origins and shape not in view.quiet)))) \
                            and counter.held and stack:
                        examine("end", at, view, fsets)
                        if garbage > counter.held + SLACK:
                            compact()
                return
            # leave() inlined (the path of every end tag while candidates wait)
            if tr.reports:
                found: list[Candidate] = []
                if csets is not None:
                    for k in tr.report_child:
                        if csets[k] is not _EMPTY:
                            found.extend(csets[k])
                if fsets is not None:
                    for i in tr.report_father:
                        if fsets[i] is not _EMPTY:
                            found.extend(fsets[i])
                if tr.report_mark and cand is not None:
                    found.append(cand)
                if found:
                    report(found, "end", at)
            one = tr.one
            if one is not None:
                new = _routed_one(one, csets, fsets,
                                  None if cand is None or cand.reported else cand, tr.width,
                                  stack[-1][4] if stack else 0)
            else:
                new = _routed(tr.route, csets, fsets, cand, tr.width,
                              stack[-1][4] if stack else 0) if tr.route else None
            shape = tr.target
            sets = new
            if general and counter.held and stack:
                view = here
                if view is None or (shape not in view.still and (
                        new is not None or (view.origins and shape not in view.quiet))):
                    examine("end", at, view, new)
            if garbage > counter.held + SLACK:
                compact()

        def leave(tr: _Leave, csets: Sets | None, fsets: Sets | None,
                  cand: Candidate | None, event: str, at: int) -> None:
            """Listing 1's ``leave`` where candidates may be pending, at an end tag or after a
            text node: the candidates ``tr`` reports from the content's sets ``csets``, the
            enclosing ones ``fsets`` and the element's own ``cand``, the sets routed on, then
            the general check where it may find something, and a compaction when due."""
            nonlocal shape, sets
            found: list[Candidate] = []
            if csets is not None:
                for k in tr.report_child:
                    found.extend(csets[k])
            if fsets is not None:
                for i in tr.report_father:
                    found.extend(fsets[i])
            if tr.report_mark and cand is not None:
                found.append(cand)
            if found:
                report(found, event, at)
            new = _routed(tr.route, csets, fsets, cand, tr.width,
                          stack[-1][4] if stack else 0) if tr.route else None
            shape = tr.target
            sets = new
            if general and counter.held and stack:
                view = stack[-1][8]
                # the check where the state's candidates or the origins above may be decided
                # (not at a shape where nothing can be, whatever the sets hold)
                if view is None or (shape not in view.still and (
                        new is not None or (view.origins and shape not in view.quiet))):
                    examine(event, at, view, new)
            if garbage > counter.held + SLACK:
                compact()

        def text(*_: object) -> None:
            """A text node (:data:`._grammar.TEXT`, issue 33): a leaf of the binary tree,
            entered and left at once (its content is λ), never a candidate itself (the
            compiled query selects elements only). What it decides is reported at
            ``("text", k)``, the k-th text node of the document. Further character data,
            comments or PIs before the next tag are the same node. Outside the root element,
            comments and PIs are the root's siblings: before it, the node the document starts
            with (no candidate exists yet); after it, the last node, where nothing follows."""
            nonlocal shape, sets, last_text, texts, epilogue
            at = (node, len(stack))
            if at == last_text:
                return
            last_text = at
            texts += 1
            if not stack:
                if node == 0:
                    shape = automaton.after_prolog()
                    return
                shape = automaton.twin(shape, 2)
                epilogue = True
            tr = shape.by_tag.get(TEXT)
            if tr is None:
                tr = enter_named(shape, TEXT)
            inner = tr.target
            fsets = sets
            csets: Sets | None = None
            if fsets is not None:
                found = [c for i, _marked in tr.report for c in fsets[i]]
                if found:
                    report(found, "text", texts)
                if tr.push:
                    csets = _routed(tr.push, None, fsets, None, len(inner.entries))
            lv = tr.leaves.get(inner)
            if lv is None:
                lv = leave_after(tr, inner)
            leave(lv, csets, fsets, None, "text", texts)

        def finish() -> None:
            """The end of the input (the paper's ``endDocHandler``): where a text node could
            have followed the root, what holds when none did is decided at the root's end
            tag, and reported now."""
            nonlocal sets
            if stack or not node or sets is None or epilogue:
                return
            g = automaton.grammar
            found = [c for j, (x, _f, b) in enumerate(shape.entries)
                     if b and g.nullable(x) for c in sets[j]]
            sets = None
            if found:
                report(found, "end", 1)

        def view() -> tuple[Shape, Sets | None, list[tuple[Any, ...]]]:
            counter.elements = node
            return shape, sets, stack

        return start, end, text, finish, view

    @property
    def depth(self) -> int:
        return len(self._view()[2])

    @property
    def elements(self) -> int:
        """Elements read so far (also brings ``counter.elements`` up to date)."""
        self._view()
        return self.counter.elements

    @property
    def finished(self) -> bool:
        """Whether the root element has ended."""
        return self.elements > 0 and not self._view()[2]

    def _take(self) -> tuple[Found, ...]:
        reports = self.reports
        # a held row is (node, parent's path and name, position, attributes): see start
        out = tuple(Found(*c) if len(c) == 3 else Found(c[0], f"{c[1]}[{c[2]}]", c[3])
                    for r in reports for c in r[2])
        reports.clear()
        return out

    def start(self, label: str, attributes: Any = None) -> tuple[Found, ...]:
        """The start tag of an element named ``label`` (a Clark name)."""
        self.start_event(label, attributes)
        return self._take()

    def end(self) -> tuple[Found, ...]:
        """The end tag of the innermost open element."""
        self.end_event()
        return self._take()

    def text(self) -> tuple[Found, ...]:
        """Character data (a text node; more before the next tag is the same node)."""
        self.text_event()
        return self._take()

    def finish(self) -> tuple[Found, ...]:
        """The end of the input."""
        self.finish_event()
        return self._take()

    def entries(self) -> list[tuple[str, str, bool, frozenset[int]]]:
        """The current state as ``(x, x_first, b, M)`` rows (variable names, candidate node
        indexes), for traces and tests (Figure 5)."""
        g = self.automaton.grammar
        shape, sets, _stack = self._view()
        rows = []
        for j, (x, f, b) in enumerate(shape.entries):
            m = frozenset(n for c in sets[j] if not c.reported for n in c.nodes()) \
                if sets is not None else frozenset()
            rows.append((g.name(x), g.name(f), b, m))
        return rows
