"""``xmlevents replay`` on Spark: the whole job on a given session, with its report (issue 15).

Read the version table (:func:`~._spark.read_versions_df`), replay it
(:func:`~._spark.replay_frames`), run the job once into the cached tagged table and take the
report's facts from it (counts, the first composites, the keys that selected nothing, the
event paths for the namespace hint), then write the three datasets
(:func:`~._spark.write_frames`) and read the errors back from what was written (computing
them again would read the input again). The caller makes and stops the session and times
its start (:func:`~._session.make_session`); progress goes to a
:class:`~._progress.ReplayProgress`, Spark's tasks polled for it where it shows them.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import urlparse

import pandas as pd
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from xmlevents.algebra import DefinitionSet, Duration, namespace_hints

from ._cel import check_queries
from ._checkpoint import (
    CHECKPOINT_STAGE,
    Checkpoint,
    RunSummary,
    _changed,
    check_run_folders,
    clear_runs,
    fingerprint,
    open_runs,
)
from ._history import DUPLICATE, DocumentHistory
from ._progress import ReplayProgress, Silent
from ._report import ReplayReport
from ._script import DiffOptions
from ._session import master_where
from ._spark import Resume, _error_columns, read_versions_df, replay_frames, write_frames
from ._spark_progress import SparkTasks
from ._state import DocumentState

__all__ = ["run_spark"]


def run_spark(spark: SparkSession, history: str, out: str, definitions: str | None = None, *,
              options: DiffOptions | None = None, namespaces: Mapping[str, str] | None = None,
              partitions: int | None = None, within: int | Duration | str | None = None,
              show: int = 5, progress: ReplayProgress | None = None,
              queries: Sequence[str] = (), checkpoint: str | os.PathLike[str] | None = None,
              reset: bool = False) -> ReplayReport:
    """Replay the version table ``history`` on ``spark`` and write its outputs under ``out``.

    The arguments are :func:`~._local.run_local`'s, and ``partitions`` for the diff stage
    (default: 4 per core). CEL ``queries`` run per document in the apply stage, the task
    that replays the document (:func:`~._spark.replay_frames`). With ``checkpoint`` (a
    folder of this machine, or one every machine mounts at that path: a path or
    ``file://``), only the versions it has not read are replayed, each document going on
    from its state in the apply stage, which writes the new states; run ``N``'s outputs go
    to ``out/<output>/run=N`` (replaced), then the driver commits the run
    (:mod:`._checkpoint`; the folder is the local engine's: either engine continues the
    other's runs).

    Returns:
        The report, with the seconds of the ``replay`` (reading, checking, diffing, applying,
        and the report's queries on the cached result) and of the ``writing``.

    Raises:
        VersionTableError: if ``history`` cannot be read as a version table.
        ExpressionSyntaxError, DefinitionError: for bad definitions, before any work.
        CELSyntaxError, CELQueryError: for a query that does not parse or that the automaton
            evaluator does not take, before any work.
        CheckpointError, FollowError: as for :func:`~._local.run_local`, before any work.
    """
    progress = progress or Silent()
    options = options or DiffOptions()
    ns = dict(namespaces or {})
    defs = DefinitionSet.of(definitions, namespaces=ns or None) if definitions else None
    check_queries(queries)  # so are the queries: before the table is read
    ck = None
    if checkpoint is not None:
        from ._follow import _local_folder  # --follow's check of the folder

        folder = os.path.abspath(_local_folder(str(checkpoint)))  # the workers' too
        local = "://" not in out or out.startswith("file://")  # (a cluster's: Spark's)
        if local:  # before a reset empties anything
            check_run_folders(urlparse(out).path if "://" in out else out)
        ck = open_runs(folder, fingerprint(defs, options=options, namespaces=ns,
                                           within=within, queries=queries), reset=reset)
        if local and reset:
            clear_runs(urlparse(out).path if "://" in out else out)
    tasks = (SparkTasks(spark.sparkContext, progress) if progress.shows_tasks
             else contextlib.nullcontext())
    report = ReplayReport(engine="spark", where=master_where(spark))
    start = time.perf_counter()
    progress.stage(f"reading {history}; checking, diffing and replaying its versions")
    with tasks:
        versions, unreadable = read_versions_df(spark, history)
        asked, reused = options.infer_keys, None
        kept = ck.with_keys(options) if asked and ck is not None else None
        if kept is not None:  # the first run's keys
            assert ck is not None
            reused, options = ck.keys, kept
        runs = None if ck is None else _Runs(spark, ck, versions)
        if runs is not None:
            versions = runs.fresh
            unreadable = unreadable.unionByName(runs.errors)
        frames = replay_frames(spark, versions, definitions, options=options,
                               namespaces=ns or None, partitions=partitions, within=within,
                               queries=queries, resume=None if runs is None else runs.resume)
        if asked:
            report.inferred, report.reused = frames.inferred, reused
            if ck is not None and reused is None:
                ck.keep_keys(frames.inferred or ())
        try:
            tagged = frames.tagged
            assert tagged is not None  # replay_frames always returns the table it split
            by = {(r["record"], r["type"], r["query"]): r["count"] for r in tagged.groupBy(
                "record", "type", "query").count().collect()}  # the job
            report.versions = sum(c for (rec, _, _), c in by.items() if rec == "version")
            report.events = sum(c for (rec, _, _), c in by.items() if rec == "event")
            report.composites = {t: c for (rec, t, _), c in by.items() if rec == "composite"}
            report.cel = {i: by.get(("cel", None, i), 0) for i in range(len(queries))}
            report.documents = tagged.where("record = 'version'").select("doc").distinct(
            ).count()
            report.shown = list(frames.first_composites(show))
            report.unselected = frames.unselected(options.keys)
            if defs is not None and any(report.composites.get(d.name, 0) == 0 for d in defs):
                paths = {r["path"]: r["count"]
                         for r in frames.events.groupBy("path").count().collect()}
                report.hints = namespace_hints(defs, ns, paths, report.composites)
            replayed = time.perf_counter()
            progress.stage(f"writing {out}/events, composites, errors, cel")
            if isinstance(tasks, SparkTasks):
                tasks.phase("writing")
            if runs is None:
                write_frames(frames, out, unreadable)
                errors = spark.read.parquet(f"{out}/errors")
            elif runs.nothing_new():
                errors = unreadable  # the table's unreadable entries alone make no run
            else:
                part = f"run={runs.checkpoint.next_run}"
                write_frames(frames, out, unreadable, partition=part)
                errors = spark.read.parquet(f"{out}/errors/{part}")
            report.errors = list(errors.orderBy(
                F.col("doc").asc_nulls_first(), F.col("version").asc_nulls_first()).collect())
            if runs is not None:
                report.run = runs.commit(definitions, options, ns or None, within, queries)
                if report.run.resumed:  # their elements were inserted by an earlier run
                    report.unselected = []
            written = time.perf_counter()
        finally:
            frames.unpersist()
            if runs is not None:
                runs.unpersist()
    report.times = [("replay", replayed - start), ("writing", written - replayed)]
    return report


# The checkpoint's documents as the driver reads them (the state files' headers).
_MARKS = T.StructType([T.StructField("doc", T.StringType(), False),
                       T.StructField("_sv", T.LongType(), True),
                       T.StructField("_read", T.LongType(), True),
                       T.StructField("_digest", T.StringType(), True),
                       T.StructField("_stopped", T.BooleanType(), False)])


class _Runs:
    """A run from a checkpoint on Spark (see :func:`run_spark`), on the driver: the state
    files' headers as a small table joined to the versions by document, giving ``fresh``
    (the versions the checkpoint has not read, of documents not stopped), ``errors`` (a
    changed last good version, the duplicates of a stopped document's new versions: as
    :func:`~._checkpoint.resume_history` reports them), ``resume`` (for the apply stage)
    and the counts of the summary."""

    def __init__(self, spark: SparkSession, ck: Checkpoint, versions: DataFrame) -> None:
        self.checkpoint = ck
        heads = list(ck.heads())
        marks = spark.createDataFrame(
            [(str(h["doc"]), h["version"], h["read"], h["digest"], bool(h["stopped"]))
             for h in heads], _MARKS)
        self._joined = joined = versions.join(F.broadcast(marks), "doc", "left").persist()
        read = F.col("_read")
        seen = read.isNotNull() & (F.col("version") <= read)
        stopped = F.coalesce(F.col("_stopped"), F.lit(False))
        self.fresh = joined.where(~seen & ~stopped).select(*versions.columns)
        first = Window.partitionBy("doc", "version").orderBy(F.monotonically_increasing_id())
        numbered = joined.withColumn("_k", F.row_number().over(first))
        dups = numbered.where(stopped & ~seen & (F.col("_k") > 1)).select(*_error_columns(
            doc=F.col("doc"), version=F.col("version"), commit=F.col("commit"),
            time=F.col("time"), stage=F.lit("input"), message=F.lit(DUPLICATE)))
        at = numbered.where(~stopped & (F.col("version") == F.col("_sv")) & (F.col("_k") == 1))
        changed = at.select("doc", "version", "xml", "commit", "time", "_digest").mapInPandas(
            _changed_rows, _CHANGED).select(*_error_columns(
                doc=F.col("doc"), version=F.col("version"), commit=F.col("commit"),
                time=F.col("time"), stage=F.lit(CHECKPOINT_STAGE), message=F.col("message")))
        self.errors = changed.unionByName(dups).persist()
        self._extra = self.errors.count()
        self.read = {r["doc"]: int(r["v"]) for r in self.fresh.groupBy("doc").agg(
            F.max("version").alias("v")).collect()}
        states = {str(h["doc"]): int(h["run"]) for h in heads if not h["stopped"]}
        self.resume = Resume(ck.path.as_posix(), ck.next_run, states, self.read)
        self.resumed = sum(1 for d in self.read if d in states)
        self.started = len(self.read) - self.resumed
        self.skipped = joined.where(seen).select("doc", "version").distinct().count()
        self.stopped = joined.where(stopped & ~seen).select("doc").distinct().count()

    def nothing_new(self) -> bool:
        """No version to replay and no error row: nothing to write or commit."""
        return not self.read and self._extra == 0

    def commit(self, definitions: str | None, options: DiffOptions,
               namespaces: dict[str, str] | None, within: int | Duration | str | None,
               queries: Sequence[str]) -> RunSummary:
        """After the outputs are written: the states the apply stage wrote taken in, those
        of the documents it never saw (every new version bad) written here, the manifest
        committed; what the run did."""
        ck = self.checkpoint
        if self.nothing_new():
            return RunSummary(ck.run, False, self.resumed, self.started, self.skipped,
                              self.stopped)
        ck.rescan()
        cel = check_queries(queries)
        for doc, read in self.read.items():
            if ck.written(doc):
                continue
            state = ck.state(doc)
            if state is None:
                history = DocumentHistory(doc, definitions, options=options,
                                          namespaces=namespaces, within=within, queries=cel)
            else:
                history = DocumentHistory.resume(state, definitions, options=options,
                                                 namespaces=namespaces, within=within,
                                                 queries=cel)
            history.read = read
            history.suspend = True
            history.close()
            assert history.state is not None  # close() with suspend keeps it
            ck.write(history.state)
        run = ck.commit()
        return RunSummary(run, True, self.resumed, self.started, self.skipped, self.stopped)

    def unpersist(self) -> None:
        self._joined.unpersist()
        self.errors.unpersist()


_CHANGED = T.StructType([T.StructField("doc", T.StringType()),
                         T.StructField("version", T.LongType()),
                         T.StructField("commit", T.StringType()),
                         T.StructField("time", T.LongType()),
                         T.StructField("message", T.StringType())])


def _changed_rows(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """The rows of the checkpoint's last good versions that differ from what it replayed
    (:func:`~._checkpoint._changed`), with why."""
    for b in batches:
        rows = []
        for doc, version, xml, commit, t, d in zip(b["doc"], b["version"], b["xml"],
                                                   b["commit"], b["time"], b["_digest"],
                                                   strict=False):
            why = _changed({"xml": xml}, DocumentState(str(doc), int(version), digest=d))
            if why is not None:
                rows.append({"doc": doc, "version": int(version), "commit": commit,
                             "time": None if pd.isna(t) else int(t), "message": why})
        yield pd.DataFrame(rows, columns=_CHANGED.fieldNames()).astype(
            {"version": "Int64", "time": "Int64"})
