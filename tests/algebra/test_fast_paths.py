"""The direct path (issue 13, speed): a tree made only of fast-path nodes takes an event up its
leaf's chain of nodes, without pending lists; a traced tree takes the general path. Both
must raise the same composites (whole values: ids, constituents, intervals), windows and
expiry reports included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from xmlevents.algebra import EventGraph, Expired, PrimitiveEvent

from .test_engine_properties import EXPRESSIONS, streams

EXAMPLE_10 = "ins(item) ; (ins(item/a) & ins(item/b))"


def _run(expr: str, events: list[PrimitiveEvent], within: int | None, traced: bool
         ) -> tuple[list[object], list[Expired], bool]:
    graph = EventGraph(f"E := {expr}", context="chronicle", hierarchical=True, within=within,
                       trace=(lambda name, c: None) if traced else None)
    expired: list[Expired] = []
    graph.subscribe_expired(expired.append)
    out = [graph.feed(e) for e in events]
    return out, expired, graph.tree("E").direct


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(EXPRESSIONS + [EXAMPLE_10] * 4),
       streams(), st.sampled_from([None, 2, 5]))
def test_the_direct_path_equals_the_general_one(
        expr: str, events: list[PrimitiveEvent], within: int | None) -> None:
    direct, expired_d, is_direct = _run(expr, events, within, traced=False)
    general, expired_g, was_direct = _run(expr, events, within, traced=True)
    assert not was_direct
    if expr == EXAMPLE_10:  # the stream really took the direct path
        assert is_direct
    assert direct == general
    assert expired_d == expired_g


def test_example_10_is_a_direct_tree() -> None:
    graph = EventGraph("E := ins(item) ; (ins(item/price) & ins(item/quantity))")
    assert graph.tree("E").direct
    assert not EventGraph("E := ins(item) ; ins(item/a) ; ins(item/b)",
                          context="recent").tree("E").direct
