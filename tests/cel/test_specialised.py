"""The leaf tests compiled to Python source (issue 32, item 4) give the bitmask the condition
objects give, on values of every kind an attribute may have (and missing ones)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.cel import Event
from xmlevents.cel._predicates import (
    Arith,
    Attr,
    Compare,
    CondAnd,
    Condition,
    CondNot,
    CondOr,
    Const,
    In,
)
from xmlevents.cel._specialised import compile_tester, generic_tester

values = st.one_of(st.sampled_from(["x", "y", "", "1"]), st.integers(-2, 2),
                   st.sampled_from([0.5, 1.0, -0.0, float("nan"), float("inf")]), st.booleans())
attrs = st.sampled_from(["a", "b", "type", "x.y"])
ops = st.sampled_from(["<", "<=", ">", ">=", "=", "!="])


def compare(op: str, attr: str, value: object, flip: bool, other: str | None) -> Condition:
    a: Attr = Attr(attr, other)
    c = Const(value)  # type: ignore[arg-type]
    return Compare(op, c, a) if flip else Compare(op, a, c)


atoms = st.one_of(
    st.builds(compare, ops, attrs, values, st.booleans(), st.sampled_from([None, None, "v", "w"])),
    st.builds(lambda op, a, b: Compare(op, Attr(a), Attr(b)), ops, attrs, attrs),
    st.builds(lambda a, vs, neg: In(Attr(a), tuple(vs), neg), attrs, st.lists(values, max_size=3),
              st.booleans()),
    st.builds(lambda op, a, v: Compare(op, Arith("+", Attr(a), Const(1)), Const(v)), ops, attrs,
              values),
)
conditions = st.recursive(atoms, lambda inner: st.one_of(
    st.builds(CondAnd, inner, inner), st.builds(CondOr, inner, inner), st.builds(CondNot, inner)),
    max_leaves=5)
#: every pair of values (or none) of the attributes ``a`` and ``b``, the others fixed
GRID = [Event(0, "A", {**({"a": a} if a is not None else {}),
                       **({"b": b} if b is not None else {}), "type": "T", "x.y": 1}, None, s)
        for a in [None, "x", "", 0, 1, -1, 0.5, 1.0, float("nan"), True, False]
        for b in [None, "1", 1, 0.5, True] for s in ([None, "S"] if a == 0 else [None])]


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.sampled_from([None, "S"]), st.lists(conditions, max_size=2)),
                min_size=1, max_size=3), st.integers(0, 7))
def test_compiled_leaf_tests_equal_the_objects(
        leaves: list[tuple[str | None, list[Condition]]], fixed: int) -> None:
    tested = [(1 << (i + 3), "v", stream_name, tuple(cs))
              for i, (stream_name, cs) in enumerate(leaves)]
    compiled, generic = compile_tester(fixed, tested), generic_tester(fixed, tested)
    for event in GRID:
        assert compiled(event) == generic(event), event


def test_a_quote_in_a_constant_or_a_name_is_data() -> None:
    cond = Compare("=", Attr("it's \"a\"\nname"), Const("'); import os; ('"))
    tester = compile_tester(0, [(1, "v", None, (cond,))])
    assert tester(Event(0, "A", {"it's \"a\"\nname": "'); import os; ('"})) == 1
    assert tester(Event(0, "A", {"it's \"a\"\nname": "x"})) == 0


def test_an_evaluation_with_compiled_tests_pickles() -> None:
    """A CEL state is saved in the replay's checkpoints (issue 29): the compiled functions are
    compiled again when it is loaded, and the evaluation goes on alike."""
    import pickle

    from xmlevents.cel import Evaluation, compile_query

    q = compile_query("SELECT * FROM S WHERE A AS a ; B AS b FILTER a[k = 1] AND b[k != 'x']")
    ev = Evaluation(q)
    stream = [Event(i, t, {"k": k}) for i, (t, k) in enumerate(
        [("A", 1), ("B", "x"), ("A", 2), ("B", 0), ("A", 1), ("B", 1)])]
    for e in stream[:3]:
        ev.push(e)
    copy = pickle.loads(pickle.dumps(ev))
    assert [ev.push(e) for e in stream[3:]] == [copy.push(e) for e in stream[3:]]
    assert ev.push(Event(6, "B", {"k": 2})) == copy.push(Event(6, "B", {"k": 2})) != []
