"""The replay's tables as Parquet without Spark (issue 15): pyarrow schemas of the row forms of
``xmlevents.algebra`` and a writer of one Parquet dataset folder.

The columns are defined once, in ``xmlevents.algebra`` (:data:`~xmlevents.algebra.EVENTS_TABLE`
and the others); :func:`~._spark.spark_schema` maps them to Spark's types, :func:`arrow_schema`
to Arrow's, type for type, so that ``xmlevents replay --engine local`` writes the datasets the
Spark job writes: the same columns, in the same order, with the same Parquet types (lists of
``element``, 32-bit positions, doubles for times). :class:`DatasetWriter` writes a dataset a
row group at a time, as its rows are produced (issue 29).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any, get_args, get_origin

import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow has no types
import pyarrow.json as pj  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from xmlevents._foundation.rows import Column, RowSchema
from xmlevents.algebra import ArgumentTypeError

__all__ = ["arrow_schema", "write_dataset", "DatasetWriter", "ROW_GROUP_ROWS",
           "ROW_GROUP_BYTES"]


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


def _json_table(data: bytes, schema: Any) -> Any:
    """Rows given as JSON lines, as an Arrow table of ``schema``, converted by pyarrow's
    JSON reader.

    pyarrow's converters of Python objects (``Table.from_pylist``, ``pa.array``) first ask
    whether the value is a pandas object, which imports pandas: 0.4 s, a tenth of the local
    engine's whole budget on the example history. Its JSON reader converts in C++ against the
    explicit schema (every column typed, an unknown one an error), to the same values.
    """
    return pj.read_json(io.BytesIO(data), read_options=pj.ReadOptions(
        block_size=len(data) + 1), parse_options=pj.ParseOptions(
        explicit_schema=schema, unexpected_field_behavior="error"))


#: A row group's rows at most (the outputs are written a row group at a time, issue 29).
ROW_GROUP_ROWS = 65_536

#: A row group's size at most, in bytes of the rows' JSON (an event row is ~400 bytes, a
#: composite with many constituents far more): what the writer holds before it writes. The
#: conversion to Arrow takes several times this while it runs: 16 MB cost a run's peak
#: ~120 MB more, 4 MB ~40 MB (measured with 300,000 event rows).
ROW_GROUP_BYTES = 4 << 20

#: The one file of a dataset written in process (the Spark job's are ``part-NNNNN-...``).
PART = "part-00000-local.snappy.parquet"


def _replace(path: Path) -> None:
    """Make ``path`` a new empty folder, whatever was there (as Spark's overwrite does)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.mkdir(parents=True)


class DatasetWriter:
    """One Parquet dataset folder written as its rows are produced (issue 29, item 1): the
    rows are held as JSON text until a row group's worth (:data:`ROW_GROUP_ROWS` rows or
    :data:`ROW_GROUP_BYTES` bytes of JSON, whichever first) is written with
    ``pyarrow.parquet.ParquetWriter``, so memory follows a row group, not the output.

    Row groups are not cut at a document's end: 20,000 small documents would make 20,000
    row groups, whose metadata the writer keeps until it closes (kilobytes each).

    The folder is replaced when the writer is made; the file is written under a hidden
    name (which readers pass over) and takes its name on :meth:`close` — an empty dataset
    is still a file with the schema — so that a run that fails leaves no truncated file.

    Args:
        schema: the rows' columns (a row form of ``xmlevents._foundation.rows``).
        folder: the dataset's folder (replaced).
        rows, size: a row group's rows and bytes at most (the module's defaults).

    Raises:
        OSError: if the folder cannot be replaced or written.
    """

    def __init__(self, schema: RowSchema[Any], folder: str | os.PathLike[str], *,
                 rows: int | None = None, size: int | None = None) -> None:
        self.schema = arrow_schema(schema, nullable=True)
        self.folder = Path(folder)
        self.rows = 0  # written or held
        self.row_groups = 0
        self._limit = rows or ROW_GROUP_ROWS
        self._size = size or ROW_GROUP_BYTES
        self._held: list[str] = []
        self._bytes = 0
        _replace(self.folder)
        self._part = self.folder / f".{PART}.part"
        self._writer = pq.ParquetWriter(self._part, self.schema, compression="snappy")

    def add(self, rows: Iterable[dict[str, Any]]) -> None:
        """Hold rows (dicts with the schema's columns); a full row group is written."""
        for r in rows:
            text = json.dumps(r, ensure_ascii=False)
            self._held.append(text)
            self._bytes += len(text)
            self.rows += 1
            if len(self._held) >= self._limit or self._bytes >= self._size:
                self.flush()

    def flush(self) -> None:
        """Write the rows held as a row group (nothing if none)."""
        if self._held:
            data = "\n".join(self._held).encode("utf-8")
            self._held, self._bytes = [], 0
            self._writer.write_table(_json_table(data, self.schema))
            self.row_groups += 1
            # The conversion's buffers go back to the system, not to the pool's arenas,
            # which would keep the largest row group's worth for the rest of the run.
            pa.default_memory_pool().release_unused()

    def close(self) -> None:
        """Write what is held, close the file and give it its name."""
        self.flush()
        self._writer.close()
        os.replace(self._part, self.folder / PART)

    def abort(self) -> None:
        """Close and remove the file (a run that failed)."""
        self._held = []
        with contextlib.suppress(Exception):
            self._writer.close()
        with contextlib.suppress(OSError):
            self._part.unlink()


def write_dataset(rows: Iterable[dict[str, Any]], schema: RowSchema[Any],
                  folder: str | os.PathLike[str]) -> int:
    """Write ``rows`` (dicts with the columns of ``schema``) as a Parquet dataset: ``folder``
    is replaced by a folder holding one file (an empty table too: its schema is then what a
    reader gets), written a row group at a time (:class:`DatasetWriter`). Returns how many
    rows.

    Raises:
        OSError: if the folder cannot be replaced or written.
    """
    writer = DatasetWriter(schema, folder)
    try:
        writer.add(rows)
    except BaseException:
        writer.abort()
        raise
    writer.close()
    return writer.rows
