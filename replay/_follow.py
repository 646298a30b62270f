"""Continuous replay: ``xmlevents replay --follow`` on Spark Structured Streaming (issue 29,
item 5).

New version rows — files arriving in a folder (JSON lines, ``.gz`` too, and Parquet: the
version table's columns, :data:`~._spark.VERSIONS_SCHEMA`) or records of a Kafka topic (the
same rows as JSON values) — are replayed as they come, each document going on from its
:class:`~._state.DocumentState` (issue 29, item 4), which Spark's state store keeps:

* ``spark.readStream`` on the source (a folder: two file sources, ``*.json*``/``*.gz`` and
  ``*.parquet``, unioned; at most ``max_files`` new files of each per micro-batch);
* ``groupBy("doc").applyInPandasWithState``: the state is one binary column, the pickled
  :class:`~._state.DocumentState`. Each micro-batch's rows of a document are sorted by
  version and replayed from the state exactly as :func:`~._checkpoint.resume_history`
  replays a run: a row at or below the last version read is skipped (the row of the last
  good version is checked against its digest: one that differs is an error row of stage
  ``checkpoint``), a second row of a version is an error row, a document whose replay
  stopped stays stopped. The operator emits the apply stage's tagged rows (``record``:
  ``event``, ``composite``, ``error``, ``cel``, ``version``, and ``skipped`` for a row not
  replayed again), as the batch job does (:mod:`._spark`).
* ``foreachBatch`` writes micro-batch ``N``'s rows to ``OUT/events/batch=N/`` (and
  ``composites``, ``errors``, ``cel``) as Parquet, each partition replaced: Spark re-runs a
  micro-batch it had not committed when the driver died, with the same input and the same
  state, and the partition it wrote half is replaced, never duplicated — exactly once across
  a restart. Reading ``OUT/events`` as a dataset sees every batch (a ``batch`` column).

Why ``applyInPandasWithState`` and not ``transformWithStateInPandas`` (both in pyspark 4):
the state here is one value per document with no timers or TTL, which is what the first
does; it is in Spark since 3.4 (clusters on 3.5 run it), works with the default state store
(``transformWithStateInPandas`` requires the RocksDB provider to be configured) and is
documented for Python with its output modes. A document's rows of one micro-batch are one
pandas group — bounded by ``max_files`` — and its history lives in the state, not in
memory.

The checkpoint folder ``DIR`` (``--checkpoint``): ``DIR/manifest.json`` holds the
fingerprint of the definitions and options (:func:`~._checkpoint.fingerprint`, written and
checked by :class:`~._checkpoint.Checkpoint`: another set is refused with its message),
``DIR/follow.json`` the source it follows, and ``DIR/stream`` is Spark's own
``checkpointLocation`` (offsets, commits, the state store). A history followed never ends:
the composites a plain replay raises at the end of the input are not raised (as with a
checkpoint, :mod:`._checkpoint`).
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import shutil
import signal
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming.query import StreamingQuery
from pyspark.sql.streaming.state import GroupState

from xmlevents.algebra import DefinitionSet, Duration

from ._cel import check_queries, compiled_queries
from ._checkpoint import CHECKPOINT_STAGE, Checkpoint, _changed, _replay, fingerprint
from ._follow_source import FollowError, FollowSource
from ._history import DUPLICATE, HistoryResult, error_row
from ._script import DiffOptions
from ._spark import (
    _TAGGED,
    CEL_SCHEMA,
    COMPOSITES_SCHEMA,
    ERRORS_SCHEMA,
    EVENTS_SCHEMA,
    VERSIONS_SCHEMA,
    _frame,
)
from ._state import CheckpointError, DocumentState

__all__ = ["FollowSource", "FollowError", "BatchReport", "Follower", "follow",
           "STREAM_FOLDER", "KAFKA_PACKAGE"]

#: Spark's ``checkpointLocation``, inside the user's checkpoint folder.
STREAM_FOLDER = "stream"
_FOLLOW = "follow.json"
_MANIFEST = "manifest.json"

#: The Kafka connector's Maven coordinate for this Spark (``--packages`` /
#: ``spark.jars.packages``); Scala 2.13 is the only one Spark 4 is built for.
KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13:{version}"

#: The operator's state: one document's :class:`~._state.DocumentState`, pickled.
_STATE = T.StructType([T.StructField("state", T.BinaryType(), False)])

# The rows the operator reads: the version table's columns (all nullable: a bad row has
# none), the file they came from (to name it in an error and to order duplicates), and why
# the row is no version (a line that is not JSON, a missing column).
_INPUT = T.StructType([*(T.StructField(f.name, f.dataType, True)
                         for f in VERSIONS_SCHEMA.fields),
                       T.StructField("source", T.StringType(), True),
                       T.StructField("bad", T.StringType(), True)])

_CORRUPT = "_corrupt_record"

# The outputs: folder, record tag, schema.
_OUTPUTS = (("events", "event", EVENTS_SCHEMA), ("composites", "composite", COMPOSITES_SCHEMA),
            ("errors", "error", ERRORS_SCHEMA), ("cel", "cel", CEL_SCHEMA))


@dataclass(frozen=True, slots=True)
class BatchReport:
    """What one micro-batch did: its ``batch`` id, the input ``rows`` it read (Spark's
    count; None if Spark gave none), the versions replayed and the rows skipped (at or
    below a version already read), the rows written to each output, and its seconds."""

    batch: int
    rows: int | None
    versions: int
    skipped: int
    events: int
    composites: int
    errors: int
    cel: int
    seconds: float | None

    def line(self) -> str:
        """The report as the command line prints it.

        >>> print(BatchReport(3, 4, 3, 1, 24, 1, 0, 0, 1.25).line())  # doctest: +ELLIPSIS
        batch 3: 4 rows in (1 skipped: already read), 3 versions replayed -> 24 events, ...
        """
        rows = "? rows" if self.rows is None else _count(self.rows, "row")
        skipped = f" ({self.skipped:,} skipped: already read)" if self.skipped else ""
        took = "" if self.seconds is None else f" in {self.seconds:.1f} s"
        return (f"batch {self.batch}: {rows} in{skipped}, {_count(self.versions, 'version')} "
                f"replayed -> {_count(self.events, 'event')}, "
                f"{_count(self.composites, 'composite')}, {_count(self.errors, 'error')}, "
                f"{_count(self.cel, 'CEL row')}{took}")


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


# --- the source ----------------------------------------------------------------------------


def _read_schema() -> T.StructType:
    """What the JSON source parses: the version table's columns, nullable, and the line
    itself when it is not a version (Spark's permissive mode)."""
    return T.StructType([*(T.StructField(f.name, f.dataType, True)
                           for f in VERSIONS_SCHEMA.fields),
                         T.StructField(_CORRUPT, T.StringType(), True)])


def _checked(df: DataFrame, where: Any) -> DataFrame:
    """Rows of the version table with ``source`` and ``bad`` (why a row is no version)."""
    corrupt = F.col(_CORRUPT) if _CORRUPT in df.columns else F.lit(None).cast("string")
    missing = F.concat_ws(", ", *[F.when(F.col(c).isNull(), F.lit(c))
                                  for c in ("doc", "version", "xml")])
    bad = (F.when(corrupt.isNotNull(), F.concat(
               F.lit("not a version row (JSON with doc, version, xml, and commit, time): "),
               F.substring(corrupt, 1, 80)))
           .when(missing != "", F.concat(F.lit("missing "), missing,
                                         F.lit(" (a version has doc, version and xml)")))
           .when(F.col("version") < 0, F.concat(
               F.lit("version="), F.col("version").cast("string"),
               F.lit(" must be an integer from 0"))))
    return df.select(*[F.col(f.name) for f in VERSIONS_SCHEMA.fields],
                     where.alias("source"), bad.alias("bad"))


def _folder_stream(spark: SparkSession, folder: str, max_files: int) -> DataFrame:
    """The new files of ``folder`` as version rows: JSON lines (``.jsonl``, ``.json``,
    ``.gz``: Hadoop decompresses by name) and Parquet, two file sources unioned."""
    schema = _read_schema()
    json_rows = (spark.readStream.schema(schema)
                 .option("maxFilesPerTrigger", max_files)
                 .option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", _CORRUPT)
                 .option("pathGlobFilter", "*.{jsonl,json,gz}")
                 .json(folder))
    parquet_rows = (spark.readStream.schema(VERSIONS_SCHEMA)
                    .option("maxFilesPerTrigger", max_files)
                    .option("pathGlobFilter", "*.parquet")
                    .parquet(folder))
    return _checked(json_rows, F.col("_metadata.file_path")).unionByName(
        _checked(parquet_rows, F.col("_metadata.file_path")))


def _kafka_stream(spark: SparkSession, source: FollowSource, max_offsets: int) -> DataFrame:
    """The topic's records as version rows (their values: one JSON row each).

    Raises:
        FollowError: Spark has no Kafka connector (the message says which package to add).
    """
    try:
        records = (spark.readStream.format("kafka")
                   .option("kafka.bootstrap.servers", source.where)
                   .option("subscribe", source.topic)
                   .option("startingOffsets", "earliest")
                   .option("maxOffsetsPerTrigger", max_offsets)
                   .load())
    except Exception as exc:
        text = str(exc)
        if "Failed to find data source: kafka" in text or "ClassNotFound" in text \
                or "DATA_SOURCE_NOT_FOUND" in text:
            raise FollowError(f"{source}: Spark's Kafka connector is not installed: start "
                              f"with --conf spark.jars.packages={kafka_package(spark)} (or "
                              "spark-submit --packages ...)") from None
        raise
    parsed = records.select(
        F.from_json(F.col("value").cast("string"), _read_schema(),
                    {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT}
                    ).alias("r"),
        F.concat(F.lit(f"{source} partition "), F.col("partition").cast("string"),
                 F.lit(" offset "), F.col("offset").cast("string")).alias("_where"))
    return _checked(parsed.select("r.*", "_where"), F.col("_where"))


def kafka_package(spark: SparkSession | None = None) -> str:
    """The Kafka connector's coordinate for this Spark's version."""
    if spark is not None:
        version = spark.version
    else:
        import pyspark

        version = pyspark.__version__
    return KAFKA_PACKAGE.format(version=version)


# --- the operator (in the workers) ---------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _prepared(definitions: str | None, namespaces: tuple[tuple[str, str], ...],
              queries: tuple[str, ...]) -> tuple[DefinitionSet | None, tuple[Any, ...]]:
    """The definitions parsed and the queries compiled, once per worker process (the
    operator is called once per document and micro-batch)."""
    defs = (DefinitionSet.of(definitions, namespaces=dict(namespaces) or None)
            if definitions is not None else None)
    return defs, tuple(compiled_queries(queries)) if queries else ()


def _operator(definitions: str | None, options: DiffOptions,
              namespaces: dict[str, str] | None, within: int | Duration | str | None,
              queries: tuple[str, ...]
              ) -> Callable[[tuple[Any, ...], Iterator[pd.DataFrame], GroupState],
                            Iterator[pd.DataFrame]]:
    """The function ``applyInPandasWithState`` runs per document and micro-batch (see the
    module)."""
    ns = tuple(sorted((namespaces or {}).items()))

    def run(key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: GroupState
            ) -> Iterator[pd.DataFrame]:  # pragma: no cover (in the workers)
        # pyspark's worker concatenates the frames given back, whose columns a record does
        # not use are all None: pandas 2 warns of a future change on every batch (noise).
        warnings.filterwarnings("ignore", "The behavior of DataFrame concatenation",
                                FutureWarning)
        doc = key[0]
        rows = pd.concat(list(frames), ignore_index=True)
        tagged: list[dict[str, Any]] = []
        for b in rows[rows["bad"].notna()].itertuples(index=False):
            tagged.append({"record": "error", **error_row(
                None if pd.isna(doc) else str(doc), _int(b.version), "input",
                f"{b.source}: {b.bad}", commit=_text(b.commit), time=_number(b.time))})
        good = rows[rows["bad"].isna()]
        if doc is not None and not pd.isna(doc) and len(good):
            old = _load(state) if state.exists else None
            defs, cel = _prepared(definitions, ns, queries)
            result, new, skipped = replay_batch(
                str(doc), good.sort_values(["version", "source"], kind="stable"), old, defs,
                options=options, namespaces=dict(ns) or None, within=within, queries=cel)
            if new is not None:
                state.update((pickle.dumps(new, protocol=5),))
            tagged.extend({"record": "skipped", "doc": str(doc), "version": v}
                          for v in skipped)
            tagged.extend({"record": "version", "doc": d, "version": v}
                          for d, v in result.replayed)
            for record, out in (("error", result.errors), ("event", result.events),
                                ("composite", result.composites), ("cel", result.cel)):
                tagged.extend({"record": record, **r} for r in out)
        yield _frame(tagged, _TAGGED)
    return run


def _load(state: GroupState) -> DocumentState:  # pragma: no cover (in the workers)
    (blob,) = state.get
    value = pickle.loads(blob)
    if not isinstance(value, DocumentState):
        raise CheckpointError(f"the state store holds {type(value).__name__}, not a "
                              "DocumentState: reset the checkpoint")
    return value


def _int(value: Any) -> int | None:
    return None if pd.isna(value) else int(value)


def _number(value: Any) -> float | None:
    return None if pd.isna(value) else float(value)


def _text(value: Any) -> str | None:
    return None if pd.isna(value) else str(value)


def replay_batch(doc: str, rows: pd.DataFrame, state: DocumentState | None,
                 definitions: DefinitionSet | None, *, options: DiffOptions | None,
                 namespaces: dict[str, str] | None, within: int | Duration | str | None,
                 queries: Sequence[Any]
                 ) -> tuple[HistoryResult, DocumentState | None, list[int]]:
    """One document's rows of a micro-batch (sorted by version) replayed from ``state``
    (None: the document is new), as :func:`~._checkpoint.resume_history` replays a run:
    its rows, its new state (None: unchanged) and the versions skipped (at or below the
    last version read, or after the replay stopped).

    ``queries`` are compiled (:func:`~._cel.compiled_queries`).
    """
    result = HistoryResult()
    read = state.read if state is not None else None
    versions: list[Mapping[str, Any]] = []
    skipped: list[int] = []
    seen: set[int] = set()
    for version, xml, c, t in zip(rows["version"], rows["xml"], rows["commit"], rows["time"],
                                  strict=True):
        v, commit, when = int(version), _text(c), _number(t)
        row = {"doc": doc, "version": v, "xml": xml, "commit": commit, "time": when}
        if read is not None and v <= read:
            if state is not None and v == state.version and state.stopped is None:
                why = _changed(row, state)
                if why is not None:
                    result.errors.append(error_row(doc, v, CHECKPOINT_STAGE, why,
                                                   commit=commit, time=when))
            skipped.append(v)
        elif v in seen:
            result.errors.append(error_row(doc, v, "input", DUPLICATE, commit=commit,
                                           time=when))
        else:
            seen.add(v)
            versions.append(row)
    if not versions:
        return result, None, skipped
    if state is not None and state.stopped is not None:
        return result, None, skipped + [int(r["version"]) for r in versions]
    new = _replay(doc, state, versions, result, definitions, options=options,
                  namespaces=namespaces, within=within, queries=queries)
    return result, new, skipped


# --- the checkpoint folder -----------------------------------------------------------------


def _open_checkpoint(folder: str, prints: dict[str, str], source: FollowSource,
                     reset: bool) -> str:
    """Check (or make) the checkpoint folder for a follower of ``source`` with fingerprint
    ``prints``; Spark's ``checkpointLocation`` in it.

    Raises:
        CheckpointError: another fingerprint, format or library (named by
            :class:`~._checkpoint.Checkpoint`), a checkpoint of runs (not a follower's).
        FollowError: the checkpoint follows another source.
    """
    stream = os.path.join(folder, STREAM_FOLDER)
    marker = os.path.join(folder, _FOLLOW)
    manifest = os.path.join(folder, _MANIFEST)
    if os.path.exists(manifest) and not os.path.exists(marker):
        raise CheckpointError(f"{folder}: a checkpoint of runs (replay --checkpoint), not of "
                              "a follower: --follow keeps its state in Spark's state store; "
                              "give it a folder of its own")
    if reset and os.path.exists(manifest):
        shutil.rmtree(stream, ignore_errors=True)
        os.unlink(marker)
    ck = Checkpoint.open(folder, prints, reset=reset and os.path.exists(manifest))
    if os.path.exists(marker):
        with open(marker, encoding="utf-8") as f:
            given = json.load(f).get("source")
        if given != str(source):
            raise FollowError(f"{folder}: the checkpoint follows {given}, not {source}: use a "
                              "new checkpoint folder or reset this one (--checkpoint-reset)")
    if ck.run == 0:  # a new follower: its fingerprint and source, before Spark's folder
        ck.commit()
        with open(marker, "w", encoding="utf-8") as f:
            json.dump({"source": str(source)}, f)
            f.write("\n")
    return stream


def _local_folder(checkpoint: str) -> str:
    """The checkpoint folder as a path of this machine (``file://`` URIs too).

    Raises:
        FollowError: a URL of another file system (``hdfs://``, ``s3a://``): the manifest is
            written by this process, so the folder must be one it can write (on a cluster, a
            folder every machine mounts at that path).
    """
    if "://" not in checkpoint:
        return checkpoint
    url = urlparse(checkpoint)
    if url.scheme != "file":
        raise FollowError(f"--checkpoint {checkpoint}: give a folder of this machine (on a "
                          "cluster, one every machine mounts at that path, e.g. "
                          f"file:///shared/checkpoint); {url.scheme}:// is not supported")
    return url.path


# --- the follower --------------------------------------------------------------------------


class Follower:
    """A running follower (:func:`follow`): its Spark ``query``, and the reports of the
    micro-batches written so far."""

    def __init__(self, query: StreamingQuery, written: dict[int, dict[str, int]]) -> None:
        self.query = query
        # batch id -> rows per record, filled by foreachBatch, emptied as reported (a
        # follower runs for months)
        self._written = written

    def reports(self) -> list[BatchReport]:
        """The micro-batches written since the last call, in order."""
        progress = {p.batchId: p for p in self.query.recentProgress}
        new = []
        for batch in sorted(self._written):
            p = progress.get(batch)
            if p is None and self.query.isActive:
                continue  # written, Spark's progress not yet given: next time
            c = self._written.pop(batch)
            new.append(BatchReport(
                batch, None if p is None else int(p.numInputRows), c.get("version", 0),
                c.get("skipped", 0), c.get("event", 0), c.get("composite", 0),
                c.get("error", 0), c.get("cel", 0),
                None if p is None else p.batchDuration / 1000))
        return new

    def run(self, on_batch: Callable[[BatchReport], None] | None = None, *,
            poll: float = 0.5, on_stopping: Callable[[], None] | None = None) -> None:
        """Wait for the query to end (with ``available_now``: once what was there is
        replayed; else until stopped), calling ``on_batch`` with each micro-batch's report.
        A Ctrl-C (SIGINT in the main thread) stops the query once the micro-batch in flight
        is written (``on_stopping()`` is called then), a second one at once (the micro-batch
        is run again at the next start), and raises KeyboardInterrupt.

        Raises:
            FollowError: the query failed (the first line of Spark's message).
        """
        # Ctrl-C sets a flag the loop reads between two calls into the JVM: pyspark's own
        # handler calls into it from inside the call being waited on (py4j refuses the
        # reentrant call, with tracebacks); and a query stopped in the middle of a
        # micro-batch makes Spark's stream thread print a StackOverflowError matching the
        # interruption's message. So the first Ctrl-C waits for the micro-batch in flight.
        interrupted = threading.Event()
        stopping = False

        def on_sigint(signum: int, frame: Any) -> None:
            if interrupted.is_set():
                raise KeyboardInterrupt
            interrupted.set()

        previous = (signal.signal(signal.SIGINT, on_sigint)
                    if threading.current_thread() is threading.main_thread() else None)
        try:
            while not self.query.awaitTermination(poll):  # type: ignore[arg-type]
                for r in self.reports():
                    if on_batch is not None:
                        on_batch(r)
                if interrupted.is_set():
                    if not stopping and on_stopping is not None:
                        on_stopping()
                    stopping = True
                    if not self.query.status.get("isTriggerActive", False):
                        raise KeyboardInterrupt
            for r in self.reports():
                if on_batch is not None:
                    on_batch(r)
        except KeyboardInterrupt:
            self.stop()
            raise
        except Exception as exc:  # a failed micro-batch: StreamingQueryException
            self.stop()
            text = (getattr(exc, "desc", None) or str(exc)).strip().splitlines()
            raise FollowError(f"the follower stopped: {text[0] if text else exc}") from None
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    def stop(self) -> None:
        """Stop the query (a micro-batch in flight is not committed: it is run again when
        the follower restarts)."""
        if self.query.isActive:
            self.query.stop()


def follow(spark: SparkSession, source: str, out: str, checkpoint: str,
           definitions: str | None = None, *, options: DiffOptions | None = None,
           namespaces: Mapping[str, str] | None = None,
           within: int | Duration | str | None = None, queries: Sequence[str] = (),
           trigger: float | None = None, available_now: bool = False, max_files: int = 8,
           max_offsets: int = 10_000, partitions: int | None = None, reset: bool = False
           ) -> Follower:
    """Start following ``source`` (a folder, or ``kafka://HOST:PORT/TOPIC``) on ``spark``,
    replaying its version rows into ``out`` as they come (see the module); ``run()`` the
    result to wait.

    Args:
        source: the folder new version files arrive in, or a Kafka topic.
        out: where ``events/``, ``composites/``, ``errors/``, ``cel/`` go (a ``batch=N``
            partition per micro-batch).
        checkpoint: the checkpoint folder (made if missing): the fingerprint, the source and
            Spark's ``checkpointLocation``.
        definitions, options, namespaces, within, queries: as for
            :func:`~._spark_job.run_spark`; they must be the checkpoint's.
        trigger: seconds between micro-batches (None: as soon as the last one ends).
        available_now: replay what is there now, in micro-batches, and stop (Spark's
            ``Trigger.AvailableNow``).
        max_files: new files of each kind per micro-batch (a folder).
        max_offsets: records per micro-batch (Kafka).
        partitions: the state store's partitions (``spark.sql.shuffle.partitions`` when the
            checkpoint is new; Spark keeps the first number for good).
        reset: empty the checkpoint first (the source is then replayed from its start).

    Raises:
        CheckpointError: a checkpoint of other definitions or options (named), or of runs.
        FollowError: another source than the checkpoint's; Kafka without its connector.
        ExpressionSyntaxError, DefinitionError, CELSyntaxError, CELQueryError: before any
            work.
    """
    ns = dict(namespaces or {})
    defs = DefinitionSet.of(definitions, namespaces=ns or None) if definitions else None
    texts = tuple(queries)
    check_queries(texts)
    options = options or DiffOptions()
    where = FollowSource.parse(source)
    prints = fingerprint(defs, options=options, namespaces=ns, within=within, queries=texts)
    folder = _local_folder(checkpoint)
    rows = (_folder_stream(spark, where.where, max_files) if where.kind == "folder"
            else _kafka_stream(spark, where, max_offsets))  # no connector: before the folder
    stream = _open_checkpoint(folder, prints, where, reset)
    tagged = rows.groupBy("doc").applyInPandasWithState(
        _operator(definitions, options, ns or None, within, texts), _TAGGED, _STATE,
        "append", "NoTimeout")
    written: dict[int, dict[str, int]] = {}
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    if partitions is not None:
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    writer = (tagged.writeStream.foreachBatch(_write_batch(out, written))
              # a file: URI, not a path fs.defaultFS (a cluster's HDFS) would resolve
              .option("checkpointLocation", Path(stream).absolute().as_uri()))
    if available_now:
        writer = writer.trigger(availableNow=True)
    elif trigger is not None:
        writer = writer.trigger(processingTime=f"{trigger} seconds")

    try:
        query = writer.start()
    finally:  # the query runs on a copy of the session's settings, made as it starts
        if partitions is not None and previous is not None:
            spark.conf.set("spark.sql.shuffle.partitions", previous)
    return Follower(query, written)


def _write_batch(out: str, written: dict[int, dict[str, int]]
                 ) -> Callable[[DataFrame, int], None]:
    """``foreachBatch``'s function: micro-batch ``N``'s tagged rows written as
    ``OUT/<output>/batch=N/``, each partition replaced (see the module), and counted."""
    def write(df: DataFrame, batch: int) -> None:
        df = df.persist()
        try:
            counts = {r["record"]: int(r["count"])
                      for r in df.groupBy("record").count().collect()}
            for name, record, schema in _OUTPUTS:
                target = f"{out}/{name}/batch={batch}"
                if counts.get(record):
                    (df.where(F.col("record") == record)
                     .select(*[F.col(f.name) for f in schema.fields])
                     .write.mode("overwrite").parquet(target))
            written[batch] = counts
        finally:
            df.unpersist()
    return write
