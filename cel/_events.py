"""Events of a stream (seed 003, section 3: a stream is a sequence of tuples, each of a type,
its position its time)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Value", "Event"]

Value = str | int | float | bool


@dataclass(frozen=True, slots=True)
class Event:
    """The tuple at ``position`` (0-based) of a stream: its type and attributes; ``time``
    (seconds) where the source has one, for duration windows."""

    position: int
    type: str
    attrs: Mapping[str, Value] = field(default_factory=dict)
    time: float | None = None
    stream: str | None = None
