"""CEL's semantics by the reference evaluator on the paper's running example (seed 003,
sections 2-4), and CEQL's parsing and checks.

Figure 1's stream, reconstructed: the extraction kept the ids (2 0 0 1 1 0 1 1 0) and values
(25 45 20 25 40 42 25 70 18) of positions 0-8 and lost the type row. The outputs the prose
states fix the types: φ1 (a temperature over 40 then a humidity of at most 25, both of sensor
0) gives {1,2}, {1,8}, {5,8}, so 1 and 5 are temperatures and 2 and 8 humidities; φ3's "only
two humidity events" of sensor 1 are 3 and 7 with the temperatures 4 and 6 between them.
Position 0 (sensor 2) takes part in nothing; it is written as a humidity.
"""

from __future__ import annotations

import pytest

from xmlevents.cel import Event, Strategy, compile_query, reference

TYPES = "HTHHTTTHH"
IDS = [2, 0, 0, 1, 1, 0, 1, 1, 0]
VALUES = [25, 45, 20, 25, 40, 42, 25, 70, 18]
STREAM = [Event(i, t, {"id": s, "value": v}) for i, (t, s, v) in
          enumerate(zip(TYPES, IDS, VALUES, strict=True))]

PHI1 = ("SELECT * FROM S WHERE (T AS x ; H AS y) "
        "FILTER x[value > 40 AND id = 0] AND y[value <= 25 AND id = 0]")
PHI2 = ("SELECT * FROM S WHERE (T AS x ; H AS y) OR (H AS y ; T AS x) "
        "FILTER x[value > 40 AND id = 0] AND y[value <= 25 AND id = 0]")
PHI3 = ("SELECT * FROM S WHERE H AS x ; (T AS z FILTER z[id = 1])+ ; H AS y "
        "FILTER x[value < 30 AND id = 1] AND y[value > 60 AND id = 1]")


def run(query: str, strategy: Strategy | None = None, stream: list[Event] = STREAM
        ) -> list[list[int]]:
    return [list(m.positions) for m in reference(compile_query(query), stream, strategy)]


def test_phi1_phi2_phi3() -> None:
    assert run(PHI1) == [[1, 2], [1, 8], [5, 8]]
    assert run(PHI2) == [[1, 2], [2, 5], [1, 8], [5, 8]]  # φ1's and {2, 5}
    assert run(PHI3) == [[3, 4, 6, 7], [3, 4, 7], [3, 6, 7]]


def test_selection_strategies_of_the_running_example() -> None:
    assert run(PHI1, Strategy.STRICT) == [[1, 2]]
    assert run(PHI1, Strategy.NEXT) == [[1, 2], [1, 8]]  # the oldest explanation per end
    assert run(PHI1, Strategy.LAST) == [[1, 2], [5, 8]]  # the most recent one
    assert run(PHI1, Strategy.MAX) == [[1, 2], [1, 8], [5, 8]]
    for strategy in (Strategy.MAX, Strategy.NEXT, Strategy.LAST):
        assert run(PHI3, strategy) == [[3, 4, 6, 7]]
    assert run(PHI3, Strategy.STRICT) == []  # 3..7 holds 5, a sensor 0 event
    assert run(PHI1.replace("SELECT *", "SELECT NXT *")) == [[1, 2], [1, 8]]


def test_correlation_keeps_one_sensor_through_the_iteration() -> None:
    """φ4: the same sensor, whichever it is (a filter inside '+' on a variable outside)."""
    q = ("SELECT * FROM S WHERE H AS x ; (T AS t FILTER t[id = x.id])+ ; H AS y "
         "FILTER x[value < 30] AND y[value > 60 AND id = x.id]")
    assert run(q) == [[3, 4, 6, 7], [3, 4, 7], [3, 6, 7]]


def stream_of(types: str) -> list[Event]:
    return [Event(i, t) for i, t in enumerate(types)]


@pytest.mark.parametrize(("query", "types", "expected"), [
    ("A ; B ; C", "ABAC", [[0, 1, 3]]),
    ("A ; B ; C ; D", "ABCAD", [[0, 1, 2, 4]]),
    ("(A OR B OR C) ; D", "ABD", [[0, 2], [1, 2]]),
    ("A+ ; B", "AAB", [[0, 1, 2], [0, 2], [1, 2]]),
    ("A+ ; B+ ; C", "ABBC", [[0, 1, 2, 3], [0, 1, 3], [0, 2, 3]]),
    # iterations of A+ ; B: {0,1}, {0,3}, {2,3}, {0,2,3}; of those in sequence {0,1,2,3}
    ("(A+ ; B)+ ; C", "ABABC", [[0, 1, 2, 3, 4], [0, 2, 3, 4], [0, 3, 4], [0, 1, 4],
                                [2, 3, 4]]),
])
def test_the_experiments_queries(query: str, types: str, expected: list[list[int]]) -> None:
    got = run(f"SELECT * FROM S WHERE {query}", stream=stream_of(types))
    assert sorted(got) == sorted(expected)


def test_windows_and_partitions() -> None:
    s = stream_of("AXXBAB")
    # CORE's convention: max - min <= n (both ends of the window included)
    assert run("SELECT * FROM S WHERE A AS a ; B AS b WITHIN 2 EVENTS", stream=s) == [
        [4, 5]]
    assert run("SELECT * FROM S WHERE A AS a ; B AS b WITHIN 3 EVENTS", stream=s) == [
        [0, 3], [4, 5]]
    parted = [Event(i, t, {"k": k}) for i, (t, k) in enumerate(zip("AABB", [1, 2, 2, 1],
                                                                   strict=True))]
    assert run("SELECT * FROM S WHERE A AS a ; B AS b PARTITION BY [k]", stream=parted) == [
        [1, 2], [0, 3]]
    timed = [Event(i, t, {}, float(10 * i)) for i, t in enumerate("ABB")]
    assert run("SELECT * FROM S WHERE A AS a ; B AS b WITHIN 15 SECONDS", stream=timed) == [
        [0, 1]]
    # LIMIT n: at most n complex events per last position (CORE limits each enumeration)
    assert run("SELECT * FROM S WHERE A AS a ; B AS b LIMIT 1", stream=timed) == [
        [0, 1], [0, 2]]
    # ... the most recent first: read backwards from the end, the larger position first, and
    # {1, 2} before {0, 1, 2}, which extends it further back
    assert run("SELECT * FROM S WHERE A+ ; B LIMIT 1", stream=stream_of("AAB")) == [[1, 2]]
    assert run("SELECT * FROM S WHERE A+ ; B LIMIT 2", stream=stream_of("AAB")) == [
        [0, 1, 2], [1, 2]]


def test_partition_lists_and_projections() -> None:
    """Two key lists name one key for two event types; PROJECT groups by an item."""
    s = [Event(0, "A", {"k": 1}), Event(1, "B", {"j": 2}), Event(2, "B", {"j": 1})]
    assert run("SELECT * FROM S WHERE A AS a ; B AS b PARTITION BY [k], [j]", stream=s) == [
        [0, 2]]
    items = [Event(i, op, {"ids": ids}) for i, (op, ids) in enumerate([
        ("ins", "/order[o1]/item[i1]"), ("ins", "/order[o1]/item[i2]"),
        ("upd", "/order[o1]/item[i2]/price[p2]"), ("upd", "/order[o1]/item[i1]/price[p1]")])]
    q = "SELECT * FROM S WHERE ins ; upd PARTITION BY [PROJECT(ids, 'item')]"
    assert run(q, stream=items) == [[1, 2], [0, 3]]


def test_contiguous_operators_and_consumption() -> None:
    s = stream_of("ABXAB")
    assert run("SELECT * FROM S WHERE A : B", stream=s) == [[0, 1], [3, 4]]
    assert run("SELECT * FROM S WHERE A ; B", stream=s) == [[0, 1], [0, 4], [3, 4]]
    assert run("SELECT * FROM S WHERE A:+ ; X", stream=stream_of("AAXAX")) == [
        [0, 1, 2], [0, 2], [1, 2], [0, 1, 4], [0, 4], [1, 4], [3, 4]]
    assert run("SELECT * FROM S WHERE A ; B CONSUME BY ANY", stream=s) == [[0, 1], [3, 4]]


def test_non_unary_filters_and_strategies() -> None:
    """The reference takes φ4's correlation under every strategy."""
    q = ("SELECT * FROM S WHERE H AS x ; T AS t ; H AS y "
         "FILTER t[id = x.id] AND y[id = x.id]")
    assert run(q) == [[3, 4, 7], [3, 6, 7], [2, 5, 8]]  # sensor 1, then sensor 0
    assert run(q, Strategy.NEXT) == [[3, 4, 7], [2, 5, 8]]
    assert run(q, Strategy.LAST) == [[3, 6, 7], [2, 5, 8]]
