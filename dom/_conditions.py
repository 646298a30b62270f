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

from xmlevents.algebra import Condition, InvalidArgumentError, PathInstance

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
