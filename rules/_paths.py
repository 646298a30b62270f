"""Distinguished paths as regular languages over node labels (seed 002, sections 2.4 and 3.1.1).

The paper tests two simple XPath expressions for *independence* (``e1(d) ∩ e2(d) = ∅`` for
every document ``d``) by turning their distinguished paths into regular expressions and
intersecting them (section 3.1.1). This module does that with automata over **label words**:
a node of a document is named by the labels on the way from the document node to it,
``doc(s.xml) elem(stores) elem(store) attr(id)``. A node has exactly one such word, so if the
languages of two paths do not intersect, no node is selected by both: independence.

Each path becomes an NFA whose language contains the word of every node the path can select
(an over-approximation; that is what makes the tests sound):

* qualifiers are ignored (a qualifier only removes nodes, section 3.1.1: "handle qualifiers
  conservatively");
* ``/n`` is one ``elem(n)`` transition, ``//n`` any number of elements, then ``elem(n)``;
  ``*`` and ``@*`` are wildcard labels;
* ``.`` after ``/`` is the identity; after ``//`` it is the element descendants-or-self;
* ``..`` is computed exactly on the language: ``parent(L) = {w | w·a ∈ L}`` (the states with a
  transition into an accepting state become accepting); ``p//..`` is ``parent(p//.)``.
  This replaces the paper's *modified distinguished path* rewriting (section 2.4) inside the
  analysis, because that rewriting is not an over-approximation (``p//.`` becomes ``p//*``,
  which loses ``p`` itself); :func:`modified_distinguished_path` still gives the paper's
  rewriting for display and for Example 3;
* ``$delta`` is replaced by the automaton of the rule's event path (section 2.4: "we
  substitute for $delta the distinguished path of the XPath expression which occurs in the
  event part of the rule"), or by "any node" for a rule ``on EVENT Name``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from xmlevents.algebra import InvalidArgumentError

from . import ast

__all__ = ["Label", "Nfa", "path_nfa", "any_node_nfa", "intersects", "modified_distinguished_path"]


@dataclass(frozen=True, slots=True)
class Label:
    """A transition label: ``kind`` is ``"doc"``, ``"elem"`` or ``"attr"``; ``name`` None is a
    wildcard (``*``, ``@*``, or any document for ``$delta`` of ``on EVENT``)."""

    kind: str
    name: str | None = None

    def meets(self, other: Label) -> bool:
        """Whether some node label matches both."""
        return self.kind == other.kind and (self.name is None or other.name is None
                                            or self.name == other.name)

    def __str__(self) -> str:
        name = "*" if self.name is None else self.name
        return {"doc": f"document({name!r})", "elem": name, "attr": f"@{name}"}[self.kind]


ANY_ELEM = Label("elem")
ANY_ATTR = Label("attr")


@dataclass
class Nfa:
    """A nondeterministic automaton with ε-moves; states are ints, ``final`` the accepting
    set. Built by appending steps to the current ``final`` set (each step makes a new set)."""

    moves: list[list[tuple[Label, int]]] = field(default_factory=lambda: [[]])
    eps: list[list[int]] = field(default_factory=lambda: [[]])
    final: frozenset[int] = frozenset({0})

    def state(self) -> int:
        self.moves.append([])
        self.eps.append([])
        return len(self.moves) - 1

    def copy(self) -> Nfa:
        return Nfa([list(m) for m in self.moves], [list(e) for e in self.eps], self.final)

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        seen = set(states)
        stack = list(seen)
        while stack:
            for nxt in self.eps[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(seen)

    # --- building ------------------------------------------------------------------------

    def move(self, label: Label) -> Nfa:
        """Append one labelled step from every final state."""
        target = self.state()
        for f in self.final:
            self.moves[f].append((label, target))
        self.final = frozenset({target})
        return self

    def descendants_or_self(self) -> Nfa:
        """Append ``elem(*)*``: the final nodes and their element descendants."""
        loop = self.state()
        for f in self.final:
            self.eps[f].append(loop)
        self.moves[loop].append((ANY_ELEM, loop))
        self.final = frozenset({loop})
        return self

    def subtree(self) -> Nfa:
        """Append ``elem(*)* attr(*)?``: the final nodes and every node below them."""
        self.descendants_or_self()
        (loop,) = self.final
        attr = self.state()
        self.moves[loop].append((ANY_ATTR, attr))
        self.final = frozenset({loop, attr})
        return self

    def parent(self) -> Nfa:
        """Replace the language by its parents ``{w | w·a ∈ L}`` (``a`` not a document)."""
        parents = set()
        for q in range(len(self.moves)):
            for label, nxt in self.moves[q]:
                if label.kind != "doc" and self.closure([nxt]) & self.final:
                    parents.add(q)
        self.final = frozenset(parents)
        return self

    def step(self, step: ast.Step) -> Nfa:
        """Append one step of a simple XPath path, qualifiers ignored."""
        name = None if step.name == "*" else step.name
        if step.sep is ast.Sep.DESCENDANT:
            self.descendants_or_self()
        if step.kind is ast.StepKind.ELEMENT:
            return self.move(Label("elem", name))
        if step.kind is ast.StepKind.ATTRIBUTE:
            return self.move(Label("attr", name))
        if step.kind is ast.StepKind.SELF:
            return self
        return self.parent()

    def steps(self, steps: Iterable[ast.Step]) -> Nfa:
        for s in steps:
            self.step(s)
        return self

    # --- questions -----------------------------------------------------------------------

    def empty(self) -> bool:
        """Whether the language is empty."""
        seen = set(self.closure([0]))
        stack = list(seen)
        while stack:
            q = stack.pop()
            if q in self.final:
                return False
            for _label, nxt in self.moves[q]:
                for c in self.closure([nxt]):
                    if c not in seen:
                        seen.add(c)
                        stack.append(c)
        return not (seen & self.final)

    def last_labels(self) -> tuple[set[Label], bool]:
        """The labels a word of the language can end with, and whether the empty word
        (the start, before any document) is in it. Used for result types (section 2.4)."""
        reach = _reachable(self)
        labels = {label for q in reach for label, nxt in self.moves[q]
                  if self.closure([nxt]) & self.final}
        return labels, bool(self.closure([0]) & self.final)


def _reachable(nfa: Nfa) -> set[int]:
    seen = set(nfa.closure([0]))
    stack = list(seen)
    while stack:
        q = stack.pop()
        for _label, nxt in nfa.moves[q]:
            for c in nfa.closure([nxt]):
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
    return seen


def intersects(a: Nfa, b: Nfa) -> bool:
    """Whether the languages of ``a`` and ``b`` share a word: the product automaton's
    emptiness (section 3.1.1, "finding their intersection using standard techniques")."""
    start = [(x, y) for x in a.closure([0]) for y in b.closure([0])]
    seen = set(start)
    stack = list(start)
    while stack:
        x, y = stack.pop()
        if x in a.final and y in b.final:
            return True
        for la, xa in a.moves[x]:
            for lb, yb in b.moves[y]:
                if la.meets(lb):
                    for pair in ((p, r) for p in a.closure([xa]) for r in b.closure([yb])):
                        if pair not in seen:
                            seen.add(pair)
                            stack.append(pair)
    return False


def any_node_nfa() -> Nfa:
    """Any element or attribute of any document: ``$delta`` of an ``on EVENT Name`` rule,
    whose composite event may bind it to any node."""
    nfa = Nfa()
    nfa.move(Label("doc"))
    nfa.move(ANY_ELEM)
    return nfa.subtree()


def path_nfa(path: ast.Path, delta: Nfa | None) -> Nfa:
    """The automaton of ``path``'s distinguished path (qualifiers ignored), ``$delta``
    replaced by ``delta`` (None: any node). ``path`` must be absolute.

    >>> from xmlevents.rules import parse_path
    >>> event = path_nfa(parse_path("document('g.xml')/guide/restaurant/entree/ingredient"), None)
    >>> up = path_nfa(parse_path("$delta/../..[name='Baghdad Cafe']"), event)
    >>> sorted(str(label) for label in up.last_labels()[0])
    ['restaurant']
    """
    if isinstance(path.root, ast.Document):
        nfa = Nfa()
        nfa.move(Label("doc", path.root.name))
    elif isinstance(path.root, ast.Delta):
        nfa = (delta if delta is not None else any_node_nfa()).copy()
    else:
        raise InvalidArgumentError(f"path_nfa: {path} is relative; give a path from "
                                   "document(...) or $delta")
    return nfa.steps(path.steps)


def modified_distinguished_path(path: ast.Path, event: ast.Path | None) -> ast.Path:
    """The paper's *modified distinguished path* (section 2.4), used for result types.

    ``$delta`` is replaced by the event's distinguished path; then, left to right: ``a/..``
    (``a`` a name or ``*``) becomes ``.``; a ``.`` or ``..`` after ``//`` becomes ``*``; a
    ``.`` after ``/`` is deleted with its separator. A ``..`` that none of these removes
    (after ``@a``, or right after the document) is kept.

    >>> from xmlevents.rules import parse_path
    >>> str(modified_distinguished_path(parse_path("$delta/../..[name='Baghdad Cafe']"),
    ...     parse_path("document('g.xml')/guide/restaurant/entree/ingredient")))
    "document('g.xml')/guide/restaurant"
    """
    distinguished = path.distinguished()
    root: ast.Document | ast.Delta | None = distinguished.root
    steps = list(distinguished.steps)
    if isinstance(root, ast.Delta) and event is not None:
        base = event.distinguished()
        root = base.root
        steps = list(base.steps) + steps
    out: list[ast.Step] = []
    for step in steps:
        if step.kind is ast.StepKind.PARENT and step.sep is ast.Sep.CHILD and out \
                and out[-1].kind is ast.StepKind.ELEMENT:
            popped = out.pop()  # a/.. is .; then /. is deleted, //. becomes //*
            if popped.sep is ast.Sep.DESCENDANT:
                out.append(ast.Step(ast.Sep.DESCENDANT, ast.StepKind.ELEMENT, "*"))
            continue
        if step.kind in (ast.StepKind.SELF, ast.StepKind.PARENT) and step.sep is ast.Sep.DESCENDANT:
            out.append(ast.Step(ast.Sep.DESCENDANT, ast.StepKind.ELEMENT, "*"))
            continue
        if step.kind is ast.StepKind.SELF:
            continue
        out.append(step)
    if root is None or (isinstance(root, ast.Document) and not out):
        return distinguished
    return ast.Path(root, tuple(out))
