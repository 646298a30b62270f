"""The index an insertion carries, from the children counts the registry keeps (issue 13).

After any sequence of operations, every node's count equals lxml's ``len()``, and every
insertion event carries the index lxml's ``parent.index(child)`` gives, whatever listened
before (counts are kept while nothing listens too).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

import xmlevents
from tests.strategies import examples
from xmlevents.algebra import Axis, Op, PrimitiveEvent
from xmlevents.dom._functions import _LXML
from xmlevents.dom._registry import NODES

START = "<r><a><b/>x<c/><!--k--></a>y<d><e/><f/><g/></d><?p q?></r>"


@pytest.fixture()
def doc() -> Iterator[Any]:
    """A watched START whose events are collected in ``doc.events``."""
    d = xmlevents.fromstring(START)
    d.events = []
    d.mutations.connect(lambda sender, event: d.events.append(event), weak=False)
    yield d
    d.close()


def check_counts(doc: Any) -> None:
    """Every node's count of children is lxml's len()."""
    for e in doc.getroot().iter():
        assert NODES[e].n_children == len(e), (e, NODES[e].n_children, len(e))


def check_indexes(doc: Any, events: list[PrimitiveEvent]) -> None:
    """Each insertion of one operation carries the position its node has after it."""
    for ev in events:
        if ev.op is not Op.INS:
            continue
        axis = ev.pi.pt.last.axis
        if axis in (Axis.CHILD, Axis.COMMENT, Axis.PI):
            node = doc.node(ev.pi.ids[-1])
            parent = node.getparent()
            if parent is not None:
                assert ev.index == parent.index(node), (ev, parent.index(node))
        elif axis is Axis.TEXT and ev.index:  # a tail (an element's text is at 0)
            parent = doc.node(ev.pi.ids[-2])
            owner = next(c for c in parent if NODES[c].tail_id == ev.pi.ids[-1])
            assert ev.index == parent.index(owner) + 1, (ev, parent.index(owner))


def test_append_under_many_children_carries_the_count(doc: Any) -> None:
    """Appending under 10^4 children reports index 10^4, by append and by SubElement."""
    d = doc.getroot().find("d")
    d.extend(etree.Element("z") for _ in range(10_000 - 3))
    doc.events.clear()
    d.append(etree.Element("n"))
    etree.SubElement(d, "m")
    assert [e.index for e in doc.events] == [10_000, 10_001]
    check_counts(doc)


@pytest.mark.parametrize("at, expected", [
    (0, 0), (1, 1), (2, 2), (3, 3), (99, 3), (-1, 2), (-3, 0), (-4, 3), (-99, 3)])
def test_insert_at_any_index_reports_lxml_position(doc: Any, at: int, expected: int) -> None:
    """insert(at, x) carries where lxml put x: before the child at ``at`` (from the end when
    negative), or last when there is none (lxml appends for -99 as for 99)."""
    d = doc.getroot().find("d")
    x = etree.Element("x")
    d.insert(at, x)
    assert d.index(x) == expected
    assert [e.index for e in doc.events] == [expected]
    check_counts(doc)


def test_insert_of_a_sibling_moves_it_within_its_parent(doc: Any) -> None:
    """insert(i, x) of one of the parent's own children reports its new position."""
    d = doc.getroot().find("d")
    e = d[0]
    d.insert(2, e)  # lxml: before g, which is then at 1
    assert [c.tag for c in d] == ["f", "e", "g"]
    assert [ev.index for ev in doc.events if ev.op is Op.INS] == [1]
    check_counts(doc)


def test_counts_follow_changes_behind_the_wrappers_back(doc: Any) -> None:
    """lxml's own strip_elements and SubElement change children unseen; the resync (and the
    next operation, for SubElement) count again, so the next append's index is right."""
    root = doc.getroot()
    _LXML["strip_elements"](root, "e", "f")
    doc.resync()
    check_counts(doc)
    _LXML["SubElement"](root.find("d"), "h")
    doc.events.clear()
    root.find("d").append(etree.Element("i"))
    assert [ev.index for ev in doc.events if ev.pi.pt.last.name in ("h", "i")] == [1, 2]
    check_counts(doc)


# --- any sequence of operations ---------------------------------------------------------------

OPS = ["append", "subelement", "extend", "insert", "addnext", "addprevious", "remove",
       "delitem", "delslice", "setitem", "setslice", "replace", "clear", "rename", "tail",
       "move_other", "lxml_subelement", "lxml_strip", "listen"]


def _pick(data: st.DataObject, items: list[Any], label: str) -> Any:
    return items[data.draw(st.integers(0, len(items) - 1), label=label)] if items else None


@settings(max_examples=examples(150), deadline=None)
@given(data=st.data(), steps=st.lists(st.sampled_from(OPS), min_size=1, max_size=25))
def test_index_is_lxml_index_after_any_operations(data: st.DataObject, steps: list[str]
                                                  ) -> None:
    """Through any operations, in one document and across two, listened to or not, the counts
    equal len() and every insertion's index equals parent.index(child)."""
    one = xmlevents.fromstring(START, name="one")
    two = xmlevents.fromstring("<s><t/><u/></s>", name="two")
    events: list[PrimitiveEvent] = []
    listening = {"one": True}

    def receive(sender: Any, event: PrimitiveEvent) -> None:
        events.append(event)

    one.mutations.connect(receive, weak=False)
    try:
        for step in steps:
            events.clear()
            _apply(data, step, one, two, listening, receive)
            if listening["one"]:
                check_indexes(one, events)
            check_counts(one)
            check_counts(two)
    finally:
        one.close()
        two.close()


def _apply(data: st.DataObject, step: str, one: Any, two: Any, listening: dict[str, bool],
           receive: Any) -> None:
    """Apply ``step`` to a parent of ``one`` picked by ``data`` (what lxml refuses, it
    refuses: such steps change nothing and are passed over)."""
    root = one.getroot()
    elements = [e for e in root.iter() if isinstance(e.tag, str)]
    p = _pick(data, elements, "parent")
    children = list(p)
    child = _pick(data, children, "child")
    others = [e for e in two.getroot().iter() if e is not two.getroot()]
    index = data.draw(st.integers(-6, 8), label="index")
    new = etree.Element("n")
    try:
        if step == "append":
            p.append(_pick(data, [new, *elements[1:]], "appended"))
        elif step == "subelement":
            etree.SubElement(p, "s")
        elif step == "extend":
            p.extend([new, etree.Comment("c"), *data.draw(
                st.lists(st.sampled_from(elements[1:] or [new]), max_size=2), label="more")])
        elif step == "insert":
            p.insert(index, _pick(data, [new, *elements[1:]], "inserted"))
        elif step in ("addnext", "addprevious") and child is not None:
            getattr(child, step)(new)
        elif step == "remove" and child is not None:
            p.remove(child)
        elif step == "delitem" and children and -len(children) <= index < len(children):
            del p[index]
        elif step == "delslice":
            del p[index:index + 2]
        elif step == "setitem" and children and -len(children) <= index < len(children):
            p[index] = new
        elif step == "setslice":
            p[index:index + 1] = [new, etree.Element("m")]
        elif step == "replace" and child is not None:
            p.replace(child, new)
        elif step == "clear" and p is not root:
            p.clear()
        elif step == "rename":
            p.tag = "renamed"
        elif step == "tail" and p is not root:
            p.tail = "tail"
        elif step == "move_other" and others:
            p.insert(index, _pick(data, others, "from two"))
        elif step == "lxml_subelement":
            _LXML["SubElement"](p, "behind")
            one.resync()  # as the next operation would: then the counts hold again
        elif step == "lxml_strip":
            _LXML["strip_elements"](root, "n", with_tail=False)
            one.resync()
        elif step == "listen":
            if listening["one"]:
                one.mutations.disconnect(receive)
            else:
                one.mutations.connect(receive, weak=False)
            listening["one"] = not listening["one"]
    except (ValueError, TypeError):
        pass  # refused by lxml (a cycle, an ancestor, a bad index): nothing changed
