"""``xmlevents replay --checkpoint CKPT`` on the batch engines (issue 29, item 4).

* the local engine: the example history split by version into two runs gives every output
  of one run (as multisets of rows, the ``run`` column aside), so do three runs; a rerun
  of the same input adds nothing and changes nothing (outputs, checkpoint); another
  definition set is refused (status 1, one line); ``--checkpoint-reset`` starts over;
  a URL other than ``file://``, a follower's folder, ``--checkpoint-reset`` alone;
* a run killed between its states and its manifest, then rerun: as if not killed;
* the edge cases run by run (a changed last good version, a document whose new versions are
  all bad, a bad last version, a duplicate): the error rows of each run;
* Spark (slow): two runs on ``local[2]`` give one local run's outputs, Spark's run 2
  continues a local run 1's checkpoint (the engines share the format), and Spark writes
  the edge cases run by run as the local engine does.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds  # type: ignore[import-untyped]
import pytest

from xmlevents._cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "purchase_orders.jsonl.gz"
EXAMPLE_DEFS = ROOT / "examples" / "purchase_orders.xev"
QUERY = "SELECT * FROM S WHERE ins AS a ; del AS b WITHIN 40 EVENTS"
OUTPUTS = ("events", "composites", "errors", "cel")


def _rows(last: int | None = None) -> list[dict[str, Any]]:
    with gzip.open(EXAMPLE, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return [r for r in rows if last is None or r["version"] <= last]


def _table(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _replay(history: Path, out: Path, ck: Path | None, *extra: str,
            engine: str = "local", keys: str = "--no-key") -> tuple[int, str, str]:
    """One run. Without keys by default: keys inferred are the first run's (inferred from
    what it read), so a split history would be diffed with other keys than the whole one
    (test_keys_inferred_by_the_first_run_are_the_next_runs)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    args = ["replay", str(history), "-o", str(out), "--definitions", str(EXAMPLE_DEFS),
            "--cel", QUERY, "-q", "--show", "0", "--engine", engine, keys, *extra]
    if ck is not None:
        args += ["--checkpoint", str(ck)]
    status = main(args, stdout=stdout, stderr=stderr)
    return status, stdout.getvalue(), stderr.getvalue()


def _output(folder: Path) -> Counter[str]:
    """An output folder's rows (every run=N partition, the run column aside), a multiset."""
    table = ds.dataset(str(folder), partitioning="hive" if any(
        p.name.startswith("run=") for p in folder.iterdir()) else None).to_table()
    if "run" in table.column_names:
        table = table.drop(["run"])
    return Counter(json.dumps(r, sort_keys=True, default=str) for r in table.to_pylist())


def _same_outputs(runs: Path, one: Path) -> None:
    for name in OUTPUTS:
        got, want = _output(runs / name), _output(one / name)
        assert got == want, name
        assert sum(want.values()) > 0 or name == "errors", name  # not vacuous


def _split(tmp_path: Path, cuts: dict[str, int], last: int | None = None
           ) -> tuple[Path, Path]:
    """The history cut per document (versions up to ``cuts[doc]``), and the whole."""
    rows = _rows(last)
    head = [r for r in rows if r["version"] <= cuts.get(r["doc"], -1)]
    return _table(tmp_path / "head.jsonl", head), _table(tmp_path / "all.jsonl", rows)


@pytest.fixture(scope="module")
def one_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole example history replayed at once, without a checkpoint."""
    tmp = tmp_path_factory.mktemp("one")
    status, _, err = _replay(EXAMPLE, tmp / "out", None)
    assert status == 0, err
    return tmp / "out"


CUTS = {"orders/2026-11-a.xml": 3, "orders/2026-11-b.xml": 70, "orders/2026-11-c.xml": -1}


def test_two_runs_give_the_outputs_of_one(tmp_path: Path, one_run: Path) -> None:
    head, whole = _split(tmp_path, CUTS)
    out, ck = tmp_path / "out", tmp_path / "ck"
    status, first, err = _replay(head, out, ck)
    assert status == 0, err
    assert "run 1 (resumed 0 documents, started 2; 0 versions skipped" in first
    status, second, err = _replay(whole, out, ck)
    assert status == 0, err
    assert "run 2 (resumed 2 documents, started 1; 75 versions skipped" in second
    assert sorted(p.name for p in (out / "events").iterdir()) == ["run=1", "run=2"]
    _same_outputs(out, one_run)


def test_three_runs_give_the_outputs_of_one(tmp_path: Path, one_run: Path) -> None:
    rows = _rows()
    out, ck = tmp_path / "out", tmp_path / "ck"
    for n, cut in enumerate((10, 90, None)):
        table = _table(tmp_path / f"t{n}.jsonl",
                       [r for r in rows if cut is None or r["version"] <= cut])
        status, _, err = _replay(table, out, ck)
        assert status == 0, err
    assert json.loads((ck / "manifest.json").read_text())["run"] == 3
    _same_outputs(out, one_run)


def _files(*folders: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for f in folders for p in sorted(f.rglob("*"))
            if p.is_file()}


def test_keys_inferred_by_the_first_run_are_the_next_runs(tmp_path: Path) -> None:
    """With keys inferred (no --key), the first run infers them from what it reads, says so
    in its summary and its errors, and keeps them in the checkpoint; the next run diffs with
    those (not with a new inference over more versions) and says where they came from."""
    head, whole = _split(tmp_path, CUTS)
    out, ck = tmp_path / "out", tmp_path / "ck"
    status, first, err = _replay(head, out, ck, keys="--key=auto")
    assert status == 0, err
    assert "  keys inferred     item=@partnum (100% present" in first
    manifest = json.loads((ck / "manifest.json").read_text("utf-8"))
    assert manifest["keys"] == ["item=@partnum", "order=@id"]
    assert sum(e["stage"] == "key" for e in ds.dataset(str(out / "errors" / "run=1"))
               .to_table().to_pylist()) == 2
    status, second, err = _replay(whole, out, ck, keys="--key=auto")
    assert status == 0, err
    assert "  keys inferred     item=@partnum, order=@id (by the checkpoint's first run)\n" \
        in second
    assert not any(e["stage"] == "key" for e in ds.dataset(str(out / "errors" / "run=2"))
                   .to_table().to_pylist())


def test_a_rerun_of_the_same_input_adds_and_changes_nothing(tmp_path: Path) -> None:
    whole = _table(tmp_path / "all.jsonl", _rows(20))
    out, ck = tmp_path / "out", tmp_path / "ck"
    assert _replay(whole, out, ck)[0] == 0
    before = _files(out, ck)
    status, summary, err = _replay(whole, out, ck)
    assert status == 0, err
    assert "nothing new: run 1 stays the last" in summary
    assert "versions          0 replayed" in summary
    assert _files(out, ck) == before


def test_another_definition_set_is_refused(tmp_path: Path) -> None:
    whole = _table(tmp_path / "all.jsonl", _rows(5))
    out, ck = tmp_path / "out", tmp_path / "ck"
    assert _replay(whole, out, ck)[0] == 0
    before = _files(out, ck)
    stderr = io.StringIO()
    status = main(["replay", str(whole), "-o", str(out), "--engine", "local", "-q",
                   "--checkpoint", str(ck), "--cel", QUERY,
                   "--define", "Added := ins(item)"], stdout=io.StringIO(), stderr=stderr)
    assert status == 1
    message = stderr.getvalue()
    assert message.count("\n") == 1 and "other definitions" in message
    assert "--checkpoint-reset" in message
    assert _files(out, ck) == before


def test_checkpoint_reset_starts_over(tmp_path: Path, one_run: Path) -> None:
    head, whole = _split(tmp_path, CUTS)
    out, ck = tmp_path / "out", tmp_path / "ck"
    assert _replay(head, out, ck)[0] == 0
    assert _replay(whole, out, ck)[0] == 0
    status, summary, err = _replay(whole, out, ck, "--checkpoint-reset")
    assert status == 0, err
    assert "run 1 (resumed 0 documents, started 3; 0 versions skipped" in summary
    assert sorted(p.name for p in (out / "events").iterdir()) == ["run=1"]
    _same_outputs(out, one_run)


@pytest.mark.parametrize(("extra", "status", "message"), [
    (["--checkpoint-reset"], 2, "--checkpoint-reset: resets --checkpoint CKPT"),
    (["--checkpoint", "hdfs://nn:8020/ck"], 1, "hdfs:// is not supported"),
])
def test_checkpoint_usage(tmp_path: Path, extra: list[str], status: int, message: str
                          ) -> None:
    whole = _table(tmp_path / "all.jsonl", _rows(2))
    stderr = io.StringIO()
    got = main(["replay", str(whole), "-o", str(tmp_path / "out"), "--engine", "local",
                *extra], stdout=io.StringIO(), stderr=stderr)
    assert got == status
    assert message in stderr.getvalue() and stderr.getvalue().count("\n") == 1


def test_a_file_uri_is_a_folder_of_this_machine(tmp_path: Path) -> None:
    whole = _table(tmp_path / "all.jsonl", _rows(2))
    status, summary, err = _replay(whole, tmp_path / "out", None, "--checkpoint",
                                   f"file://{tmp_path}/ck")
    assert status == 0, err
    assert (tmp_path / "ck" / "manifest.json").exists() and "run 1" in summary


def test_a_followers_folder_and_a_plain_output_are_refused(tmp_path: Path) -> None:
    whole = _table(tmp_path / "all.jsonl", _rows(2))
    (tmp_path / "follower").mkdir()
    (tmp_path / "follower" / "follow.json").write_text('{"source": "x"}\n')
    status, _, err = _replay(whole, tmp_path / "out", tmp_path / "follower")
    assert status == 1 and "the checkpoint of a follower" in err and err.count("\n") == 1
    assert _replay(whole, tmp_path / "plain", None)[0] == 0  # a replay without checkpoint
    status, _, err = _replay(whole, tmp_path / "plain", tmp_path / "ck")
    assert status == 1 and "not only runs" in err and err.count("\n") == 1
    assert not (tmp_path / "ck" / "manifest.json").exists()


# --- on Spark ------------------------------------------------------------------------------

SHORT = 24  # versions 0..24 of each document: Spark's runs in minutes at a loaded machine
SHORT_CUTS = {"orders/2026-11-a.xml": 3, "orders/2026-11-b.xml": 15}


@pytest.fixture(scope="module")
def one_short(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("short")
    whole = _table(tmp / "all.jsonl", _rows(SHORT))
    status, _, err = _replay(whole, tmp / "out", None)
    assert status == 0, err
    return tmp / "out"


def _spark_replay(history: Path, out: Path, ck: Path) -> tuple[int, str, str]:
    os.environ.setdefault("PYSPARK_PYTHON", __import__("sys").executable)
    return _replay(history, out, ck, "--master", "local[2]", "--partitions", "2",
                   engine="spark")


@pytest.mark.slow
def test_two_spark_runs_give_one_local_run(tmp_path: Path, one_short: Path) -> None:
    head, whole = _split(tmp_path, SHORT_CUTS, SHORT)
    out, ck = tmp_path / "out", tmp_path / "ck"
    status, first, err = _spark_replay(head, out, ck)
    assert status == 0, err
    assert "run 1 (resumed 0 documents, started 2" in first
    status, second, err = _spark_replay(whole, out, ck)
    assert status == 0, err
    assert "run 2 (resumed 2 documents, started 1; 20 versions skipped" in second
    _same_outputs(out, one_short)


@pytest.mark.slow
def test_spark_continues_a_local_run(tmp_path: Path, one_short: Path) -> None:
    head, whole = _split(tmp_path, SHORT_CUTS, SHORT)
    out, ck = tmp_path / "out", tmp_path / "ck"
    assert _replay(head, out, ck)[0] == 0  # run 1 in process
    status, second, err = _spark_replay(whole, out, ck)
    assert status == 0, err
    assert "run 2 (resumed 2 documents, started 1" in second
    _same_outputs(out, one_short)


def test_a_run_killed_before_its_manifest_then_rerun_is_as_if_not_killed(
        tmp_path: Path, one_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The outputs and states of run 2 written, the manifest not: the checkpoint is still run
    1's, and the rerun replaces run 2's partitions (no row twice)."""
    from xmlevents.replay._checkpoint import Checkpoint

    head, whole = _split(tmp_path, CUTS)
    out, ck = tmp_path / "out", tmp_path / "ck"
    assert _replay(head, out, ck)[0] == 0

    def killed(self: Checkpoint) -> int:
        raise KeyboardInterrupt  # as a kill between the states and the manifest

    with monkeypatch.context() as m:
        m.setattr(Checkpoint, "commit", killed)
        assert _replay(whole, out, ck)[0] == 130  # (the command's status for an interrupt)
    assert json.loads((ck / "manifest.json").read_text())["run"] == 1
    assert any((ck / "documents").glob("*.2.state"))  # written, never committed
    status, summary, err = _replay(whole, out, ck)
    assert status == 0, err
    assert "run 2 (resumed 2 documents, started 1; 75 versions skipped" in summary
    _same_outputs(out, one_run)


def _edge_tables(tmp_path: Path) -> list[Path]:
    """Three runs' tables: a last good version changed in run 2, a document whose new
    versions are all bad (its state must still have read them: run 3 reports them not
    again), a bad last version, a new document with a duplicate version."""
    def row(doc: str, v: int, xml: str) -> dict[str, Any]:
        return {"doc": doc, "version": v, "xml": xml, "commit": f"c{v}", "time": 1000 + v}

    item = "<order><item><price>{}</price></item></order>"
    run1 = [row("a", 0, "<order/>"), row("a", 1, item.format(1)), row("b", 0, "<order/>")]
    run2 = [row("a", 0, "<order/>"), row("a", 1, item.format(9)),  # changed: an error row
            row("a", 2, item.format(2)), row("a", 3, "<order><item>"),
            row("b", 1, "<order><item>"), row("b", 2, "<order"),  # every new version bad
            row("c", 0, "<order/>"), row("c", 0, "<order><x/></order>"),  # a duplicate
            row("c", 1, item.format(4))]
    run3 = [*run2, row("a", 4, item.format(5)), row("b", 3, item.format(6))]
    return [_table(tmp_path / f"run{n}.jsonl", rows)
            for n, rows in enumerate((run1, run2, run3), start=1)]


def _runs_of(out: Path) -> dict[str, dict[str, Counter[str]]]:
    return {name: {p.name: _output(p) for p in sorted((out / name).iterdir())}
            for name in OUTPUTS}


def test_the_edge_cases_run_by_run_in_process(tmp_path: Path) -> None:
    """What the local engine writes run by run on the edge cases (Spark must write the same:
    the slow test below)."""
    out, ck = tmp_path / "out", tmp_path / "ck"
    for table in _edge_tables(tmp_path):
        status, _, err = _replay(table, out, ck)
        assert status == 0, err
    runs = _runs_of(out)
    errors = {run: sorted(json.loads(r)["stage"] + ":" + str(json.loads(r)["version"])
                          for r in rows.elements()) for run, rows in runs["errors"].items()}
    assert errors == {"run=1": [],
                      "run=2": ["checkpoint:1", "input:0", "parse:1", "parse:2", "parse:3"],
                      "run=3": []}
    assert sum(runs["events"]["run=3"].values()) > 0


@pytest.mark.slow
def test_spark_writes_the_edge_cases_run_by_run_as_in_process(tmp_path: Path) -> None:
    tables = _edge_tables(tmp_path)
    for engine in ("local", "spark"):
        out, ck = tmp_path / f"out-{engine}", tmp_path / f"ck-{engine}"
        for table in tables:
            status, _, err = (_replay(table, out, ck) if engine == "local"
                              else _spark_replay(table, out, ck))
            assert status == 0, err
    assert _runs_of(tmp_path / "out-spark") == _runs_of(tmp_path / "out-local")
