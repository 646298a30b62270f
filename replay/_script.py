"""Edit scripts between two versions of a document (issue 6, DESIGN section 7).

xmldiff computes the edit script; this module makes it *positional* and *checked*. xmldiff
names nodes by XPath in its working copy of the old version as the script goes on; here each
action is resolved there, at once, into a typed action on child-index paths (:mod:`._actions`),
so applying a script needs no XPath and no namespace map, and works the same on a plain tree
and on a watched document (where lxml's element methods report every change as primitive
events). Applied to the old version the script must give the new one — equal after C14N.
Where it does not (xmldiff has no processing instructions and no changes of a namespace URI;
it drops declarations), :func:`sync` appends the actions that make it so, so every script this
module returns is exact.

``InsertNamespace`` and ``DeleteNamespace`` become nothing: namespace declarations are not
nodes (DESIGN section 5); an inserted element carries the declarations it makes.

Which nodes are the same across the two versions is decided first by keys and unique tags,
then by xmldiff's similarity (:mod:`._match`, issue 14); :class:`DiffOptions` says how.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from typing import Any, cast

from lxml import etree
from xmldiff import actions as xa

from xmlevents._foundation.xml import parse_bytes as parse_xml
from xmlevents.dom import declarations, hardened_parser

from ._actions import (
    Action,
    Delete,
    InsertComment,
    InsertElement,
    InsertFragment,
    Move,
    NodePath,
    Rename,
    RenameAttribute,
    ReplaceRoot,
    SetAttribute,
    SetTail,
    SetText,
)
from ._digests import Forms
from ._errors import (
    DiffActionError,
    InexactScriptError,
    KeySpecError,
    ScriptFormatError,
    ScriptPathError,
)
from ._keys import Key, KeyNote
from ._match import KeyedDiffer, key_notes

__all__ = ["DiffOptions", "AUTO", "edit_script", "diff_script", "finish", "apply_action",
           "apply_script", "sync", "c14n", "digest", "parse_version", "parse_plain", "path_of",
           "node_at"]


@dataclass(frozen=True)
class DiffOptions:
    """How two versions are matched: xmldiff's ``Differ`` settings (its defaults, but
    ``fast_match``, which is ~2x faster on the pom history and still exact here, since every
    script is checked and completed), the ``keys`` that identify elements, and whether an
    element whose tag is unique among its siblings is matched to its namesake first
    (``unique_tags``; :mod:`._match`), and whether unchanged subtrees are recognised by their
    canonical forms and matched whole before xmldiff (``identical_subtrees``, on by default;
    :mod:`._digests`, issue 29: an unchanged subtree costs a comparison of bytes instead of
    xmldiff's ratios and visits, and keeps its nodes where xmldiff would align look-alike
    siblings by position). ``keys="auto"`` (or ``"auto"`` among the keys) sets
    ``infer_keys``: a replay infers keys from the history first (:mod:`._infer`), the keys
    given winning for their elements (issue 30).
    Immutable and picklable: it travels to Spark's workers.

    Raises:
        KeySpecError: if two keys name one element.
    """

    F: float = 0.5
    ratio_mode: str = "fast"
    fast_match: bool = True
    uniqueattrs: tuple[str, ...] = field(default=("{http://www.w3.org/XML/1998/namespace}id",))
    keys: tuple[Key, ...] = ()
    unique_tags: bool = True
    identical_subtrees: bool = True
    infer_keys: bool = False

    def __post_init__(self) -> None:
        # keys="auto" (or "auto" among keys): inferred from the history, the keys given
        # winning for their elements (issue 30; :mod:`._infer`).
        keys = (self.keys,) if isinstance(self.keys, str) else tuple(self.keys)
        if any(isinstance(k, str) for k in keys):
            if any(isinstance(k, str) and k != AUTO for k in keys):
                raise KeySpecError(str(self.keys), f'a key is a Key or "{AUTO}"')
            object.__setattr__(self, "infer_keys", True)
            keys = tuple(k for k in keys if not isinstance(k, str))
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "uniqueattrs", tuple(self.uniqueattrs))
        seen: dict[str, Key] = {}
        for key in self.keys:
            if key.element in seen:
                raise KeySpecError(str(key), f"a second key for {key.element} (the first: "
                                   f"{seen[key.element]}); an element has one key")
            seen[key.element] = key

    def with_inferred(self, inferred: Sequence[Key]) -> DiffOptions:
        """These options with the ``inferred`` keys added (those of elements without a key
        given), inference done."""
        given = {k.element for k in self.keys}
        return replace(self, keys=(*self.keys, *(k for k in inferred if k.element not in given)),
                       infer_keys=False)

    def differ(self, forms: Forms | None = None, copy_left: bool = True) -> KeyedDiffer:
        """A new differ with these settings (``forms``, ``copy_left``: as
        :class:`~._match.KeyedDiffer` takes them)."""
        return KeyedDiffer(F=self.F, ratio_mode=self.ratio_mode, fast_match=self.fast_match,
                           uniqueattrs=list(self.uniqueattrs), keys=self.keys,
                           unique_tags=self.unique_tags,
                           identical_subtrees=self.identical_subtrees, forms=forms,
                           copy_left=copy_left)


#: ``DiffOptions(keys="auto")``: keys inferred from the history (:mod:`._infer`).
AUTO = "auto"

_PARSER = hardened_parser()
# Text is handed over as UTF-8, whatever encoding its XML declaration names (it was decoded).
_TEXT_PARSER = hardened_parser(encoding="utf-8")
_PLAIN = hardened_parser(plain=True)
_PLAIN_TEXT = hardened_parser(plain=True, encoding="utf-8")


def parse_version(xml: str | bytes, *, plain: bool = False) -> Any:
    """The root element of one version (hardened parsing, as every document in xmlevents):
    text (``str``) or bytes in the encoding they declare. Its elements are watched ones
    (what a watched document takes as its root); with ``plain``, lxml's own, for a version
    that is only read and diffed — several times faster to walk (a watched element's
    ``tag`` is a Python property, and every proxy lxml makes runs Python code).

    Raises:
        lxml.etree.XMLSyntaxError: if it is not well-formed, or if its DTD declares entities
            (refused, with the line: the project's one hardened policy, issue 28).
    """
    if isinstance(xml, str):
        return parse_xml(xml.encode("utf-8"), _PLAIN_TEXT if plain else _TEXT_PARSER).getroot()
    return parse_xml(xml, _PLAIN if plain else _PARSER).getroot()


def parse_plain(xml: str | bytes) -> Any:
    """:func:`parse_version` with lxml's own elements (``plain``)."""
    return parse_version(xml, plain=True)


def c14n(root: Any) -> bytes:
    """The root element's canonical form (C14N 1.0 with comments): what versions are compared
    by. The prolog and the epilog are outside the model (DESIGN section 5)."""
    # Of a copy when the root has siblings: lxml 6.1 (libxml2 2.14) writes xmlns="" on some
    # elements of a root that has siblings (a prolog comment), where the root alone in a
    # document of its own is right. Without siblings the copy would only cost (issue 29).
    if root.getprevious() is not None or root.getnext() is not None:
        root = copy.deepcopy(root)
    return etree.tostring(root, method="c14n")


def digest(root: Any) -> str:
    """A short fingerprint of :func:`c14n`, to check a replayed version without its text."""
    return hashlib.sha1(c14n(root)).hexdigest()


# --- paths ---------------------------------------------------------------------------------


def path_of(node: Any) -> NodePath:
    """The child-index path of ``node`` from its root."""
    path: list[int] = []
    parent = node.getparent()
    while parent is not None:
        path.append(parent.index(node))
        node, parent = parent, parent.getparent()
    path.reverse()
    return tuple(path)


def node_at(root: Any, path: Sequence[int]) -> Any:
    """The node at ``path`` under ``root``.

    Raises:
        ScriptPathError: if there is none (a script made against another state).
    """
    node = root
    for depth, i in enumerate(path):
        try:
            node = node[i]
        except IndexError:
            raise ScriptPathError(f"no node at path {list(path)}: step {depth} asks for child "
                                  f"{i} of {len(node)}") from None
    return node


# --- applying --------------------------------------------------------------------------------


def _fragment(xml: str) -> Any:
    """A node (element, comment or PI) parsed from its serialisation, with no tail."""
    holder = etree.fromstring(f"<_>{xml}</_>".encode(), _PARSER)
    node = holder[0]
    holder.remove(node)
    node.tail = None
    return node


def _element(target: Any, tag: str) -> Any:
    """A new element for ``target``: a namespace in scope there keeps its prefix; one that
    is not gets ``ns0`` (never lxml's process-wide registry, so every process agrees)."""
    uri = tag[1:].split("}", 1)[0] if tag[:1] == "{" else None
    if uri is None:
        return target.makeelement(tag)
    prefixes = [p for p, u in target.nsmap.items() if u == uri]
    if len(prefixes) == 1:
        # Named, not left to lxml: a prefix lxml makes up for a detached element spends one
        # of the document's "nsN" names, so a later namespaced attribute would be declared
        # as ns1 here and ns0 in a fresh copy of the same tree (the insertion drops this
        # declaration, which repeats one in scope).
        return target.makeelement(tag, nsmap={prefixes[0]: uri})
    if prefixes:  # one URI under two prefixes: lxml picks (such documents are synced)
        return target.makeelement(tag)
    return target.makeelement(tag, nsmap={"ns0": uri})


def apply_action(tree: Any, action: Action) -> None:
    """Apply one action to ``tree`` (an ElementTree, or a watched document, which reports it
    as events) with lxml's element methods.

    Raises:
        ScriptPathError: if a path of the action leads to no node of ``tree``.
        ScriptFormatError: if ``action`` is not an action.
    """
    match action:
        case ReplaceRoot(xml):
            # Parsed as a document of its own: moving a node out of a holder would drop the
            # declarations it repeats from the holder's scope.
            new = etree.fromstring(xml.encode("utf-8"), _TEXT_PARSER)
            setroot = getattr(tree, "setroot", None)  # a watched document reports it
            if setroot is not None:
                setroot(new)
            else:
                tree._setroot(new)
        case InsertElement(path, pos, tag):
            node = node_at(tree.getroot(), path)
            node.insert(pos, _element(node, tag))
        case InsertComment(path, pos, text):
            node_at(tree.getroot(), path).insert(pos, etree.Comment(text))
        case InsertFragment(path, pos, xml):
            node_at(tree.getroot(), path).insert(pos, _fragment(xml))
        case Delete(path):
            node = node_at(tree.getroot(), path)
            node.getparent().remove(node)
        case Move(path, target_path, pos):
            root = tree.getroot()
            node, target = node_at(root, path), node_at(root, target_path)
            if node.getparent() is target:
                # lxml finds the child at ``pos`` before unlinking the node, xmldiff counts
                # after
                here = target.index(node)
                if here == pos:
                    return
                if here < pos:
                    pos += 1
            target.insert(pos, node)
        case Rename(path, tag):
            node_at(tree.getroot(), path).tag = tag
        case SetText(path, text):
            node_at(tree.getroot(), path).text = text
        case SetTail(path, text):
            node_at(tree.getroot(), path).tail = text
        case SetAttribute(path, name, value):
            node = node_at(tree.getroot(), path)
            if value is None:
                del node.attrib[name]
            else:
                node.set(name, value)
        case RenameAttribute(path, old, new_name):
            node = node_at(tree.getroot(), path)
            node.set(new_name, node.get(old))
            del node.attrib[old]
        case _:
            raise ScriptFormatError(f"not an edit action: {action!r}")


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


def _xmldiff_script(old: Any, new: Any, options: DiffOptions, target: _Target | None, *,
                    forms: Forms | None = None, spare: bool = False,
                    declared: dict[Any, Any] | None = None) -> list[Action]:
    """xmldiff's edit script from ``old`` to ``new``, each action resolved in the differ's
    working copy (in the state it applies to) and applied to ``target`` (a copy of ``old``,
    if given) at once. With ``spare`` the differ works on ``old`` itself (changing it)."""
    differ = options.differ(forms, copy_left=not spare)
    namespaces: dict[str, str] | None = None
    script: list[Action] = []

    def at(xpath: str) -> NodePath:
        nonlocal namespaces
        tree = differ.left.getroottree()
        if namespaces is None:
            # The working copy's declarations as they were (the cache's, where it is the
            # old version itself) and the new version's ...
            namespaces = _prefixes(differ.left, new, cache=declared)
        try:
            return path_of(tree.xpath(xpath, namespaces=namespaces)[0])
        except etree.XPathEvalError:
            # ... and a prefix lxml made up for an element xmldiff inserted (ns0): as the
            # working copy declares it now.
            namespaces = _prefixes(differ.left, new)
            return path_of(tree.xpath(xpath, namespaces=namespaces)[0])

    for a in differ.diff(old, new):
        action: Action | None
        if isinstance(a, xa.InsertNode):
            action = InsertElement(at(a.target), a.position, a.tag)
        elif isinstance(a, xa.InsertComment):
            action = InsertComment(at(a.target), a.position, a.text)
        elif isinstance(a, xa.DeleteNode):
            action = Delete(at(a.node))
        elif isinstance(a, xa.MoveNode):
            action = Move(at(a.node), at(a.target), a.position)
        elif isinstance(a, xa.RenameNode):
            action = Rename(at(a.node), a.tag)
        elif isinstance(a, xa.UpdateTextIn):
            action = SetText(at(a.node), a.text)
        elif isinstance(a, xa.UpdateTextAfter):
            action = SetTail(at(a.node), a.text)
        elif isinstance(a, (xa.InsertAttrib, xa.UpdateAttrib)):
            action = SetAttribute(at(a.node), a.name, a.value)
        elif isinstance(a, xa.DeleteAttrib):
            action = SetAttribute(at(a.node), a.name, None)
        elif isinstance(a, xa.RenameAttrib):
            action = RenameAttribute(at(a.node), a.oldname, a.newname)
        elif isinstance(a, (xa.InsertNamespace, xa.DeleteNamespace)):
            action = None  # declarations are not nodes
        else:
            raise DiffActionError(f"xmldiff action {type(a).__name__} is not known")
        if action is not None:
            if target is not None:
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
    return etree.tostring(e, encoding="unicode", with_tail=False)


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
        emit(ReplaceRoot(_xml(new)))
        return script

    def walk(cur: Any, want: Any, path: NodePath) -> None:
        if type(cur.tag) is not str:
            return  # comments and PIs are compared whole, by their key
        # keys() is an element's attribute names (iterating it gives its children).
        for name in [n for n in cur.keys() if want.get(n) is None]:  # noqa: SIM118
            emit(SetAttribute(path, name, None))
        for name, value in want.items():
            if cur.get(name) != value:
                emit(SetAttribute(path, name, value))
        if cur.text != want.text:
            emit(SetText(path, want.text))
        have, wanted = [_key(c) for c in cur], [_key(c) for c in want]
        if have != wanted:
            ops = SequenceMatcher(None, have, wanted, autojunk=False).get_opcodes()
            for tag, i1, i2, j1, j2 in reversed(ops):
                if tag == "equal":
                    continue
                for i in range(i2 - 1, i1 - 1, -1):
                    emit(Delete((*path, i)))
                for k, j in enumerate(range(j1, j2)):
                    emit(InsertFragment(path, i1 + k, _xml(want[j])))
        for i, (c, w) in enumerate(zip(cur, want, strict=False)):
            walk(c, w, (*path, i))
            if c.tail != w.tail:
                emit(SetTail((*path, i), w.tail))

    walk(root, new, ())
    return script


def edit_script(old: Any, new: Any, options: DiffOptions | None = None,
                notes: list[KeyNote] | None = None) -> list[Action]:
    """The actions that turn version ``old`` into ``new`` (roots, or XML text): xmldiff's
    script made positional, completed by :func:`sync` wherever it falls short.

    Given a ``notes`` list and ``options`` with keys, the key values that repeat among
    siblings in either version are appended to it (:class:`~._keys.KeyNote`, ``side`` "old"
    or "new"): those siblings are matched by similarity. ``old`` is not changed. Raises lxml's
    ``XMLSyntaxError`` for text that is not well-formed.
    """
    old_root = parse_plain(old) if isinstance(old, (str, bytes)) else old
    new_root = parse_plain(new) if isinstance(new, (str, bytes)) else new
    options = options or DiffOptions()
    if notes is not None and options.keys:
        notes += key_notes(old_root, options.keys, "old")
        notes += key_notes(new_root, options.keys, "new")
    # The script is applied to a copy as it is made (the old root stays as it was, to start
    # again from if xmldiff fails half-way).
    target = _Target(copy.deepcopy(old_root))
    script = diff_script(old_root, new_root, options, target)
    if script is None:
        target = _Target(copy.deepcopy(old_root))
        script = []
    return script + finish(target, new_root)


def diff_script(old: Any, new: Any, options: DiffOptions, target: _Target | None = None, *,
                forms: Forms | None = None, spare: bool = False) -> list[Action] | None:
    """xmldiff's script from root ``old`` to root ``new``, made positional and not completed,
    applied to ``target`` (a copy of ``old``) if given; None where xmldiff cannot make one
    (a URI under two prefixes, a processing instruction, a namespace URI changed: then
    :func:`sync` makes it all, from a copy of the old version as it was).

    What a replay calls, which applies the script to its document and :func:`finish`-es it
    there (it checks the document anyway): no copy to try the script on, and with ``spare``
    the differ works on ``old`` itself (the version diffed to last time, parsed and of no
    other use: no copy at all), its forms kept in ``forms`` from that diff (:mod:`._digests`;
    :meth:`~._digests.Forms.keep` the new version's for the next one).
    """
    declared = forms.declared if forms is not None else None
    if _twins(old, declared) or _twins(new, declared):
        return None
    try:
        return _xmldiff_script(old, new, options, target, forms=forms, spare=spare,
                               declared=declared)
    except Exception:  # any of xmldiff's failures: sync does it all
        return None


def finish(target: Any, new: Any, want: bytes | None = None) -> list[Action]:
    """The actions, applied to ``target`` (an ElementTree or a watched document) as they are
    found, that make its root equal ``new``'s (:func:`c14n`; ``want``, if given, is
    ``c14n(new)``): none when it is, else :func:`sync`'s, and where lxml still falls short
    the root replaced.

    Raises:
        InexactScriptError: if even that does not give ``new``.
    """
    want = c14n(new) if want is None else want
    script: list[Action] = []
    if c14n(target.getroot()) != want:
        script += sync(target, new)
        if c14n(target.getroot()) != want:
            # lxml leaves out a declaration a fragment repeats from its new scope (another
            # prefix for a URI in scope): replace the root, which keeps them all.
            action = ReplaceRoot(_xml(new))
            apply_action(target, action)
            script.append(action)
            if c14n(target.getroot()) != want:
                raise InexactScriptError("no edit script reproduces the new version exactly")
    return script


# A namespace declaration as lxml writes it (always in double quotes).
_DECLARATION = re.compile(rb'xmlns(?::([^\s=/>]+))?="([^"]*)"')


def _declared(root: Any, cache: dict[Any, Any] | None = None
              ) -> dict[str | None, set[str]] | None:
    """Every prefix declared in ``root``'s document with the URIs it is bound to, read from
    one serialisation (C) instead of every element's ``nsmap`` (issue 29: that walk cost more
    than the rest of a small change's diff). A superset: text that looks like a declaration
    is counted too. None for an element that has a parent (bindings it inherits and does not
    use are not written). Kept in ``cache`` (by root), if given: a version's once."""
    if cache is not None and root in cache:
        return cast("dict[str | None, set[str]] | None", cache[root])
    found: dict[str | None, set[str]] | None = None
    if root.getparent() is None:
        found = {}
        for prefix, uri in _DECLARATION.findall(etree.tostring(root)):
            found.setdefault(prefix.decode() or None, set()).add(uri.decode())
    if cache is not None:
        cache[root] = found
    return found


def _prefixes(*roots: Any, cache: dict[Any, Any] | None = None) -> dict[str, str]:
    """The prefix of every namespace bound in the roots (for XPath): each element's in-scope
    bindings, later elements winning; from the declarations alone where no prefix is bound
    to two URIs (then the order does not matter)."""
    declared = [_declared(r, cache) for r in roots]
    if all(d is not None for d in declared):
        merged: dict[str | None, set[str]] = {}
        for d in declared:
            assert d is not None
            for p, uris in d.items():
                merged.setdefault(p, set()).update(uris)
        if all(len(uris) == 1 for uris in merged.values()):
            return {p: next(iter(uris)) for p, uris in merged.items() if p}
    return {p: u for r in roots for e in r.iter() for p, u in e.nsmap.items() if p}


def _twins(root: Any, cache: dict[Any, Any] | None = None) -> bool:
    """Whether some element has one namespace URI in scope under two prefixes: xmldiff's
    paths count siblings by prefix, XPath matches them by URI, so its paths would be
    ambiguous; :func:`sync` does without them. Not where no URI is declared under two
    prefixes anywhere in the document (:func:`_declared`)."""
    declared = _declared(root, cache)
    if declared is not None:
        prefixes: dict[str, set[str | None]] = {}
        for p, uris in declared.items():
            for u in uris:
                prefixes.setdefault(u, set()).add(p)
        if all(len(ps) == 1 for ps in prefixes.values()):
            return False
    for e in root.iter(tag=etree.Element):
        ns = e.nsmap
        if len(ns) > 1 and len(set(ns.values())) < len(ns):
            return True
    return False
