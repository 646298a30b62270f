"""Events of a stream (seed 003, section 3: a stream is a sequence of tuples, each of a type,
its index its time), and what windows and partitions read of them.

An :class:`Event` is one tuple: its 0-based ``position`` in the stream, its ``type`` (the
paper's relation name), its attributes, and, where the source has one, a ``time`` in seconds
for duration windows (the paper's time is the index; CORE adds time windows). A stream is any
iterable of events in position order.

Windows and partitions (CORE's ``WITHIN`` and ``PARTITION BY``; the paper has neither) are
defined here once, for both evaluators:

* :func:`fits` — the paper has no windows (its time is the index); CORE's conventions,
  unit by unit (issue 32: the attribute window was taken as closed like the others):

  - ``WITHIN n EVENTS``: ``max C - min C <= n``, closed: an event at position ``j`` may
    combine with one at ``i`` when ``j - i <= n`` (CORE keeps a run whose start is at least
    ``now - n``);
  - ``WITHIN d SECONDS`` (and minutes, hours): every event has a time and ``max - min <=
    d``, closed alike (CORE's nanosecond window);
  - ``WITHIN n [attr]``: every event has a number ``attr`` and ``max - min < n``, the
    half-open ``(now - n, now]``: CORE stores the window as ``n - 1`` (``within.hpp``: "at
    least the receiving event" fits, so ``WITHIN 1 [attr]`` is one value) and keeps ``max -
    min <= n - 1`` — the same on integers, its attributes' type; CORE's test
    ``within-custom.cpp`` ("Within smaller", ``WITHIN 5 [stock_time]``) fixes it.

  Measured by :func:`measure` against :func:`limit`, in the project's one time model
  (:mod:`xmlevents._foundation.time`): times in milliseconds against the window's
  :class:`~xmlevents._foundation.time.Duration`, an attribute as its value. Exact: integers
  (and floats with integral values) stay integers of any size, a span or a floor with a
  fractional float is a :class:`~fractions.Fraction` (issue 32: floats matched nanosecond
  times 5,000,000,100 ns apart within 5,000,000,000; a window's size past 2**53 was rounded).
* :func:`partition_key` — the values an event is partitioned by (None: in no partition).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, TypeGuard

from xmlevents._foundation.time import UNITS, Duration

if TYPE_CHECKING:
    from .ast import Window

__all__ = ["Value", "Event", "fits", "measure", "limit", "closed", "floor", "duration",
           "partition_key", "PROJECTION"]

Value = str | int | float | bool


@dataclass(frozen=True, slots=True)
class Event:
    """The tuple at ``position`` (0-based) of a stream: its type and attributes; ``time``
    (seconds, an ``int`` or a finite ``float``: the one time model) where the source has
    one, for duration windows; ``stream`` the name of the stream it came from where there
    are several (CEQL's ``stream>Type``)."""

    position: int
    type: str
    attrs: Mapping[str, Value] = field(default_factory=dict)
    time: float | None = None
    stream: str | None = None


def is_number(v: object) -> TypeGuard[int | float | Fraction]:
    """A number to compute and compare with in a filter: an int, a float or the exact
    fraction an integer division gives (:mod:`._predicates`), not a bool."""
    return isinstance(v, int | float | Fraction) and not isinstance(v, bool)


def measure(window: Window, event: Event) -> int | float | None:
    """What a duration or attribute window measures of ``event``: its ``time`` in
    milliseconds, or its attribute's number as it is (an ``int`` stays one, a float with an
    integral value becomes that integer, exactly); None where it has none, or a NaN or an
    infinity (it can then be in no complex event that fits, in either evaluator alike)."""
    # is_time and in_ms, inline (a measure an event, on the automaton's path): an int, or a
    # float that is finite (x - x is NaN for NaN and the infinities)
    if window.kind == "seconds":
        time = event.time
        if type(time) is int:
            return time * 1000
        if type(time) is float and time - time == 0:
            ms = time * 1000
            return int(ms) if ms.is_integer() else ms
        return None
    value = event.attrs.get(window.attribute or "")
    if type(value) is int:
        return value
    if type(value) is float and value - value == 0:
        return int(value) if value.is_integer() else value
    return None


def closed(window: Window) -> bool:
    """Whether ``window`` keeps a span equal to its size: closed for events and durations,
    half-open for an attribute (CORE's conventions; see the module)."""
    return window.kind != "attribute"


def floor(window: Window, value: int | float) -> int | Fraction:
    """``value - limit(window)``, exactly: the smallest measure a complex event ending at
    ``value`` may start at (:func:`closed` windows), or the largest it may not (half-open
    ones). Compared with ints, floats and fractions, Python compares exactly."""
    if type(value) is int:
        return value - limit(window)
    return Fraction(value) - limit(window)


@functools.lru_cache(maxsize=256)
def duration(window: Window) -> Duration:
    """The :class:`~xmlevents._foundation.time.Duration` of a ``WITHIN d SECONDS`` window,
    read exactly from its size's decimal text (``0.1`` seconds is 100 ms).

    Raises:
        InvalidArgumentError: a size that is not a whole number of milliseconds.
    """
    return Duration.of(window.size, UNITS["s"])


def limit(window: Window) -> int:
    """The size of a duration or attribute window, as an integer: its duration's
    milliseconds, or the attribute window's size (a whole number; exact at any size)."""
    if window.kind == "seconds":
        return duration(window).ms
    return int(window.size)


def fits(window: Window | None, events: Sequence[Event]) -> bool:
    """Whether the events of one complex event (any order, at least one) fit ``window``
    (see the module: closed for events and durations, half-open for an attribute; exact)."""
    if window is None:
        return True
    if window.kind == "events":
        positions = [e.position for e in events]
        return max(positions) - min(positions) <= window.size
    values = [measure(window, e) for e in events]
    known = [v for v in values if v is not None]
    if len(known) != len(values):
        return False
    low, high = min(known), max(known)
    span = high - low if type(low) is int and type(high) is int else \
        Fraction(high) - Fraction(low)
    return span <= limit(window) if closed(window) else span < limit(window)


# ``PROJECT(attr, 'path type')``: the projection π of the path instance in ``attr`` (a
# primitive event's ``ids``) on a path type (seed 000, section 2.1) — "the same item".
PROJECTION = re.compile(r"PROJECT\((?P<attr>[A-Za-z_][A-Za-z_0-9]*), '(?P<pt>(?:[^']|'')*)'\)")


@functools.lru_cache(maxsize=4096)
def _projected(instance: str, path_type: str) -> str | None:
    from xmlevents.algebra import PathInstance, PathType, XmlEventsError, project

    try:
        got = project(PathType.parse(path_type), PathInstance.parse(instance))
    except XmlEventsError:
        return None
    return None if got is None else str(got)


def attribute(event: Event, name: str) -> Value | None:
    """The value of attribute ``name`` of ``event`` for a partition: an attribute, ``type``
    (the event's type unless it carries an attribute of that name), or a projection
    ``PROJECT(attr, 'pt')`` (the text of the projected path instance); None where missing."""
    value = event.attrs.get(name)
    if value is not None:
        return value
    if name == "type":
        return event.type
    m = PROJECTION.fullmatch(name)
    if m is None:
        return None
    instance = event.attrs.get(m["attr"])
    if not isinstance(instance, str):
        return None
    return _projected(instance, m["pt"].replace("''", "'"))


def partition_key(partition_by: tuple[tuple[str, ...], ...], event: Event
                  ) -> tuple[Value, ...] | None:
    """The partition of ``event`` under CEQL's ``PARTITION BY [a, b], [c, d]``: the values of
    the first list whose attributes the event all carries (the lists name the same key
    differently for different event types, so their values are compared as they are); None
    when it carries no list completely (the event is in no partition and matches nothing).
    ``()`` partitions nothing: every event has the key ``()``."""
    if not partition_by:
        return ()
    for names in partition_by:
        values = [attribute(event, a) for a in names]
        if all(v is not None for v in values):
            return tuple(v for v in values if v is not None)
    return None
