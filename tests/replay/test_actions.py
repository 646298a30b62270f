"""Edit-script actions as typed values: their JSON text, applying them, and their errors."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xmlevents.algebra import XmlEventsError
from xmlevents.replay import (
    ACTION_TYPES,
    Action,
    BadVersion,
    Delete,
    DiffActionError,
    EditScriptError,
    GitHistoryError,
    InexactScriptError,
    InsertComment,
    InsertElement,
    InsertFragment,
    MissingXmlError,
    Move,
    Rename,
    RenameAttribute,
    ReplaceRoot,
    ScriptFormatError,
    ScriptPathError,
    SetAttribute,
    SetTail,
    SetText,
    VersionTableError,
    _script,
    apply_script,
    c14n,
    decode_script,
    edit_script,
    encode_script,
    parse_version,
)
from xmlevents.replay._script import apply_action

# --- generated scripts ------------------------------------------------------------------------

paths = st.lists(st.integers(0, 2**40), max_size=4).map(tuple)
positions = st.integers(0, 2**40)
# Any text JSON can carry: unpaired surrogates excluded (they are not text).
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
maybe = st.none() | texts

actions: st.SearchStrategy[Action] = st.one_of(
    st.builds(InsertElement, paths, positions, texts),
    st.builds(InsertComment, paths, positions, texts),
    st.builds(InsertFragment, paths, positions, texts),
    st.builds(Delete, paths),
    st.builds(Move, paths, paths, positions),
    st.builds(Rename, paths, texts),
    st.builds(SetText, paths, maybe),
    st.builds(SetTail, paths, maybe),
    st.builds(SetAttribute, paths, texts, maybe),
    st.builds(RenameAttribute, paths, texts, texts),
    st.builds(ReplaceRoot, texts),
)


@given(st.lists(actions, max_size=8))
def test_decode_of_encode_is_the_script(script: list[Action]) -> None:
    """decode_script(encode_script(s)) == s for every script, field types included."""
    again = decode_script(encode_script(script))
    assert again == script
    assert [type(a) for a in again] == [type(a) for a in script]
    assert all(type(a.path) is tuple for a in again if not isinstance(a, ReplaceRoot))


def test_every_kind_of_action_is_generated_and_named_once() -> None:
    """ACTION_TYPES names each of the Action union's eleven classes by a distinct kind."""
    assert len(ACTION_TYPES) == 11
    assert {cls.kind for cls in ACTION_TYPES.values()} == set(ACTION_TYPES)
    assert set(ACTION_TYPES.values()) == set(Action.__args__)  # type: ignore[attr-defined]


def test_actions_are_immutable_values() -> None:
    """Actions compare and hash by value, and cannot be changed."""
    a, b = SetAttribute((0, 1), "k", None), SetAttribute((0, 1), "k", None)
    assert a == b and hash(a) == hash(b) and a != SetAttribute((0, 1), "k", "v")
    assert len({a, b, Delete((0, 1))}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.name = "m"  # type: ignore[misc]
    assert not hasattr(a, "__dict__")  # slotted


def test_the_json_text_is_kind_then_fields() -> None:
    """An action's text is [kind, field, ...], paths as arrays (what the Spark column holds)."""
    assert encode_script([SetAttribute((0,), "k", None), Move((2,), (), 0),
                          ReplaceRoot("<a/>")]) == (
        '[["attr",[0],"k",null],["move",[2],[],0],["root","<a/>"]]')
    assert decode_script('[["delete", [1, 0]]]') == [Delete((1, 0))]
    assert decode_script(b"[]") == []


@pytest.mark.parametrize(("text", "message"), [
    ('[["delete", [0]]', "not JSON"),
    (b"\xff", "not JSON"),
    ('{"delete": [0]}', "expected a JSON array of actions, got dict"),
    ('["delete"]', "action 0: expected an array [kind, field, ...], got 'delete'"),
    ("[[]]", "action 0: expected an array"),
    ('[[1, [0]]]', "action 0: expected an array"),
    ('[["delete", [0]], ["erase", [0]]]', "action 1: unknown action 'erase'"),
    ('[["delete"]]', "'delete' has 1 field(s) (path), got 0"),
    ('[["rename", [0], "b", "c"]]', "'rename' has 2 field(s) (path, tag), got 3"),
    ('[["delete", [0, -1]]]', "path=[0, -1] must be an array of child indices"),
    ('[["delete", [true]]]', "path=[True] must be an array of child indices"),
    ('[["delete", "0"]]', "path='0' must be an array"),
    ('[["insert", [], "1", "c"]]', "pos='1' must be an integer >= 0"),
    ('[["insert", [], 1, null]]', "tag=None must be a string"),
    ('[["text", [0], 5]]', "text=5 must be a string or null"),
])
def test_bad_text_is_a_script_format_error(text: str | bytes, message: str) -> None:
    """Text that is not a script raises ScriptFormatError naming the action and the field."""
    with pytest.raises(ScriptFormatError) as info:
        decode_script(text)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, XmlEventsError)


# --- applying ---------------------------------------------------------------------------------


def test_apply_dispatches_on_the_type() -> None:
    """Each kind of action does its edit (one script of every kind, on a plain tree)."""
    tree = parse_version('<r><a k="1">t</a>x<b/><c/></r>').getroottree()
    apply_script(tree, [
        InsertElement((), 0, "n"), InsertComment((), 1, "hi"),
        InsertFragment((), 2, '<f z="1"><g/></f>'), Delete((4,)),  # b, with its tail
        Move((4,), (3,), 0), Rename((0,), "m"), SetText((3,), "u"), SetTail((3,), "v"),
        SetAttribute((3,), "k", None), SetAttribute((3,), "j", "2"),
        RenameAttribute((2,), "z", "y")])
    assert c14n(tree.getroot()) == (
        b'<r><m></m><!--hi--><f y="1"><g></g></f><a j="2">u<c></c></a>v</r>')
    apply_script(tree, [ReplaceRoot('<s xmlns="urn:s"/>')])
    assert c14n(tree.getroot()) == b'<s xmlns="urn:s"></s>'


def test_a_move_within_its_parent_counts_after_leaving() -> None:
    """Move's position counts as xmldiff does, after the node has left; in place does nothing."""
    for pos, want in [(0, b"<r><a></a><b></b><c></c></r>"), (2, b"<r><b></b><c></c><a></a></r>")]:
        tree = parse_version("<r><a/><b/><c/></r>").getroottree()
        apply_action(tree, Move((0,), (), pos))
        assert c14n(tree.getroot()) == want


def test_a_path_leading_nowhere_is_a_script_path_error() -> None:
    """An action whose path names no node raises ScriptPathError (an IndexError)."""
    tree = parse_version("<r><a/></r>").getroottree()
    with pytest.raises(ScriptPathError, match=r"no node at path \[0, 3\]: step 1 asks for "
                                              r"child 3 of 0") as info:
        apply_action(tree, Delete((0, 3)))
    assert isinstance(info.value, IndexError) and isinstance(info.value, EditScriptError)
    assert c14n(tree.getroot()) == b"<r><a></a></r>"


def test_applying_something_else_is_a_script_format_error() -> None:
    """A list in the old shape is no action: ScriptFormatError, nothing done."""
    tree = parse_version("<r><a/></r>").getroottree()
    with pytest.raises(ScriptFormatError, match=r"not an edit action: \['delete', \[0\]\]"):
        apply_action(tree, ["delete", [0]])  # type: ignore[arg-type]
    assert len(tree.getroot()) == 1


# --- what edit_script does when xmldiff or everything falls short ------------------------------


def test_an_unknown_xmldiff_action_is_a_diff_action_error(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """An xmldiff action this module does not know raises DiffActionError (a TypeError) from
    the xmldiff pass, and edit_script falls back to sync, still exact."""
    from xmlevents.replay._match import KeyedDiffer  # its diff phase is xmldiff's, re-written

    monkeypatch.setattr(KeyedDiffer, "diff", lambda self, left, right: iter([object()]))
    old = parse_version("<a/>")
    with pytest.raises(DiffActionError, match="xmldiff action object is not known") as info:
        _script._xmldiff_script(old, parse_version("<a><b/></a>"), _script.DiffOptions(),
                                _script._Target(old))
    assert isinstance(info.value, TypeError)
    assert edit_script("<a/>", "<a><b/></a>") == [InsertFragment((), 0, "<b/>")]


def test_no_exact_script_is_an_inexact_script_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """If not even replacing the root gives the new version, InexactScriptError (a ValueError)."""
    calls = iter(range(10**6))
    monkeypatch.setattr(_script, "c14n", lambda root: str(next(calls)).encode())
    with pytest.raises(InexactScriptError, match="no edit script reproduces") as info:
        edit_script("<a/>", "<b/>")
    assert isinstance(info.value, ValueError)


# --- the errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(("error", "builtin"), [
    (BadVersion, ValueError), (MissingXmlError, ValueError), (VersionTableError, ValueError),
    (GitHistoryError, ValueError), (ScriptFormatError, ValueError),
    (ScriptPathError, IndexError), (DiffActionError, TypeError),
    (InexactScriptError, ValueError)])
def test_each_error_is_an_xmlevents_error_and_its_builtin(error: type[Any],
                                                          builtin: type[Exception]) -> None:
    """Every replay error derives from XmlEventsError and the built-in it replaced."""
    assert issubclass(error, XmlEventsError) and issubclass(error, builtin)


def test_errors_and_actions_import_without_pyspark() -> None:
    """The errors and the actions are importable where pyspark is not (no Spark imported)."""
    code = ("import sys; from xmlevents.replay import GitHistoryError, ScriptFormatError, "
            "BadVersion, Move, decode_script, git_history; "
            "print('pyspark' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_an_unknown_package_attribute_is_an_attribute_error() -> None:
    """xmlevents.replay's lazy names stop at its own: others raise AttributeError (PEP 562)."""
    import xmlevents.replay

    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        xmlevents.replay.nope  # noqa: B018  (the attribute access is the test)
