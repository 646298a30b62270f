"""Event sources for CEL queries (issue 19, item 4): JSON lines, CSV under a declared schema
(CORE's ``CREATE STREAM`` / ``EVENT`` declarations), and the project's primitive events.

* **JSON lines** (:func:`read_jsonl`): one object a line, ``{"type": "T", "id": 0, "temp":
  45}``; its position is its line number from 0 (a blank line is not an event but keeps its
  number, so positions are line numbers); ``type`` is the event type, every other member an
  attribute (``id`` is an ordinary attribute), ``time`` also the event's time in seconds for
  duration windows. Read with the project's bounded JSON-lines decoder.
* **CSV** (:func:`read_csv`): ``T,v1,v2,...`` a line, the values of ``T``'s attributes in the
  order :func:`parse_schema` read them from ``CREATE STREAM S { EVENT T { a:int, b:string },
  ... }`` (CORE's stream declaration; ``DECLARE STREAM`` is read too). Types: ``int``,
  ``long``, ``double``, ``string``, ``boolean``, and ``primary_time`` (a number: the event's
  time). Each value is checked against its declared type.
* **Primitive events** (:func:`read_primitive`): the input lines of ``xmlevents detect``
  (``{"id": "e1", "op": "ins", "path": "/order/item", "ids": ["o1", "i1"]}``, read by
  :func:`xmlevents.algebra.read_events`): type ``ins``/``upd``/``del``, attributes ``id``,
  ``ts``, ``path`` (the path type), ``ids`` (the path instance, ``/order[o1]/item[i1]``),
  ``value``, ``old``, ``doc``, ``kind`` where present; ``x[path MATCHES 'item']`` tests the
  path type with the algebra's ``⪰`` and ``PARTITION BY [PROJECT(ids, 'item')]`` groups the
  events of one item — the hierarchical context's correlation, one partition per item.

Every reader yields the events before a bad line, then raises :class:`~._errors.StreamError`
naming the line.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from xmlevents._foundation.jsonlines import (
    JSON_SPACE,
    MAX_LINE,
    SCAN,
    JsonLineError,
    is_blank,
    load_line,
)
from xmlevents._foundation.time import Time, is_time, time_of_text
from xmlevents.algebra import (
    EventFormatError,
    LineIndex,
    PrimitiveEvent,
    read_events,
)

from ._errors import CELSyntaxError, StreamError
from ._events import Event, Value

__all__ = ["read_jsonl", "read_csv", "read_primitive", "primitive_event", "parse_schema",
           "Schema", "PRIMITIVE_SCHEMA"]

Schema = Mapping[str, Mapping[str, str]]
"""Event type -> attribute -> declared type (in declaration order)."""

PRIMITIVE_SCHEMA: Schema = {
    op: {"id": "string", "ts": "int", "path": "string", "ids": "string", "value": "string",
         "old": "string", "doc": "string", "kind": "string"}
    for op in ("ins", "upd", "del")}
"""The attributes of the project's primitive events (see the module)."""


def _fast_decoder() -> tuple[Callable[[str], Any], type[Exception]] | None:
    """msgspec's JSON decoder and its error, where the ``cel`` extra installed it (issue 32,
    item 4: 3-4x the standard library's scanner on event lines); None without it."""
    try:
        import msgspec
    except ImportError:
        return None
    return msgspec.json.decode, msgspec.DecodeError


#: The faster decoder :func:`read_jsonl` tries first, or None (the standard library's only).
#: It takes exactly what the policy of ``xmlevents._foundation.jsonlines`` takes on the
#: lines it is given (strict JSON: no NaN, no control character in a string, integers of at
#: most ``sys.get_int_max_str_digits()`` digits, JSON's white space around), and gives the
#: same values; where it refuses or cannot represent a line (a number out of a float's
#: range, which the standard library reads as an infinity), the standard path reads it.
_FAST: Any = ...  # not looked for yet: msgspec is imported by the first read_jsonl only


def _fast() -> tuple[Callable[[str], Any], type[Exception]] | None:
    global _FAST
    if _FAST is ...:
        _FAST = _fast_decoder()
    found: tuple[Callable[[str], Any], type[Exception]] | None = _FAST
    return found


def _where(source: str, number: int) -> str:
    return f"{source + ', ' if source else ''}line {number}"


def _value(name: str, value: Any, where: str) -> Value:
    if isinstance(value, bool | int | float | str):
        return value
    raise StreamError(f"{where}: attribute {name!r} is "
                      f"{'null' if value is None else type(value).__name__}; attributes are "
                      "strings, numbers or booleans")


def _time(v: Value | None) -> Time | None:
    """The event time an attribute gives: a number, kept as it is (an ``int`` stays exact:
    the one time model, :mod:`xmlevents._foundation.time`); None for anything else."""
    return v if is_time(v) else None


def read_jsonl(lines: Iterable[str], *, source: str = "") -> Iterator[Event]:
    """The events of JSON lines; positions are line numbers from 0.

    Raises:
        StreamError: a line that is not a JSON object, lacks ``type``, or has an attribute
            that is not a string, number or boolean; naming its line (the events before it
            have been yielded).
    """
    # Fewer allocations an event (issue 32, item 4): the place is formatted only for an
    # error, and the decoded object, which no one else holds, becomes the attributes once its
    # "type" is taken out (no second dict, no call per attribute where all are scalars).
    # The C scanner is called here first (as the algebra's reader does): a line that it
    # takes whole from its first character, no longer than the limit and without a \u
    # escape (a surrogate's check) is read; any other goes through load_line, which applies
    # the whole policy and words its error (issue 32, item 4: a call and a strip less a line).
    # With msgspec (the cel extra), it decodes first, under the same conditions.
    scan, longest = SCAN, MAX_LINE
    decoder = _fast()
    fast, refused = decoder if decoder is not None else (None, ValueError)
    for index, line in enumerate(lines):
        whole = False
        if fast is not None and "\\u" not in line and len(line) <= longest:
            try:
                obj = fast(line)
                whole = True
            except refused:
                pass
        if not whole:
            try:
                obj, end = scan(line, 0)
                whole = (end == len(line) or not line[end:].strip(JSON_SPACE)) and \
                    "\\u" not in line and len(line) <= longest
            except (StopIteration, ValueError, RecursionError):
                whole = False
        if not whole:
            if is_blank(line):  # JSON's white space only: a line of U+000B is malformed
                continue
            try:
                obj = load_line(line)
            except JsonLineError as exc:
                raise StreamError(f"{_where(source, index + 1)}: {exc}") from None
        if type(obj) is not dict:  # the decoder gives exact types
            raise StreamError(f"{_where(source, index + 1)}: an event is a JSON object, got "
                              f"{type(obj).__name__}")
        etype = obj.pop("type", None)
        if not isinstance(etype, str) or not etype:
            raise StreamError(f"{_where(source, index + 1)}: an event needs its \"type\", a "
                              "non-empty string")
        if not _SCALARS.issuperset(map(type, obj.values())):
            where = _where(source, index + 1)
            for k, v in obj.items():
                _value(k, v, where)  # raises for the first that is not a scalar, as before
        t = obj.get("time")
        yield Event(index, etype, obj, None if t is None else _time(t))


#: The types of the values an attribute may have, as the JSON decoder gives them (exact
#: types: never a subclass).
_SCALARS = frozenset({str, int, float, bool})


# --- CORE's stream declarations ---------------------------------------------------------------

_DECL_TOKEN = re.compile(r"\s+|--[^\n]*|/\*.*?(?:\*/|\Z)|(?P<name>[A-Za-z_][A-Za-z_0-9]*|"
                         r"`(?:[^`]|``)*`)|(?P<op>[{}:,])", re.DOTALL)
_TYPES = {"int": "int", "long": "int", "double": "double", "string": "string",
          "boolean": "boolean", "primary_time": "primary_time"}


def parse_schema(text: str) -> dict[str, dict[str, str]]:
    """Read CORE's stream declarations (``CREATE STREAM S { EVENT T { a:int, ... }, ... }``,
    several allowed): event type -> attribute -> type (``long`` read as ``int``).

    Raises:
        CELSyntaxError: with the line and column of the offending token.
    """
    lines = LineIndex(text)
    tokens: list[tuple[str, int]] = []
    i = 0
    while i < len(text):
        m = _DECL_TOKEN.match(text, i)
        if m is None:
            line, col = lines.at(i)
            raise CELSyntaxError(f"unexpected character {text[i]!r}", text=text, line=line,
                                 column=col)
        if m.lastgroup:
            tokens.append((m.group(), m.start()))
        i = m.end()
    tokens.append(("", len(text)))
    k = 0

    def fail(reason: str) -> CELSyntaxError:
        line, col = lines.at(tokens[k][1])
        got = repr(tokens[k][0]) if tokens[k][0] else "the end"
        return CELSyntaxError(f"{reason}, got {got}", text=text, line=line, column=col)

    def word(*words: str) -> str:
        nonlocal k
        t = tokens[k][0]
        if words and t.upper() not in words and t not in words:
            raise fail("expected " + " or ".join(words))
        if not words and not (t[:1].isalpha() or t[:1] in "_`"):
            raise fail("expected a name")
        k += 1
        return t[1:-1].replace("``", "`") if t.startswith("`") else t

    schema: dict[str, dict[str, str]] = {}
    while tokens[k][0]:
        word("CREATE", "DECLARE")
        word("STREAM")
        word()
        word("{")
        while True:
            word("EVENT")
            at = k
            name = word()
            if name in schema:
                k = at
                raise fail(f"event {name} declared twice")
            attrs: dict[str, str] = {}
            word("{")
            if tokens[k][0] != "}":
                while True:
                    attr = word()
                    word(":")
                    at = k
                    kind = word().lower()
                    if kind not in _TYPES:
                        k = at
                        raise fail("expected a type (int, long, double, string, boolean, "
                                   "primary_time)")
                    attrs[attr] = _TYPES[kind]
                    if tokens[k][0] != ",":
                        break
                    word(",")
            word("}")
            schema[name] = attrs
            if tokens[k][0] != ",":
                break
            word(",")
        word("}")
    if not schema:
        raise fail("expected CREATE STREAM name { EVENT type { attr:type, ... } }")
    return schema


def _typed(text: str, kind: str, name: str, where: str) -> Value:
    try:
        if kind == "int":
            return int(text)
        if kind == "primary_time":
            return time_of_text(text)  # an int stays exact; no nan or inf
        if kind == "double":
            value = float(text)
            if value != value or value in (_INF, -_INF):
                raise ValueError(text)  # as the JSON reader: no NaN or infinities
            return value
        if kind == "boolean":
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
            raise ValueError(text)
    except ValueError:
        raise StreamError(f"{where}: attribute {name!r} is declared {kind}, got "
                          f"{text!r}") from None
    return text


_INF = float("inf")


def read_csv(lines: Iterable[str], schema: Schema, *, source: str = "") -> Iterator[Event]:
    """The events of CSV lines ``T,v1,v2,...`` under ``schema`` (see the module); positions
    are line numbers from 0, blank lines skipped.

    Raises:
        StreamError: an unknown event type, a wrong number of values, or a value that is not
            of its declared type; naming the line (the events before it have been yielded).
    """
    for index, row in enumerate(csv.reader(lines)):
        if not row or row == [""]:
            continue
        where = _where(source, index + 1)
        etype, values = row[0].strip(), row[1:]
        declared = schema.get(etype)
        if declared is None:
            raise StreamError(f"{where}: unknown event type {etype!r} (declared: "
                              f"{', '.join(sorted(schema))})")
        if len(values) != len(declared):
            raise StreamError(f"{where}: {etype} has {len(declared)} attributes "
                              f"({', '.join(declared)}), got {len(values)} values")
        attrs = {name: _typed(v.strip(), kind, name, where)
                 for (name, kind), v in zip(declared.items(), values, strict=True)}
        time = next((attrs[n] for n, kind in declared.items() if kind == "primary_time"),
                    None)
        yield Event(index, etype, attrs, _time(time))


def primitive_event(event: PrimitiveEvent, position: int) -> Event:
    """One of the project's primitive events (a watched document's, a replay's) as the CEL
    event at ``position`` (see the module: type ``ins``/``upd``/``del``, attributes ``id``,
    ``ts``, ``path``, ``ids``, ``kind``, and ``value``, ``old``, ``doc`` where set)."""
    attrs: dict[str, Value] = {"id": event.id, "ts": event.ts, "path": str(event.pi.pt),
                               "ids": str(event.pi), "kind": event.kind.value}
    for name in ("value", "old", "doc"):
        v = getattr(event, name)
        if v is not None:
            attrs[name] = v
    return Event(position, event.op.value, attrs, event.time)


def read_primitive(lines: Iterable[str], *, source: str = "") -> Iterator[Event]:
    """The project's primitive events (``xmlevents detect``'s input) as CEL events (see the
    module); positions are line numbers from 0, as for JSON lines.

    Raises:
        StreamError: a malformed line, named as :func:`xmlevents.algebra.read_events` names it.
    """
    reader = read_events(lines, source=source)
    try:
        for pe in reader:
            yield primitive_event(pe, (reader.line or 1) - 1)
    except EventFormatError as exc:
        raise StreamError(str(exc)) from None
