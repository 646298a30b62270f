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

from typing import TYPE_CHECKING

from xmlevents._foundation.lazy import lazy_names

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
    "NoSoleEventError",
    "ConditionError",
    "JsonLineError",
    "WatchError",
    "WatchTypeError",
    "XMLSyntaxError",
    "EventLogError",
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
    "OutputLocationError",
    "FollowError",
    "CheckpointError",
    "RuleSyntaxError",
    "RuleError",
    "UnknownDocumentError",
    "UpdateError",
    "StepLimitError",
    "ActionError",
    "ExpressionTextError",
    "MarkupError",
    "RegistrationError",
    "SignalError",
    "UnknownExpressionError",
    "CELSyntaxError",
    "CELQueryError",
    "StreamError",
    "QuerySyntaxError",
    "UnsupportedQueryError",
    "DocumentError",
    "__version__",
]

__version__ = "0.1.0"

# Every name is imported on first use (PEP 562), from the package _PACKAGES names for it: so
# that the algebra (and `xmlevents detect`) runs without lxml and without installing the
# watched classes into it (DESIGN section 1), and that importing one system (`import
# xmlevents.stream`, which imports this facade first) loads none of the others, nor the
# algebra's engine (issue 28). Each package's errors are here, so that one `except` clause or
# one `from xmlevents import ...` reaches any of them; the service's load without its web
# stack (the `service` extra), as its package does.
_PACKAGES: dict[str, tuple[str, ...]] = {
    "xmlevents.algebra": (
        "EventGraph", "DefinitionSet", "PathType", "PathInstance", "PrimitiveEvent",
        "CompositeEvent", "parse_definitions", "XmlEventsError", "InvalidArgumentError",
        "ArgumentTypeError", "UnknownNameError", "PositionedError", "PathSyntaxError",
        "ExpressionSyntaxError", "DefinitionError", "EventFormatError", "GraphStateError",
        "ConditionError", "JsonLineError", "NoSoleEventError"),
    "xmlevents.dom": (
        "parse", "fromstring", "wrap", "WatchedDocument", "Monitor", "CascadeError",
        "XMLSyntaxError", "Recording", "Snapshot", "empty", "SubElement", "strip_attributes",
        "strip_elements", "strip_tags", "indent", "cleanup_namespaces", "WatchError",
        "WatchTypeError", "EventLogError", "SubscriptionWarning"),
    "xmlevents.replay": (
        "BadVersion", "MissingXmlError", "VersionTableError", "GitHistoryError",
        "EditScriptError", "ScriptFormatError", "ScriptPathError", "DiffActionError",
        "InexactScriptError", "KeySpecError", "OutputLocationError", "FollowError",
        "CheckpointError"),
    "xmlevents.rules": (
        "RuleSyntaxError", "RuleError", "UnknownDocumentError", "UpdateError", "StepLimitError",
        "ActionError"),
    "xmlevents.service": (
        "ExpressionTextError", "MarkupError", "RegistrationError", "SignalError",
        "UnknownExpressionError"),
    "xmlevents.cel": ("CELSyntaxError", "CELQueryError", "StreamError"),
    "xmlevents.stream": ("QuerySyntaxError", "UnsupportedQueryError", "DocumentError"),
}
#: Names the facade gives another name: ``parse`` is a document's, so the expression parser
#: is ``parse_expression``.
_RENAMED = {"parse_expression": ("xmlevents.algebra", "parse")}
__getattr__, __dir__ = lazy_names(__name__, globals(), _PACKAGES, renamed=_RENAMED)

if TYPE_CHECKING:
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
        NoSoleEventError,
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
    from xmlevents.cel import CELQueryError, CELSyntaxError, StreamError
    from xmlevents.dom import (
        CascadeError,
        EventLogError,
        Monitor,
        Recording,
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
        CheckpointError,
        DiffActionError,
        EditScriptError,
        FollowError,
        GitHistoryError,
        InexactScriptError,
        KeySpecError,
        MissingXmlError,
        OutputLocationError,
        ScriptFormatError,
        ScriptPathError,
        VersionTableError,
    )
    from xmlevents.rules import (
        ActionError,
        RuleError,
        RuleSyntaxError,
        StepLimitError,
        UnknownDocumentError,
        UpdateError,
    )
    from xmlevents.service import (
        ExpressionTextError,
        MarkupError,
        RegistrationError,
        SignalError,
        UnknownExpressionError,
    )
    from xmlevents.stream import DocumentError, QuerySyntaxError, UnsupportedQueryError
