"""The errors of watched documents (DESIGN section 8), on the root of :mod:`xmlevents.algebra`.

Each also inherits the built-in a caller of lxml would expect: a change lxml itself refuses
stays a ``ValueError`` or ``TypeError`` here, so code written against plain lxml still catches
it. A bad argument to the monitor is an :class:`~xmlevents.algebra.InvalidArgumentError`, a
closed monitor a :class:`~xmlevents.algebra.GraphStateError`, as in the algebra.
"""

from __future__ import annotations

from xmlevents.algebra import XmlEventsError

__all__ = ["WatchError", "WatchTypeError", "XMLSyntaxError", "EventLogError", "CascadeError",
           "SubscriptionWarning"]


class WatchError(XmlEventsError, ValueError):
    """A change or a wrap that a watched document cannot take (nothing is changed).

    Either lxml would refuse it too (an element under itself, a comment with ``--``), or it
    lies outside the watched model (the root's tail, the prolog, a tree already watched).
    """


class WatchTypeError(XmlEventsError, TypeError):
    """A node of a kind the watched model does not have (an entity reference, an element of
    lxml's own classes put into a watched tree where only xmlevents' can go)."""


class XMLSyntaxError(XmlEventsError, ValueError):
    """A document that is not well-formed XML: ``source``, ``line`` and ``column`` say where."""

    def __init__(self, source: str, line: int | None, column: int | None, reason: str) -> None:
        self.source, self.line, self.column, self.reason = source, line, column, reason
        where = f"{source}:{line}:{column}" if line else source
        super().__init__(f"{where}: {reason}")


class EventLogError(XmlEventsError, ValueError):
    """An event log that does not fit its document: an event that cannot be applied to the
    snapshot it is replayed onto (named by id and tick), or a snapshot whose ids do not fit
    its XML. (Named ``ReplayError`` before issue 28, a name that read as the error of
    :mod:`xmlevents.replay`, whose version histories have errors of their own.)"""


class CascadeError(XmlEventsError, RuntimeError):
    """Receivers kept changing documents for more rounds than the monitor's cascade limit.

    The events of every round were fed to the graph; the callbacks of the last round were not
    run. ``errors`` holds what receivers raised before the limit was reached.
    """

    def __init__(self, message: str, errors: list[Exception]) -> None:
        super().__init__(message)
        self.errors = errors


class SubscriptionWarning(UserWarning):
    """Subscriptions that never ran, for a reason only the end of the run can tell (they
    waited for definitions that never came)."""
