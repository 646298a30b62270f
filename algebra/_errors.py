"""The root of the project's one error hierarchy, and the algebra's errors.

Every error xmlevents raises is an :class:`XmlEventsError`; each subclass also inherits the
built-in exception a caller would expect (``ValueError`` for malformed text or a bad value,
``TypeError`` for an argument of the wrong type, ``KeyError`` for an unknown name,
``RuntimeError`` for misuse of a running engine), as hypothesis' ``InvalidArgument`` does, so
``except ValueError`` keeps working. Each package defines its own errors in its ``_errors``
module on top of these (``xmlevents.dom``, ``xmlevents.replay``) and exports them; the
``xmlevents`` facade exports them all.

Left as the plain built-ins, because Python's protocols ask for exactly those: the
``AttributeError`` of a module's ``__getattr__`` and the ``KeyError`` of a mapping's
``__getitem__``.
"""

from __future__ import annotations

from xmlevents._foundation.errors import (
    ArgumentTypeError,
    InvalidArgumentError,
    PositionedError,
    UnknownNameError,
    XmlEventsError,
)

__all__ = [
    "NoSoleEventError",
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
]


class PathSyntaxError(PositionedError):
    """A path type or path instance that does not follow the text form of section 2.1."""


class ExpressionSyntaxError(PositionedError):
    """Malformed text in the expression language (DESIGN section 3)."""


class DefinitionError(PositionedError):
    """A well-formed definition that cannot be evaluated: unknown name, cycle, bad path type.

    ``definition`` names the definition and ``node`` prints the offending node of its tree.
    """

    def __init__(self, reason: str, *, definition: str = "", node: str = "", text: str = "",
                 line: int | None = None, column: int | None = None) -> None:
        self.definition = definition
        self.node = node
        context = f"definition {definition}" if definition else ""
        if node:
            context += f", node `{node}`"
        super().__init__(reason, text=text, line=line, column=column, context=context)


class EventFormatError(XmlEventsError, ValueError):
    """A malformed primitive event (a JSON line, a dict); ``line`` is its 1-based line number."""

    def __init__(self, reason: str, *, line: int | None = None, source: str = "") -> None:
        self.reason = reason
        self.line = line
        self.source = source
        where = ""
        if source:
            where += f"{source}: "
        if line is not None:
            where += f"line {line}: "
        super().__init__(f"{where}{reason}")


class GraphStateError(XmlEventsError, RuntimeError):
    """An event graph used out of turn: events out of order, or fed after closing."""


class NoSoleEventError(XmlEventsError, AttributeError):
    """The ``op``, ``value`` or ``old`` of a composite event of several primitive events:
    only a composite of one (a single-event definition) has them."""


class ConditionError(XmlEventsError, RuntimeError):
    """A termination condition that failed while it was evaluated (section 3.3).

    The potential composite event it guarded is not raised; detection goes on. ``cause`` is
    the exception the condition raised.
    """

    def __init__(self, reason: str, *, definition: str, condition: str, doc: str | None,
                 path: str, cause: BaseException | None = None) -> None:
        self.reason = reason
        self.definition = definition
        self.condition = condition
        self.doc = doc
        self.path = path
        self.cause = cause
        where = f"document {doc!r}, " if doc is not None else ""
        super().__init__(f"definition {definition}, condition {condition!r} at {where}"
                         f"{path}: {reason}")
