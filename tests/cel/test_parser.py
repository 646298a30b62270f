"""CEQL as CORE writes it (its ``CEQLQueryParser.g4``): what parses, how it prints back, and
syntax errors with line and column."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.cel import (
    As,
    CELSyntaxError,
    ContiguousPlus,
    ContiguousSeq,
    EventType,
    Or,
    Plus,
    Seq,
    Strategy,
    Window,
    parse_formula,
    parse_query,
)


def test_precedence_follows_cores_grammar() -> None:
    """Tightest first: AS, the postfix + and :+, ';', ':', OR, FILTER."""
    a, b, c = EventType("A"), EventType("B"), EventType("C")
    assert parse_formula("A ; B OR C") == Or(Seq(a, b), c)
    assert parse_formula("A ; B : C") == ContiguousSeq(Seq(a, b), c)
    assert parse_formula("A : B ; C") == ContiguousSeq(a, Seq(b, c))
    assert parse_formula("A AS x+") == Plus(As(a, "x"))
    assert parse_formula("A:+ ; B+") == Seq(ContiguousPlus(a), Plus(b))
    assert parse_formula("S>A") == EventType("A", "S")


def test_query_clauses() -> None:
    q = parse_query("select nxt a, S>b[x, y] from S, R where A AS a ; B AS b "
                    "partition by [id], [sid] within 1 hour 30 minutes "
                    "consume by partition limit 5")
    assert q.strategy is Strategy.NEXT and q.variables == ("a", "b")
    assert q.streams == ("S", "R") and q.partition_by == (("id",), ("sid",))
    assert q.within == Window("seconds", 5400.0) and q.consume == "PARTITION"
    assert q.limit == 5
    assert parse_query("SELECT NONE WHERE A").variables == ()
    assert parse_query("SELECT * WHERE A WITHIN 10 [ts]").within == Window("attribute", 10, "ts")
    assert parse_query("SELECT * WHERE A WITHIN 10 EVENTS").within == Window("events", 10)
    assert parse_query("SELECT LAST * WHERE A").strategy is Strategy.LAST
    assert parse_query("SELECT ANY * WHERE A").strategy is Strategy.ANY


def test_predicates() -> None:
    f = parse_formula("A AS a FILTER a[x IN {1..3} AND y NOT IN {'p', 'q'} AND z IN RANGE(0, "
                      "x * 2) AND name LIKE 'ab.*' AND (v % 2 = 0 OR NOT w <> 1.5)]")
    p = f.predicate  # type: ignore[attr-defined]
    assert p.is_unary and p.var == "a"
    assert p.attribute_names("a") == {"x", "y", "z", "name", "v", "w"}
    from xmlevents.cel import Event
    good = Event(0, "A", {"x": 2, "y": "r", "z": 4, "name": "abc", "v": 4, "w": 1.5})
    assert p.test(good)
    assert not p.test(Event(0, "A", {**good.attrs, "x": 4}))
    assert not p.test(Event(0, "A", {**good.attrs, "z": 5}))
    binary = parse_formula("A AS a ; B AS b FILTER b[x = a.x]").predicate  # type: ignore
    assert not binary.is_unary and binary.variables == {"a", "b"}


@pytest.mark.parametrize(("query", "line", "col", "words"), [
    ("SELECT * FROM S WHERE", 1, 22, "event type"),
    ("SELECT * FROM S WHERE (A ; B) AS x", 1, 31, "AS names one event"),
    ("SELECT * FROM S WHERE A FILTER a[x >]", 1, 37, "attribute"),
    ("SELECT * WHERE A CONSUME BY ALL", 1, 29, "ANY, PARTITION or NONE"),
    ("SELECT * WHERE A WITHIN 0 EVENTS", 1, 25, "positive"),
    ("SELECT * WHERE A $", 1, 18, "unexpected character"),
    ("SELECT *\nWHERE A ; NOT (B) ; C", 2, 11, "negation"),
    ("SELECT * WHERE A ; !(B)", 1, 20, "negation"),
    ("SELECT * WHERE A UNLESS B", 1, 18, "expected"),
    ("SELECT * WHERE A AS a FILTER a[x LIKE <<a>>]", 1, 39, "quoted string"),
    ("SELECT * WHERE A PARTITION BY [PROJECT(ids, '//')]", 1, 45, "path type"),
])
def test_syntax_errors_have_lines_and_columns(query: str, line: int, col: int,
                                              words: str) -> None:
    with pytest.raises(CELSyntaxError, match=words) as caught:
        parse_query(query)
    assert (caught.value.line, caught.value.column) == (line, col), caught.value


@pytest.mark.parametrize(("query", "col", "opener", "at"), [
    ("SELECT a[b", 11, "[", 9),
    ("SELECT * WHERE T PARTITION BY [a", 33, "[", 31),
    ("SELECT * WHERE T PARTITION BY [PROJECT(ids", 43, "(", 39),
    ("SELECT * WHERE T WITHIN 5 [a", 29, "[", 27),
    ("SELECT * WHERE (T", 18, "(", 16),
    ("SELECT * WHERE T FILTER (x[a > 1]", 34, "(", 25),
    ("SELECT * WHERE T FILTER x[a IN RANGE(1, 2", 42, "(", 37),
    ("SELECT * WHERE T FILTER x[a IN {1..", 36, "{", 32),
    ("SELECT * WHERE T FILTER x[a IN {1, 2", 37, "{", 32),
    # a condition in parentheses, tried first and given up: the expression's bracket
    ("SELECT * WHERE T FILTER x[(a + 1", 33, "(", 27),
    ("SELECT * WHERE T FILTER x[(a + 1) * 2 > (b", 43, "(", 41),
    # the backtrack read past ')' and came back: the bracket open is the filter's '['
    ("SELECT * WHERE T FILTER x[(a + 1) > 2", 38, "[", 26),
])
def test_end_of_input_inside_any_bracket_is_unclosed(query: str, col: int, opener: str,
                                                      at: int) -> None:
    """Every bracket CEL reads is opened on the shared cursor (issue 28), so the input ending
    inside it is ``unclosed`` and names it, also after the condition-or-expression
    backtrack; a whole query with the same brackets parses."""
    with pytest.raises(CELSyntaxError) as caught:
        parse_query(query)
    closer = {"(": ")", "[": "]", "{": "}"}[opener]
    assert caught.value.reason == (f"unclosed {opener!r} (opened at col {at}): expected "
                                   f"{closer!r} before end of input")
    assert (caught.value.line, caught.value.column) == (1, col)


def test_the_backtrack_reads_a_parenthesised_expression() -> None:
    """``(a + 1) > 2`` is tried as a condition, then read again as an expression."""
    f = parse_formula("T AS x FILTER x[(a + 1) * 2 > (b) AND ((c) = 1 OR (d < 2))]")
    assert f == parse_formula("T AS x FILTER x[(a + 1) * 2 > b AND (c = 1 OR d < 2)]")
    assert f != parse_formula("T AS x FILTER x[a + 1 * 2 > b AND (c = 1 OR d < 2)]")


@st.composite
def formulas(draw: st.DrawFn, depth: int = 3) -> str:
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        name = draw(st.sampled_from(["A", "B", "C", "S>A"]))
        return f"{name} AS {draw(st.sampled_from(['x', 'y']))}" if draw(st.booleans()) \
            else name
    kind = draw(st.sampled_from(["seq", "cseq", "or", "plus", "cplus", "filter"]))
    a = draw(formulas(depth - 1))
    if kind == "plus":
        return f"({a})+"
    if kind == "cplus":
        return f"({a}):+"
    if kind == "filter":
        cond = draw(st.sampled_from([
            "v > 1 OR v IN {1, 'z'}", "NOT (w = -2.5)", "v * (w + 1) >= 3 AND u LIKE 'a''b'",
            "u IN {..4}", "path MATCHES 'item/*'", "v = x.v", "`odd name` != true"]))
        return f"({a}) FILTER {draw(st.sampled_from(['x', 'y', 'A']))}[{cond}]"
    b = draw(formulas(depth - 1))
    op = {"seq": ";", "cseq": ":", "or": "OR"}[kind]
    return f"({a}) {op} ({b})"


@settings(max_examples=examples(300), deadline=None)
@given(formulas(), st.sampled_from(list(Strategy)),
       st.sampled_from(["", " WITHIN 5 EVENTS", " WITHIN 2 MINUTES 3 SECONDS",
                        " PARTITION BY [a, b], [PROJECT(ids, 'o/i')] WITHIN 3 [ts]",
                        " CONSUME BY ANY LIMIT 2"]))
def test_printing_parses_back_equal(text: str, strategy: Strategy, tail: str) -> None:
    q = parse_query(f"SELECT {strategy.value} * FROM S WHERE {text}{tail}")
    assert parse_query(str(q)) == q
    assert parse_formula(str(q.formula)) == q.formula
