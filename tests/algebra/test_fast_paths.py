"""The direct path (issue 13, speed): a tree made only of fast-path nodes takes an event up its
leaf's chain of nodes, without pending lists; a traced tree takes the general path. Both
must raise the same composites (whole values: ids, constituents, intervals), windows and
expiry reports included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.algebra import EventGraph, Expired, Op, PathInstance, PathType, PrimitiveEvent

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


@settings(max_examples=examples(150), deadline=None)
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


# --- the walk: a tree of fast paths with one watcher (issue 13, speed) ------------------------

NON_LOCAL = "ins(item) ; ((ins(item/a) & [1,*] ins(item/b)) with mode=non-local)"
WALKED = [
    NON_LOCAL,
    "ins(item) ; ((ins(item/a) & [2,3] ins(item/b)) with mode=non-local)",
    "(ins(item/a) & [1,*] ins(item/b)) with mode=non-local",
    "ins(item) ; ((ins(item/a) & [0,*] ins(item/b)) with mode=non-local)",
    "((ins(item/a) & ins(item/b)) with mode=non-local) ; ins(item/c)",
    "ins(item/c) & ((ins(item/a) & ins(item/b)) with mode=non-local)",
    "(ins(item/c) ; ins(item/a)) & ((ins(item/a) & [1,*] ins(item/b)) with mode=non-local)",
    "((ins(item/c) & [1,*] ins(item/b)) with mode=non-local) ; (ins(item/a) & ins(item/c))",
    "ins(item/a) & [1,2] ins(item/b)",
    "ins(item) ; [1,*] ins(item/b)",
]


def _walked(definitions: str, events: list[PrimitiveEvent], within: int | None,
            traced: bool) -> tuple[list[object], list[object], list[Expired]]:
    graph = EventGraph(definitions, within=within,
                       trace=(lambda name, c: None) if traced else None)
    expired: list[Expired] = []
    graph.subscribe_expired(expired.append)
    out: list[object] = [graph.feed(e) for e in events]
    state = [(graph.held(n), graph.potential(n)) for n in graph.order]
    out.append(graph.close())
    return out, state, expired


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(WALKED), streams(), st.sampled_from([None, 3, 8]), st.booleans())
def test_the_walk_equals_the_general_path(expr: str, events: list[PrimitiveEvent],
                                          within: int | None, reused: bool) -> None:
    """A multiplicity and a non-local conjunction take their fast paths (EventTree.walk and
    the direct path); a traced graph processes every tree node by node. Same composites
    (ids, constituents, intervals, ticks), same state held, same expiry reports; also where
    another definition reuses the tree (the graph then has several trees)."""
    definitions = f"E := {expr}"
    if reused:
        definitions += "\nF := E ; ins(item/c)"
    assert _walked(definitions, events, within, traced=False) == \
        _walked(definitions, events, within, traced=True)


def test_the_non_local_tree_is_walked() -> None:
    """bench_engine.py's non-local tree: fast paths throughout, its conjunction the watcher."""
    tree = EventGraph(f"E := {NON_LOCAL}").tree("E")
    assert tree.watcher is not None and tree.watcher.mode.value == "non-local"
    assert not tree.direct
    assert EventGraph(f"E := {NON_LOCAL}", trace=lambda name, c: None).tree("E").watcher is None


def test_one_consumer_finds_its_group_when_the_key_is_none() -> None:
    """A multiplicity with one consumer asks it once where the integrated composite is
    (`holder`); in a plain Snoop context the group is the document, None for events that carry
    none — still a group: the third quantity joins the held conjunction (found in review: a
    None answer once meant "consumed")."""
    g = EventGraph("Ec := (ins(item/price) & [1,*] ins(item/quantity)) with mode=non-local",
                   context="chronicle", hierarchical=False)
    out = []
    for ts, (path, ids) in enumerate([("/order/item/price", (1, 2, 3)),
                                      ("/order/item/quantity", (1, 2, 4)),
                                      ("/order/item/quantity", (1, 2, 5)),
                                      ("/order/item/price", (1, 6, 7))], 1):
        out += g.feed(PrimitiveEvent(f"e{ts}", ts, Op.INS,
                                     PathInstance(PathType.parse(path), ids)))
    assert [[p.id for p in c.primitives()] for c in out] == [["e1", "e2", "e3"]]
