"""Hypothesis strategies for random rule trees (seed 002, section 2), for the round trip.

Names come from a small alphabet that includes the words the parser treats specially
somewhere (``and``, ``or``, ``not``, ``TRUE``, ``rule``, ``document``, ``for``, ``div``), so
that a name is shown to stay a name wherever it appears. Nesting is bounded by ``depth``.
"""

from __future__ import annotations

import functools
from decimal import Decimal

from hypothesis import strategies as st

from xmlevents.rules import ast

NAMES = ["a", "b", "p:c", "x-y.z", "and", "or", "not", "TRUE", "True", "rule", "document",
         "for", "div", "INSERT"]
RULE_NAMES = ["R1", "R2", "keep-stores", "r.3", "on", "rule", "do"]
DOCUMENTS = ["s.xml", "p.xml", "it's", 'say "hi"', "both ' and \""]

names = st.sampled_from(NAMES)
seps = st.sampled_from(list(ast.Sep))
ops = st.sampled_from(list(ast.CompOp))
# Literals hold anything a Python string can; constructor text only what XML allows.
literal_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)
xml_chars = st.one_of(st.characters(exclude_categories=("Cs", "Cc", "Cn")),
                      st.sampled_from(list("\t\n\r &<>{}'\"")))
xml_text = st.one_of(st.text(xml_chars, min_size=1, max_size=8),
                     st.text(st.sampled_from(" \t\r\n"), min_size=1, max_size=3))
numbers = st.decimals(min_value=0, max_value=10**6, places=2, allow_nan=False,
                      allow_infinity=False).map(lambda d: ast.Number(Decimal(d)))


@functools.cache
def qualifiers(depth: int, delta: bool = True) -> st.SearchStrategy[ast.Qualifier]:
    """Paths, comparisons and and/or chains, nested at most ``depth`` deep (``$delta``
    nowhere unless ``delta``)."""
    atoms: st.SearchStrategy[ast.Qualifier] = st.one_of(
        any_paths(depth - 1, delta),
        st.builds(ast.Compare, operands(depth - 1, delta), ops, operands(depth - 1, delta)))
    if depth <= 1:
        return atoms
    items = st.lists(qualifiers(depth - 1, delta), min_size=2, max_size=3).map(tuple)
    return st.one_of(atoms, st.builds(ast.QAnd, items), st.builds(ast.QOr, items))


@functools.cache
def operands(depth: int, delta: bool = True) -> st.SearchStrategy[ast.Operand]:
    return st.one_of(any_paths(depth, delta), literal_text.map(ast.Literal), numbers)


@functools.cache
def qualifier_lists(depth: int, delta: bool = True
                    ) -> st.SearchStrategy[tuple[ast.Qualifier, ...]]:
    if depth <= 0:
        return st.just(())
    return st.one_of(st.just(()), st.lists(qualifiers(depth, delta), min_size=1,
                                           max_size=2).map(tuple))


@functools.cache
def steps(depth: int, first: bool = False, delta: bool = True) -> st.SearchStrategy[ast.Step]:
    """One step of any kind with qualifiers nested at most ``depth`` deep (``first``: the
    first step of a relative path, whose separator is ``/``)."""
    quals = qualifier_lists(depth, delta)
    sep = st.just(ast.Sep.CHILD) if first else seps
    return st.one_of(
        st.builds(ast.Step, sep, st.just(ast.StepKind.ELEMENT), st.one_of(names, st.just("*")),
                  quals),
        st.builds(ast.Step, sep, st.just(ast.StepKind.ATTRIBUTE),
                  st.one_of(names, st.just("*")), quals),
        st.builds(ast.Step, sep, st.sampled_from([ast.StepKind.SELF, ast.StepKind.PARENT]),
                  st.none(), quals),
    )


@functools.cache
def paths(depth: int = 2, delta: bool = True) -> st.SearchStrategy[ast.Path]:
    """Simple XPath expressions ``e`` (cached: strategies are built once per argument)."""
    return _paths(depth, delta)


@st.composite
def _paths(draw: st.DrawFn, depth: int, delta: bool) -> ast.Path:
    """Simple XPath expressions ``e``, rooted at ``document()`` or (if ``delta``) at
    ``$delta``."""
    if not delta or draw(st.booleans()):
        start: ast.Document | ast.Delta = ast.Document(draw(st.sampled_from(DOCUMENTS)))
        found = draw(st.lists(steps(depth, delta=delta), min_size=1, max_size=3))
    else:
        start = ast.Delta(draw(qualifier_lists(depth)))
        found = draw(st.lists(steps(depth), max_size=3))
    return ast.Path(start, tuple(found))


@functools.cache
def relative_paths(depth: int = 2, delta: bool = True) -> st.SearchStrategy[ast.Path]:
    """Relative paths ``p``, as qualifiers hold them."""
    return _relative_paths(depth, delta)


@st.composite
def _relative_paths(draw: st.DrawFn, depth: int, delta: bool) -> ast.Path:
    first = draw(steps(depth, True, delta))
    rest = draw(st.lists(steps(depth, delta=delta), max_size=2))
    return ast.Path(None, (first, *rest))


@functools.cache
def any_paths(depth: int, delta: bool = True) -> st.SearchStrategy[ast.Path]:
    return st.one_of(paths(max(depth, 0), delta), relative_paths(max(depth, 0), delta))


def _below(path: ast.Path) -> ast.Path:
    """``path``, with an element step added if it ends at attributes (BELOW needs elements)."""
    if path.leaf is None or path.leaf.kind is not ast.StepKind.ATTRIBUTE:
        return path
    return ast.Path(path.root, (*path.steps, ast.Step(ast.Sep.CHILD, ast.StepKind.ELEMENT, "a")))


@functools.cache
def formulas(depth: int = 2) -> st.SearchStrategy[ast.Formula]:
    """Conditions without TRUE: paths joined by and, or, not()."""
    atoms: st.SearchStrategy[ast.Formula] = paths(1)
    if depth <= 0:
        return atoms
    items = st.lists(formulas(depth - 1), min_size=2, max_size=3).map(tuple)
    return st.one_of(atoms, st.builds(ast.And, items), st.builds(ast.Or, items),
                     st.builds(ast.Not, formulas(depth - 1)))


conditions: st.SearchStrategy[ast.Condition] = st.one_of(st.just(ast.TRUE), formulas())


def attributes() -> st.SearchStrategy[tuple[ast.Attribute, ...]]:
    attribute = st.builds(ast.Attribute, st.sampled_from(["id", "p:c", "and", "x-y.z"]),
                          st.one_of(st.text(xml_chars, max_size=6), paths(1)))
    return st.lists(attribute, max_size=3, unique_by=lambda a: a.name).map(tuple)


def elements(depth: int = 2) -> st.SearchStrategy[ast.Element]:
    """Element constructors with text, nested constructors and enclosed expressions."""
    items: st.SearchStrategy[ast.ElementContent] = st.one_of(xml_text, paths(1))
    if depth > 0:
        items = st.one_of(items, elements(depth - 1))
    return st.builds(ast.Element, names.filter(lambda n: n != "*"), attributes(),
                     st.lists(items, max_size=4).map(tuple))


positions = st.builds(ast.Position, st.sampled_from(list(ast.Where)),
                      st.one_of(st.just(ast.TRUE), qualifiers(2)))
inserts = st.builds(
    ast.Insert, st.one_of(elements(), paths(1)), paths(1).map(_below),
    st.one_of(st.none(), positions))
actions: st.SearchStrategy[ast.Action] = st.one_of(inserts, st.builds(ast.Delete, paths(1)))
events: st.SearchStrategy[ast.Trigger] = st.one_of(
    st.builds(ast.Event, st.sampled_from(list(ast.EventKind)),
              paths(1, delta=False)),
    st.builds(ast.NamedEvent, st.sampled_from(["ItemComplete", "E1", "rule"])))


@st.composite
def rule_sets(draw: st.DrawFn) -> ast.RuleSet:
    """Rule sets with unique names and priorities."""
    count = draw(st.integers(0, 3))
    rule_names = draw(st.lists(st.sampled_from(RULE_NAMES), min_size=count, max_size=count,
                               unique=True))
    priorities = draw(st.lists(st.integers(-5, 50), min_size=count, max_size=count,
                               unique=True))
    rules = tuple(
        ast.Rule(name, priority, draw(events), draw(conditions),
                 tuple(draw(st.lists(actions, min_size=1, max_size=3))))
        for name, priority in zip(rule_names, priorities, strict=True))
    return ast.RuleSet(rules)
