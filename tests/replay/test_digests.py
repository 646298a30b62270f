"""Unchanged subtrees matched outright (issue 29, item 2; :mod:`xmlevents.replay._digests`).

Checked: which children are paired as identical; that the traversals are xmldiff's, minus the
inside of identical subtrees; that the re-written diff phase gives xmldiff's own actions for
the same matching; that a change to one item of a wide document costs what changed (the
similarity is asked about the changed nodes only, the script touches only them); and that the
namespace scans read from one serialisation agree with the element-by-element ones.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from lxml import etree
from xmldiff import utils
from xmldiff.diff import Differ

from tests.replay.test_script import CASES
from xmlevents.replay import (
    DiffOptions,
    EditScriptError,
    Move,
    SetText,
    _script,
    edit_script,
    parse_version,
)
from xmlevents.replay._digests import (
    Forms,
    breadth_first,
    identical_children,
    post_order,
    reverse_post_order,
)
from xmlevents.replay._match import KeyedDiffer


def items(n: int, changed: dict[int, str] | None = None) -> str:
    """A flat catalogue of ``n`` items, item ``i``'s price replaced where ``changed`` says."""
    changed = changed or {}
    body = "".join(f'\n  <item id="i{i}"><name>thing {i % 7}</name>'
                   f"<price>{changed.get(i, i % 13)}</price></item>" for i in range(n))
    return f"<catalogue>{body}\n</catalogue>"


def kids(xml: str) -> list[Any]:
    return list(etree.fromstring(xml))


# --- pairing -----------------------------------------------------------------------------------


def test_a_form_once_on_each_side_pairs_its_children_wherever_they_are() -> None:
    left = kids("<r><a>1</a><b>2</b><c>3</c></r>")
    right = kids("<r><c>3</c><a>1</a><b>changed</b></r>")
    pairs = identical_children(left, right, Forms())
    assert {(lft.tag, rgt.tag) for lft, rgt in pairs} == {("a", "a"), ("c", "c")}


def test_repeated_forms_are_paired_in_order() -> None:
    left = kids("<r><s>0</s><s>0</s><x/><s>0</s></r>")
    right = kids("<r><s>0</s><y/><s>0</s></r>")
    pairs = identical_children(left, right, Forms())
    assert [(left.index(a), right.index(b)) for a, b in pairs] == [(0, 0), (1, 2)]


def test_the_tail_is_not_part_of_the_form_but_everything_inside_is() -> None:
    forms = Forms()
    a, b = kids("<r><a x='1'>t<b/>u</a> one</r>")[0], kids("<r><a x='1'>t<b/>u</a> two</r>")[0]
    assert forms.of(a) == forms.of(b)
    c = kids("<r><a x='1'>t<b/>v</a></r>")[0]  # a tail inside differs
    assert forms.of(a) != forms.of(c)


# --- traversals --------------------------------------------------------------------------------


def random_tree(rng: random.Random, depth: int = 0) -> Any:
    e = etree.Element(rng.choice("abc"))
    for _ in range(rng.randint(0, 4 if depth < 3 else 0)):
        e.append(random_tree(rng, depth + 1) if rng.random() < 0.8 else etree.Comment("c"))
    return e


#: The option on (it is off by default: issue 29's identical events).
ON = DiffOptions(identical_subtrees=True)


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
def test_identical_subtrees_change_no_script_of_the_small_cases(old: str, new: str) -> None:
    """On every case of the script tests the scripts with and without identical subtrees
    are the same (the events of the existing tests do not change)."""
    assert edit_script(old, new, ON) == edit_script(old, new, DiffOptions(identical_subtrees=False))


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
    old, new = items(300), items(300, {150: "99"})
    assert asked(old, new, True, monkeypatch) <= 10
    assert asked(old, new, False, monkeypatch) > 300  # xmldiff alone compares them all


def test_one_changed_item_gives_one_text_update_and_a_moved_one_one_move() -> None:
    old = items(300)
    assert edit_script(old, items(300, {150: "99"}), ON) == [SetText((150, 1), "99")]
    root = etree.fromstring(old)
    moved = root[10]
    root.remove(moved)
    root.insert(200, moved)
    script = edit_script(old, etree.tostring(root, encoding="unicode"), ON)
    assert [type(a) for a in script if not isinstance(a, _script.SetTail)] == [Move]


def test_an_unchanged_version_gives_no_action_and_compares_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
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
