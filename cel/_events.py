"""Events of a stream (seed 003, section 3: a stream is a sequence of tuples, each of a type,
its index its time), and what windows and partitions read of them.

An :class:`Event` is one tuple: its 0-based ``position`` in the stream, its ``type`` (the
paper's relation name), its attributes, and, where the source has one, a ``time`` in seconds
for duration windows (the paper's time is the index; CORE adds time windows). A stream is any
iterable of events in position order.

Windows and partitions (CORE's ``WITHIN`` and ``PARTITION BY``; the paper has neither) are
defined here once, for both evaluators:

* :func:`fits` — ``WITHIN n EVENTS``: ``max C - min C <= n``. CORE's convention: an event
  at position ``j`` may combine with one at ``i`` when ``j - i <= n`` (its time window
  keeps ``[now - n, now]``, both ends included; for events the "time" is the position).
  ``WITHIN d SECONDS``: every event has a time and ``max - min <= d``; ``WITHIN n [attr]``:
  every event has a number ``attr`` and ``max - min <= n``. Both measured by
  :func:`measure` against :func:`limit`, in the project's one time model
  (:mod:`xmlevents._foundation.time`): times in milliseconds against the window's
  :class:`~xmlevents._foundation.time.Duration`, an attribute as its value; integers stay
  integers, so the comparison is exact where the values are (issue 32: floats matched
  nanosecond times 5,000,000,100 ns apart within 5,000,000,000).
* :func:`partition_key` — the values an event is partitioned by (None: in no partition).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard

from xmlevents._foundation.time import UNITS, Duration

if TYPE_CHECKING:
    from .ast import Window

__all__ = ["Value", "Event", "fits", "measure", "limit", "duration", "partition_key",
           "PROJECTION"]

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


def is_number(v: object) -> TypeGuard[int | float]:
    """A number to compare or to measure a window by: an int or a float, not a bool."""
    return isinstance(v, int | float) and not isinstance(v, bool)


def measure(window: Window, event: Event) -> int | float | None:
    """What a duration or attribute window measures of ``event``: its ``time`` in
    milliseconds, or its attribute's number as it is (an ``int`` stays one); None where it
    has none, or a NaN or an infinity (it can then be in no complex event that fits, in
    either evaluator alike)."""
    # is_time and in_ms, inline (a measure an event, on the automaton's path): an int, or a
    # float that is finite (x - x is NaN for NaN and the infinities)
    if window.kind == "seconds":
        time = event.time
        if type(time) is int:
            return time * 1000
        return time * 1000 if type(time) is float and time - time == 0 else None
    value = event.attrs.get(window.attribute or "")
    if type(value) is int:
        return value
    return value if type(value) is float and value - value == 0 else None


@functools.lru_cache(maxsize=256)
def duration(window: Window) -> Duration:
    """The :class:`~xmlevents._foundation.time.Duration` of a ``WITHIN d SECONDS`` window,
    read exactly from its size's decimal text (``0.1`` seconds is 100 ms).

    Raises:
        InvalidArgumentError: a size that is not a whole number of milliseconds.
    """
    return Duration.of(window.size, UNITS["s"])


def limit(window: Window) -> int | float:
    """The largest ``max - min`` of :func:`measure` that fits ``window``: its duration's
    milliseconds, or the attribute window's size (an ``int`` when whole, so that integer
    measures compare exactly)."""
    if window.kind == "seconds":
        return duration(window).ms
    size = window.size
    return int(size) if float(size).is_integer() else size


def fits(window: Window | None, events: Sequence[Event]) -> bool:
    """Whether the events of one complex event (any order, at least one) fit ``window``
    (see the module: both ends included)."""
    if window is None:
        return True
    if window.kind == "events":
        positions = [e.position for e in events]
        return max(positions) - min(positions) <= window.size
    values = [measure(window, e) for e in events]
    known = [v for v in values if v is not None]
    return len(known) == len(values) and max(known) - min(known) <= limit(window)


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
