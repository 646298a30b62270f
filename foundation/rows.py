"""The rows events and replay records are written as, each column defined once (DESIGN 6, 7).

A primitive event is a JSON line (:data:`EVENT_LINE`: ``PrimitiveEvent.to_dict``, what
``xmlevents detect`` reads) and a row of a replay's ``events`` table (:data:`EVENTS_TABLE`); a
composite event is an output line of ``xmlevents detect`` (:data:`COMPOSITE_LINE`) and a row
of ``composites`` (:data:`COMPOSITES_TABLE`); a replay also writes ``errors``
(:data:`ERRORS_TABLE`) and reads ``versions`` (:data:`VERSIONS_TABLE`). Each is a
:class:`RowSchema`, an ordered selection of :class:`Column` values; a column shared by two
forms is the same value in both. The dict forms (``to_dict``, the replay's rows) and the Spark
schemas (``xmlevents.replay``, which maps the Python types to Spark's) are made from these.

Shared by the algebra (an event's ``to_dict``), the replay (its tables and Spark schemas) and
the command line, so it lives in the foundation, not in the algebra's public API (issue 28):
the columns read events by their attributes (``ts``, ``pi``, ``op``, ...), so nothing here
needs the algebra's types. Standard library only (DESIGN section 1).

>>> EVENTS_TABLE.names
('doc', 'version', 'commit', 'time', 'ts', 'id', 'op', 'path', 'path_prefixed', 'ids', 'kind',
 'value', 'old', 'index', 'moved')
>>> ERRORS_TABLE.row(None, doc="po.xml", version=3, stage="parse", message="bad")
{'doc': 'po.xml', 'version': 3, 'commit': None, 'time': None, 'stage': 'parse', 'message': 'bad',
 'line': None, 'column': None}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Generic, TypeVar, get_args, get_origin

from .errors import ArgumentTypeError

__all__ = ["Column", "RowSchema", "EVENT_LINE", "COMPOSITE_LINE", "EVENTS_TABLE",
           "COMPOSITES_TABLE", "ERRORS_TABLE", "VERSIONS_TABLE", "CONSTITUENT"]

V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a row.

    Args:
        name: its name (a JSON key, a dict key, a Spark column).
        type: the Python type of its values: ``str``, ``int``, ``float``, ``bool``,
            ``list[str]`` or ``list[int]``.
        nullable: whether a row may hold None there (a sparse form then leaves it out).
        read: how it is read off the value the row is made of; None for a column the caller
            gives (a replay's ``doc`` and ``version``, every column of an error row).
        bits: an integer's width in columnar stores: 64 for ticks and versions, 32 for
            positions (child indices, lines, columns).
        fields: for a column of type ``list[dict]``, the form of each item (a list of
            structs in columnar stores: a composite's constituents).
    """

    name: str
    type: Any  # a class or a ``list[...]`` alias: mypy has no type for "either"
    nullable: bool = False
    read: Callable[[Any], Any] | None = None
    bits: int = 64
    fields: RowSchema[Any] | None = None

    def mismatch(self, value: Any) -> str | None:
        """Why ``value`` does not fit this column, or None if it does."""
        if value is None:
            return None if self.nullable else f"{self.name} is null"
        origin, args = get_origin(self.type), get_args(self.type)
        if self.fields is not None:
            if type(value) is not list or not all(type(v) is dict for v in value):
                return f"{self.name}={value!r} is not a list of {self.fields.name} rows"
            for item in value:
                if problems := self.fields.mismatches(item):
                    return f"{self.name}: {'; '.join(problems)}"
            return None
        if origin is list:
            if type(value) is not list or not all(_is(v, args[0]) for v in value):
                return f"{self.name}={value!r} is not a list of {args[0].__name__}"
            return None
        if not _is(value, self.type):
            return f"{self.name}={value!r} is not {self.type.__name__}"
        if self.type is int and not -(2 ** (self.bits - 1)) <= value < 2 ** (self.bits - 1):
            return f"{self.name}={value!r} does not fit {self.bits} bits"
        return None


def _is(value: Any, t: type) -> bool:
    # bool is an int to isinstance, never to a column; a float column takes ints too
    if t is float:
        return type(value) in (int, float)
    return type(value) is t if t in (int, bool) else isinstance(value, t)


@dataclass(frozen=True, slots=True)
class RowSchema(Generic[V]):
    """One form of a row: its columns, in order. A ``sparse`` form leaves out the nullable
    columns that are None (the JSON lines: optional fields only where set, DESIGN 6)."""

    name: str
    columns: tuple[Column, ...]
    sparse: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def row(self, value: V | None, /, **given: Any) -> dict[str, Any]:
        """The dict form of ``value``: every column, in order, read off it or taken from
        ``given`` (a nullable given column defaults to None).

        Raises:
            ArgumentTypeError: if a column that is neither read nor nullable is not given.
        """
        d: dict[str, Any] = {}
        sparse = self.sparse
        for c in self.columns:
            read = c.read
            if read is not None:
                v = read(value)
            elif c.nullable:
                v = given.get(c.name)
            else:
                try:
                    v = given[c.name]
                except KeyError:
                    raise ArgumentTypeError(f"a row of {self.name} needs {c.name}=") from None
            if v is None and sparse:
                continue
            d[c.name] = v
        return d

    def mismatches(self, row: Mapping[str, Any]) -> list[str]:
        """What keeps ``row`` from being a row of this form (empty if nothing): a missing or
        unknown column, a value of the wrong type, a null where none may be."""
        problems = [f"{k} is not a column of {self.name}" for k in row if k not in self.names]
        for c in self.columns:
            if c.name not in row:
                if not (self.sparse and c.nullable):
                    problems.append(f"{c.name} is missing")
            elif (why := c.mismatch(row[c.name])) is not None:
                problems.append(why)
            elif self.sparse and row[c.name] is None:
                problems.append(f"{c.name} is null (a sparse row leaves it out)")
        return problems


# --- columns -------------------------------------------------------------------------------
# Read off an event: ``pi`` is its path instance, written as its path type and its ids. The
# rows are typed RowSchema[Any]: the events are the algebra's, which the foundation, below it,
# does not import (PrimitiveEvent for the event forms, CompositeEvent for the composite ones).

_TS = Column("ts", int, read=attrgetter("ts"))
_PATH = Column("path", str, read=lambda e: str(e.pi.pt))
_IDS = Column("ids", list[str], read=lambda e: list(e.pi.ids))

_EVENT_ID = Column("id", str, read=attrgetter("id"))
_OP = Column("op", str, read=lambda e: e.op.value)
_KIND = Column("kind", str, read=lambda e: e.kind.value)
_EVENT_DOC = Column("doc", str, nullable=True, read=attrgetter("doc"))
_VALUE = Column("value", str, nullable=True, read=attrgetter("value"))
_OLD = Column("old", str, nullable=True, read=attrgetter("old"))
_INDEX = Column("index", int, nullable=True, read=attrgetter("index"), bits=32)
_TIME = Column("time", float, nullable=True, read=attrgetter("time"))
# Half of a move (issue 14): a JSON line says so only where it is (true or left out).
_MOVED_LINE = Column("moved", bool, nullable=True, read=lambda e: True if e.moved else None)
_MOVED = Column("moved", bool, read=attrgetter("moved"))

_TYPE = Column("type", str, read=lambda c: c.type.name)
_INTERVAL = Column("interval", list[int], read=lambda c: list(c.interval))
_START = Column("start", int, read=lambda c: c.interval[0])
_END = Column("end", int, read=lambda c: c.interval[1])
# Flattened through nested composites (DESIGN 6).
_EVENTS = Column("events", list[str], read=lambda c: [p.id for p in c.primitives()])

# Given by a replay: the document and the version a row belongs to, the version's commit
# and time (so every output row says where it comes from, issue 14), and the path in the
# prefixed form of the user's namespace bindings (``/pom:project/...``; the path itself if
# none are bound).
_DOC = Column("doc", str)
_VERSION = Column("version", int)
_COMMIT = Column("commit", str, nullable=True)
_VERSION_TIME = Column("time", float, nullable=True)
_PREFIXED = Column("path_prefixed", str)

# One primitive event a composite is made of, flattened through nested composites.
CONSTITUENT: RowSchema[Any] = RowSchema(
    "constituent", (_EVENT_ID, _OP, _PATH, _PREFIXED, _VALUE, _OLD))

# --- rows ----------------------------------------------------------------------------------

EVENT_LINE: RowSchema[Any] = RowSchema(
    "event line", (_EVENT_ID, _TS, _OP, _PATH, _IDS, _EVENT_DOC, _VALUE, _OLD, _INDEX, _TIME,
                   _MOVED_LINE), sparse=True)
COMPOSITE_LINE: RowSchema[Any] = RowSchema(
    "composite line", (_TS, _TYPE, _PATH, _IDS, _INTERVAL, _EVENTS, _EVENT_DOC), sparse=True)

EVENTS_TABLE: RowSchema[Any] = RowSchema(
    "events", (_DOC, _VERSION, _COMMIT, _TIME, _TS, _EVENT_ID, _OP, _PATH, _PREFIXED, _IDS,
               _KIND, _VALUE, _OLD, _INDEX, _MOVED))
COMPOSITES_TABLE: RowSchema[Any] = RowSchema(
    "composites", (_DOC, _VERSION, _COMMIT, _VERSION_TIME, _TS, _TYPE, _PATH, _PREFIXED, _IDS,
                   _START, _END, _EVENTS,
                   Column("constituents", list[dict[str, Any]], fields=CONSTITUENT)))
# An unreadable input line has no document and no version; a parse error has a position.
ERRORS_TABLE: RowSchema[None] = RowSchema("errors", (
    Column("doc", str, nullable=True), Column("version", int, nullable=True), _COMMIT,
    _VERSION_TIME, Column("stage", str), Column("message", str),
    Column("line", int, nullable=True, bits=32), Column("column", int, nullable=True, bits=32)))
VERSIONS_TABLE: RowSchema[None] = RowSchema("versions", (
    _DOC, _VERSION, Column("xml", str), Column("commit", str, nullable=True),
    Column("time", int, nullable=True)))
