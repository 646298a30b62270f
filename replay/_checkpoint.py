"""Run after run: a replay resumed from a checkpoint folder (issue 29, item 4).

:func:`resume_history` replays only the versions a checkpoint has not seen, each document
going on from its :class:`~._state.DocumentState` (:meth:`DocumentHistory.resume
<._history.DocumentHistory.resume>`), and commits the new states. A history replayed in
two runs gives the same rows as in one (ids, events, composites, errors, CEL rows).

The folder::

    CKPT/manifest.json            {"format": 1, "library": "0.1.0", "run": N,
                                   "fingerprint": {part: sha256, ...}, "documents": D}
    CKPT/documents/<h>.<r>.state  one document's state as of run r; <h> is the sha256 of
                                  the document's name (any name: "/", "..", unicode), the
                                  name itself is inside

A state file is a JSON header line (format, library version, document, run) and the pickled
:class:`~._state.DocumentState`. Every file is written atomically (a temporary file in the
folder, flushed and fsynced, renamed over, the folder fsynced). A run ``N`` writes
``<h>.N.state`` for the documents it replayed, never touching a file of an earlier run, and
commits by writing the manifest with ``run: N`` last: a document's state is its newest file
of a run at or below the manifest's. A run that crashes before the manifest leaves the
previous checkpoint exactly as it was (its files of run ``N`` are deleted when the folder is
next opened, before the rerun writes its own); after a commit the files it superseded are
deleted. One run at a time writes a
folder. Pickle runs code when loaded: a checkpoint folder is as trusted as the library.

The fingerprint is a digest per part of everything that changes the rows: the definitions
(parsed and printed, so comments and spacing do not count), the CEL queries, the
:class:`~._script.DiffOptions` (keys included), the namespaces, the window and the graph's
context, hierarchy and semantics. A checkpoint made with another fingerprint, format or
library version is refused (:class:`~._state.CheckpointError`, naming what changed); start
a new folder or reset this one (``reset=True``; the command line's ``--checkpoint-reset``).

Input rows: a document's rows at or below the last version the checkpoint read were
replayed (or refused) before and are skipped — but the row of the last good version is
checked against the state's digest, and one that differs is an error row
(``stage="checkpoint"``): a version cannot change once replayed. A document the checkpoint
has at a newer version than any of its rows gets a :class:`CheckpointNote` warning. A
document whose replay stopped for good (an error row said so) stays stopped.

The outputs of run ``N`` (``out=``) go to a partition of their own, ``OUT/events/run=N/``
(and ``composites``, ``errors``, ``cel``), replaced if it exists and written before the
manifest: a rerun after a crash replaces the partition, never duplicates it, and reading
``OUT/events`` as a (hive-partitioned) dataset sees every run, with a ``run`` column. A run
with no rows at all commits nothing (no partition, the run number stays).

The command line's engines run the same rules (``replay --checkpoint``): in process,
:class:`CheckpointRun` streams each document's new versions from its state, writing the run's
outputs as they are produced and each new state as its document ends; on Spark
(:func:`~._spark_job.run_spark`) the driver reads the state files' header lines
(:meth:`Checkpoint.heads`: version, last read, digest, stopped) to drop the versions already
read before the diff stage, and the apply stage reads and writes the states
(:func:`read_state`, :func:`write_state`; both engines replay a document with
:func:`resumed_document`). Either engine continues the other's runs.

A checkpointed history never ends: the composites a plain replay raises when it closes each
document at the end of the input (what the monitor held: custom and non-local modes) are
held for the next run, not raised; so one run with a checkpoint equals several, and may
lack those end-of-input composites of :func:`~._history.replay_history`. CEL rows come by
position (the queries of a position in order), and a query failing on a document keeps the
rows it found before (their error row is at the version it failed at).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import pickle
import re
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xmlevents.algebra import DefinitionSet, Duration

from ._cel import CEL_STAGE, CEL_TABLE, CelQuery, check_queries
from ._history import (
    DUPLICATE,
    DocumentHistory,
    HistoryResult,
    VersionRows,
    error_row,
    grouped_versions,
    inferred_keys,
    iter_document,
    ordered_versions,
)
from ._infer import InferredKey
from ._keys import Key
from ._script import DiffOptions, digest, parse_plain
from ._state import CheckpointError, DocumentState

if TYPE_CHECKING:
    from ._index import VersionIndex

__all__ = ["FORMAT", "CHECKPOINT_STAGE", "Checkpoint", "CheckpointNote", "CheckpointRun",
           "RunSummary", "fingerprint", "open_runs", "read_state", "write_state",
           "resumed_document",
           "resume_history", "write_run", "check_run_folders", "clear_runs"]

#: The format of the folder and its state files; another is refused.
FORMAT = 1

#: The ``stage`` of an error row for a row that differs from the version the checkpoint
#: replayed.
CHECKPOINT_STAGE = "checkpoint"

_MANIFEST = "manifest.json"
_DOCUMENTS = "documents"
_STATE = re.compile(r"^([0-9a-f]{64})\.([0-9]+)\.state$")

# What each part of the fingerprint is called in a message.
_PARTS = {"definitions": "other definitions", "queries": "other CEL queries",
          "options": "other diff options (keys, unique tags, identical subtrees, xmldiff's)",
          "namespaces": "other namespaces", "within": "another window (within)",
          "graph": "another context, hierarchy or semantics"}


class CheckpointNote(UserWarning):
    """Something about the input and the checkpoint worth knowing that is no error: a
    document the checkpoint has at a newer version than the input."""


def _library() -> str:
    from importlib import metadata  # (when a checkpoint is used: not at import)

    try:
        return metadata.version("xmlevents")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source tree not installed
        return "unknown"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint(definitions: Any = None, *, options: DiffOptions | None = None,
                namespaces: Mapping[str, str] | None = None,
                within: int | Duration | str | None = None, queries: Sequence[str] = (),
                context: str = "chronicle", hierarchical: bool = True,
                semantics: str = "interval") -> dict[str, str]:
    """A digest per part of what changes a replay's rows (see the module): two replays with
    equal fingerprints give the same rows for the same input.

    Raises:
        ExpressionSyntaxError, DefinitionError: for bad definitions.
    """
    ns = dict(namespaces or {})
    if definitions is None:
        defs = ""
    else:
        parsed = DefinitionSet.of(definitions, namespaces=ns or None)
        defs = "\n".join(str(d.definition) for d in parsed)
    return {
        "definitions": _sha(defs),
        "queries": _sha(json.dumps([q.strip() for q in queries])),
        "options": _sha(repr(options or DiffOptions())),
        "namespaces": _sha(json.dumps(sorted(ns.items()))),
        "within": _sha(repr(str(within) if within is not None else None)),
        "graph": _sha(json.dumps([context, hierarchical, semantics])),
    }


def _write_atomic(path: Path, data: bytes) -> None:
    """``data`` as ``path``, whole or not at all (see the module)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - a platform without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)



def _state_name(doc: str, run: int) -> str:
    return f"{_sha(doc)}.{run}.state"


def read_state(folder: str | os.PathLike[str], doc: str, run: int) -> DocumentState:
    """``doc``'s state file of run ``run`` in the checkpoint folder ``folder`` (a Spark
    worker reads it so, the driver having named the run: :meth:`Checkpoint.heads`).

    Raises:
        CheckpointError: the file is missing, damaged or of another format or library
            version.
    """
    path = Path(folder) / _DOCUMENTS / _state_name(doc, run)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CheckpointError(f"{path}: the state of {doc!r} cannot be read: "
                              f"{exc.strerror or exc}") from None
    head, _, body = data.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        raise CheckpointError(f"{path}: not a state file") from None
    if header.get("format") != FORMAT or header.get("library") != _library():
        raise CheckpointError(
            f"{path}: a state of format {header.get('format')} by xmlevents "
            f"{header.get('library')}; this library reads format {FORMAT} of "
            f"{_library()}: use a new checkpoint folder or reset this one")
    if header.get("doc") != doc:
        raise CheckpointError(f"{path}: the state of {header.get('doc')!r}, not {doc!r}")
    try:
        state = pickle.loads(body)
    except Exception as exc:
        raise CheckpointError(f"{path}: the state cannot be read: {exc}") from None
    if not isinstance(state, DocumentState) or state.doc != doc:
        raise CheckpointError(f"{path}: not the state of {doc!r}")
    return state


def write_state(folder: str | os.PathLike[str], run: int, state: DocumentState) -> str:
    """Write ``state`` as its document's file of run ``run`` in the checkpoint folder
    ``folder``, atomically (a Spark worker writes so; it counts once the driver commits
    the run). The header line holds, besides the format, library, document and run, the
    state's ``version``, ``read``, ``digest`` and whether it ``stopped``: what a driver
    reads of every document (:meth:`Checkpoint.heads`). Returns the file's name."""
    header = json.dumps({"format": FORMAT, "library": _library(), "doc": state.doc,
                         "run": run, "version": state.version, "read": state.read,
                         "digest": state.digest, "stopped": state.stopped is not None},
                        ensure_ascii=True).encode("ascii")
    name = _state_name(state.doc, run)
    _write_atomic(Path(folder) / _DOCUMENTS / name,
                  header + b"\n" + pickle.dumps(state, protocol=5))
    return name


class Checkpoint:
    """A checkpoint folder, opened for one run (see the module for the layout).

    Use :meth:`open`; :attr:`run` is the last committed run (0: none), :attr:`next_run`
    the one being written. :meth:`state` reads a document's state, :meth:`write` saves one
    for the next run, :meth:`commit` makes them the checkpoint.
    """

    def __init__(self, path: Path, run: int, prints: dict[str, str],
                 keys: list[str] | None = None) -> None:
        self.path = path
        self.run = run
        self.fingerprint = prints
        #: The keys the first run inferred (``DiffOptions(keys="auto")``), as declarations
        #: (Clark names): every later run diffs with them, not with a new inference.
        self.keys = keys
        self._files: dict[str, list[tuple[int, str]]] = {}
        folder = path / _DOCUMENTS
        for name in os.listdir(folder):
            m = _STATE.match(name)
            if not m:
                continue
            if int(m.group(2)) > run:
                # A run that crashed before its manifest: its states never counted, and must
                # not count once this run commits the same number.
                with contextlib.suppress(OSError):
                    os.unlink(folder / name)
                continue
            self._files.setdefault(m.group(1), []).append((int(m.group(2)), name))

    @property
    def next_run(self) -> int:
        return self.run + 1

    @classmethod
    def open(cls, path: str | os.PathLike[str], prints: dict[str, str], *,
             reset: bool = False) -> Checkpoint:
        """The folder at ``path`` (made if missing), for a replay of fingerprint ``prints``
        (:func:`fingerprint`); with ``reset``, an existing checkpoint is emptied first.

        Raises:
            CheckpointError: the folder holds a checkpoint of another format, library
                version or fingerprint (the message names what changed), or something else.
        """
        folder = Path(path)
        manifest = folder / _MANIFEST
        if reset and manifest.exists():
            cls._empty(folder)
        if not manifest.exists():
            if folder.exists() and any(p.name not in (_DOCUMENTS,) for p in folder.iterdir()):
                raise CheckpointError(f"{folder}: not a checkpoint folder (it holds other "
                                      "files and no manifest.json): give an empty or new one")
            (folder / _DOCUMENTS).mkdir(parents=True, exist_ok=True)
            return cls(folder, 0, prints)
        try:
            data = json.loads(manifest.read_text("utf-8"))
            fmt, library, run, old = (data["format"], data["library"], int(data["run"]),
                                      dict(data["fingerprint"]))
            keys = None if data.get("keys") is None else [str(k) for k in data["keys"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"{manifest}: not a checkpoint manifest ({exc})") from None
        remedy = ("use a new checkpoint folder or reset this one (--checkpoint-reset, "
                  "reset=True): it is then replayed from the start")
        if fmt != FORMAT:
            raise CheckpointError(f"{folder}: the checkpoint has format {fmt}, this library "
                                  f"reads format {FORMAT}; {remedy}")
        if library != _library():
            raise CheckpointError(f"{folder}: the checkpoint was made by xmlevents {library}, "
                                  f"this is {_library()}; {remedy}")
        changed = [_PARTS.get(k, k) for k in sorted(set(old) | set(prints))
                   if old.get(k) != prints.get(k)]
        if changed:
            raise CheckpointError(f"{folder}: the checkpoint was made with "
                                  f"{', '.join(changed)}; {remedy}")
        (folder / _DOCUMENTS).mkdir(exist_ok=True)
        return cls(folder, run, prints, keys)

    def with_keys(self, options: DiffOptions) -> DiffOptions | None:
        """``options`` (keys inferred) with the keys the first run inferred instead: every
        later run diffs with them. None while no run has kept any."""
        if self.keys is None:
            return None
        return options.with_inferred([Key.parse(k) for k in self.keys])

    def keep_keys(self, inferred: Iterable[InferredKey]) -> None:
        """Keep the keys this (first) run inferred, for the runs after it (the manifest)."""
        self.keys = [str(k.key) for k in inferred]

    @staticmethod
    def _empty(folder: Path) -> None:
        (folder / _MANIFEST).unlink()
        docs = folder / _DOCUMENTS
        if docs.is_dir():
            for p in docs.iterdir():
                p.unlink()

    @staticmethod
    def _key(doc: str) -> str:
        return _sha(doc)

    def state(self, doc: str) -> DocumentState | None:
        """``doc``'s state as of the last committed run (None: the checkpoint has not seen it).

        Raises:
            CheckpointError: its file is damaged or of another format or library version.
        """
        run = self.state_run(doc)
        return None if run is None else read_state(self.path, doc, run)

    def state_run(self, doc: str) -> int | None:
        """The run of ``doc``'s state file (None: the checkpoint has not seen it)."""
        files = [r for r, _ in self._files.get(self._key(doc), ()) if r <= self.run]
        return max(files) if files else None

    def heads(self) -> Iterator[dict[str, Any]]:
        """The header of each document's state of the last committed run (``doc``,
        ``version``, ``read``, ``digest``, ``stopped``, ``run``: :func:`write_state`), read
        without the state: what a driver needs to drop the versions already replayed."""
        for files in self._files.values():
            kept = [f for f in files if f[0] <= self.run]
            if not kept:
                continue
            _, name = max(kept)
            path = self.path / _DOCUMENTS / name
            with open(path, "rb") as f:
                head = f.readline()
            try:
                header = json.loads(head)
            except ValueError:
                raise CheckpointError(f"{path}: not a state file") from None
            if "digest" not in header:  # a state file written before headers said it
                state = read_state(self.path, str(header.get("doc")), int(header["run"]))
                header = {**header, "version": state.version, "read": state.read,
                          "digest": state.digest, "stopped": state.stopped is not None}
            yield header

    def write(self, state: DocumentState) -> None:
        """Save ``state`` for the next run (it counts once :meth:`commit` is done)."""
        name = write_state(self.path, self.next_run, state)
        files = self._files.setdefault(self._key(state.doc), [])
        if (self.next_run, name) not in files:
            files.append((self.next_run, name))

    def written(self, doc: str) -> bool:
        """Whether ``doc`` has a state file of the next run (after :meth:`rescan`)."""
        return any(r == self.next_run for r, _ in self._files.get(self._key(doc), ()))

    def rescan(self) -> None:
        """Take in the state files of the next run written by other processes (Spark's
        workers: :func:`write_state`), before :meth:`commit`."""
        for name in os.listdir(self.path / _DOCUMENTS):
            m = _STATE.match(name)
            if m and int(m.group(2)) == self.next_run:
                files = self._files.setdefault(m.group(1), [])
                if (self.next_run, name) not in files:
                    files.append((self.next_run, name))

    def commit(self) -> int:
        """Make the states written the checkpoint: the manifest of the next run, written
        last; then delete the files it superseded. Returns the run committed."""
        run = self.next_run
        manifest = {"format": FORMAT, "library": _library(), "run": run,
                    "fingerprint": self.fingerprint, "documents": len(self._files),
                    "keys": self.keys}
        _write_atomic(self.path / _MANIFEST,
                      (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode("utf-8"))
        self.run = run
        for key, files in self._files.items():
            keep = max((f for f in files if f[0] <= run), default=None)
            for f in files:
                if f != keep:
                    with contextlib.suppress(OSError):
                        os.unlink(self.path / _DOCUMENTS / f[1])
            self._files[key] = [keep] if keep is not None else []
        return run


def _grouped(rows: Iterable[Mapping[str, Any]]
             ) -> tuple[dict[str, list[Mapping[str, Any]]], dict[str, list[Mapping[str, Any]]]]:
    """Rows by document, ordered by version (:func:`~._history.grouped_versions`), and the
    second rows of a version by document: whether one is an error depends on the
    document's state."""
    grouped, seconds = grouped_versions(rows)
    dups: dict[str, list[Mapping[str, Any]]] = {}
    for row in seconds:
        dups.setdefault(str(row["doc"]), []).append(row)
    return grouped, dups


def _changed(row: Mapping[str, Any], state: DocumentState) -> str | None:
    """Why ``row``, of the last good version the checkpoint replayed, is not that version
    (None: it is)."""
    try:
        same = digest(parse_plain(row["xml"])) == state.digest
    except Exception:  # not even XML: not what was replayed
        same = False
    if same:
        return None
    return (f"version {state.version} differs from the one the checkpoint replayed; a version "
            "cannot change once replayed (replay into a new checkpoint folder, or reset it)")


def resume_history(rows: Iterable[Mapping[str, Any]],
                   checkpoint: str | os.PathLike[str], definitions: Any = None, *,
                   options: DiffOptions | None = None,
                   namespaces: dict[str, str] | None = None,
                   within: int | Duration | str | None = None, queries: Sequence[str] = (),
                   reset: bool = False, out: str | os.PathLike[str] | None = None
                   ) -> HistoryResult:
    """Replay the version table ``rows`` from the checkpoint folder ``checkpoint`` (see the
    module): only the versions it has not read, each document going on from its state;
    the new states are committed, and with ``out`` this run's rows are written first to
    ``OUT/<output>/run=N/``. Returns this run's rows.

    Args:
        rows: rows with ``doc``, ``version``, ``xml`` (and ``commit``, ``time``).
        checkpoint: the folder (made if missing).
        definitions, options, namespaces, within, queries: as for
            :func:`~._history.replay_history`; they must be the checkpoint's.
        reset: empty the checkpoint first (a replay from the start).
        out: where to write this run's outputs (None: not written).

    Raises:
        CheckpointError: a checkpoint of other definitions or options (named), another
            format or library version, a damaged state.
        CELSyntaxError, CELQueryError: for a bad query, before any work.

    Warns:
        CheckpointNote: a document the checkpoint has at a newer version than the input.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> first = resume_history([{"doc": "d", "version": 0, "xml": "<a/>"}], folder)
    >>> again = resume_history([{"doc": "d", "version": 0, "xml": "<a/>"},
    ...                         {"doc": "d", "version": 1, "xml": "<a><b/></a>"}], folder)
    >>> [(e["version"], e["op"], e["path"]) for e in again.events]
    [(1, 'ins', '/a/b')]
    """
    cel = check_queries(queries)
    ns = dict(namespaces or {})
    defs = DefinitionSet.of(definitions, namespaces=ns or None) if definitions is not None \
        else None
    prints = fingerprint(defs, options=options, namespaces=ns, within=within, queries=queries)
    ck = Checkpoint.open(checkpoint, prints, reset=reset)
    grouped, dups = _grouped(rows)
    result = HistoryResult(documents=len(grouped))
    if options is not None and options.infer_keys:  # the first run's keys, kept after it
        reused = ck.with_keys(options)
        if reused is not None:
            options = reused
        else:
            options, step = inferred_keys(options, (r for vs in grouped.values() for r in vs),
                                          {d: len(vs) for d, vs in grouped.items()})
            result.keep(step)
            ck.keep_keys(step.inferred)
    written: list[DocumentState] = []
    for doc, versions in grouped.items():
        state = ck.state(doc)
        read = state.read if state is not None else None
        fresh = [r for r in versions if read is None or int(r["version"]) > read]
        if state is not None:
            if state.version is not None and state.stopped is None:
                at = next((r for r in versions if int(r["version"]) == state.version), None)
                why = _changed(at, state) if at is not None else None
                if at is not None and why is not None:
                    result.errors.append(error_row(doc, state.version, CHECKPOINT_STAGE, why,
                                                   commit=at.get("commit"),
                                                   time=at.get("time")))
            if read is not None and not fresh:
                newest = int(versions[-1]["version"])
                if newest < read:
                    warnings.warn(f"{doc}: the checkpoint has it up to version {read}, the "
                                  f"input only up to version {newest}: nothing to replay",
                                  CheckpointNote, stacklevel=2)
        result.errors.extend(
            error_row(doc, int(r["version"]), "input", DUPLICATE, commit=r.get("commit"),
                      time=r.get("time"))
            for r in dups.get(doc, ()) if read is None or int(r["version"]) > read)
        if not fresh or (state is not None and state.stopped is not None):
            continue
        new = _replay(doc, state, fresh, result, defs, options=options, namespaces=ns or None,
                      within=within, queries=cel)
        written.append(new)
    if not (result.events or result.composites or result.errors or result.cel or written):
        return result  # nothing new: nothing to commit
    if out is not None:
        write_run(result, out, ck.next_run)
    for s in written:
        ck.write(s)
    ck.commit()
    return result


def _suspended(doc: str, state: DocumentState | None, definitions: Any, *,
               options: DiffOptions | None, namespaces: dict[str, str] | None,
               within: int | Duration | str | None, queries: Sequence[CelQuery]
               ) -> DocumentHistory:
    """A document's history going on from ``state`` (None: from the start), suspended:
    its ``close()`` ends the run, not the history, and keeps the state."""
    if state is None:
        history = DocumentHistory(doc, definitions, options=options, namespaces=namespaces,
                                  within=within, queries=queries)
    else:
        history = DocumentHistory.resume(state, definitions, options=options,
                                         namespaces=namespaces, within=within,
                                         queries=queries)
    history.suspend = True
    return history


def _replay(doc: str, state: DocumentState | None, versions: list[Mapping[str, Any]],
            result: HistoryResult, definitions: DefinitionSet | None, *,
            options: DiffOptions | None, namespaces: dict[str, str] | None,
            within: int | Duration | str | None, queries: Sequence[CelQuery]
            ) -> DocumentState:
    """One document's new versions replayed from ``state`` (None: from the start) into
    ``result``; its new state."""
    new: list[DocumentState] = []
    for step in resumed_document(doc, state, ((int(r["version"]), r["xml"], None, None,
                                               r.get("time"), r.get("commit"))
                                              for r in versions),
                                 definitions, options=options, namespaces=namespaces,
                                 within=within, queries=queries, done=new.append):
        if step.kind == "end":
            result.keep(step)  # the caller counts the documents
        else:
            result.add(step)
    return new[0]


def write_run(result: HistoryResult, out: str | os.PathLike[str], run: int) -> None:
    """Write a run's rows as ``out/<output>/run=<run>/`` for the four outputs, each
    partition replaced (see the module).

    Raises:
        CheckpointError: an output folder holds files beside its ``run=`` partitions (a
            plain replay's output: give the checkpointed runs a folder of their own).
        OSError: if a folder cannot be replaced or written.
    """
    from xmlevents._foundation.rows import COMPOSITES_TABLE, ERRORS_TABLE, EVENTS_TABLE

    from ._arrow import write_dataset

    check_run_folders(out)
    for name, rows, schema in (("events", result.events, EVENTS_TABLE),
                               ("composites", result.composites, COMPOSITES_TABLE),
                               ("errors", result.errors, ERRORS_TABLE),
                               ("cel", result.cel, CEL_TABLE)):
        write_dataset(rows, schema, os.path.join(out, name, f"run={run}"))


def check_run_folders(out: str | os.PathLike[str]) -> None:
    """Refuse an output folder whose ``events``, ``composites``, ``errors`` or ``cel`` holds
    files beside its ``run=`` partitions (see :func:`write_run`)."""
    for name in ("events", "composites", "errors", "cel"):
        folder = Path(out) / name
        if folder.is_dir():
            other = [p.name for p in folder.iterdir() if not p.name.startswith("run=")]
            if other:
                raise CheckpointError(
                    f"{folder} holds {other[0]!r}, not only runs (run=N): a replay's output "
                    "without a checkpoint? Give the checkpointed runs an output folder of "
                    "their own")


def clear_runs(out: str | os.PathLike[str]) -> None:
    """Remove the ``run=`` partitions of ``out``'s outputs: a checkpoint reset replays from
    the start, and the old runs' rows would be there twice."""
    for name in ("events", "composites", "errors", "cel"):
        folder = Path(out) / name
        if folder.is_dir():
            for p in folder.iterdir():
                if p.name.startswith("run=") and p.is_dir():
                    shutil.rmtree(p)


# --- runs of the command line's engines ----------------------------------------------------

#: The marker of a follower's checkpoint folder (``replay --follow``: :mod:`._follow`).
_FOLLOWER = "follow.json"


def open_runs(path: str | os.PathLike[str], prints: dict[str, str], *,
              reset: bool = False) -> Checkpoint:
    """:meth:`Checkpoint.open` for the runs of ``replay --checkpoint`` (either engine): a
    follower's folder (``replay --follow``, whose states live in Spark's state store) is
    refused, reset or not.

    Raises:
        CheckpointError: as :meth:`Checkpoint.open`, or a follower's folder.
    """
    if (Path(path) / _FOLLOWER).exists():
        raise CheckpointError(f"{path}: the checkpoint of a follower (replay --follow keeps "
                              "its states in Spark's state store), not of runs: give the "
                              "runs a folder of their own")
    return Checkpoint.open(path, prints, reset=reset)


@dataclass(frozen=True)
class RunSummary:
    """What a run with a checkpoint did, for its summary.

    Attributes:
        run: the run committed (``committed``), else the checkpoint's last (0: none).
        committed: whether this run wrote anything (nothing new: nothing is committed).
        resumed: documents that went on from their state.
        started: documents new to the checkpoint.
        skipped: versions at or below a document's last version read: replayed (or refused)
            by an earlier run, not again.
        stopped: documents whose replay had stopped for good (their new rows not replayed).
    """

    run: int
    committed: bool
    resumed: int = 0
    started: int = 0
    skipped: int = 0
    stopped: int = 0

    def line(self) -> str:
        """The summary's line: ``run 3 (resumed 2 documents, started 1; 40 versions
        skipped as replayed before)``."""
        head = f"run {self.run}" if self.committed else \
            f"nothing new: run {self.run} stays the last"
        s = "" if self.skipped == 1 else "s"
        tail = f"{self.skipped:,} version{s} skipped as replayed before"
        if self.stopped:
            tail += f", {self.stopped:,} stopped for good"
        return (f"{head} (resumed {self.resumed:,} document{'' if self.resumed == 1 else 's'}"
                f", started {self.started:,}; {tail})")


class CheckpointRun:
    """One run of a version table from the checkpoint ``checkpoint``, as steps
    (:class:`~._history.VersionRows`, as :func:`~._history.iter_history` gives them):
    :func:`resume_history`'s rules (see the module) with one document's replay state and
    one version held at a time, each document's new state written to the checkpoint as
    the document ends (it counts once the caller commits). The command line's local engine
    runs it (:func:`~._local.run_local`).

    Args:
        checkpoint: the checkpoint, opened (:func:`open_runs`).
        definitions: a parsed definition set, or None.
        options, namespaces, within: as for :func:`resume_history`.
        queries: the CEL queries, checked (:func:`~._cel.check_queries`).
    """

    def __init__(self, checkpoint: Checkpoint, definitions: DefinitionSet | None, *,
                 options: DiffOptions | None = None,
                 namespaces: dict[str, str] | None = None,
                 within: int | Duration | str | None = None,
                 queries: Sequence[CelQuery] = ()) -> None:
        self.checkpoint = checkpoint
        self.definitions = definitions
        self.options = options
        self.namespaces = namespaces or None
        self.within = within
        self.queries = tuple(queries)
        self.resumed = self.started = self.skipped = self.stopped = 0
        self.written = 0  # states written for the next run

    def summary(self, committed: bool) -> RunSummary:
        """What this run did (after :meth:`Checkpoint.commit`, if ``committed``)."""
        return RunSummary(self.checkpoint.run, committed, self.resumed, self.started,
                          self.skipped, self.stopped)

    def _read(self, doc: str | None) -> int | None:
        state = self.checkpoint.state(doc) if doc is not None else None
        return None if state is None else state.read

    def fresh(self, errors: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The error rows of versions this run reads (the input's duplicate versions, an
        unreadable entry of a document's version): those at or below the document's last
        version read were reported by the run that read it."""
        reads: dict[str, int | None] = {}
        kept = []
        for e in errors:
            doc, version = e.get("doc"), e.get("version")
            if doc is not None and version is not None:
                if doc not in reads:
                    reads[doc] = self._read(doc)
                read = reads[doc]
                if read is not None and int(version) <= read:
                    continue
            kept.append(e)
        return kept

    def steps(self, rows: Iterable[Mapping[str, Any]] | VersionIndex,
              on_document: Callable[[str, int], None] | None = None,
              on_version: Callable[[], None] | None = None) -> Iterator[VersionRows]:
        """The run's steps over the version table ``rows`` (a
        :class:`~._index.VersionIndex`: its rows read one at a time; or rows, grouped
        first): first the duplicate versions' error rows this run reports, then each
        document's. ``on_document(name, versions)`` and ``on_version()`` as for
        :func:`~._history.history_steps` (skipped versions count as done)."""
        from ._index import VersionIndex  # the index reads tables; it builds on _history

        groups: Iterable[tuple[str, int, Iterable[Mapping[str, Any]]]]
        if isinstance(rows, VersionIndex):
            duplicates = rows.duplicates
            groups = _index_groups(rows)
        else:
            grouped, duplicates = ordered_versions(rows)
            groups = ((doc, len(vs), vs) for doc, vs in grouped.items())
        fresh = self.fresh(duplicates)
        if fresh:
            yield VersionRows("input", errors=tuple(fresh))
        for doc, count, versions in groups:
            if on_document is not None:
                on_document(doc, count)
            yield from self.document(doc, versions, on_version)

    def document(self, doc: str, rows: Iterable[Mapping[str, Any]],
                 on_version: Callable[[], None] | None = None) -> Iterator[VersionRows]:
        """One document's steps (its ``rows`` in version order, all read through); its new
        state written for the next run."""
        state = self.checkpoint.state(doc)
        read = state.read if state is not None else None
        rest = iter(rows)
        first: Mapping[str, Any] | None = None
        newest: int | None = None
        for row in rest:  # the versions read before come first: skipped
            v = int(row["version"])
            if read is None or v > read:
                first = row
                break
            newest = v
            self.skipped += 1
            assert state is not None
            if v == state.version and state.stopped is None:
                why = _changed(row, state)
                if why is not None:
                    yield VersionRows("version", doc, v, errors=(error_row(
                        doc, v, CHECKPOINT_STAGE, why, commit=row.get("commit"),
                        time=row.get("time")),))
            if on_version is not None:
                on_version()
        if first is None:
            if read is not None and newest is not None and newest < read:
                warnings.warn(f"{doc}: the checkpoint has it up to version {read}, the "
                              f"input only up to version {newest}: nothing to replay",
                              CheckpointNote, stacklevel=2)
            return
        if state is not None and state.stopped is not None:
            self.stopped += 1
            for _ in rest:  # as in one run: nothing more of it is replayed
                pass
            return
        yield from self._replay(doc, state, itertools.chain((first,), rest), on_version)
        for _ in rest:  # the versions after a failure that stopped the document
            pass

    def _replay(self, doc: str, state: DocumentState | None,
                rows: Iterator[Mapping[str, Any]], on_version: Callable[[], None] | None
                ) -> Iterator[VersionRows]:
        if state is None:
            self.started += 1
        else:
            self.resumed += 1
        yield from resumed_document(
            doc, state, ((int(r["version"]), r["xml"], None, None, r.get("time"),
                          r.get("commit")) for r in rows),
            self.definitions, options=self.options, namespaces=self.namespaces,
            within=self.within, queries=self.queries, on_version=on_version,
            done=self._done)

    def _done(self, state: DocumentState) -> None:
        self.checkpoint.write(state)
        self.written += 1


def resumed_document(doc: str, state: DocumentState | None,
                     versions: Iterable[tuple[int, Any, Any, str | None, Any, Any]],
                     definitions: Any, *, options: DiffOptions | None,
                     namespaces: dict[str, str] | None, within: int | Duration | str | None,
                     queries: Sequence[CelQuery],
                     done: Callable[[DocumentState], None],
                     on_version: Callable[[], None] | None = None) -> Iterator[VersionRows]:
    """One document's new ``versions`` (``(version, xml, script, expect, time, commit)`` in
    order, as :func:`~._history.iter_document` takes them) replayed from ``state`` (None:
    from the start), as steps; its end holds no composites (held for the next run) and the
    CEL rows; then ``done(new state)``. The local engine's run and Spark's apply stage
    both replay a document so (``definitions``: text or a parsed set, as the state was
    made with)."""
    history = _suspended(doc, state, definitions, options=options, namespaces=namespaces,
                         within=within, queries=queries)
    # The CEL rows are taken at the document's end, their commits filled in from here
    # (the history is not told them); without queries only the last good version's commit
    # is kept, for the state.
    commits: dict[int, Any] = {}
    last: list[Any] = [None, None]  # the version given last and its commit

    def given() -> Iterator[tuple[int, Any, Any, str | None, Any, Any]]:
        for v, xml, script, expect, time, commit in versions:
            last[:] = [v, commit]
            if history.cel is not None:
                commits[v] = commit
            yield v, xml, script, expect, time, commit

    good_commit = state.commit if state is not None else None
    for step in iter_document(history, given(), on_version):
        if step.kind == "end":
            yield _end(history, step, commits)
            break
        if step.replayed and step.version == last[0]:
            good_commit = last[1]
        yield step
    new = history.state
    if new is None:  # the loop closed it otherwise (it always closes): say what is known
        new = history.checkpoint()
    if new.commit is None and new.version is not None:
        new = replace(new, commit=good_commit)
    done(new)


def _end(history: DocumentHistory, step: VersionRows, commits: Mapping[int, Any]
         ) -> VersionRows:
    """A document's end in a run: no composites (held for the next run), its CEL rows."""
    if history.cel is None:
        return step
    found, failures = history.cel.take()
    for r in found:
        if r["commit"] is None:
            r["commit"] = commits.get(r["version"])
    errors = tuple(error_row(
        history.name, version, CEL_STAGE, f"CEL query {q.index}: {type(exc).__name__}: "
        f"{exc}", commit=commits.get(version), time=time)
        for q, exc, version, time in failures)
    return replace(step, errors=step.errors + errors, cel=step.cel + tuple(found))


def _index_groups(index: VersionIndex
                  ) -> Iterator[tuple[str, int, Iterator[Mapping[str, Any]]]]:
    """The index's rows as (document, versions, its rows), read as they are replayed."""
    rows = iter(index)
    for doc, count in index.documents:
        yield doc, count, itertools.islice(rows, count)
