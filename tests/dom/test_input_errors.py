"""Snapshots load back whatever lxml can hold, and bad input is a project error naming the
place (issue 16, items 5 and 6)."""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest
from lxml import etree

import xmlevents
from xmlevents.dom import WatchTypeError, XMLSyntaxError, from_snapshot

BIG = 11 * 1024 * 1024  # over libxml2's 10 MB limit for one text


def test_a_deep_document_with_a_huge_text_records_replays_and_snapshots() -> None:
    doc = xmlevents.fromstring("<r/>")
    cur = doc.getroot()
    with doc.record() as rec:
        for _ in range(300):  # deeper than libxml2's default 256
            cur = etree.SubElement(cur, "c")
        cur.text = "z" * BIG
        cur.set("a", "y" * BIG)
    assert etree.tostring(rec.replay()) == doc.tostring()
    copy = from_snapshot(doc.snapshot())
    assert copy.tostring() == doc.tostring()


def test_input_keeps_libxml2_s_limits() -> None:
    """Only trusted text (snapshots, copies) lifts the limits; input does not."""
    deep = "<c>" * 300 + "</c>" * 300
    with pytest.raises(XMLSyntaxError, match="doc"):
        xmlevents.fromstring(deep)


def test_wrapping_a_foreign_tree_with_a_huge_text_copies_it() -> None:
    html = lxml.html.fromstring("<div><p>x</p></div>")
    html.text = "y" * BIG
    doc = xmlevents.wrap(html)
    assert len(doc.getroot().find(".//div").text) == BIG


def test_wrapping_a_foreign_tree_with_an_entity_reference_says_what_to_do() -> None:
    parser = etree.XMLParser(resolve_entities=False)
    parser.set_element_class_lookup(etree.ElementDefaultClassLookup())  # lxml's classes
    root = etree.fromstring(b'<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>', parser)
    with pytest.raises(WatchTypeError, match="entity reference &e; \\(line 1\\), which the "
                                             "watched model has no node for"):
        xmlevents.wrap(root)


def test_a_file_that_is_not_in_its_encoding_is_a_syntax_error_with_its_place(
        tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_bytes(b"<a>\n\xff\xfe</a>")
    with pytest.raises(XMLSyntaxError) as info:
        xmlevents.parse(path)
    assert (info.value.source, info.value.line) == (str(path), 2)
    assert "Invalid bytes in character encoding" in str(info.value)


def test_text_with_an_encoding_declaration_is_parsed_as_the_text_it_is() -> None:
    doc = xmlevents.fromstring('<?xml version="1.0" encoding="ISO-8859-1"?><a>é</a>')
    assert doc.getroot().text == "é"
    with pytest.raises(XMLSyntaxError, match="not valid Unicode text"):
        xmlevents.fromstring('<?xml version="1.0"?><a>\ud800</a>')
