"""Continuous replay, ``replay --follow`` (issue 29, item 5): :mod:`xmlevents.replay._follow`.

* without Spark: the source named (a folder, ``kafka://``), one micro-batch of a document
  replayed from its state as :func:`~xmlevents.replay.resume_history` replays a run (the
  example history in four micro-batches gives a one-shot replay's rows, ids included, but
  the composites raised at the end of the input), the checkpoint folder's refusals, and the
  command line's usage errors (before Spark starts);
* on Spark (slow): a folder receiving the example history in three files (JSON lines, gzip,
  Parquet) followed in three ``available_now`` runs gives, concatenated, a one-shot replay's
  events, errors and CEL rows, and its composites but those raised at the end of the input;
  a line that is not a version is an error row naming its file; another set of definitions
  is refused; Kafka without its connector is one line;
* a restart (slow): ``xmlevents replay --follow --trigger 1`` SIGKILLed (the driver and its
  JVM) while a micro-batch is being written, then restarted: every row exactly once.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from xmlevents._cli import main
from xmlevents.replay import (
    BatchReport,
    CheckpointError,
    DocumentState,
    FollowError,
    FollowSource,
    HistoryResult,
    iter_history,
    resume_history,
)
from xmlevents.replay._checkpoint import CHECKPOINT_STAGE
from xmlevents.replay._follow import _open_checkpoint, replay_batch

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "purchase_orders.jsonl.gz"
EXAMPLE_DEFS = ROOT / "examples" / "purchase_orders.xev"
QUERIES = ["SELECT * FROM S WHERE ins AS a ; del AS b",
           "SELECT NEXT * FROM S WHERE ins AS i ; upd AS u WITHIN 5 EVENTS"]
OUTPUTS = ("events", "composites", "errors", "cel")


def _rows() -> list[dict[str, Any]]:
    with gzip.open(EXAMPLE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


# The example's definitions, and one whose composites a plain replay raises only when each
# document's history closes at the end of the input (custom mode holds them).
HELD = "Held := ins(item) & ins(item/price) with mode=custom, context=cumulative\n"


def _defs() -> str:
    return EXAMPLE_DEFS.read_text(encoding="utf-8") + HELD


def _value(v: Any) -> Any:
    """A cell comparable across pyarrow, pandas and plain rows."""
    if isinstance(v, Mapping):
        return tuple(sorted((k, _value(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_value(x) for x in v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _bag(rows: Iterable[Mapping[str, Any]]) -> Counter[tuple[Any, ...]]:
    """Rows as a multiset (each row a sorted tuple of its cells)."""
    return Counter(_value(dict(r)) for r in rows)


def _one_shot(rows: list[dict[str, Any]], queries: list[str] = QUERIES
              ) -> tuple[HistoryResult, list[dict[str, Any]]]:
    """A one-shot replay's rows, and apart the composites raised at the end of the input
    (when each document's history closes): a followed history never ends."""
    result = HistoryResult()
    ended: list[dict[str, Any]] = []
    for step in iter_history(rows, _defs(), queries=queries):
        if step.kind == "end":
            ended.extend(step.composites)
            result.errors.extend(step.errors)
            result.cel.extend(step.cel)
        else:
            result.add(step)
    return result, ended


# --- without Spark -------------------------------------------------------------------------


def test_a_source_is_a_folder_or_a_kafka_topic() -> None:
    """A path is a folder; kafka://HOST:PORT/TOPIC names servers and one topic."""
    assert FollowSource.parse("/data/in") == FollowSource("folder", "/data/in")
    assert FollowSource.parse("kafka://a:9092,b:9092/versions") == FollowSource(
        "kafka", "a:9092,b:9092", "versions")
    assert str(FollowSource.parse("kafka://a:9092/v")) == "kafka://a:9092/v"
    for bad in ("kafka://a:9092", "kafka:///t", "kafka://a:9092/t/u"):
        with pytest.raises(FollowError, match="kafka://HOST:PORT/TOPIC"):
            FollowSource.parse(bad)


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A document's rows of a micro-batch as the operator gets them, sorted by version."""
    df = pd.DataFrame(rows, columns=["doc", "version", "xml", "commit", "time"])
    df["source"] = "part.jsonl"
    return df.sort_values(["version"], kind="stable")


def _in_batches(rows: list[dict[str, Any]], bounds: list[int]) -> list[list[dict[str, Any]]]:
    edges = [0, *bounds, 10**9]
    return [[r for r in rows if lo <= r["version"] < hi] for lo, hi in pairwise(edges)]


def test_micro_batches_from_the_state_give_the_one_shot_rows() -> None:
    """The example history (20 versions a document) in four micro-batches, each document
    going on from the state the last one left (pickled, as the state store keeps it): a
    one-shot replay's events, errors and CEL rows, ids included, and its composites but
    those of the end of the input."""
    import pickle

    from xmlevents.algebra import DefinitionSet
    from xmlevents.replay._cel import compiled_queries

    rows = [r for r in _rows() if r["version"] < 20]
    defs = DefinitionSet.of(_defs())
    cel = compiled_queries(tuple(QUERIES))
    got = HistoryResult()
    states: dict[str, bytes] = {}
    for batch in _in_batches(rows, [3, 8, 14]):
        for doc in sorted({r["doc"] for r in batch}):
            old = pickle.loads(states[doc]) if doc in states else None
            part = _frame([r for r in batch if r["doc"] == doc])
            result, new, skipped = replay_batch(doc, part, old, defs, options=None,
                                                namespaces=None, within=None, queries=cel)
            assert skipped == []
            assert isinstance(new, DocumentState)
            states[doc] = pickle.dumps(new)
            for name in OUTPUTS:
                getattr(got, name).extend(getattr(result, name))
    one, ended = _one_shot(rows)
    assert ended, "the example raises composites at its end (the comparison is not vacuous)"
    assert _bag(got.events) == _bag(one.events)
    assert _bag(got.errors) == _bag(one.errors)
    assert _bag(got.cel) == _bag(one.cel) and got.cel
    assert _bag(got.composites) == _bag(one.composites)
    assert _bag(got.composites) + _bag(ended) == _bag(
        [*one.composites, *ended])


def test_a_micro_batch_skips_what_the_state_has_read(tmp_path: Path) -> None:
    """Rows at or below the last version read are skipped; the last good version's row with
    other XML is an error row (a version cannot change once replayed), as in
    resume_history; a second row of a new version is a duplicate."""
    rows = [{"doc": "d", "version": v, "xml": f"<a>{'<b/>' * v}</a>", "commit": None,
             "time": None} for v in range(4)]
    _, state, _ = replay_batch("d", _frame(rows[:2]), None, None, options=None,
                                   namespaces=None, within=None, queries=())
    assert state is not None and state.version == 1
    again = [rows[0], {**rows[1], "xml": "<a><c/></a>"}, rows[2], rows[2], rows[3]]
    result, new, skipped = replay_batch("d", _frame(again), state, None, options=None,
                                        namespaces=None, within=None, queries=())
    assert skipped == [0, 1]
    assert [(e["version"], e["stage"]) for e in result.errors] == [
        (1, CHECKPOINT_STAGE), (2, "input")]
    assert new is not None and new.version == 3
    assert [e["version"] for e in result.events] == [2, 3]
    # the same through resume_history: the same rows
    folder = tmp_path / "ck"
    resume_history(rows[:2], folder)
    ref = resume_history(again, folder)
    assert _bag(ref.events) == _bag(result.events)
    assert _bag(ref.errors) == _bag(result.errors)
    nothing, unchanged, skipped = replay_batch("d", _frame(rows[:1]), new, None,
                                               options=None, namespaces=None, within=None,
                                               queries=())
    assert (nothing.events, unchanged, skipped) == ([], None, [0])


def test_the_checkpoint_folder_refuses_other_definitions_sources_and_runs(tmp_path: Path
                                                                         ) -> None:
    """A follower's folder: its fingerprint (another is refused by name), its source
    (another is refused), never a checkpoint of runs; a reset starts it again."""
    from xmlevents.replay import fingerprint

    prints = fingerprint(_defs())
    src = FollowSource.parse(str(tmp_path / "in"))
    folder = str(tmp_path / "ck")
    stream = _open_checkpoint(folder, prints, src, reset=False)
    assert stream == os.path.join(folder, "stream")
    os.makedirs(stream)  # Spark's, once it ran
    assert _open_checkpoint(folder, prints, src, reset=False) == stream
    with pytest.raises(CheckpointError, match="other definitions"):
        _open_checkpoint(folder, fingerprint(None), src, reset=False)
    with pytest.raises(FollowError, match=r"follows .* not "):
        _open_checkpoint(folder, prints, FollowSource.parse("kafka://h:1/t"), reset=False)
    _open_checkpoint(folder, fingerprint(None), src, reset=True)
    assert not os.path.exists(stream)
    runs = tmp_path / "runs"
    resume_history([{"doc": "d", "version": 0, "xml": "<a/>"}], runs)
    with pytest.raises(CheckpointError, match="a checkpoint of runs"):
        _open_checkpoint(str(runs), fingerprint(None), src, reset=False)


def test_the_checkpoint_is_a_folder_of_this_machine(tmp_path: Path) -> None:
    """A file:// checkpoint is its path; hdfs:// and other URLs are refused in one line (the
    driver writes the manifest)."""
    from xmlevents.replay._follow import _local_folder

    assert _local_folder(f"file://{tmp_path}/ck") == f"{tmp_path}/ck"
    assert _local_folder("rel/ck") == "rel/ck"
    with pytest.raises(FollowError, match=r"hdfs:// is not supported"):
        _local_folder("hdfs://nn:8020/ck")


@pytest.mark.parametrize(("extra", "message"), [
    (["--follow"], "--follow needs --checkpoint"),
    (["--follow", "--checkpoint", "C", "--engine", "local"], "drop --engine local"),
    (["--trigger", "1"], "--follow's; add --follow"),
    (["--available-now"], "--follow's; add --follow"),
    (["--follow", "--checkpoint", "C", "--trigger", "1", "--available-now"], "give one"),
])
def test_follow_usage_errors(tmp_path: Path, extra: list[str], message: str) -> None:
    """--follow's options that do not go together are usage errors (2), one line, before
    Spark starts."""
    err = io.StringIO()
    status = main(["replay", str(tmp_path), "-o", str(tmp_path / "out"), *extra],
                  stdout=io.StringIO(), stderr=err)
    assert status == 2
    assert message in err.getvalue() and err.getvalue().count("\n") == 1


def test_follow_reads_a_folder_not_a_file(tmp_path: Path) -> None:
    """--follow on a file is bad input (1): it follows a folder or a topic."""
    err = io.StringIO()
    status = main(["replay", str(EXAMPLE), "-o", str(tmp_path / "out"), "--follow",
                   "--checkpoint", str(tmp_path / "ck")], stdout=io.StringIO(), stderr=err)
    assert status == 1 and "not a file" in err.getvalue()


# --- on Spark ------------------------------------------------------------------------------


def _written(out: Path, name: str) -> list[dict[str, Any]]:
    """Every batch=N partition of an output, as rows (without the partition column)."""
    rows: list[dict[str, Any]] = []
    for part in sorted((out / name).glob("batch=*")):
        rows.extend(pq.read_table(part).to_pylist())
    return rows


def _write_json(path: Path, rows: list[dict[str, Any]], *, gz: bool = False) -> None:
    """A file arriving whole: written beside, then renamed in (a file source may list it
    between the two otherwise)."""
    tmp = path.parent.parent / f".{path.name}"
    data = "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")
    tmp.write_bytes(gzip.compress(data) if gz else data)
    os.replace(tmp, path)


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.parent.parent / f".{path.name}"
    pq.write_table(pa.Table.from_pylist(rows), tmp)
    os.replace(tmp, path)


@pytest.mark.slow
def test_three_available_now_runs_give_the_one_shot_rows(spark: Any, tmp_path: Path) -> None:
    """The example history (70 versions a document, a bad one among them) arriving in three
    files (JSON lines, gzip, Parquet), followed in
    three available-now runs: concatenated, a one-shot replay's events, errors and CEL rows,
    and its composites but those raised at the end of the input; a line that is not JSON
    and a negative version are error rows naming their file; other definitions are refused;
    nothing new, nothing written."""
    from xmlevents.replay import follow

    rows = [r for r in _rows() if r["version"] < 70]  # version 65 of one is not XML
    src, out, ck = tmp_path / "in", tmp_path / "out", str(tmp_path / "ck")
    src.mkdir()
    first, second, third = _in_batches(rows, [20, 45])
    reports: list[BatchReport] = []
    # the session's own setting (4 from the fixture; another test's session may have set
    # another: the worker's session is shared)
    shuffle = spark.conf.get("spark.sql.shuffle.partitions")

    def run() -> None:
        follow(spark, str(src), str(out), ck, _defs(), queries=QUERIES, available_now=True,
               partitions=2).run(reports.append)

    _write_json(src / "part-0.jsonl", first)
    with open(src / "part-0.jsonl", "a", encoding="utf-8") as f:
        f.write('this is not JSON\n{"doc": "x", "version": -1, "xml": "<a/>"}\n')
    run()
    _write_json(src / "part-1.jsonl.gz", second, gz=True)
    run()
    _write_parquet(src / "part-2.parquet", third)
    run()
    assert [r.batch for r in reports] == [0, 1, 2]
    # the state store's partitions: partitions=2, not the session's (left as it was)
    assert sorted(p.name for p in (tmp_path / "ck" / "stream" / "state" / "0").iterdir()
                  if p.name.isdigit()) == ["0", "1"]
    assert shuffle != "2"
    assert spark.conf.get("spark.sql.shuffle.partitions") == shuffle
    assert [r.rows for r in reports] == [len(first) + 2, len(second), len(third)]
    one, ended = _one_shot(rows)
    bad = sorted((e for e in _written(out, "errors") if e["stage"] == "input"),
                 key=lambda e: e["doc"] or "")
    assert [(e["doc"], e["version"]) for e in bad] == [(None, None), ("x", -1)]
    assert "part-0.jsonl: not a version row" in bad[0]["message"]
    assert bad[1]["message"].endswith("part-0.jsonl: version=-1 must be an integer from 0")
    assert _bag(_written(out, "events")) == _bag(one.events)
    assert _bag(e for e in _written(out, "errors") if e["stage"] != "input") == _bag(
        one.errors)
    assert [e["stage"] for e in one.errors] == ["parse"]
    assert _bag(_written(out, "cel")) == _bag(one.cel)
    assert _bag(_written(out, "composites")) == _bag(one.composites)
    assert ended and sum(r.composites for r in reports) == len(one.composites)
    # nothing new: no batch, nothing written
    run()
    assert len(reports) == 3
    with pytest.raises(CheckpointError, match="other definitions"):
        follow(spark, str(src), str(out), ck, None, queries=QUERIES, available_now=True)


@pytest.mark.slow
def test_kafka_without_its_connector_is_one_line(spark: Any, tmp_path: Path) -> None:
    """kafka://... where Spark has no Kafka connector: a FollowError naming the package to
    add (no broker is needed to find that out)."""
    from xmlevents.replay import follow

    with pytest.raises(FollowError, match=r"spark-sql-kafka-0-10_2\.13") as info:
        follow(spark, "kafka://localhost:9/versions", str(tmp_path / "out"),
               str(tmp_path / "ck"), _defs())
    assert "\n" not in str(info.value)
    assert not (tmp_path / "ck").exists()  # refused before the checkpoint folder is made


def _wait(predicate: Any, timeout: float, proc: subprocess.Popen[bytes], what: str,
          log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"the follower ended ({proc.returncode}) before {what}:\n"
                                 f"{log.read_text(errors='replace')[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} in {timeout} s:\n"
                                 f"{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.02)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the follower's process group: the driver, its JVM and the Python workers."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


@pytest.mark.slow
def test_a_follower_killed_mid_batch_then_restarted_writes_every_row_once(tmp_path: Path
                                                                         ) -> None:
    """``replay --follow --trigger 1`` SIGKILLed while a micro-batch is being written (its
    offsets logged, its events partition begun, no commit), then restarted and given one
    more file, then Ctrl-C while that file's micro-batch runs (130, once it is written, no
    traceback): the outputs hold a one-shot replay's rows exactly once (as multisets; its
    composites but those of the end of the input)."""
    rows = [r for r in _rows() if r["version"] < 18]
    first, second, third = _in_batches(rows, [6, 12])
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    _write_json(src / "part-0.jsonl", first)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    defs = tmp_path / "defs.xev"
    defs.write_text(_defs(), encoding="utf-8")
    command = [sys.executable, "-m", "xmlevents", "replay", str(src), "-o", str(out),
               "--definitions", str(defs), "--follow", "--checkpoint", str(ck),
               "--partitions", "1", "--master", "local[2]"]
    log = tmp_path / "follower.log"
    commits, offsets = ck / "stream" / "commits", ck / "stream" / "offsets"
    with open(log, "wb") as sink:
        proc = subprocess.Popen([*command, "--trigger", "1"], stdout=sink, stderr=sink,
                                start_new_session=True, env=env)
        try:
            _wait(lambda: (commits / "0").exists(), 240, proc, "first batch committed", log)
            _write_json(src / "part-1.jsonl", second)
            _wait(lambda: (offsets / "1").exists(), 60, proc, "second batch started", log)
            _wait(lambda: (out / "events" / "batch=1").exists(), 60, proc,
                  "second batch's events begun", log)
            _kill(proc)
            assert not (commits / "1").exists(), "killed too late: batch 1 was committed"
        finally:
            _kill(proc)
    restarted = tmp_path / "restarted.log"
    with open(restarted, "wb") as sink:
        again = subprocess.Popen([*command, "--trigger", "1"], stdout=sink, stderr=sink,
                                 start_new_session=True, env=env)
        try:
            _wait(lambda: (commits / "1").exists(), 240, again, "batch 1 run again", restarted)
            _write_json(src / "part-2.jsonl", third)
            _wait(lambda: (offsets / "2").exists(), 60, again, "third batch started",
                  restarted)
            again.send_signal(signal.SIGINT)  # Ctrl-C: stops once batch 2 is written
            again.wait(timeout=120)
        finally:
            _kill(again)
    said = restarted.read_text(errors="replace")
    assert again.returncode == 130, said[-3000:]
    assert "Traceback" not in said and "Exception" not in said, said[-3000:]
    assert "stopping once the micro-batch in flight is written" in said
    assert (commits / "2").exists()
    one, ended = _one_shot(rows, [])
    assert _bag(_written(out, "events")) == _bag(one.events)
    assert _bag(_written(out, "errors")) == _bag(one.errors)
    assert _bag(_written(out, "composites")) == _bag(one.composites)
    assert ended and sum(_bag(_written(out, "composites")).values()) == len(one.composites)
