"""CEL over a watched document's primitive events as they happen (issue 19, item 4): the
events pushed one by one into an :class:`~xmlevents.cel.Evaluation` give the complex events
that ``xmlevents cel --primitive`` finds in the same events' lines."""

from __future__ import annotations

import json

from lxml import etree

import xmlevents
from xmlevents.algebra import PrimitiveEvent
from xmlevents.cel import (
    Evaluation,
    Match,
    compile_query,
    evaluate,
    primitive_event,
    read_primitive,
)

# an item inserted, then its price changed, per item (the algebra's "same item")
QUERY = ("SELECT * FROM S WHERE ins AS i ; upd AS u FILTER i[path MATCHES 'item'] AND "
         "u[path MATCHES 'item/price/text()'] PARTITION BY [PROJECT(ids, 'order/item')]")


def test_a_watched_documents_events_pushed_as_they_happen() -> None:
    doc = xmlevents.fromstring("<order/>")
    evaluation = Evaluation(compile_query(QUERY))
    seen: list[PrimitiveEvent] = []
    found: list[Match] = []

    def receive(sender: object, event: PrimitiveEvent) -> None:
        found.extend(evaluation.push(primitive_event(event, len(seen))))
        seen.append(event)

    doc.mutations.connect(receive, weak=False)
    order = doc.getroot()
    items = []
    for k in range(3):
        item = etree.SubElement(order, "item")
        etree.SubElement(item, "price").text = str(k)
        items.append(item)
    items[2].find("price").text = "20"  # the third item repriced
    items[0].find("price").text = "10"  # then the first
    order.remove(items[1])
    assert len(found) == 2
    lines = [json.dumps(e.to_dict()) for e in seen]
    assert found == list(evaluate(compile_query(QUERY), read_primitive(lines)))
    repriced = [seen[m.positions[-1]].value for m in found]
    assert repriced == ["20", "10"]
