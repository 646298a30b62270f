"""The event algebra: path types and instances, event types and events, the expression
language, definitions, event trees and the event graph (seed 000, sections 2-4).

This package imports nothing outside the standard library: lxml (for termination conditions),
blinker and pyspark live in the layers above it.

What ``xmlevents detect`` does not use is imported on first use (PEP 562, :func:`__getattr__`
below): the drawings of event trees (``render_text``, ``render_dot``), the columns of the rows
and tables (``EVENT_LINE`` and the others) and the checks of subscriptions (with difflib).
Every name of ``__all__`` is there as before, for ``from xmlevents.algebra import ...`` too.
"""

import sys
from typing import TYPE_CHECKING, Any

from ._contexts import Group, Occurrence, select_any, select_disj, select_seq
from ._definitions import DefinitionSet, LeafSpec, OperatorSpec, ResolvedDefinition
from ._documents import Condition, Documents
from ._errors import (
    ArgumentTypeError,
    ConditionError,
    DefinitionError,
    EventFormatError,
    ExpressionSyntaxError,
    GraphStateError,
    InvalidArgumentError,
    PathSyntaxError,
    PositionedError,
    UnknownNameError,
    XmlEventsError,
)
from ._events import (
    CompositeEvent,
    CompositeEventType,
    Event,
    EventType,
    NodeKind,
    Op,
    PrimitiveEvent,
    PrimitiveEventType,
    compatible,
    matches,
    read_events,
    trusted_path_instance,
    trusted_primitive,
)
from ._graph import EventGraph
from ._grouping import NULL, GroupingKey
from ._jsonlines import MAX_INT, JsonLineError, check_text, load_line
from ._parser import parse, parse_definition, parse_definitions, parse_event_type
from ._paths import (
    Axis,
    Kind,
    PathInstance,
    PathType,
    Step,
    contained,
    ends,
    intersect_ab,
    intersect_lb,
    project,
)
from ._tokens import LineIndex
from ._window import Expired
from .ast import (
    AnyOf,
    Conj,
    Context,
    Definition,
    Disj,
    Duration,
    Expr,
    Mode,
    Modifiers,
    Mult,
    Not,
    Primitive,
    Ref,
    Seq,
    any_of,
    any_op,
    conj,
    del_,
    dele,
    disj,
    ins,
    mult,
    not_,
    ref,
    seq,
    upd,
    wildcard,
    window,
)

__all__ = [
    # errors
    "XmlEventsError", "InvalidArgumentError", "ArgumentTypeError", "UnknownNameError",
    "PositionedError", "PathSyntaxError", "ExpressionSyntaxError", "DefinitionError",
    "EventFormatError",
    "GraphStateError", "ConditionError",
    # paths
    "Axis", "Kind", "Step", "PathType", "PathInstance", "contained", "ends", "intersect_lb",
    "intersect_ab", "project",
    # events
    "Op", "NodeKind", "PrimitiveEventType", "CompositeEventType", "EventType", "compatible",
    "matches", "PrimitiveEvent", "CompositeEvent", "Event", "read_events",
    # unchecked constructors, for producers that guarantee the invariants (watched documents)
    "trusted_path_instance", "trusted_primitive",
    # rows: the columns of the JSON lines and of the replay's tables, defined once
    "Column", "RowSchema", "EVENT_LINE", "COMPOSITE_LINE", "EVENTS_TABLE", "COMPOSITES_TABLE",
    "ERRORS_TABLE", "VERSIONS_TABLE", "CONSTITUENT",
    # JSON lines: one bounded, validating decoder for every JSON-lines input
    "load_line", "check_text", "JsonLineError", "MAX_INT",
    # documents (termination conditions)
    "Documents", "Condition",
    # expressions
    "Expr", "Primitive", "Ref", "Disj", "Conj", "Seq", "AnyOf", "Not", "Mult", "Definition",
    "Mode", "Context", "Modifiers", "ins", "upd", "dele", "del_", "any_op", "ref", "wildcard",
    "conj", "disj", "seq", "any_of", "not_", "mult", "window", "Duration",
    "parse", "parse_definition", "parse_definitions", "parse_event_type", "LineIndex",
    # definitions, engine, drawings
    "DefinitionSet", "ResolvedDefinition", "LeafSpec", "OperatorSpec", "EventGraph", "Expired",
    "render_text", "render_dot",
    # Snoop's contexts as parts: picking and consuming stored occurrences in one group (the
    # detection service's operators use them on their own instances)
    "Occurrence", "Group", "select_any", "select_seq", "select_disj", "GroupingKey", "NULL",
    # subscriptions: checked when made (the watched documents' monitor uses these too)
    "subscription_type", "check_subscription", "check_receiver", "check_weak", "unknown_name",
    "raise_collected",
]

# The modules imported on first use (see the module's text): name -> module.
_LAZY = {
    **dict.fromkeys(("render_text", "render_dot"), "_render"),
    **dict.fromkeys(("Column", "RowSchema", "EVENT_LINE", "COMPOSITE_LINE", "EVENTS_TABLE",
                     "COMPOSITES_TABLE", "ERRORS_TABLE", "VERSIONS_TABLE", "CONSTITUENT"),
                    "_rows"),
    **dict.fromkeys(("subscription_type", "check_subscription", "check_receiver",
                     "check_weak", "unknown_name", "raise_collected"), "_subscriptions"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # __import__, not importlib.import_module: the import statement's own machinery, which
    # ``python -X importtime`` reports (tests/cli/test_cli_imports.py reads it).
    full = f"{__name__}.{module}"
    __import__(full)
    value = getattr(sys.modules[full], name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


if TYPE_CHECKING:
    from ._render import render_dot, render_text
    from ._rows import (
        COMPOSITE_LINE,
        COMPOSITES_TABLE,
        CONSTITUENT,
        ERRORS_TABLE,
        EVENT_LINE,
        EVENTS_TABLE,
        VERSIONS_TABLE,
        Column,
        RowSchema,
    )
    from ._subscriptions import (
        check_receiver,
        check_subscription,
        check_weak,
        raise_collected,
        subscription_type,
        unknown_name,
    )
