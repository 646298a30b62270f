"""The queries select what lxml's ``xpath()`` selects on XML shaped as the files people have
(issue 33): DocBook, TEI, SVG, Atom, OpenStreetMap, a Maven pom and an Android layout, small
files written for these tests (``tests/stream/corpus``) with what the real ones hold — a
default namespace, prefixed attributes, indentation, mixed content, comments, CDATA sections
(one holding ``<!ENTITY``), processing instructions, escaped ampersands in attribute
values. Hand-written queries and random ones over each file's own names; each match's
attributes are lxml's too."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from lxml import etree

from tests.strategies import examples
from tests.stream.reference import compiles, oracle, queries
from xmlevents.stream import Query

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted(p.name for p in CORPUS.iterdir())

# queries every file is asked, with "p:" for its root's namespace (none for OSM and Android)
COMMON = ["//..", "//.", "//*", "//parent::*", "//ancestor::*", "//ancestor-or-self::*",
          "//following-sibling::*", "//preceding-sibling::*", "//*[not(*)]", "//*[..//..]",
          "//*[1]", "//*[last()]", "//*[not(following-sibling::*)]/..", "/*/*[last()]/..",
          "//*[not(.//..)]", "//./parent::*[preceding-sibling::*]", "/*//.",
          "//*[following-sibling::* and not(preceding-sibling::*)]"]
SPECIFIC = {
    "docbook.xml": ["//p:section[p:title]/p:para", "//p:para/..", "//p:para//parent::*",
                    "//p:listitem[not(p:para)]", "//p:section[.//p:section]/p:title",
                    "//p:programlisting/.."],
    "tei.xml": ["//p:l[p:persName]", "//p:lg/p:l[last()]", "//p:note//..", "//p:div[not(p:lg)]",
                "//p:l//following-sibling::*", "//p:hi/ancestor::p:div"],
    "icons.svg": ["//p:g[p:rect]/p:use", "//p:g[not(*)]", "//p:text//..", "//p:symbol/p:path",
                  "//p:defs/*[last()]"],
    "feed.atom": ["//p:entry[p:summary]/p:title", "//p:entry[not(p:content)]",
                  "//p:entry/p:title//..", "//p:link[following-sibling::p:link]"],
    "map.osm": ["//way[nd]/tag", "//node[tag]", "//node[not(*)]", "//relation/member/..",
                "//nd[last()]", "//tag/preceding-sibling::*"],
    "pom.xml": ["/p:project/p:dependencies/p:dependency[p:scope]/p:artifactId",
                "//p:dependency[not(p:scope)]", "//p:configuration/*", "//p:version/.."],
    "layout.xml": ["//LinearLayout/*", "//ScrollView//EditText", "//*[not(*)]/..",
                   "/LinearLayout/*[last()]", "//merge/preceding-sibling::*"],
}


@cache
def _file(name: str) -> tuple[bytes, dict[str, str], tuple[str, ...]]:
    """The file's bytes, its prefix map (``p`` for the root's namespace) and its element
    names as a query writes them."""
    data = (CORPUS / name).read_bytes()
    root = etree.fromstring(data)
    uri = etree.QName(root).namespace
    namespaces = {"p": uri} if uri else {}
    names: dict[str, None] = {}
    for el in root.iter(etree.Element):
        q = etree.QName(el)
        if q.namespace == uri:
            names["p:" + q.localname if uri else q.localname] = None
    return data, namespaces, tuple(names)


def _same_as_lxml(name: str, query: str) -> None:
    data, namespaces, _ = _file(name)
    found = list(Query(query, namespaces=namespaces).evaluate(data))
    assert len(found) == len({m.node for m in found}), "a match reported twice"
    assert {m.node for m in found} == oracle(query, data, namespaces), query
    elements = list(etree.fromstring(data).iter(etree.Element))
    for m in found:
        assert dict(m.attributes) == dict(elements[m.node - 1].attrib), (query, m.path)


def test_the_corpus_has_each_shape() -> None:
    """Seven files, each with text between its elements, and the shapes the issue lists."""
    assert FILES == ["docbook.xml", "feed.atom", "icons.svg", "layout.xml", "map.osm",
                     "pom.xml", "tei.xml"]
    for name in FILES:
        root = etree.fromstring(_file(name)[0])
        assert any(el.tail and not el.tail.strip() for el in root.iter()), name
    assert b"<!ENTITY" in _file("docbook.xml")[0]


@pytest.mark.parametrize(("name", "query"),
                         [(n, q) for n in FILES for q in COMMON + SPECIFIC[n]])
def test_hand_written_queries_select_what_lxml_selects(name: str, query: str) -> None:
    """Each file with the queries every file gets (text reached along every axis) and
    queries written for its shape: lxml's node set, lxml's attribute values."""
    _same_as_lxml(name, query)


@pytest.mark.parametrize("name", FILES)
def test_random_queries_select_what_lxml_selects(name: str) -> None:
    """Random queries of the subset over the file's own names (positions and negation
    included)."""
    names = _file(name)[2]

    @settings(max_examples=examples(80), deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(st.data())
    def check(data: st.DataObject) -> None:
        query = data.draw(queries(names=names[:6]))
        ns = _file(name)[1]
        assume(_compiles(query, ns))
        _same_as_lxml(name, query)

    check()


def _compiles(query: str, namespaces: dict[str, str]) -> bool:
    if not namespaces:
        return compiles(query)
    from xmlevents.stream import UnsupportedQueryError
    try:
        Query(query, namespaces=namespaces)
    except UnsupportedQueryError as exc:
        assert "conditions that later nodes look back at" in exc.reason, exc
        return False
    return True
