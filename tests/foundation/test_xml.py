"""One hardened XML parser policy (issue 28): no reader of xmlevents expands an entity from
input. Each reader gets a small billion-laughs document, its entities in the text and in an
attribute (libxml2 expands an attribute's even with ``resolve_entities=False``), and refuses
it clearly, naming the place."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

import xmlevents
from xmlevents._foundation.xml import EntitiesRefused, parse_bytes, parser
from xmlevents.dom import EventLogError, Replayer, Snapshot, XMLSyntaxError, from_snapshot
from xmlevents.replay import parse_version
from xmlevents.stream import DocumentError, matches

# 10**4 "ha"s from 70 bytes of entities: small, but each reader would show the expansion.
LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE r [\n <!ENTITY a "ha">\n'
          + "".join(f' <!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">\n'
                    for i in range(4))
          + ']>\n<r x="&e;"><b>&e;</b></r>')
DECLARED_AT = 3  # the line of the first <!ENTITY


def test_the_watched_documents_refuse_it_with_the_line(tmp_path: Path) -> None:
    """dom's parse and fromstring (text and bytes) expanded internal entities."""
    path = tmp_path / "laughs.xml"
    path.write_text(LAUGHS)
    for read in (lambda: xmlevents.fromstring(LAUGHS, name="laughs"),
                 lambda: xmlevents.fromstring(LAUGHS.encode(), name="laughs"),
                 lambda: xmlevents.parse(str(path), name="laughs"),
                 lambda: xmlevents.parse(path.open("rb"), name="laughs")):
        with pytest.raises(XMLSyntaxError, match="declares entities") as info:
            read()
        assert info.value.source == "laughs"
    assert info.value.line in (1, DECLARED_AT)  # a file object: its bytes are not at hand
    with pytest.raises(XMLSyntaxError) as info:
        xmlevents.fromstring(LAUGHS)
    assert info.value.line == DECLARED_AT


def test_a_snapshot_with_entities_is_refused_before_a_huge_parser_meets_it() -> None:
    """dom's snapshot reader parses with libxml2's limits lifted (huge_tree): it expanded
    a snapshot's internal entities without bound; now the snapshot is refused."""
    snapshot = Snapshot(LAUGHS, (("r1", "node", 0, None), ("b1", "node", 1, None)))
    with pytest.raises(EventLogError, match="declares entities"):
        from_snapshot(snapshot)
    with pytest.raises(EventLogError, match="declares entities"):
        Replayer(snapshot)


def test_the_service_refuses_it() -> None:
    """The service's markup (already hardened): refused as a DOCTYPE at line 2."""
    pytest.importorskip("starlette")
    from xmlevents.service import MarkupError, parse_markup

    markup = LAUGHS.replace("<r x=\"&e;\"><b>&e;</b></r>",
                            "<expression operator='a'/>").replace("DOCTYPE r", "DOCTYPE e")
    with pytest.raises(MarkupError, match="DOCTYPE") as info:
        parse_markup(markup)
    assert info.value.line == 2


def test_the_stream_refuses_it() -> None:
    """stream's incremental parser refuses it before the root element is read."""
    with pytest.raises(DocumentError, match="declares entities"):
        list(matches("//b", LAUGHS.encode()))


def test_a_replayed_version_is_refused_with_the_line() -> None:
    """The replay's versions (dom's parser, input from histories) expanded them too."""
    for version in (LAUGHS, LAUGHS.encode()):
        with pytest.raises(etree.XMLSyntaxError, match="declares entities") as info:
            parse_version(version)
        assert info.value.position == (DECLARED_AT, 1)


def test_an_entity_declaration_that_is_no_declaration_passes() -> None:
    """"<!ENTITY" in a comment or a CDATA section declares nothing: the pre-scan that keeps
    a huge parser from meeting a declaration does not refuse it (issue 33's stream refusal is
    not copied here)."""
    text = b"<!-- <!ENTITY e 'x'> --><a><![CDATA[<!ENTITY]]></a>"
    assert parse_bytes(text, parser(huge=True)).getroot().text == "<!ENTITY"
    assert xmlevents.fromstring(text).getroot().text == "<!ENTITY"


def test_an_undeclared_entity_of_an_external_subset_is_refused() -> None:
    """A reference to an entity declared outside the document (not read): no node for it."""
    with pytest.raises(EntitiesRefused, match="&x;"):
        parse_bytes(b"<!DOCTYPE a SYSTEM 'a.dtd'>\n<a>\n&x;</a>", parser())


def test_the_policy_cannot_be_loosened() -> None:
    """Options add to the policy; one that would loosen it is refused, naming it."""
    with pytest.raises(xmlevents.XmlEventsError, match="resolve_entities=True"):
        parser(resolve_entities=True)
    with pytest.raises(xmlevents.XmlEventsError, match="no_network=False"):
        xmlevents.fromstring("<a/>", no_network=False)
    assert parser(remove_blank_text=True) is not None


def test_the_algebra_never_loads_the_xml_policy() -> None:
    """lxml and this module stay out of the algebra: reading events loads neither."""
    code = ("import sys, xmlevents.algebra as a; list(a.read_events(['{\"op\": \"ins\", "
            "\"path\": \"/a\", \"ids\": [\"1\"]}'])); print('xmlevents._foundation.xml' in "
            "sys.modules, 'lxml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]
