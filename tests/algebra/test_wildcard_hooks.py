"""The wildcard step ``*`` where the engine and the definitions meet it (issue 15, item 6):
leaves whose path type ends in ``*`` receive events, references and subscriptions to
definitions with ``*`` in their path types are checked with ``ends_alike``, derivations that
would drop a child's events are refused, and event lines cannot have ``*``. The operators
themselves are tested in test_wildcard_paths.py; the reasoning is in docs/semantics.md,
"The wildcard step"."""

from __future__ import annotations

from typing import Any

import pytest
from lxml import etree

import xmlevents
from xmlevents.algebra import (
    DefinitionError,
    EventFormatError,
    EventGraph,
    InvalidArgumentError,
    Op,
    PathInstance,
    PrimitiveEvent,
    read_events,
)
from xmlevents.algebra._definitions import DefinitionSet


def ev(ts: int, op: Op, path: str, ids: str) -> PrimitiveEvent:
    return PrimitiveEvent(f"e{ts}", ts, op, PathInstance.of(path, list(ids)))


def run(graph: EventGraph, stream: list[PrimitiveEvent]) -> list[tuple[str, str, list[str]]]:
    return [(str(c.type), str(c.pi), [x.id for x in c.constituents])
            for e in stream for c in graph.feed(e)]


def test_a_leaf_ending_in_a_wildcard_takes_any_element() -> None:
    """``E := ins(a/*) ; upd(a/*/@x)`` derives a/*: each child of an a with its own x."""
    g = EventGraph("E := ins(a/*) ; upd(a/*/@x)")
    assert [str(n.pt) for n in g.definitions["E"].root.walk()] == ["a/*", "a/*/@x", "a/*"]
    stream = [ev(1, Op.INS, "/r/a/b", "rab"),
              ev(2, Op.INS, "/r/a/c", "rac"),
              ev(3, Op.UPD, "/r/a/c/@x", "racx"),
              ev(4, Op.UPD, "/r/a/@x", "rax"),      # the a's own attribute: no child of a
              ev(5, Op.INS, "/r/a/b/@x", "rabx"),   # an insertion, not an update
              ev(6, Op.UPD, "/r/a/b/@x", "rabx")]
    assert run(g, stream) == [("E(/r/a/c)", "/r[r]/a[a]/c[c]", ["e2", "e3"]),
                              ("E(/r/a/b)", "/r[r]/a[a]/b[b]", ["e1", "e6"])]


def test_wildcard_and_named_leaves_of_one_step() -> None:
    """An event taken by leaves ending in * and by one ending in its name reaches all."""
    g = EventGraph("A := ins(item/*) ; del(item/*)\n"
                   "B := ins(item/price) ; del(item/price)\n"
                   "C := ins(item) ; *(item/*)")
    stream = [ev(1, Op.INS, "/o/item", "oi"),
              ev(2, Op.INS, "/o/item/price", "oip"), ev(3, Op.DEL, "/o/item/price", "oip"),
              ev(4, Op.INS, "/o/item/quantity", "oiq"), ev(5, Op.DEL, "/o/item/quantity", "oiq")]
    assert [(t, ids) for t, _, ids in run(g, stream)] == [
        ("C(/o/item)", ["e1", "e2"]),
        ("A(/o/item/price)", ["e2", "e3"]), ("B(/o/item/price)", ["e2", "e3"]),
        ("A(/o/item/quantity)", ["e4", "e5"])]
    assert g.takes(Op.UPD, xmlevents.algebra.PathType.parse("/o/item/x"))  # *(item/*)
    assert not g.takes(Op.UPD, xmlevents.algebra.PathType.parse("/o/x"))


def test_references_to_definitions_with_wildcards() -> None:
    ds = DefinitionSet.parse("E := ins(a/*) ; upd(a/*/@x)\n"
                             "F := E(a/b) & ins(a/b/c)\n"
                             "G := %(a/b) ; del(a)")
    assert ds["F"].depends_on == ("E",)
    assert ds["G"].depends_on == ("E", "F")  # F's path type is a/b too
    with pytest.raises(DefinitionError, match=r"E\(c/d\) can never hold an event of E"):
        DefinitionSet.parse("E := ins(a/*) ; upd(a/*/@x)\nH := E(c/d) ; del(c)")


def test_subscriptions_to_wildcard_definitions() -> None:
    g = EventGraph("E := ins(a/*) ; upd(a/*/@x)")
    seen: list[str] = []
    g.subscribe("E(a/b)", lambda e: seen.append(f"E(a/b) {e.pi}"))
    g.subscribe("E(/r/a/*)", lambda e: seen.append(f"E(/r/a/*) {e.pi}"))
    g.subscribe("%(*)", lambda e: seen.append(f"%(*) {e.pi}"))
    with pytest.raises(InvalidArgumentError, match="never at a path ending in c/d"):
        g.subscribe("E(c/d)", lambda e: None)
    run(g, [ev(1, Op.INS, "/r/a/b", "rab"), ev(2, Op.UPD, "/r/a/b/@x", "rabx")])
    assert seen == ["E(a/b) /r[r]/a[a]/b[b]", "E(/r/a/*) /r[r]/a[a]/b[b]", "%(*) /r[r]/a[a]/b[b]"]


@pytest.mark.parametrize("definition, col, says", [
    ("E := ins(*) ; del(*)", 13, "the path type * is relative and has only * steps"),
    ("E := (ins(a) ; del(a)) with at=*", 29, "write `with at=/*` if the root element is meant"),
    ("E := [1,*] ins(*/x)", 6, "the path type of [l,u] (its operand's without the last step)"),
    ("E := ins(item/*) & upd(item/price/text())", 18,
     "item/* has * at step 2 where item/price/text() has price"),
    ("E := ins(/order/*/price) & ins(order/gift/quantity)", 26,
     "`with at=/order` (one group per order) or `with at=/order/gift`"),
])
def test_derivations_that_would_drop_events_are_refused(definition: str, col: int,
                                                        says: str) -> None:
    with pytest.raises(DefinitionError) as info:
        DefinitionSet.parse(definition)
    assert info.value.column == col
    assert says in str(info.value)


def test_the_refusal_names_what_to_write_and_that_works() -> None:
    g = EventGraph("E := (ins(item/*) & upd(item/price/text())) with at=item")
    stream = [ev(1, Op.INS, "/o/item/quantity", "oiq"),
              ev(2, Op.UPD, "/o/item/price/text()", "oipt")]
    assert run(g, stream) == [("E(/o/item)", "/o[o]/item[i]", ["e1", "e2"])]


def test_child_constraint_b_with_a_wildcard_operand() -> None:
    """Section 3.1 (b): a relative at= must be contained in an absolute operand; item is not
    in /order/*/price (the * may be a gift), /order/* is the path type to give."""
    with pytest.raises(DefinitionError, match=r"section 3.1 \(b\)"):
        DefinitionSet.parse("E := (ins(/order/*/price) & ins(/order/*/quantity)) with at=item")
    DefinitionSet.parse("E := (ins(/order/*/price) & ins(/order/*/quantity)) with at=/order/*")


def test_an_event_line_with_a_wildcard_is_refused_with_its_line() -> None:
    lines = ['{"op": "ins", "path": "/a", "ids": ["1"]}',
             '{"op": "ins", "path": "/a/*", "ids": ["1", "2"]}']
    with pytest.raises(EventFormatError) as info:
        list(read_events(lines, source="s.jsonl"))
    assert str(info.value) == ("s.jsonl: line 2: path='/a/*' has the wildcard step *; an event "
                               "is about one node: write its element's name")


def test_watched_document_any_property_changed() -> None:
    """``properties/*/text()`` of the issue: any property of a POM inserted and then set."""
    doc = xmlevents.fromstring("<project><properties><a>1</a></properties></project>")
    doc.define("PropertySet := ins(properties/*) ; upd(properties/*/text())")
    seen: list[Any] = []
    doc.subscribe("PropertySet", lambda d, event: seen.append(str(event.pi)))
    props = doc.getroot()[0]
    b = etree.SubElement(props, "b")
    b.text = "1"  # inserts the text
    b.text = "2"  # updates it
    props[0].text = "3"  # a was there before the definition
    assert seen == ["/project[n1]/properties[n2]/b[n5]"]
