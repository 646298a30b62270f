"""Version tables: ``(doc, version, xml)`` rows, plus ``commit`` and ``time`` where known.

Three forms are read (DESIGN section 7): JSON lines (``.jsonl``, ``.json``, gzip-compressed
with ``.gz``), Parquet (a file or a dataset folder), and a folder of XML files laid out as
``DOC/VERSION.xml`` (``DOC`` may span folders: ``orders/a.xml/3.xml`` is version 3 of
``orders/a.xml``). This module reads them in process; :mod:`._spark` reads the same forms
into a DataFrame with the same rules and the same errors.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from xmlevents.algebra import VERSIONS_TABLE

from ._errors import GitHistoryError, VersionTableError

__all__ = ["read_versions", "write_versions", "table_format", "check_row", "json_row",
           "folder_row", "decode_xml", "VERSION_FIELDS"]

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
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise VersionTableError(f"{where}: version={version!r} must be an integer >= 0")
    if not isinstance(d["xml"], str):
        raise VersionTableError(f"{where}: xml must be a string (the document's text)")
    time = d.get("time")
    if time is not None and (isinstance(time, bool) or not isinstance(time, int)):
        raise VersionTableError(f"{where}: time={time!r} must be an integer (unix seconds)")
    commit = d.get("commit")
    if commit is not None and not isinstance(commit, str):
        raise VersionTableError(f"{where}: commit={commit!r} must be a string")
    return {"doc": d["doc"], "version": version, "xml": d["xml"], "commit": commit,
            "time": time}


def json_row(line: str, where: str) -> dict[str, Any] | None:
    """The row of one JSON line (None for a blank line); ``where`` names the file and line.

    Raises:
        VersionTableError: for a line that is not JSON or not a version.
    """
    if not line.strip():
        return None
    try:
        d = json.loads(line)
    except json.JSONDecodeError as exc:
        raise VersionTableError(f"{where}, column {exc.colno}: not JSON: {exc.msg}") from None
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


def _open(path: Path) -> IO[str]:
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open("r", encoding="utf-8")


def read_versions(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The rows of a version table, in file order.

    Raises:
        VersionTableError: naming the file and line (or row, or file) of a bad entry.
    """
    p = Path(path)
    kind = table_format(p)
    if kind == "jsonl":
        with _open(p) as f:
            for n, line in enumerate(f, 1):
                row = json_row(line, f"{p}, line {n}")
                if row is not None:
                    yield row
    elif kind == "parquet":
        import pyarrow.parquet as pq  # type: ignore[import-untyped]  # pyarrow has no types

        table = pq.read_table(p)
        for n, d in enumerate(table.to_pylist(), 1):
            yield check_row(d, f"{p}, row {n}")
    else:
        for file in sorted(p.rglob("*")):
            if file.is_file():
                yield folder_row(p, file, file.read_bytes())


def write_versions(rows: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> int:
    """Write rows as JSON lines (gzip-compressed if ``path`` ends in ``.gz``); returns how
    many. Only the version-table fields are written, ``commit`` and ``time`` where set."""
    p = Path(path)
    opener = gzip.open if p.name.lower().endswith(".gz") else open
    count = 0
    with opener(p, "wt", encoding="utf-8") as f:
        for row in rows:
            d = {k: row[k] for k in VERSION_FIELDS if row.get(k) is not None}
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
            count += 1
    return count
