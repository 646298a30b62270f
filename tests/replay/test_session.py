"""The replay's SparkSession on Spark's own configuration (issue 29, item 3): where its master
comes from, in Spark's order (:func:`resolve_master`, pure: no JVM), the user's settings over
the session's defaults, the package zipped as it imports for the executors, ``--out`` checked
through Hadoop's file system, and the file ``spark-submit`` runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest

from xmlevents.replay import MasterChoice, resolve_master
from xmlevents.replay._session import (
    configured_elsewhere,
    defaults_file,
    is_local_master,
    read_properties,
)
from xmlevents.replay._ship import PACKAGES, package_files, package_zip

ROOT = Path(__file__).resolve().parents[2]


def conf_dir(folder: Path, text: str, name: str = "spark-defaults.conf") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


# --- where the master comes from, in order ---------------------------------------------------


def every_source(tmp_path: Path) -> dict[str, str]:
    """An environment in which every source but the arguments names a master."""
    folder = conf_dir(tmp_path / "conf", "spark.master spark://defaults:7077\n")
    return {"SPARK_CONF_DIR": str(folder), "PYSPARK_GATEWAY_PORT": "1",
            "MASTER": "spark://env:7077",
            "PYSPARK_SUBMIT_ARGS": "--master spark://args:7077 pyspark-shell"}


def test_master_argument_wins_over_everything(tmp_path: Path) -> None:
    """--master (master=) first, over --conf spark.master and every environment source."""
    choice = resolve_master("spark://given:7077", {"spark.master": "spark://conf:7077"},
                            every_source(tmp_path))
    assert choice == MasterChoice("spark://given:7077", "--master", True)


def test_conf_spark_master_comes_second(tmp_path: Path) -> None:
    """--conf spark.master=... over spark-submit, MASTER, PYSPARK_SUBMIT_ARGS and the file."""
    choice = resolve_master(None, {"spark.master": "spark://conf:7077"},
                            every_source(tmp_path))
    assert choice == MasterChoice("spark://conf:7077", "--conf spark.master", True)


def test_spark_submit_comes_third_and_is_left_to_it(tmp_path: Path) -> None:
    """Under spark-submit (its gateway in the environment) the master is its own: not set
    here, not known before the session runs."""
    choice = resolve_master(None, {"spark.sql.shuffle.partitions": "3"},
                            every_source(tmp_path))
    assert choice == MasterChoice(None, "spark-submit", False)
    assert choice.local is None


def test_master_environment_variable_comes_fourth(tmp_path: Path) -> None:
    """MASTER over PYSPARK_SUBMIT_ARGS and spark-defaults.conf; set here (Spark's classic
    session does not read it)."""
    env = every_source(tmp_path)
    del env["PYSPARK_GATEWAY_PORT"]
    assert resolve_master(environ=env) == MasterChoice("spark://env:7077", "MASTER", True)


@pytest.mark.parametrize("args", ["--master spark://args:7077 pyspark-shell",
                                  "--master=spark://args:7077 pyspark-shell",
                                  "--conf spark.master=spark://args:7077 pyspark-shell",
                                  "-c spark.master=spark://args:7077 pyspark-shell",
                                  "--name x --master 'spark://args:7077' pyspark-shell"])
def test_pyspark_submit_args_come_fifth_and_are_left_to_pyspark(tmp_path: Path,
                                                                args: str) -> None:
    """--master (or --conf spark.master=) in PYSPARK_SUBMIT_ARGS, over the defaults file;
    pyspark's launcher passes them to the JVM, so the session does not set it."""
    env = every_source(tmp_path)
    del env["PYSPARK_GATEWAY_PORT"], env["MASTER"]
    env["PYSPARK_SUBMIT_ARGS"] = args
    assert resolve_master(environ=env) == MasterChoice("spark://args:7077",
                                                       "PYSPARK_SUBMIT_ARGS", False)


def test_master_option_wins_over_conf_inside_pyspark_submit_args() -> None:
    """Inside PYSPARK_SUBMIT_ARGS, --master over --conf spark.master (spark-submit's rule)."""
    env = {"SPARK_CONF_DIR": "/nowhere", "PYSPARK_SUBMIT_ARGS":
           "--conf spark.master=spark://conf:1 --master spark://option:2 pyspark-shell"}
    assert resolve_master(environ=env).url == "spark://option:2"


def test_spark_defaults_conf_comes_sixth(tmp_path: Path) -> None:
    """spark-defaults.conf's spark.master when nothing else names one (PYSPARK_SUBMIT_ARGS
    without a master left alone); the source is the file, Spark reads it itself."""
    env = every_source(tmp_path)
    del env["PYSPARK_GATEWAY_PORT"], env["MASTER"]
    env["PYSPARK_SUBMIT_ARGS"] = "--driver-memory 2g pyspark-shell"
    path = str(tmp_path / "conf" / "spark-defaults.conf")
    assert resolve_master(environ=env) == MasterChoice("spark://defaults:7077", path, False)


def test_the_embedded_local_session_only_when_nothing_names_a_master(tmp_path: Path) -> None:
    """No argument, no environment, a defaults file without spark.master: local[*], set
    here, no source to name."""
    folder = conf_dir(tmp_path / "conf", "spark.executor.memory 2g\n")
    choice = resolve_master(environ={"SPARK_CONF_DIR": str(folder)})
    assert choice == MasterChoice("local[*]", "", True) and choice.local is True
    assert resolve_master(environ={"SPARK_CONF_DIR": str(tmp_path / "none")}).url == "local[*]"


def test_the_defaults_file_is_found_where_spark_submit_looks(tmp_path: Path) -> None:
    """$SPARK_CONF_DIR first, else $SPARK_HOME/conf, else the pip pyspark's conf folder;
    a folder without the file is no file."""
    home = tmp_path / "home"
    conf_dir(home / "conf", "spark.master local[3]\n")
    other = conf_dir(tmp_path / "other", "spark.master local[4]\n")
    assert defaults_file({"SPARK_HOME": str(home)}) == str(home / "conf" /
                                                            "spark-defaults.conf")
    assert resolve_master(environ={"SPARK_HOME": str(home)}).url == "local[3]"
    assert resolve_master(environ={"SPARK_HOME": str(home),
                                   "SPARK_CONF_DIR": str(other)}).url == "local[4]"
    assert defaults_file({"SPARK_CONF_DIR": str(tmp_path)}) is None
    pyspark = pytest.importorskip("pyspark")
    assert defaults_file({}) in (None, os.path.join(os.path.dirname(pyspark.__file__),
                                                    "conf", "spark-defaults.conf"))


def test_a_properties_file_in_pyspark_submit_args_replaces_the_defaults(tmp_path: Path
                                                                        ) -> None:
    """--properties-file FILE in PYSPARK_SUBMIT_ARGS is read instead of spark-defaults.conf,
    as spark-submit does."""
    folder = conf_dir(tmp_path / "conf", "spark.master local[3]\n")
    own = conf_dir(tmp_path / "own", "spark.master local[5]\n", "mine.conf") / "mine.conf"
    env = {"SPARK_CONF_DIR": str(folder),
           "PYSPARK_SUBMIT_ARGS": f"--properties-file {own} pyspark-shell"}
    assert resolve_master(environ=env) == MasterChoice("local[5]", str(own), False)


def test_local_masters() -> None:
    """local, local[N], local[*], local[N,F] run in the driver's JVM; local-cluster and
    cluster URLs do not."""
    assert all(is_local_master(m) for m in ("local", "local[2]", "local[*]", "local[2,3]"))
    assert not any(is_local_master(m) for m in ("local-cluster[2,1,1024]",
                                                "spark://h:7077", "yarn", "k8s://h:443"))


# --- Spark's properties files -----------------------------------------------------------


def test_properties_are_read_as_java_reads_them(tmp_path: Path) -> None:
    """Separators white space, = or :; comments # and !; continued lines; escapes; values
    trimmed (Spark trims them)."""
    path = tmp_path / "spark-defaults.conf"
    path.write_text(
        "# a comment\n"
        "! another\n"
        "\n"
        "spark.master            spark://h:7077\n"
        "spark.a=1\n"
        "  spark.b : two words  \n"
        "spark.c = con\\\n"
        "      tinued\n"
        "spark\\ d=escaped key\n"
        "spark.e\n", encoding="utf-8")
    assert read_properties(str(path)) == {
        "spark.master": "spark://h:7077", "spark.a": "1", "spark.b": "two words",
        "spark.c": "continued", "spark d": "escaped key", "spark.e": ""}
    assert read_properties(str(tmp_path / "missing")) == {}


def test_the_users_settings_are_those_of_the_file_and_the_submit_args(tmp_path: Path
                                                                      ) -> None:
    """configured_elsewhere: the defaults file's settings, PYSPARK_SUBMIT_ARGS' --conf over
    them — the settings the session's own defaults must leave alone."""
    folder = conf_dir(tmp_path / "conf", "spark.sql.shuffle.partitions 3\nspark.x 1\n")
    env = {"SPARK_CONF_DIR": str(folder),
           "PYSPARK_SUBMIT_ARGS": "--conf spark.x=2 --conf=spark.y=3 pyspark-shell"}
    assert configured_elsewhere(env) == {"spark.sql.shuffle.partitions": "3", "spark.x": "2",
                                         "spark.y": "3"}


# --- the package for the executors -------------------------------------------------------


def test_the_shipped_packages_are_the_distributions() -> None:
    """PACKAGES names every subpackage pyproject.toml installs directly under xmlevents (a
    new package must be shipped too)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        packages = tomllib.load(f)["tool"]["setuptools"]["packages"]
    direct = {p.split(".", 1)[1] for p in packages if p.count(".") == 1}
    assert set(PACKAGES) == direct


def test_the_zip_holds_the_package_as_it_imports(tmp_path: Path) -> None:
    """xmlevents/..., with the mapped folders inside it (replay/ as xmlevents/replay/), every
    source file and no bytecode; a Python without xmlevents imports the replay from it."""
    path = package_zip(str(tmp_path))
    names = set(zipfile.ZipFile(path).namelist())
    assert {"xmlevents/__init__.py", "xmlevents/_cli/__init__.py",
            "xmlevents/replay/_session.py", "xmlevents/_foundation/lazy.py",
            "xmlevents/algebra/__init__.py", "xmlevents/replay/py.typed"} <= names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    assert len(names) == len(list(package_files()))
    replay_sources = {p.name for p in (ROOT / "replay").glob("*.py")}
    assert {n.split("/")[-1] for n in names if n.startswith("xmlevents/replay/")
            and n.endswith(".py")} == replay_sources
    assert Path(package_zip(str(tmp_path))).name == Path(path).name  # named by its content
    import site

    probe = subprocess.run(
        [sys.executable, "-S", "-c",
         "import xmlevents.replay._spark, xmlevents.algebra; print(xmlevents.__file__)"],
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([path, *site.getsitepackages()])),
        capture_output=True, text=True, cwd=tmp_path, check=False)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == f"{path}/xmlevents/__init__.py"


# --- on a JVM ----------------------------------------------------------------------------


def run_python(code: str, env: dict[str, str], cwd: Path) -> Any:
    """Run ``code`` in a fresh interpreter (a JVM of its own, started from ``env``); the
    JSON its last line prints."""
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MASTER", "PYSPARK_SUBMIT_ARGS", "PYSPARK_GATEWAY_PORT",
                        "PYSPARK_GATEWAY_SECRET", "SPARK_CONF_DIR")}
    env.update(extra)
    return env


@pytest.mark.slow
def test_spark_reads_spark_defaults_conf_and_the_user_settings_win(tmp_path: Path) -> None:
    """A real session from a spark-defaults.conf in a temporary SPARK_CONF_DIR: Spark itself
    reads its master (the session sets none), the summary names the file, the file's
    settings and then --conf win over the session's defaults, and its spark.pyspark.python
    over PYSPARK_PYTHON runs the workers."""
    pytest.importorskip("pyspark")
    folder = conf_dir(tmp_path / "conf", "spark.master  local[1]\n"
                                         "spark.sql.shuffle.partitions 3\n"
                                         "spark.sql.execution.arrow.maxRecordsPerBatch 5\n"
                                         f"spark.pyspark.python {sys.executable}\n")
    code = """if True:
        import json
        from xmlevents.replay import make_session, master_where
        spark = make_session(progress=False, **{"spark.sql.shuffle.partitions": "6"})
        ran = spark.sparkContext.parallelize([1, 2], 2).map(lambda x: x * 10).sum()
        print(json.dumps([spark.sparkContext.master, master_where(spark),
                          spark.conf.get("spark.sql.shuffle.partitions"),
                          spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch"),
                          spark.sparkContext.getConf().get("spark.ui.enabled"),
                          spark.sparkContext.pythonExec, ran]))
        spark.stop()
    """
    master, where, partitions, batch, ui, python, ran = run_python(
        code, clean_env(SPARK_CONF_DIR=str(folder), PYSPARK_PYTHON="/nowhere/python3"),
        tmp_path)
    assert (master, where) == ("local[1]", "local[1], from spark-defaults.conf")
    assert partitions == "6"  # --conf over the file over the session's 8
    assert batch == "5"  # the file's over the session's 64
    assert ui == "false"  # the session's default where nothing names it
    # spark.pyspark.python over PYSPARK_PYTHON (a path that does not exist): the workers ran
    assert (python, ran) == (sys.executable, 30)


@pytest.mark.slow
def test_the_output_is_checked_through_hadoops_file_system(spark: Any, tmp_path: Path
                                                           ) -> None:
    """A URL Spark has no file system for, a file in place of the folder, a folder that
    cannot be made: one line each; a good folder is made, probed and removed again."""
    from xmlevents.replay import OutputLocationError, check_spark_output

    for url in ("s3a://bucket/out", "nosuch://host/out"):  # a class missing, a scheme
        with pytest.raises(OutputLocationError) as missing:
            check_spark_output(spark, url)
        scheme = url.split(":")[0]
        assert str(missing.value).startswith(
            f"{url}: this Spark has no file system for {scheme}:// (its connector is not on "
            "the classpath"), str(missing.value)
        assert "\n" not in str(missing.value)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputLocationError) as file:
        check_spark_output(spark, f"file://{tmp_path / 'file'}")
    assert str(file.value) == f"file://{tmp_path / 'file'}: a file is there, not a folder"
    with pytest.raises(OutputLocationError) as inside:
        check_spark_output(spark, str(tmp_path / "file" / "out"))
    assert str(inside.value) == (f"{tmp_path / 'file' / 'out'}: {tmp_path / 'file'} is a "
                                 "file, not a folder")
    if os.geteuid() != 0:
        (tmp_path / "ro").mkdir(mode=0o555)
        with pytest.raises(OutputLocationError, match="cannot"):
            check_spark_output(spark, f"file://{tmp_path / 'ro' / 'out'}")
    check_spark_output(spark, f"file://{tmp_path / 'new' / 'out'}")
    check_spark_output(spark, str(tmp_path))  # a local master: a path of this machine
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["file"] + (["ro"] if os.geteuid() != 0 else []))


@pytest.mark.slow
def test_spark_submit_runs_the_packages_main_file(tmp_path: Path) -> None:
    """spark-submit, as pyspark ships it, runs xmlevents/__main__.py as a file: the replay on
    local[2], the master spark-submit's."""
    pyspark = pytest.importorskip("pyspark")
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    main = subprocess.run([sys.executable, "-c",
                           "import xmlevents.__main__ as m; print(m.__file__)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert main.endswith(os.path.join("xmlevents", "__main__.py"))
    history = tmp_path / "h.jsonl"
    history.write_text("".join(json.dumps(r) + "\n" for r in [
        {"doc": "a.xml", "version": 0, "xml": "<order><item/></order>"},
        {"doc": "a.xml", "version": 1,
         "xml": "<order><item><price>5</price><quantity>2</quantity></item></order>"}]))
    # spark-submit's JVM as the embedded session's (its options are spark-submit's to give).
    from xmlevents.replay._session import _SHORT_JOBS_JVM

    env = clean_env(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                    SPARK_SUBMIT_OPTS=_SHORT_JOBS_JVM)
    done = subprocess.run(
        [str(submit), "--master", "local[2]", main, "replay", str(history), "--out",
         str(tmp_path / "out"), "-q", "--define",
         "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "  engine            spark (local[2], from spark-submit)\n" in done.stdout
    assert "  composite events  Ei 1\n" in done.stdout
    assert (tmp_path / "out" / "events" / "_SUCCESS").exists()


@pytest.mark.slow
def test_the_embedded_sessions_jvm_runs_short_jobs(spark: Any) -> None:
    """A session started here on a local master (the tests' shared one) runs its JVM with the
    JIT's first tier only and the serial collector, after the logging option (issue 28,
    item 7: half the time of a small replay)."""
    from xmlevents.replay._session import _USER_JVM_ENVIRON

    if any(os.environ.get(k) for k in _USER_JVM_ENVIRON):
        pytest.skip("the environment gives the JVM its options: the session adds none")
    jvm = spark.sparkContext._jvm
    arguments = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
                     .getInputArguments())
    assert "-XX:TieredStopAtLevel=1" in arguments and "-XX:+UseSerialGC" in arguments
    assert any(a.startswith("-Dlog4j2.configurationFile=") for a in arguments)
