"""Event sources for CEL queries: JSON lines (seed 003's tuples as CORE streams them).

A line is one JSON object: ``{"type": "T", "id": 0, "temp": 45}``; its position is its line
number from 0 (blank lines are not events and take no position); ``type`` is the event type,
every other member an attribute (``id`` is an ordinary attribute), ``time`` also the event's
time in seconds for duration windows. Read with the project's bounded JSON-lines decoder.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from xmlevents.algebra import JsonLineError, load_line

from ._errors import StreamError
from ._events import Event, Value

__all__ = ["read_jsonl"]


def _value(name: str, value: Any, where: str) -> Value:
    if isinstance(value, bool | int | float | str):
        return value
    raise StreamError(f"{where}: attribute {name!r} is "
                      f"{'null' if value is None else type(value).__name__}; attributes are "
                      "strings, numbers or booleans")


def read_jsonl(lines: Iterable[str], *, source: str = "") -> Iterator[Event]:
    """The events of JSON lines, positions from 0.

    Raises:
        StreamError: a line that is not a JSON object, lacks ``type``, or has an attribute
            that is not a string, number or boolean; naming its line (events before it
            have been yielded).
    """
    position = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{source + ', ' if source else ''}line {number}"
        try:
            obj = load_line(line)
        except JsonLineError as exc:
            raise StreamError(f"{where}: {exc}") from None
        if not isinstance(obj, dict):
            raise StreamError(f"{where}: an event is a JSON object, got "
                              f"{type(obj).__name__}")
        etype = obj.get("type")
        if not isinstance(etype, str) or not etype:
            raise StreamError(f"{where}: an event needs its \"type\", a non-empty string")
        attrs = {k: _value(k, v, where) for k, v in obj.items() if k != "type"}
        time = attrs.get("time")
        yield Event(position, etype,
                    attrs, float(time) if isinstance(time, int | float)
                    and not isinstance(time, bool) else None)
        position += 1
