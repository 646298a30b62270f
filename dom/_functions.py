"""lxml's module-level functions, for watched trees, and installing the wrapper into lxml.

``etree.SubElement`` and the ``strip_*``/``indent``/``cleanup_namespaces`` functions change a
tree without calling its elements' methods. Their xmlevents versions report what they do; and
:func:`install` (run when :mod:`xmlevents.dom` is imported) makes them the ones ``lxml.etree``
offers, and the watched classes lxml's default element classes. Code that bound lxml's
functions before the import still bypasses the wrapper: ``etree.SubElement`` is then caught
when lxml creates the new element's proxy, the others when the document is next flushed or
closed (:meth:`WatchedDocument.resync`), so no change goes unreported.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from lxml import etree

from ._elements import WatchedComment, WatchedElement, WatchedPI
from ._ops import begin, end, ins_tree, settle
from ._registry import NODES

__all__ = ["SubElement", "strip_attributes", "strip_elements", "strip_tags", "indent",
           "cleanup_namespaces", "install", "uninstall", "installed"]

_LXML: dict[str, Any] = {name: getattr(etree, name) for name in (
    "SubElement", "strip_attributes", "strip_elements", "strip_tags", "indent",
    "cleanup_namespaces")}
_sub_element = _LXML["SubElement"]


def SubElement(parent: Any, tag: Any, attrib: Any = None, nsmap: Any = None, **extra: Any
               ) -> Any:
    """``etree.SubElement`` that reports the new element (and its attributes)."""
    settle()
    rec = NODES.get(parent)
    if rec is None:
        return _sub_element(parent, tag, attrib, nsmap, **extra)
    begin()
    try:
        e = _sub_element(parent, tag, attrib, nsmap, **extra)
        # Appended: the last child, by the count (lxml's len() walks the siblings).
        rec.n_children += 1
        index = rec.n_children - 1 if rec.doc.listening() else -1
        ins_tree(rec.doc, e, rec, index, True)
        return e
    finally:
        end()


def _reporting(lxml_function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(lxml_function)
    def reporting(tree: Any, *args: Any, **kwargs: Any) -> Any:
        root = tree.getroot() if isinstance(tree, etree._ElementTree) else tree
        settle()
        rec = NODES.get(root)
        if rec is None:
            return lxml_function(tree, *args, **kwargs)
        begin()
        try:
            result = lxml_function(tree, *args, **kwargs)
            rec.doc.resync()
            return result
        finally:
            end()

    reporting.__doc__ = (f"``etree.{lxml_function.__name__}`` that reports its changes to a "
                         "watched tree.\n\n" + (lxml_function.__doc__ or ""))
    return reporting


strip_attributes = _reporting(_LXML["strip_attributes"])
strip_elements = _reporting(_LXML["strip_elements"])
strip_tags = _reporting(_LXML["strip_tags"])
indent = _reporting(_LXML["indent"])
cleanup_namespaces = _reporting(_LXML["cleanup_namespaces"])

_OURS = {"SubElement": SubElement, "strip_attributes": strip_attributes,
         "strip_elements": strip_elements, "strip_tags": strip_tags, "indent": indent,
         "cleanup_namespaces": cleanup_namespaces}
_installed = False


def install() -> None:
    """Make the watched classes lxml's default element classes and the reporting functions
    ``lxml.etree``'s (done on import). Parsers with their own class lookup (lxml.html,
    objectify) keep their classes."""
    global _installed
    etree.set_element_class_lookup(etree.ParserBasedElementClassLookup(
        fallback=etree.ElementDefaultClassLookup(element=WatchedElement,
                                                 comment=WatchedComment, pi=WatchedPI)))
    for name, function in _OURS.items():
        setattr(etree, name, function)
    _installed = True


def uninstall() -> None:
    """Restore lxml's own classes and functions (watched documents stop seeing new nodes)."""
    global _installed
    etree.set_element_class_lookup()
    for name, function in _LXML.items():
        setattr(etree, name, function)
    _installed = False


def installed() -> bool:
    return _installed
