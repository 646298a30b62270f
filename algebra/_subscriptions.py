"""Subscriptions that can fire: event types and receivers checked when they are subscribed.

A subscription that can never fire is the costliest kind of mistake — nothing happens, and
nothing says why (issue 15). So a subscription is checked against the definitions when it is
made: a name must be defined, a composite type's path type must be one its definition's
events can have (they occur at paths ending in the definition's path type, section 2.2), a
primitive type must be one the documents can produce. Each refusal names the thing and says
what to write instead.

:func:`subscription_type` and :func:`check_subscription` are public (``xmlevents.algebra``):
they answer, for any subscriber of composite events (the event graph, the watched documents'
monitor, an application's own), "will this subscription ever fire?" over the algebra's event
types and definitions. The checks of the receivers themselves need none of those types and
live in the foundation (``xmlevents._foundation.subscriptions``, issue 28).
"""

from __future__ import annotations

import difflib
import re

from xmlevents._foundation.names import NCNAME

from ._definitions import DefinitionSet, may_match
from ._documents import Documents, impossible
from ._errors import InvalidArgumentError, UnknownNameError
from ._events import CompositeEventType, EventType, Op, PrimitiveEventType
from ._paths import Kind

__all__ = ["subscription_type", "check_subscription", "unknown_name"]

_OPS = tuple(op.value for op in Op if op is not Op.ANY)
# A definition's bare name: an XML name, as the parser reads one (issue 28: \w refused a·b).
_NAME = re.compile(f"{NCNAME}\\Z")


def subscription_type(event_type: str | EventType) -> str | EventType:
    """What a subscription names: a definition's bare name (returned as the name, stripped),
    or an event type (parsed from its text form)."""
    if not isinstance(event_type, str):
        return event_type
    text = event_type.strip()
    if _NAME.match(text):
        return text
    from ._parser import parse_event_type

    return parse_event_type(text)


def unknown_name(name: str, definitions: DefinitionSet | None, shown: str) -> UnknownNameError:
    """The error for subscribing to ``name`` that no definition has, with the closest names
    (and the primitive operation a composite-looking ``update(...)`` probably meant)."""
    names = [r.name for r in definitions] if definitions is not None else []
    defined = ", ".join(names) if names else "none"
    hint = ""
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    op = difflib.get_close_matches(name.lower(), _OPS, n=1, cutoff=0.5)
    if close:
        hint = f"; did you mean {close[0]}?"
    elif op and "(" in shown:
        hint = (f"; a primitive event type is written with an operation "
                f"({', '.join(_OPS)}): did you mean {op[0]}{shown[shown.index('('):]}?")
    return UnknownNameError(f"{shown}: no definition named {name!r} (defined: {defined})"
                            f"{hint}")


def check_subscription(et: EventType | str, definitions: DefinitionSet | None,
                       documents: Documents | None = None) -> None:
    """Refuse ``et`` if no event of it can ever be raised or produced (composite types and
    definitions' bare names, as :func:`subscription_type` returns them, are checked once there
    are ``definitions``: a subscription may come before them).

    >>> from xmlevents.algebra import DefinitionSet
    >>> defs = DefinitionSet.of("Ei := ins(item) ; ins(item/price)")
    >>> check_subscription(subscription_type("Ei"), defs)
    >>> try:
    ...     check_subscription(subscription_type("Eii"), defs)
    ... except KeyError as exc:  # an UnknownNameError
    ...     print(exc)
    Eii: no definition named 'Eii' (defined: Ei); did you mean Ei?

    Raises:
        UnknownNameError: a composite type whose name no definition has.
        InvalidArgumentError: a composite type whose path type its definition's events never
            have, a wildcard ``%(pt)`` no definition's events reach, or a primitive type the
            documents never produce (an element's ``upd`` in watched documents).
    """
    if isinstance(et, str):  # a definition's bare name
        if definitions is not None and et not in definitions:
            raise unknown_name(et, definitions, et)
        return
    if isinstance(et, PrimitiveEventType):
        reason = impossible(documents, et)
        if reason is not None:
            raise InvalidArgumentError(f"{et}: {reason}")
        return
    assert isinstance(et, CompositeEventType)
    if definitions is None:
        return
    if et.name is None:
        if not any(may_match(r.root.pt, et.pt) for r in definitions):
            have = ", ".join(f"{r.name}({r.root.pt})" for r in definitions) or "none"
            raise InvalidArgumentError(
                f"{et}: no definition's events occur at a path ending in {et.pt} (defined: "
                f"{have}); subscribe to a path type one of them can have")
        return
    if et.name not in definitions:
        raise unknown_name(et.name, definitions, str(et))
    pt = definitions[et.name].root.pt
    if not may_match(pt, et.pt):
        under = "" if pt.kind is Kind.ABSOLUTE else f"/{pt}"
        raise InvalidArgumentError(
            f"{et}: {et.name}'s events occur at paths ending in {pt} (its path type), "
            f"never at a path ending in {et.pt}; subscribe to {et.name} (all of them), or to "
            f"{et.name}({et.pt if under else pt}{under}) for those at a path like that")
