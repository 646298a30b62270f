"""``xmlevents replay --engine auto``, the default (issue 30, item 4): local for a small input
with no Spark named anywhere, Spark when an option, the configuration or the input's size
names it; the choice and its reason in the summary."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pytest

from xmlevents._cli import _engine, main
from xmlevents._cli._engine import EngineChoice, choose_engine, input_size

QUIET = {"SPARK_CONF_DIR": "/nowhere", "SPARK_HOME": "/nowhere"}  # no defaults file


def args(history: Path, **given: object) -> argparse.Namespace:
    values: dict[str, object] = {"engine": "auto", "master": None, "partitions": None,
                                 "follow": False, "out": "out", "history": str(history)}
    values.update(given)
    return argparse.Namespace(**values)


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps({"doc": "a", "version": v, "xml": f"<a n='{v}'/>"})
                            + "\n" for v in range(5)), encoding="utf-8")
    return path


def test_a_small_input_with_no_master_is_replayed_in_process(small: Path) -> None:
    chosen = choose_engine(args(small), {}, QUIET)
    size = small.stat().st_size
    assert chosen == EngineChoice("local", f"{size} bytes of input, under 256.0 MB, and no "
                                           "Spark master configured")


@pytest.mark.parametrize(("given", "conf", "reason"), [
    ({"master": "local[2]"}, {}, "--master given"),
    ({}, {"spark.executor.memory": "2g"}, "--conf given"),
    ({"partitions": 8}, {}, "--partitions given"),
    ({"follow": True}, {}, "--follow given"),
    ({"master": "local[2]", "partitions": 8}, {}, "--master and --partitions given"),
    ({"out": "hdfs://nn/out"}, {}, "--out on hdfs://"),
])
def test_spark_options_choose_spark(small: Path, given: dict[str, object],
                                    conf: dict[str, str], reason: str) -> None:
    assert choose_engine(args(small, **given), conf, QUIET) == EngineChoice("spark", reason)


def test_a_configured_master_chooses_spark(small: Path, tmp_path: Path) -> None:
    assert choose_engine(args(small), {}, {**QUIET, "MASTER": "spark://h:7077"}) == \
        EngineChoice("spark", "a master from MASTER")
    (tmp_path / "conf").mkdir()
    defaults = tmp_path / "conf" / "spark-defaults.conf"
    defaults.write_text("spark.master  spark://h:7077\n", encoding="utf-8")
    chosen = choose_engine(args(small), {}, {"SPARK_CONF_DIR": str(tmp_path / "conf")})
    assert chosen == EngineChoice("spark", f"a master from {defaults}")


def test_a_large_input_chooses_spark_when_it_is_installed(
        small: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_engine, "LARGE", 100)
    size = small.stat().st_size
    assert choose_engine(args(small), {}, QUIET) == EngineChoice(
        "spark", f"{size} bytes of input, 100 bytes or more")
    monkeypatch.setattr(_engine.importlib.util, "find_spec", lambda name: None)
    chosen = choose_engine(args(small), {}, QUIET)
    assert chosen.engine == "local"
    assert chosen.reason is not None and "pyspark is not installed" in chosen.reason


def test_a_named_engine_is_taken_as_named(small: Path) -> None:
    for engine in ("local", "spark"):
        assert choose_engine(args(small, engine=engine, master="x"), {}, QUIET) == \
            EngineChoice(engine)


def test_a_folders_size_is_its_files_counted_up_to_the_threshold(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / "d" / str(i)).mkdir(parents=True)
        (tmp_path / "d" / str(i) / "v.xml").write_bytes(b"x" * 1000)
    assert input_size(str(tmp_path / "d")) == 3000
    assert input_size(str(tmp_path / "d"), stop=1500) == 2000  # stopped once past it


def test_five_versions_with_no_engine_replay_in_seconds_and_say_which_engine(
        small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's done-when: no --engine, five versions, a few seconds, the engine named."""
    for name in ("MASTER", "PYSPARK_SUBMIT_ARGS", "PYSPARK_GATEWAY_PORT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in QUIET.items():
        monkeypatch.setenv(name, value)
    start = time.perf_counter()
    status = main(["replay", str(small), "--define", "E := upd(a/@n)", "--out",
                   str(tmp_path / "out"), "-q"])
    took = time.perf_counter() - start
    out = capsys.readouterr().out
    assert status == 0
    assert ("  engine            local (in process, no JVM), chosen: "
            f"{small.stat().st_size} bytes of input, under 256.0 MB") in out
    assert "E 4" in out
    print(f"five versions in {took:.2f} s")  # a figure, not a timed assertion
