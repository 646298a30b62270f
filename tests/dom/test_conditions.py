"""Termination conditions evaluated with lxml: Example 18 of seed 000 (section 3.3)."""

from __future__ import annotations

import math

import pytest
from lxml import etree

from xmlevents.algebra import (
    CompositeEvent,
    DefinitionError,
    EventGraph,
    Op,
    PathInstance,
    PrimitiveEvent,
)
from xmlevents.dom import XPathDocuments, xpath_boolean


class Doc:
    """A document built by applying primitive events (elements and their text), with an
    element per identifier to resolve path instances (the DOM wrapper does this for real)."""

    def __init__(self) -> None:
        self.root: etree._Element | None = None
        self.by_id: dict[str, etree._Element] = {}
        self.ts = 0

    def apply(self, op: Op, path: str, ids: list[str], value: str | None = None
              ) -> PrimitiveEvent:
        self.ts += 1
        pi = PathInstance.of(path, ids)
        last = pi.pt.last
        if str(last) == "text()":
            element = self.by_id[ids[-2]]
            element.text = None if op is Op.DEL else value
        elif op is Op.INS:
            parent = self.by_id.get(ids[-2]) if len(ids) > 1 else None
            element = (etree.SubElement(parent, str(last)) if parent is not None
                       else etree.Element(str(last)))
            self.root = self.root if parent is not None else element
            self.by_id[ids[-1]] = element
        return PrimitiveEvent(f"e{self.ts}", self.ts, op, pi, value=value)

    def resolve(self, doc: str | None, pi: PathInstance) -> etree._Element | None:
        return self.by_id.get(pi.ids[-1])


EI_WHEN = ("Ei := (ins(item) ; (ins(item/price) & ins(item/quantity))) "
           "with when=\"price >= 0 and quantity > 0\"")


def test_example_18_values_not_operations_decide():
    """Raised only once price and quantity hold numbers, whatever text events led there."""
    doc = Doc()
    graph = EventGraph(EI_WHEN, documents=XPathDocuments(doc.resolve))
    order = ["o1"]
    steps = [
        (Op.INS, "/order", order, None),
        (Op.INS, "/order/item", order + ["i1"], None),
        (Op.INS, "/order/item/price", order + ["i1", "p1"], None),
        (Op.INS, "/order/item/quantity", order + ["i1", "q1"], None),  # potential: texts empty
        (Op.INS, "/order/item/price/text()", order + ["i1", "p1", "t1"], "abc"),
        (Op.UPD, "/order/item/price/text()", order + ["i1", "p1", "t1"], "3"),
        (Op.INS, "/order/item/quantity/text()", order + ["i1", "q1", "t2"], "0"),
        (Op.INS, "/order/item", order + ["i2"], None),  # outside: not re-examined
        (Op.UPD, "/order/item/quantity/text()", order + ["i1", "q1", "t2"], "2"),
    ]
    raised: list[tuple[int, CompositeEvent]] = []
    for op, path, ids, value in steps:
        e = doc.apply(op, path, ids, value)
        raised += [(e.ts, c) for c in graph.feed(e)]
    assert [(ts, str(c.pi), [p.id for p in c.primitives()]) for ts, c in raised] == [
        (9, "/order[o1]/item[i1]", ["e2", "e3", "e4"])]
    assert etree.tostring(doc.root) == (b"<order><item><price>3</price><quantity>2</quantity>"
                                        b"</item><item/></order>")


def test_condition_is_tested_on_the_subtree_of_the_potential_event():
    """The context node is the element at the potential event's path instance."""
    root = etree.fromstring("<item><price>3</price><quantity>1</quantity></item>")
    docs = XPathDocuments(lambda doc, pi: root)
    assert docs.compile("price >= 0 and quantity > 0")(root)
    assert not docs.compile("item/price >= 0")(root)
    assert docs.compile("self::item")(root)


@pytest.mark.parametrize("when, words", [
    ("price >=", "Invalid expression"),
    ("frobnicate(price)", "Unregistered function"),
    ("$limit > price", "Undefined variable"),
])
def test_conditions_that_cannot_be_evaluated_are_rejected_with_the_definition(when, words):
    with pytest.raises(DefinitionError) as info:
        EventGraph(f"Ei := (ins(item/price) & ins(item/quantity)) with when=\"{when}\"",
                   documents=XPathDocuments(lambda doc, pi: None))
    assert info.value.definition == "Ei" and words in str(info.value)


def test_namespaced_conditions_use_the_given_prefixes():
    root = etree.fromstring('<item xmlns:p="urn:p"><p:price>3</p:price></item>')
    docs = XPathDocuments(lambda doc, pi: root, namespaces={"p": "urn:p"})
    assert docs.compile("p:price > 2")(root)


@pytest.mark.parametrize("value, expected", [
    (True, True), (False, False), (0.0, False), (-1.5, True), (math.nan, False),
    ("", False), ("0", True), ([], False), ([etree.Element("a")], True),
])
def test_xpath_boolean_follows_xpath_1(value, expected):
    assert xpath_boolean(value) is expected
