"""``xmlevents replay`` on a real standalone cluster (issue 29, item 3): a master and two
workers started from pyspark's own launcher (``bin/spark-class``), executors whose Python
cannot import xmlevents (the package reaches them as the zip the session adds), the outputs
equal to the local engine's — and still equal when a worker is SIGKILLed mid-job.

One test, one cluster: the kill ends one worker, and xdist may send a module's tests to
different processes (each would start its own cluster).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import site
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from xmlevents.replay._session import _SHORT_JOBS_JVM

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "purchase_orders.jsonl.gz"
EXAMPLE_DEFS = ROOT / "examples" / "purchase_orders.xev"
CEL = "SELECT * FROM S WHERE ins"
OUTPUTS = ("events", "composites", "errors", "cel")
# Fewer, larger tasks than the session's default 8 partitions: two one-core executors (and
# --conf exercised on a cluster).
CONF = ["--conf", "spark.sql.shuffle.partitions=4"]
# Every JVM of the cluster as an embedded session's driver (replay/_session.py: short jobs, the
# first tier of the JIT only): about half the time of this test (issue 28, item 7).
SHORT_JVM = _SHORT_JOBS_JVM
CONF += ["--conf", f"spark.executor.extraJavaOptions={SHORT_JVM}"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def tails(logs: list[Path]) -> str:
    return "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-2000:]}"
                     for p in logs if p.exists())


def wait_for(what: str, check: Any, timeout: float, logs: list[Path]) -> Any:
    """Poll ``check()`` until it returns something true; fail with the logs' ends if it never
    does within ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with contextlib.suppress(OSError, ValueError, KeyError, IndexError):
            result = check()
            if result:
                return result
        time.sleep(0.5)
    pytest.fail(f"{what}: not within {timeout:.0f} s\n{tails(logs)}")


@dataclass
class Cluster:
    """A standalone master and its workers, each its own process group (a worker's
    executors and their Python workers are in its group)."""

    url: str
    web: str
    folder: Path
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def logs(self) -> list[Path]:
        """The master's and workers' logs, and the executors' stderr."""
        return sorted(self.folder.glob("*.log")) + sorted(self.folder.glob("worker*/*/*/stderr"))

    def alive_workers(self) -> int:
        return sum(w["state"] == "ALIVE" for w in get_json(f"{self.web}/json/")["workers"])

    def kill(self, name: str) -> None:
        """SIGKILL a process and everything in its group; wait for it."""
        process = self.processes[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A master on 127.0.0.1 and two one-core 1 GB workers; every process group killed at
    the end, whatever happens."""
    pytest.importorskip("pyspark")
    port, web = free_port(), free_port()
    made = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{web}", tmp_path)
    # Spark's heartbeat timeouts as they are: a shorter spark.worker.timeout drops live
    # workers on a loaded machine (a killed one is dropped at once: its connection closes).
    env = dict(os.environ, SPARK_DAEMON_JAVA_OPTS=SHORT_JVM)

    def start(name: str, *args: str) -> None:
        with open(tmp_path / f"{name}.log", "wb") as log:
            made.processes[name] = subprocess.Popen(
                [str(spark_class()), *args], stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=env, start_new_session=True)

    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
              "--port", str(port), "--webui-port", str(web))
        wait_for("the master's web UI", lambda: get_json(f"{made.web}/json/"), 120,
                 made.logs())
        for name in ("worker1", "worker2"):
            (tmp_path / name).mkdir()
            start(name, "org.apache.spark.deploy.worker.Worker", made.url, "--host",
                  "127.0.0.1", "--cores", "1", "--memory", "1g", "--work-dir",
                  str(tmp_path / name), "--webui-port", "0")
        wait_for("two workers registered", lambda: made.alive_workers() == 2, 120,
                 made.logs())
        yield made
    finally:
        for name in reversed(list(made.processes)):
            with contextlib.suppress(Exception):
                made.kill(name)


def python_without_xmlevents(folder: Path) -> tuple[Path, Path]:
    """An executable that runs this interpreter without ``site`` (so no ``.pth`` file: the
    editable install's import hook is never installed) but with the site-packages on
    ``PYTHONPATH`` (the dependencies: lxml, pandas, pyarrow, ...): a Python that has
    everything but xmlevents. Each start appends a line to the marker file returned."""
    wrapper, marker = folder / "python-without-xmlevents", folder / "started"
    packages = ":".join(site.getsitepackages())
    wrapper.write_text(
        "#!/bin/sh\n"
        f"echo \"$$\" >> '{marker}'\n"
        f"PYTHONPATH=\"${{PYTHONPATH:+$PYTHONPATH:}}{packages}\" exec '{sys.executable}' -S "
        "\"$@\"\n", encoding="utf-8")
    wrapper.chmod(0o755)
    return wrapper, marker


def replay(out: str, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "xmlevents", "replay", str(EXAMPLE), "--definitions",
         str(EXAMPLE_DEFS), "--cel", CEL, "--out", out, "-q", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def finish(process: subprocess.Popen[str], logs: list[Path] | None = None,
           timeout: float = 900) -> str:
    """The replay's summary once it ends with status 0; else a failure with its stderr and
    the cluster's logs."""
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        stderr += f"\n(killed after {timeout:.0f} s)"
    if process.returncode != 0:
        pytest.fail(f"status {process.returncode}\n{stderr}\n{tails(logs or [])}")
    return stdout


def rows(folder: Path) -> dict[str, list[str]]:
    """Every output's rows, as sorted lists (the order of rows in a dataset is Spark's)."""
    import pyarrow.parquet as pq

    return {name: sorted(json.dumps(r, sort_keys=True)
                         for r in pq.read_table(folder / name).to_pylist())
            for name in OUTPUTS}


def test_a_standalone_cluster_replays_as_the_local_engine_even_when_a_worker_dies(
        cluster: Cluster, tmp_path: Path) -> None:
    """On two workers whose Python cannot import xmlevents: a plain path is refused before
    any work; with one worker SIGKILLed after both executors' first tasks ended, Spark re-runs
    the lost ones and every output equals the local engine's."""
    wrapper, marker = python_without_xmlevents(tmp_path)
    hidden = subprocess.run([str(wrapper), "-c", "import xmlevents"], capture_output=True,
                            text=True, cwd=tmp_path, check=False)
    assert hidden.returncode == 1 and "No module named 'xmlevents'" in hidden.stderr
    present = subprocess.run([str(wrapper), "-c", "import lxml, xmldiff, pandas, pyarrow"],
                             capture_output=True, text=True, cwd=tmp_path, check=False)
    assert present.returncode == 0, present.stderr
    env = dict(os.environ, PYSPARK_PYTHON=str(wrapper), SPARK_SUBMIT_OPTS=SHORT_JVM)

    local = finish(replay(str(tmp_path / "local"), "--engine", "local"))
    expected = rows(tmp_path / "local")
    assert all(expected[name] for name in OUTPUTS)

    # A folder of this machine is refused on a cluster, before the table is read.
    refused = replay(str(tmp_path / "plain"), "--master", cluster.url, env=env)
    _, err = refused.communicate(timeout=600)
    assert refused.returncode == 1
    assert err.startswith(f"xmlevents: error: --out {tmp_path / 'plain'}: a folder of this "
                          f"machine, and the master {cluster.url} runs executors"), err
    assert err.count("\n") == 1 and not (tmp_path / "plain").exists()

    def same(summary: str) -> list[str]:
        return [line for line in summary.splitlines()
                if not line.startswith(("replayed ", "  time", "  engine"))]

    # One run on the cluster (a run each way costs a minute): a worker is killed once both
    # executors have finished tasks, and Spark re-runs what it held.
    ui = free_port()
    running = replay(f"file://{tmp_path / 'second'}", "--master", cluster.url, *CONF,
                     "--conf", "spark.ui.enabled=true", "--conf", f"spark.ui.port={ui}",
                     env=env)
    try:
        def both_executors_done_tasks() -> bool:
            assert running.poll() is None, "the replay ended before a worker was killed"
            api = f"http://127.0.0.1:{ui}/api/v1/applications"
            app = get_json(api)[0]["id"]
            executors = [e for e in get_json(f"{api}/{app}/executors")
                         if e["id"] != "driver"]
            return len(executors) == 2 and all(e["completedTasks"] > 0 for e in executors)

        wait_for("both executors' first tasks", both_executors_done_tasks, 300,
                 cluster.logs())
        assert running.poll() is None  # mid-job
        cluster.kill("worker1")
        wait_for("the master dropping the killed worker",
                 lambda: cluster.alive_workers() == 1, 120, cluster.logs())
        second = finish(running, cluster.logs())
    finally:
        if running.poll() is None:
            running.kill()
            running.communicate()
    assert f"  engine            spark ({cluster.url}, from --master)\n" in second
    assert rows(tmp_path / "second") == expected
    assert marker.exists() and marker.read_text().split()  # the executors ran the wrapper
    assert same(second) == same(local)
