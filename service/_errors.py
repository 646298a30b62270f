"""The errors of the detection service (seed 001), on the root of :mod:`xmlevents.algebra`.

Text-form and markup errors are laid out as the expression language's are (``line L, col C:
reason`` and the offending line with a caret); the HTTP layer turns every one of them into a
problem document (RFC 9457) with a 4xx status.
"""

from __future__ import annotations

from collections.abc import Iterable

from xmlevents.algebra import InvalidArgumentError, PositionedError, UnknownNameError

__all__ = [
    "ExpressionTextError",
    "MarkupError",
    "RegistrationError",
    "SignalError",
    "UnknownExpressionError",
]


class ExpressionTextError(PositionedError):
    """Malformed text form of an expression (``SEQ(newCD(title=T), …)``), or an unknown
    operator, at its line and column."""


class MarkupError(PositionedError):
    """Malformed R3-style XML markup of an expression (section 2.3), at its line and column."""


class RegistrationError(InvalidArgumentError):
    """A well-formed expression that cannot be registered: an output variable nothing binds,
    an input variable no atomic expression uses, an opaque language without a provider. The
    graph is left exactly as it was."""


class SignalError(InvalidArgumentError):
    """An atomic event that cannot be signalled: no type, parameters that are not a mapping of
    names to strings, numbers or booleans."""


class UnknownExpressionError(UnknownNameError):
    """No registered expression has this id (or it belongs to another client)."""

    def __init__(self, ident: str, known: Iterable[str] = ()) -> None:
        self.ident = ident
        self.known = tuple(known)
        super().__init__(f"no registered expression has the id {ident!r}")
