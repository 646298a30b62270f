"""Edit scripts between two versions of a document (issue 6, DESIGN section 7).

xmldiff computes the edit script; this module makes it *positional* and *checked*. xmldiff
names nodes by XPath in its working copy of the old version as the script goes on; here each
action is resolved there, at once, into child-index paths (``[3, 0]`` is the root's fourth
child's first child), so applying a script needs no XPath and no namespace map, and works the
same on a plain tree and on a watched document (where lxml's element methods report every
change as primitive events). Applied to the old version the script must give the new one —
equal after C14N. Where it does not (xmldiff has no processing instructions and no changes of
a namespace URI; it drops declarations), :func:`sync` appends the actions that make it so, so
every script this module returns is exact.

Actions (JSON-ready lists; a path is a list of child indices, ``None`` deletes a value):

=========================================  =================================================
``["insert", path, pos, tag]``             xmldiff ``InsertNode``: an empty element
``["comment", path, pos, text]``           ``InsertComment``
``["fragment", path, pos, xml]``           a whole subtree copied from the new version
``["delete", path]``                       ``DeleteNode`` (the node goes with its tail)
``["move", path, target, pos]``            ``MoveNode``: one lxml call, so ids are kept
``["rename", path, tag]``                  ``RenameNode``
``["text", path, text]``                   ``UpdateTextIn`` (also a comment's or PI's text)
``["tail", path, text]``                   ``UpdateTextAfter``
``["attr", path, name, value]``            ``InsertAttrib``, ``UpdateAttrib``, ``DeleteAttrib``
``["rename_attr", path, old, new]``        ``RenameAttrib``: the new one set, then the old deleted
``["root", xml]``                          the root replaced (its tag, prefix or declarations)
=========================================  =================================================

``InsertNamespace`` and ``DeleteNamespace`` become nothing: namespace declarations are not
nodes (DESIGN section 5); an inserted element carries the declarations it makes.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher
from typing import Any, Sequence

from lxml import etree
from xmldiff import actions as xa
from xmldiff.diff import Differ

from xmlevents.dom import hardened_parser
from xmlevents.dom._registry import declarations

__all__ = ["DiffOptions", "Action", "edit_script", "apply_action", "apply_script", "sync",
           "digest", "parse_version"]

Action = list[Any]


@dataclass(frozen=True)
class DiffOptions:
    """xmldiff's ``Differ`` settings (its defaults, but ``fast_match``, which is ~2x faster
    on the pom history and still exact here, since every script is checked and completed)."""

    F: float = 0.5
    ratio_mode: str = "fast"
    fast_match: bool = True
    uniqueattrs: tuple[str, ...] = field(default=("{http://www.w3.org/XML/1998/namespace}id",))

    def differ(self) -> Differ:
        d = asdict(self)
        d["uniqueattrs"] = list(self.uniqueattrs)
        return Differ(**d)


_PARSER = hardened_parser()
# Text is handed over as UTF-8, whatever encoding its XML declaration names (it was decoded).
_TEXT_PARSER = hardened_parser(encoding="utf-8")


def parse_version(xml: str | bytes) -> Any:
    """The root element of one version (hardened parsing, as every document in xmlevents):
    text (``str``) or bytes in the encoding they declare.

    Raises:
        lxml.etree.XMLSyntaxError: if it is not well-formed.
    """
    if isinstance(xml, str):
        return etree.fromstring(xml.encode("utf-8"), _TEXT_PARSER)
    return etree.fromstring(xml, _PARSER)


def c14n(root: Any) -> bytes:
    """The root element's canonical form (C14N 1.0 with comments): what versions are compared
    by. The prolog and the epilog are outside the model (DESIGN section 5)."""
    # Of a copy: lxml 6.1 (libxml2 2.14) writes xmlns="" on some elements of a root that has
    # siblings (a prolog comment), where the root alone in a document of its own is right.
    return etree.tostring(copy.deepcopy(root), method="c14n")  # type: ignore[no-any-return]


def digest(root: Any) -> str:
    """A short fingerprint of :func:`c14n`, to check a replayed version without its text."""
    return hashlib.sha1(c14n(root)).hexdigest()


# --- paths ---------------------------------------------------------------------------------


def path_of(node: Any) -> list[int]:
    """The child-index path of ``node`` from its root."""
    path: list[int] = []
    parent = node.getparent()
    while parent is not None:
        path.append(parent.index(node))
        node, parent = parent, parent.getparent()
    path.reverse()
    return path


def node_at(root: Any, path: Sequence[int]) -> Any:
    node = root
    for i in path:
        node = node[i]
    return node


# --- applying --------------------------------------------------------------------------------


def _fragment(xml: str) -> Any:
    """A node (element, comment or PI) parsed from its serialisation, with no tail."""
    holder = etree.fromstring(f"<_>{xml}</_>".encode("utf-8"), _PARSER)
    node = holder[0]
    holder.remove(node)
    node.tail = None
    return node


def _element(target: Any, tag: str) -> Any:
    """A new element for ``target``: a namespace in scope there keeps its prefix; one that
    is not gets ``ns0`` (never lxml's process-wide registry, so every process agrees)."""
    uri = tag[1:].split("}", 1)[0] if tag[:1] == "{" else None
    if uri is None or uri in target.nsmap.values():
        return target.makeelement(tag)
    return target.makeelement(tag, nsmap={"ns0": uri})


def apply_action(tree: Any, action: Action) -> None:
    """Apply one action to ``tree`` (an ElementTree) with lxml's element methods."""
    op = action[0]
    root = tree.getroot()
    if op == "root":
        # Parsed as a document of its own: moving a node out of a holder would drop the
        # declarations it repeats from the holder's scope.
        new = etree.fromstring(action[1].encode("utf-8"), _TEXT_PARSER)
        setroot = getattr(tree, "setroot", None)  # a watched document reports it
        if setroot is not None:
            setroot(new)
        else:
            tree._setroot(new)
        return
    node = node_at(root, action[1])
    if op == "insert":
        node.insert(action[2], _element(node, action[3]))
    elif op == "comment":
        node.insert(action[2], etree.Comment(action[3]))
    elif op == "fragment":
        node.insert(action[2], _fragment(action[3]))
    elif op == "delete":
        node.getparent().remove(node)
    elif op == "move":
        target = node_at(root, action[2])
        pos = action[3]
        if node.getparent() is target:
            # lxml finds the child at ``pos`` before unlinking the node, xmldiff counts after
            here = target.index(node)
            if here == pos:
                return
            if here < pos:
                pos += 1
        target.insert(pos, node)
    elif op == "rename":
        node.tag = action[2]
    elif op == "text":
        node.text = action[2]
    elif op == "tail":
        node.tail = action[2]
    elif op == "attr":
        if action[3] is None:
            del node.attrib[action[2]]
        else:
            node.set(action[2], action[3])
    elif op == "rename_attr":
        node.set(action[3], node.get(action[2]))
        del node.attrib[action[2]]
    else:
        raise ValueError(f"unknown edit action {op!r}")


class _Target:
    """An ElementTree-like holder for a bare root, so that ``root`` actions can replace it."""

    def __init__(self, root: Any) -> None:
        self.tree = root.getroottree()

    def getroot(self) -> Any:
        return self.tree.getroot()

    def _setroot(self, root: Any) -> None:
        self.tree._setroot(root)


def apply_script(tree: Any, script: Sequence[Action]) -> None:
    """Apply every action in order (``tree``: an ElementTree or a watched document)."""
    for action in script:
        apply_action(tree, action)


# --- xmldiff's script, made positional --------------------------------------------------------


def _xmldiff_script(target: Any, new: Any, options: DiffOptions) -> list[Action]:
    """xmldiff's edit script from ``target``'s root to ``new``, each action resolved in the
    differ's working copy (in the state it applies to) and applied to ``target`` at once."""
    differ = options.differ()
    namespaces: dict[str, str] | None = None
    script: list[Action] = []

    def at(xpath: str) -> list[int]:
        nonlocal namespaces
        tree = differ.left.getroottree()
        if namespaces is None:
            namespaces = {p: u for t in (differ.left, new) for e in t.iter()
                          for p, u in e.nsmap.items() if p}
        return path_of(tree.xpath(xpath, namespaces=namespaces)[0])

    for a in differ.diff(target.getroot(), new):
        action: Action | None
        if isinstance(a, xa.InsertNode):
            action = ["insert", at(a.target), a.position, a.tag]
        elif isinstance(a, xa.InsertComment):
            action = ["comment", at(a.target), a.position, a.text]
        elif isinstance(a, xa.DeleteNode):
            action = ["delete", at(a.node)]
        elif isinstance(a, xa.MoveNode):
            action = ["move", at(a.node), at(a.target), a.position]
        elif isinstance(a, xa.RenameNode):
            action = ["rename", at(a.node), a.tag]
        elif isinstance(a, xa.UpdateTextIn):
            action = ["text", at(a.node), a.text]
        elif isinstance(a, xa.UpdateTextAfter):
            action = ["tail", at(a.node), a.text]
        elif isinstance(a, (xa.InsertAttrib, xa.UpdateAttrib)):
            action = ["attr", at(a.node), a.name, a.value]
        elif isinstance(a, xa.DeleteAttrib):
            action = ["attr", at(a.node), a.name, None]
        elif isinstance(a, xa.RenameAttrib):
            action = ["rename_attr", at(a.node), a.oldname, a.newname]
        elif isinstance(a, (xa.InsertNamespace, xa.DeleteNamespace)):
            action = None  # declarations are not nodes
        else:
            raise TypeError(f"xmldiff action {type(a).__name__} is not known")
        if action is not None:
            apply_action(target, action)
            script.append(action)
    return script


# --- completing a script ---------------------------------------------------------------------


def _key(e: Any) -> Any:
    """What two children must share for :func:`sync` to recurse rather than replace."""
    tag = e.tag
    if tag is etree.Comment:
        return ("#comment", e.text)
    if tag is etree.ProcessingInstruction:
        return ("#pi", e.target, e.text)
    made = sorted(declarations(e).items(), key=lambda pu: (pu[0] or "", pu[1]))
    return (tag, e.prefix, tuple(made))


def _xml(e: Any) -> str:
    return etree.tostring(e, encoding="unicode", with_tail=False)  # type: ignore[no-any-return]


def sync(tree: Any, new: Any) -> list[Action]:
    """The actions that make ``tree``'s root equal ``new`` (C14N), applied to ``tree`` as they
    are found: attributes, texts and tails set; children aligned by tag (difflib), the matching
    ones synced in place, the others deleted or inserted whole."""
    script: list[Action] = []

    def emit(action: Action) -> None:
        apply_action(tree, action)
        script.append(action)

    root = tree.getroot()
    if root is None or _key(root) != _key(new):
        emit(["root", _xml(new)])
        return script

    def walk(cur: Any, want: Any, path: list[int]) -> None:
        if type(cur.tag) is not str:
            return  # comments and PIs are compared whole, by their key
        for name in [n for n in cur.keys() if want.get(n) is None]:
            emit(["attr", path, name, None])
        for name, value in want.items():
            if cur.get(name) != value:
                emit(["attr", path, name, value])
        if cur.text != want.text:
            emit(["text", path, want.text])
        have, wanted = [_key(c) for c in cur], [_key(c) for c in want]
        if have != wanted:
            ops = SequenceMatcher(None, have, wanted, autojunk=False).get_opcodes()
            for tag, i1, i2, j1, j2 in reversed(ops):
                if tag == "equal":
                    continue
                for i in range(i2 - 1, i1 - 1, -1):
                    emit(["delete", [*path, i]])
                for k, j in enumerate(range(j1, j2)):
                    emit(["fragment", path, i1 + k, _xml(want[j])])
        for i, (c, w) in enumerate(zip(cur, want)):
            walk(c, w, [*path, i])
            if c.tail != w.tail:
                emit(["tail", [*path, i], w.tail])

    walk(root, new, [])
    return script


def edit_script(old: Any, new: Any, options: DiffOptions | None = None) -> list[Action]:
    """The actions that turn version ``old`` into ``new`` (roots, or XML text): xmldiff's
    script made positional, completed by :func:`sync` wherever it falls short.

    ``old`` is not changed. Raises lxml's ``XMLSyntaxError`` for text that is not well-formed.
    """
    old_root = parse_version(old) if isinstance(old, (str, bytes)) else old
    new_root = parse_version(new) if isinstance(new, (str, bytes)) else new
    # The script is applied to a copy as it is made (the old root stays as it was, to start
    # again from if xmldiff fails half-way).
    target = _Target(copy.deepcopy(old_root))
    script: list[Action] = []
    if not (_twins(old_root) or _twins(new_root)):
        try:
            script = _xmldiff_script(target, new_root, options or DiffOptions())
        except Exception:  # noqa: BLE001  (any of xmldiff's failures)
            # It cannot diff these (PIs, a namespace URI changed, ...): start again from the
            # old version and let sync do it all.
            target = _Target(copy.deepcopy(old_root))
            script = []
    want = c14n(new_root)
    if c14n(target.getroot()) != want:
        script += sync(target, new_root)
        if c14n(target.getroot()) != want:
            # lxml leaves out a declaration a fragment repeats from its new scope (another
            # prefix for a URI in scope): replace the root, which keeps them all.
            action = ["root", _xml(new_root)]
            apply_action(target, action)
            script.append(action)
            if c14n(target.getroot()) != want:
                raise ValueError("no edit script reproduces the new version exactly")
    return script


def _twins(root: Any) -> bool:
    """Whether some element has one namespace URI in scope under two prefixes: xmldiff's
    paths count siblings by prefix, XPath matches them by URI, so its paths would be
    ambiguous; :func:`sync` does without them."""
    for e in root.iter(tag=etree.Element):
        ns = e.nsmap
        if len(ns) > 1 and len(set(ns.values())) < len(ns):
            return True
    return False
