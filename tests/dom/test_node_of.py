"""Events lead to their nodes: ``doc.node_of(event)`` (issue 15, item 4)."""

from __future__ import annotations

from typing import Any

import pytest
from lxml import etree

import xmlevents
from xmlevents.algebra import InvalidArgumentError


def edited() -> tuple[Any, Any, dict[str, Any]]:
    """A document with an item (attribute, text, tail, price) inserted; its events by kind."""
    doc = xmlevents.fromstring("<order><box/></order>")
    doc.define("IC := ins(item) ; ins(item/price)")
    composites: list[Any] = []
    doc.subscribe("IC", lambda d, event: composites.append(event))
    with doc.record() as rec:
        item = etree.SubElement(doc.getroot(), "item", partnum="p1")
        item.text = "note"
        price = etree.SubElement(item, "price")
        price.text = "3"
        price.tail = "after"
        item.set("partnum", "p2")
    by = {f"{e.op.value} {e.pi.pt}": e for e in rec.events}
    by["composite"] = composites[0]
    return doc, item, by


def test_every_kind_of_event_names_its_element() -> None:
    doc, item, by = edited()
    price = item.find("price")
    assert doc.node_of(by["ins /order/item"]) is item
    assert doc.node_of(by["ins /order/item/@partnum"]) is item  # the attribute's owner
    assert doc.node_of(by["upd /order/item/@partnum"]) is item
    assert doc.node_of(by["ins /order/item/text()"]) is item  # its text ...
    assert doc.node_of(by["ins /order/item/price/text()"]) is price
    assert doc.node_of(by["ins /order/item/price"]) is price
    assert doc.node_of(by["composite"]) is item  # the node at its path instance
    assert doc.monitor.node_of(by["composite"]) is item


def test_a_tail_text_is_a_text_of_the_parent() -> None:
    doc, item, _ = edited()
    with doc.record() as rec:
        item.find("price").tail = "changed"
    (e,) = rec.events
    assert str(e.pi.pt) == "/order/item/text()" and doc.node_of(e) is item


def test_none_once_deleted_and_the_node_followed_through_a_move() -> None:
    doc, item, by = edited()
    del item.attrib["partnum"]
    assert doc.node_of(by["ins /order/item/@partnum"]) is None  # the attribute is gone
    assert doc.node_of(by["ins /order/item"]) is item
    item.find("price").text = None
    assert doc.node_of(by["ins /order/item/price/text()"]) is None
    doc.getroot().find("box").append(item)  # a move keeps the ids
    assert doc.node_of(by["ins /order/item"]) is item
    assert doc.node_of(by["composite"]) is item
    item.getparent().remove(item)
    for key in ("ins /order/item", "ins /order/item/price", "ins /order/item/text()",
                "composite"):
        assert doc.node_of(by[key]) is None, key


def test_an_event_of_another_document_is_refused() -> None:
    doc, _, by = edited()
    other = xmlevents.fromstring("<order/>", monitor=doc.monitor, name="other")
    with pytest.raises(InvalidArgumentError, match="happened in document"):
        other.node_of(by["ins /order/item"])
