"""The errors of the replay (DESIGN section 8): one class per meaning.

Each is an :class:`~xmlevents.algebra.XmlEventsError` and the built-in exception it replaced,
so ``except ValueError`` (or ``TypeError``, ``IndexError``) around a replay keeps working.
Nothing here needs pyspark: the package exports these eagerly.
"""

from __future__ import annotations

from lxml import etree

from xmlevents.algebra import XmlEventsError

__all__ = ["BadVersion", "MissingXmlError", "VersionTableError", "GitHistoryError",
           "EditScriptError", "ScriptFormatError", "ScriptPathError", "DiffActionError",
           "InexactScriptError", "KeySpecError", "KeyWarning"]


class BadVersion(XmlEventsError, ValueError):
    """A version that is not well-formed XML: skipped, the next diffed from the last good one.

    ``message`` is the parser's, without its position; ``line`` and ``column`` give that.
    """

    def __init__(self, doc: str, version: int, message: str, line: int | None = None,
                 column: int | None = None) -> None:
        self.doc, self.version, self.message = doc, version, message
        self.line, self.column = line, column
        where = f", line {line}, column {column}" if line is not None else ""
        super().__init__(f"{doc} version {version}{where}: {message}")

    @classmethod
    def of(cls, doc: str, version: int, exc: etree.XMLSyntaxError) -> BadVersion:
        """The error of lxml's parser error (its message without the position it repeats)."""
        line, column = exc.position if exc.position else (None, None)
        message = exc.msg.split(", line ")[0] if exc.msg else str(exc)
        return cls(doc, version, message, line, column)


class MissingXmlError(XmlEventsError, ValueError):
    """A version that must be read (the first one, or a script to check) was given no XML."""


class VersionTableError(XmlEventsError, ValueError):
    """A version table that cannot be read: names the file and the line or row."""


class GitHistoryError(XmlEventsError, ValueError):
    """The history of a file could not be read from git: no git, no repository, a path never
    committed, or a version whose bytes are not text in the encoding it declares."""


class EditScriptError(XmlEventsError):
    """Base class of the errors of edit scripts (:mod:`._script`, :mod:`._actions`)."""


class ScriptFormatError(EditScriptError, ValueError):
    """An encoded edit script (the Spark diff stage's ``script`` column) that does not decode:
    not JSON, an unknown action, or a field of the wrong type; or an object that is no action."""


class ScriptPathError(EditScriptError, IndexError):
    """An action's child-index path that leads to no node of the tree it is applied to (a
    script made against another state of the document)."""


class DiffActionError(EditScriptError, TypeError):
    """xmldiff gave an action this module does not know (a newer xmldiff)."""


class InexactScriptError(EditScriptError, ValueError):
    """No edit script reproduces the new version exactly — not xmldiff's, not the completed
    one, not even replacing the root. Never seen; a replay reports it for the document."""


class KeySpecError(XmlEventsError, ValueError):
    """A key declaration (``--key``, :meth:`~xmlevents.replay.Key.parse`) that does not parse
    or cannot be used: no ``=``, an empty element or field, a bad step, a prefix not bound, two
    keys for one element. ``column`` (1-based) is where the text goes wrong, if it does."""

    def __init__(self, spec: str, message: str, column: int | None = None) -> None:
        self.spec, self.reason, self.column = spec, message, column
        where = f", column {column}" if column is not None else ""
        super().__init__(f"key {spec!r}{where}: {message}")


class KeyWarning(UserWarning):
    """A ``--key`` that selected no element in any version of a replay (issue 14)."""
