"""The in-process engine of ``xmlevents replay --engine local`` (issue 15, item 2): the rows of
replay_history, written in the schemas Spark writes; bad input read on, as the Spark reader
reads it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow.parquet as pq  # type: ignore[import-untyped]

from xmlevents._foundation.rows import COMPOSITES_TABLE, ERRORS_TABLE, EVENTS_TABLE
from xmlevents.replay import (
    DiffOptions,
    Key,
    VersionTableError,
    arrow_schema,
    read_versions,
    replay_history,
    run_local,
    write_versions,
)

DEFS = "ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))"

ORDERS = [
    "<order><item/></order>",
    "<order><item><price>5</price></item></order>",
    "<order><item><price>5</price><quantity>2",  # not well-formed: skipped
    "<order><item><price>5</price><quantity>2</quantity></item></order>",
]


def table_lines() -> list[str]:
    """A JSON-lines version table with two unreadable lines, a blank one and a duplicate."""
    rows = [{"doc": "a.xml", "version": v, "xml": x, "time": 100 + v, "commit": f"c{v}"}
            for v, x in enumerate(ORDERS)]
    lines = [json.dumps(r) for r in rows]
    lines.insert(1, "not json")
    lines.insert(3, "")
    lines.insert(4, json.dumps({"doc": "a.xml", "version": "one", "xml": "<a/>"}))
    lines.append(json.dumps({"doc": "a.xml", "version": 1, "xml": "<dup/>"}))
    lines.append(json.dumps({"doc": "b.xml", "version": 0, "xml": "<order/>"}))
    return lines


def _key(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True)


def read_back(folder: Path) -> list[dict[str, Any]]:
    return sorted(pq.read_table(folder).to_pylist(), key=_key)


def test_run_local_writes_replay_historys_rows_in_the_published_schemas(tmp_path: Path) -> None:
    """The three datasets hold replay_history's rows (the unreadable lines as error rows
    too), each in the schema of its RowSchema, every column nullable as Spark writes them."""
    history = tmp_path / "h.jsonl.gz"
    with gzip.open(history, "wt", encoding="utf-8") as f:
        f.write("\n".join(table_lines()) + "\n")
    out = tmp_path / "out"
    report = run_local(str(history), str(out), DEFS)
    readable = [json.loads(line) for line in table_lines()
                if line and line != "not json" and '"one"' not in line]
    expected = replay_history(readable, DEFS)
    for name, rows, schema in (("events", expected.events, EVENTS_TABLE),
                               ("composites", expected.composites, COMPOSITES_TABLE)):
        table = pq.read_table(out / name)
        assert table.schema.remove_metadata().equals(arrow_schema(schema, nullable=True)), name
        assert read_back(out / name) == sorted(rows, key=_key), name
    errors = read_back(out / "errors")
    assert pq.read_table(out / "errors").schema.remove_metadata().equals(
        arrow_schema(ERRORS_TABLE, nullable=True))
    assert sorted((e["doc"] or "", e["version"] or 0, e["stage"]) for e in errors) == [
        ("", 0, "input"), ("", 0, "input"), ("a.xml", 1, "input"), ("a.xml", 2, "parse")]
    bad = sorted(e["message"] for e in errors if e["doc"] is None)
    # the Spark reader's words: the path as given, the line (blank lines counted)
    assert bad == [f"{history}, line 2, column 1: not valid JSON: Expecting value",
                   f"{history}, line 5: version='one' must be an integer from 0 to "
                   "9223372036854775807 (a 64-bit column)"]
    assert report.engine == "local" and report.documents == 2 and report.versions == 4
    assert report.composites == {"ItemComplete": 1} and len(report.errors) == 4
    assert [name for name, _ in report.times] == ["reading", "replay", "writing"]


def test_an_empty_table_writes_empty_datasets_with_the_schemas(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    run_local(str(tmp_path / "empty.jsonl"), str(tmp_path / "out"))
    for name, schema in (("events", EVENTS_TABLE), ("composites", COMPOSITES_TABLE),
                         ("errors", ERRORS_TABLE)):
        table = pq.read_table(tmp_path / "out" / name)
        assert table.num_rows == 0
        assert table.schema.remove_metadata().equals(arrow_schema(schema, nullable=True))


def test_the_outputs_are_replaced(tmp_path: Path) -> None:
    """What an earlier run left in OUT/events (a file even) is gone, as on Spark."""
    write_versions([{"doc": "a", "version": 0, "xml": "<a/>"}], tmp_path / "h.jsonl")
    (tmp_path / "out" / "events").mkdir(parents=True)
    (tmp_path / "out" / "events" / "old.parquet").write_text("stale")
    (tmp_path / "out" / "errors").write_text("a file")
    run_local(str(tmp_path / "h.jsonl"), str(tmp_path / "out"))
    assert [p.name for p in (tmp_path / "out" / "events").iterdir()] == [
        "part-00000-local.snappy.parquet"]
    assert pq.read_table(tmp_path / "out" / "events").num_rows == 1


def test_a_path_that_is_no_table_still_raises(tmp_path: Path) -> None:
    (tmp_path / "h.txt").write_text("<a/>")
    with pytest.raises(VersionTableError, match="not a version table"):
        run_local(str(tmp_path / "h.txt"), str(tmp_path / "out"))


def test_the_report_names_keys_that_selected_nothing(tmp_path: Path) -> None:
    write_versions([{"doc": "a", "version": 0, "xml": "<a><b/></a>"}], tmp_path / "h.jsonl")
    report = run_local(str(tmp_path / "h.jsonl"), str(tmp_path / "out"),
                       options=DiffOptions(keys=(Key.parse("dep=g"), Key.parse("b=@id"))))
    assert [k.label for k in report.unselected] == ["dep=g"]


def test_read_versions_collects_what_it_cannot_read(tmp_path: Path) -> None:
    """errors=[...]: every bad entry an error row, reading on; without it the first raises."""
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'{"doc": "a", "version": 0, "xml": "<a/>"}\n'
                     b'{"doc": "a", "version": 1, "xml": "<a>\xff</a>"}\n[1]\n')
    errors: list[dict[str, Any]] = []
    rows = list(read_versions(path, errors))
    assert [r["version"] for r in rows] == [0]
    # Spark's text reader reads the byte as U+FFFD: both readers refuse such a line (issue 16)
    assert [e["message"] for e in errors] == [
        f"{path}, line 2, column 39: not UTF-8 text (bytes that are not UTF-8, read as U+FFFD; "
        "write a real U+FFFD as \\ufffd)",
        f"{path}, line 3: expected a JSON object, got list"]
    assert errors[1] == {"doc": None, "version": None, "commit": None, "time": None,
                         "stage": "input", "line": None, "column": None,
                         "message": f"{path}, line 3: expected a JSON object, got list"}
    with pytest.raises(VersionTableError, match=r"h\.jsonl, line 2: not UTF-8"):
        list(read_versions(path))


def test_a_folder_is_read_with_the_files_spark_reads(tmp_path: Path) -> None:
    """Hidden files (.x, _x) are passed over as Spark passes over them; a file that is no
    version is an error row naming it as the Spark reader does."""
    folder = tmp_path / "f"
    (folder / "a.xml").mkdir(parents=True)
    (folder / "a.xml" / "0.xml").write_text("<a/>")
    (folder / "a.xml" / ".0.xml.swp").write_text("junk")
    (folder / "_tmp").mkdir()
    (folder / "_tmp" / "1.xml").write_text("junk")
    (folder / "a.xml" / "notes.txt").write_text("junk")
    errors: list[dict[str, Any]] = []
    assert [(r["doc"], r["version"]) for r in read_versions(folder, errors)] == [("a.xml", 0)]
    [error] = errors
    assert error["message"] == (f"{folder}: {(folder / 'a.xml' / 'notes.txt').resolve()}: "
                                "expected DOC/VERSION.xml with VERSION a number")


@pytest.mark.slow
def test_run_local_equals_run_spark_with_bad_input(spark: Any, tmp_path: Path) -> None:
    """Unreadable lines, a duplicate and a bad version: the same rows in all three datasets
    (the error rows' messages included) and the same report, from both engines."""
    from xmlevents.replay import run_spark

    history = tmp_path / "h.jsonl"
    history.write_text("\n".join(table_lines()) + "\n", encoding="utf-8")
    local = run_local(str(history), str(tmp_path / "local"), DEFS)
    on_spark = run_spark(spark, str(history), str(tmp_path / "spark"), DEFS)
    for name in ("events", "composites", "errors"):
        assert read_back(tmp_path / "local" / name) == read_back(tmp_path / "spark" / name), name
        assert pq.read_table(tmp_path / "local" / name).schema.remove_metadata().equals(
            pq.read_table(tmp_path / "spark" / name).schema.remove_metadata()), name
    assert (local.documents, local.versions, local.events, local.composites) == (
        on_spark.documents, on_spark.versions, on_spark.events, on_spark.composites)
    assert [dict(e.asDict()) for e in on_spark.errors] == [dict(e) for e in local.errors]
    assert [r["ids"] for r in on_spark.shown] == [r["ids"] for r in local.shown]
    assert [name for name, _ in on_spark.times] == ["replay", "writing"]
