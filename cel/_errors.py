"""The errors of CEL queries (seed 003), on the root of :mod:`xmlevents.algebra`."""

from __future__ import annotations

from xmlevents.algebra import InvalidArgumentError, PositionedError

__all__ = ["CELSyntaxError", "CELQueryError", "StreamError"]


class CELSyntaxError(PositionedError):
    """CEQL text that does not parse, with its line and column."""


class CELQueryError(PositionedError):
    """A query that parses but cannot be evaluated: not well-formed (a filter on a variable
    bound nowhere in its scope), not safe (``T AS x ; T AS x``), or outside what the chosen
    evaluator takes; names the variable, with line and column where known."""


class StreamError(InvalidArgumentError):
    """A stream line that is not an event: not a JSON object, no ``type``; names the line."""
