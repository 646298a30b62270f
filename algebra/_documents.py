"""What the engine needs of the documents events happen in: termination conditions (§3.3).

A termination condition (``with when="..."``) is an XPath 1.0 expression tested on the subtree
rooted at a potential composite event's path instance. The algebra knows no XML library, so an
:class:`EventGraph` that has conditions is given a :class:`Documents` object: the DOM wrapper
and the replay job each provide one (``xmlevents.dom.XPathDocuments`` does it with lxml).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ._events import PrimitiveEventType
from ._paths import PathInstance

__all__ = ["Documents", "Condition", "impossible"]

#: A compiled condition: called with the node a path instance resolves to, true to raise.
Condition = Callable[[Any], bool]


class Documents(Protocol):
    """Resolves path instances to nodes, and compiles conditions that test those nodes."""

    def compile(self, expression: str) -> Condition:
        """Compile ``expression``; raise ``ValueError`` with the reason if it does not compile."""
        ...

    def resolve(self, doc: str | None, pi: PathInstance) -> Any | None:
        """The node at ``pi`` in document ``doc`` now, or None if there is none (any more)."""
        ...


def impossible(documents: Documents | None, et: PrimitiveEventType) -> str | None:
    """Why events of ``et`` never occur in ``documents`` (None: they may, or nobody knows).

    Documents may say so with an optional method ``impossible(et)`` returning the reason: the
    watched documents of the DOM wrapper never update an element, only its text and
    attributes (section 2.2). A graph fed events from elsewhere takes every type, as the
    paper's Example 12 does with ``upd(item/price)``.
    """
    check: Callable[[PrimitiveEventType], str | None] | None = getattr(
        documents, "impossible", None)
    return check(et) if check is not None else None
