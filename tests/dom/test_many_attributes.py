"""Many attributes cost what lxml costs: values read in one pass, cleared at once (issue 16,
item 4). These check the events; bench/bench_dom.py measures the time."""

from __future__ import annotations

from typing import Any

import pytest
from lxml import etree

import xmlevents

URN = "urn:p"


def element_text(n: int) -> str:
    attrs = " ".join(f'a{i}="v{i}"' for i in range(n))
    return f'<r xmlns:p="{URN}"><a p:x="px" {attrs} xml:lang="en"/></r>'


@pytest.mark.parametrize("n", [3, 100])  # below and above the one-pass threshold
def test_inserted_attributes_carry_their_values(n: int) -> None:
    doc = xmlevents.fromstring("<r/>")
    with doc.record() as rec:
        doc.getroot().append(etree.fromstring(element_text(n))[0])
    attrs = {str(e.pi.pt).rsplit("@", 1)[1]: e.value for e in rec.events if "@" in str(e.pi.pt)}
    expected = {f"{{{URN}}}x": "px", **{f"a{i}": f"v{i}" for i in range(n)},
                "{http://www.w3.org/XML/1998/namespace}lang": "en"}
    assert attrs == expected
    assert etree.tostring(rec.replay()) == doc.tostring()


@pytest.mark.parametrize("n", [3, 100])
def test_clearing_attributes_reports_each_removal_last_first(n: int) -> None:
    doc = xmlevents.fromstring(element_text(n))
    a = doc.getroot()[0]
    names = list(a.keys())
    with doc.record() as rec:
        a.attrib.clear()
    assert [(e.op.value, str(e.pi.pt).rsplit("@", 1)[1], e.old) for e in rec.events] == [
        ("del", name, a_value) for name, a_value in reversed(list(zip(
            names, [dict(etree.fromstring(element_text(n))[0].items())[k] for k in names],
            strict=True)))]
    assert a.keys() == [] and etree.tostring(rec.replay()) == doc.tostring()


def test_changes_behind_the_wrapper_s_back_to_many_attributes_are_found() -> None:
    doc = xmlevents.fromstring(element_text(100))
    a: Any = doc.getroot()[0]
    with doc.record() as rec:
        etree.ElementBase.set(a, "a50", "changed")  # lxml's own setter: not reported
        doc.resync()
    assert [(e.op.value, str(e.pi.pt), e.value, e.old) for e in rec.events] == [
        ("upd", "/r/a/@a50", "changed", "v50")]
