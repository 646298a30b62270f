"""The LP normal form (seed 003, section 5.2, Theorem 2): every unary filter on the definition
of its variable, and the same complex events as the formula it came from."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.cel import (
    CELQueryError,
    Event,
    Strategy,
    check_formula,
    is_lp,
    is_unary_query,
    parse_formula,
    reference,
    to_lp,
)


def test_local_push_down() -> None:
    f = parse_formula("(T AS x ; H AS y) FILTER x[v > 40] AND y[v <= 25] AND x[id = 0]")
    assert str(to_lp(f)) == ("(T AS x FILTER (x[v > 40] AND x[id = 0])) ; "
                             "(H AS y FILTER y[v <= 25])")
    # through OR (both sides bind x), not into an iteration's own x
    f = parse_formula("((T AS x ; H) OR (H ; T AS x)) ; (T AS x)+ FILTER x[v > 1]")
    g = to_lp(f)
    assert is_lp(g) and str(g).count("x[v > 1]") == 2 and str(g).endswith("; T AS x+")
    assert str(to_lp(parse_formula("T ; H FILTER T[v > 1]"))) == "(T AS T FILTER T[v > 1]) ; H"


def test_the_general_construction_for_a_conditional() -> None:
    """The paper's conditional: a filter on x inside one side of an OR (section 5.2)."""
    f = parse_formula("T AS x ; ((T AS y FILTER x[v > 40]) OR H AS y)")
    g = to_lp(f)
    assert is_lp(g)
    assert str(g) == ("(T AS x FILTER x[v > 40]) ; (T AS y OR H AS y) OR "
                      "(T AS x FILTER x[NOT (v > 40)]) ; H AS y")


def test_non_unary_filters_stay() -> None:
    f = parse_formula("H AS x ; (T AS t FILTER t[id = x.id])+ ; H AS y FILTER x[v < 30]")
    assert not is_unary_query(f)
    g = to_lp(f)
    assert str(g) == "(H AS x FILTER x[v < 30]) ; (T AS t FILTER t[id = x.id])+ ; H AS y"


@st.composite
def formulas(draw: st.DrawFn) -> str:
    """Formulas whose unary filters sit anywhere their variable is bound around them."""
    names = iter(f"v{i}" for i in range(100))
    defined: list[str] = []

    def build(d: int) -> str:
        if d == 0 or draw(st.integers(0, 2)) == 0:
            var = next(names)
            defined.append(var)
            return f"{draw(st.sampled_from('ABC'))} AS {var}"
        kind = draw(st.sampled_from(["seq", "or", "plus", "filter", "filter"]))
        if kind == "plus":
            return f"({build(d - 1)})+"
        if kind == "filter":
            inner = build(d - 1)
            var = draw(st.sampled_from(defined)) if defined else "v0"
            return (f"({inner}) FILTER {var}[k {draw(st.sampled_from(['<', '>=', '=']))} "
                    f"{draw(st.integers(0, 2))}]")
        a, b = build(d - 1), build(d - 1)
        if kind == "or":
            # both sides may define the same variable: OR then binds it
            return f"({a}) OR ({b.replace(defined[-1], defined[-1]) if defined else b})"
        return f"({a}) ; ({b})"

    return build(3)


streams = st.lists(st.tuples(st.sampled_from("ABCX"), st.integers(0, 2)), max_size=7).map(
    lambda items: [Event(i, t, {"k": k}) for i, (t, k) in enumerate(items)])


@settings(max_examples=examples(300), deadline=None)
@given(formulas(), streams)
def test_lp_form_is_equivalent(text: str, stream: list[Event]) -> None:
    f = parse_formula(text)
    try:
        check_formula(f)
    except CELQueryError:
        return  # not well-formed: to_lp's precondition
    g = to_lp(f)
    assert is_lp(g)
    check_formula(g)
    assert reference(g, stream) == reference(f, stream)
    assert reference(g, stream, Strategy.MAX) == reference(f, stream, Strategy.MAX)


@settings(max_examples=examples(100), deadline=None)
@given(st.sampled_from(["T AS x ; ((T AS y FILTER x[k > 0]) OR H AS y)",
                        "(A AS x OR B AS x) ; ((C AS y FILTER x[k = 1]) OR (A AS y ; B AS z "
                        "FILTER x[k = 2])) ; C AS w FILTER w[k < 2]"]),
       st.lists(st.tuples(st.sampled_from("ABCTH"), st.integers(0, 2)), max_size=7).map(
           lambda items: [Event(i, t, {"k": k}) for i, (t, k) in enumerate(items)]))
def test_conditionals_are_equivalent(text: str, stream: list[Event]) -> None:
    f = parse_formula(text)
    assert reference(to_lp(f), stream) == reference(f, stream)
