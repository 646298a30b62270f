"""The Spark job equals the in-process replay; its inputs, outputs and errors (issue 6)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

from xmlevents._cli import main
from xmlevents.replay import (
    COMPOSITES_SCHEMA,
    ERRORS_SCHEMA,
    EVENTS_SCHEMA,
    DiffOptions,
    read_versions,
    read_versions_df,
    replay_frames,
    replay_history,
    write_frames,
    write_versions,
)

# Every test here starts (or shares) a Spark session: a minute, not the fast loop's seconds.
pytestmark = pytest.mark.slow

DEFS = "ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))"

ORDER_A = [
    "<order><item/></order>",
    "<order><item><price>5</price></item></order>",
    "<order><item><price>5</price><quantity>2</quantity></item></order>",
    "<order><item><price>5</price><quantity>2",  # not well-formed: skipped
    "<order><item><price>6</price><quantity>2</quantity></item><item/></order>",
    "<order><item><price>6</price><quantity>2</quantity></item><item/></order>",  # same
    "<order><item><quantity>1</quantity><price>1</price></item>"
    "<item><price>6</price><quantity>2</quantity></item></order>",
]
ORDER_B = [
    '<?xml version="1.0"?>\n<!-- b --><order xmlns="urn:o" id="b">\n  <note>hi</note>\n</order>',
    '<order xmlns="urn:o" id="b2"><item><price>1</price><quantity>3</quantity></item>'
    "<!-- c --></order>",
    '<order xmlns="urn:o"><?pi x?><item k="1"><price>1</price></item></order>',
]


def history_rows() -> list[dict[str, Any]]:
    rows = [{"doc": "a.xml", "version": v, "xml": x} for v, x in enumerate(ORDER_A)]
    rows += [{"doc": "b.xml", "version": 10 * v, "xml": x, "commit": f"c{v}", "time": 100 + v}
             for v, x in enumerate(ORDER_B)]
    rows.append({"doc": "b.xml", "version": 10, "xml": "<dup/>"})  # a duplicate version
    return rows


def _key(row: dict[str, Any]) -> Any:
    return json.dumps(row, sort_keys=True, default=str)


def _spark_rows(df: Any) -> list[dict[str, Any]]:
    return sorted((r.asDict(recursive=True) for r in df.collect()), key=_key)


def _local_rows(rows: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    return sorted(({n: r.get(n) for n in names} for r in rows), key=_key)


def test_spark_output_equals_the_in_process_replay(spark: Any, tmp_path: Path) -> None:
    """On Spark the events, composites and errors equal replay_history's rows."""
    rows = history_rows()
    write_versions(rows, tmp_path / "h.jsonl")
    versions, unreadable = read_versions_df(spark, str(tmp_path / "h.jsonl"))
    frames = replay_frames(spark, versions, DEFS)
    local = replay_history(rows, DEFS)
    try:
        assert _spark_rows(frames.events) == _local_rows(local.events, EVENTS_SCHEMA.fieldNames())
        assert _spark_rows(frames.composites) == _local_rows(local.composites,
                                                             COMPOSITES_SCHEMA.fieldNames())
        assert _spark_rows(frames.errors) == _local_rows(local.errors,
                                                         ERRORS_SCHEMA.fieldNames())
        assert len(local.errors) == 2
        assert unreadable.count() == 0
        # the detection itself: the first item completes at version 2, the item added whole
        # at 6; b.xml's items are in namespace urn:o, which ``item`` does not name
        assert sorted((c["doc"], c["version"]) for c in local.composites) == [
            ("a.xml", 2), ("a.xml", 6)]
    finally:
        frames.unpersist()


def test_spark_infers_the_keys_the_in_process_replay_infers(spark: Any, tmp_path: Path
                                                             ) -> None:
    """With keys="auto" the driver reads the same sample as the in-process replay: the same
    keys with the same evidence (the error rows), hence the same events (issue 30)."""
    ex = Path(__file__).resolve().parents[2] / "examples" / "purchase_orders.jsonl.gz"
    with gzip.open(ex, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if json.loads(line)["version"] < 40]
    write_versions(rows, tmp_path / "h.jsonl")
    versions, _ = read_versions_df(spark, str(tmp_path / "h.jsonl"))
    options = DiffOptions(infer_keys=True)
    frames = replay_frames(spark, versions, DEFS, options=options)
    local = replay_history(rows, DEFS, options=options)
    try:
        assert frames.inferred == local.inferred
        assert [k.key.label for k in local.inferred] == ["item=@partnum", "order=@id"]
        assert _spark_rows(frames.errors) == _local_rows(local.errors,
                                                         ERRORS_SCHEMA.fieldNames())
        assert _spark_rows(frames.events) == _local_rows(local.events,
                                                         EVENTS_SCHEMA.fieldNames())
    finally:
        frames.unpersist()


def test_spark_reports_bad_versions_and_duplicates(spark: Any, tmp_path: Path) -> None:
    """Bad versions and duplicate version numbers are error rows with their positions."""
    write_versions(history_rows(), tmp_path / "h.jsonl.gz")
    versions, _ = read_versions_df(spark, str(tmp_path / "h.jsonl.gz"))
    frames = replay_frames(spark, versions)
    try:
        errors = {(r["doc"], r["version"], r["stage"]): r for r in frames.errors.collect()}
        assert set(errors) == {("a.xml", 3, "parse"), ("b.xml", 10, "input")}
        bad = errors[("a.xml", 3, "parse")]
        assert bad["line"] == 1 and bad["column"] is not None and "quantity" in bad["message"]
        assert "duplicate" in errors[("b.xml", 10, "input")]["message"]
        assert frames.composites.count() == 0  # nothing defined
    finally:
        frames.unpersist()


def test_every_input_form_gives_the_same_events(spark: Any, tmp_path: Path) -> None:
    """JSON lines, Parquet and a folder of files give the same events."""
    rows = [r for r in history_rows() if r["xml"] != "<dup/>"]
    write_versions(rows, tmp_path / "h.jsonl")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(
        [{k: r.get(k) for k in ("doc", "version", "xml")} for r in rows]),
        tmp_path / "h.parquet")
    folder = tmp_path / "folder"
    for r in rows:
        f = folder / r["doc"] / f"{r['version']}.xml"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(r["xml"], encoding="utf-8")
    results = []
    for name in ("h.jsonl", "h.parquet", "folder"):
        versions, unreadable = read_versions_df(spark, str(tmp_path / name))
        assert unreadable.count() == 0, name
        frames = replay_frames(spark, versions)
        events = _spark_rows(frames.events)
        # Only JSON lines carry the versions' times and commits (the other forms have no
        # such columns): the events say when and where from where the input does, and agree
        # otherwise.
        for column in ("time", "commit"):
            assert any(e[column] is not None for e in events) == (name == "h.jsonl"), name
        results.append(sorted(({k: v for k, v in e.items() if k not in ("time", "commit")}
                               for e in events), key=_key))
        frames.unpersist()
        triples = sorted((r["doc"], r["version"], r["xml"]) for r in read_versions(tmp_path / name))
        assert triples == sorted((r["doc"], r["version"], r["xml"]) for r in rows), name
    assert results[0] == results[1] == results[2]
    assert results[0]


def test_unreadable_lines_are_named_and_the_rest_goes_on(spark: Any, tmp_path: Path) -> None:
    """Unreadable JSON lines are errors naming their lines; the other lines are replayed."""
    path = tmp_path / "h.jsonl"
    path.write_text('{"doc": "a", "version": 0, "xml": "<a/>"}\n'
                    "not json\n"
                    '{"doc": "a", "version": "one", "xml": "<a/>"}\n'
                    '{"doc": "a", "version": 1, "xml": "<a><b/></a>"}\n', encoding="utf-8")
    versions, unreadable = read_versions_df(spark, str(path))
    messages = sorted(r["message"] for r in unreadable.collect())
    assert len(messages) == 2
    assert "line 2" in messages[0] and "not valid JSON" in messages[0]
    assert "line 3" in messages[1] and "version='one'" in messages[1]
    frames = replay_frames(spark, versions)
    try:
        assert [r["op"] for r in frames.events.orderBy("ts").collect()] == ["ins", "ins"]
    finally:
        frames.unpersist()


def test_empty_input_gives_empty_outputs_with_the_schema(spark: Any, tmp_path: Path) -> None:
    """An empty table writes empty outputs with the published schemas."""
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    versions, unreadable = read_versions_df(spark, str(tmp_path / "empty.jsonl"))
    frames = replay_frames(spark, versions, DEFS)
    out = tmp_path / "out"
    write_frames(frames, str(out), unreadable)
    frames.unpersist()
    for name, schema in (("events", EVENTS_SCHEMA), ("composites", COMPOSITES_SCHEMA),
                         ("errors", ERRORS_SCHEMA)):
        df = spark.read.parquet(str(out / name))
        assert df.count() == 0
        assert [(f.name, f.dataType) for f in df.schema.fields] == [
            (f.name, f.dataType) for f in schema.fields], name


def test_cli_replay_end_to_end(spark: Any, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """xmlevents replay writes the outputs and prints the summary, errors and composites."""
    history = tmp_path / "h.jsonl.gz"
    write_versions(history_rows(), history)
    out = tmp_path / "out"
    status = main(["replay", str(history), "--define", DEFS, "--out", str(out), "--quiet"])
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "versions          9 replayed, 2 errors" in printed
    assert "ItemComplete 2" in printed
    assert "a.xml version 3, line 1" in printed
    events = spark.read.parquet(str(out / "events"))
    assert events.count() == len(replay_history(history_rows()).events)


@pytest.mark.parametrize(("argv", "message"), [
    (["replay", "missing.jsonl", "--out", "o"], "no such file"),
    (["replay", "h.jsonl", "--define", "E := ins(", "--out", "o"], "--define #1"),
    (["replay", "h.jsonl", "--define", "E := ins(a)", "-n", "nope", "--out", "o"], "PREFIX=URI"),
])
def test_cli_replay_refuses_bad_input_without_a_traceback(
        argv: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Bad arguments exit with status 1 and a message, no traceback."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.jsonl").write_text('{"doc": "a", "version": 0, "xml": "<a/>"}\n')
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_real_history_on_spark_equals_in_process(spark: Any) -> None:
    """Sixty pom versions on Spark give replay_history's events."""
    data = Path(__file__).resolve().parents[2].parent / "shared" / "data" / \
        "commons-lang-pom.jsonl.gz"
    if not data.exists():
        pytest.skip("../shared/data is not here")
    with gzip.open(data, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][:60]
    local = replay_history(rows)
    frames = replay_frames(spark, spark.createDataFrame(
        [(r["doc"], r["version"], r["xml"], r["commit"], r["time"]) for r in rows],
        "doc string, version long, xml string, commit string, time long"))
    try:
        assert _spark_rows(frames.events) == _local_rows(local.events,
                                                         EVENTS_SCHEMA.fieldNames())
    finally:
        frames.unpersist()


def _long_history() -> list[dict[str, Any]]:
    """Three documents of 14 versions each: items added, repriced and removed, two items
    sharing a key value in some versions (key notes), a version that is not well-formed."""
    rows = []
    for d in range(3):
        for v in range(14):
            items = "".join(f'<item k="{(i + v) % 5 if v % 4 else i % 2}">'
                            f"<price>{v * i}</price><quantity>{i}</quantity></item>"
                            for i in range(1 + (v + d) % 4))
            xml = f"<order>{items}</order>" if (d, v) != (1, 6) else "<order><item>"
            rows.append({"doc": f"d{d}.xml", "version": v, "xml": xml, "time": 1000 + v,
                         "commit": f"c{d}.{v}"})
    return rows


def test_versions_in_many_batches_and_out_of_order_replay_as_in_process(spark: Any) -> None:
    """The apply stage streams each document's versions: with three versions an Arrow batch,
    the documents sharing partitions and the rows shuffled, the four outputs (and the key
    notes) equal replay_history's."""
    import random

    from xmlevents.replay import CEL_SCHEMA, DiffOptions, Key

    rows = _long_history()
    shuffled = random.Random(29).sample(rows, len(rows))
    options = DiffOptions(keys=(Key.parse("item=@k"),))
    queries = ["SELECT * FROM S WHERE ins ; upd"]
    local = replay_history(rows, DEFS, options=options, queries=queries)
    assert any(e["stage"] == "key" for e in local.errors)  # the notes are there to compare
    assert any(e["stage"] == "parse" for e in local.errors)
    saved = {k: spark.conf.get(k) for k in ("spark.sql.execution.arrow.maxRecordsPerBatch",
                                            "spark.sql.shuffle.partitions")}
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "3")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    frames = None
    try:
        versions = spark.createDataFrame(
            [(r["doc"], r["version"], r["xml"], r["commit"], r["time"]) for r in shuffled],
            "doc string, version long, xml string, commit string, time long").repartition(3)
        frames = replay_frames(spark, versions, DEFS, options=options, queries=queries)
        for df, found, schema in ((frames.events, local.events, EVENTS_SCHEMA),
                                  (frames.composites, local.composites, COMPOSITES_SCHEMA),
                                  (frames.errors, local.errors, ERRORS_SCHEMA),
                                  (frames.cel, local.cel, CEL_SCHEMA)):
            assert _spark_rows(df) == _local_rows(found, schema.fieldNames())
        assert local.composites and local.cel
    finally:
        if frames is not None:
            frames.unpersist()
        for k, v in saved.items():
            spark.conf.set(k, v)


def test_the_apply_stage_hands_its_rows_over_a_frame_at_a_time() -> None:
    """The apply stage's worker function (no JVM: pandas batches in, frames out) yields frames
    of at most _FRAME_ROWS rows as it goes, several for one large version, and the rows are
    replay_history's, in its order."""
    import pandas as pd

    from xmlevents.replay import DiffOptions
    from xmlevents.replay._spark import _DIFFED, _FRAME_ROWS, _apply

    item = "<item><price>1</price><quantity>1</quantity></item>"  # 5 events, a composite
    big = "<order>" + item * (_FRAME_ROWS // 4) + "</order>"
    rows = [{"doc": "big.xml", "version": 0, "xml": big, "time": 5, "commit": "c"},
            {"doc": "big.xml", "version": 1, "xml": big.replace("1", "2", 3), "time": None,
             "commit": None},
            {"doc": "small.xml", "version": 0, "xml": "<order/>", "time": 7, "commit": "d"},
            {"doc": "small.xml", "version": 1, "xml": "<order><item/></order>", "time": 8,
             "commit": "e"}]
    local = replay_history(rows, DEFS)
    assert len(local.events) > _FRAME_ROWS and local.composites
    # The diff stage's rows, two to a batch; no script: the apply stage diffs itself.
    diffed = [{"doc": r["doc"], "version": r["version"], "xml": r["xml"], "script": None,
               "expect": None, "error": None, "time": r["time"], "commit": r["commit"],
               "notes": None} for r in rows]
    batches = [pd.DataFrame(diffed[i:i + 2], columns=_DIFFED.fieldNames())
               for i in range(0, len(diffed), 2)]
    frames = list(_apply(DEFS, DiffOptions(), None, None)(iter(batches)))
    assert len(frames) >= 2 and all(len(f) <= _FRAME_ROWS for f in frames)
    out = pd.concat(frames)
    events = out[out["record"] == "event"]
    assert list(events["id"]) == [e["id"] for e in local.events]
    assert list(events["doc"]) == [e["doc"] for e in local.events]
    composites = out[out["record"] == "composite"]
    assert [(d, t, list(e)) for d, t, e in zip(
        composites["doc"], composites["ts"], composites["events"], strict=True)] == [
        (c["doc"], c["ts"], c["events"]) for c in local.composites]
    assert list(zip(*(out[out["record"] == "version"][c] for c in ("doc", "version")),
                    strict=True)) == local.replayed
