"""A live event graph: definitions added and removed while it runs (issue 13, item 2).

The property: a tree the change does not touch raises exactly what it raises in a graph that
never changed, tick by tick; a refused change leaves the graph exactly as it was.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xmlevents
from tests.strategies import examples
from xmlevents.algebra import (
    CompositeEvent,
    DefinitionError,
    EventGraph,
    ExpressionSyntaxError,
    Op,
    PathInstance,
    PrimitiveEvent,
    UnknownNameError,
)

from .test_engine_properties import EXPRESSIONS, streams

# Definitions that reuse others: {0} and {1} are replaced by names of base definitions.
USERS = [
    "{0} ; ins(item/c)",
    "{0} & {1}",
    "ins(item) ; ({0} | ins(item/b))",
]


@st.composite
def definition_sets(draw):
    """Base definitions B0.. from the reference expressions, users U0.. that reuse them, and
    the names of a subset closed under reuse (it can run on its own)."""
    bases = draw(st.lists(st.sampled_from(EXPRESSIONS), min_size=1, max_size=4))
    defs = {f"B{i}": e for i, e in enumerate(bases)}
    uses: dict[str, set[str]] = {name: set() for name in defs}
    for j in range(draw(st.integers(0, 3))):
        template = draw(st.sampled_from(USERS))
        picked = [draw(st.sampled_from(sorted(defs))) for _ in range(2)]
        expr = template.format(*picked)
        try:  # some combinations have no path type (their children share no first step)
            EventGraph(_text(defs) + f"\nU{j} := {expr}")
        except DefinitionError:
            continue
        defs[f"U{j}"] = expr
        uses[f"U{j}"] = {p for p in picked if p in expr.replace("(", " ").split()}
    chosen = draw(st.sets(st.sampled_from(sorted(defs))))
    closed = set(chosen)
    while any(not uses[n] <= closed for n in closed):  # drop users of what is not kept
        closed = {n for n in closed if uses[n] <= closed}
    return defs, uses, closed


def _text(defs: dict[str, str], names: set[str] | None = None) -> str:
    return "\n".join(f"{n} := {e}" for n, e in defs.items() if names is None or n in names)


def _by_tick(graph: EventGraph, events: list[PrimitiveEvent], names: set[str],
             change: tuple[int, object] | None = None) -> list[Counter[tuple[object, ...]]]:
    """Per tick, the composites of the trees ``names`` (whole, ids included)."""
    out = []
    for i, e in enumerate(events):
        if change is not None and i == change[0]:
            change[1]()  # type: ignore[operator]  # the change to make at this point
        out.append(Counter(_whole(c) for c in graph.feed(e) if c.type.name in names))
    if change is not None and change[0] == len(events):
        change[1]()  # type: ignore[operator]  # after the last event
    return out


def _whole(c: CompositeEvent) -> tuple[object, ...]:
    return (c.id, c.type.name, str(c.pi), c.interval, c.ts,
            tuple(p.id for p in c.primitives()))


@settings(max_examples=examples(150), deadline=None)
@given(definition_sets(), streams(), st.data())
def test_adding_definitions_mid_stream_leaves_the_other_trees_as_they_were(case, events, data):
    """Trees defined from the start raise the same composites whether or not others are added
    to the graph mid-stream (reusing them or not)."""
    defs, _, closed = case
    at = data.draw(st.integers(0, len(events)))
    full = EventGraph(_text(defs))
    want = _by_tick(full, events, closed)
    live = EventGraph(_text(defs, closed))
    rest = [n for n in defs if n not in closed]
    got = _by_tick(live, events, closed,
                   (at, lambda: live.add(_text(defs, set(rest))) if rest else None))
    assert got == want
    assert set(live.order) == set(full.order)


@settings(max_examples=examples(150), deadline=None)
@given(definition_sets(), streams(), st.data())
def test_removing_definitions_mid_stream_leaves_the_other_trees_as_they_were(case, events,
                                                                              data):
    """Removing the definitions outside a reuse-closed subset (users first) mid-stream does
    not change what the subset's trees raise."""
    defs, _, closed = case
    at = data.draw(st.integers(0, len(events)))
    full = EventGraph(_text(defs))
    want = _by_tick(full, events, closed)
    live = EventGraph(_text(defs))

    def remove_the_rest() -> None:
        # users before what they use: the reverse of the graph's dependency order
        for name in reversed(live.definitions.names):
            if name not in closed:
                live.remove(name)

    got = _by_tick(live, events, closed, (at, remove_the_rest))
    assert got == want
    assert set(live.definitions.names) == closed


def _ins(ts: int, path: str, ids: list[str]) -> PrimitiveEvent:
    return PrimitiveEvent(f"e{ts}", ts, Op.INS, PathInstance.of(path, ids))


def test_a_new_tree_sees_only_what_comes_after_it() -> None:
    """A definition added mid-stream starts empty; the trees it reuses keep their state."""
    g = EventGraph("Ei := ins(item) ; (ins(item/price) & ins(item/quantity))")
    g.feed(_ins(1, "/o/item", ["o", "i1"]))
    g.add("Ep := ins(item) ; ins(item/price)\nEo := Ei & Ep")
    g.feed(_ins(2, "/o/item", ["o", "i2"]))
    assert [c.type.name for c in g.feed(_ins(3, "/o/item/price", ["o", "i2", "p2"]))] == ["Ep"]
    assert g.feed(_ins(4, "/o/item/price", ["o", "i1", "p1"])) == []  # i1 came before Ep
    raised = g.feed(_ins(5, "/o/item/quantity", ["o", "i1", "q1"]))
    assert [c.type.name for c in raised] == ["Ei"]
    assert g.order == ("Ei", "Ep", "Eo")


def _frozen(g: EventGraph) -> tuple[object, ...]:
    return (g.definitions, tuple(g.trees), g.order, tuple(id(t) for t in g.trees))


@pytest.mark.parametrize(("text", "error", "says"), [
    ("Ei := ins(a) ; ins(a/b)", DefinitionError, "Ei is already defined"),
    ("X := ins(item) ; Nope(item)", DefinitionError, "Nope"),
    ("X := ins(item) ;", ExpressionSyntaxError, "line 1"),
    ("X := ins(a) ; ins(b)", DefinitionError, "cannot derive"),
    ("X := (ins(item) ; ins(item/a)) with when=\"a > 1\"", DefinitionError, "documents"),
])
def test_a_refused_addition_leaves_the_graph_as_it_was(text: str, error: type[Exception],
                                                       says: str) -> None:
    """A definition that fails its checks is refused with the reason; nothing changed."""
    g = EventGraph("Ei := ins(item) ; (ins(item/price) & ins(item/quantity))")
    g.feed(_ins(1, "/o/item", ["o", "i1"]))
    before = _frozen(g)
    held = g.held("Ei")
    with pytest.raises(error, match=says):
        g.add(text)
    assert _frozen(g) == before
    assert g.held("Ei") == held


@pytest.mark.parametrize(("name", "error", "says"), [
    ("Nope", UnknownNameError, "no definition named 'Nope'"),
    ("Ei", DefinitionError, "Ei is reused by Eo; remove it first"),
    ("Ep", DefinitionError, "Ep is reused by Eo, Ew; remove them first"),
    ("Ew", None, ""),
    ("Ea", DefinitionError, "Ea is reused by Eb"),
])
def test_a_refused_removal_names_the_reason(name: str, error: type[Exception] | None,
                                            says: str) -> None:
    """Removing an unknown name, or a definition others reuse (by name, through a wildcard,
    or an alias they name), is refused with the reason; nothing changed."""
    g = EventGraph("Ei := ins(item) ; ins(item/price)\n"
                   "Ep := ins(item/quantity) ; upd(item/quantity)\n"
                   "Eo := Ei & Ep\n"
                   "Ew := ins(order) ; %(order/item/quantity)\n"
                   "Ea := ins(item/a)\n"
                   "Eb := Ea ; ins(item/b)")
    before = _frozen(g)
    if error is None:  # the control: a definition nobody reuses goes
        assert "Ew" not in g.remove(name)
        return
    with pytest.raises(error, match=says):
        g.remove(name)
    assert _frozen(g) == before


def test_a_removed_definition_takes_its_tree_away() -> None:
    """After remove() the tree is gone: its name is unknown and its leaves take nothing."""
    g = EventGraph("Ei := ins(item) ; ins(item/price)\nEq := ins(item) ; ins(item/quantity)")
    g.feed(_ins(1, "/o/item", ["o", "i1"]))
    assert g.remove("Eq").names == ("Ei",)
    with pytest.raises(UnknownNameError):
        g.tree("Eq")
    assert g.feed(_ins(2, "/o/item/quantity", ["o", "i1", "q1"])) == []
    assert [c.type.name for c in g.feed(_ins(3, "/o/item/price", ["o", "i1", "p1"]))] == ["Ei"]


def test_monitor_define_keeps_partial_detections() -> None:
    """A watched document's define() adds to its graph: an item half built before the new
    definition still completes."""
    doc = xmlevents.fromstring("<order/>")
    doc.define("Ei := ins(item) ; (ins(item/price) & ins(item/quantity))")
    got: list[str] = []
    doc.subscribe("Ei", lambda d, event: got.append(str(event.pi)))
    item = xmlevents.SubElement(doc.getroot(), "item")
    xmlevents.SubElement(item, "price").text = "5"
    doc.define("Eq := ins(item/quantity)\nEx := ins(item) ; Eq")
    xmlevents.SubElement(item, "quantity").text = "2"
    assert got == ["/order[n1]/item[n2]"]


def test_an_alias_is_removed_like_any_definition() -> None:
    """An alias has no tree; removing it takes only its name (found by the sharing test)."""
    g = EventGraph("A := ins(item/a) & ins(item/b)\nB := A")
    assert g.remove("B").names == ("A",)
    assert g.order == ("A",)
