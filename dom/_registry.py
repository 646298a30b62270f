"""Identifiers of the nodes of watched documents, and the walks that give them (DESIGN 5).

lxml recreates its element proxies at will, so an identifier cannot live in a proxy. Instead
the registry keeps every proxy of a watched document alive (lxml then hands out that same
proxy for its node) and maps it to a :class:`Node` record: the node's identifier, its path
instance, and the identifiers and values of its text, tail and attributes. The records are
also the document's state as last reported, so a change made behind the wrapper's back can be
found and reported by comparing them with the live tree (:mod:`._resync`).

Document order of a subtree (:func:`preorder`) is the order of insertion events: an element,
its attributes in lxml's order, its text, then each child's subtree followed by that child's
tail; removal events use the exact reverse.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lxml import etree

from xmlevents.algebra import Axis, Kind, PathInstance, PathType, Step, trusted_path_instance

from ._errors import WatchTypeError

__all__ = ["Node", "NODES", "child_type", "child_pi", "tail_pi", "preorder", "node_step",
           "own_value", "declarations", "attribute_values", "attribute_items"]

# Kinds of the items preorder() yields.
NODE, ATTR, TEXT, TAIL = "node", "attr", "text", "tail"


class Node:
    """What the registry knows of one element, comment or processing instruction.

    ``attrs`` maps an attribute's name to ``(id, value)``; ``text`` and ``tail`` hold the
    values last reported (a comment's or PI's ``text`` is its event value). ``n_children`` is
    the number of its children (elements, comments and PIs: what lxml's ``len()`` counts) as
    last reported.
    """

    __slots__ = ("attrs", "doc", "id", "n_children", "pi", "tail", "tail_id", "text",
                 "text_id")

    def __init__(self, doc: Any, ident: str) -> None:
        self.doc = doc
        self.id = ident
        # Kept exact by every operation that adds or removes children (and counted again by
        # a resync that finds changes made behind the wrapper's back), so that an insertion's
        # index is known without lxml's len() or index(), which walk the siblings: 650 us an
        # append under 10^5 children (see _ops.position).
        self.n_children = 0
        self.pi: PathInstance = None  # type: ignore[assignment]  # set by the caller
        self.text_id: str | None = None
        self.text: str | None = None
        self.tail_id: str | None = None
        self.tail: str | None = None
        # Immutable pairs: a change replaces the entry. Tuples of strings cost the garbage
        # collector nothing once it has seen them (it untracks them), where lists cost it a
        # visit at every collection: 14 ms of a 100,000-attribute parse (issue 16).
        self.attrs: dict[str, tuple[str, str]] = {}


# Every tracked proxy of every open watched document. Holding the proxies is what keeps them
# (and so the records' keys) stable; a document releases its entries when it is closed.
NODES: dict[Any, Node] = {}

_TYPES: dict[tuple[PathType | None, Axis, str | None], PathType] = {}
PARENT_TYPE: dict[PathType, PathType | None] = {}


def child_type(parent: PathType | None, axis: Axis, name: str | None) -> PathType:
    """The path type of a node under ``parent`` (interned: the engine keys groups by it)."""
    key = (parent, axis, name)
    pt = _TYPES.get(key)
    if pt is None:
        step = Step(axis, name)
        pt = (parent.child(step) if parent is not None
              else PathType(Kind.ABSOLUTE, (step,)))
        _TYPES[key] = pt
        PARENT_TYPE[pt] = parent
    return pt


def child_pi(parent: PathInstance | None, axis: Axis, name: str | None, ident: str
             ) -> PathInstance:
    """The path instance of node ``ident`` under the node at ``parent``."""
    if parent is None:
        return trusted_path_instance(child_type(None, axis, name), (ident,))
    return trusted_path_instance(child_type(parent.pt, axis, name), parent.ids + (ident,))


def tail_pi(rec: Node) -> PathInstance:
    """The path instance of ``rec``'s tail: a text node of its parent."""
    pi = rec.pi
    parent = PARENT_TYPE[pi.pt]
    assert parent is not None and rec.tail_id is not None
    return trusted_path_instance(child_type(parent, Axis.TEXT, None),
                                 pi.ids[:-1] + (rec.tail_id,))


def node_step(e: Any) -> tuple[Axis, str | None]:
    """The step naming node ``e`` under its parent.

    Raises:
        TypeError: for an entity reference, which the document model has no place for.
    """
    tag = e.tag
    if type(tag) is str:
        return Axis.CHILD, tag
    if tag is etree.Comment:
        return Axis.COMMENT, None
    if tag is etree.PI:
        return Axis.PI, None
    raise WatchTypeError(f"{e!r}: entity references are not part of the watched document model; "
                         "parse with entities resolved (the default of xmlevents.parse)")


def declarations(e: Any) -> dict[str | None, str]:
    """The namespace declarations an element makes (in scope there, not in its parent)."""
    parent = e.getparent()
    inherited = parent.nsmap if parent is not None else {}
    return {p: u for p, u in e.nsmap.items() if inherited.get(p) != u}


def pi_value(e: Any) -> str:
    """A processing instruction as one value, ``"target text"``, as its events carry it."""
    text = e.text
    if text:
        return f"{e.target} {text}"
    # lxml reads '' both for no content (<?t?>) and for empty content (<?t ?>, what etree.PI
    # makes); only the serialisation tells them apart, and a replay must reproduce it.
    if etree.tostring(e, with_tail=False).endswith(b" ?>"):
        return f"{e.target} "
    target: str = e.target
    return target


def own_value(e: Any) -> str | None:
    """The value a node's own event carries: a comment's text, a PI's ``target text``."""
    tag = e.tag
    if type(tag) is str:
        return None
    if tag is etree.Comment:
        text = e.text
        if text:
            comment: str = text
            return comment
        # lxml reads '' for a comment set to None too, which libxml2 then does not write at
        # all; None tells that apart from <!---->, for a replay to reproduce it.
        return "" if etree.tostring(e, with_tail=False) else None
    return pi_value(e)


# Every attribute value of an element in one walk of libxml2's attribute list, as plain
# strings (``smart_strings`` would make each a proxy that knows its name and parent: 3x slower).
_VALUES = etree.XPath("@*", smart_strings=False)


def attribute_items(e: Any) -> tuple[list[str], list[str]]:
    """Element ``e``'s attribute names and values, in lxml's order, in linear time.

    lxml's ``items()`` and ``values()`` look every value up by name in libxml2's attribute
    list (quadratic: 1.3 s for 20,000 attributes, issue 16 item 4). ``keys()`` and XPath's
    ``@*`` both walk the list once, in its order (the attribute axis is in document order,
    which for the attributes of one element is the list's); XPath costs more per call, so it
    is used for elements with many attributes only.
    """
    names: list[str] = e.keys()
    if len(names) <= 32:
        return names, e.values()
    values: list[str] = _VALUES(e)
    if len(values) != len(names):  # never seen; the names then say which value is whose
        found = {a.attrname: str(a) for a in e.xpath("@*")}
        values = [found[n] for n in names]
    return names, values


def attribute_values(e: Any) -> dict[str, str]:
    """Element ``e``'s attributes, name to value, in linear time (see :func:`attribute_items`)."""
    return dict(zip(*attribute_items(e), strict=True))


def preorder(el: Any, with_tail: bool, recorded: bool = False, index: int = -1,
             attributes: bool = True) -> Iterator[tuple[str, Any, str | None, int]]:
    """The nodes of ``el``'s subtree as ``(kind, owner, attribute name, index)``, in
    insertion order.

    Kinds: ``NODE`` (the element, comment or PI itself; ``index`` is its position among its
    parent's children, ``index`` for ``el``), ``ATTR``, ``TEXT`` (the element's ``.text``) and
    ``TAIL`` (the owner's ``.tail``, a text node of the owner's parent; ``index`` is the
    owner's position plus one). With ``recorded``, attributes, texts and tails are those of
    the registry's records (the state last reported) rather than the live ones. Without
    ``attributes``, no ``ATTR`` items: the caller takes an element's attributes at once, right
    after its ``NODE`` item (a registration in one batch, issue 16).
    """
    # A stack entry is (node, True, index) to visit a node or (node, False, index) for its
    # tail; a tail is pushed below its element so it comes out after the whole subtree.
    stack: list[tuple[Any, bool, int]] = [(el, True, index)]
    if with_tail and (NODES[el].tail_id if recorded else el.tail) is not None:
        stack.insert(0, (el, False, index))
    pop, push = stack.pop, stack.append
    while stack:
        e, visit, index = pop()
        if not visit:
            yield TAIL, e, None, index + 1
            continue
        yield NODE, e, None, index
        if type(e.tag) is str:
            if recorded:
                rec = NODES[e]
                names: Any = rec.attrs
                has_text = rec.text_id is not None
            else:
                names = e.keys() if attributes else ()
                has_text = e.text is not None
            for name in names:
                yield ATTR, e, name, -1
            if has_text:
                yield TEXT, e, None, 0
            k = len(e)
            for child in reversed(e):
                k -= 1
                if (NODES[child].tail_id if recorded else child.tail) is not None:
                    push((child, False, k))
                push((child, True, k))
