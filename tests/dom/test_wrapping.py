"""Wrapping: parse, fromstring and wrap; hardened parsing; ids (issue 5, item 1)."""

from __future__ import annotations

import lxml.html
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

import xmlevents
import xmlevents.dom as xd
from xmlevents.dom import WatchedElement, XMLSyntaxError, hardened_parser

PO = ('<?xml version="1.0"?>\n<!DOCTYPE order>\n<order xmlns:x="urn:x" id="o">'
      '<item partnum="1">first<price>5</price>t</item><!--note--><?pi data?>'
      '<x:item x:a="2"/></order>')


def test_parse_a_file_names_the_document_after_it(tmp_path):
    path = tmp_path / "po.xml"
    path.write_text(PO)
    doc = xmlevents.parse(str(path))
    assert doc.name == str(path)
    assert doc.getroot().tag == "order"
    assert etree.tostring(doc.tree) == etree.tostring(etree.parse(str(path)))


def test_serialisation_is_exactly_lxml_s_and_never_shows_ids():
    doc = xmlevents.fromstring(PO.encode())
    plain = etree.fromstring(PO.encode(), hardened_parser(plain=True)).getroottree()
    assert etree.tostring(doc.tree) == etree.tostring(plain)
    assert b"n1" not in etree.tostring(doc.tree)
    assert isinstance(doc.getroot(), WatchedElement)


def test_ids_survive_sibling_changes_and_moves():
    doc = xmlevents.fromstring(PO.encode())
    root = doc.getroot()
    first = root[0]
    ident = doc.id_of(first)
    root.insert(0, etree.Element("item"))
    del root[-1]
    assert doc.id_of(first) == ident
    other = etree.SubElement(root, "box")
    other.append(first)
    assert doc.id_of(first) == ident
    assert str(doc.path_of(first)) == f"/order[n1]/box[{doc.id_of(other)}]/item[{ident}]"
    assert doc.node(ident) is first


def test_not_well_formed_xml_is_reported_with_its_position():
    with pytest.raises(XMLSyntaxError) as info:
        xmlevents.fromstring("<order>\n  <item>\n</order>", name="po")
    err = info.value
    assert (err.source, err.line) == ("po", 3)
    assert err.column is not None and str(err).startswith("po:3:")


def test_parsing_is_hardened_against_external_entities(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    text = (f'<!DOCTYPE r [<!ENTITY s SYSTEM "file://{secret}"><!ENTITY i "inner">]>'
            '<r>&s;|&i;</r>')
    try:
        doc = xmlevents.fromstring(text)
    except XMLSyntaxError:
        return  # refusing the document is as safe as not expanding the entity
    assert "TOP SECRET" not in etree.tostring(doc.tree, encoding="unicode")
    assert "inner" in doc.getroot().xpath("string()")


def test_wrap_watches_an_lxml_tree_in_place():
    root = etree.fromstring("<order><item/></order>")
    doc = xmlevents.wrap(root)
    assert doc.getroot() is root
    log: list = []
    doc.mutations.connect(lambda d, event: log.append(event), weak=False)
    root[0].set("partnum", "1")
    assert [str(e.pi.pt) for e in log] == ["/order/item/@partnum"]
    with pytest.raises(ValueError, match="already watched"):
        xmlevents.wrap(root[0])


def test_wrap_copies_a_tree_of_foreign_classes():
    html = lxml.html.fromstring("<div><p>x</p></div>")
    doc = xmlevents.wrap(html)
    assert doc.getroot() is not html
    assert etree.tostring(doc.getroot()) == etree.tostring(html.getroottree().getroot())
    assert isinstance(doc.getroot(), WatchedElement)


def test_trees_no_one_watches_behave_as_lxml():
    root = etree.fromstring("<a><b/></a>")
    root.append(etree.Element("c"))
    root.attrib.update({"x": "1"})
    root[0].tag = "bb"
    etree.strip_tags(root, "c")
    assert etree.tostring(root) == b'<a x="1"><bb/></a>'


_names = st.sampled_from(["a", "b", "item", "{urn:x}q"])


@st.composite
def trees(draw, depth=3):
    e = etree.Element(draw(_names))
    for name in draw(st.lists(st.sampled_from(["k", "v", "{urn:y}w"]), max_size=2, unique=True)):
        e.set(name, draw(st.text("xyz<&\"", max_size=3)))
    e.text = draw(st.none() | st.text("ab ", max_size=3))
    if depth:
        for child in draw(st.lists(trees(depth=depth - 1), max_size=3)):
            child.tail = draw(st.none() | st.text("cd\n", max_size=3))
            e.append(child)
    return e


@given(trees())
def test_snapshot_replays_to_the_document(root):
    doc = xmlevents.wrap(root)
    snap = doc.snapshot()
    assert etree.tostring(xd.replay(snap, [])) == etree.tostring(doc.tree)
    assert len({n[0] for n in snap.nodes}) == len(snap.nodes)
    doc.close()


def test_from_snapshot_resumes_a_document_with_its_ids() -> None:
    """A document rebuilt from a snapshot has the snapshot's ids; new ids never collide; its
    events replay from that snapshot."""
    doc = xmlevents.fromstring('<r a="1">t<b>u</b>v<!--c--><?p  x?></r>', name="one")
    doc.getroot()[1].text = None  # a comment with no content at all
    snap = doc.snapshot()
    doc.close()
    again = xd.from_snapshot(snap, name="two")
    try:
        assert again.snapshot() == snap
        with again.record() as rec:
            etree.SubElement(again.getroot(), "n").text = "w"
        new_ids = {i for e in rec.events for i in e.pi.ids} - {n[0] for n in snap.nodes}
        assert len(new_ids) == 2
        assert etree.tostring(xd.replay(snap, rec.events)) == again.tostring()
    finally:
        again.close()


def test_from_snapshot_refuses_a_snapshot_that_does_not_match() -> None:
    with pytest.raises(xd.EventLogError, match="cannot be loaded"):
        xd.from_snapshot(xd.Snapshot("<r/>", (("n1", "node", 0, None), ("n2", "attr", 0, "a"))))


def test_empty_document_gets_its_root_as_insertions() -> None:
    doc = xd.empty(name="e")
    try:
        with doc.record() as rec:
            doc.setroot(etree.fromstring('<r k="1"><a/>t</r>'))
        assert [(e.op.value, str(e.pi.pt), e.index) for e in rec.events] == [
            ("ins", "/r", 0), ("ins", "/r/@k", None), ("ins", "/r/a", 0), ("ins", "/r/text()", 1)]
        assert etree.tostring(rec.replay()) == doc.tostring()
        with pytest.raises(ValueError):
            doc.setroot(doc.getroot()[0])  # has a parent
    finally:
        doc.close()
