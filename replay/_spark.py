"""The replay job on Spark (issue 6, DESIGN section 7). Every function takes a SparkSession.

Stages, each a DataFrame transformation:

1. *check* (per version, in parallel): is it well-formed? Bad versions and duplicate version
   numbers go to the errors; the rest of their document goes on from the last good version.
2. *diff* (per pair of consecutive good versions, in parallel across documents **and** pairs):
   the positional, checked edit script (:func:`~._script.edit_script`) and the digest of the
   new version.
3. *apply* (per document, in version order): the scripts applied to one watched document
   (:class:`~._history.DocumentHistory`), giving the primitive events with ids carried across
   versions, and — given definitions — the composite events, detected with termination
   conditions evaluated against the document at that version; given CEL queries, their
   complex events over the document's whole event stream, once it is replayed (:mod:`._cel`:
   the same code as in process, in the same task).

   Streamed, not grouped (issue 29, item 1): the diffed versions are hash-partitioned by
   document and sorted by document and version within each partition
   (``repartition("doc").sortWithinPartitions("doc", "version")``, one shuffle and a sort that
   spills, as ``groupBy`` has), and ``mapInPandas`` walks each partition's Arrow batches (64
   versions: ``spark.sql.execution.arrow.maxRecordsPerBatch``), replaying one document at a
   time with the in-process loop (:func:`~._history.iter_document`, fed the document's
   versions as they are read) and handing the rows to Spark a frame of ``_FRAME_ROWS`` at a
   time. A worker then holds a batch of versions, the live document, the version being
   replayed and one frame, whatever the history's length. ``groupBy("doc").applyInPandas``
   gave a document's whole history (every version's XML and script) to one worker as one
   pandas frame and built all its rows before returning them; the iterator form of grouped
   ``applyInPandas`` (Spark 4.1) streams a group but promises no order within it, and sorting
   the versions there would hold them all again. The CEL stream keeps what it keeps per
   document: that is the queries' state.

The apply stage yields one table of tagged rows, cached and split into the four outputs.
With a checkpoint (issue 29, item 4: :class:`Resume`), it loads each document's state from
the checkpoint folder, goes on from it, and writes the new state as the run's file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, get_args, get_origin
from urllib.parse import unquote, urlparse

import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import DataFrame, Row, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from xmlevents._foundation.rows import (
    COMPOSITES_TABLE,
    ERRORS_TABLE,
    EVENTS_TABLE,
    VERSIONS_TABLE,
    Column,
    RowSchema,
)
from xmlevents.algebra import ArgumentTypeError, DefinitionSet, Duration

from ._actions import Action, decode_script, encode_script
from ._cel import CEL_TABLE, check_queries, compiled_queries
from ._checkpoint import read_state, resumed_document, write_state
from ._errors import BadVersion, VersionTableError
from ._history import (
    DUPLICATE,
    KEY_STAGE,
    DocumentHistory,
    VersionRows,
    error_row,
    iter_document,
)
from ._infer import InferredKey, infer_pairs, sample_plan
from ._keys import Key, KeyNote
from ._script import DiffOptions, digest, edit_script, parse_plain
from ._state import DocumentState
from ._tables import folder_row, json_row, table_format

__all__ = ["VERSIONS_SCHEMA", "EVENTS_SCHEMA", "COMPOSITES_SCHEMA", "ERRORS_SCHEMA",
           "CEL_SCHEMA", "spark_schema", "ReplayFrames", "read_versions_df", "replay_frames",
           "diff_stage", "write_frames", "Resume"]

_S, _L, _I = T.StringType(), T.LongType(), T.IntegerType()

# An output row of the apply stage and the output it belongs to: ``version`` (one per version
# replayed: ``doc`` and ``version`` only), ``event``, ``composite``, ``error`` or ``cel``.
TaggedRow = tuple[str, dict[str, Any]]


def _spark_type(column: Column) -> T.DataType:
    """The Spark type of a column's Python type: strings, 64- or 32-bit integers, doubles,
    booleans, arrays of them (their items nullable, as Spark and Parquet read them back), and
    arrays of structs (a column with ``fields``)."""
    if column.fields is not None:  # every field nullable too, as Parquet reads them back
        return T.ArrayType(T.StructType([T.StructField(c.name, _spark_type(c), True)
                                         for c in column.fields.columns]))
    if get_origin(column.type) is list:
        [item] = get_args(column.type)
        return T.ArrayType(_spark_type(Column(column.name, item, bits=column.bits)))
    if column.type is str:
        return T.StringType()
    if column.type is int:
        return T.IntegerType() if column.bits == 32 else T.LongType()
    if column.type is float:
        return T.DoubleType()
    if column.type is bool:
        return T.BooleanType()
    raise ArgumentTypeError(f"column {column.name}: no Spark type for {column.type!r} (str, "
                            "int, float, bool and lists of them have one)")


def spark_schema(rows: RowSchema[Any]) -> T.StructType:
    """The Spark schema of a row form of ``xmlevents.algebra``: its columns, in order, with
    their types and nullability."""
    return T.StructType([T.StructField(c.name, _spark_type(c), c.nullable)
                         for c in rows.columns])


# The outputs (and the input): their columns are defined once, in xmlevents.algebra, with the
# dict rows of the in-process replay.
VERSIONS_SCHEMA = spark_schema(VERSIONS_TABLE)
EVENTS_SCHEMA = spark_schema(EVENTS_TABLE)
COMPOSITES_SCHEMA = spark_schema(COMPOSITES_TABLE)
ERRORS_SCHEMA = spark_schema(ERRORS_TABLE)
CEL_SCHEMA = spark_schema(CEL_TABLE)


def _schema(*fields: tuple[str, T.DataType]) -> T.StructType:
    """An internal stage's schema: every column nullable (a tagged table holds rows of several
    shapes; a bad input row has no document)."""
    return T.StructType([T.StructField(n, t, True) for n, t in fields])


def _tagged(*schemas: T.StructType) -> T.StructType:
    """The apply stage's output: every column of the outputs, tagged by ``record``; a column
    several outputs have (``doc``, ``version``, ``ids``, ...) is one, of one type."""
    fields: dict[str, T.DataType] = {}
    for schema in schemas:
        for f in schema.fields:
            # the tables agree on shared columns' types (a programming error otherwise)
            assert fields.setdefault(f.name, f.dataType) == f.dataType, (
                f"column {f.name}: {fields[f.name]} and {f.dataType}")
    return _schema(("record", _S), *fields.items())


_TAGGED = _tagged(EVENTS_SCHEMA, COMPOSITES_SCHEMA, ERRORS_SCHEMA, CEL_SCHEMA)
_CHECKED = _schema(*[(f.name, f.dataType) for f in VERSIONS_SCHEMA.fields], ("message", _S),
                   ("line", _I), ("column", _I))
# ``notes``: the messages of the key values repeated among siblings in the new version (JSON).
_DIFFED = _schema(("doc", _S), ("version", _L), ("xml", _S), ("script", _S), ("expect", _S),
                  ("error", _S), ("time", _L), ("commit", _S), ("notes", _S))


@dataclass
class ReplayFrames:
    """The outputs of a replay, as DataFrames (``tagged`` and ``checked`` are their cached
    sources: unpersist when done; ``cel``: the complex events of CEL queries, empty without
    queries)."""

    events: DataFrame
    composites: DataFrame
    errors: DataFrame
    tagged: DataFrame | None = None
    checked: DataFrame | None = None
    cel: DataFrame | None = None
    #: The keys inferred (``DiffOptions(keys="auto")``), None where none were asked for.
    inferred: list[InferredKey] | None = None

    def unpersist(self) -> None:
        for df in (self.tagged, self.checked):
            if df is not None:
                df.unpersist()

    def unselected(self, keys: Iterable[Key]) -> list[Key]:
        """The keys that named no element in any version (every element is inserted once:
        version 0 inserts the whole document), for a warning."""
        inserted = self.events.where(F.col("op") == "ins")
        return [k for k in keys
                if inserted.where(F.col("path").endswith(k.path_end)).limit(1).count() == 0]

    def first_composites(self, n: int) -> list[Row]:
        """The first ``n`` composites of each type (by document, then tick), collected: what
        ``xmlevents replay`` prints."""
        if n <= 0:
            return []
        w = Window.partitionBy("type").orderBy("doc", "ts")
        return (self.composites.withColumn("_n", F.row_number().over(w))
                .where(F.col("_n") <= n).orderBy("type", "doc", "ts").collect())


# --- input ---------------------------------------------------------------------------------


def _json_lines(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    for b in batches:
        rows = []
        for data, n, source in zip(b["value"], b["n"], b["source"], strict=False):
            try:
                row = json_row(data.decode("utf-8", "replace"), f"{source}, line {n + 1}")
            except VersionTableError as exc:
                rows.append(_bad_input(str(exc)))
            else:
                if row is not None:
                    rows.append({**row, "bad": None})
        yield _frame(rows, _INPUT)


_INPUT = _schema(*[(f.name, f.dataType) for f in VERSIONS_SCHEMA.fields], ("bad", _S))


def _bad_input(message: str) -> dict[str, Any]:
    return {**dict.fromkeys(VERSIONS_TABLE.names), "bad": message}


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
            df[f.name] = [None if missing else v for v, missing in zip(col, col.isna(),
                                                                        strict=True)]
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
        parsed = _numbered_lines(spark, path).mapInPandas(_json_lines, _INPUT)
    good = parsed.where(F.col("bad").isNull()).drop("bad")
    bad = parsed.where(F.col("bad").isNotNull()).select(
        *_error_columns(stage=F.lit("input"), message=F.col("bad")))
    return good, bad


def _numbered_lines(spark: SparkSession, path: str) -> DataFrame:
    """The lines of a JSON-lines file with their numbers from 0 (``value``, ``n``,
    ``source``), numbered in the JVM.

    ``monotonically_increasing_id`` numbers a partition's rows from ``partition << 33``, so a
    line's number is its place in its partition plus the lines of the partitions before it
    (one pass that counts them, skipped for one partition: a gzip file is read whole). This
    was ``rdd.zipWithIndex()``, which sent every line through a pickling Python worker before
    the Arrow worker that parses it: two Python workers chained in one task, and with 6,400
    versions of a 200 KB document that task hung, the JVM waiting on one worker while the
    other was blocked writing (issue 29).
    """
    lines = spark.read.text(path).select(
        "value", F.spark_partition_id().alias("_p"),
        F.monotonically_increasing_id().alias("_m"))
    n = F.col("_m") - F.shiftleft(F.col("_p").cast("long"), 33)
    if lines.rdd.getNumPartitions() > 1:
        before, offsets = 0, []
        for r in lines.groupBy("_p").count().orderBy("_p").collect():
            offsets += [F.lit(r["_p"]), F.lit(before)]
            before += int(r["count"])
        if offsets:
            n = n + F.create_map(*offsets)[F.col("_p")]
    # As bytes: Arrow refuses a string column holding bytes that are not UTF-8, which the
    # reader must name as such (json_row), decoded with U+FFFD as Spark's own rows decode them.
    return lines.select(F.col("value").cast("binary").alias("value"), n.alias("n"),
                        F.lit(path).alias("source"))


def _error_columns(**given: Any) -> list[Any]:
    """ERRORS_SCHEMA's columns, in order, as a select list: the ``given`` expressions, the
    other columns null."""
    return [(given[f.name] if f.name in given else F.lit(None)).cast(f.dataType).alias(f.name)
            for f in ERRORS_SCHEMA.fields]


def _folder_rows(batches: Iterator[pd.DataFrame], base: str, root: str
                 ) -> Iterator[pd.DataFrame]:
    for b in batches:
        rows = []
        for uri, content in zip(b["path"], b["content"], strict=False):
            file = unquote(urlparse(uri).path)  # Spark names files by URI
            try:
                rows.append({**folder_row(base, file, bytes(content)), "bad": None})
            except (VersionTableError, ValueError) as exc:
                rows.append(_bad_input(f"{root}: {exc}"))
        yield _frame(rows, _INPUT)


# --- stages --------------------------------------------------------------------------------


def _check(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    from lxml import etree

    for b in batches:
        messages: list[str | None] = []
        lines: list[int | None] = []
        columns: list[int | None] = []
        for doc, version, xml in zip(b["doc"], b["version"], b["xml"], strict=False):
            try:
                parse_plain(xml)
            except etree.XMLSyntaxError as exc:
                bad = BadVersion.of(doc, int(version), exc)
                messages.append(bad.message)
                lines.append(bad.line)
                columns.append(bad.column)
            else:
                messages.append(None)
                lines.append(None)
                columns.append(None)
        yield b.assign(message=pd.Series(messages, index=b.index, dtype=object),
                       line=pd.array(lines, dtype="Int32"),
                       column=pd.array(columns, dtype="Int32"))


def _diff(options: DiffOptions) -> Any:
    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for b in batches:
            scripts: list[str | None] = []
            expects: list[str | None] = []
            errors: list[str | None] = []
            notes: list[str | None] = []
            for old, new in zip(b["old"], b["xml"], strict=False):
                if old is None:  # a document's first good version: inserted whole
                    scripts.append(None)
                    expects.append(None)
                    errors.append(None)
                    notes.append(None)  # the apply stage notes its keys as it inserts it
                    continue
                try:
                    new_root = parse_plain(new)
                    found: list[KeyNote] = []
                    scripts.append(encode_script(edit_script(old, new_root, options, found)))
                    expects.append(digest(new_root))
                    errors.append(None)
                    notes.append(_encode_notes(found))
                except Exception as exc:  # the apply stage diffs it again
                    scripts.append(None)
                    expects.append(None)
                    errors.append(f"{type(exc).__name__}: {exc}")
                    notes.append(None)
            # The XML goes on only where the apply stage diffs (a first version, a failed
            # diff): the script and the digest stand for the rest, so a long history's
            # versions are not shuffled and sorted a second time (issue 29: 6,400 versions of
            # a 200 KB document are 1.3 GB).
            xml = [x if s is None else None for x, s in zip(b["xml"], scripts, strict=True)]
            yield pd.DataFrame({"doc": b["doc"], "version": b["version"], "xml": xml,
                                "script": scripts, "expect": expects, "error": errors,
                                "time": b["time"], "commit": b["commit"], "notes": notes})
    return run


# The rows a frame of the apply stage holds: a frame goes to Spark as soon as it is full, so
# the worker holds one frame's rows (and the version being replayed), never a document's.
_FRAME_ROWS = 4096

# A version as the apply stage reads it: (doc, version, xml, script, expect, time, commit,
# notes), the diff stage's columns.
_Diffed = tuple[Any, Any, Any, Any, Any, Any, Any, Any]


@dataclass(frozen=True)
class Resume:
    """What the apply stage needs of a checkpoint folder (issue 29, item 4;
    :mod:`._checkpoint`): each document goes on from its state and its new state is
    written as run ``run``'s file (the driver commits the run once the outputs are written).

    Attributes:
        folder: the checkpoint folder, a path every worker reads and writes (this machine's,
            or one every machine mounts at that path).
        run: the run being written.
        states: each document the checkpoint has, and the run of its state file.
        read: each document of this run's input, and its last version (a bad one too: the
            apply stage does not see those, the state must have read them).
    """

    folder: str
    run: int
    states: dict[str, int]
    read: dict[str, int]

    def steps(self, doc: str, versions: Iterator[tuple[int, Any, list[Action] | None,
                                                       str | None, float | None, str | None]],
              definitions: str | None, options: DiffOptions,
              namespaces: dict[str, str] | None, within: int | Duration | str | None,
              queries: Sequence[Any]) -> Iterator[VersionRows]:  # pragma: no cover
        """``doc``'s steps from its state (:func:`~._checkpoint.resumed_document`), its new
        state written."""
        run = self.states.get(doc)
        state = None if run is None else read_state(self.folder, doc, run)

        def done(new: DocumentState) -> None:
            read = self.read.get(doc)
            if new.stopped is None and read is not None and (new.read is None
                                                              or new.read < read):
                new = replace(new, read=read)
            write_state(self.folder, self.run, new)

        return resumed_document(doc, state, versions, definitions, options=options,
                                namespaces=namespaces, within=within, queries=queries,
                                done=done)


def _apply(definitions: str | None, options: DiffOptions,
           namespaces: dict[str, str] | None, within: int | Duration | str | None,
           queries: tuple[str, ...] = (), resume: Resume | None = None) -> Any:
    """The apply stage's worker function (``mapInPandas``): a partition's diffed versions,
    sorted by document then version, replayed one document at a time (see the module);
    with ``resume``, each from its checkpointed state."""
    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:  # pragma: no cover
        cel = compiled_queries(queries) if queries else ()
        partition = _Partition(batches)
        rows: list[dict[str, Any]] = []  # the frame being filled
        while (doc := partition.document()) is not None:
            steps: Iterator[VersionRows]
            if resume is None:
                history = DocumentHistory(doc, definitions, options=options,
                                          namespaces=namespaces, within=within)
                steps = iter_document(history, partition.versions(doc), queries=cel)
            else:
                steps = resume.steps(doc, partition.versions(doc), definitions, options,
                                     namespaces, within, cel)
            for step in steps:
                yield from _filled(rows, _tagged_rows(step))
                if step.replayed:
                    yield from _filled(rows, partition.notes())
            # a version that failed stopped the document: its other versions are skipped
            for _ in partition.versions(doc):
                pass
        if rows:
            yield _frame(rows, _TAGGED)
    return run


class _Partition:  # pragma: no cover (in the workers)
    """A partition's diffed versions, sorted by document then version, read one document at
    a time from the Arrow batches (16 versions each, the session's setting), one version ahead."""

    def __init__(self, batches: Iterator[pd.DataFrame]) -> None:
        self._rows = self._read(batches)
        self._next: _Diffed | None = next(self._rows, None)
        self._given: _Diffed | None = None  # the version given last

    @staticmethod
    def _read(batches: Iterator[pd.DataFrame]) -> Iterator[_Diffed]:
        for b in batches:
            yield from zip(b["doc"], b["version"], b["xml"], b["script"], b["expect"],
                           b["time"], b["commit"], b["notes"], strict=False)

    def document(self) -> str | None:
        """The document of the next version (None at the partition's end)."""
        return None if self._next is None else str(self._next[0])

    def versions(self, doc: str) -> Iterator[tuple[int, Any, list[Action] | None, str | None,
                                                   float | None, str | None]]:
        """``doc``'s next versions as :func:`~._history.iter_document` takes them, up to the
        next document's first."""
        while self._next is not None and str(self._next[0]) == doc:
            self._given = row = self._next
            self._next = next(self._rows, None)
            _, v, xml, script, expect, t, c, _ = row
            yield (int(v), xml, decode_script(script) if script is not None else None,
                   expect, _number(t), _text(c))

    def notes(self) -> Iterator[TaggedRow]:
        """The diff stage's key notes of the version given last (when it was replayed), as
        error rows (as in process)."""
        if self._given is None or not isinstance(self._given[7], str):
            return
        doc, v, _, _, _, t, c, notes = self._given
        for m in json.loads(notes):
            yield "error", error_row(str(doc), int(v), KEY_STAGE, m, commit=_text(c),
                                     time=_number(t))


def _number(value: Any) -> float | None:
    return None if pd.isna(value) else float(value)


def _text(value: Any) -> str | None:
    return None if pd.isna(value) else str(value)


def _tagged_rows(step: VersionRows) -> Iterator[TaggedRow]:  # pragma: no cover
    """A step's rows, tagged by output; a replayed version also as a ``version`` row."""
    if step.replayed:
        yield "version", {"doc": step.doc, "version": step.version}
    for record, rows in (("error", step.errors), ("event", step.events),
                         ("composite", step.composites), ("cel", step.cel)):
        for row in rows:
            yield record, row


def _filled(rows: list[dict[str, Any]], produced: Iterable[TaggedRow]
            ) -> Iterator[pd.DataFrame]:  # pragma: no cover
    """Add the ``produced`` rows to the frame being filled, giving it whenever it is full
    (then emptied for the next)."""
    for record, row in produced:
        rows.append({"record": record, **row})
        if len(rows) >= _FRAME_ROWS:
            yield _frame(rows, _TAGGED)
            rows.clear()


def _encode_notes(notes: list[KeyNote]) -> str | None:
    """The new version's key notes as the diff stage's ``notes`` column (None: none). The
    old version's were noted when it was the new one (its first, by the apply stage)."""
    messages = [n.message() for n in notes if n.side == "new"]
    return json.dumps(messages) if messages else None


def replay_frames(spark: SparkSession, versions: DataFrame, definitions: str | None = None,
                  *, options: DiffOptions | None = None,
                  namespaces: dict[str, str] | None = None,
                  partitions: int | None = None, within: int | Duration | str | None = None,
                  queries: Sequence[str] = (), resume: Resume | None = None) -> ReplayFrames:
    """The events, composites, errors and CEL complex events of a version table (``doc``,
    ``version``, ``xml``).

    ``definitions`` is definition text and ``queries`` CEL queries (CEQL text, run over each
    document's primitive events: :mod:`._cel`), both checked here first: a bad one raises
    before any work; ``partitions`` spreads the diff stage (default: 4 per core). With
    ``resume``, each document goes on from its checkpointed state (the table holding only
    the versions the checkpoint has not read: :func:`~._spark_job.run_spark`).
    """
    if definitions is not None:
        DefinitionSet.of(definitions, namespaces=namespaces)  # refused here, before any work
    texts = tuple(queries)
    check_queries(texts)  # so are the queries
    options = options or DiffOptions()
    inferred = None
    n = _partitions(spark, partitions)
    checked, duplicates = _check_stage(versions, n)
    if options.infer_keys:
        # From the checked versions (cached on disk, the first of each duplicated version
        # kept, as the inference keeps it), not from the table: the input is read once, where
        # the inference's two passes read it before the check stage read it again.
        options, inferred = infer_on_spark(spark, checked, options)
    diffed = _diff_pairs(checked, options, n)
    bad = checked.where(F.col("message").isNotNull()).select(*_error_columns(
        doc=F.col("doc"), version=F.col("version"), commit=F.col("commit"),
        time=F.col("time"), stage=F.lit("parse"), message=F.col("message"),
        line=F.col("line"), column=F.col("column")))

    # 3. apply: per document, in version order
    tagged = diffed.repartition("doc").sortWithinPartitions("doc", "version").mapInPandas(
        _apply(definitions, options, namespaces, within, texts, resume), _TAGGED).persist()
    pick = [F.col(f.name) for f in EVENTS_SCHEMA.fields]
    events = tagged.where(F.col("record") == "event").select(*pick)
    composites = tagged.where(F.col("record") == "composite").select(
        *[F.col(f.name) for f in COMPOSITES_SCHEMA.fields])
    errors = tagged.where(F.col("record") == "error").select(
        *[F.col(f.name) for f in ERRORS_SCHEMA.fields]).unionByName(bad).unionByName(
        duplicates)
    if inferred:
        errors = errors.unionByName(spark.createDataFrame(
            [error_row(None, None, KEY_STAGE, k.message()) for k in inferred], ERRORS_SCHEMA))
    cel = tagged.where(F.col("record") == "cel").select(
        *[F.col(f.name) for f in CEL_SCHEMA.fields])
    return ReplayFrames(events, composites, errors, tagged, checked, cel, inferred)


def infer_on_spark(spark: SparkSession, versions: DataFrame, options: DiffOptions
                   ) -> tuple[DiffOptions, list[InferredKey]]:
    """The options with the keys inferred from the table's sample added, and those keys
    (:mod:`._infer`): the driver collects each document's version numbers, then the texts
    of the sampled versions only (the same sample, and so the same keys, as in process).
    ``versions``: the table, or its checked versions (:func:`replay_frames` gives those: the
    cached stage 1, so the input is read once)."""
    found: dict[str, set[int]] = {}
    for r in versions.where(F.col("doc").isNotNull() & F.col("version").isNotNull()).select(
            "doc", "version").distinct().collect():
        found.setdefault(str(r["doc"]), set()).add(int(r["version"]))
    plan = sample_plan({d: sorted(vs) for d, vs in found.items()})
    wanted = sorted({(d, v) for d, pairs in plan.items() for pair in pairs for v in pair})
    xml: dict[tuple[str, int], Any] = {}
    if wanted:
        chosen = spark.createDataFrame(wanted, "doc string, version long")
        # The first of a duplicated version, as the check stage keeps it.
        for r in versions.join(F.broadcast(chosen), ["doc", "version"]).select(
                "doc", "version", "xml").orderBy(F.monotonically_increasing_id()).collect():
            xml.setdefault((str(r["doc"]), int(r["version"])), r["xml"])
    inferred = infer_pairs(plan, xml, parse_plain).keys(
        exclude=[k.element for k in options.keys])
    return options.with_inferred([k.key for k in inferred]), inferred


def diff_stage(spark: SparkSession, versions: DataFrame, options: DiffOptions,
               partitions: int | None = None) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Stages 1 and 2: the checked versions (cached: the errors read them too), the duplicate
    versions as error rows, and the diffed versions the apply stage takes."""
    n = _partitions(spark, partitions)
    checked, duplicates = _check_stage(versions, n)
    return checked, duplicates, _diff_pairs(checked, options, n)


def _partitions(spark: SparkSession, partitions: int | None) -> int:
    """The diff stage's partitions: ``partitions``, or 4 per core."""
    return partitions or 4 * spark.sparkContext.defaultParallelism


def _check_stage(versions: DataFrame, n: int) -> tuple[DataFrame, DataFrame]:
    """Stage 1: the checked versions (cached on disk) and the duplicate versions as error
    rows."""
    # 1. check: duplicates and versions that are not well-formed
    numbered = versions.withColumn("_k", F.row_number().over(
        Window.partitionBy("doc", "version").orderBy(F.monotonically_increasing_id())))
    duplicates = numbered.where(F.col("_k") > 1).select(*_error_columns(
        doc=F.col("doc"), version=F.col("version"), commit=F.col("commit"),
        time=F.col("time"), stage=F.lit("input"), message=F.lit(DUPLICATE)))
    # Cached on disk only: both the diff stage and the errors read it. Cached in memory
    # first (MEMORY_AND_DISK), a history larger than the storage memory is unrolled in the
    # heap before it spills, beside the column builder's batches: 6,400 versions of a 200 KB
    # document ran the driver's 1 GB heap out (issue 29); on disk, batch after batch.
    checked = numbered.where(F.col("_k") == 1).drop("_k").repartition(n).mapInPandas(
        _check, _CHECKED).persist(StorageLevel.DISK_ONLY)
    return checked, duplicates


def _diff_pairs(checked: DataFrame, options: DiffOptions, n: int) -> DataFrame:
    """Stage 2: the diffed versions the apply stage takes, from the checked ones."""
    # 2. diff: consecutive good versions, in parallel across documents and pairs
    good = checked.where(F.col("message").isNull()).select("doc", "version", "xml", "time",
                                                           "commit")
    # Each version's predecessor found on the version numbers alone, then its XML joined on:
    # a window over the XML itself (lag) buffers a document's whole history in one task, and
    # spilling it every 64 rows opened a reader per spill file at once (6,400 versions of a
    # 200 KB document ran the heap out in the window's spill readers; issue 29). The joins
    # sort by key and spill by memory, as a shuffle does.
    before = good.select("doc", "version").withColumn("_prev", F.lag("version").over(
        Window.partitionBy("doc").orderBy("version")))
    olds = good.select("doc", F.col("version").alias("_prev"), F.col("xml").alias("old"))
    pairs = good.join(before, ["doc", "version"]).join(olds, ["doc", "_prev"], "left").drop(
        "_prev").repartition(n)
    return pairs.mapInPandas(_diff(options), _DIFFED)


def write_frames(frames: ReplayFrames, out: str, extra_errors: DataFrame | None = None,
                 *, partition: str | None = None) -> None:
    """Write ``out/events``, ``out/composites``, ``out/errors`` and ``out/cel`` (given
    ``frames.cel``) as Parquet datasets (with ``partition``, ``run=3``: as
    ``out/events/run=3`` ..., each replaced)."""
    errors = frames.errors if extra_errors is None else frames.errors.unionByName(extra_errors)
    tail = "" if partition is None else f"/{partition}"
    frames.events.write.mode("overwrite").parquet(f"{out}/events{tail}")
    frames.composites.write.mode("overwrite").parquet(f"{out}/composites{tail}")
    errors.write.mode("overwrite").parquet(f"{out}/errors{tail}")
    if frames.cel is not None:
        frames.cel.write.mode("overwrite").parquet(f"{out}/cel{tail}")

