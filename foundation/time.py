"""One time model for the algebra and cel (issue 28; docs/semantics.md, "Time").

* **Event time** is a number of seconds (a Unix time, a commit time), as the event's input
  gives it: an ``int`` stays an ``int``, a ``float`` a ``float``; never a bool, ``NaN`` or an
  infinity (:func:`is_time`; the JSON reader refuses the constants before any event is
  built). The algebra's ``PrimitiveEvent.time`` and cel's ``Event.time`` are such times.
* **A duration** is a whole number of milliseconds (:class:`Duration`): the algebra's
  ``within=30s`` and cel's ``WITHIN 1 MINUTES 30 SECONDS`` are the same value, read from
  their texts exactly (``0.1 SECONDS`` is 100 ms, not ``0.1 * 1000`` in floats).
* **Comparisons are in milliseconds**: a time is measured as ``time * 1000``
  (:func:`in_ms`), exact integer arithmetic when the times are integers, against the
  duration's ``ms``. (Issue 32: measures turned into floats matched nanosecond times
  5,000,000,100 ns apart within 5,000,000,000.)

The logical clock (ticks, one per primitive event) is the algebra's other clock and stays
there: a tick is a position, not a time.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, TypeGuard

from .errors import InvalidArgumentError

__all__ = ["Duration", "UNITS", "Time", "is_time", "in_ms", "time_of_text"]

Time = int | float
"""An event time, in seconds (see the module)."""

#: Units of a duration, in milliseconds, largest first (the printer picks the largest exact).
UNITS: dict[str, int] = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1000, "ms": 1}
_DURATION = re.compile(r"\s*([0-9]+)\s*(ms|s|m|h|d)\s*\Z")


@dataclass(frozen=True, slots=True)
class Duration:
    """A window of time (``within=30s``), in whole milliseconds: for events that carry a time.

    >>> Duration.parse("90s"), str(Duration(90_000)), str(Duration(1500))
    (Duration(ms=90000), '90s', '1500ms')
    >>> Duration.of("0.1", UNITS["s"]), Duration.of(1.5, UNITS["m"]).seconds
    (Duration(ms=100), 90.0)
    """

    ms: int

    def __post_init__(self) -> None:
        if isinstance(self.ms, bool) or not isinstance(self.ms, int) or self.ms < 1:
            raise InvalidArgumentError(f"Duration: ms={self.ms!r}; give a positive whole "
                                       "number of milliseconds")

    @property
    def seconds(self) -> float:
        return self.ms / 1000

    @classmethod
    def parse(cls, text: str) -> Duration:
        """``<digits><unit>``, the unit one of ``ms``, ``s``, ``m``, ``h``, ``d``.

        Raises:
            InvalidArgumentError: naming the text and the units.
        """
        m = _DURATION.match(text)
        if m is None or int(m.group(1)) == 0:
            raise InvalidArgumentError(
                f"within={text!r}: give a positive number of ticks (within=100) or a duration, "
                f"a whole number with a unit: {', '.join(UNITS)} (within=30s)")
        return cls(int(m.group(1)) * UNITS[m.group(2)])

    @classmethod
    def of(cls, amount: str | int | float, unit: int) -> Duration:
        """``amount`` units of ``unit`` milliseconds, exactly: the amount's decimal text
        (a float's shortest, ``repr``), not its binary value, so ``0.1`` seconds is 100 ms.

        Raises:
            InvalidArgumentError: an amount that is not a positive number, or that is not a
                whole number of milliseconds (``0.0001`` seconds).
        """
        try:
            ms = Decimal(amount if isinstance(amount, str) else repr(amount)) * unit
        except InvalidOperation:
            raise InvalidArgumentError(f"a duration of {amount!r}: not a number") from None
        if not ms.is_finite() or ms <= 0 or ms != ms.to_integral_value():
            raise InvalidArgumentError(
                f"a duration of {amount} x {unit} ms is {ms} ms: durations are positive "
                "whole numbers of milliseconds")
        return cls(int(ms))

    def __str__(self) -> str:
        unit = next(u for u, size in UNITS.items() if self.ms % size == 0)
        return f"{self.ms // UNITS[unit]}{unit}"


def is_time(value: Any) -> TypeGuard[Time]:
    """Whether ``value`` is an event time: an ``int`` or a finite ``float`` (not a bool)."""
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value))


def in_ms(time: Time) -> Time:
    """``time`` (seconds) in milliseconds: exact for an ``int``, rounded for a ``float``."""
    return time * 1000


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")


def time_of_text(text: str) -> Time:
    """The event time a text gives (a CSV field): an ``int`` if it is written as one.

    Raises:
        ValueError: not a number, or ``nan``/``inf`` (not a time).
    """
    if _INTEGER.match(text):
        return int(text)
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value
