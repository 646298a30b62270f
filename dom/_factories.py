"""Watched documents from files, text and existing trees (issue 5)."""

from __future__ import annotations

import itertools
import os
from typing import Any

from lxml import etree

from xmlevents._foundation.xml import check_tree
from xmlevents._foundation.xml import parse_bytes as parse_xml

from ._document import WatchedDocument
from ._errors import EventLogError, WatchError, WatchTypeError, XMLSyntaxError
from ._monitor import Monitor
from ._namespaces import repair_namespaces
from ._ops import WATCHED
from ._registry import NODES
from ._replay import Snapshot, hardened_parser, load_snapshot

__all__ = ["parse", "fromstring", "wrap", "empty", "from_snapshot"]

_numbers = itertools.count(1)


def _name(name: str | None, source: Any = None) -> str:
    if name is not None:
        return name
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    source_name = getattr(source, "name", None)
    if isinstance(source_name, str):
        return source_name
    return f"doc{next(_numbers)}"


def _syntax_error(exc: etree.XMLSyntaxError, source: str) -> XMLSyntaxError:
    line, column = exc.position if exc.position else (None, None)
    reason = exc.msg.split(", line ")[0] if exc.msg else str(exc)
    return XMLSyntaxError(source, line, column, reason)


def parse(source: Any, *, name: str | None = None, monitor: Monitor | None = None,
          **parser_options: Any) -> WatchedDocument:
    """Parse a file (name, path or file object) into a watched document.

    The parser expands no entity and reads nothing outside the text, neither files nor the
    network (:func:`hardened_parser`); ``parser_options`` go to it (e.g.
    ``remove_blank_text``).

    Raises:
        XMLSyntaxError: naming the source, line and column, if it is not well-formed, or if
            its DTD declares entities (refused: entity bombs, external entities; issue 28).
    """
    doc_name = _name(name, source)
    try:
        if isinstance(source, (str, os.PathLike)):
            # Read here: given a file (name or object), lxml reports bytes that are not in
            # the declared encoding as an OSError without a position.
            with open(source, "rb") as f:
                data = f.read()
            tree = parse_xml(data, hardened_parser(**parser_options),
                             base_url=os.fspath(source))
        else:
            tree = etree.parse(source, hardened_parser(**parser_options))
            check_tree(tree)  # no entity declared or referred to (issue 28)
    except etree.XMLSyntaxError as exc:
        raise _syntax_error(exc, doc_name) from None
    return WatchedDocument(tree, name=doc_name, monitor=monitor or Monitor())


def fromstring(text: str | bytes, *, name: str | None = None, monitor: Monitor | None = None,
               **parser_options: Any) -> WatchedDocument:
    """Parse XML text into a watched document (see :func:`parse`)."""
    doc_name = _name(name)
    if isinstance(text, str) and text.lstrip().startswith("<?xml"):
        # lxml refuses text with an encoding declaration; the text is already decoded, so
        # parse its UTF-8 form whatever the declaration says.
        try:
            text = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise XMLSyntaxError(doc_name, None, None, f"not valid Unicode text: "
                                 f"{exc.reason} at character {exc.start}") from None
        parser_options = {**parser_options, "encoding": "utf-8"}
    try:
        root = etree.fromstring(text, hardened_parser(**parser_options))
        check_tree(root.getroottree(), text)
    except etree.XMLSyntaxError as exc:
        raise _syntax_error(exc, doc_name) from None
    return WatchedDocument(root.getroottree(), name=doc_name, monitor=monitor or Monitor())


def empty(*, name: str | None = None, monitor: Monitor | None = None) -> WatchedDocument:
    """A watched document with no root element yet; give it one with ``doc.setroot(el)``."""
    # lxml allows a tree without root; its stubs do not.
    tree = etree.ElementTree()  # type: ignore[call-overload]
    return WatchedDocument(tree, name=_name(name), monitor=monitor or Monitor())


def from_snapshot(snapshot: Snapshot, *, name: str | None = None,
                  monitor: Monitor | None = None) -> WatchedDocument:
    """A watched document of a snapshot's tree whose nodes have the snapshot's ids: a
    document's life resumes where the snapshot was taken (a version history goes on).

    Raises:
        EventLogError: when the snapshot's XML does not parse or does not hold its nodes.
    """
    try:
        tree = load_snapshot(snapshot, hardened_parser(huge=True))  # ours: trusted
        doc = WatchedDocument(tree, name=_name(name), monitor=monitor or Monitor(),
                              ids=[n[0] for n in snapshot.nodes])
    except (etree.XMLSyntaxError, IndexError, ValueError) as exc:
        raise EventLogError(f"the snapshot cannot be loaded: {exc}") from None
    if doc.snapshot().nodes != snapshot.nodes:
        doc.close()
        raise EventLogError("the snapshot cannot be loaded: its nodes do not match its XML")
    return doc


def wrap(tree: Any, *, name: str | None = None, monitor: Monitor | None = None
         ) -> WatchedDocument:
    """Watch an lxml tree (an ElementTree or any of its elements: the whole tree is watched).

    The tree is watched in place when its nodes are xmlevents' classes, as every tree built
    with ``lxml.etree`` after xmlevents is imported is. A tree of other classes (lxml.html,
    objectify, or elements still referenced from before the import) cannot report changes
    made through those objects: it is copied, and ``doc.getroot()`` is the copy to edit.

    Raises:
        ValueError: if the tree is already watched.
    """
    if not isinstance(tree, etree._ElementTree):
        tree = tree.getroottree()
    root = tree.getroot()
    if root is None:
        raise WatchError("the tree has no root element to watch")
    nodes = list(root.iter())
    if any(e in NODES for e in nodes):
        raise WatchError(f"this tree is already watched (as {NODES[root].doc.name!r} or "
                         "part of it); close that document first")
    if not all(isinstance(e, WATCHED) for e in nodes):
        # A copy of a tree already in memory: no input limits (a text over 10 MB, deeper
        # than 256), and an entity reference lxml kept is the one thing that cannot come.
        entity = next((e for e in nodes if e.tag is etree.Entity), None)
        if entity is not None:
            raise WatchTypeError(
                f"the tree holds the entity reference {entity.text} (line "
                f"{entity.sourceline}), which the watched model has no node for: parse it with "
                "resolve_entities=True (the default) so that it is expanded")
        try:
            tree = etree.fromstring(etree.tostring(tree), hardened_parser(huge=True)
                                    ).getroottree()
        except etree.XMLSyntaxError as exc:
            raise WatchError(f"the tree cannot be copied into watched elements: {exc}") from None
    else:
        # Built with lxml's methods, it may hold a prefix their moves left shadowed (issue
        # 16, item 7): watched in place, its text must say what its nodes' names say.
        repair_namespaces(root)
    return WatchedDocument(tree, name=_name(name), monitor=monitor or Monitor())
