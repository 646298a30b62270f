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
import json
import os
import pickle
import re
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from xmlevents.algebra import DefinitionSet, Duration

from ._cel import CEL_STAGE, CEL_TABLE, CelQuery, check_queries
from ._history import (
    DUPLICATE,
    DocumentHistory,
    HistoryResult,
    error_row,
    replay_document,
)
from ._script import DiffOptions, digest, parse_version
from ._state import CheckpointError, DocumentState

__all__ = ["FORMAT", "CHECKPOINT_STAGE", "Checkpoint", "CheckpointNote", "fingerprint",
           "resume_history", "write_run"]

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


class Checkpoint:
    """A checkpoint folder, opened for one run (see the module for the layout).

    Use :meth:`open`; :attr:`run` is the last committed run (0: none), :attr:`next_run`
    the one being written. :meth:`state` reads a document's state, :meth:`write` saves one
    for the next run, :meth:`commit` makes them the checkpoint.
    """

    def __init__(self, path: Path, run: int, prints: dict[str, str]) -> None:
        self.path = path
        self.run = run
        self.fingerprint = prints
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
        return cls(folder, run, prints)

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
        files = [(r, n) for r, n in self._files.get(self._key(doc), ()) if r <= self.run]
        if not files:
            return None
        _, name = max(files)
        path = self.path / _DOCUMENTS / name
        data = path.read_bytes()
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

    def write(self, state: DocumentState) -> None:
        """Save ``state`` for the next run (it counts once :meth:`commit` is done)."""
        run = self.next_run
        header = json.dumps({"format": FORMAT, "library": _library(), "doc": state.doc,
                             "run": run}, ensure_ascii=True).encode("ascii")
        name = f"{self._key(state.doc)}.{run}.state"
        _write_atomic(self.path / _DOCUMENTS / name,
                      header + b"\n" + pickle.dumps(state, protocol=5))
        files = self._files.setdefault(self._key(state.doc), [])
        if (run, name) not in files:
            files.append((run, name))

    def commit(self) -> int:
        """Make the states written the checkpoint: the manifest of the next run, written
        last; then delete the files it superseded. Returns the run committed."""
        run = self.next_run
        manifest = {"format": FORMAT, "library": _library(), "run": run,
                    "fingerprint": self.fingerprint, "documents": len(self._files)}
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
    """Rows by document, ordered by version: the first row of each version, and the
    second rows of a version (duplicates)."""
    docs: dict[str, dict[int, Mapping[str, Any]]] = {}
    dups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        doc = str(row["doc"])
        versions = docs.setdefault(doc, {})
        v = int(row["version"])
        if v in versions:
            dups.setdefault(doc, []).append(row)
        else:
            versions[v] = row
    return ({d: [vs[v] for v in sorted(vs)] for d, vs in sorted(docs.items())}, dups)


def _changed(row: Mapping[str, Any], state: DocumentState) -> str | None:
    """Why ``row``, of the last good version the checkpoint replayed, is not that version
    (None: it is)."""
    try:
        same = digest(parse_version(row["xml"])) == state.digest
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


def _replay(doc: str, state: DocumentState | None, versions: list[Mapping[str, Any]],
            result: HistoryResult, definitions: DefinitionSet | None, *,
            options: DiffOptions | None, namespaces: dict[str, str] | None,
            within: int | Duration | str | None, queries: Sequence[CelQuery]
            ) -> DocumentState:
    """One document's new versions replayed from ``state`` (None: from the start) into
    ``result``; its new state."""
    if state is None:
        history = DocumentHistory(doc, definitions, options=options, namespaces=namespaces,
                                  within=within, queries=queries)
    else:
        history = DocumentHistory.resume(state, definitions, options=options,
                                         namespaces=namespaces, within=within,
                                         queries=queries)
    history.suspend = True  # close() ends the run, not the history: the state is kept
    commits = {int(r["version"]): r.get("commit") for r in versions}
    replay_document(history, ((int(r["version"]), r["xml"], None, None, r.get("time"),
                               r.get("commit")) for r in versions), result)
    if history.cel is not None:
        found, failures = history.cel.take()
        for r in found:
            if r["commit"] is None:
                r["commit"] = commits.get(r["version"])
        result.cel.extend(found)
        result.errors.extend(error_row(
            doc, version, CEL_STAGE, f"CEL query {q.index}: {type(exc).__name__}: {exc}",
            commit=commits.get(version), time=time) for q, exc, version, time in failures)
    new = history.state
    if new is None:  # the loop closed it otherwise (it always closes): say what is known
        new = history.checkpoint()
    if new.commit is None and new.version is not None and new.version in commits:
        new = replace(new, commit=commits[new.version])
    return new


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

    for name in ("events", "composites", "errors", "cel"):
        folder = Path(out) / name
        if folder.is_dir():
            other = [p.name for p in folder.iterdir() if not p.name.startswith("run=")]
            if other:
                raise CheckpointError(
                    f"{folder} holds {other[0]!r}, not only runs (run=N): a replay's output "
                    "without a checkpoint? Give the checkpointed runs an output folder of "
                    "their own")
    for name, rows, schema in (("events", result.events, EVENTS_TABLE),
                               ("composites", result.composites, COMPOSITES_TABLE),
                               ("errors", result.errors, ERRORS_TABLE),
                               ("cel", result.cel, CEL_TABLE)):
        write_dataset(rows, schema, os.path.join(out, name, f"run={run}"))
