"""The event graph against the paper's tables and examples (seed 000, sections 2.3, 3.1, 4).

Table 1 (plain Snoop contexts, detection-based semantics) is garbled in the extracted text; the
expectations below are our reconstruction of it. The four sequences were read off the
cumulative and recent rows (whose cells are the least mangled):

    S1 = ei1 ep1 eq1 ei2 ep2 eq2        S2 = ei1 ei2 ep1 ep2 eq1 eq2
    S3 = ei1 ei2 ep1 eq1 ep2 eq2        S4 = ei1 ei2 ep1 eq2 ep2 eq1

and the raised root composites (tick: constituent primitives) are

    cumulative  S1 t3 {ei1 ep1 eq1}, t6 {ei2 ep2 eq2}; S2 t5 {ei1 ei2 ep1 ep2 eq1};
                S3 t4 {ei1 ei2 ep1 eq1}, bracketed t6 ({ep2 eq2});
                S4 t4 {ei1 ei2 ep1 eq2}, bracketed t6 ({ep2 eq1})
    chronicle   S1 t3 {ei1 ep1 eq1}, t6 {ei2 ep2 eq2}; S2 t5 {ei1 ep1 eq1}, t6 {ei2 ep2 eq2};
                S3 t4 {ei1 ep1 eq1}, t6 {ei2 ep2 eq2}; S4 t4 {ei1 ep1 eq2}, t6 {ei2 ep2 eq1}
    recent      S1 t3 {ei1 ep1 eq1}, t5 {ei2 ep2 eq1}, t6 {ei2 ep2 eq2};
                S2 t5 {ei2 ep2 eq1}, t6 {ei2 ep2 eq2};
                S3 t4 {ei2 ep1 eq1}, t5 {ei2 ep2 eq1}, t6 {ei2 ep2 eq2};
                S4 t4 {ei2 ep1 eq2}, t5 {ei2 ep2 eq2}, t6 {ei2 ep2 eq1}
    continuous  S1 t3 {ei1 ep1 eq1}, t5 {ei2 ep2 eq1}, bracketed t6 ({ep2 eq2});
                S2 t5 y1 = {ei1 ep1 eq1} {ei1 ep2 eq1} {ei2 ep1 eq1} {ei2 ep2 eq1}, nothing at t6;
                S3 t4 y2 = {ei1 ep1 eq1} {ei2 ep1 eq1}, bracketed t5 ({ep2 eq1}), t6 ({ep2 eq2});
                S4 t4 y3 = {ei1 ep1 eq2} {ei2 ep1 eq2}, bracketed t5 ({ep2 eq2}), t6 ({ep2 eq1})

"Bracketed" composites are raised by the conjunction node and never consumed by the root.
"""

from __future__ import annotations

from collections import Counter

import pytest

from xmlevents.algebra import (
    CompositeEvent,
    Op,
    PathInstance,
    PathType,
    PrimitiveEvent,
    project,
)
from xmlevents.algebra._graph import EventGraph

EI = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"
P = PathType.parse
ITEM = P("item")

_LEAF = {"i": ("/order/item", None), "p": ("/order/item/price", "p"),
         "q": ("/order/item/quantity", "q")}


def item_event(name: str, ts: int, doc: str | None = None) -> PrimitiveEvent:
    """eiN / epN / eqN: the insertion of item N or of its price or quantity (ids o1, iN, pN)."""
    kind, n = name[1], name[2:]
    path, prefix = _LEAF[kind]
    ids = ["o1", f"i{n}"] + ([f"{prefix}{n}"] if prefix else [])
    return PrimitiveEvent(name, ts, Op.INS, PathInstance.of(path, ids), doc=doc)


def ids(c: CompositeEvent) -> frozenset[str]:
    """The ids of a composite's primitive events."""
    return frozenset(p.id for p in c.primitives())


def fs(text: str) -> frozenset[str]:
    """A frozenset of event ids from their space-separated names."""
    return frozenset(text.split())


def run(names: str, definitions: str = EI, **options):
    """Feed the named item events at ticks 1, 2, ...; return (graph, roots, traced).

    ``roots`` lists (tick, composite) for every root composite, ``traced`` every (tick, tree,
    composite) any operator raised.
    """
    traced: list[tuple[int, str, CompositeEvent]] = []
    tick = [0]
    graph = EventGraph(definitions, trace=lambda tree, c: traced.append((tick[0], tree, c)),
                       **options)
    roots: list[tuple[int, CompositeEvent]] = []
    for ts, name in enumerate(names.split(), start=1):
        tick[0] = ts
        roots.extend((ts, c) for c in graph.feed(item_event(name, ts)))
    return graph, roots, traced


def bracketed(roots, traced) -> Counter:
    """(tick, ids) of conjunction composites that no root composite took as a constituent."""
    used = {id(x) for _, c in roots for x in c.constituents}
    return Counter((ts, ids(c)) for ts, _, c in traced
                   if all(p.pi.pt != P("/order/item") for p in c.primitives())
                   and id(c) not in used)


# --- Table 1: plain Snoop contexts, detection-based semantics --------------------------------

SEQUENCES = {
    "S1": "ei1 ep1 eq1 ei2 ep2 eq2",
    "S2": "ei1 ei2 ep1 ep2 eq1 eq2",
    "S3": "ei1 ei2 ep1 eq1 ep2 eq2",
    "S4": "ei1 ei2 ep1 eq2 ep2 eq1",
}

# context -> sequence -> (root composites, bracketed conjunction composites), as (tick, ids)
TABLE_1 = {
    "cumulative": {
        "S1": ([(3, "ei1 ep1 eq1"), (6, "ei2 ep2 eq2")], []),
        "S2": ([(5, "ei1 ei2 ep1 ep2 eq1")], []),
        "S3": ([(4, "ei1 ei2 ep1 eq1")], [(6, "ep2 eq2")]),
        "S4": ([(4, "ei1 ei2 ep1 eq2")], [(6, "ep2 eq1")]),
    },
    "chronicle": {
        "S1": ([(3, "ei1 ep1 eq1"), (6, "ei2 ep2 eq2")], []),
        "S2": ([(5, "ei1 ep1 eq1"), (6, "ei2 ep2 eq2")], []),
        "S3": ([(4, "ei1 ep1 eq1"), (6, "ei2 ep2 eq2")], []),
        "S4": ([(4, "ei1 ep1 eq2"), (6, "ei2 ep2 eq1")], []),
    },
    "recent": {
        "S1": ([(3, "ei1 ep1 eq1"), (5, "ei2 ep2 eq1"), (6, "ei2 ep2 eq2")], []),
        "S2": ([(5, "ei2 ep2 eq1"), (6, "ei2 ep2 eq2")], []),
        "S3": ([(4, "ei2 ep1 eq1"), (5, "ei2 ep2 eq1"), (6, "ei2 ep2 eq2")], []),
        "S4": ([(4, "ei2 ep1 eq2"), (5, "ei2 ep2 eq2"), (6, "ei2 ep2 eq1")], []),
    },
    "continuous": {
        "S1": ([(3, "ei1 ep1 eq1"), (5, "ei2 ep2 eq1")], [(6, "ep2 eq2")]),
        "S2": ([(5, "ei1 ep1 eq1"), (5, "ei1 ep2 eq1"), (5, "ei2 ep1 eq1"),
                (5, "ei2 ep2 eq1")], []),
        "S3": ([(4, "ei1 ep1 eq1"), (4, "ei2 ep1 eq1")], [(5, "ep2 eq1"), (6, "ep2 eq2")]),
        "S4": ([(4, "ei1 ep1 eq2"), (4, "ei2 ep1 eq2")], [(5, "ep2 eq2"), (6, "ep2 eq1")]),
    },
}

TABLE_1_CASES = [(ctx, s) for ctx in TABLE_1 for s in SEQUENCES]


@pytest.mark.parametrize("context, seq", TABLE_1_CASES)
def test_table_1_root_composites(context, seq):
    """Plain Snoop contexts raise exactly Table 1's root composites at its ticks."""
    _, roots, _ = run(SEQUENCES[seq], context=context, hierarchical=False,
                      semantics="detection")
    expected, _ = TABLE_1[context][seq]
    assert Counter((ts, ids(c)) for ts, c in roots) == Counter(
        (ts, fs(text)) for ts, text in expected)


@pytest.mark.parametrize("context, seq", TABLE_1_CASES)
def test_table_1_bracketed_composites(context, seq):
    """Table 1's bracketed composites are raised by the conjunction and never reach the root."""
    _, roots, traced = run(SEQUENCES[seq], context=context, hierarchical=False,
                           semantics="detection")
    _, expected = TABLE_1[context][seq]
    assert bracketed(roots, traced) == Counter((ts, fs(text)) for ts, text in expected)
    root_sets = {ids(c) for _, c in roots}
    assert not any(fs(text) in root_sets for _, text in expected)


# --- the same sequences in the hierarchical contexts -----------------------------------------

HIERARCHICAL = ["chronicle", "recent", "continuous", "cumulative", "unrestricted"]


@pytest.mark.parametrize("semantics", ["detection", "interval"])
@pytest.mark.parametrize("context", HIERARCHICAL)
@pytest.mark.parametrize("seq", list(SEQUENCES))
def test_hierarchical_contexts_raise_only_correct_composites(seq, context, semantics):
    """Every hierarchical context raises one composite per item, of that item's events only."""
    _, roots, _ = run(SEQUENCES[seq], context=context, hierarchical=True, semantics=semantics)
    for _, c in roots:
        assert len({project(ITEM, p.pi) for p in c.primitives()}) == 1
        assert c.pi == project(P("/order/item"), c.primitives()[0].pi)
    assert Counter(ids(c) for _, c in roots) == Counter(
        [fs("ei1 ep1 eq1"), fs("ei2 ep2 eq2")])


# --- Table 2 (Example 12): hierarchical contexts, conjunction of two leaves ------------------

EH = "Eh := *(item/quantity) & upd(item/price)"


def s5() -> list[PrimitiveEvent]:
    """S5 = eq1.1 eq2 eq1.2 ep2 ep1: quantity insertions, then price updates."""
    def quantity(name: str, item: str, ts: int) -> PrimitiveEvent:
        return PrimitiveEvent(name, ts, Op.INS, PathInstance.of(
            "/order/item/quantity", ["o1", f"i{item}", "q" + name[2:]]))

    def price(item: str, ts: int) -> PrimitiveEvent:
        return PrimitiveEvent(f"ep{item}", ts, Op.UPD, PathInstance.of(
            "/order/item/price", ["o1", f"i{item}", f"p{item}"]))

    return [quantity("eq1.1", "1", 1), quantity("eq2", "2", 2), quantity("eq1.2", "1", 3),
            price("2", 4), price("1", 5)]


TABLE_2 = {
    "cumulative": ([(4, "ep2 eq2"), (5, "ep1 eq1.1 eq1.2")], ""),
    "chronicle": ([(4, "ep2 eq2"), (5, "ep1 eq1.1")], "eq1.2"),
    "recent": ([(4, "ep2 eq2"), (5, "ep1 eq1.2")], "ep1 eq1.2 ep2 eq2"),
    "continuous": ([(4, "ep2 eq2"), (5, "ep1 eq1.1"), (5, "ep1 eq1.2")], "ep1 ep2"),
}


@pytest.mark.parametrize("context", list(TABLE_2))
def test_table_2_hierarchical_contexts(context):
    """Example 12 raises Table 2's composites and leaves its unconsumed events behind."""
    graph = EventGraph(EH, context=context, hierarchical=True)
    raised = Counter((e.ts, ids(c)) for e in s5() for c in graph.feed(e))
    expected, unconsumed = TABLE_2[context]
    assert raised == Counter((ts, fs(text)) for ts, text in expected)
    assert {e.id for e in graph.held("Eh")} == set(unconsumed.split())


# --- Example 11 / Figure 2: hierarchical chronicle, path instances and intervals ------------

def test_example_11_figure_2():
    """The conjunction and the sequence combine events of /o1/i1, then of /o1/i2 (Figure 2)."""
    ec = "Ec := ins(item) ; (ins(item/price) & ins(item/quantity))"
    _, roots, traced = run("ei1 ei2 ep1 ep2 eq1 eq2", ec, context="chronicle",
                               hierarchical=True)
    item_pt = P("/order/item")
    at5 = [c for ts, _, c in traced if ts == 5]
    assert [ids(c) for c in at5] == [fs("ep1 eq1"), fs("ei1 ep1 eq1")]
    conj, root = at5
    assert conj.pi == PathInstance.of("/order/item", ["o1", "i1"])
    assert conj.interval == (3, 5)
    assert root.constituents[1] is conj
    assert root.pi == PathInstance.of("/order/item", ["o1", "i1"])
    assert root.interval == (1, 5) and root.ts == 5
    assert [(ts, ids(c)) for ts, c in roots] == [(5, fs("ei1 ep1 eq1")), (6, fs("ei2 ep2 eq2"))]
    last = roots[1][1]
    assert last.pi == PathInstance.of("/order/item", ["o1", "i2"])
    assert last.interval == (2, 6)
    for _, _, c in traced:
        assert c.type.name == "Ec" and c.type.pt == item_pt and c.pi.pt == item_pt


def test_example_11_consumption():
    """After eq1 only ei2 and ep2 remain stored (step 1 and 2 consumed the rest); then none."""
    ec = "Ec := ins(item) ; (ins(item/price) & ins(item/quantity))"
    graph = EventGraph(ec, context="chronicle", hierarchical=True)
    for ts, name in enumerate(["ei1", "ei2", "ep1", "ep2", "eq1"], start=1):
        graph.feed(item_event(name, ts))
    assert sorted(e.id for e in graph.held("Ec")) == ["ei2", "ep2"]
    graph.feed(item_event("eq2", 6))
    assert graph.held("Ec") == []


# --- Examples 13 and 14: reuse through the event graph ---------------------------------------

ORDER_DEFS = """\
Ei := ins(item) ; (ins(item/price) & ins(item/quantity))
Ea := ins(address) ; (ins(address/street) & ins(address/city))
Es := ins(shipTo) ; Ea(shipTo/address)
Eb := ins(billTo) ; Ea(billTo/address)
Eo := (Ei(item) & Es(shipTo) & Eb(billTo)) with at=order
"""

# An interleaved build of one order document: (label, path, ids). The billTo address is
# completed while the shipTo address is still incomplete; the item's quantity comes last.
ORDER_BUILD = [
    ("o", "/order", ["o1"]),
    ("s", "/order/shipTo", ["o1", "s1"]),
    ("b", "/order/billTo", ["o1", "b1"]),
    ("i", "/order/item", ["o1", "i1"]),
    ("sa", "/order/shipTo/address", ["o1", "s1", "a1"]),
    ("ba", "/order/billTo/address", ["o1", "b1", "a2"]),
    ("bst", "/order/billTo/address/street", ["o1", "b1", "a2", "st2"]),
    ("ip", "/order/item/price", ["o1", "i1", "p1"]),
    ("sst", "/order/shipTo/address/street", ["o1", "s1", "a1", "st1"]),
    ("bc", "/order/billTo/address/city", ["o1", "b1", "a2", "c2"]),
    ("sc", "/order/shipTo/address/city", ["o1", "s1", "a1", "c1"]),
    ("iq", "/order/item/quantity", ["o1", "i1", "q1"]),
]


def order_events(doc: str | None = None, start: int = 1, step: int = 1):
    """The events of ORDER_BUILD, with ids prefixed by the document, at start, start+step, ..."""
    prefix = f"{doc}:" if doc else ""
    return [PrimitiveEvent(prefix + label, start + i * step, Op.INS, PathInstance.of(path, ids_),
                           doc=doc)
            for i, (label, path, ids_) in enumerate(ORDER_BUILD)]


def feed_all(graph: EventGraph, events) -> list[tuple[int, CompositeEvent]]:
    """Feed events; return (tick, composite) for every composite raised by a tree's root."""
    return [(e.ts, c) for e in events for c in graph.feed(e)]


def by_type(raised, name: str) -> list[tuple[int, CompositeEvent]]:
    """The (tick, composite) pairs of one definition."""
    return [(ts, c) for ts, c in raised if c.type.name == name]


def test_examples_13_14_reuse():
    """Ea serves both addresses, Es/Eb/Ei complete once each, Eo once at /o1 in the last tick."""
    graph = EventGraph(ORDER_DEFS, context="chronicle", hierarchical=True)
    raised = feed_all(graph, order_events())
    labels = lambda c: frozenset(p.id for p in c.primitives())  # noqa: E731
    ea = by_type(raised, "Ea")
    assert [(ts, str(c.pi)) for ts, c in ea] == [
        (10, "/order[o1]/billTo[b1]/address[a2]"), (11, "/order[o1]/shipTo[s1]/address[a1]")]
    # The billTo address completed at tick 10, while shipTo s1 was waiting: Es must not take it.
    assert [(ts, labels(c)) for ts, c in by_type(raised, "Es")] == [
        (11, frozenset({"s", "sa", "sst", "sc"}))]
    assert [(ts, labels(c)) for ts, c in by_type(raised, "Eb")] == [
        (10, frozenset({"b", "ba", "bst", "bc"}))]
    assert [(ts, labels(c)) for ts, c in by_type(raised, "Ei")] == [
        (12, frozenset({"i", "ip", "iq"}))]
    eo = by_type(raised, "Eo")
    assert len(eo) == 1
    ts, c = eo[0]
    assert ts == 12 and c.ts == 12
    assert c.pi == PathInstance.of("/order", ["o1"]) and c.type.pt == P("/order")
    assert labels(c) == frozenset(label for label, _, _ in ORDER_BUILD) - {"o"}
    assert {x.type.name for x in c.constituents} == {"Ei", "Es", "Eb"}


@pytest.mark.parametrize("hierarchical", [True, False])
def test_an_address_under_billto_does_not_complete_shipto(hierarchical):
    """The leaf Ea(shipTo/address) only takes Ea events whose path ends in shipTo/address."""
    graph = EventGraph(ORDER_DEFS, context="chronicle", hierarchical=hierarchical)
    wanted = {"s", "b", "ba", "bst", "bc"}
    raised = feed_all(graph, [e for e in order_events() if e.id in wanted])
    assert [(ts, c.type.name) for ts, c in raised] == [(10, "Ea"), (10, "Eb")]
    assert raised[0][1].pi == PathInstance.of("/order/billTo/address", ["o1", "b1", "a2"])
    assert [e.id for e in graph.held("Es")] == ["s"]


def test_examples_13_14_same_tick():
    """The primitive event that completes Ei also completes Eo within the same feed() call."""
    graph = EventGraph(ORDER_DEFS)
    events = order_events()
    for e in events[:-1]:
        graph.feed(e)
    assert [c.type.name for c in graph.feed(events[-1])] == ["Ei", "Eo"]


def test_graph_order_follows_dependencies():
    """graph.order lists every tree after the trees whose composite events it uses."""
    graph = EventGraph(ORDER_DEFS)
    order = graph.order
    assert sorted(order) == ["Ea", "Eb", "Ei", "Eo", "Es"]
    pos = {name: i for i, name in enumerate(order)}
    assert pos["Ea"] < pos["Es"] and pos["Ea"] < pos["Eb"]
    assert max(pos["Ei"], pos["Es"], pos["Eb"]) < pos["Eo"]
    for name in order:
        assert all(pos[dep] < pos[name] for dep in graph.definitions[name].depends_on)


@pytest.mark.parametrize("hierarchical", [True, False])
def test_two_documents_never_combine(hierarchical):
    """A second order document with the same node ids, interleaved, is detected on its own."""
    graph = EventGraph(ORDER_DEFS, hierarchical=hierarchical)
    first, second = order_events("d1", 1, 2), order_events("d2", 2, 2)
    stream = sorted(first + second, key=lambda e: e.ts)
    raised = feed_all(graph, stream)
    for _, c in raised:
        assert {p.doc for p in c.primitives()} == {c.doc}
    counts = Counter((c.type.name, c.doc) for _, c in raised)
    assert counts == Counter({(name, doc): n for doc in ("d1", "d2")
                              for name, n in [("Ea", 2), ("Es", 1), ("Eb", 1), ("Ei", 1),
                                              ("Eo", 1)]})
    for _, c in by_type(raised, "Eo"):
        assert c.pi == PathInstance.of("/order", ["o1"])


# --- interval-based vs detection-based semantics ---------------------------------------------

def test_interval_semantics_rejects_an_overlapping_initiator():
    """Plain continuous S1 at t5: {ep2 eq1} spans [3,5], so ei2 (t4) does not precede it."""
    _, roots, traced = run(SEQUENCES["S1"], context="continuous", hierarchical=False,
                           semantics="interval")
    conj = [c for ts, _, c in traced if ts == 5 and ids(c) == fs("ep2 eq1")]
    assert len(conj) == 1 and conj[0].interval == (3, 5)
    assert fs("ei2 ep2 eq1") not in {ids(c) for _, c in roots}
    assert [(ts, ids(c)) for ts, c in roots] == [(3, fs("ei1 ep1 eq1")),
                                                 (6, fs("ei2 ep2 eq2"))]


def test_detection_semantics_accepts_it():
    """With detection-based semantics ei2 (detected at t4) precedes {ep2 eq1} (detected at t5)."""
    _, roots, _ = run(SEQUENCES["S1"], context="continuous", hierarchical=False,
                      semantics="detection")
    assert (5, fs("ei2 ep2 eq1")) in {(ts, ids(c)) for ts, c in roots}


# --- operators not in the tables (hierarchical chronicle) ------------------------------------

def under_item(name: str, ts: int, item: str, step: str | None, op: Op = Op.INS
               ) -> PrimitiveEvent:
    """An event at /order/item[item] (step None) or /order/item[item]/step[name]."""
    if step is None:
        return PrimitiveEvent(name, ts, op, PathInstance.of("/order/item", ["o1", item]))
    return PrimitiveEvent(name, ts, op, PathInstance.of(f"/order/item/{step}",
                                                        ["o1", item, name]))


def feed_named(graph: EventGraph, events) -> list[tuple[int, frozenset[str]]]:
    """Feed events; return (tick, primitive ids) of every root composite."""
    return [(e.ts, ids(c)) for e in events for c in graph.feed(e)]


def test_disjunction_raises_one_composite_per_event():
    """Disjunction: each a or b raises its own one-event composite at its item; c raises none."""
    graph = EventGraph("Ed := ins(item/a) | ins(item/b)")
    events = [under_item("a1", 1, "i1", "a"), under_item("b2", 2, "i2", "b"),
              under_item("c1", 3, "i1", "c"), under_item("a1x", 4, "i1", "a")]
    raised = [(e.ts, c) for e in events for c in graph.feed(e)]
    assert [(ts, ids(c)) for ts, c in raised] == [(1, fs("a1")), (2, fs("b2")), (4, fs("a1x"))]
    assert [str(c.pi) for _, c in raised] == ["/order[o1]/item[i1]", "/order[o1]/item[i2]",
                                              "/order[o1]/item[i1]"]
    assert graph.held("Ed") == []


def test_any_two_of_three():
    """any(2, a, b, c): two distinct children of one item combine, the oldest first."""
    graph = EventGraph("Ey := any(2, ins(item/a), ins(item/b), ins(item/c))")
    events = [under_item("a1", 1, "i1", "a"),   # stored
              under_item("a1x", 2, "i1", "a"),  # same child: no pair with a1
              under_item("b2", 3, "i2", "b"),   # another item: no pair with a1
              under_item("c1", 4, "i1", "c"),   # pairs with the oldest a of i1
              under_item("b1", 5, "i1", "b")]   # pairs with the remaining a of i1
    assert feed_named(graph, events) == [(4, fs("a1 c1")), (5, fs("a1x b1"))]
    assert [e.id for e in graph.held("Ey")] == ["b2"]


def test_not_drops_initiators_a_middle_event_follows():
    """not(item, lock deleted, done): a lock deletion under i1 cancels i1; i2 completes."""
    graph = EventGraph("En := not(ins(item), del(item/lock), ins(item/done))")
    events = [under_item("ei1", 1, "i1", None),
              under_item("ei2", 2, "i2", None),
              under_item("dl1", 3, "i1", "lock", Op.DEL),  # cancels ei1 only
              under_item("dn1", 4, "i1", "done"),          # nothing left to pair with
              under_item("dn2", 5, "i2", "done")]          # ei2, no lock deleted in between
    assert feed_named(graph, events) == [(5, fs("ei2 dn2"))]


def test_not_ignores_a_middle_event_before_the_initiator():
    """not(...): a lock deletion before the item's insertion does not cancel it."""
    graph = EventGraph("En := not(ins(item), del(item/lock), ins(item/done))")
    events = [under_item("dl1", 1, "i1", "lock", Op.DEL),
              under_item("ei1", 2, "i1", None),
              under_item("dn1", 3, "i1", "done")]
    assert feed_named(graph, events) == [(3, fs("ei1 dn1"))]


@pytest.mark.parametrize("context", ["chronicle", "recent"])
def test_event_reaching_both_sides_of_a_sequence_ends_older_chains_first(context):
    """An event that is initiator and terminator of one sequence pairs with the older one first."""
    from xmlevents.algebra import EventGraph, Op, PathInstance, PrimitiveEvent

    g = EventGraph("E := *(item/a) ; ins(item/a)", context=context, hierarchical=False,
                   semantics="detection")
    raised = []
    for t in (1, 2, 3):
        event = PrimitiveEvent(f"a{t}", t, Op.INS,
                               PathInstance.of("/order/item/a", ["o1", "i1", f"a{t}"]))
        raised += [[p.id for p in c.primitives()] for c in g.feed(event)]
    assert raised == [["a1", "a2"], ["a2", "a3"]]
