"""Namespace pointers that lxml leaves shadowed, put right (issue 16, item 7; DESIGN 5).

An element or attribute of an lxml tree points at the declaration of its namespace; its
Clark name (``{uri}local``, what lxml's API and every event show) comes from that pointer,
while the serialisation writes the declaration's prefix. The two agree as long as the prefix,
looked up from the node itself, finds that very declaration.

lxml breaks this when it moves a subtree (``append``, ``insert``, ``extend``, ``replace``,
``addnext``, slice assignment; ``strip_tags`` lifting children of an element that declares
namespaces). Its ``moveNodeToDocument`` drops a declaration of the moved element that the new
parent's scope already makes for the same URI under another prefix, and points the nodes that
used it at the parent's declaration, without asking whether the moved element (or an element
between it and the user) declares that other prefix for another URI. The smallest case::

    <r xmlns:p="urn:a"/>   .append(   <ns0:e xmlns:ns0="urn:a" xmlns:p="urn:b"/>   )

gives ``<r xmlns:p="urn:a"><p:e xmlns:p="urn:b"/></r>``: ``e`` is ``{urn:a}e`` in memory (and
in the events) but ``{urn:b}e`` in the document's text, so a snapshot loads back with ``e`` in
another namespace, and a replay (which inserts the same way) does the same. One URI bound to
two prefixes, one of them shadowed: the 5 of 1,800 random versions of issue 16.

:func:`repair_namespaces` finds such nodes after the move and sets them again with lxml's own
setters, which look the URI up from the node itself (shadowing seen) and declare a new prefix
there when none is in scope: the Clark names stay what lxml's API said, and the text now says
the same. A pointer can only be shadowed where an element of the moved subtree binds a prefix
that is bound above it to another URI, so only such a subtree is looked at node by node; one
that declares nothing costs a walk in C, one that declares without binding again a walk that
creates the elements' proxies.
"""

from __future__ import annotations

from typing import Any

from lxml import etree

__all__ = ["repair_namespaces"]

_XML_NS = "http://www.w3.org/XML/1998/namespace"

# lxml's own setters (the watched classes report through theirs): they re-resolve a node's
# namespace from the node itself.
_tag_set = etree._Element.tag.__set__  # type: ignore[attr-defined]  # lxml's descriptor
_set = etree._Element.set

# The qualified name (prefix:local) an attribute is written with: its pointer's prefix.
_ATTRIBUTE_QNAME = etree.XPath("name(@*[local-name() = $l][namespace-uri() = $u])")


def _declares(top: Any) -> bool:
    """Whether an element of ``top``'s subtree declares a namespace (a walk in C, lazily)."""
    return next(iter(etree.iterwalk(top, events=("start-ns",))), None) is not None


def _rebinds(top: Any) -> bool:
    """Whether an element of ``top``'s subtree binds a prefix that is bound where it stands
    to another URI (``xmlns=""`` counts): without that, no prefix can be shadowed.

    Python sees every element here (and the scope above each one that declares something):
    asked only of a subtree that declares a namespace somewhere (:func:`_declares`).
    """
    pending: list[tuple[str, str]] = []
    walk: Any = etree.iterwalk(top, events=("start-ns", "start"))
    node: Any
    for event, node in walk:
        if event == "start-ns":
            pending.append(node)
        elif pending:
            parent = node.getparent()
            scope = parent.nsmap if parent is not None else {}
            for prefix, uri in pending:
                bound = scope.get(prefix or None)
                if bound is not None and bound != uri:
                    return True
            pending = []
    return False


def _shadowed(e: Any, scope: dict[str | None, str]) -> tuple[bool, list[str]]:
    """Whether element ``e``'s own name, and which of its attributes, are written with a
    prefix that ``scope`` (the bindings in force at ``e``) binds to another URI."""
    tag = e.tag
    element = tag[:1] == "{" and scope.get(e.prefix) != tag[1:tag.index("}")]
    attributes = []
    for name in e.keys():  # noqa: SIM118 (attribute names, not children)
        if name[:1] != "{":
            continue
        uri, _, local = name[1:].partition("}")
        if uri == _XML_NS:
            continue  # xml: is bound everywhere
        qname: str = _ATTRIBUTE_QNAME(e, l=local, u=uri)
        prefix, colon, _ = qname.partition(":")
        if not colon or scope.get(prefix) != uri:
            attributes.append(name)
    return element, attributes


def repair_namespaces(top: Any) -> int:
    """Point every element and attribute of ``top``'s subtree whose prefix is shadowed where
    it stands (see the module) at a declaration in scope there, declaring one if needed.

    Clark names and values stay as they are; only declarations are added. Returns how many
    nodes were set again (0 for a consistent subtree, which is the rule).
    """
    if type(top.tag) is not str or not _declares(top) or not _rebinds(top):
        return 0  # (a comment or PI declares nothing)
    parent = top.getparent()
    # Per open element: the bindings in force, and whether a prefix was bound again to
    # another URI at or above it (below the top's parent): only then can one be shadowed.
    stack: list[tuple[dict[str | None, str], bool]] = [
        (dict(parent.nsmap) if parent is not None else {}, False)]
    pending: dict[str | None, str] = {}
    fixed = 0
    walk: Any = etree.iterwalk(top, events=("start-ns", "start", "end"))
    node: Any
    for event, node in walk:
        if event == "start-ns":  # the declarations of the element that starts next
            prefix, uri = node
            pending[prefix or None] = uri
            continue
        if event == "end":
            stack.pop()
            continue
        scope, rebound = stack[-1]
        if pending:
            rebound = rebound or any(scope.get(p, u) != u for p, u in pending.items())
            scope = {**scope, **pending}
            pending = {}
        if rebound:
            element, attributes = _shadowed(node, scope)
            if element or attributes:
                if element:
                    _tag_set(node, node.tag)
                for name in attributes:
                    _set(node, name, node.get(name))
                fixed += element + len(attributes)
                scope = dict(node.nsmap)  # with what the setters declared
        stack.append((scope, rebound))
    return fixed
