"""The root of the project's one error hierarchy, and the errors every package shares.

Every error xmlevents raises is an :class:`XmlEventsError`; each subclass also inherits the
built-in exception a caller would expect (``ValueError`` for malformed text or a bad value,
``TypeError`` for an argument of the wrong type, ``KeyError`` for an unknown name,
``RuntimeError`` for misuse of a running engine), as hypothesis' ``InvalidArgument`` does, so
``except ValueError`` keeps working. Each package defines its own errors in its ``_errors``
module on top of these and exports them; the ``xmlevents`` facade exports them all.
"""

from __future__ import annotations

from .text import snippet

__all__ = [
    "XmlEventsError",
    "InvalidArgumentError",
    "ArgumentTypeError",
    "UnknownNameError",
    "PositionedError",
]



class XmlEventsError(Exception):
    """Base class of every error xmlevents raises on bad input or misuse.

    A message's hints are written for Python callers (``pass namespaces={...}``);
    ``cli_phrases`` pairs each such phrase with what a command-line user writes instead, and
    :meth:`for_cli` gives the message with them (issue 15: hints in the user's interface).
    """

    #: ``(python, cli)`` phrase pairs, set where the error is raised (:meth:`phrased`).
    cli_phrases: tuple[tuple[str, str], ...] = ()

    def phrased(self, python: str, cli: str) -> XmlEventsError:
        """Say that the message's ``python`` phrase reads ``cli`` on the command line;
        returns the error, so that ``raise Error(...).phrased(a, b)`` reads as one."""
        self.cli_phrases = (*self.cli_phrases, (python, cli))
        return self

    def for_cli(self) -> str:
        """The message with its hints phrased as command-line flags."""
        text = str(self)
        for python, cli in self.cli_phrases:
            text = text.replace(python, cli)
        return text


class InvalidArgumentError(XmlEventsError, ValueError):
    """An argument whose value the call cannot take; the message names it and says what to do."""


class ArgumentTypeError(XmlEventsError, TypeError):
    """An argument of a type the call does not take."""


class UnknownNameError(XmlEventsError, KeyError):
    """A name (a definition, an event tree) that is not defined; the message lists the known."""

    def __str__(self) -> str:
        # KeyError's own str() quotes its argument as a key; this is a sentence.
        return str(self.args[0]) if self.args else ""


class PositionedError(XmlEventsError, ValueError):
    """An error at a line and column of some text (the offending line shown with a caret under
    the column); the fields are there for tests to check. The languages of the other packages
    (the rules of ``xmlevents.rules``) lay their errors out the same way by subclassing it."""

    def __init__(self, reason: str, *, text: str = "", line: int | None = 1,
                 column: int | None = 1, context: str = "") -> None:
        self.reason = reason
        self.text = text
        self.line = line
        self.column = column
        self.context = context
        # Trees built in Python have no source position: say so rather than invent one.
        where = (f"line {line}, col {column}: " if line is not None and column is not None
                 else "")
        prefix = f"{context}: " if context else ""
        message = f"{where}{prefix}{reason}"
        if text and line is not None and column is not None:
            message += "\n" + snippet(text, line, column)
        super().__init__(message)
