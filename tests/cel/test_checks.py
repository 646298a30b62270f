"""Well-formedness, safety and schema checks (seed 003, section 5.1): the variable named, with
its line and column."""

from __future__ import annotations

import pytest

from xmlevents.cel import CELQueryError, bound, compile_query, parse_formula, parse_schema


@pytest.mark.parametrize(("query", "words", "col"), [
    # a filter on a variable bound nowhere: the column of the filter x[...]
    ("SELECT * FROM S WHERE T AS x ; H FILTER y[value > 1]", "y.*not well-formed|not "
     "well-formed.*binds y", 41),
    ("SELECT * FROM S WHERE T AS x ; T AS x", "not safe: x", 23),
    ("SELECT * FROM S WHERE T ; T", "not safe: T", 23),
    ("SELECT * FROM S WHERE T : T", "not safe: T", 23),
    # bound only inside the iteration: not bound where the filter is
    ("SELECT * FROM S WHERE (T AS x)+ ; H FILTER x[value > 1]", "binds x", 44),
    # OR binds what both sides bind
    ("SELECT * FROM S WHERE (T AS x OR H AS y) FILTER x[v > 1]", "binds x", 49),
])
def test_checks_name_the_variable(query: str, words: str, col: int) -> None:
    with pytest.raises(CELQueryError, match=words) as caught:
        compile_query(query)
    assert (caught.value.line, caught.value.column) == (1, col)


def test_lines_are_counted() -> None:
    with pytest.raises(CELQueryError) as caught:
        compile_query("SELECT *\nFROM S\nWHERE T AS x ;\n  T AS x")
    assert (caught.value.line, caught.value.column) == (3, 7)


def test_well_formed_and_safe_queries_pass() -> None:
    compile_query("SELECT * WHERE T AS x ; (T AS y FILTER y[v > x.v])+ ; H AS z "
                  "FILTER x[v > 1]")  # φ4-like: x bound around the iteration
    compile_query("SELECT * WHERE T AS x ; (T AS x)+")  # the iteration's x is its own
    compile_query("SELECT * WHERE (T AS x ; H AS y) OR (H AS y ; T AS x) FILTER x[v > 1]")


def test_bound() -> None:
    assert bound(parse_formula("T AS x ; H")) == {"x", "H"}
    assert bound(parse_formula("T AS x OR H AS x")) == {"x"}
    assert bound(parse_formula("T AS x OR H AS y")) == set()
    assert bound(parse_formula("(T AS x)+")) == set()
    assert bound(parse_formula("(T AS x FILTER x[v > 1]) : H")) == {"x", "H"}


def test_unknown_attributes_and_types_with_a_schema() -> None:
    schema = parse_schema("CREATE STREAM S { EVENT T { temp: double, id: int }, "
                          "EVENT H { hum: double, id: int } }")
    compile_query("SELECT * WHERE T AS x ; H AS y FILTER x[temp > 40] AND y[hum < 25]",
                  schema)
    with pytest.raises(CELQueryError, match="unknown attribute hum of x") as caught:
        compile_query("SELECT * WHERE T AS x ; H AS y FILTER x[hum > 40]", schema)
    assert caught.value.column == 39
    with pytest.raises(CELQueryError, match="unknown event type X"):
        compile_query("SELECT * WHERE T AS x ; X", schema)
    # a variable on two types: the attribute of either is accepted
    compile_query("SELECT * WHERE (T AS x OR H AS x) FILTER x[hum > 40]", schema)
