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
import time
from collections.abc import Mapping, Sequence

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from xmlevents.algebra import DefinitionSet, Duration

from ._cel import check_queries
from ._hints import namespace_hints
from ._progress import ReplayProgress, Silent
from ._report import ReplayReport
from ._script import DiffOptions
from ._session import master_where
from ._spark import read_versions_df, replay_frames, write_frames
from ._spark_progress import SparkTasks

__all__ = ["run_spark"]


def run_spark(spark: SparkSession, history: str, out: str, definitions: str | None = None, *,
              options: DiffOptions | None = None, namespaces: Mapping[str, str] | None = None,
              partitions: int | None = None, within: int | Duration | str | None = None,
              show: int = 5, progress: ReplayProgress | None = None,
              queries: Sequence[str] = ()) -> ReplayReport:
    """Replay the version table ``history`` on ``spark`` and write its outputs under ``out``.

    The arguments are :func:`~._local.run_local`'s, and ``partitions`` for the diff stage
    (default: 4 per core). CEL ``queries`` run per document in the apply stage, the task
    that replays the document (:func:`~._spark.replay_frames`).

    Returns:
        The report, with the seconds of the ``replay`` (reading, checking, diffing, applying,
        and the report's queries on the cached result) and of the ``writing``.

    Raises:
        VersionTableError: if ``history`` cannot be read as a version table.
        ExpressionSyntaxError, DefinitionError: for bad definitions, before any work.
        CELSyntaxError, CELQueryError: for a query that does not parse or that the automaton
            evaluator does not take, before any work.
    """
    progress = progress or Silent()
    options = options or DiffOptions()
    ns = dict(namespaces or {})
    defs = DefinitionSet.of(definitions, namespaces=ns or None) if definitions else None
    check_queries(queries)  # so are the queries: before the table is read
    tasks = (SparkTasks(spark.sparkContext, progress) if progress.shows_tasks
             else contextlib.nullcontext())
    report = ReplayReport(engine="spark", where=master_where(spark))
    start = time.perf_counter()
    progress.stage(f"reading {history}; checking, diffing and replaying its versions")
    with tasks:
        versions, unreadable = read_versions_df(spark, history)
        frames = replay_frames(spark, versions, definitions, options=options,
                               namespaces=ns or None, partitions=partitions, within=within,
                               queries=queries)
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
            write_frames(frames, out, unreadable)
            report.errors = list(spark.read.parquet(f"{out}/errors").orderBy(
                F.col("doc").asc_nulls_first(), F.col("version").asc_nulls_first()).collect())
            written = time.perf_counter()
        finally:
            frames.unpersist()
    report.times = [("replay", replayed - start), ("writing", written - replayed)]
    return report
