"""Text as lxml gives it (issue 33): attribute values decoded exactly, and XPath's text nodes
in the tree the queries run on, so that ``//..`` or ``//following-sibling::b`` select what
lxml's ``xpath()`` selects."""

from __future__ import annotations

import random

import pytest
from lxml import etree

from tests.stream.reference import check_earliest, detections, oracle
from xmlevents.stream import Query, UnsupportedQueryError, compile_xpath, matches


def test_attribute_values_with_ampersands_are_decoded_as_lxml_does() -> None:
    """``&amp;``, ``&#38;`` and ``&#x26;`` in an attribute value are each one ``&``."""
    doc = b'<r a="x&amp;y" c="&#38;&#x26;" d="&lt;&amp;#38;&gt;"/>'
    found = next(matches("/r", doc)).attributes
    assert found == {"a": "x&y", "c": "&&", "d": "<&#38;>"}
    assert found == dict(etree.fromstring(doc).attrib)


def test_attribute_values_equal_lxml_on_random_references() -> None:
    """On random mixes of references, whitespace and characters, each value is the one
    lxml's tree has (the parser target's values are decoded, not re-escaped)."""
    pieces = ["&amp;", "&#38;", "&#x26;", "&lt;", "&gt;", "&quot;", "&apos;", "&#10;",
              "&#9;", "&#13;", "\n", "\t", "\r\n", "x", "#38;", "&amp;#38;", "é", "&#233;",
              "&#x10000;", " ", "&#60;", "&amp;amp;"]
    rng = random.Random(33)
    for _ in range(300):
        value = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        doc = f'<r a="{value}"><b c="{value}"/></r>'.encode()
        want = etree.fromstring(doc)
        got = list(matches("//*", doc))
        assert [m.attributes for m in got] == [dict(want.attrib), dict(want[0].attrib)], value


def test_attributes_of_events_are_passed_as_given() -> None:
    """An event source's values are already text: ``&#38;`` there stays as it is."""
    evs = [("start", "r", {"a": "&#38;"}), ("end",)]
    assert next(matches("/r", evs)).attributes == {"a": "&#38;"}


@pytest.mark.parametrize(("doc", "query", "paths"), [
    (b"<r><a>t</a></r>", "//parent::a", ["/r[1]/a[1]"]),
    (b"<r><a>t</a></r>", "//ancestor::a", ["/r[1]/a[1]"]),
    (b"<r><a>t</a></r>", "//..", ["/r[1]", "/r[1]/a[1]"]),
    (b"<r>\n  <b/>\n</r>", "//following-sibling::b", ["/r[1]/b[1]"]),
    (b"<r>\n  <b/>\n</r>", "//preceding-sibling::b", ["/r[1]/b[1]"]),
    (b"<r><a><!--c--></a><b><?p?></b><c><![CDATA[]]></c><d/></r>", "//..",
     ["/r[1]", "/r[1]/a[1]", "/r[1]/b[1]", "/r[1]/c[1]"]),
    (b"<r><a>x<b/>y</a></r>", "//b/following-sibling::*/..", []),
    (b"<r><a>x<b/>y</a></r>", "//b[..//preceding-sibling::b]", ["/r[1]/a[1]/b[1]"]),
])
def test_text_nodes_are_reached_as_lxml_reaches_them(doc: bytes, query: str,
                                                      paths: list[str]) -> None:
    """The cases of issue 33: elements reached from text, whitespace, comments, PIs and an
    empty CDATA section (lxml's xpath() has a node for each)."""
    found = list(matches(query, doc))
    assert sorted(m.path for m in found) == paths
    assert {m.node for m in found} == oracle(query, doc)


def test_a_match_decided_by_a_text_node_is_detected_there() -> None:
    """``//..`` selects ``a`` when its text is read: detection ``("text", 1)``, the first text
    node, not the end tag after it; and the brute force agrees that it is earliest."""
    doc = b"<r><a>t</a><b/></r>"
    found = {m.path: m.detected.to_json() for m in matches("//..", doc)}
    assert found == {"/r[1]/a[1]": {"event": "text", "node": 1},
                     "/r[1]": {"event": "start", "node": 2}}
    tree = ("r", (("a", ("t",)), ("b", ())))
    found_at = detections(Query("//.."), tree)  # type: ignore[arg-type]
    assert found_at == [(1, 1), (2, 2)]  # r at a's start tag (event 1), a at its text (2)
    check_earliest("//..", tree, found_at)  # type: ignore[arg-type]


def test_text_events_in_an_event_source() -> None:
    """An iterable of events carries text as ``("text", data)``; pieces before the next tag
    are one node; outside the root element, one is a sibling of the root (as a comment or
    PI there is in lxml's tree)."""
    evs = [("start", "r"), ("start", "a"), ("text", "x"), ("comment", "c"),
           ("end",), ("start", "b"), ("end",), ("end",)]
    assert [m.path for m in matches("//..", evs)] == ["/r[1]", "/r[1]/a[1]"]
    assert [m.node for m in matches("//preceding-sibling::*", evs)] == [2]
    assert [m.node for m in matches("//preceding-sibling::*", [*evs, ("pi", "p")])] == [2, 1]
    assert [m.node for m in matches("//following-sibling::*", [("text",), *evs])] == [1, 3]


def test_text_is_not_passed_where_it_cannot_change_the_answer() -> None:
    """Only queries that leave a text node upward or sideways read text: the others keep
    text out of Python (the guide's *Memory*) and have no text test."""
    assert compile_xpath("//..").texts
    assert compile_xpath("//a[.//following-sibling::b]").texts
    assert compile_xpath("//./parent::a").texts
    for q in ["//a/b", "//a[c]/b", "//*[1]", "/r//.", "a/..", "//a[not(.//b)]"]:
        assert not compile_xpath(q).texts, q
        assert not any(t.kind == "text" for t in compile_xpath(q).tests), q


def test_descendant_or_self_dot_selects_every_element() -> None:
    """``//.`` selects the document node and every element: the elements are the matches
    (issue 33 item 6; it was refused as selecting the document node alone)."""
    doc = b"<r>x<a><b/></a></r>"
    assert [m.node for m in matches("//.", doc)] == [1, 2, 3]
    assert oracle("//.", doc) == {1, 2, 3}
    for q in ["/", "/.", "/./."]:
        with pytest.raises(UnsupportedQueryError, match="document node"):
            Query(q)


@pytest.mark.parametrize(("doc", "query", "found"), [
    # a comment or PI before the root is its preceding sibling, one after it its following
    (b"<!--c--><r><a/></r>", "//following-sibling::*", [(1, "start", 1)]),
    (b"<?p?><r/>", "//following-sibling::r", [(1, "start", 1)]),
    (b"<r><a/></r><!--c-->", "//preceding-sibling::*", [(1, "text", 1)]),
    (b"<r><a/></r>", "//preceding-sibling::*", []),
    # the root has no following element: decided at its end whether a comment follows or not
    (b"<r><a/></r><!--c-->", "/*[not(following-sibling::*)]", [(1, "start", 1)]),
    # "no node follows the root" is known only at the end of the input (its end tag)
    (b"<r><a/></r>", "//*[not(//preceding-sibling::*)]", [(1, "end", 1), (2, "end", 1)]),
    (b"<r><a/></r><?p?>", "//*[not(//preceding-sibling::*)]", []),
    (b"<!--c--><r><a/></r><!--d-->", "//*[//following-sibling::* and //preceding-sibling::*]",
     [(1, "text", 2), (2, "text", 2)]),
])
def test_comments_and_pis_around_the_root_are_its_siblings(
        doc: bytes, query: str, found: list[tuple[int, str, int]]) -> None:
    """lxml's tree has the comments and PIs outside the root element as the root's siblings
    (children of the document node): the root is a following or preceding sibling of one."""
    got = [(m.node, m.detected.event, m.detected.node) for m in matches(query, doc)]
    assert got == found
    assert {n for n, _e, _d in found} == oracle(query, doc)
