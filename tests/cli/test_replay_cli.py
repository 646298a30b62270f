"""``xmlevents replay`` as a user meets it (issue 15, item 2): the in-process engine equals the
Spark job, the output folder and the numeric options are checked before any work, ``-q`` is
quiet down to the JVM, progress fits the stream, the summary says which engine ran and where
the time went, and a definition that matched nothing for want of a namespace gets the flag
that fixes it."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from xmlevents._cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "purchase_orders.jsonl.gz"
EXAMPLE_DEFS = ROOT / "examples" / "purchase_orders.xev"
POM = "http://maven.apache.org/POM/4.0.0"
DEFS = "ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))"


def write_history(path: Path) -> Path:
    rows = [{"doc": "a.xml", "version": 0, "xml": "<order><item/></order>"},
            {"doc": "a.xml", "version": 1,
             "xml": "<order><item><price>5</price><quantity>2</quantity></item></order>"},
            {"doc": "a.xml", "version": 2, "xml": "<order><item>"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def refuse_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make starting Spark fail the test: what is checked before any work never gets there."""
    import xmlevents.replay

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Spark was started")

    monkeypatch.setattr(xmlevents.replay, "spark_session", boom)
    monkeypatch.setattr(xmlevents.replay, "read_versions", boom)


# --- the local engine --------------------------------------------------------------------


def test_a_jvm_that_dies_mid_job_is_one_line_and_status_3(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Spark's JVM dying mid-job (out of memory: 6,400 versions of a 200 KB document did it
    before its window spilled) ends in one line naming it, status 3, not py4j's traceback."""
    py4j = pytest.importorskip("py4j.protocol")
    import xmlevents.replay
    from xmlevents._cli import replay as command

    def dies(*args: object, **kwargs: object) -> None:
        raise py4j.Py4JNetworkError("Error while sending or receiving")

    monkeypatch.setattr(command, "_start_spark", lambda stack, args, conf: object())
    monkeypatch.setattr(xmlevents.replay, "run_spark", dies)
    history = write_history(tmp_path / "h.jsonl")
    status, _, err = run(["replay", str(history), "--out", str(tmp_path / "out"), "-q",
                          "--engine", "spark"], capsys)
    assert status == 3
    assert err == ("xmlevents: error: Spark stopped mid-job: Error while sending or receiving "
                   "(if its memory ran out, give it more: --conf spark.driver.memory=4g)\n")


def test_a_failed_spark_job_names_the_java_exception_not_the_call() -> None:
    """Py4J's message starts with the call (o609.collectToPython), then the Java exception
    and its stack: the one line says the call and what failed."""
    from xmlevents._cli.replay import _first_line

    java = ("An error occurred while calling o609.collectToPython.\n: org.apache.spark."
            "SparkException: Job aborted due to stage failure: Python worker exited "
            "unexpectedly (crashed)\n\tat org.apache.spark.scheduler.DAGScheduler...")
    assert _first_line(RuntimeError(java)) == (
        "An error occurred while calling o609.collectToPython. org.apache.spark."
        "SparkException: Job aborted due to stage failure: Python worker exited unexpectedly "
        "(crashed)")
    assert _first_line(RuntimeError("x" * 500)) == "x" * 399 + "…"


def test_an_unreadable_line_names_the_file_once(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A table's line that is not JSON: its error names the file and the line, once (issue
    30, item 5: it said "badhist.jsonl: badhist.jsonl, line 3")."""
    history = tmp_path / "badhist.jsonl"
    history.write_text('{"doc": "a", "version": 0, "xml": "<a/>"}\nnot json\n', encoding="utf-8")
    status, out, err = run(["replay", str(history), "--out", str(tmp_path / "out"),
                            "--engine", "local", "-q"], capsys)
    assert status == 0, err
    assert f"  error: {history}, line 2, column 1: not valid JSON" in out
    assert out.count(str(history)) == 2  # the first line's, and the error's


def test_a_definition_that_matched_nothing_is_counted_zero(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every definition has its count in the summary, a zero included (issue 30, item 5)."""
    history = write_history(tmp_path / "h.jsonl")
    status, out, err = run(["replay", str(history), "--define", DEFS, "--define",
                            "Nothing := del(nosuch)", "--out", str(tmp_path / "out"),
                            "--engine", "local", "-q"], capsys)
    assert status == 0, err
    assert "  composite events  ItemComplete 1, Nothing 0\n" in out


def test_local_engine_summary_names_the_engine_and_the_parts_of_the_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """--engine local runs without Spark, writes the three datasets and says so."""
    import xmlevents.replay

    monkeypatch.setattr(xmlevents.replay, "spark_session", None)  # never asked for
    history = write_history(tmp_path / "h.jsonl")
    status, out, err = run(["replay", str(history), "--define", DEFS, "--out",
                            str(tmp_path / "out"), "--engine", "local"], capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == f"replayed {history} -> {tmp_path / 'out'}"
    assert lines[1] == "  engine            local (in process, no JVM)"
    assert "  versions          2 replayed, 1 error" in lines
    assert "  composite events  ItemComplete 1" in lines
    time_line = next(x for x in lines if x.startswith("  time"))
    assert "(reading " in time_line and ", replay " in time_line and ", writing " in time_line
    assert "a.xml version 2, line 1" in out
    for name in ("events", "composites", "errors"):
        assert any((tmp_path / "out" / name).glob("*.parquet")), name
    # not a terminal: the stage lines only, no bars
    stages = err.splitlines()
    assert [s.split("] ", 1)[1].split()[0] for s in stages] == ["reading", "inferring",
                                                                  "replaying", "writing"]
    assert all(s.startswith("[") and " s] " in s for s in stages)


def test_quiet_local_prints_only_the_summary(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    history = write_history(tmp_path / "h.jsonl")
    status, out, err = run(["replay", str(history), "--out", str(tmp_path / "out"),
                            "--engine", "local", "-q"], capsys)
    assert status == 0 and err == "" and out.startswith("replayed ")
    assert "  composite events  none defined" in out


class Terminal(io.StringIO):
    """A stderr that says it is a terminal: rich draws its bars on it."""

    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_bars_with_rate_and_time_left(tmp_path: Path) -> None:
    history = write_history(tmp_path / "h.jsonl")
    err, out = Terminal(), io.StringIO()
    assert main(["replay", str(history), "--out", str(tmp_path / "out"), "--engine", "local"],
                stdout=out, stderr=err) == 0
    shown = err.getvalue()
    assert "1 document" in shown and "a.xml" in shown  # the bar of all, the document's bar
    assert "3/3" in shown and "versions" in shown and "/s" in shown and "left" in shown
    assert "] reading" in shown  # the stage lines above the bars
    assert out.getvalue().startswith("replayed ")


def test_local_engine_refuses_spark_options(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    history = write_history(tmp_path / "h.jsonl")
    status, _, err = run(["replay", str(history), "--out", str(tmp_path / "o"), "--engine",
                          "local", "--master", "local[2]", "--partitions", "3"], capsys)
    assert status == 1
    assert err == ("xmlevents: error: --master and --partitions: Spark's, and --engine local "
                   "runs without Spark: drop them or use --engine spark\n")


def test_the_namespace_hint_gives_the_flag(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A POM replayed without -n: the run ends with a warning naming -n pom=URI and the path
    to write; with them, the definition fires and nothing is said."""
    history = tmp_path / "pom.jsonl"
    history.write_text("".join(json.dumps(r) + "\n" for r in pom_rows()), encoding="utf-8")
    status, out, err = run(["replay", str(history), "--out", str(tmp_path / "o"), "-q",
                            "--engine", "local", "--define",
                            "Added := ins(project/dependencies/dependency)"], capsys)
    assert status == 0
    assert "  composite events  Added 0\n" in out
    assert err == (f"xmlevents replay: warning: Added matched no event; 2 events on "
                   f"project/dependencies/dependency are in namespace {POM}: pass -n pom={POM} "
                   "and write pom:project/pom:dependencies/pom:dependency\n")
    status, out, err = run(["replay", str(history), "--out", str(tmp_path / "o"), "-q",
                            "--engine", "local", "-n", f"pom={POM}", "--define",
                            "Added := ins(pom:project/pom:dependencies/pom:dependency)"], capsys)
    assert status == 0 and err == "" and "  composite events  Added 2" in out


def pom_rows() -> list[dict[str, Any]]:
    def pom(deps: int) -> str:
        body = "".join(f"<dependency><artifactId>a{i}</artifactId></dependency>"
                       for i in range(deps))
        return f'<project xmlns="{POM}"><dependencies>{body}</dependencies></project>'

    return [{"doc": "pom.xml", "version": v, "xml": pom(v)} for v in range(3)]


# --- checked before any work -------------------------------------------------------------


@pytest.mark.parametrize("engine", ["spark", "local"])
@pytest.mark.parametrize(("out", "message"), [
    ("/proc/x", "--out /proc/x: cannot create the folder: "),
    ("FILE", "--out FILE: a file is there, not a folder"),
    ("FILE/x", "--out FILE/x: FILE is a file, not a folder"),
])
def test_an_output_folder_that_cannot_be_written_fails_first(
        out: str, message: str, engine: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """One line, status 1, before the table is read or Spark starts."""
    refuse_spark(monkeypatch)
    history = write_history(tmp_path / "h.jsonl")
    file = tmp_path / "file"
    file.write_text("x")
    out, message = out.replace("FILE", str(file)), message.replace("FILE", str(file))
    status, stdout, err = run(["replay", str(history), "--out", out, "--engine", engine,
                               "--define", DEFS], capsys)
    assert status == 1 and stdout == ""
    assert err.startswith(f"xmlevents: error: {message}") and err.count("\n") == 1, err
    assert "Spark" not in err and "Traceback" not in err


def test_a_clusters_output_path_is_left_to_spark(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """With --master naming a cluster, --out may be on its file system: not checked here."""
    import xmlevents.replay

    def no_cluster(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no cluster at spark://nowhere:7077\n\tat java...")

    monkeypatch.setattr(xmlevents.replay, "spark_session", no_cluster)
    history = write_history(tmp_path / "h.jsonl")
    status, _, err = run(["replay", str(history), "--out", "/proc/x", "-q", "--master",
                          "spark://nowhere:7077"], capsys)
    assert status == 3  # an unusable environment (docs/cli.md), not bad input
    assert err.startswith("xmlevents: error: cannot start Spark: no cluster at "
                          "spark://nowhere:7077 (the JVM's messages: ")
    assert err.count("\n") == 1
    log = Path(err.rsplit(": ", 1)[1].rstrip(")\n"))
    assert log.name.startswith("xmlevents-jvm-") and log.exists()  # kept, as it is named
    log.unlink()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in any folder")
def test_an_unwritable_parent_fails_first(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    refuse_spark(monkeypatch)
    history = write_history(tmp_path / "h.jsonl")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    status, _, err = run(["replay", str(history), "--out", str(locked / "o")], capsys)
    assert status == 1
    assert err == (f"xmlevents: error: --out {locked / 'o'}: cannot create the folder: "
                   "Permission denied\n")


def test_the_check_leaves_no_folder_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    """The folders made to check --out are removed again: a run that fails afterwards (here:
    a history that is no table) leaves nothing."""
    (tmp_path / "h.txt").write_text("<a/>")
    status, _, err = run(["replay", str(tmp_path / "h.txt"), "--out",
                          str(tmp_path / "new" / "out"), "--engine", "local"], capsys)
    assert status == 1 and "not a version table" in err
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--partitions", "0", "argument --partitions: 0 is less than 1: give 1 or more"),
    ("--partitions", "two", "argument --partitions: 'two' is not a whole number"),
    ("--show", "-1", "argument --show: -1 is less than 0: give 0 or more"),
    ("--engine", "spork", "argument --engine: invalid choice: 'spork'"),
])
def test_numeric_options_are_usage_errors(option: str, value: str, message: str,
                                          capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    refuse_spark(monkeypatch)
    status, _, err = run(["replay", "h.jsonl", "--out", "o", option, value], capsys)
    assert status == 2
    assert err.startswith("usage: xmlevents replay") and f"error: {message}" in err


def test_show_zero_prints_no_composites(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    history = write_history(tmp_path / "h.jsonl")
    status, out, _ = run(["replay", str(history), "--define", DEFS, "--out",
                          str(tmp_path / "o"), "--engine", "local", "-q", "--show", "0"], capsys)
    assert status == 0 and "ItemComplete 1" in out and "of each type" not in out


# --- on Spark (slow) ---------------------------------------------------------------------


def readme_main_job() -> list[str]:
    """The replay of the README's first command (after its install), as words: the docs'
    copies of that block are not run by tests/test_docs.py, this module runs it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)\n```", text, re.S)
    assert block is not None, "README.md: no sh block"
    install, _, job = block.group(1).partition(" && ")
    assert install == "python3 -m pip install -q -e '.[spark]'", install
    words = shlex.split(job)
    assert words[:3] == ["python3", "-m", "xmlevents"], words
    return words


def test_the_readmes_main_job_is_the_one_run_here() -> None:
    """The README's first command replays the example on Spark into /tmp/xmlevents-demo;
    the pages that repeat it (not run by tests/test_docs.py) repeat it word for word."""
    words = readme_main_job()
    assert words[3:] == [
        "replay", "examples/purchase_orders.jsonl.gz", "--definitions",
        "examples/purchase_orders.xev", "--engine", "spark", "--out", "/tmp/xmlevents-demo"]
    for page in ("docs/index.md", "docs/guide/replay.md", "docs/tutorial.md"):
        assert f"\n{' '.join(words)}\n" in (ROOT / page).read_text(encoding="utf-8") or (
            f"&& {' '.join(words)}\n" in (ROOT / page).read_text(encoding="utf-8")), page


@pytest.fixture(scope="module")
def example_on_spark(tmp_path_factory: pytest.TempPathFactory
                     ) -> Iterator[tuple[subprocess.CompletedProcess[str], Path]]:
    """The README's main job, on Spark, quiet, as a user runs it (its own output folder):
    what it printed and its folder."""
    pytest.importorskip("pyspark")
    out = tmp_path_factory.mktemp("spark") / "out"
    words = readme_main_job()
    words[words.index("--out") + 1] = str(out)
    done = subprocess.run([sys.executable, *words[1:], "-q"], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    yield done, out


def _rows(folder: Path) -> list[str]:
    import pyarrow.parquet as pq

    return sorted(json.dumps(r, sort_keys=True) for r in pq.read_table(folder).to_pylist())


@pytest.mark.slow
def test_local_engine_equals_spark_on_the_example_history(
        example_on_spark: tuple[subprocess.CompletedProcess[str], Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rows in all three tables (read back with pyarrow, in any order), in the
    same schemas; the same summary but for the engine and the time."""
    import pyarrow.parquet as pq

    spark, spark_out = example_on_spark
    assert spark.returncode == 0, spark.stderr
    words = readme_main_job()[3:]  # as the README gives them: paths from the root
    words[words.index("--engine") + 1] = "local"
    words[words.index("--out") + 1] = str(tmp_path / "out")
    monkeypatch.chdir(ROOT)
    status, out, _ = run([*words, "-q"], capsys)
    assert status == 0
    for name in ("events", "composites", "errors"):
        local, on_spark = pq.read_table(tmp_path / "out" / name), pq.read_table(spark_out / name)
        assert local.schema.remove_metadata().equals(on_spark.schema.remove_metadata()), name
        assert local.num_rows > 0, name
        assert _rows(tmp_path / "out" / name) == _rows(spark_out / name), name

    def same(summary: str) -> list[str]:
        return [x for x in summary.replace(str(tmp_path / "out"), "OUT").replace(
            str(spark_out), "OUT").splitlines() if not x.startswith(("  time", "  engine"))]

    assert same(out) == same(spark.stdout)
    assert "  engine            spark (local[*])" in spark.stdout
    assert "(Spark start " in spark.stdout and ", writing " in spark.stdout


@pytest.mark.slow
def test_quiet_spark_writes_nothing_on_stderr(
        example_on_spark: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """-q: no log4j or NativeCodeLoader warnings, no JVM notice, no stage bars: nothing."""
    spark, _ = example_on_spark
    assert spark.returncode == 0
    assert spark.stderr == ""
    assert spark.stdout.startswith("replayed ")
