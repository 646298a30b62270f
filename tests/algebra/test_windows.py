"""Windows (issue 13, item 3): composites span fewer than N ticks; what can no longer complete
is dropped at once, and reported.

The engine is compared with the naive reference evaluator extended with the window
(``reference.py``: a stored event is no longer stored from tick ``start + N`` on).
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.algebra import (
    EventGraph,
    Expired,
    ExpressionSyntaxError,
    GraphStateError,
    InvalidArgumentError,
    Op,
    PathInstance,
    PrimitiveEvent,
)

from .test_engine_properties import CONTEXTS, EXPRESSIONS, ids, reference, streams


def _both(expr: str, events: list[PrimitiveEvent], context: str, hierarchical: bool,
          semantics: str, within: int, as_modifier: bool) -> tuple[list[Counter[frozenset[str]]],
                                                                   list[Counter[frozenset[str]]]]:
    if as_modifier:
        graph = EventGraph(f"E := ({expr}) with within={within}", context=context,
                           hierarchical=hierarchical, semantics=semantics)
    else:
        graph = EventGraph(f"E := {expr}", context=context, hierarchical=hierarchical,
                           semantics=semantics, within=within)
    ref = reference.Reference(f"E := {expr}", context=context, hierarchical=hierarchical,
                              semantics=semantics, within=within)
    got = [Counter(ids(c) for c in graph.feed(e)) for e in events]
    want = [Counter(ids(c) for c in ref.feed(e)) for e in events]
    return got, want


def _check(expr: str, events: list[PrimitiveEvent], data: st.DataObject) -> None:
    context = data.draw(st.sampled_from(CONTEXTS))
    hierarchical = data.draw(st.booleans())
    semantics = data.draw(st.sampled_from(["interval", "detection"]))
    within = data.draw(st.integers(1, 8))
    as_modifier = data.draw(st.booleans())
    got, want = _both(expr, events, context, hierarchical, semantics, within, as_modifier)
    for tick, (g, w) in enumerate(zip(got, want, strict=True), start=1):
        assert g == w, f"tick {tick}: {context}, hierarchical={hierarchical}, {semantics}"


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(EXPRESSIONS), streams(), st.data())
def test_windowed_engine_agrees_with_the_reference(expr: str, events: list[PrimitiveEvent],
                                                    data: st.DataObject) -> None:
    """With a window, in every context: the same composites each tick as the reference."""
    _check(expr, events, data)


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(EXPRESSIONS), streams(max_events=40), st.data())
def test_windowed_engine_agrees_with_the_reference_at_length(
        expr: str, events: list[PrimitiveEvent], data: st.DataObject) -> None:
    """The same, on more and longer streams."""
    _check(expr, events, data)


def _ins(ts: int, path: str, ids_: list[str]) -> PrimitiveEvent:
    return PrimitiveEvent(f"e{ts}", ts, Op.INS, PathInstance.of(path, ids_))


EI = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"


def test_never_completed_items_hold_only_the_window() -> None:
    """Items that never get their quantity: under within=100 the tree stores what arrived in
    the last 100 ticks, however long the stream (without a window, everything)."""
    graph = EventGraph(EI, within=100)
    unbounded = EventGraph(EI)
    ts = 0
    most = 0
    for k in range(50_000):
        for path, ids_ in (("/o/item", ["o", f"i{k}"]), ("/o/item/price", ["o", f"i{k}", "p"])):
            ts += 1
            e = _ins(ts, path, ids_)
            graph.feed(e)
            unbounded.feed(e)
        if k % 5_000 == 4_999:
            most = max(most, len(graph.held("Ei")))
    assert most <= 100
    assert len(unbounded.held("Ei")) == 100_000


@pytest.mark.slow
def test_a_long_stream_of_never_completed_events_holds_a_constant() -> None:
    """4·10^5 events of items that never complete, under within=100: at most 100 events held
    at any checkpoint, the same at the end as after the first 10^4 (bench/bench_engine.py
    feeds 10^6 and more, measuring memory)."""
    graph = EventGraph(EI, within=100)
    feed = graph.feed
    seen = []
    ts = 0
    for k in range(200_000):
        ts += 1
        feed(_ins(ts, "/o/item", ["o", f"i{k}"]))
        ts += 1
        feed(_ins(ts, "/o/item/price", ["o", f"i{k}", "p"]))
        if k % 20_000 == 4_999:
            seen.append(len(graph.held("Ei")))
    assert max(seen) <= 100
    assert seen[0] == seen[-1]


def test_expiry_reports_exactly_what_was_dropped() -> None:
    """Each dropped partial match is reported once, by operator and group, with the events it
    still stored, at the tick its window ended; a completed item reports nothing."""
    graph = EventGraph(EI + " with within=5")
    got: list[Expired] = []
    graph.subscribe_expired(got.append)
    graph.feed(_ins(1, "/o/item", ["o", "i1"]))
    graph.feed(_ins(2, "/o/item/price", ["o", "i1", "p1"]))
    graph.feed(_ins(3, "/o/item", ["o", "i2"]))
    graph.feed(_ins(4, "/o/item/price", ["o", "i2", "p2"]))
    assert [c.type.name for c in graph.feed(_ins(5, "/o/item/quantity", ["o", "i2", "q2"]))] \
        == ["Ei"]
    for ts in range(6, 10):
        graph.feed(_ins(ts, "/o/x", ["o", f"x{ts}"]))
    assert [(x.definition, x.node, str(x.group), [e.id for e in x.events], x.tick)
            for x in got] == [
        ("Ei", "ins(item) ; (ins(item/price) & ins(item/quantity)) with within=5",
         "/o[o]/item[i1]", ["e1"], 6),
        ("Ei", "ins(item/price) & ins(item/quantity)", "/o[o]/item[i1]", ["e2"], 7),
    ]
    assert graph.held("Ei") == []


def test_a_composite_spanning_the_window_is_not_raised() -> None:
    """end - start < N: within=5 combines ticks 1..5 but not 1..6."""
    for last, raised in ((5, ["Ei"]), (6, [])):
        graph = EventGraph(EI, within=5)
        graph.feed(_ins(1, "/o/item", ["o", "i"]))
        graph.feed(_ins(2, "/o/item/price", ["o", "i", "p"]))
        out = graph.feed(_ins(last, "/o/item/quantity", ["o", "i", "q"]))
        assert [c.type.name for c in out] == raised


def test_a_window_applies_to_the_nodes_beneath_it() -> None:
    """The inner conjunction of a windowed sequence is bounded too: a price 6 ticks before the
    quantity never meets it, although the sequence's own events would fit."""
    graph = EventGraph("Ei := (ins(item) ; (ins(item/price) & ins(item/quantity))) "
                       "with within=6")
    tree = graph.tree("Ei")
    assert [n.window for n in tree.operators] == [6, 6]
    nested = EventGraph("Ei := ins(item) ; ((ins(item/price) & ins(item/quantity)) "
                        "with within=3)", within=10)
    assert [n.window for n in nested.tree("Ei").operators] == [3, 10]


def test_multiplicity_starts_over_outside_the_window() -> None:
    """×[1,*] integrates while the integrated composite stays inside the window."""
    graph = EventGraph("Eq := [1,*] ins(item/quantity) with within=3")
    sizes = []
    for ts in (1, 2, 3, 5, 6):
        out = graph.feed(_ins(ts, "/o/item/quantity", ["o", "i", f"q{ts}"]))
        sizes.append([sorted(p.id for p in c.primitives()) for c in out])
    assert sizes == [[["e1"]], [["e1", "e2"]], [["e1", "e2", "e3"]], [["e5"]], [["e5", "e6"]]]


def test_multiplicity_waiting_events_expire() -> None:
    """×[2,2] never raises from two events farther apart than its window; the first one is
    reported dropped."""
    graph = EventGraph("Eq := [2,2] ins(item/quantity) with within=2")
    got: list[Expired] = []
    graph.subscribe_expired(got.append)
    assert graph.feed(_ins(1, "/o/item/quantity", ["o", "i", "q1"])) == []
    assert graph.feed(_ins(3, "/o/item/quantity", ["o", "i", "q3"])) == []
    assert [[e.id for e in x.events] for x in got] == [["e1"]]
    assert [c.type.name for c in graph.feed(_ins(4, "/o/item/quantity", ["o", "i", "q4"]))] \
        == ["Eq"]


@pytest.mark.parametrize("within", [0, -3, 1.5, True, "ten"])
def test_bad_windows_are_refused(within: object) -> None:
    """within= must be a positive number of ticks."""
    with pytest.raises(InvalidArgumentError, match="within="):
        EventGraph(EI, within=within)  # type: ignore[arg-type]  # on purpose


@pytest.mark.parametrize("text", ["30x", "0s", "1.5s", "s", "-3s"])
def test_bad_durations_are_refused(text: str) -> None:
    """A duration is a positive whole number with a unit (ms, s, m, h, d)."""
    with pytest.raises(InvalidArgumentError, match="within="):
        EventGraph(EI, within=text)
    with pytest.raises(ExpressionSyntaxError):
        EventGraph(EI + f" with within={text}")


def _timed(events: list[PrimitiveEvent], scale: float) -> list[PrimitiveEvent]:
    """The same events, each at time ``ts * scale`` seconds."""
    return [PrimitiveEvent(e.id, e.ts, e.op, e.pi, e.doc, e.value, e.old, e.index,
                           e.ts * scale) for e in events]


@settings(max_examples=examples(80), deadline=None)
@given(st.sampled_from(EXPRESSIONS), streams(), st.data())
def test_a_duration_over_events_a_second_apart_is_the_window_in_ticks(
        expr: str, events: list[PrimitiveEvent], data: st.DataObject) -> None:
    """Events at time = ts seconds: within=Ns detects exactly what within=N ticks does (the
    clock of event time and the clock of ticks agree), in every context."""
    context = data.draw(st.sampled_from(CONTEXTS))
    hierarchical = data.draw(st.booleans())
    n = data.draw(st.integers(1, 8))
    # Whole seconds and minutes: sums of such floats are exact, so the boundary is too.
    unit, scale = data.draw(st.sampled_from([("s", 1.0), ("m", 60.0), ("h", 3600.0)]))
    ticks = EventGraph(f"E := {expr}", context=context, hierarchical=hierarchical, within=n)
    timed = EventGraph(f"E := ({expr}) with within={n}{unit}", context=context,
                       hierarchical=hierarchical)
    for a, b in zip(events, _timed(events, scale), strict=True):
        assert Counter(ids(c) for c in ticks.feed(a)) == Counter(ids(c) for c in timed.feed(b))
    assert len(ticks.held("E")) == len(timed.held("E"))


def test_both_windows_apply() -> None:
    """A node under a tick window and a duration is bounded by both."""
    graph = EventGraph(EI + " with within=10s", within=3)
    assert [(n.window, n.duration) for n in graph.tree("Ei").operators] == [(3, 10_000)] * 2
    graph.feed(PrimitiveEvent("e1", 1, Op.INS, PathInstance.of("/o/item", ["o", "i"]), time=0))
    graph.feed(PrimitiveEvent("e2", 2, Op.INS, PathInstance.of("/o/item/price", ["o", "i", "p"]),
                              time=11))  # 11 s later: outside the duration
    out = graph.feed(PrimitiveEvent("e3", 3, Op.INS,
                                    PathInstance.of("/o/item/quantity", ["o", "i", "q"]), time=12))
    assert out == []


@pytest.mark.parametrize(("time", "says"),
                         [(None, "carries no time"), (5.0, "before the previous")])
def test_a_duration_needs_times_that_do_not_decrease(time: float | None, says: str) -> None:
    """Under a duration window, an event without a time, or earlier than the last, is refused
    with the reason."""
    graph = EventGraph(EI + " with within=30s")
    graph.feed(PrimitiveEvent("e1", 1, Op.INS, PathInstance.of("/o/item", ["o", "i"]), time=10))
    with pytest.raises(GraphStateError, match=says):
        graph.feed(PrimitiveEvent("e2", 2, Op.INS, PathInstance.of("/o/x", ["o", "x"]),
                                  time=time))


def test_a_watched_document_stamps_its_clock_where_a_duration_needs_it() -> None:
    """Monitor(clock=...) gives an operation's events its time when a window is a duration;
    an item completed too late is not detected, and is reported."""
    import xmlevents

    now = [0.0]
    monitor = xmlevents.Monitor(clock=lambda: now[0])
    doc = xmlevents.fromstring("<order/>", monitor=monitor)
    doc.define(EI + " with within=1m")
    got: list[str] = []
    doc.subscribe("Ei", lambda d, event: got.append(str(event.pi)))
    expired: list[Expired] = []
    assert monitor.graph is not None
    monitor.graph.subscribe_expired(expired.append)
    for item_time, quantity_time in ((0.0, 30.0), (100.0, 200.0)):
        now[0] = item_time
        item = xmlevents.SubElement(doc.getroot(), "item")
        xmlevents.SubElement(item, "price").text = "1"
        now[0] = quantity_time
        xmlevents.SubElement(item, "quantity").text = "1"
    assert len(got) == 1
    assert {e.time for x in expired for e in x.events} <= {100.0}
    assert expired


def test_detect_takes_a_window(tmp_path: object) -> None:
    """``xmlevents detect --within N`` bounds every operator; a bad value is a usage error."""
    import io
    import pathlib

    from xmlevents._cli import main

    lines = ['{"op": "ins", "path": "/o/item", "ids": ["o", "i"]}',
             '{"op": "ins", "path": "/o/item/price", "ids": ["o", "i", "p"]}',
             '{"op": "ins", "path": "/o/x", "ids": ["o", "x"]}',
             '{"op": "ins", "path": "/o/item/quantity", "ids": ["o", "i", "q"]}']
    path = pathlib.Path(str(tmp_path)) / "events.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for within, count in (("4", 1), ("3", 0)):
        out = io.StringIO()
        assert main(["detect", "--within", within, "-d", EI, str(path)], stdout=out) == 0
        assert len(out.getvalue().splitlines()) == count
    assert main(["detect", "--within", "0", "-d", EI, str(path)], stdout=io.StringIO()) == 2
