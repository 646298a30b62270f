"""Properties of the event graph: order independence, agreement with a naive reference, memory.

The reference (``reference.py`` beside this file) replays every operator's whole delivery
history to find its stored events, instead of keeping buffers, and applies the context rules
of ``algebra/_contexts.py``'s documentation literally; it shares no code with the engine's
trees and contexts.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.algebra import Op, PathInstance, PrimitiveEvent
from xmlevents.algebra._graph import EventGraph


def _load_reference():
    name = "xmlevents_tests_engine_reference"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("reference.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


reference = _load_reference()

EI = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"
CONTEXTS = ["chronicle", "recent", "continuous", "cumulative", "unrestricted"]
CONFIGS = [(c, h, s) for c in CONTEXTS for h in (True, False) for s in ("interval", "detection")]


def ids(c) -> frozenset[str]:
    """The ids of a composite's primitive events."""
    return frozenset(p.id for p in c.primitives())


# --- a. order independence in the hierarchical contexts --------------------------------------

def item_events(n: int) -> list[tuple[str, str, list[str]]]:
    """(name, path, ids) of item k's insertion, price and quantity, for k = 1..n."""
    out = []
    for k in range(1, n + 1):
        out += [(f"ei{k}", "/order/item", ["o1", f"i{k}"]),
                (f"ep{k}", "/order/item/price", ["o1", f"i{k}", f"p{k}"]),
                (f"eq{k}", "/order/item/quantity", ["o1", f"i{k}", f"q{k}"])]
    return out


@st.composite
def parent_first_interleavings(draw, max_items: int = 8):
    """Any interleaving of n items' insertions in which each item precedes its children."""
    n = draw(st.integers(1, max_items))
    order = draw(st.permutations(item_events(n)))
    # the item k event takes the earliest of the positions item k's three events got
    slots: dict[str, list[int]] = {}
    for pos, (name, _, _) in enumerate(order):
        slots.setdefault(name[2:], []).append(pos)
    fixed = list(order)
    for _k, positions in slots.items():
        mine = [order[p] for p in positions]
        mine.sort(key=lambda ev: ev[0][1] != "i")  # the item first, children after
        for p, ev in zip(positions, mine, strict=False):
            fixed[p] = ev
    events = [PrimitiveEvent(name, ts, Op.INS, PathInstance.of(path, ids_))
              for ts, (name, path, ids_) in enumerate(fixed, start=1)]
    return n, events


def expected_items(n: int) -> set[frozenset[str]]:
    """The correct composites for items 1..n."""
    return {frozenset({f"ei{k}", f"ep{k}", f"eq{k}"}) for k in range(1, n + 1)}


@settings(max_examples=examples(150))
@given(parent_first_interleavings())
def test_any_parent_first_interleaving_gives_one_composite_per_item(case):
    """Hierarchical chronicle: any parent-first interleaving raises {ei_k, ep_k, eq_k} per item."""
    n, events = case
    graph = EventGraph(EI, context="chronicle", hierarchical=True)
    raised = [ids(c) for e in events for c in graph.feed(e)]
    assert set(raised) == expected_items(n)
    assert len(raised) == n


@settings(max_examples=examples(60))
@given(parent_first_interleavings(), st.sampled_from(["interval", "detection"]))
@pytest.mark.parametrize("context", CONTEXTS)
def test_every_hierarchical_context_is_order_independent_for_this_tree(context, case,
                                                                       semantics):
    """All hierarchical contexts agree here: each item's group gets one event per leaf, item first.

    With exactly one ei, ep and eq in every group, each context has a single choice at each
    operator (the conjunction pairs the lone ep with the lone eq when the second arrives, and
    the item event precedes both in either semantics), so selection and consumption cannot
    differ; every context, unrestricted included, raises exactly one composite per item.
    """
    n, events = case
    graph = EventGraph(EI, context=context, hierarchical=True, semantics=semantics)
    raised = [ids(c) for e in events for c in graph.feed(e)]
    assert Counter(raised) == Counter(expected_items(n))


# --- b. the engine against the naive reference -----------------------------------------------

EXPRESSIONS = [
    "ins(item) ; (ins(item/a) & ins(item/b))",
    "ins(item/a) & ins(item/b)",
    "ins(item/a) ; ins(item/b)",
    "(ins(item/a) | ins(item/b)) ; ins(item/c)",
    "ins(item/a) & ins(item/b) & ins(item/c)",
    "(ins(item/a) ; ins(item/b)) & ins(item/c)",
    "(ins(item/a) & ins(item/b)) ; (ins(item/c) | upd(item/a))",
    "*(item/a) ; ins(item/a)",
    "ins(item) ; ins(item/a) ; ins(item/b)",
    "(ins(item/a) | *(item/a)) & ins(item/b)",
    "(ins(item/a) & ins(item/b)) ; (ins(item/c) & ins(item/a))",
    "(ins(item) | ins(item/a)) & (ins(item/b) ; ins(item/c))",
]

# (path, ids) templates: I is the item's id, X the event's own node id. The last three are
# rarer: an item nested in an item (its projection on `item` is ambiguous, hence null, so it
# never combines), another document root, and a nested item itself.
PATHS = [("/order/item", ["o1", "I"]), ("/order/item/a", ["o1", "I", "X"]),
         ("/order/item/b", ["o1", "I", "X"]), ("/order/item/c", ["o1", "I", "X"])]
ODD_PATHS = [("/order/item/item/a", ["o1", "I", "j1", "X"]), ("/cart/item/a", ["c1", "I", "X"]),
             ("/order/item/item", ["o1", "I", "X"])]


@st.composite
def streams(draw, max_events: int = 25):
    """1-25 events under 1-3 items of one or two documents, in any order; paths may repeat."""
    n = draw(st.integers(1, max_events))
    two_docs = draw(st.booleans())
    odd = draw(st.booleans())
    templates = PATHS + ODD_PATHS if odd else PATHS
    events = []
    for ts in range(1, n + 1):
        item = draw(st.integers(1, 3))
        path, template = draw(st.sampled_from(templates))
        op = draw(st.sampled_from([Op.INS, Op.INS, Op.UPD]))
        doc = draw(st.sampled_from([None, "d2"])) if two_docs else None
        ids_ = [x.replace("I", f"i{item}").replace("X", f"x{ts}") for x in template]
        events.append(PrimitiveEvent(f"e{ts}", ts, op, PathInstance.of(path, ids_), doc=doc))
    return events


def run_both(expr: str, events, context: str, hierarchical: bool, semantics: str):
    """Root composites per tick (Counter of primitive id sets) of the engine and the reference."""
    definition = f"E := {expr}"
    graph = EventGraph(definition, context=context, hierarchical=hierarchical,
                       semantics=semantics)
    ref = reference.Reference(definition, context=context, hierarchical=hierarchical,
                              semantics=semantics)
    got, want = [], []
    for e in events:
        got.append(Counter(ids(c) for c in graph.feed(e)))
        want.append(Counter(ids(c) for c in ref.feed(e)))
    held = (Counter(ids(x) if hasattr(x, "constituents") else frozenset([x.id])
                    for x in graph.held("E")),
            Counter(ids(x) if hasattr(x, "constituents") else frozenset([x.id])
                    for x in ref.held()))
    return got, want, held


@pytest.mark.slow
@settings(max_examples=examples(400))
@given(st.sampled_from(EXPRESSIONS), streams())
def test_engine_agrees_with_the_naive_reference(expr, events):
    """In every context, plain or hierarchical, either semantics: the same composites each tick."""
    for context, hierarchical, semantics in CONFIGS:
        got, want, (held, ref_held) = run_both(expr, events, context, hierarchical, semantics)
        where = f"{expr!r} context={context} hierarchical={hierarchical} {semantics}"
        for tick, (g, w) in enumerate(zip(got, want, strict=False), start=1):
            assert g == w, f"tick {tick}: {where}"
        assert held == ref_held, f"held after the stream: {where}"


@pytest.mark.parametrize("context, hierarchical, semantics", CONFIGS)
def test_reference_reproduces_table_1_s2(context, hierarchical, semantics):
    """Sanity check of the reference itself: engine and reference agree on Table 1's S2."""
    events = []
    for ts, (name, path, ids_) in enumerate(
            sorted(item_events(2), key=lambda ev: ["ei1", "ei2", "ep1", "ep2", "eq1", "eq2"].index(
                ev[0])), start=1):
        events.append(PrimitiveEvent(name, ts, Op.INS, PathInstance.of(path, ids_)))
    got, want, _ = run_both("ins(item) ; (ins(item/price) & ins(item/quantity))", events,
                            context, hierarchical, semantics)
    assert got == want
    if context == "continuous" and not hierarchical and semantics == "detection":
        assert sum(want[4].values()) == 4  # footnote y1


# --- c. memory ------------------------------------------------------------------------------

@settings(max_examples=examples(10))
@given(st.integers(0, 2**32))
@pytest.mark.parametrize("context", ["chronicle", "cumulative"])
def test_completed_items_leave_no_state(context, seed):
    """After 300 complete items, interleaved parent-first, the tree stores nothing."""
    rnd = random.Random(seed)
    names = item_events(300)
    pending = [names[3 * k:3 * k + 3] for k in range(300)]
    order = []
    open_items: list[list] = []
    while pending or open_items:
        if pending and (not open_items or rnd.random() < 0.4):
            item = pending.pop(0)
            order.append(item[0])
            open_items.append(item[1:])
        else:
            children = rnd.choice(open_items)
            order.append(children.pop(rnd.randrange(len(children))))
            if not children:
                open_items.remove(children)
    graph = EventGraph(EI, context=context, hierarchical=True)
    count = 0
    for ts, (name, path, ids_) in enumerate(order, start=1):
        count += len(graph.feed(PrimitiveEvent(name, ts, Op.INS, PathInstance.of(path, ids_))))
    assert count == 300
    assert graph.held("Ei") == []
