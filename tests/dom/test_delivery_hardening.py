"""Deliveries and recordings cannot be bypassed — closing included — and survive a
receiver's BaseException (issue 16, item 3)."""

from __future__ import annotations

from typing import Any

import pytest
from lxml import etree

import xmlevents
from xmlevents.algebra import EventGraph, Op, PathInstance, PrimitiveEvent


def test_edits_made_by_receivers_of_what_close_raises_are_fed_recorded_and_delivered() -> None:
    doc = xmlevents.fromstring("<order/>")
    doc.define("Held := (ins(item) ; ins(item/price)) with mode=custom\nNote := ins(note)")
    notes: list[Any] = []
    doc.subscribe("Note", lambda d, event: notes.append(event))
    primitive: list[Any] = []
    doc.subscribe("ins(note/text())", lambda d, event: primitive.append(event))

    @doc.subscribe("Held")
    def on(d: Any, event: Any) -> None:
        etree.SubElement(d.getroot(), "note").text = "closed"

    with doc.record() as rec:
        item = etree.SubElement(doc.getroot(), "item")
        etree.SubElement(item, "price")
        raised = doc.close()
    assert [c.type.name for c in raised] == ["Held"]  # what closing raised
    assert len(notes) == 1 and len(primitive) == 1  # fed to the graph, delivered
    assert [(e.op.value, str(e.pi.pt)) for e in rec.events[-2:]] == [
        ("ins", "/order/note"), ("ins", "/order/note/text()")]
    assert etree.tostring(rec.replay()) == etree.tostring(doc.tree)  # recorded


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_a_receiver_s_base_exception_lets_the_others_run_then_propagates(
        stop: type[BaseException]) -> None:
    doc = xmlevents.fromstring("<order/>")
    doc.define("IC := ins(item)")
    got: list[str] = []

    def a(d: Any, event: Any) -> None:
        got.append("a")

    def b(d: Any, event: Any) -> None:
        raise stop

    def c(d: Any, event: Any) -> None:
        got.append("c")

    def e(d: Any, event: Any) -> None:
        raise ValueError("e")

    for fn in (a, b, c, e):
        doc.subscribe("IC", fn)
    with pytest.raises(stop) as info:
        etree.SubElement(doc.getroot(), "item")
    doc.unsubscribe("IC", e)
    assert got == ["a", "c"]  # in connection order, all delivered
    assert any("1 other receiver exception" in n for n in info.value.__notes__)
    doc.unsubscribe("IC", b)
    etree.SubElement(doc.getroot(), "item")  # the monitor goes on
    assert got == ["a", "c", "a", "c"]


def test_receivers_run_in_the_order_they_were_connected() -> None:
    doc = xmlevents.fromstring("<order/>")
    doc.define("IC := ins(item)")
    got: list[int] = []
    receivers = []
    for i in range(12):
        def fn(d: Any, event: Any, i: int = i) -> None:
            got.append(i)
        receivers.append(fn)
        doc.subscribe("IC", fn)
    etree.SubElement(doc.getroot(), "item")
    assert got == list(range(12))


def test_a_graph_subscriber_that_raises_does_not_stop_the_others() -> None:
    graph = EventGraph("E := ins(a)")
    got: list[str] = []

    def bad(event: Any) -> None:
        raise KeyboardInterrupt

    graph.subscribe("E", bad)
    graph.subscribe("E", lambda event: got.append(event.type.name))
    with pytest.raises(KeyboardInterrupt):
        graph.feed(PrimitiveEvent("e1", 1, Op.INS, PathInstance.of("/a", "a")))
    assert got == ["E"]
