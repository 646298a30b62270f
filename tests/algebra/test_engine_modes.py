"""Multiplicity, termination modes and conditions, flush and close (seed 000, 3.2, 3.3, 4).

Examples 15 and 16 of the paper, the termination modes of section 3.3, the processTree rules
(ii)-(iv) of section 4, and open/flush/close. Conditions are tested here with a pure-Python
:class:`Documents`; tests/dom/test_conditions.py tests them with lxml (Example 18).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xmlevents.algebra import (
    CompositeEvent,
    ConditionError,
    DefinitionError,
    GraphStateError,
    Op,
    PathInstance,
    PrimitiveEvent,
    parse,
)
from xmlevents.algebra._graph import EventGraph

_PATHS = {"i": "/order/item", "p": "/order/item/price", "q": "/order/item/quantity",
          "c": "/order/item/comment", "s": "/order/shipTo"}


def ev(name: str, ts: int, op: Op = Op.INS, doc: str | None = None) -> PrimitiveEvent:
    """``ei1``, ``ep1``, ``eq1:2``, ``ec1``, ``es1``: an event at item 1 (or its price, its
    second quantity, its comment; a shipTo element): ids o1, i1, q1:2 and so on."""
    kind, n = name[1], name[2:]
    item = n.split(":")[0]
    if kind == "s":
        ids = ["o1", f"s{n}"]
    elif kind == "i":
        ids = ["o1", f"i{item}"]
    else:
        ids = ["o1", f"i{item}", f"{kind}{n}"]
    return PrimitiveEvent(name, ts, op, PathInstance.of(_PATHS[kind], ids), doc=doc)


def names(c: CompositeEvent) -> str:
    """A composite's primitive events by name, in tick order; "" for none."""
    return " ".join(p.id for p in c.primitives())


class Run:
    """A graph fed named events at ticks 1, 2, ...; records what every node raised when."""

    def __init__(self, definitions: str, **options: Any) -> None:
        self.tick = 0
        self.traced: list[tuple[int, str, CompositeEvent]] = []
        self.graph = EventGraph(definitions, trace=self._trace, **options)

    def _trace(self, tree: str, c: CompositeEvent) -> None:
        self.traced.append((self.tick, tree, c))

    def feed(self, *events: str | PrimitiveEvent) -> list[CompositeEvent]:
        out: list[CompositeEvent] = []
        for e in events:
            self.tick += 1
            out += self.graph.feed(ev(e, self.tick) if isinstance(e, str) else e)
        return out

    def at(self, tick: int, tree: str | None = None) -> list[str]:
        """What trees raised at ``tick`` (only ``tree``'s if given), as ``Name{events}``."""
        return [f"{t}{{{names(c)}}}" for k, t, c in self.traced
                if k == tick and (tree is None or t == tree)]


# --- multiplicity: Example 15 and the integrative semantics of section 3.2 ----------------------

def test_example_15_integration_while_unconsumed():
    """Nothing consumes a lone Eq: each quantity raises a composite integrating the last."""
    r = Run("Eq := [1,*] ins(item/quantity)")
    assert [names(c) for c in r.feed("eq1:1", "eq1:2", "eq1:3")] == [
        "eq1:1", "eq1:1 eq1:2", "eq1:1 eq1:2 eq1:3"]


def test_example_15_consumed_composite_starts_over():
    """Once the conjunction consumed ec_q1, the next quantity raises {eq1:2} alone."""
    r = Run("Eq := [1,*] ins(item/quantity)\nEh := ins(item/price) & Eq")
    r.feed("ep1", "eq1:1")
    assert r.at(2) == ["Eq{eq1:1}", "Eh{ep1 eq1:1}"]
    r.feed("eq1:2")
    assert r.at(3) == ["Eq{eq1:2}"]
    assert [names(e) for e in r.graph.held("Eh")] == ["eq1:2"]


def test_example_15_unconsumed_composite_is_waived_from_its_parent():
    """Before the price arrives the conjunction stores only the latest, integrating, Eq."""
    r = Run("Eh := ins(item/price) & [1,*] ins(item/quantity)")
    r.feed("eq1:1", "eq1:2")
    assert [names(e) for e in r.graph.held("Eh")] == ["eq1:1 eq1:2"]
    assert [names(c) for c in r.feed("ep1")] == ["eq1:1 eq1:2 ep1"]
    assert r.graph.held("Eh") == []


def test_multiplicity_in_one_tree_equals_multiplicity_reused_by_reference():
    """Consumption is seen across trees: Eq as its own definition behaves as Eq inline."""
    seq = ["eq1:1", "ep1", "eq1:2", "eq1:3", "ep1:2"]
    inline = Run("Eh := ins(item/price) & [1,*] ins(item/quantity)")
    reused = Run("Eq := [1,*] ins(item/quantity)\nEh := ins(item/price) & Eq")
    assert ([names(c) for c in inline.feed(*seq)]
            == [names(c) for c in reused.feed(*seq) if c.type.name == "Eh"])


@pytest.mark.parametrize("bounds, expected", [
    ("[1,2]", ["eq1:1", "eq1:1 eq1:2", "eq1:3", "eq1:3 eq1:4"]),
    ("[2,*]", ["eq1:1 eq1:2", "eq1:1 eq1:2 eq1:3", "eq1:1 eq1:2 eq1:3 eq1:4"]),
    ("[2,3]", ["eq1:1 eq1:2", "eq1:1 eq1:2 eq1:3", ""]),
    ("[1,1]", ["eq1:1", "eq1:2", "eq1:3", "eq1:4"]),
])
def test_upper_bound_suspends_integration_and_it_starts_over(bounds, expected):
    """Reaching u suspends integration; it starts over after the l-th further event."""
    r = Run(f"Eq := {bounds} ins(item/quantity)")
    got = [names(c) for c in r.feed("eq1:1", "eq1:2", "eq1:3", "eq1:4")]
    assert got == [x for x in expected if x]


def test_multiplicity_is_per_path_instance_of_its_path_type():
    """Quantities of different items integrate separately (hierarchical context)."""
    r = Run("Eq := [2,*] ins(item/quantity)")
    out = r.feed("eq1:1", "eq2:1", "eq2:2", "eq1:2", "eq1:3")
    assert [(str(c.pi), names(c)) for c in out] == [
        ("/order[o1]/item[i2]", "eq2:1 eq2:2"),
        ("/order[o1]/item[i1]", "eq1:1 eq1:2"),
        ("/order[o1]/item[i1]", "eq1:1 eq1:2 eq1:3")]


def test_multiplicity_default_and_explicit_path_type():
    """Default path type: the child's minus its last step; ``at=`` overrides it."""
    r = Run("Eq := [2,*] ins(item/quantity) with at=order")
    out = r.feed("eq1:1", "eq2:1")
    assert [(str(c.type), names(c)) for c in out] == [("Eq(/order)", "eq1:1 eq2:1")]


# --- the zero lower bound: Example 16 and rule (iv) -------------------------------------------

def test_example_16_creation_raises_a_composite_without_constituents():
    """Inserting item i1 raises ec_c1 with pt /order/item and pi /o1/i1, no constituents."""
    r = Run("Ec := [0,1] ins(item/comment)")
    (c,) = r.feed("ei1")
    assert (str(c.type.pt), str(c.pi), c.constituents) == ("/order/item",
                                                          "/order[o1]/item[i1]", ())
    assert c.to_dict()["events"] == [] and c.interval == (1, 1)


def test_example_16_comment_before_price_and_quantity_is_integrated():
    """A comment inserted before p1 and q1 raises ec_c2 integrating ec_c1; ec_h1 carries it."""
    r = Run("Ec := [0,1] ins(item/comment)\n"
            "Eh := ins(item/price) & ins(item/quantity) & Ec")
    r.feed("ei1", "ec1")
    assert r.at(2) == ["Ec{ec1}"]
    (h,) = r.feed("ep1", "eq1")
    assert names(h) == "ec1 ep1 eq1"
    assert h.interval == (2, 4)


def test_example_16_without_comment_the_empty_composite_completes_the_conjunction():
    """An optional element that never comes: ec_h1 consumes the empty ec_c1."""
    r = Run("Ec := [0,1] ins(item/comment)\nEh := ins(item/price) & ins(item/quantity) & Ec")
    (h,) = [c for c in r.feed("ei1", "ep1", "eq1") if c.type.name == "Eh"]
    assert names(h) == "ep1 eq1"
    assert h.interval == (2, 3), "a composite without constituents does not stretch it"


def test_empty_composite_does_not_break_a_sequence_under_interval_semantics():
    """ins(item) ; (... & Ec): ec_c1 occurs with ei1, yet the sequence still completes."""
    r = Run("Ei := ins(item) ; (ins(item/price) & ins(item/quantity) & [0,1] ins(item/comment))")
    assert [names(c) for c in r.feed("ei1", "ep1", "eq1")] == ["ei1 ep1 eq1"]


def test_zero_lower_bound_raises_again_once_consumed_at_the_next_event_at_the_instance():
    """Rule (iv): after ec_c was consumed, an event at the item raises a new empty one."""
    r = Run("Ec := [0,1] ins(item/comment)\nEh := ins(item/price) & Ec")
    r.feed("ei1", "ep1")
    assert r.at(2) == ["Eh{ep1}"]
    r.feed(ev("ei1", 3, Op.UPD))  # e.g. the item element renamed
    assert r.at(3) == ["Ec{}"]
    r.feed(ev("ei1", 4, Op.UPD))  # still unconsumed: nothing new
    assert r.at(4) == []


def test_zero_lower_bound_forgets_a_deleted_instance():
    """Deleting the item ends its run; re-inserting it (a move) raises a fresh composite."""
    r = Run("Ec := [0,1] ins(item/comment)")
    r.feed("ei1", ev("ei1", 2, Op.DEL), ev("ei1", 3))
    assert r.at(1) == ["Ec{}"] and r.at(2) == [] and r.at(3) == ["Ec{}"]
    assert r.graph.tree("Ec").root.runs.keys() == {(None, ("i1",))}


def test_zero_lower_bound_is_evaluated_without_any_child_event():
    """Rule (iv): the creation alone evaluates the node, though no leaf stored anything."""
    r = Run("Ec := [0,*] ins(item/comment)")
    assert [str(c.pi) for c in r.feed("ei1", "ei2")] == ["/order[o1]/item[i1]",
                                                         "/order[o1]/item[i2]"]


# --- termination modes ------------------------------------------------------------------------

EH_NON_LOCAL = "Eh := (ins(item/price) & ins(item/quantity)) with mode=non-local"


def test_non_local_raises_at_the_first_event_outside_the_subtree():
    """Held while the events stay inside item i1; raised when an event happens elsewhere."""
    r = Run(EH_NON_LOCAL)
    assert r.feed("ep1", "eq1", "ec1", ev("ei1", 4, Op.UPD)) == []
    assert [h.id for h in r.graph.potential("Eh")] == [""]
    (c,) = r.feed("es1")
    assert (names(c), c.ts, c.interval, c.id) == ("ep1 eq1", 5, (1, 2), "Eh#1")


def test_non_local_is_terminated_by_events_no_leaf_takes_rule_iii():
    """The terminating event (an insertion of shipTo) reaches no leaf of the tree."""
    r = Run(EH_NON_LOCAL)
    r.feed("ep1", "eq1")
    assert len(r.feed("es1")) == 1


def test_non_local_ignores_events_of_other_documents():
    """Another document's manipulation says nothing about this one's."""
    r = Run(EH_NON_LOCAL)
    r.feed(ev("ep1", 1, doc="a"), ev("eq1", 2, doc="a"))
    r.tick = 2
    assert r.feed(ev("es1", 3, doc="b")) == []
    assert len(r.feed(ev("es1", 4, doc="a"))) == 1


def test_custom_mode_raises_only_on_flush_and_close():
    """Custom: nothing until flush; flush raises with the last tick and empties the node."""
    r = Run("Eh := (ins(item/price) & ins(item/quantity)) with mode=custom")
    assert r.feed("ep1", "eq1", "es1", "ep2", "eq2") == []
    flushed = r.graph.flush()
    assert [(names(c), c.ts) for c in flushed] == [("ep1 eq1", 5), ("ep2 eq2", 5)]
    assert r.graph.flush() == [] and r.graph.potential("Eh") == []


def test_a_non_local_child_raised_late_completes_its_ancestors_in_the_same_tick():
    """(1b) of Table 3: ec_q1 let go at ei2 completes ec_h1 and ec_i1 at that tick."""
    r = Run("Ei := ins(item) ; (ins(item/price) & ([1,*] ins(item/quantity) with mode=non-local))")
    r.feed("ei1", "ep1", "eq1:1", "eq1:2")
    assert r.at(3) == r.at(4) == []
    assert [names(c) for c in r.feed("ei2")] == ["ei1 ep1 eq1:1 eq1:2"]


def test_held_potential_event_takes_in_integrated_multiplicity_constituents():
    """(2a) of Table 3: the conjunction waits; ec_q1:2 replaces ec_q1:1 inside its potential."""
    r = Run("Eq := [1,*] ins(item/quantity)\n"
            "Eh := (ins(item/price) & Eq) with mode=non-local")
    r.feed("ep1", "eq1:1", "eq1:2")
    assert r.at(3) == ["Eq{eq1:1 eq1:2}"]
    assert [names(c) for c in r.graph.potential("Eh")] == ["ep1 eq1:1 eq1:2"]
    assert [names(c) for c in r.feed("es1") if c.type.name == "Eh"] == ["ep1 eq1:1 eq1:2"]


def test_cumulative_held_event_takes_in_later_events_of_its_group():
    """Cumulative + non-local: quantities arriving after detection join the held event."""
    r = Run("Eh := (ins(item/price) & ins(item/quantity)) with mode=non-local, "
            "context=cumulative")
    r.feed("ep1", "eq1:1", "eq1:2", "ep1:2")
    assert [names(c) for c in r.feed("es1")] == ["ep1 eq1:1 eq1:2 ep1:2"]
    chronicle = Run(EH_NON_LOCAL)
    chronicle.feed("ep1", "eq1:1", "eq1:2", "ep1:2")
    assert [names(c) for c in chronicle.feed("es1")] == ["ep1 eq1:1", "eq1:2 ep1:2"]


# --- open, flush, close -------------------------------------------------------------------------

def test_close_flushes_then_refuses_events_until_reopened():
    r = Run(EH_NON_LOCAL)
    r.feed("ep1", "eq1")
    assert [names(c) for c in r.graph.close()] == ["ep1 eq1"]
    assert r.graph.closed and r.graph.close() == []
    with pytest.raises(GraphStateError, match="closed"):
        r.feed("es1")
    with pytest.raises(GraphStateError, match="closed"):
        r.graph.flush()
    r.graph.open()
    r.tick = 10
    assert r.feed("ep2", "eq2") == [] and len(r.graph.close()) == 1


def test_closing_one_tree_takes_it_out_of_order_and_its_dependents_see_its_last_events():
    """close(name) flushes that tree into its dependents, then it receives nothing."""
    r = Run("Eq := [1,*] ins(item/quantity) with mode=custom\n"
            "Eh := ins(item/price) & Eq")
    r.feed("ep1", "eq1:1", "eq1:2")
    assert [c.type.name for c in r.graph.close("Eq")] == ["Eq", "Eh"]
    r.feed("ep2", "eq2")
    assert r.at(4) == r.at(5) == [] and r.graph.tree("Eq").closed
    assert [names(c) for c in r.graph.held("Eh")] == ["ep2"]
    r.graph.open("Eq")
    r.feed("eq2:2")
    assert [names(c) for c in r.graph.flush("Eq")] == ["eq2:2", "ep2 eq2:2"]
    assert r.graph.held("Eh") == []


def test_unknown_tree_name_is_a_clear_key_error():
    with pytest.raises(KeyError, match="no event tree named 'Nope'; trees: Eh"):
        Run(EH_NON_LOCAL).graph.flush("Nope")


# --- conditions: the engine's side (pure-Python documents) ----------------------------------------

class Values:
    """Documents whose nodes are plain dicts of values, keyed by (doc, path instance text)."""

    def __init__(self) -> None:
        self.nodes: dict[tuple[str | None, str], dict[str, float]] = {}
        self.calls = 0

    def compile(self, expression: str) -> Callable[[Any], bool]:
        if not expression.startswith("all "):
            raise ValueError("expected 'all NAME ...'")
        wanted = expression.split()[1:]

        def test(node: dict[str, float]) -> bool:
            self.calls += 1
            if "boom" in node:
                raise ZeroDivisionError("boom")
            return all(node.get(name, 0) > 0 for name in wanted)
        return test

    def resolve(self, doc: str | None, pi: PathInstance) -> Any:
        return self.nodes.get((doc, str(pi)))


EH_WHEN = ("Eh := (ins(item/price) & ins(item/quantity)) with when=\"all price quantity\"")
I1 = (None, "/order[o1]/item[i1]")


def test_condition_holds_back_until_true_and_is_reexamined_inside_the_subtree_rule_ii():
    docs = Values()
    docs.nodes[I1] = {"price": 1}
    r = Run(EH_WHEN, documents=docs)
    assert r.feed("ep1", "eq1") == [] and docs.calls == 1
    r.feed("es1")  # outside the subtree: not re-examined
    assert docs.calls == 1
    docs.nodes[I1]["quantity"] = 2
    (c,) = r.feed(ev("eq1", 4, Op.UPD))
    assert (names(c), c.ts, docs.calls) == ("ep1 eq1", 4, 2)


def test_condition_true_at_detection_raises_at_once():
    docs = Values()
    docs.nodes[I1] = {"price": 1, "quantity": 1}
    assert len(Run(EH_WHEN, documents=docs).feed("ep1", "eq1")) == 1


def test_condition_on_a_missing_node_is_false():
    r = Run(EH_WHEN, documents=Values())
    assert r.feed("ep1", "eq1") == [] and len(r.graph.potential("Eh")) == 1


def test_condition_and_non_local_both_must_let_go():
    """Non-local decides the moment; the condition must hold then, or later inside."""
    docs = Values()
    docs.nodes[I1] = {"price": 1, "quantity": 1}
    r = Run("Eh := (ins(item/price) & ins(item/quantity)) with mode=non-local, "
            "when=\"all price quantity\"", documents=docs)
    assert r.feed("ep1", "eq1") == [] and docs.calls == 0
    docs.nodes[I1]["quantity"] = 0
    assert r.feed("es1") == [] and docs.calls == 1
    docs.nodes[I1]["quantity"] = 3
    assert len(r.feed(ev("eq1", 4, Op.UPD))) == 1


def test_flush_does_not_raise_what_only_a_false_condition_holds():
    docs = Values()
    r = Run(EH_WHEN, documents=docs)
    r.feed("ep1", "eq1")
    assert r.graph.flush() == [] and len(r.graph.potential("Eh")) == 1


def test_condition_that_raises_is_reported_and_detection_goes_on():
    docs = Values()
    docs.nodes[I1] = {"boom": 1}
    docs.nodes[(None, "/order[o1]/item[i2]")] = {"price": 1, "quantity": 1}
    errors: list[ConditionError] = []
    r = Run(EH_WHEN, documents=docs, on_error=errors.append)
    assert r.feed("ep1", "eq1") == []
    (err,) = errors
    assert (err.definition, err.path, type(err.cause)) == ("Eh", "/order[o1]/item[i1]",
                                                           ZeroDivisionError)
    assert "all price quantity" in str(err) and "boom" in str(err)
    assert r.graph.potential("Eh") == []  # not raised, not kept
    assert len(r.feed("ep2", "eq2")) == 1


def test_condition_error_is_a_warning_by_default():
    docs = Values()
    docs.nodes[I1] = {"boom": 1}
    r = Run(EH_WHEN, documents=docs)
    with pytest.warns(RuntimeWarning, match="definition Eh, condition"):
        r.feed("ep1", "eq1")


def test_condition_without_documents_is_rejected_when_the_graph_is_built():
    with pytest.raises(DefinitionError) as info:
        EventGraph(EH_WHEN)
    assert info.value.definition == "Eh" and "documents" in str(info.value)


def test_condition_that_does_not_compile_is_rejected_with_the_definition_name():
    with pytest.raises(DefinitionError) as info:
        EventGraph("E0 := ins(a/b) & ins(a/c)\nEh := (ins(item/price) & ins(item/quantity)) "
                   "with when=\"price > 0\"", documents=Values())
    err = info.value
    assert err.definition == "Eh" and "does not compile" in str(err)
    assert "expected 'all NAME ...'" in str(err) and (err.line, err.column) == (2, 51)  # when=


@pytest.mark.parametrize("text, words", [
    ("E := [2,1] ins(a/b)", "u=1"),
    ("E := [-1,2] ins(a/b)", "negative"),
    ("E := [1,0] ins(a/b)", "u=0"),
    ("E := [a,2] ins(a/b)", "lower bound"),
])
def test_bad_multiplicity_bounds_are_rejected_at_definition_time(text, words):
    with pytest.raises(ValueError, match=words):
        EventGraph(text)


# --- non-local with a hierarchical insertion order (hypothesis) ----------------------------------

EI_NON_LOCAL = ("Ei := ins(item) ; ((ins(item/price) & [1,*] ins(item/quantity)) "
                "with mode=non-local)")


@st.composite
def hierarchical_orders(draw: st.DrawFn) -> list[tuple[int, list[str]]]:
    """Items in random order, each inserted contiguously: the item, then its price and its
    quantities in random order."""
    n = draw(st.integers(1, 6))
    items = []
    for i in draw(st.permutations(range(1, n + 1))):
        q = draw(st.integers(1, 4))
        children = [f"ep{i}"] + [f"eq{i}:{k}" for k in range(1, q + 1)]
        items.append((i, [f"ei{i}"] + draw(st.permutations(children))))
    return items


@given(hierarchical_orders())
def test_prop_non_local_raises_each_item_once_complete_at_the_first_event_outside(items):
    r = Run(EI_NON_LOCAL)
    raised: list[CompositeEvent] = []
    starts = []
    for _, events in items:
        starts.append(r.tick + 1)
        raised += r.feed(*events)
    raised += r.graph.close()
    assert len(raised) == len(items)
    for k, ((item, events), c) in enumerate(zip(items, raised, strict=False)):
        assert str(c.pi) == f"/order[o1]/item[i{item}]"
        assert sorted(names(c).split()) == sorted(events)
        # raised at the next item's insertion, or at close for the last item
        assert c.ts == (starts[k + 1] if k + 1 < len(items) else r.tick)
    assert r.graph.held("Ei") == [] and r.graph.potential("Ei") == []


def test_expression_with_modes_round_trips_through_the_printer():
    """The definitions used above print and parse back unchanged."""
    body = EI_NON_LOCAL.split(":=", 1)[1]
    assert parse(str(parse(body))) == parse(body)


def test_no_warning_without_conditions():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Run(EH_NON_LOCAL).feed("ep1", "eq1", "es1")


@pytest.mark.parametrize("context", ["chronicle", "recent", "cumulative", "continuous",
                                     "unrestricted"])
def test_any_of_one_raises_every_event_on_its_own(context: str) -> None:
    """any(1, ...) in every context: one composite an event, nothing stored (in the
    continuous context it looped forever, found by the sharing property test)."""
    g = EventGraph("A := any(1, ins(item/a), ins(item/b))", context=context)
    out = [c for ts, leaf in enumerate(["a", "b", "a"], 1)
           for c in g.feed(PrimitiveEvent(f"e{ts}", ts, Op.INS, PathInstance.of(
               f"/o/item/{leaf}", ["o", "i", f"x{ts}"])))]
    assert [[p.id for p in c.primitives()] for c in out] == [["e1"], ["e2"], ["e3"]]
    assert g.held("A") == []
