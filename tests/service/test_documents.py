"""Document events as atomic events of an expression (issue 18, item 1): a composite type of
the algebra's definitions and a primitive document event type, parameters read from the path
instance and value (:data:`xmlevents.service.DOCUMENT_PARAMS`)."""

from __future__ import annotations

from typing import Any

import pytest
from lxml import etree

import xmlevents
from xmlevents.service import Atomic, Detection, Engine, ExpressionTextError, RegistrationError


def test_item_complete_after_its_insertion_with_the_node_id_as_a_variable() -> None:
    engine = Engine()
    joined = engine.register("SEQ(ins(/order/item)(id=I), ItemComplete(id=I))")
    prices = engine.register("ins(/order/item/price/text())(value=P)")
    doc = xmlevents.fromstring("<order/>")
    doc.define("ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))")
    got: list[Detection] = []

    def feed(doc: Any, event: Any) -> None:
        got.extend(engine.feed(event))

    for etype in ("ItemComplete", "ins(/order/item)", "ins(/order/item/price/text())"):
        doc.subscribe(etype, feed)
    order = doc.getroot()
    with doc.batch():
        item = etree.SubElement(order, "item")
        etree.SubElement(item, "price").text = "2.50"
        etree.SubElement(item, "quantity").text = "4"
    assert [d.expression for d in got] == [prices, joined]
    assert got[0].bindings == {"P": "2.50"}
    item_id = got[1].bindings["I"]
    assert isinstance(item_id, str)
    assert [s.type for s in got[1].events] == ["ins(/order/item)", "ItemComplete"]
    assert got[1].events[0].params["path"].endswith(f"item[{item_id}]")


def test_document_types_are_checked_at_registration() -> None:
    engine = Engine()
    with pytest.raises(ExpressionTextError, match="bad document event type") as caught:
        engine.register("ins(/order//)(id=I)")
    assert caught.value.column == 5
    with pytest.raises(RegistrationError, match="bad document event type"):
        engine.register(Atomic("ins(/order//)"))
    assert len(engine) == 0


def test_a_signal_named_like_a_document_type_does_not_reach_its_leaf() -> None:
    engine = Engine()
    engine.register("ins(/a)(id=I)")
    assert engine.signal("ins(/a)", {"id": "n1"}) == []
