"""Replay primitive events onto a copy of the document they started from (DESIGN section 5).

A :class:`Snapshot` is a document's serialisation plus the identifier of every node in it; a
:class:`Replayer` parses it and applies events by identifier: insertions at the parent and index
they carry, updates and removals wherever the identified node is now. Replaying a watched
document's events from a snapshot reproduces it exactly (``etree.tostring`` gives the same
bytes), which is what the replay module checks version after version.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from lxml import etree

from xmlevents._foundation.xml import parse_bytes as parse_xml
from xmlevents._foundation.xml import parser as hardened
from xmlevents.algebra import Axis, Op, PrimitiveEvent

from ._errors import EventLogError
from ._namespaces import repair_namespaces
from ._registry import ATTR, NODE, TAIL, TEXT, declarations, preorder

__all__ = ["Snapshot", "Replayer", "replay", "hardened_parser", "take_snapshot",
           "load_snapshot"]


def hardened_parser(*, plain: bool = False, huge: bool = False, **options: Any
                    ) -> etree.XMLParser:
    """An XML parser of the project's one hardened policy (issue 28): it expands no entity and
    reads nothing outside the text (no DTD, no file, no network); a document whose DTD
    declares entities is refused where it is parsed (:func:`parse_xml`).

    With ``plain``, the parser builds lxml's own element classes rather than the watched ones.
    ``huge`` lifts libxml2's size limits (depth 256, a text of 10 MB) for text this library
    wrote itself — a snapshot, a copy of a tree already in memory — never for input.
    ``options`` add to the policy (``remove_blank_text``) but cannot loosen it.

    Raises:
        InvalidArgumentError: an option that would loosen the policy (``resolve_entities``).
    """
    parser: etree.XMLParser[Any] = hardened(huge=huge, **options)
    if plain:
        parser.set_element_class_lookup(etree.ElementDefaultClassLookup())
    return parser


@dataclass(frozen=True)
class Snapshot:
    """A document (``xml``, as ``etree.tostring`` of its tree) and the ids of its nodes.

    ``nodes`` lists ``(id, kind, element, name)`` in document order: ``kind`` is ``"node"``,
    ``"attr"``, ``"text"`` or ``"tail"``; ``element`` the position of the node (or of the
    attribute's, text's or tail's owner) in ``root.iter()`` order; ``name`` the attribute's.
    ``leaves`` lists ``(element, text)`` for the comments and PIs whose text the XML cannot
    carry: a comment with no content at all (text None, which libxml2 does not write: the xml
    has ``<!---->`` in its place) and a PI text that starts with whitespace (which parsing drops).
    """

    xml: str
    nodes: tuple[tuple[str, str, int, str | None], ...]
    leaves: tuple[tuple[int, str | None], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"xml": self.xml, "nodes": [list(n) for n in self.nodes],
                "leaves": [list(n) for n in self.leaves]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Snapshot:
        return cls(d["xml"], tuple((n[0], n[1], n[2], n[3]) for n in d["nodes"]),
                   tuple((n[0], n[1]) for n in d.get("leaves", ())))


_NSDECL = re.compile(r'xmlns(?::([^=\s]+))?="([^"]*)"')


def _nsmap(value: str | None) -> dict[str | None, str] | None:
    if not value:
        return None
    return {m.group(1): m.group(2) for m in _NSDECL.finditer(value)}


class Replayer:
    """Applies primitive events, one at a time, to a copy of the snapshot's document."""

    def __init__(self, start: Snapshot) -> None:
        """Raises:
            EventLogError: when the snapshot's XML does not parse or its nodes are not in it.
        """
        self._parser = hardened_parser(plain=True, huge=True)  # a snapshot: trusted
        self._dead_root: Any = None
        self._at: dict[str, tuple[str, Any, str | None]] = {}
        try:
            self._load(start)
        except (etree.XMLSyntaxError, IndexError, TypeError, ValueError) as exc:
            raise EventLogError(f"the snapshot cannot be loaded: {exc}") from None

    def _load(self, start: Snapshot) -> None:
        self.tree: Any = load_snapshot(start, self._parser)
        root = self.tree.getroot()
        if root is None:
            return  # an empty document: the first event is the root's insertion
        elements = list(root.iter())
        for ident, kind, i, name in start.nodes:
            self._at[ident] = (kind, elements[i], name)

    @property
    def root(self) -> Any:
        return self.tree.getroot()

    def apply_all(self, events: Iterable[PrimitiveEvent]) -> Any:
        for e in events:
            self.apply(e)
        return self.tree

    def apply(self, event: PrimitiveEvent) -> None:
        """Apply one event.

        Raises:
            EventLogError: naming the event, when its node or position does not exist.
        """
        try:
            self._apply(event)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise EventLogError(f"event {event.id} (ts={event.ts}, {event.op.value} "
                              f"{event.pi}) cannot be applied: {exc}") from None

    def _apply(self, event: PrimitiveEvent) -> None:
        pi = event.pi
        ident = pi.ids[-1]
        step = pi.pt.last
        axis = step.axis
        if event.op is Op.INS:
            if ident in self._at:
                raise EventLogError(f"id {ident!r} is already in the document")
            if axis is Axis.ATTRIBUTE:
                owner = self._element(pi.ids[-2])
                owner.set(step.name, event.value)
                self._at[ident] = (ATTR, owner, step.name)
            elif axis is Axis.TEXT:
                owner = self._element(pi.ids[-2])
                text = event.value if event.value is not None else ""
                if not event.index:
                    owner.text = text
                    self._at[ident] = (TEXT, owner, None)
                else:
                    child = owner[event.index - 1]
                    child.tail = text
                    self._at[ident] = (TAIL, child, None)
            else:
                self._at[ident] = (NODE, self._insert(event, pi.ids), None)
            return
        kind, node, name = self._at[ident] if event.op is Op.UPD else self._at.pop(ident)
        value = event.value if event.op is Op.UPD else None
        if kind == ATTR:
            if value is None:
                del node.attrib[name]
            else:
                node.set(name, value)
        elif kind == TEXT:
            node.text = value
        elif kind == TAIL:
            node.tail = value
        elif event.op is Op.UPD:
            if axis is Axis.PI:
                target, space, text = (value or "").partition(" ")
                node.target = target
                node.text = text if space else None
            else:
                node.text = value
        else:
            parent = node.getparent()
            if parent is None:
                # lxml cannot take a tree's root away and keep what stands around it (DOCTYPE,
                # comments): the emptied root waits for the next root's insertion (a rename).
                self._dead_root = node
            else:
                tail = node.tail
                previous = node.getprevious()
                parent.remove(node)
                if tail:  # a tail not removed first stays in place, as in the live document
                    if previous is None:
                        parent.text = (parent.text or "") + tail
                    else:
                        previous.tail = (previous.tail or "") + tail

    def _element(self, ident: str) -> Any:
        kind, e, _ = self._at[ident]
        if kind != NODE:
            raise EventLogError(f"id {ident!r} is not an element")
        return e

    def _insert(self, event: PrimitiveEvent, ids: tuple[str, ...]) -> Any:
        step = event.pi.pt.last
        parent = self._element(ids[-2]) if len(ids) > 1 else None
        new: etree._Element
        if step.axis is Axis.COMMENT:
            new = etree.Comment(event.value or None)
            if event.value is None:
                new.text = None  # no content: not written at all
        elif step.axis is Axis.PI:
            target, space, text = (event.value or "").partition(" ")
            new = etree.PI(target, text)
            if not space:
                new.text = None  # no content at all: <?target?>
        elif step.name is None:
            raise EventLogError(f"{step} names no node to insert")
        elif parent is not None:
            # Made in place, so it uses the prefixes in scope there, as the original did.
            new = etree.SubElement(parent, step.name, nsmap=_nsmap(event.value))
        elif self._dead_root is not None:
            new = self._dead_root
        else:
            new = self._parser.makeelement(step.name, nsmap=_nsmap(event.value))
        if parent is None:
            assert step.name is not None  # an element: checked above
            dead, self._dead_root = self._dead_root, None
            if dead is not None and declarations(dead) == (_nsmap(event.value) or {}):
                dead.tag = step.name
                return dead
            if new is dead:  # other declarations: a root of its own (the prolog is not kept)
                new = self._parser.makeelement(step.name, nsmap=_nsmap(event.value))
            self.tree = etree.ElementTree(new)
            return new
        if event.index is None:
            raise EventLogError("an insertion needs the index among the parent's children")
        made_here = new.getparent() is parent  # an element, made as the last child
        if event.index > len(parent) - made_here:
            raise EventLogError(f"index {event.index} is past the parent's "
                              f"{len(parent)} children")
        if not (made_here and event.index == len(parent) - 1):
            # Moved into place: lxml drops a declaration the parent makes under another
            # prefix, which can leave a prefix shadowed (issue 16, item 7): put right. An
            # element already in place is not moved, and keeps its declarations as made.
            parent.insert(event.index, new)
            repair_namespaces(new)
        return new

    def snapshot(self) -> Snapshot:
        """The replayed document and its ids, as a :class:`Snapshot`."""
        ids = {(kind, id(e), name): ident for ident, (kind, e, name) in self._at.items()}
        return take_snapshot(self.tree, False, lambda kind, e, name: ids[(kind, id(e), name)])


def load_snapshot(start: Snapshot, parser: Any) -> Any:
    """The tree of a snapshot (an ElementTree, without root for an empty snapshot), with the
    contents its XML cannot carry put back.

    Raises:
        IndexError, XMLSyntaxError: for a snapshot whose nodes are not in its XML.
    """
    if not start.xml and not start.nodes:
        # lxml allows a tree without root; its stubs do not.
        return etree.ElementTree()  # type: ignore[call-overload]
    # Through the policy's checks: a snapshot is parsed with libxml2's limits lifted, so one
    # that declares entities (read from a file someone else wrote) is refused before (issue 28).
    root = parse_xml(start.xml.encode("utf-8"), parser).getroot()
    elements = list(root.iter())
    for i, text in start.leaves:
        elements[i].text = text
    for _, kind, i, _ in start.nodes:
        e = elements[i]
        # An empty text serialises as <a></a> but parses back as None: restore it.
        if kind == TEXT and e.text is None:
            e.text = ""
        elif kind == TAIL and e.tail is None:
            e.tail = ""
    return root.getroottree()


def take_snapshot(tree: Any, recorded: bool, ident: Callable[[str, Any, str | None], str]
                  ) -> Snapshot:
    """``tree`` and the ids ``ident(kind, owner, name)`` gives its nodes, in document order
    (``recorded``: the attributes, texts and tails of the registry's records)."""
    root = tree.getroot()
    if root is None:
        return Snapshot("", ())
    index = {e: i for i, e in enumerate(root.iter())}
    nodes = tuple((ident(kind, e, name), kind, index[e], name)
                  for kind, e, name, _ in preorder(root, False, recorded))
    odd = [(e, e.text) for e in root.iter(etree.Comment, etree.ProcessingInstruction)
           if ((e.text or "")[:1].isspace() if e.tag is etree.ProcessingInstruction
               else not e.text and not etree.tostring(e, with_tail=False))]
    empty = [e for e, text in odd if e.tag is etree.Comment]
    # Written as <!----> for the moment (with lxml's own setter: nothing is reported), so that
    # the xml holds every element ``index`` counts.
    for e in empty:
        _set_content(e, "")
    try:
        xml = etree.tostring(tree, encoding="unicode")
    finally:
        for e in empty:
            _set_content(e, None)
    leaves = tuple((index[e], None if e.tag is etree.Comment else text) for e, text in odd)
    return Snapshot(xml, nodes, leaves)


_set_content = etree._Comment.text.__set__  # type: ignore[attr-defined]  # lxml's, unreported


def replay(start: Snapshot, events: Iterable[PrimitiveEvent]) -> Any:
    """The document ``start`` becomes when ``events`` are applied: an lxml ElementTree."""
    return Replayer(start).apply_all(events)
