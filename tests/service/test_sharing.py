"""Sharing is invisible (seed 001, section 3.1): an event graph that builds every equal
subexpression once gives the notifications of one that builds every expression apart."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.service import Any, Atomic, Engine, Expression, Literal, Or, Param, Seq, Var

TYPES = ("a", "b", "c")


def atomic() -> st.SearchStrategy[Expression]:
    term = st.one_of(st.sampled_from([Var("X"), Var("Y")]),
                     st.sampled_from([Literal(1), Literal(2)]))
    params = st.lists(st.tuples(st.sampled_from(["x", "y"]), term), max_size=2,
                      unique_by=lambda p: p[0])
    return st.builds(lambda t, ps: Atomic(t, tuple(Param(n, v) for n, v in ps)),
                     st.sampled_from(TYPES), params)


def expressions() -> st.SearchStrategy[Expression]:
    def extend(children: st.SearchStrategy[Expression]) -> st.SearchStrategy[Expression]:
        pairs = st.lists(children, min_size=2, max_size=3)
        return st.one_of(
            st.builds(lambda cs: Or(tuple(cs)), pairs),
            st.builds(lambda cs: Seq(cs[0], cs[1]), pairs),
            st.builds(lambda n, cs: Any(n, tuple(cs)), st.integers(1, 3), pairs))
    return st.recursive(atomic(), extend, max_leaves=5)


signals = st.tuples(st.sampled_from(TYPES),
                    st.fixed_dictionaries({}, optional={"x": st.integers(1, 2),
                                                        "y": st.integers(1, 2)}))
steps = st.lists(st.one_of(st.tuples(st.just("register"), expressions()),
                           st.tuples(st.just("unregister"), st.integers(0, 7)),
                           st.tuples(st.just("signal"), signals)),
                 min_size=1, max_size=40)


def run(program: list[tuple[str, object]], *, share: bool, join: str) -> list[object]:
    engine = Engine(share=share, join=join)  # type: ignore[arg-type]
    seen: list[object] = []
    registered: list[str] = []
    for kind, arg in program:
        if kind == "register":
            assert isinstance(arg, Expression)
            registered.append(engine.register(arg))
        elif kind == "unregister":
            assert isinstance(arg, int)
            if registered:
                engine.unregister(registered.pop(arg % len(registered)))
        else:
            etype, params = arg  # type: ignore[misc]
            seen.append([(d.expression, dict(d.bindings), [s.id for s in d.events], d.next)
                         for d in engine.signal(etype, params)])
    seen.append(engine.stats()["nodes_without_sharing"])
    return seen


@settings(max_examples=examples(300), deadline=None)
@given(steps, st.sampled_from(["correlate", "paper"]))
def test_sharing_never_changes_a_notification(program: list[tuple[str, object]],
                                              join: str) -> None:
    assert run(program, share=True, join=join) == run(program, share=False, join=join)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(expressions(), min_size=1, max_size=8))
def test_unregistering_everything_empties_the_graph(exprs: list[Expression]) -> None:
    engine = Engine()
    ids = [engine.register(e) for e in exprs]
    assert engine.stats()["nodes"] <= engine.stats()["nodes_without_sharing"]
    for ident in ids[::-1] if len(ids) % 2 else ids:
        engine.unregister(ident)
    assert engine.stats()["nodes"] == 0 and not engine.leaves and not engine.operators
