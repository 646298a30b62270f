"""A definition whose body is a single event type detects: one composite per event, wherever
it is not only an alias (issue 14, item 4).

``Removed := del(item)`` used to be an alias only: it built no tree, so a subscription, the
command line and the replay got nothing for it, silently. Now it raises one composite per
matching event unless another definition references it (there it stands for its event type,
the paper's aliases ``Ep := ins(item/price)`` of Example 10); subscribing to it by name, or
``detect_aliases=True`` (what the command line and the replay use), makes a referenced one
detect as well.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.algebra import (
    CompositeEvent,
    EventGraph,
    Op,
    PathInstance,
    PrimitiveEvent,
)

PAPER = """
Ep := ins(item/price)
Eq := ins(item/quantity)
Ex := ins(item) ; (Ep & Eq)
"""


def ev(ts: int, op: Op, path: str, ids: list[str]) -> PrimitiveEvent:
    return PrimitiveEvent(f"e{ts}", ts, op, PathInstance.of(path, ids))


ITEM = [
    ev(1, Op.INS, "/order/item", ["o", "i"]),
    ev(2, Op.INS, "/order/item/price", ["o", "i", "p"]),
    ev(3, Op.INS, "/order/item/quantity", ["o", "i", "q"]),
    ev(4, Op.DEL, "/order/item", ["o", "i"]),
]


def run(graph: EventGraph, events: list[PrimitiveEvent]) -> list[CompositeEvent]:
    return [c for e in events for c in graph.feed(e)]


def names(cs: list[CompositeEvent]) -> list[str]:
    return [c.type.name or "" for c in cs]


def test_an_unreferenced_single_event_definition_raises_one_composite_per_event() -> None:
    g = EventGraph("Removed := del(item)")
    out = run(g, ITEM)
    assert names(out) == ["Removed"]
    (c,) = out
    assert (c.id, str(c.type), c.pi.ids, c.interval, c.ts) == (
        "Removed#1", "Removed(/order/item)", ("o", "i"), (4, 4), 4)
    assert [e.id for e in c.constituents] == ["e4"]
    assert g.held("Removed") == []  # it stores nothing


def test_the_papers_aliases_stay_aliases_where_they_are_referenced() -> None:
    """Example 10 with named event types: only Ex is raised (the paper's results)."""
    g = EventGraph(PAPER)
    assert [t.name for t in g.trees] == ["Ex"]
    assert names(run(g, ITEM)) == ["Ex"]


def test_subscribing_to_a_referenced_alias_makes_it_detect() -> None:
    g = EventGraph(PAPER)
    seen: list[CompositeEvent] = []
    g.subscribe("Ep", seen.append)
    assert names(run(g, ITEM)) == ["Ep", "Ex"]
    assert [(str(c.type), c.constituents[0].id) for c in seen] == [
        ("Ep(/order/item/price)", "e2")]


def test_subscribing_by_its_event_type_makes_it_detect_too() -> None:
    g = EventGraph(PAPER)
    seen: list[CompositeEvent] = []
    g.subscribe("Eq(item/quantity)", seen.append)
    run(g, ITEM)
    assert [c.constituents[0].id for c in seen] == ["e3"]


def test_detect_aliases_makes_every_single_event_definition_detect() -> None:
    g = EventGraph(PAPER, detect_aliases=True)
    assert names(run(g, ITEM)) == ["Ep", "Eq", "Ex"]


def test_added_and_removed_while_the_graph_runs() -> None:
    g = EventGraph(PAPER)
    g.feed(ITEM[0])
    g.add("Gone := del(item)")
    assert names(run(g, ITEM[1:])) == ["Ex", "Gone"]
    g.remove("Gone")
    assert [t.name for t in g.trees] == ["Ex"]


def test_a_wildcard_receives_the_composites_of_a_detecting_single_event_definition() -> None:
    g = EventGraph("Removed := del(item)\nAfter := (%(item) ; ins(order/note)) with at=order")
    assert g.definitions["After"].depends_on == ("Removed",)
    out = run(g, [ITEM[3], ev(5, Op.INS, "/order/note", ["o", "n"])])
    assert names(out) == ["Removed", "After"]


def test_closing_and_reopening_keep_it_detecting() -> None:
    g = EventGraph("Removed := del(item)")
    g.close()
    g.open()
    assert names(run(g, ITEM)) == ["Removed"]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from([Op.INS, Op.DEL, Op.UPD]),
                          st.sampled_from(["/o/item", "/o/item/price", "/o/x"]),
                          st.integers(0, 3)), max_size=30),
       st.booleans())
def test_one_composite_per_matching_event_in_order(
        steps: list[tuple[Op, str, int]], share: bool) -> None:
    """Against the obvious reference: every event of the type, alone, in stream order; with
    and without sharing (two definitions of the same type share their node)."""
    events = [ev(ts, op, path, ["o", f"i{k}", "c"][:path.count("/")])
              for ts, (op, path, k) in enumerate(steps, 1)]
    g = EventGraph("Removed := del(item)\nAlsoRemoved := del(item)\n"
                   "Priced := ins(item/price)", share=share)
    out = run(g, events)
    want = [(name, e.id) for e in events for name, op, pt in [
        ("Removed", Op.DEL, "/o/item"), ("AlsoRemoved", Op.DEL, "/o/item"),
        ("Priced", Op.INS, "/o/item/price")] if e.op is op and str(e.pi.pt) == pt]
    assert [(c.type.name, c.constituents[0].id) for c in out] == want
    assert all(len(c.constituents) == 1 and c.interval == (c.ts, c.ts) for c in out)
