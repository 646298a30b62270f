"""``xmlevents replay --engine local``: the replay job in this process, no JVM (issue 15).

The same job as on Spark (:func:`~._spark_job.run_spark`), with the same inputs and outputs:
the version table is read in process (:func:`~._tables.read_versions`, its unreadable
entries collected as error rows worded as the Spark reader words them), each document's
versions are replayed in order (:func:`~._history.replay_grouped`, the loop of
:func:`~._history.replay_history`; a duplicate version is an error row), and ``OUT/events``,
``OUT/composites`` and ``OUT/errors`` are written as Parquet datasets with pyarrow
(:func:`~._arrow.write_dataset`) in the schemas Spark writes. The rows are the Spark job's,
row for row; only their order within a table and the files' names differ.

One process does all the work: for histories that fit in memory and a machine's one core,
which is where Spark's start-up costs more than the replay.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from xmlevents._foundation.rows import COMPOSITES_TABLE, ERRORS_TABLE, EVENTS_TABLE
from xmlevents.algebra import DefinitionSet, Duration

from ._arrow import write_dataset
from ._cel import CEL_TABLE, check_queries
from ._history import HistoryResult, ordered_versions, replay_grouped
from ._progress import ReplayProgress, Silent
from ._report import ReplayReport, report_of
from ._script import DiffOptions
from ._tables import read_versions

__all__ = ["run_local", "write_result"]


def write_result(result: HistoryResult, out: str | os.PathLike[str]) -> None:
    """Write a replay's rows as ``out/events``, ``out/composites``, ``out/errors`` and
    ``out/cel`` (each replaced; ``cel`` empty without CEL queries), the Parquet datasets the
    Spark job writes.

    Raises:
        OSError: if a folder cannot be replaced or written.
    """
    for name, rows, schema in (("events", result.events, EVENTS_TABLE),
                               ("composites", result.composites, COMPOSITES_TABLE),
                               ("errors", result.errors, ERRORS_TABLE),
                               ("cel", result.cel, CEL_TABLE)):
        write_dataset(rows, schema, os.path.join(out, name))


def run_local(history: str, out: str, definitions: str | None = None, *,
              options: DiffOptions | None = None, namespaces: Mapping[str, str] | None = None,
              within: int | Duration | str | None = None, show: int = 5,
              progress: ReplayProgress | None = None, queries: Sequence[str] = ()
              ) -> ReplayReport:
    """Replay the version table ``history`` in process and write its outputs under ``out``.

    Args:
        history: the version table (JSON lines, maybe ``.gz``; Parquet; a folder).
        out: the folder of the outputs (``events``, ``composites``, ``errors`` replaced).
        definitions: definition text (None: only the events).
        options, namespaces, within: as for :func:`~._history.replay_history`.
        show: composites of each type to keep for the report.
        progress: what to report progress to (None: nothing).
        queries: CEL queries (CEQL text) to run over each document's primitive events
            (:mod:`._cel`), their complex events written to ``out/cel``.

    Returns:
        The report: counts, errors, the first composites, the warnings' facts, and the
        seconds spent ``reading``, in the ``replay`` and ``writing``.

    Raises:
        VersionTableError: if ``history`` is no version table (its bad lines are error rows).
        ExpressionSyntaxError, DefinitionError: for bad definitions, before any work.
        CELSyntaxError, CELQueryError: for a query that does not parse or that the automaton
            evaluator does not take, before any work.
        OSError: if the outputs cannot be written.
    """
    progress = progress or Silent()
    options = options or DiffOptions()
    ns = dict(namespaces or {})
    defs = DefinitionSet.of(definitions, namespaces=ns or None) if definitions else None
    cel = check_queries(queries)
    start = time.perf_counter()
    progress.stage(f"reading {history}")
    unreadable: list[dict[str, Any]] = []
    grouped, duplicates = ordered_versions(read_versions(history, unreadable))
    result = HistoryResult(errors=unreadable + duplicates, documents=len(grouped))
    read = time.perf_counter()
    total = sum(len(v) for v in grouped.values())
    progress.stage(f"replaying {total:,} version{'' if total == 1 else 's'} of "
                   f"{len(grouped):,} document{'' if len(grouped) == 1 else 's'} in process")
    progress.versions(len(grouped), total)
    replay_grouped(grouped, result, defs, options=options, namespaces=ns or None,
                   within=within, on_document=progress.document, on_version=progress.version,
                   queries=cel)
    replayed = time.perf_counter()
    progress.stage(f"writing {out}/events, composites, errors, cel")
    write_result(result, out)
    written = time.perf_counter()
    report = report_of(result, engine="local", where="in process, no JVM", show=show,
                       keys=options.keys, definitions=defs, namespaces=ns,
                       queries=len(cel))
    report.times = [("reading", read - start), ("replay", replayed - read),
                    ("writing", written - replayed)]
    return report
