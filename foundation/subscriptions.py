"""Receivers checked when they are subscribed, and what they raise collected (issues 15, 16).

The event graph (:meth:`xmlevents.algebra.EventGraph.subscribe`) and the watched documents'
monitor (:mod:`xmlevents.dom`) subscribe receivers the same way: a receiver must accept the
call it will get, a weak one must be one a weak reference can keep, and a receiver that raises
never stops the others. Nothing here needs the algebra's types (the checks of event types
against definitions do: ``xmlevents.algebra.check_subscription``), so it lives in the
foundation both use, not in the algebra's public API (issue 28).
"""

from __future__ import annotations

import functools
import inspect
import weakref
from typing import Any

from .errors import ArgumentTypeError, InvalidArgumentError

__all__ = ["check_receiver", "check_weak", "raise_collected"]


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
