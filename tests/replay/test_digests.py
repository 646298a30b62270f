"""Unchanged subtrees recognised by their serialisations (issue 29, item 2;
:mod:`xmlevents.replay._digests`).

Checked: that the scripts, hence the events, are xmldiff's alone — on every case of the script
tests, and as a property on random documents and random edits (reorders of identical and of
distinct siblings, duplicates, moves between parents, texts, tails, attributes, comments), with
and without keys; that every script replays to the new version; that the traversals are
xmldiff's minus the inside of skipped subtrees; that the re-written diff phase gives xmldiff's
own actions for the same matching; that a change to one item of a wide document asks for the
ratio of the changed nodes only; and that the namespace scans read from one serialisation
agree with the element-by-element ones.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st
from lxml import etree
from xmldiff import utils
from xmldiff.diff import Differ

from tests.replay.test_script import CASES
from tests.strategies import examples
from xmlevents.replay import (
    DiffOptions,
    DocumentHistory,
    EditScriptError,
    Key,
    SetText,
    _script,
    apply_script,
    c14n,
    edit_script,
    parse_version,
    replay_history,
)
from xmlevents.replay._digests import (
    FLOOR,
    Forms,
    breadth_first,
    has_instructions,
    post_order,
    reverse_post_order,
    twin_subtrees,
)
from xmlevents.replay._history import event_row
from xmlevents.replay._match import KeyedDiffer


def items(n: int, changed: dict[int, str] | None = None) -> str:
    """A flat catalogue of ``n`` items, item ``i``'s price replaced where ``changed`` says."""
    changed = changed or {}
    body = "".join(f'\n  <item id="i{i}"><name>thing {i % 7}</name>'
                   f"<price>{changed.get(i, i % 13)}</price></item>" for i in range(n))
    return f"<catalogue>{body}\n</catalogue>"


def kids(xml: str) -> list[Any]:
    return list(etree.fromstring(xml))


#: The fast path on (the default) and off (xmldiff node by node).
ON = DiffOptions(identical_subtrees=True)
OFF = DiffOptions(identical_subtrees=False)


def test_the_fast_path_is_the_default() -> None:
    """Issue 29: unchanged subtrees are recognised by their forms unless asked otherwise."""
    assert DiffOptions().identical_subtrees is True


# --- forms ---------------------------------------------------------------------------------------


def test_the_tail_is_not_part_of_the_form_but_everything_inside_is() -> None:
    """A form is the subtree's canonical form without its own tail."""
    forms = Forms()
    a, b = kids("<r><a x='1'>t<b/>u</a> one</r>")[0], kids("<r><a x='1'>t<b/>u</a> two</r>")[0]
    assert forms.of(a) == forms.of(b)
    c = kids("<r><a x='1'>t<b/>v</a></r>")[0]  # a tail inside differs
    assert forms.of(a) != forms.of(c)


def test_attribute_order_and_where_a_declaration_is_made_are_not_part_of_the_form() -> None:
    """Forms are canonical (C14N): what the model compares versions by."""
    a = kids('<r xmlns:p="urn:p"><p:x b="1" a="2"/></r>')[0]
    b = kids('<r><p:x xmlns:p="urn:p" a="2" b="1"></p:x></r>')[0]
    assert Forms().of(a) == Forms().of(b)


def test_the_local_replay_pairs_as_the_diff_of_parsed_versions_does() -> None:
    """Version 1 only reorders attributes (equal by C14N: no event, and the replayed
    document keeps the old order); version 2 inserts a look-alike item first. The local
    replay diffs against the replayed document, Spark's diff stage against the parsed
    version 1: both must match the unchanged items whole (one insertion), whatever order
    their attributes are in — not align them by position as xmldiff does."""
    def catalogue(order: str, first: bool) -> str:
        body = "".join(f"<item {order.format(i=i)}><n>x{i}</n></item>" for i in range(6))
        head = '<item cat="c" id="new"><n>x9</n></item>' if first else ""
        return f"<c>{head}{body}</c>"
    v0 = catalogue('id="i{i}" cat="c"', False)
    v1, v2 = catalogue('cat="c" id="i{i}"', False), catalogue('cat="c" id="i{i}"', True)
    script = edit_script(v1, v2)
    assert script[0] == _script.InsertElement((), 0, "item")
    assert all(a.path[:1] == (0,) for a in script[1:])
    rows = [{"doc": "d", "version": v, "xml": x} for v, x in enumerate((v0, v1, v2))]
    local = [(e["op"], e["path"]) for e in replay_history(rows).events if e["version"] == 2]
    assert local == [("ins", "/c/item"), ("ins", "/c/item/@cat"), ("ins", "/c/item/@id"),
                     ("ins", "/c/item/n"), ("ins", "/c/item/n/text()")]


def test_a_prefix_bound_to_another_uri_is_another_form() -> None:
    """The declarations a subtree needs are part of its form."""
    a = kids('<r xmlns:p="urn:a"><p:x>1</p:x></r>')[0]
    b = kids('<r xmlns:p="urn:b"><p:x>1</p:x></r>')[0]
    assert Forms().of(a) != Forms().of(b)


def test_equal_forms_are_never_less_similar_than_the_floor() -> None:
    """The shortcut's premise: xmldiff's ratio of two equal subtrees is at least FLOOR, with
    none of their children matched (its lowest), and 1 for a leaf."""
    differ = KeyedDiffer()
    old = parse_version("<r><a k='1'>t<b/><c>u</c></a><d>x</d></r>")
    new = parse_version("<r><a k='1'>t<b/><c>u</c></a><d>x</d></r>")
    differ.set_trees(old, new)
    differ._l2rmap, differ._text_cache = {}, {}
    assert differ.node_ratio(old[0], new[0]) == FLOOR
    assert differ.node_ratio(old[1], new[1]) == 1.0


def test_documents_with_instructions_are_left_to_xmldiff() -> None:
    """xmldiff's ratio fails on a processing instruction: that failure (and sync) stays."""
    assert has_instructions(parse_version("<r><a><?pi x?></a></r>"))
    assert not has_instructions(parse_version("<r><!-- c --><a/></r>"))
    old, new = "<r><a><?pi x?></a><b>1</b></r>", "<r><a><?pi x?></a><b>2</b></r>"
    assert edit_script(old, new, ON) == edit_script(old, new, OFF)


def test_twin_subtrees_are_the_outermost_pairs_matched_node_for_node() -> None:
    """A matched pair with equal forms whose insides are matched to their twins is skipped;
    its descendants are not listed; the changed path is not. The unchanged items are paired
    whole before xmldiff; the changed one's name, matched by xmldiff node for node, is found
    as a twin subtree after it."""
    differ = ON.differ()
    old, new = parse_version(items(5)), parse_version(items(5, {2: "99"}))
    differ.match(old, new)
    twins = differ._identical
    assert differ.right[0] in twins and differ.right[0][0] not in twins
    assert differ.right[2] not in twins and differ.right[2][0] in twins  # its name
    assert differ.right not in twins
    # xmldiff's own matching, node for node: the same outermost twins.
    plain = OFF.differ()
    plain.match(old, new)
    found = twin_subtrees(plain.right, plain._r2lmap, Forms())
    assert {_script.path_of(n) for n in found if n.getroottree() is new.getroottree()} == {
        _script.path_of(n) for n in twins if n.getroottree() is new.getroottree()}


# --- traversals --------------------------------------------------------------------------------


def random_tree(rng: random.Random, depth: int = 0) -> Any:
    e = etree.Element(rng.choice("abc"))
    for _ in range(rng.randint(0, 4 if depth < 3 else 0)):
        e.append(random_tree(rng, depth + 1) if rng.random() < 0.8 else etree.Comment("c"))
    return e


@pytest.mark.parametrize("seed", range(20))
def test_traversals_are_xmldiffs_without_the_inside_of_skipped_subtrees(seed: int) -> None:
    rng = random.Random(seed)
    root = random_tree(rng)
    assert list(post_order(root, set())) == list(utils.post_order_traverse(root))
    assert list(reverse_post_order(root, set())) == list(
        utils.reverse_post_order_traverse(root))
    assert list(breadth_first(root, set())) == list(utils.breadth_first_traverse(root))
    skip = {e for e in root.iter() if e is not root and rng.random() < 0.3}
    inside = {d for s in skip for d in s.iterdescendants()}
    for mine, theirs in ((post_order, utils.post_order_traverse),
                         (reverse_post_order, utils.reverse_post_order_traverse),
                         (breadth_first, utils.breadth_first_traverse)):
        assert list(mine(root, skip)) == [n for n in theirs(root) if n not in inside]


# --- the diff phase ----------------------------------------------------------------------------


def actions_of(differ: Any, diff: Any, old: Any, new: Any) -> list[Any]:
    differ.match(old, new)
    return list(diff(differ))


@pytest.mark.parametrize(("old", "new"), list(CASES.values()), ids=list(CASES))
def test_the_diff_phase_is_xmldiffs_for_the_same_matching(old: str, new: str) -> None:
    """Without identical subtrees the re-written diff is xmldiff's, action for action."""
    old_root, new_root = parse_version(old), parse_version(new)
    if _script._twins(old_root) or _script._twins(new_root):
        pytest.skip("xmldiff is not run on these")
    options = DiffOptions(identical_subtrees=False)
    try:
        theirs = actions_of(options.differ(), Differ.diff, old_root, new_root)
    except (RuntimeError, TypeError) as exc:  # a namespace URI changed, a PI: both fail
        # (ours an EditScriptError where xmldiff raises its RuntimeError: edit_script
        # catches both and lets sync make the script)
        expected = EditScriptError if isinstance(exc, RuntimeError) else type(exc)
        with pytest.raises(expected):
            actions_of(options.differ(), KeyedDiffer.diff, old_root, new_root)
        return
    assert actions_of(options.differ(), KeyedDiffer.diff, old_root, new_root) == theirs


@pytest.mark.parametrize(("old", "new"), list(CASES.values()), ids=list(CASES))
def test_the_fast_path_changes_no_script_of_the_small_cases(old: str, new: str) -> None:
    """On every case of the script tests the scripts with and without the fast path are the
    same (the events of the existing tests do not change)."""
    assert edit_script(old, new, ON) == edit_script(old, new, OFF)


def test_a_reordering_moves_the_changed_item_not_the_unchanged_one() -> None:
    """The Spark tests' history: an unchanged item moved one place while its neighbour
    changed. xmldiff aligns the look-alike items by position (the unchanged item's texts
    rewritten, a price moved between items); here the unchanged item keeps its nodes and the
    changed one moves and is filled: not the unchanged one moved (whose re-insertion a
    definition on ins(item) would see)."""
    old = "<order><item><price>6</price><quantity>2</quantity></item><item/></order>"
    new = ("<order><item><quantity>1</quantity><price>1</price></item>"
           "<item><price>6</price><quantity>2</quantity></item></order>")
    assert edit_script(old, new, ON) == [
        _script.Move((1,), (), 0), _script.InsertElement((0,), 0, "quantity"),
        SetText((0, 0), "1"), _script.InsertElement((0,), 1, "price"), SetText((0, 1), "1")]
    off = edit_script(old, new, OFF)
    assert any(isinstance(a, SetText) and a.path == (0, 1) for a in off)  # xmldiff's


# --- random documents, random edits --------------------------------------------------------------

TAGS = ("a", "b", "item")
TEXTS = (None, "1", "2", "x y")


@st.composite
def trees(draw: st.DrawFn, depth: int = 0) -> Any:
    """A small element with few tags, texts and attributes, so that equal subtrees (and
    look-alike ones) are frequent; now and then a comment or a tail."""
    e = etree.Element(draw(st.sampled_from(TAGS)))
    e.text = draw(st.sampled_from(TEXTS))
    if draw(st.booleans()):
        e.set("k", draw(st.sampled_from(("1", "2"))))
    width = draw(st.integers(0, 4 if depth < 3 else 0))
    for _ in range(width):
        if draw(st.integers(0, 9)) == 0:
            child = etree.Comment(draw(st.sampled_from(("c", "d"))))
        else:
            child = draw(trees(depth + 1))
        child.tail = draw(st.sampled_from((None, None, "t")))
        e.append(child)
    return e


EDITS = ("duplicate", "swap_equal", "swap", "reverse", "move", "delete", "insert", "text",
         "tail", "attribute")


def _edit(data: st.DataObject, root: Any) -> str:
    """One random edit of ``root``, in place; its name."""
    kind = data.draw(st.sampled_from(EDITS))
    nodes = list(root.iter())[1:]
    parents = [e for e in root.iter(tag=etree.Element) if len(e)]
    pick = lambda seq: seq[data.draw(st.integers(0, len(seq) - 1))]  # noqa: E731
    if kind == "duplicate" and nodes:
        node = pick(nodes)
        node.addnext(copy.deepcopy(node))
    elif kind in ("swap_equal", "swap") and parents:
        parent = pick(parents)
        if len(parent) > 1:
            i = data.draw(st.integers(0, len(parent) - 2))
            if kind == "swap_equal":
                parent[i + 1] = copy.deepcopy(parent[i])  # two equal ones, then swapped
            a, b = parent[i], parent[i + 1]
            b.addnext(copy.deepcopy(a))
            parent.remove(a)
    elif kind == "reverse" and parents:
        parent = pick(parents)
        kids = list(parent)
        for k in kids:
            parent.remove(k)
        parent.extend(reversed(kids))
    elif kind == "move" and nodes:
        node = pick(nodes)
        inside = set(node.iter())
        targets = [e for e in root.iter(tag=etree.Element) if e not in inside]
        target = pick(targets)
        target.insert(data.draw(st.integers(0, len(target))), node)
    elif kind == "delete" and nodes:
        node = pick(nodes)
        node.getparent().remove(node)
    elif kind == "insert":
        target = pick(list(root.iter(tag=etree.Element)))
        target.insert(data.draw(st.integers(0, len(target))), data.draw(trees(2)))
    elif kind == "text":
        pick(list(root.iter(tag=etree.Element))).text = data.draw(st.sampled_from(TEXTS))
    elif kind == "tail" and nodes:
        pick(nodes).tail = data.draw(st.sampled_from(TEXTS))
    elif kind == "attribute":
        e = pick(list(root.iter(tag=etree.Element)))
        if data.draw(st.booleans()) and "k" in e.attrib:
            del e.attrib["k"]
        else:
            e.set("k", data.draw(st.sampled_from(("1", "2", "3"))))
    return kind


@st.composite
def version_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """A random document and a version of it after 1..4 random edits."""
    data = draw(st.data())
    root = draw(trees())
    old = etree.tostring(root, encoding="unicode")
    done = [_edit(data, root) for _ in range(draw(st.integers(1, 4)))]
    new = etree.tostring(root, encoding="unicode")
    note(f"{done}: {old} -> {new}")
    return old, new


KEYED = DiffOptions(keys=(Key.parse("item=@k"),))


def _renamed(rows: list[tuple[int, dict[str, Any]]]) -> list[tuple[Any, ...]]:
    """Version, op, path and moved flag of each event row, the ids renamed in order of
    appearance (ids up to renaming)."""
    names: dict[Any, int] = {}
    return [(version, e["op"], e["path"], e.get("moved"), names.setdefault(e["id"], len(names)))
            for version, e in rows]


def events_of(versions: list[str], options: DiffOptions) -> list[tuple[Any, ...]]:
    """The primitive events of replaying the versions in process (each diffed here, against
    the version before as the replay keeps it)."""
    rows = [{"doc": "d", "version": v, "xml": x} for v, x in enumerate(versions)]
    return _renamed([(e["version"], e) for e in replay_history(rows, options=options).events])


def scripted_events(versions: list[str], options: DiffOptions) -> list[tuple[Any, ...]]:
    """:func:`events_of`, each version after the first given as the script between the two
    parsed versions (the Spark diff stage's way: nothing is diffed in the replay)."""
    history = DocumentHistory("d", options=options)
    found = [(0, event_row("d", 0, e)) for e in history.advance(0, versions[0]).events]
    for v in range(1, len(versions)):
        script = edit_script(versions[v - 1], versions[v], options)
        expect = _script.digest(parse_version(versions[v]))
        found += [(v, event_row("d", v, e))
                  for e in history.advance(v, script=script, expect=expect).events]
    return _renamed(found)


@settings(max_examples=examples(200), deadline=None)
@given(version_pairs())
def test_every_script_makes_the_new_version_and_the_replay_its_events(
        pair: tuple[str, str]) -> None:
    """On random documents and edits (reorders of equal and of distinct siblings,
    duplicates, moves, texts, tails, attributes, comments) the script, with and without keys,
    turns the old version into the new one; and a replay of old, new and old again (which
    diffs against the version it keeps, and tries the script on the document itself) gives
    the events of the scripts between the parsed versions, ids up to renaming: the local
    engine's events are Spark's."""
    old, new = pair
    for options in (ON, KEYED):
        script = edit_script(old, new, options)
        tree = etree.ElementTree(parse_version(old))
        apply_script(tree, script)
        assert c14n(tree.getroot()) == c14n(parse_version(new))
        assert events_of([old, new, old], options) == scripted_events([old, new, old], options)


@st.composite
def distinct_children(draw: st.DrawFn) -> Any:
    """A root whose children are 1..6 elements with distinct forms and no tails."""
    root = etree.Element("r")
    seen: set[bytes] = set()
    for _ in range(draw(st.integers(1, 6))):
        child = draw(trees(1))
        for e in child.iter():
            e.tail = None
        form = etree.tostring(child)
        if child.tag is etree.Comment or form in seen:
            continue
        seen.add(form)
        root.append(child)
    return root


@settings(max_examples=examples(200), deadline=None)
@given(distinct_children(), st.data())
def test_an_edit_among_distinct_siblings_costs_what_changed(root: Any, data: st.DataObject
                                                            ) -> None:
    """Among siblings that are all different, inserting one, deleting one or moving one
    is that one action (with the subtree's insides): the others keep their nodes,
    where xmldiff would align look-alike siblings by position and rewrite them."""
    old = etree.tostring(root, encoding="unicode")
    n = len(root)
    kind = data.draw(st.sampled_from(("insert", "delete", "move")))
    if kind == "insert":
        child = data.draw(trees(1))
        for e in child.iter():
            e.tail = None
        assume(child.tag is not etree.Comment
               and etree.tostring(child) not in {etree.tostring(c) for c in root})
        pos = data.draw(st.integers(0, n))
        root.insert(pos, child)
    elif kind == "delete":
        pos = data.draw(st.integers(0, n - 1))
        root.remove(root[pos])
    else:
        assume(n > 1)
        a, b = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, n - 2))
        assume(a != b)
        child = root[a]
        root.remove(child)
        root.insert(b, child)
    new = etree.tostring(root, encoding="unicode")
    script = edit_script(old, new, ON)
    note(f"{kind}: {old} -> {new}: {script}")
    if kind == "insert":
        first = script[0]
        assert isinstance(first, (_script.InsertElement, _script.InsertFragment))
        assert (first.path, first.pos) == ((), pos)
        assert all(a.path[:1] == (pos,) for a in script[1:])
    elif kind == "delete":
        # xmldiff deletes the insides first, then the element.
        assert script[-1] == _script.Delete((pos,))
        assert all(isinstance(a, _script.Delete) and a.path[:1] == (pos,) for a in script)
    else:
        assert len(script) == 1 and isinstance(script[0], _script.Move)


# --- what a change costs -----------------------------------------------------------------------


class CountingDiffer(KeyedDiffer):
    asked = 0

    def node_ratio(self, left: Any, right: Any) -> float:
        CountingDiffer.asked += 1
        return super().node_ratio(left, right)


def asked(old: str, new: str, identical: bool, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr("xmlevents.replay._script.KeyedDiffer", CountingDiffer)
    CountingDiffer.asked = 0
    edit_script(old, new, DiffOptions(identical_subtrees=identical))
    return CountingDiffer.asked


def test_one_changed_item_of_many_is_the_only_one_compared(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """Only the changed path gets xmldiff's ratio; without the fast path every node does."""
    old, new = items(300), items(300, {150: "99"})
    assert asked(old, new, True, monkeypatch) <= 10
    assert asked(old, new, False, monkeypatch) > 300  # xmldiff alone compares them all


def test_one_changed_item_gives_one_text_update() -> None:
    """The script of one changed price is one text update, with the fast path or without."""
    old, new = items(300), items(300, {150: "99"})
    assert edit_script(old, new, ON) == [SetText((150, 1), "99")] == edit_script(old, new, OFF)


def test_a_changed_plugin_among_unchanged_namesakes_is_that_plugin_changed() -> None:
    """commons-csv's pom (bench/data), version 464: one reporting plugin loses its
    ``version`` among unchanged plugins. The one ``plugin`` left on each side, most of its
    children unchanged, is the same plugin: one deletion. Left to xmldiff it rewrote every
    reporting plugin (101 actions, 1,223 events; the no-key truth benchmark counted 54
    dependencies added for 22)."""
    import gzip
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "data" / "commons-csv-pom.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        xml = {r["version"]: r["xml"] for r in map(json.loads, f) if r["version"] in (463, 464)}
    for options in (ON, DiffOptions(keys=(Key.parse("pom:dependency=pom:groupId,pom:artifactId",
                                                    {"pom": "http://maven.apache.org/POM/4.0.0"}),))):
        [action] = edit_script(xml[463], xml[464], options)
        assert type(action).__name__ == "Delete"


def test_an_unchanged_version_gives_no_action_and_compares_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Identical versions: no action, no ratio."""
    assert edit_script(items(200), items(200), ON) == []
    assert asked(items(200), items(200), True, monkeypatch) == 0


# --- the namespace scans -----------------------------------------------------------------------


NAMESPACED = [
    '<a xmlns="urn:d" xmlns:p="urn:p"><p:b/><c xmlns:q="urn:q"><q:d>x</q:d></c></a>',
    '<a xmlns:p="urn:x"><b xmlns:q="urn:x"><p:c/></b></a>',  # twins
    '<a xmlns:p="urn:x"><b xmlns:p="urn:y"><p:c/></b><p:d/></a>',  # p rebound
    '<a><b>xmlns:p="urn:fake" in a text</b></a>',
    '<p:a xmlns:p="urn:p" xmlns:q="urn:p"/>',  # twins on the root
]


@pytest.mark.parametrize("xml", NAMESPACED + [old for old, _ in CASES.values()]
                         + [new for _, new in CASES.values()])
def test_namespace_scans_agree_with_every_elements_nsmap(xml: str) -> None:
    root = parse_version(xml)
    slow_twins = any(len(e.nsmap) > 1 and len(set(e.nsmap.values())) < len(e.nsmap)
                     for e in root.iter(tag=etree.Element))
    assert _script._twins(root) == slow_twins
    slow = {p: u for e in root.iter() for p, u in e.nsmap.items() if p}
    fast = _script._prefixes(root)
    # The declarations may name more (text that looks like one): never another URI.
    assert {p: fast[p] for p in slow} == slow


def test_a_copy_of_the_old_version_is_not_changed() -> None:
    old = parse_version(items(50))
    before = etree.tostring(old)
    edit_script(copy.deepcopy(old), parse_version(items(50, {3: "1"})), ON)
    edit_script(old, parse_version(items(50, {3: "1"})), ON)
    assert etree.tostring(old) == before
