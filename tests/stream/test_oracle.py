"""The matches equal lxml's xpath() on the whole tree; each is reported at its earliest
detection location (seed 004, section 2), checked by brute force. The documents have text,
whitespace, mixed content, comments, CDATA and PIs (issue 33: XPath's text nodes decide
``//..`` and ``//following-sibling::b``)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from tests.stream.reference import (
    check_earliest,
    compiles,
    detections,
    oracle,
    queries,
    to_xml,
    trees,
)
from xmlevents.stream import Query


def _run(query: str, tree: object) -> list[tuple[int, int]]:
    """(node, index of the detecting event) for each match, from the event source."""
    return detections(Query(query), tree)  # type: ignore[arg-type]


#: what comes before and after the root element: nothing, or a comment or a PI (the root's
#: siblings in lxml's tree: //following-sibling::* selects the root after a comment)
AROUND = st.tuples(st.sampled_from(["", "<!--c-->", "<?p i?>"]),
                   st.sampled_from(["", "<!--c-->", "<?p i?>"]))


def _same_as_lxml(tree: object, query: str, around: tuple[str, str] = ("", "")) -> None:
    assume(compiles(query))
    xml = around[0].encode() + to_xml(tree) + around[1].encode()  # type: ignore[arg-type]
    found = [m.node for m in Query(query).evaluate(xml)]
    assert len(found) == len(set(found)), "a match reported twice"
    assert set(found) == oracle(query, xml)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(texts=True), queries(), AROUND)
def test_matches_equal_lxml_xpath(tree: object, query: str, around: tuple[str, str]) -> None:
    """On random documents and queries, the set of matches is lxml's xpath() result."""
    _same_as_lxml(tree, query, around)


@pytest.mark.slow
@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(texts=True), queries(depth=3), AROUND)
def test_matches_equal_lxml_xpath_more_examples(tree: object, query: str,
                                                around: tuple[str, str]) -> None:
    """The oracle property on more examples and more deeply nested predicates."""
    _same_as_lxml(tree, query, around)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(max_depth=3, alphabet=("a", "b", "c"), texts=True), queries(depth=2))
def test_each_match_at_its_earliest_detection_location(tree: object, query: str) -> None:
    """The reported event decides each match and no earlier event does (brute force), with
    negation and positions too (several derivations may decide a match together)."""
    assume(compiles(query))
    check_earliest(query, tree, _run(query, tree))  # type: ignore[arg-type]


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(max_depth=4, alphabet=("a", "b", "c"), texts=True), queries(depth=3))
def test_earliest_detection_more_examples(tree: object, query: str) -> None:
    """The earliest-detection property on more and deeper random cases."""
    assume(compiles(query))
    check_earliest(query, tree, _run(query, tree))  # type: ignore[arg-type]


@pytest.mark.parametrize("query", ["a[a[last()]]", "//a[b[last()]]", "/a/a[last()]",
                                   "//a[following-sibling::a or not(following-sibling::a)]"])
def test_earliest_detection_of_existential_positions_and_tautologies(query: str) -> None:
    """'Some a that is the last a' is 'some a', decided at the a's start tag; 'f or not f'
    is decided at once (cases the property test found or could find)."""
    tree = ("a", (("a", (("a", ()), ("b", ()))), ("a", ())))
    check_earliest(query, tree, _run(query, tree))


def test_queries_compiled_before_do_not_change_a_query() -> None:
    """Compiled formulas are shared between queries (interned): a query means the same
    after others were compiled (a negation cache once gave another query's formula)."""
    for q in ["//a[not(b and not(b))]", "//c[b or not(b)]", "/a[not(not(/self::a))]"]:
        Query(q)
    assert list(Query("/a[not(not(/self::a))]").evaluate(b"<a/>")) == []
    assert [m.node for m in Query("/a[not(not(a))]").evaluate(b"<a><a/></a>")] == [1]


def test_stacked_positions_are_detected_at_the_child() -> None:
    """//b[last()][1]/.. asks for a parent with a b child; it is decided at the b's start tag,
    where two guesses (this b is the last one, or a later b is) together cover every
    continuation though neither does alone (the general check, stream/_universal.py)."""
    tree = ("b", (("a", ()), ("b", (("a", ()),)), ("c", ())))
    found = _run("//b[last()][1]/..", tree)
    assert found == [(1, 3)]  # the root, at the start tag of its b child (event 3)
    check_earliest("//b[last()][1]/..", tree, found)


@pytest.mark.parametrize(("query", "tree", "found"), [
    # a first child is the last of the first children: decided at its start tag
    ("//*[1][last()]", ("b", (("c", (("c", ()),)),)), [(1, 0), (2, 1), (3, 2)]),
    # "or not(*/a)" makes the condition hold whatever the content: decided at once
    ("//*[descendant::*/.. or descendant::c/. or not(*/a)]/.", ("a", ()), [(1, 0)]),
    # a/parent::a under a b never exists: the negation holds from the b's start tag
    ("./b[not(a/parent::a)]", ("a", (("b", ()), ("c", (("a", ()), ("b", ()))))), [(2, 1)]),
])
def test_negations_that_no_continuation_can_falsify(query: str, tree: object,
                                                    found: list[tuple[int, int]]) -> None:
    """Cases the property test found where Theorem 1 alone reports late (at the end of an
    element): the condition is certain earlier, with no derivation yet to show it."""
    assert _run(query, tree) == found
    check_earliest(query, tree, found)  # type: ignore[arg-type]


def test_negation_with_several_witnesses() -> None:
    """Found by the property test: the root is decided where every continuation has some
    witness x though no one x is certain yet (Theorem 1 alone waits for one)."""
    q = "descendant-or-self::*[../.. and ../a][not(.//a)]/ancestor::*"
    tree = ("a", (("b", (("c", ()),)), ("c", (("c", ()), ("c", ()),
                                               ("b", (("a", ()), ("b", ()), ("c", ()))))),
                  ("b", ())))
    check_earliest(q, tree, _run(q, tree))
