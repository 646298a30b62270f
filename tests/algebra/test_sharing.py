"""Shared subtrees (issue 13, item 2): built once, and invisible in every result.

The property: a set of definitions with common subtrees raises, tick by tick, exactly the same
composites with sharing on and off — whole, ids and constituents included — traces the same
intermediate composites, stores the same events, reports the same expired partial matches, and
keeps doing so when definitions are added and removed mid-stream.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.algebra import (
    CompositeEvent,
    DefinitionError,
    EventGraph,
    Op,
    PathInstance,
    PrimitiveEvent,
    ast,
)

from .test_engine_properties import streams

# Subexpressions definitions have in common; some cannot be shared (a held potential event,
# a multiplicity at the top), some carry a window or a context of their own.
PARTS = [
    "(ins(item/a) & ins(item/b))",
    "(ins(item/a) ; ins(item/b))",
    "(ins(item/a) | ins(item/c))",
    "(ins(item/b) ; (ins(item/a) & ins(item/c)))",
    "([1,*] ins(item/a))",
    "((ins(item/a) & [1,2] ins(item/b)) ; ins(item/c))",
    "((ins(item/a) & ins(item/b)) with mode=non-local)",
    "((ins(item/b) ; ins(item/c)) with within=4)",
    "((ins(item/a) & ins(item/c)) with context=recent)",
    "((ins(item/a) ; ins(item/c)) with context=continuous)",
]

# How definitions use them: {0} and {1} are parts, or names of earlier definitions.
TEMPLATES = [
    "{0}",
    "ins(item) ; {0}",
    "{0} & {1}",
    "{0} | ins(item/c)",
    "({0} ; {1}) with context=cumulative",
    "({0} & ins(item/c)) with within=6",
    "({0} ; ins(item/c)) with mode=non-local",
    "any(1, {0}, {1})",
]


@st.composite
def shared_sets(draw, max_size: int = 6) -> list[tuple[str, str]]:
    """Definitions D0.. built from common parts (and from each other), each checked."""
    defs: list[tuple[str, str]] = []
    for i in range(draw(st.integers(1, max_size))):
        template = draw(st.sampled_from(TEMPLATES))
        names = [n for n, _ in defs]
        picks = [draw(st.sampled_from(PARTS + names)) for _ in range(2)]
        expr = template.format(*picks)
        try:  # some combinations have no path type (their children share no first step)
            EventGraph(_text(defs + [(f"D{i}", expr)]), share=False)
        except DefinitionError:
            continue
        defs.append((f"D{i}", expr))
    return defs


def _text(defs: list[tuple[str, str]]) -> str:
    return "\n".join(f"{n} := {e}" for n, e in defs)


class Run:
    """A graph and everything it tells: composites per tick, traces, expired matches."""

    def __init__(self, text: str, share: bool, context: str = "chronicle",
                 within: int | None = None) -> None:
        self.traced: list[tuple[str, CompositeEvent]] = []
        self.graph = EventGraph(text, share=share, context=context, within=within,
                                trace=lambda name, c: self.traced.append((name, c)))
        self.expired: list[Counter[object]] = []
        self._tick: Counter[object] = Counter()
        self.graph.subscribe_expired(self._expire)
        self.raised: list[list[CompositeEvent]] = []

    def _expire(self, x: object) -> None:
        self._tick[repr(x)] += 1

    def feed(self, events: list[PrimitiveEvent]) -> None:
        for e in events:
            self.raised.append(self.graph.feed(e))
            self.expired.append(self._tick)
            self._tick = Counter()

    def state(self) -> dict[str, object]:
        g = self.graph
        return {name: (g.held(name), g.potential(name)) for name in g.order}


def _agree(a: Run, b: Run) -> None:
    assert a.raised == b.raised
    assert a.traced == b.traced
    assert a.expired == b.expired
    assert a.state() == b.state()


@settings(max_examples=examples(300), deadline=None)
@given(shared_sets(), streams(), st.sampled_from(["chronicle", "recent", "continuous"]),
       st.sampled_from([None, 5]))
def test_sharing_is_invisible(defs, events, context, within):
    """Sharing on and off: the same composites (whole: ids, names, constituents), traces,
    stored and held events, and expiry reports, tick by tick, and the same on closing."""
    text = _text(defs)
    on, off = Run(text, True, context, within), Run(text, False, context, within)
    on.feed(events)
    off.feed(events)
    _agree(on, off)
    assert on.graph.close() == off.graph.close()


@settings(max_examples=examples(200), deadline=None)
@given(shared_sets(), shared_sets(max_size=3), streams(), st.data())
def test_adding_and_removing_mid_stream_with_sharing_changes_nothing(first, later, events,
                                                                      data):
    """Definitions added mid-stream (sharing what they can) and removed again give, for every
    tree, what they give without sharing; the untouched trees what a graph that never changed
    gives: all but a multiplicity a later one reuses and the trees built on it (consumed by
    the newcomer, its composite stops integrating, section 3.2)."""
    later = [(f"L{n[1:]}", e) for n, e in later]
    try:
        both = EventGraph(_text(first + later), share=False)
    except DefinitionError:
        return  # the later ones use names the first do not define
    at = data.draw(st.integers(0, len(events)))
    gone = data.draw(st.sampled_from([n for n, _ in later]))
    runs = [Run(_text(first), share) for share in (True, False)]
    for run in runs:
        run.feed(events[:at])
        run.graph.add(_text(later))
        run.feed(events[at:at + 3])
        run.graph.remove(gone)
        run.feed(events[at + 3:])
    _agree(*runs)
    still = Run(_text(first), True)
    still.feed(events)
    names = {n for n, _ in first} - _consumed_by(both, [n for n, _ in later])
    for got, want in zip(runs[0].raised, still.raised, strict=True):
        assert [c for c in got if c.type.name in names] == want


def _consumed_by(graph: EventGraph, later: list[str]) -> set[str]:
    """The definitions whose composites ``later`` may change: each multiplicity they reuse,
    and every definition that reuses one of those (transitively).

    Seed 000, section 3.2: once its composite is consumed, a multiplicity stops integrating
    and starts over, and a tree that reuses a definition consumes its composites as a parent
    node does (Example 15 with Figure 4's Eq as a definition of its own; docs/semantics.md,
    *Multiplicity*). So a newcomer that consumes them changes what the multiplicity raises.
    Nothing else in a tree depends on who uses its composites.
    """
    defs = graph.definitions
    changed = {n for name in later for n in defs[name].depends_on
               if isinstance(defs[n].definition.expr, ast.Mult)}
    grown = True
    while grown:
        more = {d.name for d in defs if d.name not in later and changed & set(d.depends_on)}
        grown = not more <= changed
        changed |= more
    return changed


def test_a_reused_multiplicity_starts_over_once_a_later_definition_consumed_it() -> None:
    """Why the property spares what ``_consumed_by`` names (section 3.2, Example 15): L,
    added mid-stream, consumes D's composite, so D's next one integrates nothing older,
    where D alone keeps integrating."""
    a = [_ins(ts, "/o/item/a", ["o", "i", f"a{ts}"]) for ts in (1, 2, 4)]
    b = _ins(3, "/o/item/b", ["o", "i", "b3"])
    alone, reused = (EventGraph("D := [1,*] ins(item/a)") for _ in range(2))
    for g in (alone, reused):
        g.feed(a[0])
    reused.add("L := (ins(item/a) & ins(item/b)) & D")
    raised = [([_ids(c) for c in alone.feed(e)], [_ids(c) for c in reused.feed(e)])
              for e in (a[1], b, a[2])]
    assert raised == [
        ([("D", ["e1", "e2"])], [("D", ["e1", "e2"])]),  # L never saw D's first composite
        ([], [("L", ["e1", "e2", "e3"])]),  # L consumes D{e1 e2}
        ([("D", ["e1", "e2", "e4"])], [("D", ["e4"])])]  # so D starts over


@pytest.mark.parametrize("share", [True, False])
@pytest.mark.parametrize("mult", ["[1,*] ins(item/a)", "[1,*] ins(item/a) with within=9"])
def test_a_definition_added_later_has_not_consumed_what_was_raised_before_it(
        share: bool, mult: str) -> None:
    """Regression (the property's example): L, added after D's composite was raised, never
    received it, so it did not consume it; D integrates it as if L were not there (it did
    start over: L was counted as a consumer that no longer stored it)."""
    a = [_ins(ts, "/o/item/a", ["o", "i", f"a{ts}"]) for ts in (1, 4)]
    items = [_ins(ts, "/o/item", ["o", "i"]) for ts in (2, 3)]
    alone = EventGraph(f"D := {mult}", share=share)
    g = EventGraph(f"D := {mult}\nA := ins(item/a) & ins(item/b)", share=share)
    assert [_ids(c) for c in g.feed(a[0])] == [("D", ["e1"])] == [
        _ids(c) for c in alone.feed(a[0])]
    g.add("B := ins(item/a) & ins(item/b)\nC := (ins(item/a) & ins(item/b)) & D")
    for e in items:
        assert g.feed(e) == alone.feed(e) == []
    assert [_ids(c) for c in g.feed(a[1]) if c.type.name == "D"] == [("D", ["e1", "e4"])]
    assert [_ids(c) for c in alone.feed(a[1])] == [("D", ["e1", "e4"])]
    g.remove("B")
    # C stores D{e1 e4} now: taken back when D integrates the next one, which C stores.
    (d,) = [c for c in g.feed(_ins(5, "/o/item/a", ["o", "i", "a5"])) if c.type.name == "D"]
    assert _ids(d) == ("D", ["e1", "e4", "e5"])
    assert [_ids(c) for c in g.held("C") if isinstance(c, CompositeEvent)
            and c.type.name == "D"] == [("D", ["e1", "e4", "e5"])]


MULTS = ["[1,*] ins(item/a)", "[0,*] ins(item/a)", "[2,3] *(item/a)",
         "[1,2] ins(item/a) with mode=non-local", "[1,*] ins(item/a) with mode=custom",
         "[1,*] ins(item/a) with within=4"]


# Two items, mostly their a children: a multiplicity's run integrates across the addition.
item_streams = st.lists(st.tuples(st.sampled_from(["i1", "i2"]),
                                  st.sampled_from(["", "/a", "/a", "/c"])),
                        min_size=1, max_size=16).map(lambda steps: [
    _ins(ts, f"/o/item{leaf}", ["o", item] + ([f"x{ts}"] if leaf else []))
    for ts, (item, leaf) in enumerate(steps, 1)])


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(MULTS), st.booleans(), item_streams, st.data())
def test_a_reuser_that_consumes_nothing_changes_nothing(mult, share, events, data):
    """A definition added mid-stream that reuses a multiplicity but never fires (no item/d
    occurs), and is removed again, leaves every composite of the multiplicity as it is alone,
    those raised before it came included (it never received them: nothing consumed them)."""
    at = data.draw(st.integers(0, len(events)))
    until = data.draw(st.integers(at, len(events)))
    alone = EventGraph(f"D := {mult}", share=share)
    g = EventGraph(f"D := {mult}", share=share)
    for i, e in enumerate(events):
        if i == at:
            g.add("C := (ins(item/a) & ins(item/d)) & D")
        if i == until and i > at:
            g.remove("C")
        assert [c for c in g.feed(e) if c.type.name == "D"] == alone.feed(e)
    assert [c for c in g.close() if c.type.name == "D"] == alone.close()


def _ids(c: CompositeEvent) -> tuple[str, list[str]]:
    return c.type.name, [p.id for p in c.primitives()]


def _ins(ts: int, path: str, ids: list[str], op: Op = Op.INS) -> PrimitiveEvent:
    return PrimitiveEvent(f"e{ts}", ts, op, PathInstance.of(path, ids))


TWO = """A := ins(item) ; (ins(item/a) & ins(item/b))
B := (ins(item/a) & ins(item/b)) | ins(item/c)"""


def _hidden(g: EventGraph) -> int:
    """How many shared subtrees the graph runs (white-box: hidden trees have no name)."""
    return len(g.trees) - len(g.order)


def test_an_equal_subtree_is_built_once_and_counted_on_removal() -> None:
    g = EventGraph(TWO)
    assert _hidden(g) == 1 and g.order == ("A", "B")
    g.feed(_ins(1, "/o/item", ["o", "i"]))
    g.feed(_ins(2, "/o/item/a", ["o", "i", "a"]))
    out = g.feed(_ins(3, "/o/item/b", ["o", "i", "b"]))
    assert [(c.id, c.type.name) for c in out] == [("A#2", "A"), ("B#2", "B")]
    # The intermediate composite inside A's is A's own, numbered as A's tree would.
    inner = out[0].constituents[1]
    assert (inner.id, inner.type.name) == ("A#1", "A")
    g.remove("B")
    assert _hidden(g) == 1  # A still shares... itself: the core stays while A uses it
    g.remove("A")
    assert _hidden(g) == 0 and len(g.trees) == 0
    assert g.feed(_ins(4, "/o/item/a", ["o", "i", "a2"])) == []


def test_definitions_that_differ_in_a_window_or_context_do_not_share() -> None:
    g = EventGraph("""A := ins(item) ; (ins(item/a) & ins(item/b))
B := ((ins(item/a) & ins(item/b)) with within=3) | ins(item/c)
C := ((ins(item/a) & ins(item/b)) with context=recent) | ins(item/c)""")
    assert _hidden(g) == 0


def test_a_later_definition_shares_only_a_subtree_that_stores_nothing() -> None:
    g = EventGraph(TWO)
    g.feed(_ins(1, "/o/item/a", ["o", "i", "a"]))  # the shared a & b stores ep1 now
    g.add("C := (ins(item/a) & ins(item/b)) ; ins(item/c)")
    assert _hidden(g) == 1  # C builds its own: the core has history C must not see
    out = g.feed(_ins(2, "/o/item/b", ["o", "i", "b"]))
    assert sorted(c.type.name for c in out) == ["B"]  # A waits for its item, C saw no a
    g.add("E := (ins(item/a) & ins(item/b)) ; ins(item/d)")
    # The core stores nothing again (ea and eb combined): E shares it.
    assert _hidden(g) == 1
    assert len(g.tree("E").operators) == 2


@pytest.mark.parametrize("share", [True, False])
def test_closing_a_sharer_leaves_the_others_detecting(share: bool) -> None:
    g = EventGraph(TWO, share=share)
    g.close("B")
    g.feed(_ins(1, "/o/item", ["o", "i"]))
    g.feed(_ins(2, "/o/item/a", ["o", "i", "a"]))
    assert [c.id for c in g.feed(_ins(3, "/o/item/b", ["o", "i", "b"]))] == ["A#2"]
    g.open("B")
    g.feed(_ins(4, "/o/item/a", ["o", "i", "a2"]))
    assert [c.id for c in g.feed(_ins(5, "/o/item/b", ["o", "i", "b2"]))] == ["B#2"]


def test_an_expired_shared_match_is_reported_to_each_definition() -> None:
    g = EventGraph(TWO, within=3)
    assert _hidden(g) == 1
    reports = []
    g.subscribe_expired(reports.append)
    g.feed(_ins(1, "/o/item/a", ["o", "i", "a"]))
    for ts in range(2, 6):
        g.feed(_ins(ts, "/o/x", ["o", f"x{ts}"]))
    assert sorted((x.definition, x.node, [e.id for e in x.events]) for x in reports) == [
        ("A", "ins(item/a) & ins(item/b)", ["e1"]),
        ("B", "ins(item/a) & ins(item/b)", ["e1"])]


@pytest.mark.parametrize("inner", ["(ins(item/a) & ins(item/b))",
                                   "((ins(item/a) & [1,2] ins(item/b)) ; ins(item/c))"])
def test_long_runs_sweep_the_copies_and_agree(inner: str) -> None:
    """Over many items the views forget the copies of intermediate composites the shared
    subtree can no longer combine (memory follows the open items), and results stay those of
    the graph without sharing — with a window too, whose reports name each definition."""
    text = (f"A := ins(item) ; {inner}\nB := (ins(item) ; {inner}) | ins(item/d)\n"
            f"C := (ins(item) ; {inner}) & ins(item/e)")
    stream, ts = [], 0
    for n in range(300):  # items interleaved three at a time, some never completed
        for leaf in ["", "/a", "/b", "/b", "/c", "/e"]:
            if leaf == "/c" and n % 7 == 0:
                continue
            ts += 1
            item = f"i{n - ts % 3}"
            ids = ["o", item] + ([f"x{ts}"] if leaf else [])
            stream.append(_ins(ts, f"/o/item{leaf}", ids))
    on, off = Run(text, True, within=12), Run(text, False, within=12)
    assert _hidden(on.graph) == 1
    on.feed(stream)
    off.feed(stream)
    _agree(on, off)
    assert any(on.expired) and any(c for tick in on.raised for c in tick)
    views = [n for t in on.graph.trees for n in t.operators if type(n).__name__ == "SharedView"]
    assert len(views) == 3
    assert all(len(v._copies) < 64 for v in views)
