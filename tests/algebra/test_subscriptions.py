"""A graph's subscriptions can fire or are refused (issue 15, item 1)."""

from __future__ import annotations

from typing import Any

import pytest

from xmlevents.algebra import (
    ArgumentTypeError,
    DefinitionError,
    EventGraph,
    InvalidArgumentError,
    Op,
    PathInstance,
    PrimitiveEvent,
    UnknownNameError,
)

EI = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))\nR := del(item)"


def complete(graph: EventGraph) -> list[Any]:
    out: list[Any] = []
    for ts, (path, ids) in enumerate([("/order/item", "oi"), ("/order/item/price", "oip"),
                                      ("/order/item/quantity", "oiq")], start=1):
        out += graph.feed(PrimitiveEvent(f"e{ts}", ts, Op.INS, PathInstance.of(path, ids)))
    return out


def test_unknown_names_are_refused_with_the_defined_ones() -> None:
    graph = EventGraph(EI)
    with pytest.raises(UnknownNameError, match=r"^Nope: no definition named 'Nope' "
                                               r"\(defined: Ei, R\)$"):
        graph.subscribe("Nope", print)
    with pytest.raises(UnknownNameError, match="did you mean upd\\(item/price\\)\\?"):
        graph.subscribe("update(item/price)", print)


def test_primitive_types_are_refused_a_graph_raises_composites() -> None:
    with pytest.raises(InvalidArgumentError, match="a graph raises composite events"):
        EventGraph(EI).subscribe("ins(item)", print)


def test_path_types_the_definition_never_has_are_refused() -> None:
    graph = EventGraph(EI)
    with pytest.raises(InvalidArgumentError, match="never at a path ending in order"):
        graph.subscribe("Ei(order)", print)
    seen: list[Any] = []
    graph.subscribe("Ei(order/item)", seen.append)
    graph.subscribe("Ei(/order/item)", seen.append)
    complete(graph)
    assert len(seen) == 2


def test_receivers_must_take_the_event() -> None:
    def two(doc: Any, event: Any) -> None:
        pass

    with pytest.raises(ArgumentTypeError, match=r"^the receiver two\(doc, event\) cannot be "
                                                r"called as two\(event\) \(missing a required "
                                                r"argument: 'event'\); write it as "
                                                r"def two\(event\): \.\.\.$"):
        EventGraph(EI).subscribe("Ei", two)
    with pytest.raises(ArgumentTypeError, match="is not callable"):
        EventGraph(EI).subscribe("Ei", 3)  # type: ignore[arg-type]


def test_a_subscribed_definition_is_removed_only_once_unsubscribed() -> None:
    graph = EventGraph(EI)
    seen: list[Any] = []
    graph.subscribe("R", seen.append)
    with pytest.raises(DefinitionError, match="R has subscribers, which would never be "
                                              "called again; unsubscribe them first"):
        graph.remove("R")
    graph.unsubscribe("R", seen.append)
    graph.remove("R")
    assert [d.name for d in graph.definitions] == ["Ei"]


def test_unsubscribe_stops_the_calls() -> None:
    graph = EventGraph(EI)
    seen: list[Any] = []
    graph.subscribe("Ei", seen.append)
    graph.unsubscribe("Ei", seen.append)
    graph.unsubscribe("Ei", print)  # never subscribed: nothing to do
    assert complete(graph) and seen == []
