"""The event algebra: path types and instances, event types and events, the expression
language, definitions, event trees and the event graph (seed 000, sections 2-4).

This package imports nothing outside the standard library: lxml (for termination conditions),
blinker and pyspark live in the layers above it.

Every name is imported on first use (PEP 562, :func:`__getattr__` below), from the module
:data:`_MODULES` names for it: ``import xmlevents.algebra`` loads none of its modules, and
``from xmlevents.algebra import PathType`` loads the paths alone. So the systems that use the
algebra's model but not its engine — CEL queries and streaming queries, which take paths,
events and errors — never load the event trees and graph (issue 28: ``import
xmlevents.stream`` loaded all 19 modules), and ``xmlevents detect`` never loads the drawings
or the checks of subscriptions (issue 13). Every name of ``__all__`` is there, by attribute,
by ``from xmlevents.algebra import ...`` and by ``import *``.

What siblings share and needs none of the algebra's types lives in the foundation
(``xmlevents._foundation``, issue 28), not here: the rows' columns (``foundation/rows.py``)
and the checks of receivers (``foundation/subscriptions.py``). Two kinds of shared names stay
public here, because they are about the algebra's own types:

* :func:`subscription_type` and :func:`check_subscription`: "will this subscription ever
  fire?", over event types and definitions, for any subscriber (the graph, the watched
  documents, an application's own);
* :func:`trusted_path_instance` and :func:`trusted_primitive`: the unchecked constructors of
  path instances and primitive events, for producers that guarantee the invariants
  themselves (the watched documents build one per change, where the checks would cost a
  third of the time). Decision (issue 28): documented public functions beside the checked
  constructors (``PathInstance.of``, ``PrimitiveEvent(...)``), not classmethods: they are the
  same calls the engine's inner loops make, and a producer outside this repository that
  guarantees the invariants may use them too; their contract is in their docstrings.
"""

from typing import TYPE_CHECKING

from xmlevents._foundation.lazy import lazy_names

__all__ = [
    # errors
    "XmlEventsError", "InvalidArgumentError", "ArgumentTypeError", "UnknownNameError",
    "PositionedError", "PathSyntaxError", "ExpressionSyntaxError", "DefinitionError",
    "EventFormatError",
    "GraphStateError", "ConditionError", "NoSoleEventError",
    # paths
    "Axis", "Kind", "Step", "PathType", "PathInstance", "contained", "ends", "intersect_lb",
    "intersect_ab", "project",
    # events
    "Op", "NodeKind", "PrimitiveEventType", "CompositeEventType", "EventType", "compatible",
    "matches", "PrimitiveEvent", "CompositeEvent", "Event", "read_events",
    # unchecked constructors, for producers that guarantee the invariants (watched documents)
    "trusted_path_instance", "trusted_primitive",
    # the JSON reader's error (the reader is the foundation's, shared by every package)
    "JsonLineError",
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
    # subscriptions: will one ever fire? (checked when made; the watched documents too)
    "subscription_type", "check_subscription",
    # the hint when a definition matched nothing for want of a namespace (replay, detect)
    "NamespaceHint", "NamespaceWarning", "namespace_hints", "path_type_hints", "suggest_prefix",
]

#: Where each public name is defined: module -> names (every name of ``__all__`` once).
_MODULES: dict[str, tuple[str, ...]] = {
    "._errors": ("XmlEventsError", "InvalidArgumentError", "ArgumentTypeError",
                 "UnknownNameError", "PositionedError", "PathSyntaxError",
                 "ExpressionSyntaxError", "DefinitionError", "EventFormatError",
                 "GraphStateError", "ConditionError", "NoSoleEventError"),
    "._paths": ("Axis", "Kind", "Step", "PathType", "PathInstance", "contained", "ends",
                "intersect_lb", "intersect_ab", "project"),
    "._events": ("Op", "NodeKind", "PrimitiveEventType", "CompositeEventType", "EventType",
                 "compatible", "matches", "PrimitiveEvent", "CompositeEvent", "Event",
                 "read_events", "trusted_path_instance", "trusted_primitive"),
    "xmlevents._foundation.jsonlines": ("JsonLineError",),
    "._documents": ("Documents", "Condition"),
    ".ast": ("Expr", "Primitive", "Ref", "Disj", "Conj", "Seq", "AnyOf", "Not", "Mult",
             "Definition", "Mode", "Context", "Modifiers", "ins", "upd", "dele", "del_",
             "any_op", "ref", "wildcard", "conj", "disj", "seq", "any_of", "not_", "mult",
             "window", "Duration"),
    "._parser": ("parse", "parse_definition", "parse_definitions", "parse_event_type"),
    "._tokens": ("LineIndex",),
    "._definitions": ("DefinitionSet", "ResolvedDefinition", "LeafSpec", "OperatorSpec"),
    "._graph": ("EventGraph",),
    "._window": ("Expired",),
    "._render": ("render_text", "render_dot"),
    "._contexts": ("Occurrence", "Group", "select_any", "select_seq", "select_disj"),
    "._grouping": ("GroupingKey", "NULL"),
    "._subscriptions": ("subscription_type", "check_subscription"),
    "._hints": ("NamespaceHint", "NamespaceWarning", "namespace_hints", "path_type_hints",
                "suggest_prefix"),
}
__getattr__, __dir__ = lazy_names(__name__, globals(), _MODULES)

if TYPE_CHECKING:
    from xmlevents._foundation.jsonlines import JsonLineError

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
        NoSoleEventError,
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
    from ._hints import (
        NamespaceHint,
        NamespaceWarning,
        namespace_hints,
        path_type_hints,
        suggest_prefix,
    )
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
    from ._render import render_dot, render_text
    from ._subscriptions import check_subscription, subscription_type
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
