"""xmlevents: composite events for XML documents.

The algebra (paths, events, the expression language, event trees and graphs) lives in
:mod:`xmlevents.algebra`; this facade re-exports what an application needs most.

>>> from xmlevents import EventGraph
>>> EventGraph("Ei := ins(item) ; (ins(item/price) & ins(item/quantity))").order
('Ei',)
"""

from xmlevents.algebra import (
    CompositeEvent,
    DefinitionSet,
    EventGraph,
    PathInstance,
    PathType,
    PrimitiveEvent,
    XmlEventsError,
    parse,
    parse_definitions,
)

__all__ = [
    "XmlEventsError",
    "EventGraph",
    "DefinitionSet",
    "PathType",
    "PathInstance",
    "PrimitiveEvent",
    "CompositeEvent",
    "parse",
    "parse_definitions",
    "__version__",
]

__version__ = "0.1.0"
