"""Edit-script actions as typed values, and their JSON text (issue 12; DESIGN section 7).

An action is a frozen, slotted dataclass, compared by value; a node is named by its
child-index path from the root (``(3, 0)`` is the root's fourth child's first child), so
applying an action needs no XPath and no namespace map (:mod:`._script` applies them, with
lxml's element methods). On Spark the diff stage sends each script to the apply stage as JSON
text in its ``script`` column: :func:`encode_script` writes it, :func:`decode_script` reads it
back, checking every field (``decode_script(encode_script(s)) == s``).

The text of an action is a JSON array, its kind then its fields in order (paths as arrays),
e.g. ``["attr", [0], "k", null]``:

====================================  ===============  ========================================
action                                kind             made of xmldiff's
====================================  ===============  ========================================
``InsertElement(path, pos, tag)``     ``insert``       ``InsertNode`` (an empty element)
``InsertComment(path, pos, text)``    ``comment``      ``InsertComment``
``InsertFragment(path, pos, xml)``    ``fragment``     (a subtree copied whole by ``sync``)
``Delete(path)``                      ``delete``       ``DeleteNode`` (the node and its tail)
``Move(path, target, pos)``           ``move``         ``MoveNode`` (one lxml call: ids kept)
``Rename(path, tag)``                 ``rename``       ``RenameNode``
``SetText(path, text)``               ``text``         ``UpdateTextIn`` (comments' and PIs' too)
``SetTail(path, text)``               ``tail``         ``UpdateTextAfter``
``SetAttribute(path, name, value)``   ``attr``         ``Insert/Update/DeleteAttrib`` (None)
``RenameAttribute(path, old, new)``   ``rename_attr``  ``RenameAttrib`` (new set, old deleted)
``ReplaceRoot(xml)``                  ``root``         (the root's tag, prefix or declarations)
====================================  ===============  ========================================
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from ._errors import ScriptFormatError

__all__ = ["NodePath", "InsertElement", "InsertComment", "InsertFragment", "Delete", "Move",
           "Rename", "SetText", "SetTail", "SetAttribute", "RenameAttribute", "ReplaceRoot",
           "Action", "ACTION_TYPES", "encode_script", "decode_script"]

#: A node's child-index path from the root; ``()`` is the root.
NodePath = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class InsertElement:
    """An empty element ``tag`` (Clark notation) inserted at ``pos`` under ``path``."""

    kind: ClassVar[str] = "insert"
    path: NodePath
    pos: int
    tag: str


@dataclass(frozen=True, slots=True)
class InsertComment:
    """A comment holding ``text`` inserted at ``pos`` under ``path``."""

    kind: ClassVar[str] = "comment"
    path: NodePath
    pos: int
    text: str


@dataclass(frozen=True, slots=True)
class InsertFragment:
    """A node serialised as ``xml`` (element with its subtree, comment or PI) inserted at
    ``pos`` under ``path``: what :func:`~._script.sync` copies from the new version."""

    kind: ClassVar[str] = "fragment"
    path: NodePath
    pos: int
    xml: str


@dataclass(frozen=True, slots=True)
class Delete:
    """The node at ``path`` removed, with its subtree and its tail."""

    kind: ClassVar[str] = "delete"
    path: NodePath


@dataclass(frozen=True, slots=True)
class Move:
    """The node at ``path`` moved to ``pos`` under ``target`` (``pos`` counted as xmldiff
    does, after the node has left)."""

    kind: ClassVar[str] = "move"
    path: NodePath
    target: NodePath
    pos: int


@dataclass(frozen=True, slots=True)
class Rename:
    """The element at ``path`` renamed to ``tag`` (Clark notation)."""

    kind: ClassVar[str] = "rename"
    path: NodePath
    tag: str


@dataclass(frozen=True, slots=True)
class SetText:
    """The text of the node at ``path`` set (None removes it)."""

    kind: ClassVar[str] = "text"
    path: NodePath
    text: str | None


@dataclass(frozen=True, slots=True)
class SetTail:
    """The tail of the node at ``path`` (a text node of its parent) set (None removes it)."""

    kind: ClassVar[str] = "tail"
    path: NodePath
    text: str | None


@dataclass(frozen=True, slots=True)
class SetAttribute:
    """The attribute ``name`` of the element at ``path`` set to ``value`` (None deletes it)."""

    kind: ClassVar[str] = "attr"
    path: NodePath
    name: str
    value: str | None


@dataclass(frozen=True, slots=True)
class RenameAttribute:
    """The attribute ``old`` of the element at ``path`` renamed ``new``: the new one is set
    (a new node), then the old one deleted."""

    kind: ClassVar[str] = "rename_attr"
    path: NodePath
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class ReplaceRoot:
    """The root element replaced by the one serialised as ``xml``."""

    kind: ClassVar[str] = "root"
    xml: str


Action = (InsertElement | InsertComment | InsertFragment | Delete | Move | Rename | SetText
          | SetTail | SetAttribute | RenameAttribute | ReplaceRoot)

#: Every kind of action, by the name its JSON text starts with.
ACTION_TYPES: dict[str, type[Action]] = {t.kind: t for t in (
    InsertElement, InsertComment, InsertFragment, Delete, Move, Rename, SetText, SetTail,
    SetAttribute, RenameAttribute, ReplaceRoot)}


# --- the JSON text -----------------------------------------------------------------------------


def encode_script(script: list[Action]) -> str:
    """The JSON text of a script: one array per action, its kind then its fields (paths as
    arrays). :func:`decode_script` reads it back."""
    return json.dumps([_encode(a) for a in script], ensure_ascii=False, separators=(",", ":"))


def _encode(action: Action) -> list[Any]:
    out: list[Any] = [action.kind]
    for name in _FIELDS[type(action)]:
        value = getattr(action, name)
        out.append(list(value) if type(value) is tuple else value)
    return out


def decode_script(text: str | bytes) -> list[Action]:
    """The script :func:`encode_script` wrote, every field checked.

    Raises:
        ScriptFormatError: naming the action (by its index) and what is wrong with it.
    """
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ScriptFormatError(f"edit script: not JSON ({exc})") from None
    if not isinstance(data, list):
        raise ScriptFormatError(f"edit script: expected a JSON array of actions, got "
                                f"{type(data).__name__}")
    return [_decode(item, i) for i, item in enumerate(data)]


def _decode(item: Any, index: int) -> Action:
    where = f"edit script, action {index}"
    if not isinstance(item, list) or not item or not isinstance(item[0], str):
        raise ScriptFormatError(f"{where}: expected an array [kind, field, ...], got {item!r}")
    cls = ACTION_TYPES.get(item[0])
    if cls is None:
        raise ScriptFormatError(f"{where}: unknown action {item[0]!r}; the actions are "
                                f"{', '.join(ACTION_TYPES)}")
    names = _FIELDS[cls]
    if len(item) != len(names) + 1:
        raise ScriptFormatError(f"{where}: {item[0]!r} has {len(names)} field(s) "
                                f"({', '.join(names)}), got {len(item) - 1}")
    values: list[Any] = []
    for name, value in zip(names, item[1:], strict=True):
        check = _CHECKS[cls][name]
        if not check(value):
            raise ScriptFormatError(f"{where} ({item[0]!r}): {name}={value!r} must be "
                                    f"{_EXPECTED[check]}")
        values.append(tuple(value) if check is _is_path else value)
    return cls(*values)


def _is_path(v: Any) -> bool:
    return type(v) is list and all(type(i) is int and i >= 0 for i in v)


def _is_int(v: Any) -> bool:
    return type(v) is int and v >= 0


def _is_str(v: Any) -> bool:
    return type(v) is str


def _is_str_or_none(v: Any) -> bool:
    return v is None or type(v) is str


_EXPECTED = {_is_path: "an array of child indices (integers >= 0)",
             _is_int: "an integer >= 0", _is_str: "a string",
             _is_str_or_none: "a string or null"}
# Each field's check, from its annotation (text, under ``from __future__ import annotations``):
# the dataclasses above are the only definition of the fields.
_BY_ANNOTATION = {"NodePath": _is_path, "int": _is_int, "str": _is_str,
                  "str | None": _is_str_or_none}
_FIELDS: dict[type[Any], tuple[str, ...]] = {
    t: tuple(f.name for f in fields(t)) for t in ACTION_TYPES.values()}
_CHECKS = {t: {f.name: _BY_ANNOTATION[str(f.type)] for f in fields(t)}
           for t in ACTION_TYPES.values()}
