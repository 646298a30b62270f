"""Moves told apart (issue 14, item 3): the removal and insertion of a node that keeps its id
say so (``moved``), ``new(pt)`` and ``gone(pt)`` leave them out, ``ins`` and ``del`` keep the
paper's meaning; the same in watched documents, in JSON lines and in replays."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

import xmlevents
from tests.strategies import examples
from xmlevents.algebra import (
    EventFormatError,
    InvalidArgumentError,
    Op,
    PathInstance,
    PrimitiveEvent,
)
from xmlevents.replay import replay_history

DEFS = """
Inserted := ins(item)
Added := new(item)
Deleted := del(item)
Removed := gone(item)
"""


def watched(xml: str) -> tuple[object, list[tuple[str, str]], list[PrimitiveEvent]]:
    doc = xmlevents.fromstring(xml)
    doc.define(DEFS)
    fired: list[tuple[str, str]] = []
    for name in ("Inserted", "Added", "Deleted", "Removed"):
        doc.subscribe(name, lambda d, event: fired.append((event.type.name, event.pi.ids[-1])))
    cm = doc.record()
    _OPEN.append(cm)  # left open (and alive): the recording ends with the test session
    return doc, fired, cm.__enter__().events


_OPEN: list[object] = []


def test_a_move_within_the_document_carries_the_flag_on_both_halves() -> None:
    doc, fired, events = watched("<o><a><item k='1'>t</item></a><b/></o>")
    root = doc.getroot()
    item = root[0][0]
    iid = doc.id_of(item)
    root[1].append(item)
    assert {(e.op, e.moved) for e in events} == {(Op.DEL, True), (Op.INS, True)}
    assert all(e.pi.ids[:3] == (e.pi.ids[0], doc.id_of(root[1]), iid) for e in events
               if e.op is Op.INS)
    # ins and del fire as the paper says; new and gone leave the move out
    assert sorted(fired) == [("Deleted", iid), ("Inserted", iid)]


def test_a_new_node_and_a_removal_for_good_are_not_moves() -> None:
    doc, fired, events = watched("<o><a/></o>")
    root = doc.getroot()
    etree.SubElement(root[0], "item")
    iid = doc.id_of(root[0][0])
    root[0].remove(root[0][0])
    assert [(e.op, e.moved) for e in events] == [(Op.INS, False), (Op.DEL, False)]
    assert fired == [("Inserted", iid), ("Added", iid), ("Deleted", iid), ("Removed", iid)]


def test_a_rename_is_a_move_of_the_subtree() -> None:
    """Renaming removes and inserts the subtree again with its ids (DESIGN 5): both halves
    say moved, so ``new(item)`` does not see the renamed element's new name as an item."""
    doc, fired, events = watched("<o><thing><x/></thing></o>")
    root = doc.getroot()
    root[0].tag = "item"
    assert events and all(e.moved for e in events)
    assert [name for name, _ in fired] == ["Inserted"]


def test_moving_to_another_document_is_a_removal_and_a_new_insertion() -> None:
    """Ids belong to a document: moved to another one, the node is gone from the first and
    new in the second."""
    a, fired_a, events_a = watched("<o><item/></o>")
    b, fired_b, events_b = watched("<o/>")
    b.getroot().append(a.getroot()[0])
    assert [(e.op, e.moved) for e in events_a] == [(Op.DEL, False)]
    assert [(e.op, e.moved) for e in events_b] == [(Op.INS, False)]
    assert [n for n, _ in fired_a] == ["Deleted", "Removed"]
    assert [n for n, _ in fired_b] == ["Inserted", "Added"]


def test_the_json_line_says_moved_only_where_it_is() -> None:
    pi = PathInstance.of("/o/item", ["o", "i"])
    moved = PrimitiveEvent("e1", 1, Op.INS, pi, moved=True)
    plain = PrimitiveEvent("e2", 2, Op.INS, pi)
    assert moved.to_dict()["moved"] is True and "moved" not in plain.to_dict()
    for e in (moved, plain):
        assert PrimitiveEvent.from_dict(json.loads(json.dumps(e.to_dict()))) == e


@pytest.mark.parametrize(("fields", "message"), [
    ({"op": "upd", "moved": True}, "not an update"),
    ({"op": "ins", "moved": "yes"}, "must be true or false"),
])
def test_a_bad_moved_field_is_named(fields: dict[str, object], message: str) -> None:
    d = {"path": "/o/item", "ids": ["o", "i"], "id": "e1", "ts": 1, **fields}
    with pytest.raises(EventFormatError, match=message):
        PrimitiveEvent.from_dict(d, line=7)


def test_new_and_gone_are_only_event_types() -> None:
    with pytest.raises(InvalidArgumentError, match="only for event types"):
        PrimitiveEvent("e1", 1, Op.NEW, PathInstance.of("/o", ["o"]))
    with pytest.raises(InvalidArgumentError, match="never half of a move"):
        PrimitiveEvent("e1", 1, Op.UPD, PathInstance.of("/o", ["o"]), moved=True)


def test_a_replayed_move_carries_the_flag_and_new_leaves_it_out() -> None:
    """A version that moves an item to another parent: its events say moved (in the rows
    too), ``ins(item)`` fires again and ``new(item)`` does not."""
    item = "<item id='1'><price>5</price><quantity>2</quantity><note>n</note></item>"
    rows = [{"doc": "o.xml", "version": v, "xml": x} for v, x in enumerate([
        f"<o><a>{item}</a><b><x/><y/></b></o>",
        f"<o><a/><b><x/><y/>{item}</b></o>",
    ])]
    result = replay_history(rows, DEFS)
    later = [r for r in result.events if r["version"] == 1 and r["op"] != "upd"]
    assert later and all(r["moved"] for r in later if r["path"].endswith("/item"))
    assert all(r["moved"] is False for r in result.events if r["version"] == 0)
    names = sorted((c["type"], c["version"]) for c in result.composites)
    assert names == [("Added", 0), ("Deleted", 1), ("Inserted", 0), ("Inserted", 1)]


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["move", "add", "remove"]), st.integers(0, 5),
                          st.integers(0, 2)), max_size=15))
def test_new_and_gone_fire_once_per_node_whatever_moves(
        steps: list[tuple[str, int, int]]) -> None:
    """Whatever moves happen, ``new(item)`` fires once per item ever added and ``gone(item)``
    once per item removed for good; ``ins`` and ``del`` fire for every half of a move too."""
    doc, fired, _ = watched("<o><p/><p/><p/></o>")
    parents = doc.getroot().findall("p")
    added = removed = moves = 0
    for what, i, j in steps:
        items = [it for p in parents for it in p]
        if what == "add" or not items:
            etree.SubElement(parents[j], "item")
            added += 1
        elif what == "remove":
            it = items[i % len(items)]
            it.getparent().remove(it)
            removed += 1
        else:
            it = items[i % len(items)]
            parents[j].insert(0, it)
            moves += 1
    count = {n: sum(1 for name, _ in fired if name == n)
             for n in ("Added", "Removed", "Inserted", "Deleted")}
    assert (count["Added"], count["Removed"]) == (added, removed)
    assert count["Inserted"] == added + moves and count["Deleted"] == removed + moves
