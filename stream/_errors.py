"""The errors of streaming queries (seed 004), on the root of :mod:`xmlevents.algebra`."""

from __future__ import annotations

from xmlevents.algebra import InvalidArgumentError, PositionedError

__all__ = ["QuerySyntaxError", "UnsupportedQueryError", "DocumentError"]


class QuerySyntaxError(PositionedError):
    """Query text (XPath or the grammar notation) that does not parse, with line and column."""


class UnsupportedQueryError(PositionedError):
    """A query that parses but lies outside the supported subset (an attribute, a function, a
    position other than ``[1]``/``[last()]``); names the column and the reason, and is raised
    before any input is read."""


class DocumentError(InvalidArgumentError):
    """Input that stops being a well-formed, safe XML document: malformed text (with
    ``line`` and ``column``), a DTD declaring entities (entity bombs, external entities), a
    second root element, or events out of order. Matches decided before it were reported."""

    def __init__(self, reason: str, *, line: int | None = None,
                 column: int | None = None, node: int | None = None) -> None:
        self.reason = reason
        self.line = line
        self.column = column
        self.node = node
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(f"{where}{reason}")
