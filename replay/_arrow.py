"""The replay's tables as Parquet without Spark (issue 15): pyarrow schemas of the row forms of
``xmlevents.algebra`` and a writer of one Parquet dataset folder.

The columns are defined once, in ``xmlevents.algebra`` (:data:`~xmlevents.algebra.EVENTS_TABLE`
and the others); :func:`~._spark.spark_schema` maps them to Spark's types, :func:`arrow_schema`
to Arrow's, type for type, so that ``xmlevents replay --engine local`` writes the datasets the
Spark job writes: the same columns, in the same order, with the same Parquet types (lists of
``element``, 32-bit positions, doubles for times).
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args, get_origin

import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow has no types
import pyarrow.json as pj  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from xmlevents._foundation.rows import Column, RowSchema
from xmlevents.algebra import ArgumentTypeError

__all__ = ["arrow_schema", "write_dataset"]


def _arrow_type(column: Column) -> Any:
    """The Arrow type of a column's Python type, as :func:`~._spark.spark_schema` maps it to
    Spark's: strings, 64- or 32-bit integers, doubles, booleans, lists of them (their items
    nullable, named ``element`` as Parquet's lists are), and lists of structs (a column with
    ``fields``, every field nullable)."""
    if column.fields is not None:
        struct = pa.struct([pa.field(c.name, _arrow_type(c), True)
                            for c in column.fields.columns])
        return pa.list_(pa.field("element", struct, True))
    if get_origin(column.type) is list:
        [item] = get_args(column.type)
        return pa.list_(pa.field("element", _arrow_type(Column(column.name, item,
                                                                bits=column.bits)), True))
    if column.type is str:
        return pa.string()
    if column.type is int:
        return pa.int32() if column.bits == 32 else pa.int64()
    if column.type is float:
        return pa.float64()
    if column.type is bool:
        return pa.bool_()
    raise ArgumentTypeError(f"column {column.name}: no Arrow type for {column.type!r} (str, "
                            "int, float, bool and lists of them have one)")


def arrow_schema(rows: RowSchema[Any], *, nullable: bool | None = None) -> Any:
    """The Arrow schema of a row form of ``xmlevents.algebra``: its columns, in order, with
    their types and nullability — or, with ``nullable=True``, every column nullable, as the
    datasets of a replay are written (the Spark job selects them from one table whose columns
    are all nullable, and Parquet keeps that)."""
    return pa.schema([pa.field(c.name, _arrow_type(c), c.nullable if nullable is None
                               else nullable) for c in rows.columns])


def _table(rows: Sequence[dict[str, Any]], schema: Any) -> Any:
    """The rows as an Arrow table of ``schema``, converted by pyarrow's JSON reader.

    pyarrow's converters of Python objects (``Table.from_pylist``, ``pa.array``) first ask
    whether the value is a pandas object, which imports pandas: 0.4 s, a tenth of the local
    engine's whole budget on the example history. Its JSON reader converts in C++ against the
    explicit schema (every column typed, an unknown one an error), to the same values.
    """
    if not rows:
        return schema.empty_table()
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode("utf-8")
    return pj.read_json(io.BytesIO(data), read_options=pj.ReadOptions(
        block_size=len(data) + 1), parse_options=pj.ParseOptions(
        explicit_schema=schema, unexpected_field_behavior="error"))


def write_dataset(rows: Sequence[dict[str, Any]], schema: RowSchema[Any],
                  folder: str | os.PathLike[str]) -> int:
    """Write ``rows`` (dicts with the columns of ``schema``) as a Parquet dataset: ``folder``
    is replaced by a folder holding one file (an empty table too: its schema is then what a
    reader gets). Returns how many rows.

    Raises:
        OSError: if the folder cannot be replaced or written.
    """
    table = _table(rows, arrow_schema(schema, nullable=True))
    path = Path(folder)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.mkdir(parents=True)
    pq.write_table(table, path / "part-00000-local.snappy.parquet", compression="snappy")
    return int(table.num_rows)
