"""Regular tree grammars over binary trees with a set of distinguished variables (seed 004,
section 3), and the label classes their productions distinguish.

A variable ``x`` derives the empty tree (``x -> λ``) or a node ``a<x1, x2>`` whose left subtree
(the element's content, section 2's binary encoding) derives from ``x1`` and whose right
subtree (its following siblings) from ``x2``; ``*`` stands for every label. A node derived
from a distinguished variable is a match (``p_x⊙``, section 3); a set of them is allowed
because some Core XPath queries need two.

Assumptions: labels are Clark names (``{uri}local`` or ``local``); the alphabet is infinite,
so a production for a label the grammar never names can only be a ``*`` production.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["Production", "LabelTest", "Grammar", "ExplicitGrammar", "ExplicitRule", "TEXT"]

#: The label of a text node in the trees a compiled XPath query runs on (issue 33): XPath's
#: data model has text nodes among an element's children, and ``//..`` or
#: ``//following-sibling::b`` reach elements through them. No element has this name (it is
#: not an XML name); a run of character data, comments and processing instructions between
#: two tags is one such node (no query of the subset can tell adjacent ones apart: they have
#: the same parent and the same element siblings).
TEXT = "#text"


class Production(NamedTuple):
    """``x -> a<left, right>`` for the label class asked for; ``marked`` when ``x`` is
    distinguished, so that the node it derives is a match (Listing 1, line 12)."""

    left: int
    right: int
    marked: bool


@dataclass(frozen=True, slots=True)
class LabelTest:
    """A test on an element's name: ``kind`` ``"name"`` (``value`` a Clark name) or ``"ns"``
    (``value`` a namespace URI, for ``prefix:*``); or ``"text"``, passed by text nodes
    (:data:`TEXT`) alone."""

    kind: str
    value: str

    def __call__(self, label: str) -> bool:
        if self.kind == "name":
            return label == self.value
        if self.kind == "text":
            return label == TEXT
        return label.startswith("{" + self.value + "}")

    def __str__(self) -> str:
        if self.kind == "text":
            return TEXT
        return self.value if self.kind == "name" else "{" + self.value + "}*"


class Grammar(ABC):
    """A regular tree grammar whose productions are asked for lazily, per variable and label
    class (section 5.2: only what the input needs is ever computed).

    Variables are small integers; ``start`` is ``x0``. A label class is the set of the
    grammar's label tests an element name passes; all names of a class behave alike.
    """

    start: int
    tests: tuple[LabelTest, ...]
    #: Whether the trees it runs on have text nodes (:data:`TEXT`) among the elements: only
    #: compiled XPath queries whose answer can depend on them (issue 33); a grammar in the
    #: paper's notation runs on the tree of elements.
    texts: bool = False

    def __init__(self, tests: tuple[LabelTest, ...]) -> None:
        self.tests = tests
        self._classes: dict[str, int] = {}
        self._class_ids: dict[frozenset[int], int] = {}
        #: class id -> the indexes of the tests its names pass
        self.class_tests: list[frozenset[int]] = []

    def classify(self, label: str) -> int:
        """The label class of an element name (memoised: documents repeat their names)."""
        cls = self._classes.get(label)
        if cls is None:
            passed = frozenset(i for i, t in enumerate(self.tests) if t(label))
            cls = self._class_ids.get(passed)
            if cls is None:
                cls = self._class_ids[passed] = len(self.class_tests)
                self.class_tests.append(passed)
            if len(self._classes) < 100_000:  # names are few; a flood of new ones is not kept
                self._classes[label] = cls
        return cls

    @abstractmethod
    def productions(self, x: int, cls: int) -> tuple[Production, ...]:
        """The productions ``x -> a<x1, x2>`` for labels ``a`` of class ``cls``."""

    @abstractmethod
    def nullable(self, x: int) -> bool:
        """``x -> λ``."""

    @abstractmethod
    def universal(self, x: int) -> bool:
        """``x ∈ Univ_G``: ``x -> λ`` and ``x -> *<x1, x2>`` with ``x1, x2 ∈ Univ_G``
        (section 3), so ``[[x]]`` is every tree."""

    @abstractmethod
    def name(self, x: int) -> str:
        """A readable name of a variable, for traces and errors."""


@dataclass(frozen=True, slots=True)
class ExplicitRule:
    """One production of a written grammar: ``lhs -> label<left, right>`` (``label`` None for
    ``*``), or ``lhs -> λ`` when ``left`` is None."""

    lhs: str
    label: str | None
    left: str | None
    right: str | None


class ExplicitGrammar(Grammar):
    """A grammar written out production by production (the paper's notation, Example 3).

    >>> g = ExplicitGrammar([ExplicitRule("x", None, "x", "x"), ExplicitRule("x", None, None,
    ...     None)], start="x", distinguished={"x"})
    >>> g.universal(g.start), g.nullable(g.start)
    (True, True)
    """

    def __init__(self, rules: list[ExplicitRule], *, start: str,
                 distinguished: set[str]) -> None:
        names = sorted({r.label for r in rules if r.label is not None})
        super().__init__(tuple(LabelTest("name", n) for n in names))
        order: list[str] = []
        for r in rules:
            for v in (r.lhs, r.left, r.right):
                if v is not None and v not in order:
                    order.append(v)
        if start not in order:
            order.append(start)
        self.variables = tuple(order)
        self._ids = {v: i for i, v in enumerate(order)}
        self.start = self._ids[start]
        self.distinguished = frozenset(self._ids[v] for v in distinguished if v in self._ids)
        self.rules = tuple(rules)
        self._label_index = {n: i for i, n in enumerate(names)}
        self._by_lhs: dict[int, list[tuple[int | None, int, int]]] = {}
        self._null: set[int] = set()
        for r in rules:
            x = self._ids[r.lhs]
            if r.left is None or r.right is None:
                self._null.add(x)
            else:
                test = None if r.label is None else self._label_index[r.label]
                self._by_lhs.setdefault(x, []).append(
                    (test, self._ids[r.left], self._ids[r.right]))
        # Univ_G: the largest set closed under the rule of section 3 (a greatest fixpoint).
        univ = set(self._null)
        changed = True
        while changed:
            changed = False
            for x in list(univ):
                if not any(t is None and a in univ and b in univ
                           for t, a, b in self._by_lhs.get(x, ())):
                    univ.discard(x)
                    changed = True
        self._univ = frozenset(univ)
        self._memo: dict[tuple[int, int], tuple[Production, ...]] = {}

    def productions(self, x: int, cls: int) -> tuple[Production, ...]:
        key = (x, cls)
        found = self._memo.get(key)
        if found is None:
            passed = self.class_tests[cls]
            marked = x in self.distinguished
            found = tuple(dict.fromkeys(
                Production(a, b, marked) for t, a, b in self._by_lhs.get(x, ())
                if t is None or t in passed))
            self._memo[key] = found
        return found

    def nullable(self, x: int) -> bool:
        return x in self._null

    def universal(self, x: int) -> bool:
        return x in self._univ

    def name(self, x: int) -> str:
        return self.variables[x]
