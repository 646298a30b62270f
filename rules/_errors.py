"""The errors of the ECA rule language (seed 002), on the root of :mod:`xmlevents.algebra`.

Messages are laid out as the expression language's are (``xmlevents.algebra``'s
``ExpressionSyntaxError``): ``line L, col C: reason`` (the source, a file name, before the reason
when there is one), then the offending line with a caret under the column. The fields
(``reason``, ``line``, ``column``, ``text``, ``context``) are there for tests and tools to check.
"""

from __future__ import annotations

from collections.abc import Iterable

from xmlevents.algebra import PositionedError, UnknownNameError

__all__ = ["RuleSyntaxError", "RuleError", "UnknownDocumentError"]


class _Located(PositionedError):
    """An error at a line and column of a rule text (no position: a tree built in Python);
    laid out by the algebra's :class:`~xmlevents.algebra.PositionedError`."""

    def __init__(self, reason: str, *, text: str = "", line: int | None = None,
                 column: int | None = None, context: str = "") -> None:
        super().__init__(reason, text=text, line=line, column=column, context=context)


class RuleSyntaxError(_Located):
    """Rule text that is malformed or outside the paper's fragments (sections 2.1-2.5).

    The reason says what was expected or, for a construct outside simple XPath / simple
    XQuery (another axis, another function, another variable, a FLWR expression), what the
    fragment allows instead.
    """


class RuleError(_Located):
    """A well-formed rule or rule set that cannot be used: a duplicate name or priority
    (footnote 5: no two rules share a priority), a namespace prefix nobody bound.

    ``rule`` names the rule concerned, when there is one.
    """

    def __init__(self, reason: str, *, rule: str = "", text: str = "", line: int | None = None,
                 column: int | None = None, context: str = "") -> None:
        self.rule = rule
        super().__init__(reason, text=text, line=line, column=column, context=context)


class UnknownDocumentError(UnknownNameError):
    """``document('name')`` names no document of the store; ``document`` is the name,
    ``known`` the names there are (empty when the store cannot list them), ``rule`` the rule
    whose evaluation asked for it (set by whoever knows it: the executor)."""

    def __init__(self, document: str, known: Iterable[str] = (), *, rule: str = "") -> None:
        self.document = document
        self.known = tuple(sorted(known))
        self.rule = rule
        where = f"rule {rule}: " if rule else ""
        listed = (f"; the documents are {', '.join(repr(k) for k in self.known)}"
                  if self.known else "")
        super().__init__(f"{where}unknown document {document!r} in document({document!r})"
                         f"{listed}")
