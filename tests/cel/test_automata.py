"""The automaton evaluator against the reference evaluator (seed 003, sections 6-7): random
unary queries on random streams give the same complex events for every strategy, none twice."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.cel import CELQueryError, Event, Strategy, StreamError, compile_query, reference
from xmlevents.cel._cea import OrderedRuns, Runs, _Partitions, compile_cea, count, evaluate

from .found import sorted_found
from .test_reference import PHI1, PHI2, PHI3, STREAM


@pytest.mark.parametrize("query", [PHI1, PHI2, PHI3])
@pytest.mark.parametrize("strategy", list(Strategy))
def test_the_running_example(query: str, strategy: Strategy) -> None:
    q = compile_query(query.replace("SELECT *", f"SELECT {strategy.value} *"))
    assert sorted_found(evaluate(q, STREAM)) == reference(q, STREAM)


@st.composite
def formulas(draw: st.DrawFn, depth: int = 3) -> str:
    """Safe unary formulas over A, B, C with distinct variables and filters on them."""
    counter = draw(st.integers(0, 0))
    names = iter(f"v{i}" for i in range(counter, counter + 100))

    def build(d: int) -> str:
        if d == 0 or draw(st.integers(0, 2)) == 0:
            var = next(names)
            leaf = f"{draw(st.sampled_from('ABC'))} AS {var}"
            if draw(st.booleans()):
                leaf = f"({leaf} FILTER {var}[k {draw(st.sampled_from(['<', '>=', '=']))} "\
                       f"{draw(st.integers(0, 2))}])"
            return leaf
        kind = draw(st.sampled_from(["seq", "or", "plus", "next", "plus-next"]))
        if kind in ("plus", "plus-next"):
            return f"({build(d - 1)}){'+' if kind == 'plus' else ':+'}"
        a, b = build(d - 1), build(d - 1)
        if kind == "or":
            return f"({a}) OR ({b})"
        return f"({a}) {';' if kind == 'seq' else ':'} ({b})"

    return build(depth)


streams = st.lists(st.tuples(st.sampled_from("ABCX"), st.integers(0, 2)), max_size=9).map(
    lambda items: [Event(i, t, {"k": k}) for i, (t, k) in enumerate(items)])


@settings(max_examples=examples(300), deadline=None)
@given(formulas(), streams, st.sampled_from(list(Strategy)),
       st.sampled_from([None, 1, 2, 3, 5]), st.sampled_from(["", " PARTITION BY [k]"]),
       st.sampled_from(["", " CONSUME BY ANY", " CONSUME BY PARTITION"]),
       st.sampled_from(["", " LIMIT 1", " LIMIT 2"]))
def test_automaton_equals_reference(formula: str, stream: list[Event], strategy: Strategy,
                                    window: int | None, partition: str, consume: str,
                                    limit: str) -> None:
    within = "" if window is None else f" WITHIN {window} EVENTS"
    q = compile_query(f"SELECT {strategy.value} * FROM S WHERE {formula}{partition}{within}"
                      f"{consume}{limit}")
    got = sorted_found(evaluate(q, stream))
    assert got == reference(q, stream)
    assert len(got) == len(set(got))
    assert count(q, stream) == len(got)


def test_partitions_and_limit() -> None:
    s = [Event(i, t, {"k": k}) for i, (t, k) in enumerate(zip("AABB", [1, 2, 2, 1],
                                                             strict=True))]
    q = compile_query("SELECT * FROM S WHERE A AS a ; B AS b PARTITION BY [k]")
    assert sorted_found(evaluate(q, s)) == reference(q, s)
    # LIMIT bounds each last position's complex events (CORE's per-position enumeration)
    q = compile_query("SELECT * FROM S WHERE A+ ; B LIMIT 2")
    got = sorted_found(evaluate(q, s))
    assert got == reference(q, s)
    assert [m.end for m in got] == [2, 2, 3, 3]


def test_work_per_event_does_not_grow_with_partial_matches() -> None:
    """A+ ; B over a long run of A: the partial matches double with every A, the active
    deterministic states stay few."""
    runs = Runs(compile_cea(compile_query("SELECT * FROM S WHERE A+ ; B").formula))
    for j in range(200):
        runs.step(j, Event(j, "A"))
        assert len(runs.active) <= 3
    found = runs.step(200, Event(200, "B"))
    assert found is not None and sum(n.count for n in found) == 2 ** 200 - 1
    assert runs.states <= 4


def test_what_the_automaton_refuses() -> None:
    q = compile_query("SELECT * FROM S WHERE H AS x ; T AS y FILTER y[id = x.id]")
    with pytest.raises(CELQueryError, match="not unary"):
        list(evaluate(q, []))
    q = compile_query("SELECT * FROM S WHERE A AS x ; B AS y FILTER x[k > 1] OR y[k > 1]")
    with pytest.raises(CELQueryError, match="not unary"):
        list(evaluate(q, []))
    # a duration window needs the times in order (the reference does not)
    q = compile_query("SELECT * FROM S WHERE A AS a ; B AS b WITHIN 5 SECONDS")
    backwards = [Event(0, "A", {}, 10.0), Event(1, "B", {}, 4.0)]
    with pytest.raises(StreamError, match=re.escape(
            "line 2 (the event at position 1): WITHIN 5 SECONDS measures 4")):
        list(evaluate(q, backwards))
    assert reference(q, backwards) == []


timed_streams = st.lists(
    st.tuples(st.sampled_from("ABCX"), st.integers(0, 2), st.integers(0, 3), st.booleans()),
    max_size=9).map(lambda items: [
        Event(i, t, {"k": k, "v": sum(step for _, _, step, _ in items[:i + 1])},
              float(sum(step for _, _, step, _ in items[:i + 1])) if timed else None)
        for i, (t, k, _, timed) in enumerate(items)])


@settings(max_examples=examples(300), deadline=None)
@given(formulas(), timed_streams, st.sampled_from(list(Strategy)),
       st.sampled_from(["2 SECONDS", "4 SECONDS", "0.5 SECONDS", "3 [v]"]),
       st.sampled_from(["", " PARTITION BY [k]"]))
def test_duration_and_attribute_windows(formula: str, stream: list[Event], strategy: Strategy,
                                        window: str, partition: str) -> None:
    """Windows on times or an attribute's values (in order; some events without a time,
    which can be in no complex event that fits): the automaton agrees with the reference."""
    q = compile_query(f"SELECT {strategy.value} * FROM S WHERE {formula}{partition} "
                      f"WITHIN {window}")
    got = sorted_found(evaluate(q, stream))
    assert got == reference(q, stream)
    assert count(q, stream) == len(got)


def test_memory_follows_the_window_not_the_stream() -> None:
    import tracemalloc

    def peak(n: int) -> int:
        runs = Runs(compile_cea(compile_query("SELECT * FROM S WHERE A+ ; B+ ; C").formula),
                    window=50)
        tracemalloc.start()
        for j in range(n):
            runs.step(j, Event(j, "ABC"[j * 7 % 3]))
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(2_000), peak(8_000)
    assert large < 1.3 * small, (small, large)


@settings(max_examples=examples(200), deadline=None)
@given(formulas(), streams, st.lists(st.booleans(), min_size=9, max_size=9))
def test_the_determinised_automaton_is_io_deterministic(formula: str, stream: list[Event],
                                                         marks: list[bool]) -> None:
    """Reading a stream with a given choice of marks leads to exactly one deterministic
    state: the set of every automaton state some run with those marks reaches (section 6's
    I/O-determinism), so one complex event is never the output of two runs."""
    cea = compile_cea(compile_query(f"SELECT * FROM S WHERE {formula}").formula)
    runs = Runs(cea)
    reached = {cea.initial}
    d = 0
    for event, mark in zip(stream, marks, strict=False):
        bits = runs.satisfied(event)
        reached = ({q for p in reached for leaf, q in cea.marks[p] if bits >> leaf & 1}
                   if mark else {q for p in reached for q in cea.skips[p]})
        d = runs._successors(d, bits)[1 if mark else 0]
        if d < 0:
            assert not reached
            return
        assert runs._keys[d] == frozenset(reached)


@pytest.mark.parametrize("strategy", [Strategy.NEXT, Strategy.LAST])
def test_next_and_last_keep_one_run_per_state(strategy: Strategy) -> None:
    """Algorithms 5-6: under NEXT and LAST the runs kept never outnumber the automaton's
    states, whatever the partial matches, and each position gives one complex event."""
    q = compile_query(f"SELECT {strategy.value} * FROM S WHERE A+ ; B+ ; C")
    runs = OrderedRuns(compile_cea(q.formula), strategy)
    stream = [Event(j, "AB"[j % 7 // 4]) for j in range(300)] + [Event(300, "C")]
    for e in stream:
        found = runs.step(e.position, e)
        assert len(runs.nodes) <= len(runs.cea.marks)
    assert found is not None and [n.count for n in found] == [1]
    (got,) = list(evaluate(q, stream))
    small = [Event(j, "AB"[j % 7 // 4]) for j in range(11)] + [Event(11, "C")]
    assert sorted_found(evaluate(q, small)) == reference(q, small)
    if strategy is Strategy.NEXT:  # the first A, then the first B after it
        assert got.positions[:2] == (0, 1) and got.positions[-1] == 300
    else:  # the most recent explanation: every position that can be marked, latest kept
        assert 299 in got.positions and got.positions[-1] == 300


def test_max_without_enumerating() -> None:
    """MAX by the pair construction: over 200 As and a B, A+ ; B has 2^200 - 1 complex
    events and one maximal one, counted without enumerating."""
    stream = [Event(j, "A") for j in range(200)] + [Event(200, "B")]
    q = compile_query("SELECT MAX * FROM S WHERE A+ ; B")
    assert count(q, stream) == 1
    (m,) = evaluate(q, stream)
    assert m.positions == tuple(range(201))
    q = compile_query("SELECT STRICT * FROM S WHERE A+ ; B")
    assert count(q, stream) == 200  # every interval ending at the B


def test_limit_finds_the_most_recent_without_enumerating() -> None:
    """2^300 - 1 complex events end at the B; LIMIT 3 finds the three most recent best-first
    (output in the usual order)."""
    stream = [Event(j, "A") for j in range(300)] + [Event(300, "B")]
    q = compile_query("SELECT * FROM S WHERE A+ ; B LIMIT 3")
    assert [m.positions for m in evaluate(q, stream)] == [
        (297, 298, 299, 300), (298, 299, 300), (299, 300)]
    assert count(q, stream) == 3


@pytest.mark.parametrize("window", ["WITHIN 50 EVENTS", "WITHIN 50 SECONDS", None])
def test_partitions_with_nothing_live_are_dropped(window: str | None) -> None:
    """20,000 items, each seen twice and never again: the partitions held stay about the
    window's (or, without one, those holding a partial complex event), not every item."""
    q = compile_query("SELECT * FROM S WHERE A ; B ; C PARTITION BY [item]"
                      + (f" {window}" if window else ""))
    parts = _Partitions(q)
    held = 0
    for j in range(40_000):
        item = j // 2
        # without a window an item that saw A then C still waits for its B: let the
        # second event be a B only, so that partial matches stay live there
        kind = "A" if j % 2 == 0 else ("C" if window else "X")
        parts.step(Event(j, kind, {"item": item}, float(j)))
        held = max(held, len(parts.runs))
    assert held <= (300 if window else 40_000)
    if window is None:  # every item holds its A: nothing may be dropped
        assert len(parts.runs) == 20_000


@settings(max_examples=examples(60), deadline=None)
@given(formulas(2), st.lists(st.tuples(st.sampled_from("ABCX"), st.integers(0, 40)),
                             min_size=100, max_size=400),
       st.sampled_from(["WITHIN 3 EVENTS", "WITHIN 20 EVENTS", "WITHIN 4 SECONDS", ""]),
       st.sampled_from(list(Strategy)))
def test_dropping_partitions_changes_nothing(formula: str, items: list[tuple[str, int]],
                                              window: str, strategy: Strategy) -> None:
    """The same complex events whether stale and empty partitions are dropped or kept."""
    stream = [Event(i, t, {"k": k % 7}, float(i // 2)) for i, (t, k) in enumerate(items)]
    q = compile_query(f"SELECT {strategy.value} * FROM S WHERE {formula} PARTITION BY [k] "
                      f"{window}")
    got = sorted_found(evaluate(q, stream))
    keep = _Partitions._sweep
    try:
        _Partitions._sweep = lambda self, position: None  # type: ignore[method-assign]
        kept = sorted_found(evaluate(q, stream))
    finally:
        _Partitions._sweep = keep  # type: ignore[method-assign]
    assert got == kept


@settings(max_examples=examples(80), deadline=None)
@given(formulas(2), st.lists(st.tuples(st.sampled_from("ABCX"), st.integers(0, 3)),
                             min_size=30, max_size=250),
       st.sampled_from(["WITHIN 1 EVENTS", "WITHIN 6 EVENTS", "WITHIN 3 SECONDS",
                        "WITHIN 2 [k]"]),
       st.sampled_from([Strategy.ALL, Strategy.STRICT, Strategy.MAX]),
       st.sampled_from(["", " PARTITION BY [k]", " CONSUME BY ANY"]))
def test_counting_under_a_window_equals_enumerating(formula: str,
                                                    items: list[tuple[str, int]],
                                                    window: str, strategy: Strategy,
                                                    extra: str) -> None:
    """count() under a window counts runs per state through two stacks (WindowCounter);
    on long streams it gives the number of complex events the enumeration gives."""
    stream = [Event(i, t, {"k": i // 4, "p": k % 2}, float(i // 3))
              for i, (t, k) in enumerate(items)]
    partition = " PARTITION BY [p]" if extra == " PARTITION BY [k]" else ""
    consume = "" if partition else extra
    q = compile_query(f"SELECT {strategy.value} * FROM S WHERE {formula}{partition} {window}"
                      f"{consume}")
    assert count(q, stream) == sum(1 for _ in evaluate(q, stream))


@pytest.mark.parametrize("text", [
    "SELECT * FROM S WHERE H AS x ; T AS y FILTER y[id = x.id]",
    "SELECT * FROM S WHERE A AS x ; B AS y FILTER x[k > 1] OR y[k > 1]",
    "SELECT * FROM S WHERE (A AS x ; B AS y FILTER y[k > 1]) FILTER x[k = 2]",
    "SELECT * FROM S WHERE ((A AS x FILTER x[k > 1]) ; B AS y) FILTER y[k = x.k]",
    "SELECT * FROM S WHERE A AS x ; B AS y FILTER x[k > 1] AND y[k < 3]",
    "SELECT * FROM S WHERE (A AS x)+ ; B AS y FILTER y[k > 1]",
])
def test_one_place_decides_what_the_automaton_takes(text: str) -> None:
    """check_automaton (the command line's and the replay's check before any work) refuses
    exactly what compiling the automaton refuses, with the same reason (issue 28: two
    places decided it, and could disagree)."""
    from xmlevents.cel import check_automaton

    q = compile_query(text)
    try:
        compile_cea(q.formula)
    except CELQueryError as exc:
        with pytest.raises(CELQueryError) as checked:
            check_automaton(q.formula, text)
        assert exc.reason.startswith(checked.value.reason)
        assert checked.value.line == 1 and checked.value.column is not None
    else:
        check_automaton(q.formula, text)
