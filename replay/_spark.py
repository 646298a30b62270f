"""The replay job on Spark (issue 6, DESIGN section 7). Every function takes a SparkSession.

Stages, each a DataFrame transformation:

1. *check* (per version, in parallel): is it well-formed? Bad versions and duplicate version
   numbers go to the errors; the rest of their document goes on from the last good version.
2. *diff* (per pair of consecutive good versions, in parallel across documents **and** pairs):
   the positional, checked edit script (:func:`~._script.edit_script`) and the digest of the
   new version.
3. *apply* (per document, in version order, ``applyInPandas``): the scripts applied to one
   watched document (:class:`~._history.DocumentHistory`), giving the primitive events with
   ids carried across versions, and — given definitions — the composite events, detected with
   termination conditions evaluated against the document at that version.

The apply stage yields one table of tagged rows, cached and split into the three outputs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse
from typing import Any, Iterator

import pandas as pd
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from xmlevents.algebra import DefinitionSet

from ._history import DocumentHistory, HistoryResult, replay_document
from ._script import DiffOptions, digest, edit_script, parse_version
from ._tables import VersionTableError, folder_row, json_row, table_format

__all__ = ["VERSIONS_SCHEMA", "EVENTS_SCHEMA", "COMPOSITES_SCHEMA", "ERRORS_SCHEMA",
           "ReplayFrames", "read_versions_df", "replay_frames", "diff_stage", "write_frames"]

_S, _L, _I = T.StringType(), T.LongType(), T.IntegerType()
_IDS = T.ArrayType(T.StringType())


def _schema(*fields: tuple[str, T.DataType]) -> T.StructType:
    return T.StructType([T.StructField(n, t, True) for n, t in fields])


VERSIONS_SCHEMA = _schema(("doc", _S), ("version", _L), ("xml", _S), ("commit", _S),
                          ("time", _L))
EVENTS_SCHEMA = _schema(("doc", _S), ("version", _L), ("ts", _L), ("id", _S), ("op", _S),
                        ("path", _S), ("ids", _IDS), ("kind", _S), ("value", _S), ("old", _S),
                        ("index", _I))
COMPOSITES_SCHEMA = _schema(("doc", _S), ("version", _L), ("ts", _L), ("type", _S),
                            ("path", _S), ("ids", _IDS), ("start", _L), ("end", _L),
                            ("events", _IDS))
ERRORS_SCHEMA = _schema(("doc", _S), ("version", _L), ("stage", _S), ("message", _S),
                        ("line", _I), ("column", _I))

# The apply stage's output: every column of the three, tagged by ``record``.
_TAGGED = _schema(("record", _S), *[(f.name, f.dataType) for f in EVENTS_SCHEMA.fields],
                  *[(f.name, f.dataType) for f in COMPOSITES_SCHEMA.fields
                    if f.name not in EVENTS_SCHEMA.fieldNames()],
                  *[(f.name, f.dataType) for f in ERRORS_SCHEMA.fields
                    if f.name not in EVENTS_SCHEMA.fieldNames()])
_CHECKED = _schema(*[(f.name, f.dataType) for f in VERSIONS_SCHEMA.fields], ("message", _S),
                   ("line", _I), ("column", _I))
_DIFFED = _schema(("doc", _S), ("version", _L), ("xml", _S), ("script", _S), ("expect", _S),
                  ("error", _S))


@dataclass
class ReplayFrames:
    """The three outputs of a replay, as DataFrames (``tagged`` and ``checked`` are their
    cached sources: unpersist when done)."""

    events: DataFrame
    composites: DataFrame
    errors: DataFrame
    tagged: DataFrame | None = None
    checked: DataFrame | None = None

    def unpersist(self) -> None:
        for df in (self.tagged, self.checked):
            if df is not None:
                df.unpersist()


# --- input ---------------------------------------------------------------------------------


def _json_lines(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    for b in batches:
        rows = []
        for line, n, source in zip(b["value"], b["n"], b["source"]):
            try:
                row = json_row(line, f"{source}, line {n + 1}")
            except VersionTableError as exc:
                rows.append(_bad_input(str(exc)))
            else:
                if row is not None:
                    rows.append({**row, "bad": None})
        yield _frame(rows, _INPUT)


_INPUT = _schema(*[(f.name, f.dataType) for f in VERSIONS_SCHEMA.fields], ("bad", _S))


def _bad_input(message: str) -> dict[str, Any]:
    return {"doc": None, "version": None, "xml": None, "commit": None, "time": None,
            "bad": message}


def _frame(rows: list[dict[str, Any]], schema: T.StructType) -> pd.DataFrame:
    """Rows as a pandas frame with the schema's columns (integers nullable, not floats)."""
    df = pd.DataFrame(rows, columns=schema.fieldNames())
    for f in schema.fields:
        if isinstance(f.dataType, T.LongType):
            df[f.name] = df[f.name].astype("Int64")
        elif isinstance(f.dataType, T.IntegerType):
            df[f.name] = df[f.name].astype("Int32")
        else:  # a key missing from a row reads as NaN: Arrow wants None
            col = df[f.name].astype(object)
            df[f.name] = col.where(col.notna(), None)
    return df


def read_versions_df(spark: SparkSession, path: str) -> tuple[DataFrame, DataFrame]:
    """A version table as a DataFrame, and the errors of its rows that cannot be read (named
    by file and line): the same forms and rules as :func:`~._tables.read_versions`."""
    kind = table_format(path)
    if kind == "parquet":
        df = spark.read.parquet(path)
        missing = [c for c in ("doc", "version", "xml") if c not in df.columns]
        if missing:
            raise VersionTableError(f"{path}: missing column(s) {', '.join(missing)}")
        for name in ("commit", "time"):
            if name not in df.columns:
                df = df.withColumn(name, F.lit(None))
        df = df.select(*[F.col(f.name).cast(f.dataType) for f in VERSIONS_SCHEMA.fields])
        return df, spark.createDataFrame([], ERRORS_SCHEMA)
    if kind == "folder":
        files = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(path)
        base = urlparse(path).path if "://" in path else Path(path).resolve().as_posix()
        parsed = files.select("path", "content").mapInPandas(
            lambda batches: _folder_rows(batches, base, path), _INPUT)
    else:
        numbered = spark.read.text(path).rdd.zipWithIndex().map(
            lambda pair: (pair[0]["value"], pair[1], path)).toDF(
            _schema(("value", _S), ("n", _L), ("source", _S)))
        parsed = numbered.mapInPandas(_json_lines, _INPUT)
    good = parsed.where(F.col("bad").isNull()).drop("bad")
    bad = parsed.where(F.col("bad").isNotNull()).select(
        F.lit(None).cast(_S).alias("doc"), F.lit(None).cast(_L).alias("version"),
        F.lit("input").alias("stage"), F.col("bad").alias("message"),
        F.lit(None).cast(_I).alias("line"), F.lit(None).cast(_I).alias("column"))
    return good, bad


def _folder_rows(batches: Iterator[pd.DataFrame], base: str, root: str
                 ) -> Iterator[pd.DataFrame]:
    for b in batches:
        rows = []
        for uri, content in zip(b["path"], b["content"]):
            file = unquote(urlparse(uri).path)  # Spark names files by URI
            try:
                rows.append({**folder_row(base, file, bytes(content)), "bad": None})
            except (VersionTableError, ValueError) as exc:
                rows.append(_bad_input(f"{root}: {exc}"))
        yield _frame(rows, _INPUT)


# --- stages --------------------------------------------------------------------------------


def _check(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    from lxml import etree

    from ._history import BadVersion

    for b in batches:
        messages: list[str | None] = []
        lines: list[int | None] = []
        columns: list[int | None] = []
        for doc, version, xml in zip(b["doc"], b["version"], b["xml"]):
            try:
                parse_version(xml)
            except etree.XMLSyntaxError as exc:
                bad = BadVersion.of(doc, int(version), exc)
                messages.append(bad.message)
                lines.append(bad.line)
                columns.append(bad.column)
            else:
                messages.append(None)
                lines.append(None)
                columns.append(None)
        yield b.assign(message=messages, line=pd.array(lines, dtype="Int32"),
                       column=pd.array(columns, dtype="Int32"))


def _diff(options: DiffOptions) -> Any:
    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for b in batches:
            scripts: list[str | None] = []
            expects: list[str | None] = []
            errors: list[str | None] = []
            for old, new in zip(b["old"], b["xml"]):
                if old is None:  # a document's first good version: inserted whole
                    scripts.append(None)
                    expects.append(None)
                    errors.append(None)
                    continue
                try:
                    new_root = parse_version(new)
                    scripts.append(json.dumps(edit_script(old, new_root, options)))
                    expects.append(digest(new_root))
                    errors.append(None)
                except Exception as exc:  # noqa: BLE001  (the apply stage diffs it again)
                    scripts.append(None)
                    expects.append(None)
                    errors.append(f"{type(exc).__name__}: {exc}")
            yield pd.DataFrame({"doc": b["doc"], "version": b["version"], "xml": b["xml"],
                                "script": scripts, "expect": expects, "error": errors})
    return run


def _apply(definitions: str | None, options: DiffOptions,
           namespaces: dict[str, str] | None) -> Any:
    def run(group: pd.DataFrame) -> pd.DataFrame:
        group = group.sort_values("version")
        doc = str(group["doc"].iloc[0])
        history = DocumentHistory(doc, definitions, options=options, namespaces=namespaces)
        result = HistoryResult()
        versions = ((int(v), xml, json.loads(s) if s is not None else None, e)
                    for v, xml, s, e in zip(group["version"], group["xml"], group["script"],
                                            group["expect"]))
        replay_document(history, versions, result)
        rows = [{"record": "version", "doc": d, "version": v} for d, v in result.replayed]
        rows += [{"record": "event", **r} for r in result.events]
        rows += [{"record": "composite", **r} for r in result.composites]
        rows += [{"record": "error", **r} for r in result.errors]
        return _frame(rows, _TAGGED)
    return run


def replay_frames(spark: SparkSession, versions: DataFrame, definitions: str | None = None,
                  *, options: DiffOptions | None = None,
                  namespaces: dict[str, str] | None = None,
                  partitions: int | None = None) -> ReplayFrames:
    """The events, composites and errors of a version table (``doc``, ``version``, ``xml``).

    ``definitions`` is definition text (checked here first: a bad definition raises before any
    work); ``partitions`` spreads the diff stage (default: 4 per core).
    """
    if definitions is not None:
        DefinitionSet.of(definitions, namespaces=namespaces)  # refused here, before any work
    options = options or DiffOptions()
    checked, duplicates, diffed = diff_stage(spark, versions, options, partitions)
    bad = checked.where(F.col("message").isNotNull()).select(
        "doc", "version", F.lit("parse").alias("stage"), "message", "line", "column")

    # 3. apply: per document, in version order
    tagged = diffed.groupBy("doc").applyInPandas(
        _apply(definitions, options, namespaces), _TAGGED).persist()
    pick = [F.col(f.name) for f in EVENTS_SCHEMA.fields]
    events = tagged.where(F.col("record") == "event").select(*pick)
    composites = tagged.where(F.col("record") == "composite").select(
        *[F.col(f.name) for f in COMPOSITES_SCHEMA.fields])
    errors = tagged.where(F.col("record") == "error").select(
        *[F.col(f.name) for f in ERRORS_SCHEMA.fields]).unionByName(bad).unionByName(
        duplicates)
    return ReplayFrames(events, composites, errors, tagged, checked)


def diff_stage(spark: SparkSession, versions: DataFrame, options: DiffOptions,
               partitions: int | None = None) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Stages 1 and 2: the checked versions (cached: the errors read them too), the duplicate
    versions as error rows, and the diffed versions the apply stage takes."""
    n = partitions or 4 * spark.sparkContext.defaultParallelism

    # 1. check: duplicates and versions that are not well-formed
    numbered = versions.withColumn("_k", F.row_number().over(
        Window.partitionBy("doc", "version").orderBy(F.monotonically_increasing_id())))
    duplicates = numbered.where(F.col("_k") > 1).select(
        "doc", "version", F.lit("input").alias("stage"),
        F.lit("duplicate version: the first row is kept").alias("message"),
        F.lit(None).cast(_I).alias("line"), F.lit(None).cast(_I).alias("column"))
    # Cached: both the diff stage and the errors read it.
    checked = numbered.where(F.col("_k") == 1).drop("_k").repartition(n).mapInPandas(
        _check, _CHECKED).persist()

    # 2. diff: consecutive good versions, in parallel across documents and pairs
    good = checked.where(F.col("message").isNull()).select("doc", "version", "xml")
    pairs = good.withColumn("old", F.lag("xml").over(
        Window.partitionBy("doc").orderBy("version"))).repartition(n)
    return checked, duplicates, pairs.mapInPandas(_diff(options), _DIFFED)


def write_frames(frames: ReplayFrames, out: str, extra_errors: DataFrame | None = None
                 ) -> None:
    """Write ``out/events``, ``out/composites`` and ``out/errors`` as Parquet datasets."""
    errors = frames.errors if extra_errors is None else frames.errors.unionByName(extra_errors)
    frames.events.write.mode("overwrite").parquet(f"{out}/events")
    frames.composites.write.mode("overwrite").parquet(f"{out}/composites")
    errors.write.mode("overwrite").parquet(f"{out}/errors")

