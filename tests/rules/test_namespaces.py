"""Rules on namespaced documents (issue 17): prefixed names in event paths, bound with the
store's ``namespaces``, are indexed by their local name and matched by namespace."""

from __future__ import annotations

from lxml import etree

import xmlevents
from xmlevents.rules import Store

RULES = """
rule Ns priority 1:
on INSERT document('s.xml')/s:stores/s:store/s:product
if TRUE
do INSERT <seen/> BELOW document('s.xml')/s:stores

rule Plain priority 2:
on INSERT document('s.xml')/s:stores/s:store/product
if TRUE
do INSERT <plain/> BELOW document('s.xml')/s:stores

rule Flag priority 3:
on INSERT document('s.xml')/s:stores/s:store/@s:flag
if TRUE
do INSERT <flagged/> BELOW document('s.xml')/s:stores

rule Gone priority 4:
on DELETE document('s.xml')/s:stores/s:store/s:product
if TRUE
do INSERT <gone/> BELOW document('s.xml')/s:stores
"""


def store() -> tuple[Store, object]:
    doc = xmlevents.fromstring('<s:stores xmlns:s="urn:s" xmlns:o="urn:o"><s:store/></s:stores>')
    st = Store(namespaces={"s": "urn:s", "o": "urn:o"}, **{"s.xml": doc})
    st.rules(RULES)
    return st, doc


def added(doc: object, before: int) -> list[str]:
    root = doc.getroot()  # type: ignore[attr-defined]
    return [etree.QName(e).localname for e in list(root)[before:]]


def fired(trace: list[object]) -> list[str]:
    return [name for step in trace for name in step.fired]  # type: ignore[attr-defined]


def test_a_namespaced_element_fires_only_the_rule_of_its_namespace() -> None:
    st, doc = store()
    assert fired(st.execute("INSERT <s:product/> BELOW document('s.xml')/s:stores/s:store")) \
        == ["Ns"]
    assert fired(st.execute("INSERT <o:product/> BELOW document('s.xml')/s:stores/s:store")) \
        == []
    assert fired(st.execute("INSERT <product/> BELOW document('s.xml')/s:stores/s:store")) \
        == ["Plain"]
    assert added(doc, 1) == ["seen", "plain"]


def test_a_namespaced_attribute_and_a_deletion() -> None:
    st, doc = store()
    with st.update():
        doc.getroot()[0].set("{urn:o}flag", "no")  # type: ignore[attr-defined]
    with st.update():
        doc.getroot()[0].set("{urn:s}flag", "yes")  # type: ignore[attr-defined]
    assert added(doc, 1) == ["flagged"]
    st.execute("INSERT <s:product/> BELOW document('s.xml')/s:stores/s:store")
    st.execute("DELETE document('s.xml')/s:stores/s:store/s:product")
    assert added(doc, 1) == ["flagged", "seen", "gone"]


def test_prefixed_rules_are_indexed_by_local_name() -> None:
    from xmlevents.rules import ast

    st, _ = store()
    index = st._bound.index  # the store's installed rules (white box: the speed promise)
    assert index.lookup(ast.EventKind.INSERT, "s.xml", {"price"}) == []
    assert sorted(c.name for c in index.lookup(ast.EventKind.INSERT, "s.xml", {"product"})) == [
        "Ns", "Plain"]
