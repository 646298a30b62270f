"""The row forms of ``xmlevents.algebra`` (each column defined once) and what is made of them:
``to_dict``'s JSON lines, the replay's dict rows and its Spark schemas."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import path_types
from xmlevents._foundation.rows import (
    COMPOSITE_LINE,
    COMPOSITES_TABLE,
    ERRORS_TABLE,
    EVENT_LINE,
    EVENTS_TABLE,
    VERSIONS_TABLE,
    Column,
    RowSchema,
)
from xmlevents.algebra import (
    ArgumentTypeError,
    CompositeEvent,
    CompositeEventType,
    Kind,
    Op,
    PathInstance,
    PrimitiveEvent,
)
from xmlevents.replay import replay_history
from xmlevents.replay._tables import VERSION_FIELDS

text = st.text(max_size=6)


@st.composite
def primitive_events(draw: st.DrawFn) -> PrimitiveEvent:
    """Primitive events with every optional field sometimes set."""
    pt = draw(path_types(kind=Kind.ABSOLUTE))
    ids = draw(st.lists(text, min_size=len(pt), max_size=len(pt)))
    return PrimitiveEvent(draw(text), draw(st.integers(-10**12, 10**12)),
                          draw(st.sampled_from([Op.INS, Op.UPD, Op.DEL])),
                          PathInstance(pt, tuple(ids)), draw(st.none() | text),
                          draw(st.none() | text), draw(st.none() | text),
                          draw(st.none() | st.integers(0, 10**6)))


@st.composite
def composite_events(draw: st.DrawFn, depth: int = 2) -> CompositeEvent:
    """Composite events over primitive (and, nested, composite) ones, doc sometimes set."""
    pt = draw(path_types(kind=Kind.ABSOLUTE))
    ids = draw(st.lists(text, min_size=len(pt), max_size=len(pt)))
    parts = primitive_events() if depth == 0 else (primitive_events()
                                                   | composite_events(depth=depth - 1))
    constituents = tuple(draw(st.lists(parts, max_size=3)))
    start = draw(st.integers(0, 100))
    end = start + draw(st.integers(0, 100))
    return CompositeEvent(draw(text), CompositeEventType(draw(st.sampled_from(["Ei", "Nm"])), pt),
                          PathInstance(pt, tuple(ids)), constituents, (start, end), end,
                          draw(st.none() | text))


def _design_6_line(e: PrimitiveEvent) -> dict[str, Any]:
    """The JSON-lines form of a primitive event as DESIGN section 6 writes it (the reference
    the schema must not change by a byte)."""
    d: dict[str, Any] = {"id": e.id, "ts": e.ts, "op": e.op.value, "path": str(e.pi.pt),
                         "ids": list(e.pi.ids)}
    for key in ("doc", "value", "old", "index"):
        if getattr(e, key) is not None:
            d[key] = getattr(e, key)
    return d


@given(primitive_events())
def test_event_line_is_design_6_byte_for_byte(e: PrimitiveEvent) -> None:
    """PrimitiveEvent.to_dict (EVENT_LINE) writes the JSON line of DESIGN 6, key order too."""
    assert json.dumps(e.to_dict()) == json.dumps(_design_6_line(e))
    assert EVENT_LINE.mismatches(e.to_dict()) == []


@given(composite_events())
def test_composite_to_dict_fast_path_is_the_composite_line(c: CompositeEvent) -> None:
    """CompositeEvent.to_dict, written out for speed, is COMPOSITE_LINE's row, key order too."""
    assert json.dumps(c.to_dict()) == json.dumps(COMPOSITE_LINE.row(c))
    assert COMPOSITE_LINE.mismatches(c.to_dict()) == []
    assert ("doc" in c.to_dict()) == (c.doc is not None)


ORDER = "ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))"


def test_replay_rows_are_rows_of_their_tables() -> None:
    """Every events, composites and errors row of a replay has its table's columns, in order,
    each of its type (doc and version given by the replay)."""
    rows = [{"doc": "o", "version": 0, "xml": '<order k="1"><!--c--></order>'},
            {"doc": "o", "version": 1, "xml": "<order><item/></order>"},
            {"doc": "o", "version": 2, "xml": "<order><item>"},
            {"doc": "o", "version": 3, "xml": "<order><item><price>3</price>"
                                              "<quantity>2</quantity></item></order>"},
            {"doc": "o", "version": 3, "xml": "<dup/>"}]
    out = replay_history(rows, ORDER)
    assert out.events and out.composites and len(out.errors) == 2
    for table, found in ((EVENTS_TABLE, out.events), (COMPOSITES_TABLE, out.composites),
                         (ERRORS_TABLE, out.errors)):
        for row in found:
            assert tuple(row) == table.names
            assert table.mismatches(row) == [], row
    assert {e["kind"] for e in out.events} == {"element", "attribute", "comment", "text"}
    assert [(c["version"], c["start"] < c["end"] == c["ts"]) for c in out.composites] == [
        (3, True)]


def test_mismatches_name_what_is_wrong() -> None:
    """mismatches() names unknown and missing columns, wrong types, nulls and overflows."""
    assert ERRORS_TABLE.mismatches({
        "doc": None, "version": True, "stage": "parse", "message": None, "line": 2**31,
        "extra": 1}) == [
        "extra is not a column of errors", "version=True is not int", "commit is missing",
        "time is missing", "message is null", "line=2147483648 does not fit 32 bits",
        "column is missing"]
    assert EVENTS_TABLE.mismatches({**dict.fromkeys(EVENTS_TABLE.names, "x"),
                                    "version": 1, "ts": 2, "ids": ["a", 1], "value": None,
                                    "old": None, "index": None, "moved": 0}) == [
        "time='x' is not float", "ids=['a', 1] is not a list of str", "moved=0 is not bool"]
    part = {"id": "e1", "op": "ins", "path": "/a", "path_prefixed": "/a", "value": None,
            "old": None}
    row = {**dict.fromkeys(COMPOSITES_TABLE.names), "doc": "d", "version": 0, "ts": 1,
           "type": "T", "path": "/a", "path_prefixed": "/a", "ids": ["a1"], "start": 1,
           "end": 1, "events": ["e1"], "constituents": [part]}
    assert COMPOSITES_TABLE.mismatches(row) == []
    assert COMPOSITES_TABLE.mismatches({**row, "constituents": [{**part, "id": 3}]}) == [
        "constituents: id=3 is not str"]
    assert COMPOSITES_TABLE.mismatches({**row, "constituents": ["e1"]}) == [
        "constituents=['e1'] is not a list of constituent rows"]
    line = {"id": "e", "ts": 1, "op": "ins", "path": "/a", "ids": ["a1"]}
    assert EVENT_LINE.mismatches(line) == []
    assert EVENT_LINE.mismatches({**line, "doc": None}) == [
        "doc is null (a sparse row leaves it out)"]


def test_a_column_neither_read_nor_given_is_an_argument_error() -> None:
    """row() without a given column that may not be null raises ArgumentTypeError."""
    with pytest.raises(ArgumentTypeError, match="a row of errors needs stage=") as info:
        ERRORS_TABLE.row(None, doc="d", message="m")
    assert isinstance(info.value, TypeError)
    assert ERRORS_TABLE.row(None, stage="input", message="m") == {
        "doc": None, "version": None, "commit": None, "time": None, "stage": "input",
        "message": "m", "line": None, "column": None}


def test_a_row_form_is_an_ordered_selection_of_columns() -> None:
    """A RowSchema reads its columns in order; a sparse one leaves out nulls."""
    first = Column("first", str, read=lambda v: v[0])
    second = Column("second", str, nullable=True, read=lambda v: v[1])
    assert RowSchema("pair", (second, first)).row(("a", None)) == {"second": None, "first": "a"}
    assert RowSchema("pair", (first, second), sparse=True).row(("a", None)) == {"first": "a"}


def test_version_fields_are_the_versions_table() -> None:
    """The version table's fields are VERSIONS_TABLE's columns; only commit and time optional."""
    assert VERSION_FIELDS == ("doc", "version", "xml", "commit", "time")
    assert [c.name for c in VERSIONS_TABLE.columns if c.nullable] == ["commit", "time"]


def test_spark_schemas_are_made_from_the_tables() -> None:
    """The Spark schemas have the tables' columns, types (32-bit positions) and nullability."""
    types = pytest.importorskip("pyspark.sql.types")
    from xmlevents.replay._spark import (
        COMPOSITES_SCHEMA,
        ERRORS_SCHEMA,
        EVENTS_SCHEMA,
        VERSIONS_SCHEMA,
    )

    s, long, int32 = types.StringType(), types.LongType(), types.IntegerType()
    double, strings = types.DoubleType(), types.ArrayType(s)
    assert [(f.name, f.dataType) for f in EVENTS_SCHEMA.fields] == [
        ("doc", s), ("version", long), ("commit", s), ("time", double), ("ts", long),
        ("id", s), ("op", s), ("path", s), ("path_prefixed", s), ("ids", strings),
        ("kind", s), ("value", s), ("old", s), ("index", int32), ("moved", types.BooleanType())]
    part = types.StructType([types.StructField(n, s, True) for n in (
        "id", "op", "path", "path_prefixed", "value", "old")])
    assert [(f.name, f.dataType) for f in COMPOSITES_SCHEMA.fields] == [
        ("doc", s), ("version", long), ("commit", s), ("time", double), ("ts", long),
        ("type", s), ("path", s), ("path_prefixed", s), ("ids", strings), ("start", long),
        ("end", long), ("events", strings), ("constituents", types.ArrayType(part))]
    assert [(f.name, f.dataType) for f in ERRORS_SCHEMA.fields] == [
        ("doc", s), ("version", long), ("commit", s), ("time", double), ("stage", s),
        ("message", s), ("line", int32), ("column", int32)]
    assert [(f.name, f.dataType) for f in VERSIONS_SCHEMA.fields] == [
        ("doc", s), ("version", long), ("xml", s), ("commit", s), ("time", long)]
    for schema, table in ((EVENTS_SCHEMA, EVENTS_TABLE), (COMPOSITES_SCHEMA, COMPOSITES_TABLE),
                          (ERRORS_SCHEMA, ERRORS_TABLE), (VERSIONS_SCHEMA, VERSIONS_TABLE)):
        assert [f.nullable for f in schema.fields] == [c.nullable for c in table.columns]


def test_a_column_spark_cannot_hold_is_an_argument_error() -> None:
    """spark_schema refuses a column whose Python type has no Spark type."""
    pytest.importorskip("pyspark.sql.types")
    from xmlevents.replay._spark import spark_schema

    with pytest.raises(ArgumentTypeError, match="column f: no Spark type for <class 'bytes'>"):
        spark_schema(RowSchema("odd", (Column("f", bytes),)))
