"""The exact primitive events each lxml API emits on a watched document (DESIGN section 5).

Every expected sequence below is written out by hand from the event rules (the API brief and
DESIGN section 5), never computed with the library. An event is compared as the tuple
``(op, path, ids, value, old, index)`` with the ids joined by spaces.

The base document and the ids it gets when wrapped (element, its attributes, its text, then
each child's subtree followed by that child's tail)::

    <order>                      n1   /order
      <item partnum="1">         n2   /order/item            n3  /order/item/@partnum
        t                        n4   /order/item/text()
        <price>5</price>         n5   /order/item/price      n6  /order/item/price/text()
        tail                     n7   /order/item/text()     (the tail of price)
      </item>
      <!--c-->                   n8   /order/comment()       (value "c")
    </order>

New nodes are numbered on from n9.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lxml.html
import pytest
from lxml import etree

import xmlevents
import xmlevents.dom
from xmlevents.algebra import PrimitiveEvent
from xmlevents.dom import _functions

BASE = '<order><item partnum="1">t<price>5</price>tail</item><!--c--></order>'
PLAIN = xmlevents.dom.hardened_parser(plain=True)

# The removal of price (with its tail) and of item, in exact reverse document order.
DEL_PRICE = [
    ("del", "/order/item/text()", "n1 n2 n7", None, "tail", None),
    ("del", "/order/item/price/text()", "n1 n2 n5 n6", None, "5", None),
    ("del", "/order/item/price", "n1 n2 n5", None, None, None),
]
DEL_ITEM = DEL_PRICE + [
    ("del", "/order/item/text()", "n1 n2 n4", None, "t", None),
    ("del", "/order/item/@partnum", "n1 n2 n3", None, "1", None),
    ("del", "/order/item", "n1 n2", None, None, None),
]
DEL_COMMENT = [("del", "/order/comment()", "n1 n8", None, "c", None)]


# --- helpers ---------------------------------------------------------------------------------

_open: list[Any] = []
_senders: dict[int, list[Any]] = {}  # id(doc) -> the senders its receiver was called with


@pytest.fixture(autouse=True)
def _close_documents():
    yield
    while _open:
        doc = _open.pop()
        if not doc.closed:
            doc.close()
    _senders.clear()


def watch(xml: str = BASE, **kwargs: Any) -> tuple[Any, list[PrimitiveEvent]]:
    """A watched document and the list its ``mutations`` receiver appends events to."""
    doc = xmlevents.fromstring(xml, **kwargs)
    _open.append(doc)
    log: list[PrimitiveEvent] = []
    senders: list[Any] = []

    def receiver(sender: Any, event: PrimitiveEvent) -> None:
        senders.append(sender)
        log.append(event)

    doc.mutations.connect(receiver, weak=False)
    _senders[id(doc)] = senders
    return doc, log


def tup(e: PrimitiveEvent) -> tuple[Any, ...]:
    return (e.op.value, str(e.pi.pt), " ".join(e.pi.ids), e.value, e.old, e.index)


def xml_of(doc: Any) -> str:
    return etree.tostring(doc.getroot(), encoding="unicode")


def check(doc: Any, log: list[PrimitiveEvent], expected: list[tuple[Any, ...]], *,
          xml: str | None = None, first_ts: int = 1, settle: bool = True) -> None:
    """``log`` holds exactly ``expected``; the events are well formed; the tree is ``xml``;
    and (``settle``) a flush finds nothing left unreported."""
    assert [tup(e) for e in log] == expected
    for k, e in enumerate(log):
        assert e.ts == first_ts + k, "one tick per event"
        assert e.id == f"e{e.ts}"
        assert e.doc == doc.name
        assert PrimitiveEvent.from_dict(e.to_dict()) == e
    assert all(s is doc for s in _senders[id(doc)]), "receivers get fn(doc, event=e)"
    if xml is not None:
        assert xml_of(doc) == xml
    if settle:
        n = len(log)
        doc.flush()
        assert [tup(e) for e in log[n:]] == [], "records and tree disagreed after the call"


def parts(doc: Any) -> tuple[Any, Any, Any, Any]:
    """order, item, price, comment of the base document."""
    root = doc.getroot()
    return root, root[0], root[0][0], root[1]


def frag(text: str, tail: str | None = None) -> Any:
    """A new, unwatched element (watched classes, no document) with an optional tail."""
    e = etree.fromstring(text)
    if tail is not None:
        e.tail = tail
    return e


# --- the base document -------------------------------------------------------------------------

def test_wrap_assigns_ids_in_document_order_and_reports_nothing():
    doc, log = watch()
    root, item, price, comment = parts(doc)
    assert [doc.id_of(n) for n in (root, item, price, comment)] == ["n1", "n2", "n5", "n8"]
    assert str(doc.path_of(price).pt) == "/order/item/price"
    assert doc.path_of(price).ids == ("n1", "n2", "n5")
    assert doc.by_id["n5"] is price
    assert log == []


# --- inserting elements ----------------------------------------------------------------------

def test_append_new_element_with_subtree_and_tail():
    doc, log = watch()
    root = doc.getroot()
    root.append(frag('<item partnum="2">u<price>6</price>p</item>', tail="after"))
    check(doc, log, [
        ("ins", "/order/item", "n1 n9", None, None, 2),
        ("ins", "/order/item/@partnum", "n1 n9 n10", "2", None, None),
        ("ins", "/order/item/text()", "n1 n9 n11", "u", None, 0),
        ("ins", "/order/item/price", "n1 n9 n12", None, None, 0),
        ("ins", "/order/item/price/text()", "n1 n9 n12 n13", "6", None, 0),
        ("ins", "/order/item/text()", "n1 n9 n14", "p", None, 1),
        ("ins", "/order/text()", "n1 n15", "after", None, 3),
    ], xml='<order><item partnum="1">t<price>5</price>tail</item><!--c-->'
           '<item partnum="2">u<price>6</price>p</item>after</order>')


@pytest.mark.parametrize("index", [1, -1])
def test_insert(index):
    doc, log = watch()
    doc.getroot().insert(index, frag("<note>x</note>", tail="y"))
    check(doc, log, [
        ("ins", "/order/note", "n1 n9", None, None, 1),
        ("ins", "/order/note/text()", "n1 n9 n10", "x", None, 0),
        ("ins", "/order/text()", "n1 n11", "y", None, 2),
    ], xml='<order><item partnum="1">t<price>5</price>tail</item><note>x</note>y'
           '<!--c--></order>')


def test_extend():
    doc, log = watch()
    doc.getroot().extend(iter([frag("<a>1</a>"), frag("<b/>")]))
    check(doc, log, [
        ("ins", "/order/a", "n1 n9", None, None, 2),
        ("ins", "/order/a/text()", "n1 n9 n10", "1", None, 0),
        ("ins", "/order/b", "n1 n11", None, None, 3),
    ], xml='<order><item partnum="1">t<price>5</price>tail</item><!--c--><a>1</a><b/></order>')


def test_addnext_keeps_the_anchor_tail_and_brings_its_own():
    doc, log = watch()
    _, _, price, _ = parts(doc)
    price.addnext(frag("<qty>2</qty>", tail="Q"))
    check(doc, log, [
        ("ins", "/order/item/qty", "n1 n2 n9", None, None, 1),
        ("ins", "/order/item/qty/text()", "n1 n2 n9 n10", "2", None, 0),
        ("ins", "/order/item/text()", "n1 n2 n11", "Q", None, 2),
    ], xml='<order><item partnum="1">t<price>5</price>tail<qty>2</qty>Q</item><!--c--></order>')


def test_addprevious():
    doc, log = watch()
    _, _, price, _ = parts(doc)
    price.addprevious(frag("<qty>2</qty>", tail="Q"))
    check(doc, log, [
        ("ins", "/order/item/qty", "n1 n2 n9", None, None, 0),
        ("ins", "/order/item/qty/text()", "n1 n2 n9 n10", "2", None, 0),
        ("ins", "/order/item/text()", "n1 n2 n11", "Q", None, 1),
    ], xml='<order><item partnum="1">t<qty>2</qty>Q<price>5</price>tail</item><!--c--></order>')


# --- removing elements -----------------------------------------------------------------------

def test_remove_element_with_subtree():
    doc, log = watch()
    root, item, _, _ = parts(doc)
    root.remove(item)
    check(doc, log, DEL_ITEM, xml="<order><!--c--></order>")
    assert doc.id_of(item) is None and "n2" not in doc.by_id


def test_remove_element_takes_its_tail():
    doc, log = watch()
    _, item, price, _ = parts(doc)
    item.remove(price)
    check(doc, log, DEL_PRICE, xml='<order><item partnum="1">t</item><!--c--></order>')


def test_remove_comment():
    doc, log = watch()
    root, _, _, comment = parts(doc)
    root.remove(comment)
    check(doc, log, DEL_COMMENT,
          xml='<order><item partnum="1">t<price>5</price>tail</item></order>')


def test_reinsertion_after_removal_gets_new_ids():
    doc, log = watch()
    root, item, _, _ = parts(doc)
    root.remove(item)
    root.append(item)
    check(doc, log, DEL_ITEM + [
        ("ins", "/order/item", "n1 n9", None, None, 1),
        ("ins", "/order/item/@partnum", "n1 n9 n10", "1", None, None),
        ("ins", "/order/item/text()", "n1 n9 n11", "t", None, 0),
        ("ins", "/order/item/price", "n1 n9 n12", None, None, 0),
        ("ins", "/order/item/price/text()", "n1 n9 n12 n13", "5", None, 0),
        ("ins", "/order/item/text()", "n1 n9 n14", "tail", None, 1),
    ], xml='<order><!--c--><item partnum="1">t<price>5</price>tail</item></order>')
    assert doc.id_of(item) == "n9"


def test_clear_element():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    item.clear()
    check(doc, log, DEL_PRICE + [
        ("del", "/order/item/text()", "n1 n2 n4", None, "t", None),
        ("del", "/order/item/@partnum", "n1 n2 n3", None, "1", None),
    ], xml="<order><item/><!--c--></order>")
    assert doc.id_of(item) == "n2"


def test_clear_drops_the_tail():
    doc, log = watch()
    _, _, price, _ = parts(doc)
    price.clear()
    check(doc, log, [
        ("del", "/order/item/text()", "n1 n2 n7", None, "tail", None),
        ("del", "/order/item/price/text()", "n1 n2 n5 n6", None, "5", None),
    ], xml='<order><item partnum="1">t<price/></item><!--c--></order>')


def test_clear_keep_tail():
    doc, log = watch()
    _, _, price, _ = parts(doc)
    price.clear(keep_tail=True)
    check(doc, log, [
        ("del", "/order/item/price/text()", "n1 n2 n5 n6", None, "5", None),
    ], xml='<order><item partnum="1">t<price/>tail</item><!--c--></order>')


def test_clear_attributes_in_reverse_order():
    doc, log = watch('<order><item a="1" b="2">t</item></order>')
    item = doc.getroot()[0]
    item.clear()
    check(doc, log, [
        ("del", "/order/item/text()", "n1 n2 n5", None, "t", None),
        ("del", "/order/item/@b", "n1 n2 n4", None, "2", None),
        ("del", "/order/item/@a", "n1 n2 n3", None, "1", None),
    ], xml="<order><item/></order>")


def test_replace_old_leaves_with_its_tail_new_brings_its_own():
    doc, log = watch()
    _, item, price, _ = parts(doc)
    item.replace(price, frag("<line>x</line>", tail="T"))
    check(doc, log, DEL_PRICE + [
        ("ins", "/order/item/line", "n1 n2 n9", None, None, 0),
        ("ins", "/order/item/line/text()", "n1 n2 n9 n10", "x", None, 0),
        ("ins", "/order/item/text()", "n1 n2 n11", "T", None, 1),
    ], xml='<order><item partnum="1">t<line>x</line>T</item><!--c--></order>')


def test_setitem_discards_the_old_tail():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    item[0] = frag("<line>x</line>", tail="T")
    check(doc, log, DEL_PRICE + [
        ("ins", "/order/item/line", "n1 n2 n9", None, None, 0),
        ("ins", "/order/item/line/text()", "n1 n2 n9 n10", "x", None, 0),
        ("ins", "/order/item/text()", "n1 n2 n11", "T", None, 1),
    ], xml='<order><item partnum="1">t<line>x</line>T</item><!--c--></order>')


def test_setitem_without_new_tail():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    item[0] = frag("<line>x</line>")
    check(doc, log, DEL_PRICE + [
        ("ins", "/order/item/line", "n1 n2 n9", None, None, 0),
        ("ins", "/order/item/line/text()", "n1 n2 n9 n10", "x", None, 0),
    ], xml='<order><item partnum="1">t<line>x</line></item><!--c--></order>')


def test_setitem_slice():
    doc, log = watch()
    root = doc.getroot()
    root[0:1] = [frag("<a>1</a>"), frag("<b/>")]
    check(doc, log, DEL_ITEM + [
        ("ins", "/order/a", "n1 n9", None, None, 0),
        ("ins", "/order/a/text()", "n1 n9 n10", "1", None, 0),
        ("ins", "/order/b", "n1 n11", None, None, 1),
    ], xml="<order><a>1</a><b/><!--c--></order>")


def test_setitem_slice_reordering_children_is_a_move():
    doc, log = watch()
    root, item, _, comment = parts(doc)
    root[:] = [comment, item]
    check(doc, log, DEL_COMMENT + DEL_ITEM + [
        ("ins", "/order/comment()", "n1 n8", "c", None, 0),
        ("ins", "/order/item", "n1 n2", None, None, 1),
        ("ins", "/order/item/@partnum", "n1 n2 n3", "1", None, None),
        ("ins", "/order/item/text()", "n1 n2 n4", "t", None, 0),
        ("ins", "/order/item/price", "n1 n2 n5", None, None, 0),
        ("ins", "/order/item/price/text()", "n1 n2 n5 n6", "5", None, 0),
        ("ins", "/order/item/text()", "n1 n2 n7", "tail", None, 1),
    ], xml='<order><!--c--><item partnum="1">t<price>5</price>tail</item></order>')


def test_delitem():
    doc, log = watch()
    root = doc.getroot()
    del root[0]
    check(doc, log, DEL_ITEM, xml="<order><!--c--></order>")


def test_delitem_nested_with_tail():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    del item[0]
    check(doc, log, DEL_PRICE, xml='<order><item partnum="1">t</item><!--c--></order>')


def test_delitem_slice_removes_in_reverse_document_order():
    doc, log = watch()
    root = doc.getroot()
    del root[0:2]
    check(doc, log, DEL_COMMENT + DEL_ITEM, xml="<order/>")


# --- text, tail --------------------------------------------------------------------------------

TEXT_CASES: list[tuple[str, Callable[[Any], None], list[tuple[Any, ...]], str]] = [
    ("ins", lambda d: setattr(d.getroot(), "text", "x"),
     [("ins", "/order/text()", "n1 n9", "x", None, 0)],
     '<order>x<item partnum="1">t<price>5</price>tail</item><!--c--></order>'),
    ("upd", lambda d: setattr(d.getroot()[0], "text", "u"),
     [("upd", "/order/item/text()", "n1 n2 n4", "u", "t", None)],
     '<order><item partnum="1">u<price>5</price>tail</item><!--c--></order>'),
    ("del", lambda d: setattr(d.getroot()[0], "text", None),
     [("del", "/order/item/text()", "n1 n2 n4", None, "t", None)],
     '<order><item partnum="1"><price>5</price>tail</item><!--c--></order>'),
    ("ins-empty", lambda d: setattr(d.getroot(), "text", ""),
     [("ins", "/order/text()", "n1 n9", "", None, 0)],
     '<order><item partnum="1">t<price>5</price>tail</item><!--c--></order>'),
    ("upd-empty", lambda d: setattr(d.getroot()[0], "text", ""),
     [("upd", "/order/item/text()", "n1 n2 n4", "", "t", None)],
     '<order><item partnum="1"><price>5</price>tail</item><!--c--></order>'),
    ("upd-leaf", lambda d: setattr(d.getroot()[0][0], "text", "6"),
     [("upd", "/order/item/price/text()", "n1 n2 n5 n6", "6", "5", None)],
     '<order><item partnum="1">t<price>6</price>tail</item><!--c--></order>'),
]


@pytest.mark.parametrize("name, act, expected, xml", TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_text(name, act, expected, xml):
    doc, log = watch()
    act(doc)
    check(doc, log, expected, xml=xml)


def test_empty_text_is_a_value_distinct_from_none():
    doc, log = watch()
    root = doc.getroot()
    root.text = ""
    assert root.text == ""
    root.text = None
    check(doc, log, [
        ("ins", "/order/text()", "n1 n9", "", None, 0),
        ("del", "/order/text()", "n1 n9", None, "", None),
    ])


def test_text_reinserted_after_deletion_gets_a_new_id():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    item.text = None
    item.text = "t"
    check(doc, log, [
        ("del", "/order/item/text()", "n1 n2 n4", None, "t", None),
        ("ins", "/order/item/text()", "n1 n2 n9", "t", None, 0),
    ])


TAIL_CASES: list[tuple[str, Callable[[Any], None], list[tuple[Any, ...]], str]] = [
    ("ins", lambda d: setattr(d.getroot()[0], "tail", "x"),
     [("ins", "/order/text()", "n1 n9", "x", None, 1)],
     '<order><item partnum="1">t<price>5</price>tail</item>x<!--c--></order>'),
    ("ins-after-comment", lambda d: setattr(d.getroot()[1], "tail", "x"),
     [("ins", "/order/text()", "n1 n9", "x", None, 2)],
     '<order><item partnum="1">t<price>5</price>tail</item><!--c-->x</order>'),
    ("upd", lambda d: setattr(d.getroot()[0][0], "tail", "z"),
     [("upd", "/order/item/text()", "n1 n2 n7", "z", "tail", None)],
     '<order><item partnum="1">t<price>5</price>z</item><!--c--></order>'),
    ("upd-empty", lambda d: setattr(d.getroot()[0][0], "tail", ""),
     [("upd", "/order/item/text()", "n1 n2 n7", "", "tail", None)],
     '<order><item partnum="1">t<price>5</price></item><!--c--></order>'),
    ("del", lambda d: setattr(d.getroot()[0][0], "tail", None),
     [("del", "/order/item/text()", "n1 n2 n7", None, "tail", None)],
     '<order><item partnum="1">t<price>5</price></item><!--c--></order>'),
]


@pytest.mark.parametrize("name, act, expected, xml", TAIL_CASES, ids=[c[0] for c in TAIL_CASES])
def test_tail(name, act, expected, xml):
    doc, log = watch()
    act(doc)
    check(doc, log, expected, xml=xml)


def _del_missing_attr(d: Any) -> None:
    with pytest.raises(KeyError):
        del d.getroot()[0].attrib["nope"]


SAME_VALUE: dict[str, Callable[[Any], Any]] = {
    "text": lambda d: setattr(d.getroot()[0], "text", "t"),
    "text-none": lambda d: setattr(d.getroot(), "text", None),
    "tail": lambda d: setattr(d.getroot()[0][0], "tail", "tail"),
    "tail-none": lambda d: setattr(d.getroot()[0], "tail", None),
    "root-tail-none": lambda d: setattr(d.getroot(), "tail", None),
    "set": lambda d: d.getroot()[0].set("partnum", "1"),
    "attrib-setitem": lambda d: d.getroot()[0].attrib.__setitem__("partnum", "1"),
    "attrib-update": lambda d: d.getroot()[0].attrib.update({"partnum": "1"}),
    "attrib-pop-missing": lambda d: d.getroot()[0].attrib.pop("nope", None),
    "attrib-del-missing": _del_missing_attr,
    "tag": lambda d: setattr(d.getroot()[0], "tag", "item"),
    "comment": lambda d: setattr(d.getroot()[1], "text", "c"),
}


@pytest.mark.parametrize("act", SAME_VALUE.values(), ids=SAME_VALUE.keys())
def test_setting_the_current_value_emits_nothing(act):
    doc, log = watch()
    act(doc)
    check(doc, log, [], xml=BASE)


# --- renaming ----------------------------------------------------------------------------------

def test_rename_leaf_keeps_ids_and_its_tail_goes_along_as_in_a_move():
    doc, log = watch()
    _, _, price, _ = parts(doc)
    price.tag = "cost"
    check(doc, log, [
        ("del", "/order/item/text()", "n1 n2 n7", None, "tail", None),
        ("del", "/order/item/price/text()", "n1 n2 n5 n6", None, "5", None),
        ("del", "/order/item/price", "n1 n2 n5", None, None, None),
        ("ins", "/order/item/cost", "n1 n2 n5", None, None, 0),
        ("ins", "/order/item/cost/text()", "n1 n2 n5 n6", "5", None, 0),
        ("ins", "/order/item/text()", "n1 n2 n7", "tail", None, 1),
    ], xml='<order><item partnum="1">t<cost>5</cost>tail</item><!--c--></order>')


def test_rename_inner_element_renames_the_whole_subtree():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    item.tag = "line"
    check(doc, log, DEL_ITEM + [
        ("ins", "/order/line", "n1 n2", None, None, 0),
        ("ins", "/order/line/@partnum", "n1 n2 n3", "1", None, None),
        ("ins", "/order/line/text()", "n1 n2 n4", "t", None, 0),
        ("ins", "/order/line/price", "n1 n2 n5", None, None, 0),
        ("ins", "/order/line/price/text()", "n1 n2 n5 n6", "5", None, 0),
        ("ins", "/order/line/text()", "n1 n2 n7", "tail", None, 1),
    ], xml='<order><line partnum="1">t<price>5</price>tail</line><!--c--></order>')


def test_rename_with_own_tail_takes_the_tail_along_with_its_id():
    doc, log = watch('<order><a>x</a>y</order>')
    a = doc.getroot()[0]
    a.tag = "b"
    check(doc, log, [
        ("del", "/order/text()", "n1 n4", None, "y", None),
        ("del", "/order/a/text()", "n1 n2 n3", None, "x", None),
        ("del", "/order/a", "n1 n2", None, None, None),
        ("ins", "/order/b", "n1 n2", None, None, 0),
        ("ins", "/order/b/text()", "n1 n2 n3", "x", None, 0),
        ("ins", "/order/text()", "n1 n4", "y", None, 1),
    ], xml="<order><b>x</b>y</order>")


def test_rename_root_renames_every_path():
    doc, log = watch()
    doc.getroot().tag = "po"
    check(doc, log, DEL_COMMENT + DEL_ITEM + [
        ("del", "/order", "n1", None, None, None),
        ("ins", "/po", "n1", None, None, None),
        ("ins", "/po/item", "n1 n2", None, None, 0),
        ("ins", "/po/item/@partnum", "n1 n2 n3", "1", None, None),
        ("ins", "/po/item/text()", "n1 n2 n4", "t", None, 0),
        ("ins", "/po/item/price", "n1 n2 n5", None, None, 0),
        ("ins", "/po/item/price/text()", "n1 n2 n5 n6", "5", None, 0),
        ("ins", "/po/item/text()", "n1 n2 n7", "tail", None, 1),
        ("ins", "/po/comment()", "n1 n8", "c", None, 1),
    ], xml='<po><item partnum="1">t<price>5</price>tail</item><!--c--></po>')


# --- attributes --------------------------------------------------------------------------------

ATTR_CASES: list[tuple[str, Callable[[Any], Any], list[tuple[Any, ...]], str]] = [
    ("set-upd", lambda i: i.set("partnum", "2"),
     [("upd", "/order/item/@partnum", "n1 n2 n3", "2", "1", None)], 'partnum="2"'),
    ("set-ins", lambda i: i.set("x", "y"),
     [("ins", "/order/item/@x", "n1 n2 n9", "y", None, None)], 'partnum="1" x="y"'),
    ("set-empty", lambda i: i.set("partnum", ""),
     [("upd", "/order/item/@partnum", "n1 n2 n3", "", "1", None)], 'partnum=""'),
    ("setitem-upd", lambda i: i.attrib.__setitem__("partnum", "2"),
     [("upd", "/order/item/@partnum", "n1 n2 n3", "2", "1", None)], 'partnum="2"'),
    ("setitem-ins", lambda i: i.attrib.__setitem__("x", "y"),
     [("ins", "/order/item/@x", "n1 n2 n9", "y", None, None)], 'partnum="1" x="y"'),
    ("delitem", lambda i: i.attrib.__delitem__("partnum"),
     [("del", "/order/item/@partnum", "n1 n2 n3", None, "1", None)], ""),
    ("clear", lambda i: i.attrib.clear(),
     [("del", "/order/item/@partnum", "n1 n2 n3", None, "1", None)], ""),
]


@pytest.mark.parametrize("name, act, expected, attrs", ATTR_CASES,
                         ids=[c[0] for c in ATTR_CASES])
def test_attribute(name, act, expected, attrs):
    doc, log = watch()
    _, item, _, _ = parts(doc)
    act(item)
    space = " " if attrs else ""
    check(doc, log, expected,
          xml=f'<order><item{space}{attrs}>t<price>5</price>tail</item><!--c--></order>')


def test_attrib_pop():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    assert item.attrib.pop("partnum") == "1"
    check(doc, log, [("del", "/order/item/@partnum", "n1 n2 n3", None, "1", None)],
          xml="<order><item>t<price>5</price>tail</item><!--c--></order>")


def test_attrib_update_is_one_operation_delivered_after_it():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    seen: list[dict[str, str]] = []
    doc.mutations.connect(lambda sender, event: seen.append(dict(item.attrib)), weak=False)
    item.attrib.update({"partnum": "2", "x": "y"})
    check(doc, log, [
        ("upd", "/order/item/@partnum", "n1 n2 n3", "2", "1", None),
        ("ins", "/order/item/@x", "n1 n2 n9", "y", None, None),
    ], xml='<order><item partnum="2" x="y">t<price>5</price>tail</item><!--c--></order>')
    # both receivers' calls happened after the whole update: they saw its final state
    assert seen == [{"partnum": "2", "x": "y"}] * 2


def test_attrib_clear_in_reverse_order():
    doc, log = watch('<order><item a="1" b="2">t</item></order>')
    item = doc.getroot()[0]
    item.attrib.clear()
    check(doc, log, [
        ("del", "/order/item/@b", "n1 n2 n4", None, "2", None),
        ("del", "/order/item/@a", "n1 n2 n3", None, "1", None),
    ], xml="<order><item>t</item></order>")


# --- namespaces --------------------------------------------------------------------------------

NS = '<p:order xmlns:p="u"><p:item p:k="v">x</p:item></p:order>'


def test_namespaced_removal_uses_clark_paths():
    doc, log = watch(NS)
    root = doc.getroot()
    root.remove(root[0])
    check(doc, log, [
        ("del", "/{u}order/{u}item/text()", "n1 n2 n4", None, "x", None),
        ("del", "/{u}order/{u}item/@{u}k", "n1 n2 n3", None, "v", None),
        ("del", "/{u}order/{u}item", "n1 n2", None, None, None),
    ], xml='<p:order xmlns:p="u"/>')


def test_namespaced_attribute_set():
    doc, log = watch(NS)
    item = doc.getroot()[0]
    item.set("{u}z", "1")
    item.set("{u}k", "w")
    check(doc, log, [
        ("ins", "/{u}order/{u}item/@{u}z", "n1 n2 n5", "1", None, None),
        ("upd", "/{u}order/{u}item/@{u}k", "n1 n2 n3", "w", "v", None),
    ], xml='<p:order xmlns:p="u"><p:item p:k="w" p:z="1">x</p:item></p:order>')


def test_namespaced_element_declaring_its_prefix():
    doc, log = watch()
    thing = etree.Element("{u}thing", nsmap={"p": "u"})
    thing.set("{u}k", "v")
    doc.getroot().append(thing)
    check(doc, log, [
        ("ins", "/order/{u}thing", "n1 n9", 'xmlns:p="u"', None, 2),
        ("ins", "/order/{u}thing/@{u}k", "n1 n9 n10", "v", None, None),
    ], xml='<order><item partnum="1">t<price>5</price>tail</item><!--c-->'
           '<p:thing xmlns:p="u" p:k="v"/></order>')


def test_namespaced_element_declaring_a_default_namespace():
    doc, log = watch()
    doc.getroot().append(etree.Element("{d}z", nsmap={None: "d"}))
    check(doc, log, [("ins", "/order/{d}z", "n1 n9", 'xmlns="d"', None, 2)],
          xml='<order><item partnum="1">t<price>5</price>tail</item><!--c--><z xmlns="d"/>'
              '</order>')


def test_namespaced_element_using_an_inherited_declaration():
    doc, log = watch(NS)
    doc.getroot().append(etree.Element("{u}x"))
    check(doc, log, [("ins", "/{u}order/{u}x", "n1 n5", None, None, 1)],
          xml='<p:order xmlns:p="u"><p:item p:k="v">x</p:item><p:x/></p:order>')


# --- comments and processing instructions ----------------------------------------------------

def test_comment_insertion_with_tail():
    doc, log = watch()
    c = etree.Comment("hi")
    c.tail = "after"
    doc.getroot().append(c)
    check(doc, log, [
        ("ins", "/order/comment()", "n1 n9", "hi", None, 2),
        ("ins", "/order/text()", "n1 n10", "after", None, 3),
    ], xml='<order><item partnum="1">t<price>5</price>tail</item><!--c--><!--hi-->after</order>')


def test_comment_update():
    doc, log = watch()
    _, _, _, comment = parts(doc)
    comment.text = "d"
    check(doc, log, [("upd", "/order/comment()", "n1 n8", "d", "c", None)],
          xml='<order><item partnum="1">t<price>5</price>tail</item><!--d--></order>')


def test_pi_insertion_and_updates():
    doc, log = watch()
    root, item, _, _ = parts(doc)
    pi = etree.PI("tgt", "data")
    root.insert(0, pi)
    pi.text = "more"
    pi.target = "t2"
    item.append(etree.PI("solo"))
    check(doc, log, [
        ("ins", "/order/processing-instruction()", "n1 n9", "tgt data", None, 0),
        ("upd", "/order/processing-instruction()", "n1 n9", "tgt more", "tgt data", None),
        ("upd", "/order/processing-instruction()", "n1 n9", "t2 more", "tgt more", None),
        # etree.PI("solo") serialises <?solo ?>: empty content, valued "solo " (not <?solo?>)
        ("ins", "/order/item/processing-instruction()", "n1 n2 n10", "solo ", None, 1),
    ], xml='<order><?t2 more?><item partnum="1">t<price>5</price>tail<?solo ?></item>'
           '<!--c--></order>')


def test_pi_removal():
    doc, log = watch('<order><?tgt data?></order>')
    root = doc.getroot()
    del root[0]
    check(doc, log, [
        ("del", "/order/processing-instruction()", "n1 n2", None, "tgt data", None),
    ], xml="<order/>")


# --- moves -------------------------------------------------------------------------------------

INS_ITEM_AT_1_SAME_IDS = [
    ("ins", "/order/item", "n1 n2", None, None, 1),
    ("ins", "/order/item/@partnum", "n1 n2 n3", "1", None, None),
    ("ins", "/order/item/text()", "n1 n2 n4", "t", None, 0),
    ("ins", "/order/item/price", "n1 n2 n5", None, None, 0),
    ("ins", "/order/item/price/text()", "n1 n2 n5 n6", "5", None, 0),
    ("ins", "/order/item/text()", "n1 n2 n7", "tail", None, 1),
]

MOVES_WITHIN_PARENT: dict[str, Callable[[Any, Any, Any], Any]] = {
    "append": lambda root, item, comment: root.append(item),
    "insert": lambda root, item, comment: root.insert(2, item),
    "extend": lambda root, item, comment: root.extend([item]),
    "addnext": lambda root, item, comment: comment.addnext(item),
}


@pytest.mark.parametrize("move", MOVES_WITHIN_PARENT.values(), ids=MOVES_WITHIN_PARENT.keys())
def test_move_within_the_same_parent_keeps_ids(move):
    doc, log = watch()
    root, item, _, comment = parts(doc)
    move(root, item, comment)
    check(doc, log, DEL_ITEM + INS_ITEM_AT_1_SAME_IDS,
          xml='<order><!--c--><item partnum="1">t<price>5</price>tail</item></order>')
    assert doc.id_of(item) == "n2"


def test_move_of_a_comment_keeps_its_id():
    doc, log = watch()
    root, _, _, comment = parts(doc)
    root.insert(0, comment)
    check(doc, log, DEL_COMMENT + [("ins", "/order/comment()", "n1 n8", "c", None, 0)],
          xml='<order><!--c--><item partnum="1">t<price>5</price>tail</item></order>')


def test_move_to_another_parent_keeps_ids():
    doc, log = watch()
    root, _, price, _ = parts(doc)
    root.append(price)
    check(doc, log, DEL_PRICE + [
        ("ins", "/order/price", "n1 n5", None, None, 2),
        ("ins", "/order/price/text()", "n1 n5 n6", "5", None, 0),
        ("ins", "/order/text()", "n1 n7", "tail", None, 3),
    ], xml='<order><item partnum="1">t</item><!--c--><price>5</price>tail</order>')
    assert doc.path_of(price).ids == ("n1", "n5")


def test_setitem_moving_an_element_over_a_comment():
    doc, log = watch()
    root, _, price, _ = parts(doc)
    root[1] = price
    check(doc, log, DEL_COMMENT + DEL_PRICE + [
        ("ins", "/order/price", "n1 n5", None, None, 1),
        ("ins", "/order/price/text()", "n1 n5 n6", "5", None, 0),
        ("ins", "/order/text()", "n1 n7", "tail", None, 2),
    ], xml='<order><item partnum="1">t</item><price>5</price>tail</order>')


def test_move_to_another_watched_document():
    src, src_log = watch(name="A")
    dst, dst_log = watch("<list/>", name="B")
    _, _, price, _ = parts(src)
    dst.getroot().append(price)
    check(src, src_log, DEL_PRICE,
          xml='<order><item partnum="1">t</item><!--c--></order>')
    assert all(e.doc == "A" for e in src_log)
    check(dst, dst_log, [
        ("ins", "/list/price", "n1 n2", None, None, 0),
        ("ins", "/list/price/text()", "n1 n2 n3", "5", None, 0),
        ("ins", "/list/text()", "n1 n4", "tail", None, 1),
    ], xml="<list><price>5</price>tail</list>")
    assert all(e.doc == "B" for e in dst_log)
    assert src.id_of(price) is None and dst.id_of(price) == "n2"


def test_move_between_documents_of_one_monitor_shares_the_clock():
    m = xmlevents.Monitor()
    src, src_log = watch(name="A", monitor=m)
    dst, dst_log = watch("<list/>", name="B", monitor=m)
    _, _, price, _ = parts(src)
    dst.getroot().append(price)
    check(src, src_log, DEL_PRICE)
    check(dst, dst_log, [
        ("ins", "/list/price", "n1 n2", None, None, 0),
        ("ins", "/list/price/text()", "n1 n2 n3", "5", None, 0),
        ("ins", "/list/text()", "n1 n4", "tail", None, 1),
    ], first_ts=4)


def test_move_out_to_an_unwatched_tree_reports_only_the_removal():
    doc, log = watch()
    _, _, price, _ = parts(doc)
    bag = etree.Element("bag")
    bag.append(price)
    check(doc, log, DEL_PRICE, xml='<order><item partnum="1">t</item><!--c--></order>')
    price.text = "6"  # no longer watched
    price.set("x", "y")
    assert log[3:] == []
    assert etree.tostring(bag) == b'<bag><price x="y">6</price>tail</bag>'


# --- SubElement ----------------------------------------------------------------------------------

INS_QTY = [
    ("ins", "/order/item/qty", "n1 n2 n9", None, None, 1),
    ("ins", "/order/item/qty/@unit", "n1 n2 n9 n10", "kg", None, None),
]
XML_QTY = '<order><item partnum="1">t<price>5</price>tail<qty unit="kg"/></item><!--c--></order>'


@pytest.mark.parametrize("factory", ["xmlevents", "etree"])
def test_subelement_is_reported_at_once(factory):
    assert etree.SubElement is xmlevents.SubElement is xmlevents.dom.SubElement
    make = xmlevents.SubElement if factory == "xmlevents" else etree.SubElement
    doc, log = watch()
    _, item, _, _ = parts(doc)
    qty = make(item, "qty", unit="kg")
    check(doc, log, INS_QTY, xml=XML_QTY)
    assert doc.id_of(qty) == "n9"


def test_original_subelement_is_reported_when_the_next_operation_starts():
    doc, log = watch()
    root, item, _, _ = parts(doc)
    _functions._LXML["SubElement"](item, "qty", unit="kg")
    assert log == []
    root.text = "x"
    check(doc, log, INS_QTY + [("ins", "/order/text()", "n1 n11", "x", None, 0)])


def test_original_subelement_is_reported_at_flush():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    _functions._LXML["SubElement"](item, "qty", unit="kg")
    assert log == []
    doc.flush()
    check(doc, log, INS_QTY, xml=XML_QTY)


def test_original_subelement_then_an_operation_on_the_new_element():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    qty = _functions._LXML["SubElement"](item, "qty", unit="kg")
    qty.text = "3"  # an operation on the document: the stray first, then the text
    assert [tup(e) for e in log] == INS_QTY + [
        ("ins", "/order/item/qty/text()", "n1 n2 n9 n11", "3", None, 0)]
    check(doc, log, INS_QTY + [
        ("ins", "/order/item/qty/text()", "n1 n2 n9 n11", "3", None, 0)])


def test_original_subelement_then_removed_by_the_next_operation():
    doc, log = watch()
    _, item, _, _ = parts(doc)
    qty = _functions._LXML["SubElement"](item, "qty")
    item.remove(qty)  # the stray is reported as the operation starts, then removed by it
    check(doc, log, [
        ("ins", "/order/item/qty", "n1 n2 n9", None, None, 1),
        ("del", "/order/item/qty", "n1 n2 n9", None, None, None),
    ], xml=BASE)


def test_original_subelement_then_moved_by_the_next_operation():
    doc, log = watch()
    root, item, _, _ = parts(doc)
    qty = _functions._LXML["SubElement"](item, "qty")
    root.append(qty)  # reported, then moved within the document: same id
    check(doc, log, [
        ("ins", "/order/item/qty", "n1 n2 n9", None, None, 1),
        ("del", "/order/item/qty", "n1 n2 n9", None, None, None),
        ("ins", "/order/qty", "n1 n9", None, None, 2),
    ], xml='<order><item partnum="1">t<price>5</price>tail</item><!--c--><qty/></order>')


# --- module functions ------------------------------------------------------------------------

STRIP_TAGS = DEL_PRICE + [("upd", "/order/item/text()", "n1 n2 n4", "t5tail", "t", None)]


def test_strip_tags():
    assert etree.strip_tags is xmlevents.strip_tags
    doc, log = watch()
    xmlevents.strip_tags(doc.getroot(), "price")
    check(doc, log, STRIP_TAGS, xml='<order><item partnum="1">t5tail</item><!--c--></order>')


def test_strip_elements():
    assert etree.strip_elements is xmlevents.strip_elements
    doc, log = watch()
    xmlevents.strip_elements(doc.tree, "price")
    check(doc, log, DEL_PRICE, xml='<order><item partnum="1">t</item><!--c--></order>')


def test_strip_elements_keeping_the_tail():
    doc, log = watch()
    xmlevents.strip_elements(doc.getroot(), "price", with_tail=False)
    check(doc, log, DEL_PRICE + [
        ("upd", "/order/item/text()", "n1 n2 n4", "ttail", "t", None),
    ], xml='<order><item partnum="1">ttail</item><!--c--></order>')


def test_strip_attributes():
    assert etree.strip_attributes is xmlevents.strip_attributes
    doc, log = watch()
    xmlevents.strip_attributes(doc.getroot(), "partnum")
    check(doc, log, [("del", "/order/item/@partnum", "n1 n2 n3", None, "1", None)],
          xml="<order><item>t<price>5</price>tail</item><!--c--></order>")


def test_unpatched_strip_tags_is_reported_at_flush():
    doc, log = watch()
    _functions._LXML["strip_tags"](doc.getroot(), "price")
    assert log == []
    doc.flush()
    check(doc, log, STRIP_TAGS, xml='<order><item partnum="1">t5tail</item><!--c--></order>')


def test_indent():
    assert etree.indent is xmlevents.indent
    doc, log = watch()
    xmlevents.indent(doc.getroot())
    check(doc, log, [
        ("ins", "/order/text()", "n1 n9", "\n  ", None, 0),
        ("ins", "/order/text()", "n1 n10", "\n  ", None, 1),
        ("ins", "/order/text()", "n1 n11", "\n", None, 2),
    ], xml='<order>\n  <item partnum="1">t<price>5</price>tail</item>\n  <!--c-->\n</order>')


# --- errors: nothing changes, nothing is reported ------------------------------------------------

def _html() -> Any:
    return lxml.html.fromstring("<p>x</p>")


ERRORS: dict[str, tuple[type[Exception], Callable[[Any, Any, Any], Any]]] = {
    "root-tail": (ValueError, lambda root, item, price: setattr(root, "tail", "x")),
    "root-tail-empty": (ValueError, lambda root, item, price: setattr(root, "tail", "")),
    "root-addnext": (ValueError, lambda root, item, price: root.addnext(etree.Element("x"))),
    "root-addprevious": (ValueError,
                         lambda root, item, price: root.addprevious(etree.Element("x"))),
    "root-addnext-comment": (ValueError,
                             lambda root, item, price: root.addnext(etree.Comment("x"))),
    "html-append": (TypeError, lambda root, item, price: root.append(_html())),
    "html-insert": (TypeError, lambda root, item, price: root.insert(0, _html())),
    "html-extend": (TypeError,
                    lambda root, item, price: root.extend([etree.Element("ok"), _html()])),
    "html-replace": (TypeError, lambda root, item, price: item.replace(price, _html())),
    "html-setitem": (TypeError, lambda root, item, price: item.__setitem__(0, _html())),
    "html-setslice": (TypeError, lambda root, item, price: root.__setitem__(
        slice(0, 1), [_html()])),
    "html-addnext": (TypeError, lambda root, item, price: price.addnext(_html())),
    "html-addprevious": (TypeError, lambda root, item, price: price.addprevious(_html())),
    "cycle": (ValueError, lambda root, item, price: price.append(item)),
}


@pytest.mark.parametrize("exc, act", ERRORS.values(), ids=ERRORS.keys())
def test_refused_calls_change_and_report_nothing(exc, act):
    doc, log = watch()
    root, item, price, _ = parts(doc)
    before = etree.tostring(doc.tree)
    with pytest.raises(exc):
        act(root, item, price)
    assert etree.tostring(doc.tree) == before
    assert root.tail is None
    check(doc, log, [], xml=BASE)


def _failed_call_is_reported_as_it_happened(doc: Any, log: list[PrimitiveEvent],
                                            if_changed: list[tuple[Any, ...]],
                                            changed_xml: str) -> None:
    """lxml refused part of the call: either nothing changed and nothing is reported, or
    what lxml did change is reported by the call itself (not later, at a flush)."""
    if xml_of(doc) == BASE:
        check(doc, log, [], xml=BASE)
    else:
        check(doc, log, if_changed, xml=changed_xml)


def test_extend_refused_half_way():
    doc, log = watch()
    root = doc.getroot()
    with pytest.raises(ValueError):
        root.extend([etree.Element("new"), root])  # lxml appends "new", then refuses root
    _failed_call_is_reported_as_it_happened(
        doc, log, [("ins", "/order/new", "n1 n9", None, None, 2)],
        '<order><item partnum="1">t<price>5</price>tail</item><!--c--><new/></order>')


def test_slice_assignment_refused_half_way():
    doc, log = watch()
    root, item, _, _ = parts(doc)
    with pytest.raises(ValueError):
        item[0:1] = [etree.Element("new"), root]
    _failed_call_is_reported_as_it_happened(
        doc, log, DEL_PRICE + [("ins", "/order/item/new", "n1 n2 n9", None, None, 0)],
        '<order><item partnum="1">t<new/></item><!--c--></order>')


def test_html_element_is_left_where_it_was():
    doc, log = watch()
    h = _html()
    body = h.getparent()
    with pytest.raises(TypeError):
        doc.getroot().append(h)
    assert h.getparent() is body
    check(doc, log, [], xml=BASE)


# --- event fields ------------------------------------------------------------------------------

def test_ticks_ids_and_document_name_over_several_operations():
    doc, log = watch(name="po")
    root, item, price, comment = parts(doc)
    item.set("partnum", "2")             # e1
    price.text = "6"                     # e2
    comment.text = "d"                   # e3
    root.append(frag("<n>1</n>"))        # e4, e5
    del item[0]                          # e6, e7, e8
    check(doc, log, [
        ("upd", "/order/item/@partnum", "n1 n2 n3", "2", "1", None),
        ("upd", "/order/item/price/text()", "n1 n2 n5 n6", "6", "5", None),
        ("upd", "/order/comment()", "n1 n8", "d", "c", None),
        ("ins", "/order/n", "n1 n9", None, None, 2),
        ("ins", "/order/n/text()", "n1 n9 n10", "1", None, 0),
        ("del", "/order/item/text()", "n1 n2 n7", None, "tail", None),
        ("del", "/order/item/price/text()", "n1 n2 n5 n6", None, "6", None),
        ("del", "/order/item/price", "n1 n2 n5", None, None, None),
    ], xml='<order><item partnum="2">t</item><!--d--><n>1</n></order>')
    assert [e.id for e in log] == [f"e{k}" for k in range(1, 9)]
    assert {e.doc for e in log} == {"po"}
    d = log[3].to_dict()
    assert d == {"id": "e4", "ts": 4, "op": "ins", "path": "/order/n", "ids": ["n1", "n9"],
                 "doc": "po", "index": 2}
    assert PrimitiveEvent.from_dict(d) == log[3]
    assert log[0].to_dict() == {"id": "e1", "ts": 1, "op": "upd",
                                "path": "/order/item/@partnum", "ids": ["n1", "n2", "n3"],
                                "doc": "po", "value": "2", "old": "1"}
