"""Termination conditions evaluated with lxml (seed 000, section 3.3).

:class:`XPathDocuments` gives an :class:`~xmlevents.algebra.EventGraph` what it needs to test
``with when="..."`` conditions: it compiles XPath 1.0 expressions with lxml and resolves a path
instance to its element through a function the owner of the documents supplies (the watched
documents of the DOM wrapper, the replayed versions of the replay job).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from lxml import etree

from xmlevents.algebra import (
    Axis,
    Condition,
    InvalidArgumentError,
    Op,
    PathInstance,
    PrimitiveEventType,
)

__all__ = ["XPathDocuments", "xpath_boolean"]

Resolver = Callable[[str | None, PathInstance], Any]


def xpath_boolean(value: Any) -> bool:
    """XPath 1.0 ``boolean()`` of an lxml XPath result (a bool, number, string or node list)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return value != 0 and not math.isnan(value)
    if isinstance(value, (str, list)):
        return len(value) > 0
    return bool(value)


# A condition is compiled against this element once, so that expressions that can never be
# evaluated (an unknown function, an unbound variable) fail when the graph is built.
_PROBE = etree.Element("probe")


class XPathDocuments:
    """Compile conditions with lxml; resolve path instances with ``resolve(doc, pi)``.

    Args:
        resolve: returns the element at a path instance of a document, or None.
        namespaces: prefixes the conditions may use, as for ``etree.XPath``.

    >>> root = etree.fromstring("<item><price>3</price><quantity>0</quantity></item>")
    >>> docs = XPathDocuments(lambda doc, pi: root)
    >>> test = docs.compile("price >= 0 and quantity > 0")
    >>> test(root)
    False
    """

    def __init__(self, resolve: Resolver, *, namespaces: Mapping[str, str] | None = None
                 ) -> None:
        self._resolve = resolve
        self.namespaces = dict(namespaces or {})

    def compile(self, expression: str) -> Condition:
        """The condition ``expression`` as a test of an element.

        Raises:
            ValueError: naming lxml's reason, when the expression does not compile or can
                never be evaluated.
        """
        try:
            xpath = etree.XPath(expression, namespaces=self.namespaces, smart_strings=False)
            xpath(_PROBE)
        except etree.XPathError as exc:
            raise InvalidArgumentError(f"{exc} (lxml)") from None

        def test(node: Any) -> bool:
            return xpath_boolean(xpath(node))

        return test

    def resolve(self, doc: str | None, pi: PathInstance) -> Any:
        return self._resolve(doc, pi)

    @staticmethod
    def impossible(et: PrimitiveEventType) -> str | None:
        """Why watched documents never give events of ``et`` (None: they may): an element is
        inserted and deleted, never updated; its text and attributes are (section 2.2)."""
        steps = et.pt.steps
        if et.op is not Op.UPD or not steps or steps[-1].axis is not Axis.CHILD:
            return None
        pt = str(et.pt)
        return (f"an element is never updated in a watched document, only its text and its "
                f"attributes: write upd({pt}/text()) for its text or upd({pt}/@name) for an "
                f"attribute (or *({pt}/text()) for any change of its text)")
