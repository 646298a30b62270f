"""Subscriptions that can fire: event types and receivers checked when they are subscribed.

A subscription that can never fire is the costliest kind of mistake — nothing happens, and
nothing says why (issue 15). So a subscription is checked against the definitions when it is
made: a name must be defined, a composite type's path type must be one its definition's
events can have (they occur at paths ending in the definition's path type, section 2.2), a
primitive type must be one the documents can produce, and the receiver must accept the call
it will get. Each refusal names the thing and says what to write instead.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
import weakref
from typing import Any

from ._definitions import DefinitionSet, may_match
from ._documents import Documents, impossible
from ._errors import ArgumentTypeError, InvalidArgumentError, UnknownNameError
from ._events import CompositeEventType, EventType, Op, PrimitiveEventType
from ._paths import Kind

__all__ = ["subscription_type", "check_subscription", "check_receiver", "check_weak",
           "unknown_name", "raise_collected"]

_OPS = tuple(op.value for op in Op if op is not Op.ANY)
_NAME = re.compile(r"[^\W\d][\w.\-]*\Z")


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


def check_subscription(et: EventType, definitions: DefinitionSet | None,
                       documents: Documents | None = None) -> None:
    """Refuse ``et`` if no event of it can ever be raised or produced (composite types are
    checked once there are ``definitions``: a subscription may come before them).

    Raises:
        UnknownNameError: a composite type whose name no definition has.
        InvalidArgumentError: a composite type whose path type its definition's events never
            have, a wildcard ``%(pt)`` no definition's events reach, or a primitive type the
            documents never produce (an element's ``upd`` in watched documents).
    """
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


def check_receiver(fn: Any, positional: tuple[str, ...], keywords: tuple[str, ...] = ()
                   ) -> None:
    """Refuse a receiver that cannot take the call it will get: the ``positional``
    arguments, then the ``keywords`` (``fn(doc, event=e)`` for watched documents,
    ``fn(event)`` for a graph). Receivers whose signature Python cannot tell (some
    built-ins) are let through.

    Raises:
        ArgumentTypeError: ``fn`` is not callable, or its parameters cannot take the call
            (the message shows the call and the signature to write).
    """
    if not callable(fn):
        raise ArgumentTypeError(f"the receiver {fn!r} is not callable")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to check (a C function): trust it
        return
    try:
        sig.bind(*positional, **dict.fromkeys(keywords))
    except TypeError as exc:
        name = getattr(fn, "__name__", type(fn).__name__)
        call = ", ".join([*positional, *(f"{k}={k[0]}" for k in keywords)])
        sig = sig.replace(parameters=[p.replace(annotation=p.empty)
                                      for p in sig.parameters.values()],
                          return_annotation=sig.empty)  # the names are what matter here
        try:  # the right number of parameters, named otherwise: say which name it needs
            sig.bind(*positional, *keywords)
            why = f"it passes the event as the keyword argument {keywords[-1]}="
        except TypeError:
            why = str(exc)
        raise ArgumentTypeError(
            f"the receiver {name}{sig} cannot be called as {name}({call}) ({why}); write it "
            f"as def {name}({', '.join((*positional, *keywords))}): ...") from None


def check_weak(fn: Any) -> None:
    """Refuse ``weak=True`` for a receiver that a weak reference cannot keep: one that has
    no weak reference support, or a lambda or ``functools.partial`` made for the call, which
    nothing else holds and which is collected at once (it would silently never run)."""
    target = getattr(fn, "__self__", None) if inspect.ismethod(fn) else fn
    name = getattr(fn, "__name__", type(fn).__name__)
    if name == "<lambda>" or isinstance(fn, functools.partial):
        raise InvalidArgumentError(
            f"weak=True with a {'lambda' if name == '<lambda>' else 'partial'}: nothing else "
            "holds it, so it is collected at once and never runs; subscribe it strongly "
            "(weak=False, the default) or subscribe a method of the object whose life it "
            "should follow")
    try:
        weakref.ref(target)
    except TypeError:
        raise InvalidArgumentError(
            f"weak=True with {fn!r}: a {type(target).__name__} cannot be held weakly; "
            "subscribe it strongly (weak=False, the default)") from None


def raise_collected(errors: list[BaseException]) -> None:
    """Raise what receivers raised, once every delivery is done (a receiver that raises
    never stops the others, issue 16): a KeyboardInterrupt or
    SystemExit first (itself, so that ``except KeyboardInterrupt`` still works), else the one
    exception, else an ExceptionGroup of them."""
    if not errors:
        return
    stops = [x for x in errors if not isinstance(x, Exception)]
    if stops:
        if len(errors) > 1:
            stops[0].add_note(f"xmlevents: {len(errors) - 1} other receiver exception(s) "
                              "were raised in the same delivery, which went on to the end")
        raise stops[0]
    if len(errors) == 1:
        raise errors[0]
    raise ExceptionGroup(f"{len(errors)} receivers raised",
                         [x for x in errors if isinstance(x, Exception)])
