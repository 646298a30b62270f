"""Version histories replayed through a watched document (:mod:`xmlevents.replay._history`).

* a hypothesis property: random small documents and random sequences of versions made by
  random lxml edits; for every consecutive pair the edit script is exact, the version's events
  replayed from the snapshot before it give the version, ids stay consistent, the root keeps
  its id when it keeps its tag and declarations;
* the real history of commons-lang's pom.xml (799 versions, one not well-formed);
* edge cases: one version, identical versions, bad versions, empty input, duplicate version
  numbers, composite detection across versions.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from lxml import etree

from tests.strategies import examples
from xmlevents.algebra import Op, XmlEventsError
from xmlevents.dom import Replayer, Snapshot, hardened_parser
from xmlevents.replay import (
    BadVersion,
    Delete,
    DocumentHistory,
    HistoryResult,
    MissingXmlError,
    ReplaceRoot,
    apply_script,
    c14n,
    digest,
    edit_script,
    parse_version,
    replay_history,
)
from xmlevents.replay._history import composite_row, error_row, event_row, replay_document
from xmlevents.replay._script import _twins

POM = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "commons-lang-pom.jsonl.gz"

PLAIN = hardened_parser(plain=True)


def exact(xml: str | bytes) -> bytes:
    return c14n(parse_version(xml))


def replays_to(snap: Snapshot, events: list[Any], xml: str | bytes) -> bool:
    """Whether ``events``, replayed from ``snap``, give version ``xml``: see
    :func:`_canonical`."""
    replayer = Replayer(snap)
    replayer.apply_all(events)
    got, want = replayer.tree.getroot(), parse_version(xml)
    # Either side: lxml drops the declaration that makes the version's twins in the replay.
    rewrite = _twins(got) or _twins(want)
    return _canonical(got, rewrite) == _canonical(want, rewrite)


def _canonical(root: Any, rewrite: bool) -> bytes:
    """C14N; for a document with one URI under two prefixes in a scope, C14N 2.0 with the
    prefixes rewritten: lxml cannot make a declaration that repeats one in scope, so a replay
    reproduces such a document up to its prefixes (README, "Replaying version histories")."""
    if rewrite:
        return etree.canonicalize(c14n(root).decode(), with_comments=True,
                                  rewrite_prefixes=True).encode()
    return c14n(root)


# --- the property -----------------------------------------------------------------------------

TAGS = ["a", "b", "c", "{urn:x}d"]
ATTRS = ["k", "m", "{urn:x}z"]
VALUES = ["1", "2", "v w", ""]
TEXTS = [None, "", "x", "y z", " ", "\n  ", "t&<"]
COMMENTS = ["c", " note ", "", "x y"]
NSMAPS: list[dict[str | None, str] | None] = [None, None, {"x": "urn:x"}, {None: "urn:x"}]


def _fill(draw: st.DrawFn, e: Any, depth: int) -> None:
    for name, value in draw(st.dictionaries(st.sampled_from(ATTRS), st.sampled_from(VALUES),
                                            max_size=2)).items():
        e.set(name, value)
    e.text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(0, 3 if depth < 2 else 0))):
        if draw(st.integers(0, 4)) == 0:
            child = etree.Comment(draw(st.sampled_from(COMMENTS)))
            e.append(child)
        else:
            child = etree.SubElement(e, draw(st.sampled_from(TAGS)))
            _fill(draw, child, depth + 1)
        child.tail = draw(st.sampled_from(TEXTS))


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A small document as text: elements with attributes, texts, tails, comments, and a
    namespace (declared on the root, or wherever lxml puts it) sometimes."""
    nsmap = draw(st.sampled_from(NSMAPS))
    root = PLAIN.makeelement(draw(st.sampled_from(TAGS)), nsmap=nsmap)
    _fill(draw, root, 0)
    return etree.tostring(root, encoding="unicode")  # type: ignore[no-any-return]


EDITS = ["insert", "delete", "move", "rename", "set_attr", "del_attr", "text", "tail",
         "add_comment", "remove_comment", "insert", "move", "add_pi"]


def _pick(data: st.DataObject, items: list[Any]) -> Any:
    return items[data.draw(st.integers(0, len(items) - 1))] if items else None


def edit(data: st.DataObject, root: Any) -> str:
    """One random lxml edit of ``root`` (in place); returns what it did, for the notes."""
    kind = data.draw(st.sampled_from(EDITS))
    elements = [e for e in root.iter() if isinstance(e.tag, str)]
    others = list(root.iter())[1:]
    if kind == "insert":
        target = _pick(data, elements)
        new = target.makeelement(data.draw(st.sampled_from(TAGS)))
        new.text = data.draw(st.sampled_from(TEXTS))
        target.insert(data.draw(st.integers(0, len(target))), new)
    elif kind == "delete" and others:
        node = _pick(data, others)
        node.getparent().remove(node)
    elif kind == "move" and others:
        node = _pick(data, others)
        inside = set(node.iter()) if isinstance(node.tag, str) else {node}
        targets = [e for e in elements if e not in inside]
        target = _pick(data, targets)
        target.insert(data.draw(st.integers(0, len(target))), node)
    elif kind == "rename":
        _pick(data, elements).tag = data.draw(st.sampled_from(TAGS))
    elif kind == "set_attr":
        _pick(data, elements).set(data.draw(st.sampled_from(ATTRS)),
                                  data.draw(st.sampled_from(VALUES)))
    elif kind == "del_attr":
        owners = [e for e in elements if e.attrib]
        if owners:
            e = _pick(data, owners)
            del e.attrib[_pick(data, list(e.attrib))]
    elif kind == "text":
        _pick(data, elements).text = data.draw(st.sampled_from(TEXTS))
    elif kind == "tail" and others:
        _pick(data, others).tail = data.draw(st.sampled_from(TEXTS))
    elif kind == "add_comment":
        target = _pick(data, elements)
        target.insert(data.draw(st.integers(0, len(target))),
                      etree.Comment(data.draw(st.sampled_from(COMMENTS))))
    elif kind == "remove_comment":
        comments = list(root.iter(etree.Comment))
        if comments:
            c = _pick(data, comments)
            c.getparent().remove(c)
    elif kind == "add_pi":
        target = _pick(data, elements)
        target.insert(data.draw(st.integers(0, len(target))), etree.PI("pi", "data"))
    return kind


@st.composite
def histories(draw: st.DrawFn) -> list[str]:
    """A document and 1..4 later versions, each 0..3 random edits of the one before."""
    data = draw(st.data())
    versions = [draw(documents())]
    for _ in range(draw(st.integers(1, 4))):
        root = etree.fromstring(versions[-1].encode("utf-8"), PLAIN)
        done = [edit(data, root) for _ in range(draw(st.integers(0, 3)))]
        versions.append(etree.tostring(root, encoding="unicode"))
        note(f"v{len(versions) - 1} after {done}: {versions[-1]}")
    return versions


@pytest.mark.slow
@given(histories())
def test_random_histories_replay_exactly(versions: list[str]) -> None:
    """Random histories: every script exact, every version's events replay to it, ids kept."""
    check_history(versions)


@settings(max_examples=examples(10))
@given(histories())
def test_a_few_random_histories_replay_exactly(versions: list[str]) -> None:
    """The same property on a few histories: the fast loop's share of it."""
    check_history(versions)


def check_history(versions: list[str]) -> None:
    """The property of the module docstring, over one history."""
    note(f"v0: {versions[0]}")
    history = DocumentHistory("d")
    try:
        first = history.advance(0, versions[0])
        assert c14n(history.document.getroot()) == exact(versions[0])
        last_ts = max(e.ts for e in first.events)
        for v in range(1, len(versions)):
            prev, cur = versions[v - 1], versions[v]
            # the pure core: never raises, exact
            script = edit_script(prev, cur)
            tree = parse_version(prev).getroottree()
            apply_script(tree, script)
            assert c14n(tree.getroot()) == exact(cur), script
            # the same script, made from the watched root
            doc = history.document
            assert edit_script(doc.getroot(), cur) == script
            # through the history
            old_root = parse_version(prev)
            old_root_id = doc.id_of(doc.getroot())
            snap = doc.snapshot()
            result = history.advance(v, cur)
            note(f"v{v} script {script}")
            assert result.version == v and result.synced == 0
            assert c14n(doc.getroot()) == exact(cur)
            assert replays_to(snap, result.events, cur), script
            # ids: the replayed nodes carry the live document's, the root keeps its own
            replayer = Replayer(snap)
            replayer.apply_all(result.events)
            assert replayer.snapshot().nodes == doc.snapshot().nodes
            new_root = parse_version(cur)
            if (old_root.tag, old_root.nsmap) == (new_root.tag, new_root.nsmap) and not any(
                    isinstance(a, ReplaceRoot) for a in script):
                assert doc.id_of(doc.getroot()) == old_root_id, script
            if not any(isinstance(a, ReplaceRoot) for a in script):
                assert doc.id_of(doc.getroot()) == old_root_id, script
            if not script:
                assert result.events == []
            # the clock goes on across versions
            for e in result.events:
                assert e.ts > last_ts
                last_ts = e.ts
    finally:
        history.close()


# --- the real history ---------------------------------------------------------------------------


def _pom_rows() -> list[dict[str, Any]]:
    if not POM.exists():
        pytest.skip(f"{POM} is absent")
    with gzip.open(POM, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.slow
def test_commons_lang_pom_history() -> None:
    """All 799 pom versions replay exactly; the bad one changes nothing."""
    rows = _pom_rows()
    assert len(rows) == 799
    history = DocumentHistory("pom.xml")
    bad: list[BadVersion] = []
    snap = history.document.snapshot()  # the empty document
    last_good = None
    try:
        for row in rows:
            v = row["version"]
            try:
                result = history.advance(v, row["xml"])
            except BadVersion as exc:
                bad.append(exc)
                # nothing changed: still the last good version, the same snapshot
                assert history.version == last_good
                assert c14n(history.document.getroot()) == exact(rows[last_good]["xml"])
                assert history.document.snapshot() == snap
                continue
            assert result.synced == 0, v
            assert replays_to(snap, result.events, row["xml"]), v
            if v == 135:
                assert last_good == 133  # diffed from 133: the snapshot replayed was 133's
            last_good = v
            snap = history.document.snapshot()
    finally:
        history.close()
    assert [(b.doc, b.version, b.line, b.column) for b in bad] == [("pom.xml", 134, 18, 1)]
    assert bad[0].message
    assert last_good == 798


@pytest.mark.slow
def test_commons_lang_pom_replay_history_rows() -> None:
    """replay_history over the first versions (through the bad one) gives the class's events
    as rows, each with its version's time and commit, and one parse error row."""
    rows = _pom_rows()[:137]
    result = replay_history(rows)
    assert result.documents == 1 and result.versions == 136
    assert [(e["version"], e["stage"], e["line"], e["column"]) for e in result.errors] == [
        (134, "parse", 18, 1)]
    history = DocumentHistory("pom.xml")
    expected = []
    try:
        for row in rows:
            if row["version"] == 134:
                continue
            r = history.advance(row["version"], row["xml"], time=row["time"])
            expected += [event_row("pom.xml", r.version, e, row["time"], commit=row["commit"])
                         for e in r.events]
    finally:
        history.close()
    assert result.events == expected
    assert not any(e["version"] == 134 for e in result.events)


# --- edge cases -------------------------------------------------------------------------------


def test_one_version_is_the_insertion_of_the_whole_document() -> None:
    """The first version is the insertion of every node in document order, replayable from empty."""
    xml = '<a x="1"><b>t</b>tail<!--c--><c y="2"><d/></c><?pi z?></a>'
    history = DocumentHistory("d")
    try:
        start = history.document.snapshot()
        result = history.advance(0, xml)
        doc = history.document
        assert result.version == 0 and result.composites == [] and result.synced == 0
        assert all(e.op is Op.INS for e in result.events)
        first = result.events[0]
        assert (str(first.pi.pt), first.index) == ("/a", 0)
        assert first.pi.ids == (doc.id_of(doc.getroot()),)
        # document order: the order of the snapshot's nodes (attributes, texts, tails included)
        assert [e.pi.ids[-1] for e in result.events] == [n[0] for n in doc.snapshot().nodes]
        assert len(result.events) == 10  # a @x b text() tail comment c @y d pi
        assert [e.ts for e in result.events] == sorted(e.ts for e in result.events)
        # replayed from the empty document, the events give the version
        assert start == Snapshot("", ())
        assert replays_to(start, result.events, xml)
    finally:
        history.close()
    out = replay_history([{"doc": "d", "version": 0, "xml": xml}])
    assert out.documents == out.versions == 1 and out.errors == []
    assert [e["op"] for e in out.events] == ["ins"] * 10
    assert out.events[0]["path"] == "/a" and out.events[0]["index"] == 0


def test_identical_versions_give_nothing() -> None:
    """A version equal to the last gives no events and no composites."""
    xml = '<order><item sku="1"><price>3</price></item><!--c--></order>'
    history = DocumentHistory("d", "Priced := ins(item) ; ins(item/price)")
    try:
        history.advance(0, xml)
        for v in (1, 2):
            r = history.advance(v, xml)
            assert (r.events, r.composites, r.synced) == ([], [], 0)
        assert history.version == 2
    finally:
        history.close()
    out = replay_history([{"doc": "d", "version": v, "xml": xml} for v in range(3)])
    assert {e["version"] for e in out.events} == {0} and out.versions == 3


def test_bad_version_changes_nothing_and_the_next_is_diffed_from_the_last_good() -> None:
    """A bad version raises BadVersion; the next is diffed from the last good."""
    v0, v1, v2 = "<a><b>1</b></a>", "<a><b>1</b>\n<c></a>", "<a><b>2</b><c/></a>"
    history = DocumentHistory("d")
    try:
        history.advance(0, v0)
        snap = history.document.snapshot()
        with pytest.raises(BadVersion) as info:
            history.advance(1, v1)
        bad = info.value
        assert (bad.doc, bad.version, bad.line) == ("d", 1, 2)
        assert isinstance(bad.column, int) and bad.column >= 1
        assert bad.message and "d version 1, line 2, column" in str(bad)
        assert isinstance(bad, ValueError) and isinstance(bad, XmlEventsError)
        assert history.version == 0
        assert history.document.snapshot() == snap  # same XML, same ids
        r = history.advance(2, v2)
        assert r.version == 2 and history.version == 2
        assert replays_to(snap, r.events, v2)
        # diffed from v0: the text update, then the insertion of c
        assert [(e.op, str(e.pi.pt)) for e in r.events] == [(Op.UPD, "/a/b/text()"),
                                                            (Op.INS, "/a/c")]
    finally:
        history.close()
    out = replay_history([{"doc": "d", "version": v, "xml": x} for v, x in enumerate((v0, v1, v2))])
    assert out.errors == [error_row("d", 1, "parse", bad.message, 2, bad.column)]
    assert out.versions == 2
    assert [e["version"] for e in out.events] == [0, 0, 0, 2, 2]


def test_bad_first_version_then_the_next_good_one_is_the_insertion() -> None:
    """When the first version is bad, the first good one is the insertion of the whole document."""
    history = DocumentHistory("d")
    try:
        with pytest.raises(BadVersion) as info:
            history.advance(0, "<a>")
        assert info.value.line is not None and info.value.column is not None
        assert history.document.getroot() is None and history.version is None
        r = history.advance(1, "<a><b/></a>")
        assert [(e.op, str(e.pi.pt), e.index) for e in r.events] == [(Op.INS, "/a", 0),
                                                                     (Op.INS, "/a/b", 0)]
        assert history.version == 1
    finally:
        history.close()
    out = replay_history([{"doc": "d", "version": 0, "xml": "not xml"},
                          {"doc": "d", "version": 1, "xml": "<a><b/></a>"}])
    assert [(e["version"], e["stage"]) for e in out.errors] == [(0, "parse")]
    assert [(e["version"], e["op"], e["path"], e["index"]) for e in out.events] == [
        (1, "ins", "/a", 0), (1, "ins", "/a/b", 0)]


def test_only_bad_versions() -> None:
    """A document of bad versions gives error rows only."""
    out = replay_history([{"doc": "d", "version": 0, "xml": "<a>"},
                          {"doc": "d", "version": 1, "xml": ""}])
    assert out.documents == 1 and out.versions == 0 and out.events == []
    assert [e["version"] for e in out.errors] == [0, 1]


def test_empty_input() -> None:
    """An empty table gives empty outputs."""
    assert replay_history([]) == HistoryResult()
    out = replay_history([], "Priced := ins(item) ; ins(item/price)")
    assert (out.events, out.composites, out.errors, out.documents, out.versions) == (
        [], [], [], 0, 0)


def test_duplicate_version_numbers_keep_the_first() -> None:
    """A second row with a version number is an input error; the first is kept."""
    rows = [{"doc": "d", "version": 1, "xml": "<a><c/></a>"},
            {"doc": "d", "version": 0, "xml": "<a/>"},
            {"doc": "d", "version": 1, "xml": "<a><dup/></a>"}]
    out = replay_history(rows)
    assert out.errors == [error_row("d", 1, "input", "duplicate version: the first row is kept")]
    assert out.versions == 2
    assert [(e["version"], e["path"]) for e in out.events] == [(0, "/a"), (1, "/a/c")]


def test_documents_are_replayed_apart() -> None:
    """Each document has its own history, in document-name order."""
    rows = [{"doc": "q", "version": 0, "xml": "<q/>"}, {"doc": "p", "version": 0, "xml": "<p/>"},
            {"doc": "p", "version": 1, "xml": "<p><x/></p>"}]
    out = replay_history(rows)
    assert out.documents == 2 and out.versions == 3
    assert [(e["doc"], e["version"], e["path"]) for e in out.events] == [
        ("p", 0, "/p"), ("p", 1, "/p/x"), ("q", 0, "/q")]


ORDER = "ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))"
ORDERS = ["<order><id>1</id></order>",
          '<order><id>1</id><item sku="x"/></order>',
          '<order><id>1</id><item sku="x"><price>3</price><quantity>2</quantity></item></order>']


def test_composite_detected_across_versions() -> None:
    """A composite over several versions is raised with its last event's version."""
    out = replay_history([{"doc": "o", "version": v, "xml": x} for v, x in enumerate(ORDERS)],
                         ORDER)
    assert out.errors == [] and out.versions == 3
    [c] = out.composites
    assert (c["doc"], c["version"], c["type"], c["path"]) == ("o", 2, "ItemComplete",
                                                              "/order/item")
    by_id = {e["id"]: e for e in out.events}
    assert [(by_id[i]["version"], by_id[i]["path"]) for i in c["events"]] == [
        (1, "/order/item"), (2, "/order/item/price"), (2, "/order/item/quantity")]
    assert c["ids"] == by_id[c["events"][0]]["ids"]


def test_composite_detected_in_document_history() -> None:
    """DocumentHistory returns a version's composites; rows have start, end, events."""
    history = DocumentHistory("o", ORDER)
    try:
        assert [history.advance(v, x).composites for v, x in enumerate(ORDERS[:2])] == [[], []]
        r = history.advance(2, ORDERS[2])
        [c] = r.composites
        assert c.type.name == "ItemComplete" and r.version == 2
        row = composite_row("o", 2, c)
        assert row["version"] == 2 and row["events"] == [p.id for p in c.primitives()]
        assert row["start"] <= row["end"] == row["ts"]
    finally:
        assert history.close() == []


def test_composite_not_raised_when_the_item_came_with_the_first_version() -> None:
    # version 0 inserts the item with its price and quantity at once: one more composite,
    # of version 0, and none later
    """An item inserted whole with version 0 raises its composite at version 0, and none later."""
    out = replay_history([{"doc": "o", "version": 0, "xml": ORDERS[2]},
                          {"doc": "o", "version": 1, "xml": ORDERS[2]}], ORDER)
    assert [c["version"] for c in out.composites] == [0]


def test_event_row_fields() -> None:
    """An event row has the events table's columns, JSON-ready."""
    history = DocumentHistory("d")
    try:
        history.advance(0, '<a k="1"/>')
        [e] = history.advance(1, '<a k="2"/>').events
    finally:
        history.close()
    assert event_row("d", 1, e) == {
        "doc": "d", "version": 1, "commit": None, "time": None, "ts": e.ts, "id": e.id,
        "op": "upd", "path": "/a/@k", "path_prefixed": "/a/@k", "ids": list(e.pi.ids),
        "kind": "attribute", "value": "2", "old": "1", "index": None, "moved": False}
    json.dumps(event_row("d", 1, e))  # JSON-ready


def test_every_row_says_its_commit_and_time_and_a_composite_its_constituents() -> None:
    """Outputs a data engineer can use without joins (issue 14, item 5): the version's commit
    and time on events, composites and errors; a composite's primitive events with their
    paths (also in the user's prefixes) and values."""
    ns = {"p": "urn:p"}
    rows = [
        {"doc": "o", "version": 0, "xml": '<p:o xmlns:p="urn:p"/>', "commit": "c0", "time": 10},
        {"doc": "o", "version": 1, "xml": "<broken", "commit": "c1", "time": 11},
        {"doc": "o", "version": 2, "commit": "c2", "time": 12,
         "xml": '<p:o xmlns:p="urn:p"><p:item><p:sku>A-1</p:sku></p:item></p:o>'},
        {"doc": "o", "version": 2, "xml": "<dup/>", "commit": "c2b", "time": 13},
    ]
    out = replay_history(rows, "Added := new(p:item) ; ins(p:item/p:sku/text())",
                         namespaces=ns)
    assert {(r["version"], r["commit"], r["time"]) for r in out.events} == {
        (0, "c0", 10.0), (2, "c2", 12.0)}
    assert sorted((r["version"], r["commit"], r["time"], r["stage"]) for r in out.errors) == [
        (1, "c1", 11.0, "parse"), (2, "c2b", 13.0, "input")]
    [c] = out.composites
    assert (c["commit"], c["time"], c["path_prefixed"]) == ("c2", 12.0, "/p:o/p:item")
    assert [(p["op"], p["path_prefixed"], p["value"]) for p in c["constituents"]] == [
        ("ins", "/p:o/p:item", None), ("ins", "/p:o/p:item/p:sku/text()", "A-1")]
    assert c["constituents"][1]["path"] == "/{urn:p}o/{urn:p}item/{urn:p}sku/text()"
    assert all(r["path_prefixed"].startswith("/p:o") for r in out.events)
    json.dumps(c)  # JSON-ready


def test_a_history_resumes_from_a_snapshot_with_its_ids() -> None:
    """Two versions and the ids of the first: the events of the second carry those ids."""
    first = DocumentHistory("d")
    first.advance(0, "<o><i><p>1</p></i></o>")
    snap = first.document.snapshot()
    first.close()
    resumed = DocumentHistory("d", start=snap)
    try:
        r = resumed.advance(1, "<o><i><p>2</p></i></o>")
        assert [(e.op, e.pi.ids, e.old, e.value) for e in r.events] == [
            (Op.UPD, tuple(n[0] for n in snap.nodes if n[1] != "attr"), "1", "2")]
        assert replays_to(snap, r.events, "<o><i><p>2</p></i></o>")
    finally:
        resumed.close()


def test_a_version_without_xml_is_refused_when_it_must_be_read() -> None:
    """advance() with no XML where it must be read raises MissingXmlError (a ValueError)."""
    history = DocumentHistory("d")
    try:
        with pytest.raises(MissingXmlError, match="d version 0: no XML") as info:
            history.advance(0)  # the first version: nothing to apply a script to
        assert isinstance(info.value, ValueError) and isinstance(info.value, XmlEventsError)
        history.advance(0, "<a/>")
        with pytest.raises(MissingXmlError, match="d version 1"):
            history.advance(1, script=[])  # no digest to check the script against
        assert history.version == 0
    finally:
        history.close()


def test_a_script_made_against_another_state_is_synced() -> None:
    """A script that does not give the expected version is completed by sync, with events."""
    history = DocumentHistory("d")
    try:
        history.advance(0, "<a><b/></a>")
        new = "<a><b/><c/></a>"
        wrong = edit_script("<a/>", "<a><x/></a>")  # made against another version
        r = history.advance(1, new, script=wrong, expect=digest(parse_version(new)))
        assert r.synced > 0
        assert c14n(history.document.getroot()) == c14n(parse_version(new))
    finally:
        history.close()


def test_a_script_that_misses_its_digest_without_xml_names_what_is_missing() -> None:
    """Spark's apply stage gets a script and its digest without the XML: a script that does
    not give the version cannot be synced, and says so (nothing silently wrong)."""
    history = DocumentHistory("d")
    try:
        history.advance(0, "<a><b/></a>")
        wrong = edit_script("<a/>", "<a><x/></a>")
        expect = digest(parse_version("<a><b/><c/></a>"))
        with pytest.raises(MissingXmlError, match="d version 1: the replayed document is not "
                           "the version its script was made for"):
            history.advance(1, script=wrong, expect=expect)
    finally:
        history.close()


def test_a_replay_failure_stops_that_document_with_an_error_row() -> None:
    """An unexpected failure (a script whose path leads nowhere) becomes a "replay" error row
    naming it, and the rest of that document is not replayed."""
    result = HistoryResult()
    versions = [(0, "<a/>", None, None, None, None),
                (1, "<a/>", [Delete((5,))], digest(parse_version("<a/>")), None, None),
                (2, "<a><b/></a>", None, None, None, None)]
    replay_document(DocumentHistory("d"), versions, result)
    assert result.replayed == [("d", 0)]
    [error] = result.errors
    assert (error["version"], error["stage"]) == (1, "replay")
    assert error["message"].startswith("ScriptPathError: no node at path [5]")
    assert error["message"].endswith("the rest of this document is not replayed")


def test_a_document_without_versions_gives_nothing() -> None:
    """replay_document with no versions adds no rows (nothing to close with a version)."""
    result = HistoryResult()
    replay_document(DocumentHistory("d", ORDER), [], result)
    assert result == HistoryResult()


def test_an_element_of_a_namespace_in_scope_spends_no_prefix() -> None:
    """Inserting an element of a namespace in scope leaves lxml's made-up prefixes alone, so a
    later namespaced attribute is declared as in a fresh copy: one event, nothing synced."""
    # A URI no other test declares on a root: xmldiff registers those with lxml, process-wide,
    # and lxml would take the registered prefix for the attribute instead.
    ns = "urn:spends-no-prefix"
    d = f'<a><ns0:d xmlns:ns0="{ns}"><ns0:d/></ns0:d></a>'
    versions = [f'<a><a><ns0:d xmlns:ns0="{ns}"/></a></a>',
                f"<a><a/>{d}</a>",  # the inner d inserted into the outer one
                f'<a xmlns:ns0="{ns}" ns0:z="1"><a/>{d}</a>']
    history = DocumentHistory("d")
    try:
        history.advance(0, versions[0])
        assert history.advance(1, versions[1]).synced == 0
        r = history.advance(2, versions[2])
        assert r.synced == 0
        assert [(e.op, str(e.pi.pt)) for e in r.events] == [(Op.INS, f"/a/@{{{ns}}}z")]
    finally:
        history.close()


def test_a_window_bounds_the_replayed_detection() -> None:
    """replay_history(within=N): a dependency completed versions later than the window is
    not detected; with a wide window it is."""
    versions = [
        {"doc": "po.xml", "version": 0, "xml": "<order><item/></order>"},
        {"doc": "po.xml", "version": 1, "xml": "<order><item><price>5</price></item></order>"},
        {"doc": "po.xml", "version": 2,
         "xml": "<order><item><price>5</price><quantity>2</quantity></item></order>"},
    ]
    definition = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"
    assert [c["type"] for c in replay_history(versions, definition).composites] == ["Ei"]
    assert replay_history(versions, definition, within=2).composites == []
    assert len(replay_history(versions, definition, within=100).composites) == 1


def test_a_duration_measures_the_versions_times() -> None:
    """A window given as a duration measures the versions' times (the table's ``time``): a
    dependency completed a day later is not detected under within=1h; versions without a time
    are refused with the reason, as error rows."""
    versions = [
        {"doc": "po.xml", "version": 0, "xml": "<order><item/></order>", "time": 0},
        {"doc": "po.xml", "version": 1, "xml": "<order><item><price>5</price></item></order>",
         "time": 600},
        {"doc": "po.xml", "version": 2, "time": 86_400,
         "xml": "<order><item><price>5</price><quantity>2</quantity></item></order>"},
    ]
    definition = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"
    assert len(replay_history(versions, definition, within="2d").composites) == 1
    assert replay_history(versions, definition, within="1h").composites == []
    untimed = [{k: v for k, v in r.items() if k != "time"} for r in versions]
    result = replay_history(untimed, definition, within="1h")
    assert result.composites == []
    assert result.errors and "carries no time" in result.errors[0]["message"]
    # The events table says when each event happened: its version's time, window or not.
    times = [(e["version"], e["time"]) for e in replay_history(versions, definition).events]
    assert sorted(set(times)) == [(0, 0.0), (1, 600.0), (2, 86_400.0)]
    assert {e["time"] for e in replay_history(untimed, definition).events} == {None}


def test_a_single_event_definition_is_replayed_one_composite_per_event() -> None:
    """``Removed := del(item)`` gives one composite row per removed item (issue 14)."""
    rows = [{"doc": "o.xml", "version": v, "xml": x} for v, x in enumerate([
        "<order><item><price>1</price></item><item/><item/></order>",
        "<order><item><price>1</price></item></order>",
        "<order/>",
    ])]
    result = replay_history(rows, "Removed := del(item)\nPrice := ins(item/price)\n"
                                  "Priced := ins(item) ; Price")
    got = sorted((c["type"], c["version"]) for c in result.composites)
    assert got == [("Price", 0), ("Priced", 0), ("Removed", 1), ("Removed", 1),
                   ("Removed", 2)]
