"""The query front end: the printer round-trips, names and namespaces, the compiled grammar's
universal variables, and event iterables as sources."""

from __future__ import annotations

from hypothesis import given, settings
from lxml import etree

from tests.strategies import examples
from tests.stream.reference import queries
from xmlevents.stream import Query, compile_xpath, matches, parse_xpath


@settings(max_examples=examples(60), deadline=None)
@given(queries(depth=3))
def test_printed_queries_parse_back_to_the_same_tree(text: str) -> None:
    """parse(print(ast)) == ast on generated queries."""
    ast = parse_xpath(text)
    assert parse_xpath(str(ast)) == ast


def test_clark_names_prefix_maps_and_namespace_wildcards() -> None:
    """{uri}local, prefix:local with a map, and prefix:* all test the expanded name."""
    doc = b'<r xmlns="urn:d" xmlns:y="urn:y"><a/><y:a/><y:b/></r>'
    assert [m.node for m in matches("//{urn:d}a", doc)] == [2]
    assert [m.node for m in matches("//p:a", doc, namespaces={"p": "urn:y"})] == [3]
    assert [m.node for m in matches("/*/p:*", doc, namespaces={"p": "urn:y"})] == [3, 4]
    assert [m.node for m in matches("//a", doc)] == []  # no namespace: XPath 1.0


def test_positions_on_child_steps() -> None:
    """[1], [last()], position()=1 and position()=last() among same-named siblings, after
    the predicates before them."""
    doc = b"<r><a/><b/><a><c/></a><a/></r>"
    assert [m.node for m in matches("/r/a[1]", doc)] == [2]
    assert [m.node for m in matches("/r/a[last()]", doc)] == [6]
    assert [m.node for m in matches("/r/a[c][1]", doc)] == [4]
    assert [m.node for m in matches("/r/*[position()=last()]", doc)] == [6]
    assert [m.node for m in matches("/r/a[position()=1]", doc)] == [2]


def test_last_is_detected_when_the_parent_ends() -> None:
    """Whether an element is the last of its name is known at its parent's end tag, or at
    the next sibling of that name's start tag for the ones that are not."""
    found = [(m.node, m.detected.event, m.detected.node)
             for m in matches("/r/a[last()]", b"<r><a/><b/><a/></r>")]
    assert found == [(4, "end", 1)]


def test_backward_axes() -> None:
    """parent, ancestor and preceding-sibling, in the selecting path and in predicates."""
    doc = b"<r><a><b/><c/></a><b><d/></b><a><b/><c/></a></r>"
    assert [m.node for m in matches("//d/ancestor::*", doc)] == [1, 5]
    assert [m.node for m in matches("//c/preceding-sibling::b", doc)] == [3, 8]
    assert [m.node for m in matches("//b[parent::a]", doc)] == [3, 8]
    assert sorted(m.node for m in matches("//b/..", doc)) == [1, 2, 7]


def test_relative_query_starts_at_the_root_element() -> None:
    """A relative path is evaluated from the root element, as lxml's tree.xpath() does."""
    doc = b"<r><a><b/></a></r>"
    tree = etree.ElementTree(etree.fromstring(doc))
    assert len(tree.xpath("a/b")) == 1
    assert [m.node for m in matches("a/b", doc)] == [3]


def test_the_compiled_grammar_starts_universal() -> None:
    """x0 has no obligations: every document is accepted, the marks select the matches."""
    g = compile_xpath("//a[c]/b")
    assert g.universal(g.start) and g.nullable(g.start)


def test_event_iterables_lxml_iterparse_and_plain_tuples() -> None:
    """An iterable of (event, element) pairs from iterparse, or plain tuples with attributes,
    is a source: a watched document or a replayed history can be queried."""
    import io
    doc = b'<r><a k="1"><b/><c/></a></r>'
    pairs = etree.iterparse(io.BytesIO(doc), events=("start", "end"))
    found = list(matches("//a[c]/b", pairs))
    assert [(m.node, m.path) for m in found] == [(3, "/r[1]/a[1]/b[1]")]
    plain = [("start", "r"), ("start", "a", {"k": "1"}), ("end", "a"), ("end", "r")]
    m = next(iter(Query("//a").evaluate(plain)))
    assert m.attributes == {"k": "1"} and m.detected.to_json() == {"event": "start",
                                                                  "node": 2}


def test_statistics_after_a_run() -> None:
    """An evaluation's stats: elements read, matches, peak candidates, shapes, time."""
    run = Query("//a[c]/b").evaluate(b"<r><a><b/><c/></a></r>")
    assert len(list(run)) == 1
    s = run.stats
    assert (s.elements, s.matches, s.peak_candidates, s.held) == (4, 1, 1, 0)
    assert s.shapes >= 2 and s.seconds >= 0
    assert set(s.to_json()) == {"elements", "matches", "peak_candidates", "held", "shapes",
                                "seconds"}
