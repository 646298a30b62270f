"""``xmlevents replay --conf KEY=VALUE`` and the master Spark's configuration names (issue 29,
item 3): settings checked before any work, handed to the session, and ``--out`` checked on
this machine only when the master that will run is local."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from xmlevents._cli import main


def write_history(path: Path) -> Path:
    rows = [{"doc": "a.xml", "version": 0, "xml": "<order><item/></order>"},
            {"doc": "a.xml", "version": 1, "xml": "<order><item><price>5</price></item></order>"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    if "(the JVM's messages: " in captured.err:  # -q's log, kept when Spark cannot start
        Path(captured.err.rsplit(": ", 1)[1].rstrip(")\n")).unlink()
    return status, captured.out, captured.err


class NoCluster(RuntimeError):
    pass


def record_session(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    """Starting Spark records its arguments and fails as an unreachable cluster does."""
    import xmlevents.replay

    calls: list[tuple[Any, dict[str, Any]]] = []

    def unreachable(master: Any = None, **options: Any) -> Any:
        calls.append((master, options))
        raise NoCluster("no cluster here")

    monkeypatch.setattr(xmlevents.replay, "spark_session", unreachable)
    return calls


@pytest.fixture(autouse=True)
def no_spark_configuration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Nothing in the environment names a master unless a test sets it."""
    for name in ("MASTER", "PYSPARK_SUBMIT_ARGS", "PYSPARK_GATEWAY_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "no-conf"))


@pytest.mark.parametrize(("conf", "message"), [
    ("spark.executor.memory", "--conf 'spark.executor.memory': expected NAME=VALUE, e.g. "
                              "spark.executor.memory=2g"),
    ("=2g", "--conf '=2g': expected NAME=VALUE"),
    ("executor.memory=2g", "--conf 'executor.memory=2g': 'executor.memory' is not a Spark "
                           "setting (those start with spark.; Hadoop's are spark.hadoop.*)"),
])
def test_a_bad_conf_fails_before_any_work(conf: str, message: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """No '=', an empty side, a key that is not Spark's: one line, status 1, no Spark."""
    calls = record_session(monkeypatch)
    history = write_history(tmp_path / "h.jsonl")
    status, out, err = run(["replay", str(history), "--out", str(tmp_path / "o"),
                            "--conf", conf], capsys)
    assert (status, out, calls) == (1, "", [])
    assert err.startswith(f"xmlevents: error: {message}") and err.count("\n") == 1, err


def test_conf_is_sparks_and_the_local_engine_refuses_it(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """--conf with --engine local: refused as --master is (status 1, one line)."""
    history = write_history(tmp_path / "h.jsonl")
    status, _, err = run(["replay", str(history), "--out", str(tmp_path / "o"), "--engine",
                          "local", "--conf", "spark.executor.memory=2g"], capsys)
    assert status == 1
    assert err == ("xmlevents: error: --conf: Spark's, and --engine local runs without Spark: "
                   "drop them or use --engine spark\n")


def test_conf_settings_reach_the_session(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Every --conf is handed to the session (the last of a key wins), beside --master."""
    calls = record_session(monkeypatch)
    history = write_history(tmp_path / "h.jsonl")
    status, _, err = run(["replay", str(history), "--out", str(tmp_path / "o"), "-q",
                          "--master", "local[1]", "--conf", "spark.executor.memory=1g",
                          "--conf", "spark.sql.shuffle.partitions=3",
                          "--conf", "spark.executor.memory=2g"], capsys)
    assert status == 3 and err.startswith("xmlevents: error: cannot start Spark: no cluster")
    [(master, options)] = calls
    assert master == "local[1]"
    assert options["spark.executor.memory"] == "2g"
    assert options["spark.sql.shuffle.partitions"] == "3"


@pytest.mark.parametrize("named_by", ["--conf", "MASTER", "PYSPARK_SUBMIT_ARGS",
                                      "spark-defaults.conf"])
@pytest.mark.parametrize(("master", "checked_here"), [("local[2]", True),
                                                      ("spark://nowhere:7077", False)])
def test_out_is_checked_here_only_for_a_local_master_wherever_it_is_named(
        named_by: str, master: str, checked_here: bool, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A master named by --conf spark.master, MASTER, PYSPARK_SUBMIT_ARGS or
    spark-defaults.conf counts as --master does: local, --out is this machine's and checked
    before Spark starts; a cluster's is checked on its file system once Spark runs."""
    calls = record_session(monkeypatch)
    history = write_history(tmp_path / "h.jsonl")
    argv = ["replay", str(history), "--out", "/proc/x", "-q"]
    if named_by == "--conf":
        argv += ["--conf", f"spark.master={master}"]
    elif named_by == "MASTER":
        monkeypatch.setenv("MASTER", master)
    elif named_by == "PYSPARK_SUBMIT_ARGS":
        monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", f"--master {master} pyspark-shell")
    else:
        conf = tmp_path / "conf"
        conf.mkdir()
        (conf / "spark-defaults.conf").write_text(f"spark.master {master}\n")
        monkeypatch.setenv("SPARK_CONF_DIR", str(conf))
    status, _, err = run(argv, capsys)
    if checked_here:
        assert status == 1 and calls == []
        assert err.startswith("xmlevents: error: --out /proc/x: cannot create the folder")
    else:
        assert status == 3 and len(calls) == 1
        assert err.startswith("xmlevents: error: cannot start Spark: no cluster here")
