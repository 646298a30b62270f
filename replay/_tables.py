"""Version tables: ``(doc, version, xml)`` rows, plus ``commit`` and ``time`` where known.

Three forms are read (DESIGN section 7): JSON lines (``.jsonl``, ``.json``, gzip-compressed
with ``.gz``), Parquet (a file or a dataset folder), and a folder of XML files laid out as
``DOC/VERSION.xml`` (``DOC`` may span folders: ``orders/a.xml/3.xml`` is version 3 of
``orders/a.xml``). This module reads them in process; :mod:`._spark` reads the same forms
into a DataFrame with the same rules and the same errors.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple, TextIO

from xmlevents._foundation.jsonlines import MAX_INT, JsonLineError, load_line
from xmlevents._foundation.rows import ERRORS_TABLE, VERSIONS_TABLE

from ._errors import GitHistoryError, VersionTableError

__all__ = ["read_versions", "write_versions", "table_format", "check_row", "json_row",
           "folder_row", "decode_xml", "VERSION_FIELDS", "located_rows", "line_row", "LineAt",
           "Location", "PARQUET_BATCH"]

#: The columns of a version table (``xmlevents.algebra.VERSIONS_TABLE``); ``commit`` and
#: ``time`` are optional.
VERSION_FIELDS = VERSIONS_TABLE.names


def table_format(path: str | os.PathLike[str]) -> str:
    """``"jsonl"``, ``"parquet"`` or ``"folder"``, from the path (a Parquet dataset is a
    folder holding ``.parquet`` files)."""
    p = Path(path)
    if p.is_dir():
        if any(p.rglob("*.parquet")):
            return "parquet"
        return "folder"
    name = p.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    if not p.exists():
        raise VersionTableError(f"{path}: no such file or folder")
    raise VersionTableError(f"{path}: not a version table (expected .jsonl[.gz], .parquet or "
                            "a folder of DOC/VERSION.xml files)")


def check_row(d: Any, where: str) -> dict[str, Any]:
    """A version-table row checked field by field (``where`` names it in errors)."""
    if not isinstance(d, dict):
        raise VersionTableError(f"{where}: expected a JSON object, got {type(d).__name__}")
    missing = [k for k in ("doc", "version", "xml") if d.get(k) is None]
    if missing:
        raise VersionTableError(f"{where}: missing {', '.join(missing)} (a version has doc, "
                                "version and xml)")
    if not isinstance(d["doc"], str):
        raise VersionTableError(f"{where}: doc={d['doc']!r} must be a string")
    version = d["version"]
    if isinstance(version, bool) or not isinstance(version, int) \
            or not 0 <= version <= MAX_INT:
        raise VersionTableError(f"{where}: version={_short(version)} must be an integer from 0 "
                                f"to {MAX_INT} (a 64-bit column)")
    if not isinstance(d["xml"], str):
        raise VersionTableError(f"{where}: xml must be a string (the document's text)")
    time = d.get("time")
    if time is not None and (isinstance(time, bool) or not isinstance(time, int)
                             or not -MAX_INT <= time <= MAX_INT):
        raise VersionTableError(f"{where}: time={_short(time)} must be an integer (unix "
                                "seconds, a 64-bit column)")
    commit = d.get("commit")
    if commit is not None and not isinstance(commit, str):
        raise VersionTableError(f"{where}: commit={commit!r} must be a string")
    return {"doc": d["doc"], "version": version, "xml": d["xml"], "commit": commit,
            "time": time}


def _short(value: Any) -> str:
    """A field's value for a message, cut short: a 5,000-digit number is not repeated."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text):,} characters)"


def json_row(line: str, where: str) -> dict[str, Any] | None:
    """The row of one JSON line (None for a blank line); ``where`` names the file and line.

    Raises:
        VersionTableError: for a line that is not JSON or not a version.
    """
    line = line.rstrip("\r\n")  # as Spark's text reader gives it: columns count alike
    if not line.strip():
        return None
    bad = line.find("\ufffd")
    if bad >= 0:
        # Spark's text reader turns bytes that are not UTF-8 into U+FFFD, and so does the
        # in-process reader when it collects errors: a line holding one is refused on both,
        # the same way (issue 16). JSON can still carry the character, as the escape \ufffd.
        raise VersionTableError(f"{where}, column {bad + 1}: not UTF-8 text (bytes that are "
                                "not UTF-8, read as U+FFFD; write a real U+FFFD as \\ufffd)")
    try:
        d = load_line(line)
    except JsonLineError as exc:
        column = f", column {exc.column}" if exc.column is not None else ""
        raise VersionTableError(f"{where}{column}: {exc.reason}") from None
    return check_row(d, where)


def folder_row(root: str | os.PathLike[str], file: str | os.PathLike[str],
               data: bytes) -> dict[str, Any]:
    """The row of ``root/DOC/VERSION.xml`` (its bytes decoded as their declaration says)."""
    rel = Path(file).relative_to(root)
    if rel.suffix != ".xml" or not rel.stem.isdigit() or len(rel.parts) < 2:
        raise VersionTableError(f"{file}: expected DOC/VERSION.xml with VERSION a number")
    return {"doc": rel.parent.as_posix(), "version": int(rel.stem),
            "xml": decode_xml(data, str(file)), "commit": None, "time": None}


def decode_xml(data: bytes, where: str) -> str:
    """XML bytes as text, in the encoding their declaration names (UTF-8 by default)."""
    from ._git import decode_xml_bytes  # one decoder for files and git blobs

    try:
        return decode_xml_bytes(data, where)
    except GitHistoryError as exc:
        raise VersionTableError(str(exc)) from None


def _open(path: Path) -> gzip.GzipFile | IO[bytes]:
    """The bytes of a JSON-lines table, decompressed if it ends in ``.gz`` (decoded line by
    line, so that a byte that is not UTF-8 is named by its line)."""
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rb")
    return path.open("rb")


def _hidden(name: str) -> bool:
    """Whether Spark's file listing passes over a file or folder of this name (``.x``,
    ``_x`` but not ``_metadata``, partition folders ``_k=v`` or files being copied): a
    folder table is read in process with the same files as on Spark."""
    if name.startswith(("_common_metadata", "_metadata")):
        return False
    return ((name.startswith("_") and "=" not in name) or name.startswith(".")
            or name.endswith("._COPYING_"))


def _input_error(message: str) -> dict[str, Any]:
    """An entry that cannot be read, as a row of the ``errors`` output: stage ``input``, the
    message naming where, no document or version (the Spark reader's rows, field for field)."""
    return ERRORS_TABLE.row(None, stage="input", message=message)


class LineAt(NamedTuple):
    """Where a row's line is in a plain JSON-lines file: its first byte, its length in bytes
    and its number (as messages count lines)."""

    offset: int
    length: int
    line: int


#: Where a row can be read again: its line in a plain JSON-lines file, its file in a folder
#: table, or None (a compressed file or a Parquet table is read through, not into).
Location = LineAt | Path | None


def read_versions(path: str | os.PathLike[str], errors: list[dict[str, Any]] | None = None
                  ) -> Iterator[dict[str, Any]]:
    """The rows of a version table, in file order, one at a time (a Parquet table is read a
    batch of rows at a time, not whole: issue 29).

    Args:
        path: JSON lines (``.jsonl``, ``.json``, ``.ndjson``, each maybe ``.gz``), Parquet (a
            file or a dataset folder) or a folder of ``DOC/VERSION.xml`` files (files and
            folders Spark passes over, ``.name`` and ``_name``, are passed over here too).
        errors: None: the first entry that cannot be read raises. A list: each such entry
            is appended to it as a row of the ``errors`` output (stage ``input``, the message
            naming the file and line, row or file) and reading goes on — the rows and
            messages the Spark reader (``read_versions_df``) gives, so that an in-process run
            reports what a Spark run reports (a byte that is not UTF-8 is then replaced, as
            Spark's text reader does, rather than refused).

    Raises:
        VersionTableError: naming the file and line (or row, or file) of a bad entry (only
            without ``errors``); or a path that is no version table (always).
    """
    for row, _ in located_rows(path, errors):
        yield row


def located_rows(path: str | os.PathLike[str], errors: list[dict[str, Any]] | None = None
                 ) -> Iterator[tuple[dict[str, Any], Location]]:
    """:func:`read_versions`' rows, each with where it can be read again (:class:`Location`):
    the line's bytes in a plain JSON-lines file, the file in a folder; None in a compressed
    file or a Parquet table, which are only read through (the version index's first pass,
    :mod:`._index`)."""
    p = Path(path)
    kind = table_format(p)
    if kind == "jsonl":
        yield from _json_rows(p, os.fspath(path), errors)
    elif kind == "parquet":
        for row in _parquet_rows(p, errors):
            yield row, None
    else:
        yield from _folder_rows(p, os.fspath(path), errors)


#: Rows of a Parquet table converted at a time: a few versions' XML held, not the table's.
PARQUET_BATCH = 16


def _parquet_rows(p: Path, errors: list[dict[str, Any]] | None) -> Iterator[dict[str, Any]]:
    """The rows of a Parquet file or dataset folder, in the order ``pyarrow.parquet.
    read_table`` gives them (the same dataset: hive partitions, ``.x``/``_x`` passed over),
    :data:`PARQUET_BATCH` rows at a time; ``row N`` counts from 1 over the whole table."""
    import pyarrow.dataset as ds  # type: ignore[import-untyped]  # pyarrow has no types

    dataset = (ds.dataset(p, format="parquet") if p.is_file() else
               ds.dataset(p, format="parquet",
                          partitioning=ds.HivePartitioning.discover(infer_dictionary=True)))
    n = 0
    for batch in dataset.to_batches(batch_size=PARQUET_BATCH, batch_readahead=0,
                                    fragment_readahead=0, use_threads=False):
        for d in batch.to_pylist():
            n += 1
            try:
                yield check_row(d, f"{p}, row {n}")
            except VersionTableError as exc:
                if errors is None:
                    raise
                errors.append(_input_error(str(exc)))


def _lines(f: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    """The lines of a binary file as Spark's text reader splits them: at ``\n``, ``\r\n``
    and a bare ``\r`` alike, so that both readers number the same lines (issue 16); each with
    the offset of its first byte (the version index reads a line again from there)."""
    at = 0
    for raw in f:
        start, at = at, at + len(raw)
        if raw.endswith(b"\r\n"):
            raw = raw[:-2]
        elif raw.endswith((b"\n", b"\r")):
            raw = raw[:-1]
        if b"\r" in raw:
            for part in raw.split(b"\r"):
                yield start, part
                start += len(part) + 1
        else:
            yield start, raw


def line_row(raw: bytes, where: str, collecting: bool) -> dict[str, Any] | None:
    """The row of one line's bytes (None for a blank line), decoded as :func:`read_versions`
    decodes it: strictly, or (``collecting`` errors) with what is not UTF-8 replaced, as
    Spark's text reader does.

    Raises:
        VersionTableError: for a line that is not UTF-8 (strictly), not JSON or not a version.
    """
    if collecting:
        return json_row(raw.decode("utf-8", errors="replace"), where)
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VersionTableError(f"{where}: not UTF-8 ({exc.reason} at byte "
                                f"{exc.start})") from None
    return json_row(line, where)


def _json_rows(p: Path, name: str, errors: list[dict[str, Any]] | None
               ) -> Iterator[tuple[dict[str, Any], Location]]:
    """The rows of a JSON-lines table; ``name`` (the path as given) names it in messages, as
    on Spark. In a plain file each row comes with its line's offset and length (None in a
    compressed one: it has no cheap offsets)."""
    plain = not p.name.lower().endswith(".gz")
    with _open(p) as f:
        for n, (start, raw) in enumerate(_lines(f), 1):
            where = f"{name}, line {n}"
            try:
                row = line_row(raw, where, errors is not None)
            except VersionTableError as exc:
                if errors is None:
                    raise
                errors.append(_input_error(str(exc)))
                continue
            if row is not None:
                yield row, (LineAt(start, len(raw), n) if plain else None)


def _folder_rows(p: Path, name: str, errors: list[dict[str, Any]] | None
                 ) -> Iterator[tuple[dict[str, Any], Location]]:
    """The rows of a folder of ``DOC/VERSION.xml`` files, in path order. Collecting errors,
    a file is named as on Spark: the folder as given, then the file's absolute path."""
    base = p.resolve() if errors is not None else p
    for file in sorted(base.rglob("*")):
        if not file.is_file() or any(_hidden(part) for part in file.relative_to(base).parts):
            continue
        try:
            yield folder_row(base, file, file.read_bytes()), file
        except ValueError as exc:  # a VersionTableError, or a file outside the folder
            if errors is None:
                raise
            errors.append(_input_error(f"{name}: {exc}"))


def write_versions(rows: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> int:
    """Write rows as a version table in JSON lines (gzip-compressed if ``path`` ends in
    ``.gz``); returns how many. Only the version-table fields are written, ``commit`` and
    ``time`` where set.

    The name must say JSON lines — ``.jsonl``, ``.json`` or ``.ndjson``, then ``.gz`` or not,
    the names :func:`read_versions` and ``xmlevents replay`` read as JSON lines — so that no
    ``h.parquet`` holds JSON; it is checked before a row is asked for. The table appears whole
    or not at all: nothing is created before the first row arrives (a source that fails at
    once, such as a git history that cannot be read, leaves nothing behind), the rows go to a
    temporary file beside ``path``, and that file replaces ``path`` once the last row is
    written (a source that fails later leaves ``path`` as it was, not a truncated table that
    would replay as a shorter history).

    Raises:
        VersionTableError: if the name does not end in one of those extensions.
        OSError: if the file cannot be written.
    """
    p = Path(path)
    name = p.name.lower()
    compressed = name.endswith(".gz")
    if not (name[:-3] if compressed else name).endswith((".jsonl", ".json", ".ndjson")):
        raise VersionTableError(f"{path}: cannot write a version table under this name: it is "
                                "written as JSON lines, so the name must end in .jsonl, .json "
                                "or .ndjson (then .gz to compress it)")
    it = iter(rows)
    first = next(it, None)
    # Hidden, unique, in the same folder: os.replace is then a rename, atomic on POSIX; opened
    # "x" through open(), so it gets the umask's permissions like any new file.
    part = p.with_name(f".{p.name}.{secrets.token_hex(4)}.part")
    count = 0
    try:
        with contextlib.ExitStack() as stack:  # closed innermost first: text, gzip, file
            raw = stack.enter_context(open(part, "xb"))
            f: TextIO
            if compressed:  # the header names the table, not the temporary file
                z = stack.enter_context(gzip.GzipFile(filename=p.name, mode="wb", fileobj=raw))
                f = stack.enter_context(io.TextIOWrapper(z, encoding="utf-8", newline="\n"))
            else:
                f = stack.enter_context(io.TextIOWrapper(raw, encoding="utf-8", newline="\n"))
            row = first
            while row is not None:
                d = {k: row[k] for k in VERSION_FIELDS if row.get(k) is not None}
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
                count += 1
                row = next(it, None)
        os.replace(part, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise
    return count
