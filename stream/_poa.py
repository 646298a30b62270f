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

XML refines the paper's binary trees in one place: a document has one root element, so at the
root the only right completion is the empty tree; there ``[[x5]] = T`` reads ``x5 -> λ`` and
productions whose ``x5`` cannot derive λ are dropped. The end of the root is then the end of
the input (``endDocHandler``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._grammar import Grammar

__all__ = ["Shape", "Automaton", "Candidate", "Counter", "Run"]

Entry = tuple[int, int, bool]


class Shape:
    """The pairs of a POA state and their ``b`` flags, interned: equal shapes are one object,
    whose transitions are memoised on it."""

    __slots__ = ("enter", "entries", "id", "leave")

    def __init__(self, sid: int, entries: tuple[Entry, ...]) -> None:
        self.id = sid
        self.entries = entries
        self.enter: dict[int, _Enter] = {}
        self.leave: dict[tuple[int, int], _Leave] = {}


class _Enter:
    """``enter'`` from a shape on a label class: the target shape, the sources whose
    candidates are reported (``(i, marked)``), and per target entry the sources pushed in."""

    __slots__ = ("marks", "push", "report", "target")

    def __init__(self, target: Shape, report: tuple[tuple[int, bool], ...],
                 push: tuple[tuple[int, tuple[tuple[int, bool], ...]], ...],
                 marks: bool) -> None:
        self.target = target
        self.report = report
        self.push = push
        self.marks = marks


class _Leave:
    """``leave'`` from a father shape and a child shape on a label class: the target shape,
    what is reported, and per target entry the child and father entries it collects."""

    __slots__ = ("marks", "report_child", "report_father", "report_mark", "route", "target")

    def __init__(self, target: Shape, report_child: tuple[int, ...],
                 report_father: tuple[int, ...], report_mark: bool,
                 route: tuple[tuple[int, tuple[int, ...], tuple[int, ...], bool], ...]) -> None:
        self.target = target
        self.report_child = report_child
        self.report_father = report_father
        self.report_mark = report_mark
        self.route = route
        self.marks = report_mark or any(r[3] for r in route)


class Automaton:
    """The POA ``A_p`` of a grammar's query (section 5.1), built as the input asks for it."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self._shapes: dict[tuple[Entry, ...], Shape] = {}
        self.initial = self._shape({(grammar.start, grammar.start): True})
        self._root_enter: dict[int, _Enter] = {}
        self._root_leave: dict[tuple[int, int], _Leave] = {}

    @property
    def shapes(self) -> int:
        """How many distinct shapes the input has needed so far."""
        return len(self._shapes)

    def _shape(self, flags: dict[tuple[int, int], bool]) -> Shape:
        entries = tuple(sorted((x, f, b) for (x, f), b in flags.items()))
        found = self._shapes.get(entries)
        if found is None:
            found = self._shapes[entries] = Shape(len(self._shapes), entries)
        return found

    def _right_free(self, x5: int, root: bool) -> bool:
        g = self.grammar
        return g.nullable(x5) if root else g.universal(x5)

    def enter(self, shape: Shape, cls: int, root: bool) -> _Enter:
        """``enter'(q, a)`` for a state of this shape (memoised)."""
        memo = self._root_enter if root else shape.enter
        found = memo.get(cls)
        if found is not None:
            return found
        g = self.grammar
        flags: dict[tuple[int, int], bool] = {}
        report: list[tuple[int, bool]] = []
        push: dict[tuple[int, int], list[tuple[int, bool]]] = {}
        marks = False
        for i, (x2, _x1, b) in enumerate(shape.entries):
            for x3, x5, marked in g.productions(x2, cls):
                if root and not g.nullable(x5):
                    continue  # a document has one root element
                marks = marks or marked
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
        found = _Enter(target, tuple(dict.fromkeys(report)),
                       tuple((index[k], tuple(dict.fromkeys(v))) for k, v in push.items()),
                       marks)
        memo[cls] = found
        return found

    def leave(self, father: Shape, child: Shape, cls: int, root: bool) -> _Leave:
        """``leave'((q_w, q_last(w1)), a)`` for states of these shapes (memoised)."""
        key0 = (child.id, cls)
        memo = self._root_leave if root else father.leave
        found = memo.get(key0)
        if found is not None:
            return found
        g = self.grammar
        flags: dict[tuple[int, int], bool] = {}
        sources: dict[tuple[int, int], tuple[set[int], set[int], list[bool]]] = {}
        report_child: list[int] = []
        by_left: list[dict[int, list[tuple[int, bool]]]] = []
        for x2, _x1, _b in father.entries:
            table: dict[int, list[tuple[int, bool]]] = {}
            for x3, x5, marked in g.productions(x2, cls):
                if root and not g.nullable(x5):
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
        found = _Leave(target, tuple(dict.fromkeys(report_child)), tuple(sorted(report_father)),
                       report_mark, tuple(route))
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
    entry of the stack refers to it (freed, and no longer counted, once none does)."""

    __slots__ = ("_counter", "attributes", "node", "path", "reported")

    def __init__(self, node: int, path: str, attributes: dict[str, str],
                 counter: Counter) -> None:
        self.node = node
        self.path = path
        self.attributes = attributes
        self.reported = False
        self._counter = counter
        counter.held += 1
        if counter.held > counter.peak:
            counter.peak = counter.held

    def __del__(self) -> None:
        if not self.reported:
            self._counter.held -= 1

    def __repr__(self) -> str:
        return f"Candidate({self.node}, {self.path!r})"


_NONE: tuple[Candidate, ...] = ()
Sets = tuple[frozenset[Candidate], ...]


class Run:
    """One run of an automaton over the start and end events of one document (Listing 1).

    :meth:`start` and :meth:`end` return the candidates decided at that event (each once, in
    the order found); the run knows nothing of lxml: ``attributes`` turns whatever the driver
    passes along with a start event into a dict, and is called for candidates only.
    """

    def __init__(self, automaton: Automaton,
                 attributes: Callable[[Any], dict[str, str]] | None = None) -> None:
        self.automaton = automaton
        self.counter = Counter()
        self._classify = automaton.grammar.classify
        self._classes = automaton.grammar._classes
        self._attributes = attributes or (lambda a: dict(a) if a else {})
        self.shape = automaton.initial
        self.sets: Sets | None = None
        # per open element: [state shape, candidate sets, its candidate, label class, node,
        # name, position among same-named siblings, counts of its children's names]
        self._stack: list[list[Any]] = []
        self._root_counts: dict[str, int] = {}
        self.finished = False

    @property
    def depth(self) -> int:
        return len(self._stack)

    def _path(self, label: str, pos: int) -> str:
        return "".join(f"/{f[5]}[{f[6]}]" for f in self._stack) + f"/{label}[{pos}]"

    def _report(self, found: list[Candidate]) -> tuple[Candidate, ...]:
        out = []
        for c in found:
            if not c.reported:
                c.reported = True
                self.counter.held -= 1
                out.append(c)
        self.counter.matches += len(out)
        return tuple(out)

    def start(self, label: str, attributes: Any = None) -> tuple[Candidate, ...]:
        """The start tag of an element named ``label`` (a Clark name)."""
        counter = self.counter
        node = counter.elements = counter.elements + 1
        stack = self._stack
        if stack:
            parent = stack[-1]
            counts = parent[7]
            if counts is None:
                counts = parent[7] = {}
        else:
            counts = self._root_counts
        pos = counts[label] = counts.get(label, 0) + 1
        cls = self._classes.get(label)
        if cls is None:
            cls = self._classify(label)
        shape = self.shape
        if stack:
            tr = shape.enter.get(cls)
            if tr is None:
                tr = self.automaton.enter(shape, cls, False)
        else:
            tr = self.automaton.enter(shape, cls, True)
        sets = self.sets
        if sets is None and not tr.marks:  # nothing pending, nothing to mark: the usual case
            stack.append([shape, None, None, cls, node, label, pos, None])
            self.shape = tr.target
            return _NONE
        cand = Candidate(node, self._path(label, pos), self._attributes(attributes), counter) \
            if tr.marks else None
        found: list[Candidate] = []
        for i, marked in tr.report:
            if sets is not None:
                found.extend(sets[i])
            if marked and cand is not None:
                found.append(cand)
        out = self._report(found) if found else _NONE
        new: Sets | None = None
        if tr.push:
            lists: list[frozenset[Candidate]] = [frozenset()] * len(tr.target.entries)
            alive = False
            for j, srcs in tr.push:
                acc: set[Candidate] = set()
                for i, marked in srcs:
                    if sets is not None:
                        acc.update(sets[i])
                    if marked and cand is not None:
                        acc.add(cand)
                if acc:
                    acc = {c for c in acc if not c.reported}
                    if acc:
                        lists[j] = frozenset(acc)
                        alive = True
            if alive:
                new = tuple(lists)
        stack.append([shape, sets, cand, cls, node, label, pos, None])
        self.shape = tr.target
        self.sets = new
        return out

    def end(self) -> tuple[Candidate, ...]:
        """The end tag of the innermost open element."""
        stack = self._stack
        frame = stack.pop()
        fshape = frame[0]
        fsets = frame[1]
        cand = frame[2]
        cls = frame[3]
        root = not stack
        child = self.shape
        if root:
            tr = self.automaton.leave(fshape, child, cls, True)
        else:
            tr = fshape.leave.get((child.id, cls))
            if tr is None:
                tr = self.automaton.leave(fshape, child, cls, False)
        csets = self.sets
        out = _NONE
        new: Sets | None = None
        if csets is None and fsets is None and cand is None:  # the usual case
            self.shape = tr.target
            if root:
                self.finished = True
            return out
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
            out = self._report(found)
        if tr.route:
            lists: list[frozenset[Candidate]] = [frozenset()] * len(tr.target.entries)
            alive = False
            for j, cs, fs, mark in tr.route:
                acc: set[Candidate] = set()
                if csets is not None:
                    for k in cs:
                        acc.update(csets[k])
                if fsets is not None:
                    for i in fs:
                        acc.update(fsets[i])
                if mark and cand is not None:
                    acc.add(cand)
                if acc:
                    acc = {c for c in acc if not c.reported}
                    if acc:
                        lists[j] = frozenset(acc)
                        alive = True
            if alive:
                new = tuple(lists)
        self.shape = tr.target
        self.sets = new
        if root:
            self.finished = True
        return out

    def entries(self) -> list[tuple[str, str, bool, frozenset[int]]]:
        """The current state as ``(x, x_first, b, M)`` rows (variable names, candidate node
        indexes), for traces and tests (Figure 5)."""
        g = self.automaton.grammar
        rows = []
        for j, (x, f, b) in enumerate(self.shape.entries):
            m = frozenset(c.node for c in self.sets[j]) if self.sets is not None else frozenset()
            rows.append((g.name(x), g.name(f), b, m))
        return rows
