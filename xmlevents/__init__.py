"""xmlevents: composite events for XML documents.

Watched documents (:mod:`xmlevents.dom`) turn every change made with lxml into primitive
events; the algebra (:mod:`xmlevents.algebra`: paths, events, the expression language, event
trees and graphs) combines them into composite events. This facade re-exports what an
application needs most. ``xmlevents.parse`` parses a *document*; the expression parser is
``xmlevents.parse_expression`` (``xmlevents.algebra.parse``). Version histories are replayed
by :mod:`xmlevents.replay` (an event log onto a snapshot: ``xmlevents.dom.replay``).

>>> import xmlevents
>>> doc = xmlevents.fromstring("<order/>")
>>> _ = doc.define("Ei := ins(item) ; (ins(item/price) & ins(item/quantity))")
>>> @doc.subscribe("Ei")
... def complete(doc, event):
...     print("complete:", event.pi)
>>> item = xmlevents.SubElement(doc.getroot(), "item")
>>> with doc.batch():
...     xmlevents.SubElement(item, "price").text = "5"
...     xmlevents.SubElement(item, "quantity").text = "2"
complete: /order[n1]/item[n2]
"""

import importlib
from typing import TYPE_CHECKING, Any

from xmlevents.algebra import (
    ArgumentTypeError,
    CompositeEvent,
    ConditionError,
    DefinitionError,
    DefinitionSet,
    EventFormatError,
    EventGraph,
    ExpressionSyntaxError,
    GraphStateError,
    InvalidArgumentError,
    JsonLineError,
    PathInstance,
    PathSyntaxError,
    PathType,
    PositionedError,
    PrimitiveEvent,
    UnknownNameError,
    XmlEventsError,
    parse_definitions,
)
from xmlevents.algebra import parse as parse_expression

__all__ = [
    "parse",
    "fromstring",
    "wrap",
    "WatchedDocument",
    "Monitor",
    "Recording",
    "Snapshot",
    "empty",
    "SubElement",
    "strip_attributes",
    "strip_elements",
    "strip_tags",
    "indent",
    "cleanup_namespaces",
    "EventGraph",
    "DefinitionSet",
    "PathType",
    "PathInstance",
    "PrimitiveEvent",
    "CompositeEvent",
    "parse_expression",
    "parse_definitions",
    # every error xmlevents raises (one hierarchy, rooted at XmlEventsError)
    "XmlEventsError",
    "InvalidArgumentError",
    "ArgumentTypeError",
    "UnknownNameError",
    "PositionedError",
    "PathSyntaxError",
    "ExpressionSyntaxError",
    "DefinitionError",
    "EventFormatError",
    "GraphStateError",
    "ConditionError",
    "JsonLineError",
    "WatchError",
    "WatchTypeError",
    "XMLSyntaxError",
    "ReplayError",
    "CascadeError",
    "SubscriptionWarning",
    "BadVersion",
    "MissingXmlError",
    "VersionTableError",
    "GitHistoryError",
    "EditScriptError",
    "ScriptFormatError",
    "ScriptPathError",
    "DiffActionError",
    "InexactScriptError",
    "KeySpecError",
    "__version__",
]

__version__ = "0.1.0"

# The document side and the replay are imported on first use, so that the algebra (and
# `xmlevents detect`) runs without lxml and without installing the watched classes into it
# (DESIGN section 1).
_DOM = frozenset(("parse", "fromstring", "wrap", "WatchedDocument", "Monitor", "CascadeError",
                  "XMLSyntaxError", "Recording", "Snapshot", "empty", "SubElement",
                  "strip_attributes", "strip_elements", "strip_tags", "indent",
                  "cleanup_namespaces", "WatchError", "WatchTypeError", "ReplayError",
                  "SubscriptionWarning"))
_REPLAY = frozenset(("BadVersion", "MissingXmlError", "VersionTableError", "GitHistoryError",
                     "EditScriptError", "ScriptFormatError", "ScriptPathError",
                     "DiffActionError", "InexactScriptError", "KeySpecError"))


def __getattr__(name: str) -> Any:
    if name not in _DOM and name not in _REPLAY:
        raise AttributeError(f"module 'xmlevents' has no attribute {name!r}")
    package = importlib.import_module("xmlevents.dom" if name in _DOM else "xmlevents.replay")
    value = getattr(package, name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from xmlevents.dom import (
        CascadeError,
        Monitor,
        Recording,
        ReplayError,
        Snapshot,
        SubElement,
        SubscriptionWarning,
        WatchedDocument,
        WatchError,
        WatchTypeError,
        XMLSyntaxError,
        cleanup_namespaces,
        empty,
        fromstring,
        indent,
        parse,
        strip_attributes,
        strip_elements,
        strip_tags,
        wrap,
    )
    from xmlevents.replay import (
        BadVersion,
        DiffActionError,
        EditScriptError,
        GitHistoryError,
        InexactScriptError,
        KeySpecError,
        MissingXmlError,
        ScriptFormatError,
        ScriptPathError,
        VersionTableError,
    )
