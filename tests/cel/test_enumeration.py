"""Enumeration with constant delay (seed 003, section 7.2 and Appendix D.1): the work between
two complex events is linear in the next one, whatever the stream before; nothing is
materialised before the first."""

from __future__ import annotations

import itertools
import random
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.cel import Event, compile_query
from xmlevents.cel._cea import Evaluation, Runs, compile_cea, enumerate_found, evaluate

from .test_automata import formulas

#: Lines of enumerate_found run per position of the output, plus one output's worth: its loop
#: body runs once per position going down and once at the bottom (13.3-14.25 measured).
PER_POSITION = 16


def gaps(outputs: Iterator[tuple[int, ...]], limit: int) -> list[tuple[int, int]]:
    """(lines run in enumerate_found since the last output, size of this output) for the
    first ``limit`` outputs, and for the end (size 0): the delay, counted in lines."""
    code = enumerate_found.__code__
    lines = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal lines
        if event == "line":
            lines += 1
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code is code else None

    out: list[tuple[int, int]] = []
    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        for c in itertools.islice(outputs, limit):
            out.append((lines, len(c)))
            lines = 0
        if len(out) < limit:  # the enumeration ended: the work after the last output
            out.append((lines, 0))
    finally:
        sys.settrace(old)
    return out


def assert_constant_delay(found: list[Any], limit: int = 3000) -> int:
    seen = gaps(enumerate_found(found), limit)
    for work, size in seen:
        assert work <= PER_POSITION * (size + 1), (work, size)
    return len(seen)


def run(query: str, stream: list[Event]) -> Iterator[list[Any]]:
    """The nodes found at each position of ``stream`` (the automaton of ``query``, ALL)."""
    runs = Runs(compile_cea(compile_query(query).formula))
    for e in stream:
        found = runs.step(e.position, e)
        if found:
            yield found


@pytest.mark.parametrize(("query", "stream"), [
    # 2^300 - 1 complex events at the B: lists of 300 cells, unions nested 300 deep
    ("SELECT * FROM S WHERE A+ ; B", "A" * 300 + "B"),
    # every A before every B before the C: 200 x 200 pairs, lists of 200 cells
    ("SELECT * FROM S WHERE A ; B ; C", "A" * 200 + "B" * 200 + "C"),
    # iterations of sequences: a union of every way to split the run
    ("SELECT * FROM S WHERE (A ; B)+ ; C", "AB" * 60 + "C"),
    ("SELECT * FROM S WHERE (A OR B)+ ; (B OR C)", "ABC" * 80),
])
def test_the_delay_is_linear_in_each_output(query: str, stream: str) -> None:
    events = [Event(i, t) for i, t in enumerate(stream)]
    *_, last = run(query, events)
    assert assert_constant_delay(last) > 10


@settings(max_examples=examples(150), deadline=None)
@given(formulas(), st.lists(st.sampled_from("ABCX"), min_size=1, max_size=40))
def test_the_delay_is_linear_on_random_queries_and_streams(formula: str, items: list[str]
                                                            ) -> None:
    events = [Event(i, t) for i, t in enumerate(items)]
    for found in run(f"SELECT * FROM S WHERE {formula}", events):
        assert_constant_delay(found, 200)


def test_the_first_complex_events_come_before_the_others_are_built() -> None:
    """2^400 - 1 complex events end at the B: the first ones are produced at once (nothing
    is listed or sorted before them)."""
    q = compile_query("SELECT * FROM S WHERE A+ ; B")
    stream = [Event(i, "A") for i in range(400)] + [Event(400, "B")]
    first = list(itertools.islice(evaluate(q, stream), 5))
    assert len(first) == 5 and all(m.end == 400 for m in first)
    assert len(set(first)) == 5


def test_matches_must_be_consumed_before_the_next_event() -> None:
    q = compile_query("SELECT * FROM S WHERE A ; B")
    evaluation = Evaluation(q)
    evaluation.push(Event(0, "A"))
    pending = evaluation.matches(Event(1, "B"))
    evaluation.push(Event(2, "A"))
    with pytest.raises(RuntimeError, match="before pushing the next event"):
        next(pending)
    assert sorted(m.positions for m in evaluation.push(Event(3, "B"))) == [(0, 3), (2, 3)]


@pytest.mark.parametrize("window", [10, 100, 1000])
@pytest.mark.parametrize("query", ["A ; B ; C", "A ; B ; C ; D", "(A OR B OR C) ; D",
                                   "A+ ; B", "A+ ; B+ ; C", "(A+ ; B)+ ; C"])
def test_under_a_window_expired_pieces_are_passed_over_whole(query: str, window: int) -> None:
    """The experiments' queries under windows of 10 to 1,000 events on a random stream: the
    work per position of output does not grow with the window (a list's first cell has its
    latest start, so the walk passes over a piece that expired in one step; measured 12-47
    lines a position, where passing over each expired cell cost up to 615 at 100 events)."""
    rng = random.Random(3)
    runs = Runs(compile_cea(compile_query(f"SELECT * FROM S WHERE {query}").formula), window)
    worst = 0.0
    for j in range(3000):
        found = runs.step(j, Event(j, rng.choice("ABCD")))
        # measured once the window is full twice over: before, nothing has expired yet
        if found and j % 7 == 0 and j >= min(2 * window, 1500):
            for work, size in gaps(enumerate_found(found, j - window), 300):
                worst = max(worst, work / (size + 1))
    assert worst <= 4 * PER_POSITION
