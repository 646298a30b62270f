"""Grouping keys: which of an operator's child events may be combined with each other.

An operator node keeps its children's events in groups and lets its Snoop context combine
events of one group only. The key of a group is this module's part of the node, chosen once
when the node is built:

* :class:`Projection`, the hierarchical context (seed 000, section 3.1): events are grouped by
  the projection ``π`` of their path instances on the operator's path type, so an item's price
  only meets that item's quantity;
* :class:`ByDocument`, Snoop's plain contexts (section 2.3): one group per document.

Both refuse an event whose projection on the operator's path type is null (:data:`NULL`):
it could not be given a path instance, so it is never combined, in any context. Events of
different documents are never combined either. The detection service (seed 001) groups its
instances by the values of variables its children bind: one more :class:`GroupingKey`, over
its own instances, used with the same context functions (:mod:`._contexts`).

References:
    M. Bernauer, G. Kappel, G. Kramler. Composite Events for XML. WWW 2004, section 3.1.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable
from typing import Protocol, TypeVar

from ._events import Event
from ._paths import PathType, _offset

__all__ = ["NULL", "GroupingKey", "Grouping", "Projection", "ByDocument", "grouping"]

_Contra = TypeVar("_Contra", contravariant=True)


class GroupingKey(Protocol[_Contra]):
    """The grouping part of an operator: the group of an arriving occurrence, or
    :data:`NULL` if it is never combined."""

    def key(self, event: _Contra) -> Hashable: ...

#: The key of an event whose projection on the operator's path type is null.
NULL: Hashable = object()
_MISSING = object()


class Grouping(ABC):
    """The grouping of one operator node (abstract): :meth:`key` of a child event.

    The ids of ``π`` lie at the same place in every instance of one path type, so where they
    lie is computed once per arriving path type (``bounds``), not once per event.
    """

    __slots__ = ("bounds", "pt")

    def __init__(self, pt: PathType) -> None:
        self.pt = pt
        #: Per path type of arriving events: the slice of their ids that ``π`` on ``pt``
        #: keeps, or None where the projection is null.
        self.bounds: dict[PathType, tuple[int, int] | None] = {}

    def bounds_for(self, pt: PathType) -> tuple[int, int] | None:
        """Where ``π`` on the operator's path type finds its ids in instances of ``pt``."""
        found = self.bounds.get(pt, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[return-value]  # a cached bounds value
        c = 0 if pt == self.pt else _offset(self.pt, pt)
        bounds = None if c is None else (c, c + len(self.pt))
        self.bounds[pt] = bounds
        return bounds

    @abstractmethod
    def key(self, event: Event) -> Hashable:
        """The group of ``event``, or :data:`NULL` if it is never combined."""


class Projection(Grouping):
    """The hierarchical context: one group per document and projected path instance."""

    __slots__ = ()

    def key(self, event: Event) -> Hashable:
        pi = event.pi
        # bounds_for, inlined on its cache hit: this runs for every event a node receives.
        bounds = self.bounds.get(pi.pt, _MISSING)
        if bounds is _MISSING:
            bounds = self.bounds_for(pi.pt)
        if bounds is None:
            return NULL
        return (event.doc, pi.ids[bounds[0]:bounds[1]])  # type: ignore[index]  # a pair


class ByDocument(Grouping):
    """Snoop's plain contexts: one group per document."""

    __slots__ = ()

    def key(self, event: Event) -> Hashable:
        return NULL if self.bounds_for(event.pi.pt) is None else event.doc


def grouping(pt: PathType, hierarchical: bool) -> Grouping:
    """The grouping of an operator with path type ``pt`` in the given context."""
    return Projection(pt) if hierarchical else ByDocument(pt)
