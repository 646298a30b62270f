"""``xmlevents replay --engine local``: the replay job in this process, no JVM (issues 15, 29).

The same job as on Spark (:func:`~._spark_job.run_spark`), with the same inputs and outputs:
the version table is indexed in process (:func:`~._index.index_versions`: its unreadable
entries collected as error rows worded as the Spark reader words them, a duplicate version
an error row), each document's versions are replayed in order, read back one at a time
(:func:`~._history.history_steps`, the steps of :func:`~._history.iter_history`), and
``OUT/events``, ``OUT/composites``, ``OUT/errors`` and ``OUT/cel`` are written as Parquet
datasets with pyarrow as the rows are produced (:class:`~._arrow.DatasetWriter`, a row group
at a time) in the schemas Spark writes, the report counted as they pass
(:class:`~._tally.ReportTally`). The rows are the Spark job's, row for row; only their order
within a table and the files' names differ.

Memory follows the live state (issue 29): the index (some 50 bytes a version), one
document's replay state and the version being replayed, a row group of each output — not
the history's versions nor its rows. One process does all the work: for a machine's one
core, which is where Spark's start-up costs more than the replay.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from xmlevents._foundation.rows import COMPOSITES_TABLE, ERRORS_TABLE, EVENTS_TABLE
from xmlevents.algebra import DefinitionSet, Duration

from ._arrow import DatasetWriter
from ._cel import CEL_TABLE, check_queries
from ._checkpoint import (
    Checkpoint,
    CheckpointRun,
    check_run_folders,
    clear_runs,
    fingerprint,
    open_runs,
)
from ._history import HistoryResult, VersionRows, history_steps, inferred_keys
from ._index import index_versions
from ._infer import InferredKey
from ._keys import Key
from ._progress import ReplayProgress, Silent
from ._report import ReplayReport
from ._script import DiffOptions
from ._tally import ReportTally

__all__ = ["run_local", "show_keys", "write_result", "Outputs"]

#: The outputs, their folders' names and row forms, in the order they are written.
_OUTPUTS = (("events", EVENTS_TABLE), ("composites", COMPOSITES_TABLE),
            ("errors", ERRORS_TABLE), ("cel", CEL_TABLE))


class Outputs:
    """The four datasets of a replay (``out/events``, ``out/composites``, ``out/errors``,
    ``out/cel``, each replaced), written as rows arrive (:class:`~._arrow.DatasetWriter`);
    ``seconds`` is the time spent writing. With ``partition`` (``run=3``), the datasets are
    ``out/events/run=3`` ... (a run with a checkpoint).

    Raises:
        OSError: if a folder cannot be replaced or written.
    """

    def __init__(self, out: str | os.PathLike[str], *, rows: int | None = None,
                 partition: str | None = None) -> None:
        self.seconds = 0.0
        start = time.perf_counter()
        self.writers: dict[str, DatasetWriter] = {}
        try:
            for name, schema in _OUTPUTS:
                folder = os.path.join(out, name, *(() if partition is None else (partition,)))
                self.writers[name] = DatasetWriter(schema, folder, rows=rows)
        except BaseException:
            self.abort()
            raise
        self.seconds += time.perf_counter() - start

    def add(self, step: VersionRows) -> None:
        """Write (or hold, up to a row group) one step's rows."""
        self.add_rows(events=step.events, composites=step.composites, errors=step.errors,
                      cel=step.cel)

    def add_rows(self, **rows: Iterable[dict[str, Any]]) -> None:
        """Write (or hold) rows of the outputs named by the keywords."""
        start = time.perf_counter()
        for name, some in rows.items():
            if some:
                self.writers[name].add(some)
        self.seconds += time.perf_counter() - start

    def close(self) -> None:
        """Write what is held and close the datasets."""
        start = time.perf_counter()
        for writer in self.writers.values():
            writer.close()
        self.seconds += time.perf_counter() - start

    def abort(self) -> None:
        """Close the datasets, their files removed (a run that failed)."""
        for writer in self.writers.values():
            writer.abort()

    @property
    def rows(self) -> int:
        """The rows written or held, in all the outputs."""
        return sum(w.rows for w in self.writers.values())

    def remove(self) -> None:
        """Close the datasets and remove their folders (a run with nothing to write)."""
        self.abort()
        for writer in self.writers.values():
            shutil.rmtree(writer.folder, ignore_errors=True)


def write_result(result: HistoryResult, out: str | os.PathLike[str]) -> None:
    """Write a replay's rows as ``out/events``, ``out/composites``, ``out/errors`` and
    ``out/cel`` (each replaced; ``cel`` empty without CEL queries), the Parquet datasets the
    Spark job writes.

    Raises:
        OSError: if a folder cannot be replaced or written.
    """
    outputs = Outputs(out)
    try:
        outputs.add_rows(events=result.events, composites=result.composites,
                         errors=result.errors, cel=result.cel)
    except BaseException:
        outputs.abort()
        raise
    outputs.close()


def run_local(history: str, out: str, definitions: str | None = None, *,
              options: DiffOptions | None = None, namespaces: Mapping[str, str] | None = None,
              within: int | Duration | str | None = None, show: int = 5,
              progress: ReplayProgress | None = None, queries: Sequence[str] = (),
              checkpoint: str | os.PathLike[str] | None = None, reset: bool = False
              ) -> ReplayReport:
    """Replay the version table ``history`` in process and write its outputs under ``out``
    as they are produced (see the module for what is held).

    Args:
        history: the version table (JSON lines, maybe ``.gz``; Parquet; a folder).
        out: the folder of the outputs (``events``, ``composites``, ``errors``, ``cel``
            replaced; with ``checkpoint``, their partition ``run=N`` replaced).
        definitions: definition text (None: only the events).
        options, namespaces, within: as for :func:`~._history.replay_history`.
        show: composites of each type to keep for the report.
        progress: what to report progress to (None: nothing).
        queries: CEL queries (CEQL text) to run over each document's primitive events
            (:mod:`._cel`), their complex events written to ``out/cel``.
        checkpoint: a checkpoint folder (a path, or a ``file://`` URI; made if missing):
            only the versions it has not read are replayed, each document going on from its
            state, and the run's rows go to ``out/<output>/run=N/``
            (:mod:`._checkpoint`); the report's ``run`` says what the run did.
        reset: empty the checkpoint first (a replay from the start) and remove the
            ``run=`` partitions of ``out``.

    Returns:
        The report: counts, errors, the first composites, the warnings' facts, and the
        seconds spent ``reading`` (the table's first pass), in the ``replay`` and
        ``writing`` (the outputs, as they were written and closed).

    Raises:
        VersionTableError: if ``history`` is no version table (its bad lines are error rows).
        ExpressionSyntaxError, DefinitionError: for bad definitions, before any work.
        CELSyntaxError, CELQueryError: for a query that does not parse or that the automaton
            evaluator does not take, before any work.
        CheckpointError: a checkpoint of other definitions or options (named), of another
            format or library version, a follower's, a damaged state; an output folder
            holding a plain replay's files (before any work).
        FollowError: a checkpoint URL other than ``file://``.
        OSError: if the outputs cannot be written.
    """
    progress = progress or Silent()
    options = options or DiffOptions()
    ns = dict(namespaces or {})
    defs = DefinitionSet.of(definitions, namespaces=ns or None) if definitions else None
    cel = check_queries(queries)
    runs: CheckpointRun | None = None
    ck: Checkpoint | None = None
    if checkpoint is not None:
        folder = str(checkpoint)
        if "://" in folder:
            from ._follow import _local_folder  # the check --follow makes (imports pyspark)

            folder = _local_folder(folder)
        prints = fingerprint(defs, options=options, namespaces=ns, within=within,
                             queries=queries)
        check_run_folders(out)  # before a reset empties anything
        ck = open_runs(folder, prints, reset=reset)
        if reset:
            clear_runs(out)
    start = time.perf_counter()
    progress.stage(f"reading {history}")
    unreadable: list[dict[str, Any]] = []
    with index_versions(history, unreadable) as index:
        read = time.perf_counter()
        documents, total = len(index.documents), len(index)
        keys: VersionRows | None = None
        asked, reused = options.infer_keys, None
        if options.infer_keys:
            kept = ck.with_keys(options) if ck is not None else None
            if kept is not None:  # the first run's: keep diffing alike
                assert ck is not None
                reused, options = ck.keys, kept
            else:  # a first pass over the table, parsing the sample only
                progress.stage("inferring keys")
                options, keys = inferred_keys(options, iter(index), dict(index.documents))
                if ck is not None:
                    ck.keep_keys(keys.inferred)
        inferring = time.perf_counter() - read
        if ck is not None:
            runs = CheckpointRun(ck, defs, options=options, namespaces=ns or None,
                                 within=within, queries=cel)
        progress.stage(f"replaying {total:,} version{'' if total == 1 else 's'} of "
                       f"{documents:,} document{'' if documents == 1 else 's'} in process")
        progress.versions(documents, total)
        tally = ReportTally(show, options.keys)
        if runs is None:
            outputs = Outputs(out)
            steps = history_steps(index, defs, options=options, namespaces=ns or None,
                                  within=within, on_document=progress.document,
                                  on_version=progress.version, queries=cel)
        else:
            outputs = Outputs(out, partition=f"run={runs.checkpoint.next_run}")
            unreadable = runs.fresh(unreadable)
            steps = runs.steps(index, progress.document, progress.version)
        try:
            # The table's unreadable entries alone (a line that is not JSON, read again by
            # every run) make no run: a run is something replayed.
            outputs.add_rows(errors=unreadable)
            tally.add_rows(errors=unreadable)
            if keys is not None:
                outputs.add(keys)
                tally.add(keys)
            for step in steps:
                outputs.add(step)
                tally.add(step)
            replayed = time.perf_counter()
            progress.stage(f"writing {out}/events, composites, errors, cel")
            committed = False
            if runs is not None and outputs.rows == len(unreadable) and not runs.written:
                outputs.remove()  # nothing new: nothing written, nothing committed
            else:
                outputs.close()
                if runs is not None:  # the outputs first, then the states' manifest
                    runs.checkpoint.commit()
                    committed = True
        except BaseException:
            outputs.abort()
            raise
    written = time.perf_counter()
    report = tally.report(engine="local", where="in process, no JVM", definitions=defs,
                          namespaces=ns, queries=len(cel))
    if asked:
        report.inferred, report.reused = (None, reused) if reused is not None else (
            list(tally.inferred), None)
    if runs is not None:
        report.run = runs.summary(committed)
        if runs.resumed:  # their elements were inserted by an earlier run
            report.unselected = []
    writing = outputs.seconds
    report.times = [("reading", read - start), *([("keys", inferring)] if keys else []),
                    ("replay", replayed - read - inferring - (writing - (written - replayed))),
                    ("writing", writing)]
    return report


def show_keys(history: str, options: DiffOptions | None = None
              ) -> tuple[list[Key], list[InferredKey]]:
    """The keys ``options`` give, and those inferred from the version table ``history``
    for the other elements (read in process, its sample parsed: :mod:`._infer`), without
    replaying anything (``xmlevents replay --show-keys``).

    Raises:
        VersionTableError: if ``history`` is no version table.
    """
    options = options or DiffOptions(infer_keys=True)
    with index_versions(history, []) as index:
        _, step = inferred_keys(options, iter(index), dict(index.documents))
    return list(options.keys), list(step.inferred)
