"""The core dialect (issue 32, item 1): CORE's CEQL as CORE evaluates it, each reading fixed
by the CORE test or source the semantics page cites; the default (the paper's CEL) refuses
the same queries naming the dialect."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents._cli import main
from xmlevents.cel import (
    CELQueryError,
    CELSyntaxError,
    Event,
    check_automaton,
    compile_query,
    count,
    evaluate,
    parse_schema,
    reference,
)

from .found import sorted_found


def core(query: str, stream: list[Event]) -> list[tuple[int, tuple[int, ...]]]:
    """(end, positions) under the core dialect, by the automaton, checked against the
    reference evaluator and ``count``."""
    q = compile_query(query, dialect="core")
    check_automaton(q.formula)
    got = sorted_found(evaluate(q, stream))
    assert got == reference(q, stream)
    assert count(q, stream) == len(got)
    return [(m.end, m.positions) for m in got]


def load(*households_values: tuple[int, float], step: int = 1) -> list[Event]:
    return [Event(i, "LOAD", {"household_id": h, "value": v, "plug_timestamp": i * step},
                  time=0) for i, (h, v) in enumerate(households_values)]


SMART_HOMES_Q1 = ("SELECT * FROM S WHERE (LOAD as H1; LOAD as H2; LOAD as H3) as H "
                  "FILTER H[value > 76] AND H1[household_id = 0] AND H2[household_id = 2] "
                  "AND H3[household_id = 4] WITHIN 10 [plug_timestamp]")


def test_as_on_a_pattern_labels_each_of_its_events() -> None:
    """smart_homes q1: H[value > 76] tests all three events (mark_variable.hpp)."""
    stream = load((0, 80.0), (2, 80.0), (2, 50.0), (4, 77.0))
    assert core(SMART_HOMES_Q1, stream) == [(3, (0, 1, 3))]
    # the attribute window is CORE's n - 1: 10 apart is out
    assert core(SMART_HOMES_Q1, load((0, 80.0), (2, 80.0), (4, 77.0), step=5)) == []
    assert core(SMART_HOMES_Q1, load((0, 80.0), (2, 80.0), (4, 77.0), step=4)) == [
        (2, (0, 1, 2))]


def test_a_type_repeated_is_an_event_each_time() -> None:
    """bluesky q1's CreatePost ; CreatePost (each occurrence its own transition)."""
    posts = [Event(i, "CreatePost", {"did": "a"}, time=i) for i in range(3)]
    assert core("SELECT * FROM B WHERE CreatePost ; CreatePost PARTITION BY [did]",
                posts) == [(1, (0, 1)), (2, (1, 2))]  # CORE's default window: 1 s
    assert core("SELECT * FROM B WHERE CreatePost ; CreatePost WITHIN 10 SECONDS",
                posts) == [(1, (0, 1)), (2, (0, 2)), (2, (1, 2))]


def test_a_variable_repeated_labels_both_events() -> None:
    """crypto q2: X names the Buy and the Sell; X[...] tests both."""
    q = ("SELECT * FROM T WHERE (Buy AS X : Sell AS X) OR (Sell AS X : Buy AS X) "
         "FILTER X[product_id = 'ETH'] WITHIN 5000000000 [time]")
    stream = [Event(0, "Buy", {"product_id": "ETH", "time": 0}),
              Event(1, "Sell", {"product_id": "ETH", "time": 4_999_999_999}),
              Event(2, "Buy", {"product_id": "BTC", "time": 5_000_000_000}),
              Event(3, "Sell", {"product_id": "ETH", "time": 5_000_000_001})]
    assert core(q, stream) == [(1, (0, 1))]


def test_a_disjunction_of_filters_is_a_union() -> None:
    """apply_filters_to_logical_cea.hpp: φ FILTER (F1 OR F2) = (φ FILTER F1) OR (φ FILTER F2),
    so H[k = 1] OR H[k = 2] wants every H event 1, or every one 2."""
    stream = [Event(i, t, {"k": k}, time=0)
              for i, (t, k) in enumerate([("A", 1), ("B", 2), ("A", 2), ("B", 2)])]
    q = "SELECT * FROM S WHERE (A ; B) AS H FILTER H[k = 1] OR H[k = 2]"
    assert core(q, stream) == [(3, (2, 3))]


def test_a_filter_reaches_only_what_its_pattern_labels() -> None:
    # x labels nothing inside the filtered part: CORE's filter marks no transition
    stream = [Event(0, "A", {"k": 0}, time=0), Event(1, "B", {"k": 0}, time=0)]
    assert core("SELECT * FROM S WHERE (A FILTER x[k = 1]) ; B AS x", stream) == [(1, (0, 1))]
    with pytest.raises(CELQueryError, match="names y, which the pattern neither writes"):
        compile_query("SELECT * FROM S WHERE A FILTER y[k = 1]", dialect="core")


def stock(*rows: tuple[str, str, int]) -> list[Event]:
    return [Event(i, t, {"name": n, "price": p}, time=i / 8)
            for i, (t, n, p) in enumerate(rows)]


def test_not_as_cores_not_eval_tests() -> None:
    """CORE's not-eval.cpp, its three first cases and their streams: a NOT reads one event
    that is not such a T, and is not output (negate_expected.hpp)."""
    first = stock(("SELL", "MSFT", 101), ("SELL", "MSFT", 102), ("SELL", "INTL", 80),
                  ("BUY", "INTL", 80), ("SELL", "AMZN", 100), ("BUY", "AMZN", 2000))
    assert core("SELECT * FROM Stock WHERE NOT (SELL)", first) == [(3, ()), (5, ())]
    second = stock(("SELL", "MSFT", 101), ("BUY", "MSFT", 10), ("BUY", "AMZN", 1010),
                   ("SELL", "INTL", 200))
    assert core("SELECT * FROM Stock WHERE NOT (SELL); BUY; SELL", second) == [(3, (2, 3))]
    third = stock(("BUY", "AMZN", 1000), ("SELL", "MSFT", 20), ("BUY", "MSFT", 900),
                  ("SELL", "MSFT", 101), ("SELL", "INTL", 100), ("BUY", "AMZN", 1000))
    # CORE gives two, apart only in where they start (at 2 and at 0): one here
    assert core("SELECT * FROM Stock WHERE NOT (SELL); SELL as msft; SELL as intel; "
                "BUY as amzn FILTER msft[name='MSFT'] AND msft[price > 100] "
                "AND intel[name='INTL'] AND amzn[name='AMZN'] AND amzn[price < 2000]",
                third) == [(5, (3, 4, 5))]
    # a filtered NOT: not a SELL of MSFT (a SELL of another name is such an event)
    assert core("SELECT * FROM Stock WHERE BUY ; NOT (SELL FILTER SELL[name = 'MSFT'])",
                stock(("BUY", "X", 1), ("SELL", "MSFT", 1), ("SELL", "INTL", 1))) == [
        (2, (0,))]


def test_select_names_labels() -> None:
    """SELECT SELL keeps the events the type's name labels (project.hpp), AS or not."""
    stream = stock(("SELL", "A", 1), ("BUY", "B", 2))
    assert core("SELECT SELL FROM S WHERE SELL AS a ; BUY", stream) == [(1, (0,))]
    assert core("SELECT a FROM S WHERE (SELL ; BUY) AS a", stream) == [(1, (0, 1))]
    assert core("SELECT NONE FROM S WHERE SELL ; BUY", stream) == [(1, ())]


def test_the_default_window_is_one_second() -> None:
    """within.hpp's DEFAULT_TIME_WINDOW_SIZE: 10^9 ns, closed, of the primary time."""
    def pair(gap: float) -> list[tuple[int, tuple[int, ...]]]:
        return core("SELECT * FROM S WHERE A ; B", [Event(0, "A", time=0),
                                                    Event(1, "B", time=gap)])
    assert pair(1) == [(1, (0, 1))]
    assert pair(1.125) == []


@pytest.mark.parametrize(("quantity", "in_range"), [(5, False), (6, True), (7, True)])
def test_integer_division_as_core(quantity: int, in_range: bool) -> None:
    """CORE divides integers as C++ (in-range-predicate.cpp's (quantity*100)/120): 700 / 120
    is 5, 500 / 120 is 4; the paper's CEL divides exactly (test_issue32_bugs)."""
    q = "SELECT * FROM S WHERE BUY FILTER BUY[(quantity*100)/120 IN RANGE(5, 5)]"
    expected = [(0, (0,))] if in_range else []
    assert core(q, [Event(0, "BUY", {"quantity": quantity}, time=0)]) == expected


def test_integer_division_truncates_toward_zero() -> None:
    for value, quotient, remainder in [(-7, -3, -1), (7, 3, 1), (-8, -4, 0)]:
        q = f"SELECT * FROM S WHERE A FILTER A[v / 2 = {quotient} AND v % 2 = {remainder}]"
        assert core(q.replace("= -", "= 0-"), [Event(0, "A", {"v": value}, time=0)]) == [
            (0, (0,))]


@pytest.mark.parametrize(("query", "hint"), [
    (SMART_HOMES_Q1, "CORE reads (LOAD AS H1 ; LOAD AS H2 ; LOAD AS H3) AS H"),
    ("SELECT * FROM B WHERE CreatePost ; CreatePost", "CORE reads each occurrence"),
    ("SELECT * FROM T WHERE Buy AS X : Sell AS X", "CORE reads each occurrence of X"),
    ("SELECT * FROM S WHERE NOT (SELL) ; BUY", "CORE reads NOT (T FILTER ...)"),
    ("SELECT SELL FROM S WHERE SELL AS a ; BUY", "CORE reads the type's name SELL"),
])
def test_the_paper_refuses_naming_the_dialect(query: str, hint: str) -> None:
    with pytest.raises((CELQueryError, CELSyntaxError)) as caught:
        compile_query(query)
    assert hint in str(caught.value) and "use --dialect core" in str(caught.value)
    compile_query(query, dialect="core")


def test_cores_filters_read_their_own_event() -> None:
    with pytest.raises(CELSyntaxError, match=r"no x\.attr"):
        compile_query("SELECT * FROM S WHERE A AS x ; B AS y FILTER y[k = x.k]",
                      dialect="core")
    with pytest.raises(ValueError, match="unknown dialect"):
        compile_query("SELECT * FROM S WHERE A", dialect="cor")


def test_on_the_command_line(tmp_path: Path) -> None:
    """``--dialect core``: event times in nanoseconds, CORE's unit."""
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"type": t, "time": ns}) + "\n" for t, ns in [
        ("CreatePost", 0), ("CreatePost", 1_000_000_000), ("CreatePost", 1_000_000_001)]))
    out, err = io.StringIO(), io.StringIO()
    status = main(["cel", "--dialect", "core", "SELECT * FROM B WHERE CreatePost ; CreatePost",
                   str(path)], stdout=out, stderr=err)
    assert status == 0, err.getvalue()
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"end": 1, "events": [0, 1]}, {"end": 2, "events": [1, 2]}]
    out, err = io.StringIO(), io.StringIO()
    assert main(["cel", "SELECT * FROM B WHERE CreatePost ; CreatePost", str(path)],
                stdout=out, stderr=err) == 1
    assert "use --dialect core" in err.getvalue() and "Traceback" not in err.getvalue()


@st.composite
def core_queries(draw: st.DrawFn, depth: int = 3) -> str:
    """Small core-dialect queries: types repeated, AS on patterns, names reused, NOT,
    filters on any name (ORs of them too), a projection."""
    names = ["A", "B", "x", "y"]

    def build(d: int) -> str:
        if d == 0 or draw(st.integers(0, 2)) == 0:
            if draw(st.integers(0, 5)) == 0:
                t = draw(st.sampled_from("AB"))
                return f"NOT ({t} FILTER {t}[k = {draw(st.integers(0, 1))}])"
            return draw(st.sampled_from("AB"))
        kind = draw(st.sampled_from(["seq", "next", "or", "as", "plus", "filter"]))
        if kind == "as":
            return f"({build(d - 1)}) AS {draw(st.sampled_from(['x', 'y']))}"
        if kind == "plus":
            return f"({build(d - 1)})+"
        if kind == "filter":
            atoms = [f"{draw(st.sampled_from(names))}[k = {draw(st.integers(0, 1))}]"
                     for _ in range(draw(st.integers(1, 2)))]
            joiner = f" {draw(st.sampled_from(['AND', 'OR']))} "
            return f"({build(d - 1)} FILTER {joiner.join(atoms)})"
        op = {"seq": ";", "next": ":", "or": "OR"}[kind]
        return f"({build(d - 1)}) {op} ({build(d - 1)})"

    selected = draw(st.sampled_from(["*", "NONE", "x", "A", "x, B"]))
    return f"SELECT {selected} FROM S WHERE {build(depth)} WITHIN 4 EVENTS"


core_streams = st.lists(st.tuples(st.sampled_from("AAABBX"), st.integers(0, 1)),
                        max_size=6).map(
    lambda items: [Event(i, t, {"k": k}, time=0) for i, (t, k) in enumerate(items)])


@settings(max_examples=examples(150), deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much])
@given(core_queries(), core_streams)
def test_core_queries_evaluate_alike(query: str, stream: list[Event]) -> None:
    """Whatever the core dialect takes, the automaton gives what the semantics gives."""
    try:
        q = compile_query(query, dialect="core")
    except CELQueryError:
        assume(False)
        return
    assert sorted_found(evaluate(q, stream)) == reference(q, stream)


def test_a_schema_checks_the_labels_as_written() -> None:
    """With a schema, an attribute no event type a label reaches declares is refused naming
    the label the user wrote, at the filter (not the translation's fresh variable)."""
    schema = parse_schema("CREATE STREAM S { EVENT LOAD { id:int, value:double } }")
    text = "SELECT * FROM S WHERE (LOAD AS a ; LOAD) AS H FILTER H[valu > 3]"
    with pytest.raises(CELQueryError, match=r"unknown attribute valu of H \(events of type "
                                            r"LOAD, which declare id, value\)") as caught:
        compile_query(text, schema, dialect="core")
    assert caught.value.column == text.index("H[") + 1
    compile_query(text.replace("valu", "value"), schema, dialect="core")
    with pytest.raises(CELQueryError, match="unknown event type LAOD"):
        compile_query("SELECT * FROM S WHERE LAOD", schema, dialect="core")
