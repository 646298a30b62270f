"""Version tables read and written in process (:mod:`xmlevents.replay._tables`): the three
forms, and every bad entry named by file and line, row or file."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from xmlevents.algebra import XmlEventsError
from xmlevents.replay import VersionTableError, read_versions, write_versions
from xmlevents.replay._tables import check_row, folder_row, json_row, table_format

ROWS = [{"doc": "a.xml", "version": 0, "xml": "<a/>", "commit": "c0", "time": 100},
        {"doc": "a.xml", "version": 1, "xml": "<a>caf\u00e9</a>", "commit": None, "time": None},
        {"doc": "dir/b.xml", "version": 7, "xml": "<b/>", "commit": None, "time": None}]


@pytest.mark.parametrize("name", ["h.jsonl", "h.jsonl.gz"])
def test_json_lines_round_trip(tmp_path: Path, name: str) -> None:
    """write_versions then read_versions gives the rows back; only set fields are written."""
    path = tmp_path / name
    assert write_versions(ROWS, path) == 3
    assert list(read_versions(path)) == ROWS
    opener: Any = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert lines[1] == '{"doc": "a.xml", "version": 1, "xml": "<a>caf\u00e9</a>"}'


def test_blank_lines_are_passed_over_and_bad_lines_named(tmp_path: Path) -> None:
    """A blank line holds no version; a line that is not JSON is named with its column."""
    path = tmp_path / "h.jsonl"
    path.write_text('{"doc": "a", "version": 0, "xml": "<a/>"}\n\n{"doc": ]\n',
                    encoding="utf-8")
    rows = read_versions(path)
    assert next(rows)["doc"] == "a"
    with pytest.raises(VersionTableError, match=r"h\.jsonl, line 3, column 9: not valid JSON"):
        next(rows)


def test_parquet_and_folder_forms(tmp_path: Path) -> None:
    """A Parquet file and a DOC/VERSION.xml folder read as the same rows (files decoded as
    their declaration says)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.Table.from_pylist(ROWS), tmp_path / "h.parquet")
    assert list(read_versions(tmp_path / "h.parquet")) == ROWS
    folder = tmp_path / "folder"
    for r in ROWS:
        f = folder / r["doc"] / f"{r['version']}.xml"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(r["xml"].encode("utf-8"))
    (folder / "a.xml" / "1.xml").write_bytes(
        '<?xml version="1.0" encoding="ISO-8859-1"?><a>caf\u00e9</a>'.encode("latin-1"))
    got = sorted(read_versions(folder), key=lambda r: (r["doc"], r["version"]))
    assert [(r["doc"], r["version"]) for r in got] == [(r["doc"], r["version"]) for r in ROWS]
    assert got[1]["xml"].endswith("<a>caf\u00e9</a>") and got[1]["commit"] is None


def test_a_parquet_row_is_checked_like_a_line(tmp_path: Path) -> None:
    """A bad Parquet row is named by its number."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.Table.from_pylist([{"doc": "a", "version": -1, "xml": "<a/>"}]),
                   tmp_path / "h.parquet")
    with pytest.raises(VersionTableError, match=r"h\.parquet, row 1: version=-1 must be"):
        list(read_versions(tmp_path / "h.parquet"))


def test_table_format_from_the_path(tmp_path: Path) -> None:
    """The form is told by the name (.jsonl/.json/.ndjson[.gz], .parquet) or the folder."""
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "part-0.parquet").write_bytes(b"")
    (tmp_path / "xml").mkdir()
    assert [table_format(tmp_path / n) for n in ("a.JSONL.gz", "b.json", "c.ndjson",
                                                 "d.parquet", "ds", "xml")] == [
        "jsonl", "jsonl", "jsonl", "parquet", "parquet", "folder"]
    with pytest.raises(VersionTableError, match="no such file or folder"):
        table_format(tmp_path / "missing.csv")
    (tmp_path / "h.csv").write_text("doc,version,xml\n")
    with pytest.raises(VersionTableError, match=r"not a version table \(expected .jsonl"):
        table_format(tmp_path / "h.csv")


@pytest.mark.parametrize(("row", "message"), [
    ([1], "expected a JSON object, got list"),
    ({"doc": "a", "xml": "<a/>"}, "missing version (a version has doc, version and xml)"),
    ({"doc": 1, "version": 0, "xml": "<a/>"}, "doc=1 must be a string"),
    ({"doc": "a", "version": True, "xml": "<a/>"},
     "version=True must be an integer from 0 to 9223372036854775807 (a 64-bit column)"),
    ({"doc": "a", "version": 0, "xml": b"<a/>"}, "xml must be a string (the document's text)"),
    ({"doc": "a", "version": 0, "xml": "<a/>", "time": 1.5},
     "time=1.5 must be an integer (unix seconds, a 64-bit column)"),
    ({"doc": "a", "version": 0, "xml": "<a/>", "commit": 3}, "commit=3 must be a string"),
])
def test_bad_rows_are_named(row: Any, message: str) -> None:
    """Each field is checked; the error names the place and the field (a ValueError too)."""
    with pytest.raises(VersionTableError) as info:
        check_row(row, "t.jsonl, line 4")
    assert str(info.value) == f"t.jsonl, line 4: {message}"
    assert isinstance(info.value, ValueError) and isinstance(info.value, XmlEventsError)


def test_json_row_of_a_blank_line_is_none() -> None:
    """A blank (or whitespace) line is no row; a good one is checked and completed."""
    assert json_row("  \n", "x") is None
    assert json_row('{"doc": "a", "version": 2, "xml": "<a/>"}', "x") == {
        "doc": "a", "version": 2, "xml": "<a/>", "commit": None, "time": None}


def test_folder_row_names_files_that_are_not_versions(tmp_path: Path) -> None:
    """A file that is not DOC/VERSION.xml, or whose bytes do not decode, is named."""
    with pytest.raises(VersionTableError, match=r"expected DOC/VERSION\.xml"):
        folder_row(tmp_path, tmp_path / "a.xml" / "first.xml", b"<a/>")
    with pytest.raises(VersionTableError, match=r"expected DOC/VERSION\.xml"):
        folder_row(tmp_path, tmp_path / "0.xml", b"<a/>")
    with pytest.raises(VersionTableError, match=r"3\.xml: not valid utf-8 at byte offset 3"):
        folder_row(tmp_path, tmp_path / "a" / "3.xml", b"<a>\xff</a>")
