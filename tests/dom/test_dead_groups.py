"""Dead groups go (issue 13, item 4): a group keyed by a node a watched document deleted for
good can never receive another event, so the graph drops it when the operation ends — and
nothing detected changes.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

import xmlevents
from tests.strategies import examples
from xmlevents.algebra import EventGraph

EI = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"


def _held(doc: Any, name: str) -> int:
    return len(doc.monitor.graph.held(name)) + len(doc.monitor.graph.potential(name))


def test_items_removed_before_completion_leave_nothing_held() -> None:
    """Inserting an item with a price and removing it, over and over, holds nothing after."""
    doc = xmlevents.fromstring("<order/>")
    doc.define(EI)
    root = doc.getroot()
    for _ in range(2_000):
        item = etree.SubElement(root, "item")
        etree.SubElement(item, "price").text = "1"
        root.remove(item)
    assert _held(doc, "Ei") == 0


def test_a_moved_item_keeps_its_partial_match() -> None:
    """A move removes and re-inserts with the same ids in one operation: nothing is dropped,
    and the item still completes."""
    doc = xmlevents.fromstring("<order><box/></order>")
    doc.define(EI)
    got: list[str] = []
    doc.subscribe("Ei", lambda d, event: got.append(d.id_of(d.getroot().find(".//item"))))
    item = etree.SubElement(doc.getroot(), "item")
    etree.SubElement(item, "price").text = "1"
    doc.getroot().find("box").append(item)  # moved in one call
    etree.SubElement(item, "quantity").text = "2"
    assert got == [doc.id_of(item)]


def test_a_condition_held_potential_event_of_a_deleted_item_goes() -> None:
    """A potential event held only by its condition can never be raised once its item is gone
    (the condition is tested again only at events inside the item): it is dropped."""
    doc = xmlevents.fromstring("<order/>")
    doc.define('Ei := (ins(item) ; (ins(item/price) & ins(item/quantity))) '
               'with when="price > 10"')
    item = etree.SubElement(doc.getroot(), "item")
    with doc.batch():
        etree.SubElement(item, "price").text = "1"
        etree.SubElement(item, "quantity").text = "2"
    assert len(doc.monitor.graph.potential("Ei")) == 1
    doc.getroot().remove(item)
    assert _held(doc, "Ei") == 0


def test_a_late_mode_below_keeps_the_groups_above() -> None:
    """Above a non-local node, groups stay: its potential event, let go after the deletion,
    still completes the sequence (as it did before groups were dropped)."""
    doc = xmlevents.fromstring("<order/>")
    doc.define("Ei := ins(item) ; ((ins(item/price) & ins(item/quantity)) "
               "with mode=non-local)")
    got: list[str] = []
    doc.subscribe("Ei", lambda d, event: got.append(str(event.pi)))
    item = etree.SubElement(doc.getroot(), "item")
    etree.SubElement(item, "price").text = "1"
    etree.SubElement(item, "quantity").text = "2"
    doc.getroot().remove(item)
    etree.SubElement(doc.getroot(), "note")  # an event outside: the conjunction goes
    assert len(got) == 1


DEFINITIONS = [
    EI,
    "Ei := ins(item) ; ((ins(item/price) & ins(item/quantity)) with mode=non-local)",
    "Eq := [1,*] ins(item/quantity)\nEi := ins(item) ; (ins(item/price) & Eq)",
    "Eh := *(item/quantity) & upd(item/price/text())",
    "Ec := [0,1] ins(item/comment)\nEi := ins(item) ; (ins(item/price) & Ec)",
    "Ep := ins(item) ; ins(item/price)\nEo := Ep & ins(item/quantity)",
    "Ew := ins(item) ; (ins(item/price) & ins(item/quantity)) with context=cumulative",
]

actions = st.lists(st.tuples(st.sampled_from(["item", "full", "price", "quantity", "comment",
                                              "update", "remove", "move", "note"]),
                             st.integers(0, 1)), max_size=30)


def _run(definition: str, steps: list[tuple[str, int]], forget: bool,
         monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, tuple[str, ...]]]:
    with monkeypatch.context() as m:
        if not forget:
            m.setattr(EventGraph, "forget", lambda self, doc, gone: None)
        doc = xmlevents.fromstring("<order><box/></order>")
        doc.define(definition)
        got: list[tuple[str, str, tuple[str, ...]]] = []
        doc.monitor.composites.connect(
            lambda sender, event: got.append(
                (event.type.name, str(event.pi), tuple(p.id for p in event.primitives()))),
            weak=False)
        root = doc.getroot()
        items: list[Any] = []
        for action, k in steps:
            live = [i for i in items if i.getparent() is not None]
            target = live[k % len(live)] if live else None
            if action == "item":
                items.append(etree.SubElement(root, "item"))
            elif action == "full":  # an item, then its price, then its quantity
                items.append(etree.SubElement(root, "item"))
                etree.SubElement(items[-1], "price").text = "1"
                etree.SubElement(items[-1], "quantity").text = "1"
            elif action == "note":
                etree.SubElement(root, "note")
            elif target is None:
                continue
            elif action in ("price", "quantity", "comment"):
                etree.SubElement(target, action).text = str(k)
            elif action == "update":
                price = target.find("price")
                if price is not None:
                    price.text = f"{price.text}+"
            elif action == "remove":
                target.getparent().remove(target)
            else:
                parent = root.find("box") if target.getparent() is root else root
                parent.append(target)
        doc.close()
        return got


@settings(max_examples=examples(400), deadline=None)
@given(st.sampled_from(DEFINITIONS), actions)
def test_dropping_dead_groups_changes_no_result(definition: str,
                                                 steps: list[tuple[str, int]]) -> None:
    """Random edits (insertions, removals, moves): the same composites with and without
    dropping the groups of deleted nodes."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert (_run(definition, steps, True, monkeypatch)
                == _run(definition, steps, False, monkeypatch))
