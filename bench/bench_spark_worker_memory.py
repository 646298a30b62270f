"""Peak memory of Spark's Python workers replaying one long history (issue 29, item 1).

One catalogue document (``bench_diff.py``'s generator: ~2,000 items, ~150 KB, 1–5 changes a
version) at N and 16·N versions (default 100 and 1,600), replayed by
:func:`~xmlevents.replay.replay_frames` on ``local[2]`` with ``--identical-subtrees``'s diff
(a version costs what changed, so 1,600 versions take minutes, not an hour); each run in a
fresh process with its own JVM and Python workers. The job is run as ``xmlevents replay``
runs it (the cached tagged table counted by record), its seconds timed from the version
table's read to the counts.

The memory measured is each Python worker's own peak: ``VmHWM`` of ``/proc/PID/status`` (the
kernel's high-water mark of the resident set), read every 0.1 s for every process under
this run's JVM whose command line is ``pyspark.daemon`` (the daemon and the workers it
forks; nothing of other Spark jobs on the machine), and once more before the session stops.
A high-water mark does not depend on catching the peak in a sample: only growth in the last
0.1 s of a worker that exits is missed, and workers live, reused, to the end of the session
(or an idle minute). ``ru_maxrss`` of the driver's children would not do: the workers are
the daemon's children, not the driver's, and the daemon is killed, never waited for.

``--code old`` runs the apply stage as it was before this issue (``groupBy("doc")
.applyInPandas``), taken from git (``--old-rev``, default the last commit with it) and
loaded beside the installed package; ``--code new`` the installed one.

    python3 bench/bench_spark_worker_memory.py [--versions 100 1600] [--code new old]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_diff import write

ROOT = Path(__file__).resolve().parents[1]
# The last commit whose apply stage is ``groupBy("doc").applyInPandas``.
OLD_REV = "7ae2ab5"


class WorkerPeaks:
    """The peak resident set (``VmHWM``, KiB) of each ``pyspark.daemon`` process under this
    process, sampled on a thread."""

    def __init__(self, every: float = 0.1) -> None:
        self.every = every
        self.peaks: dict[int, int] = {}
        self.roles: dict[int, str] = {}  # "daemon" (the JVM's child) or "worker" (forked)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WorkerPeaks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def sample(self) -> None:
        parents: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
        mine = {os.getpid()}
        changed = True
        while changed:  # the descendants of this process
            changed = False
            for pid, parent in parents.items():
                if parent in mine and pid not in mine:
                    mine.add(pid)
                    changed = True
        for pid in mine - {os.getpid()}:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            if b"pyspark.daemon" not in cmdline:
                continue
            hwm = next(int(line.split()[1]) for line in status.splitlines()
                       if line.startswith("VmHWM:"))
            self.peaks[pid] = max(self.peaks.get(pid, 0), hwm)
            parent_cmd = b""
            with contextlib.suppress(OSError, KeyError):
                parent_cmd = Path(f"/proc/{parents[pid]}/cmdline").read_bytes()
            self.roles[pid] = "worker" if b"pyspark.daemon" in parent_cmd else "daemon"


def _old_module() -> types.ModuleType:
    """The Spark job module at ``OLD_REV``, loaded as ``xmlevents.replay._spark_old`` (its
    relative imports resolve in the installed package) and pickled by value to the workers,
    which do not have it."""
    from pyspark import cloudpickle

    source = subprocess.run(["git", "show", f"{OLD_REV}:replay/_spark.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    name = "xmlevents.replay._spark_old"
    module = types.ModuleType(name)
    module.__package__ = "xmlevents.replay"
    module.__file__ = f"<{OLD_REV}:replay/_spark.py>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    cloudpickle.register_pickle_by_value(module)
    return module


def _run(path: str, code: str) -> None:
    """(In a fresh process) replay the history at ``path`` on ``local[2]``; print one JSON
    line: seconds, the counts by record, the workers' peaks."""
    from xmlevents.replay import DiffOptions, make_session

    job: Any
    if code == "old":
        job = _old_module()
    else:
        from xmlevents.replay import _spark as job
    spark = make_session("local[2]", progress=False, app_name="bench spark worker memory")
    try:
        with WorkerPeaks() as peaks:
            start = time.perf_counter()
            versions, _ = job.read_versions_df(spark, path)
            frames = job.replay_frames(spark, versions,
                                       options=DiffOptions(identical_subtrees=True))
            counts = {r["record"]: r["count"]
                      for r in frames.tagged.groupBy("record").count().collect()}
            seconds = time.perf_counter() - start
            frames.unpersist()
    finally:
        spark.stop()
    workers = [kb for pid, kb in peaks.peaks.items() if peaks.roles[pid] == "worker"]
    daemons = [kb for pid, kb in peaks.peaks.items() if peaks.roles[pid] == "daemon"]
    print(json.dumps({"seconds": seconds, "counts": counts, "workers": sorted(workers),
                      "daemon": max(daemons, default=0)}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--versions", type=int, nargs="+", default=[100, 1600])
    p.add_argument("--code", nargs="+", default=["new"], choices=["new", "old"])
    p.add_argument("--items", type=int, default=2000)
    p.add_argument("--seed", type=int, default=29)
    p.add_argument("--run", nargs=2, metavar=("PATH", "CODE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.run:
        _run(*args.run)
        return
    print(f"{'code':<4} {'versions':>8} {'seconds':>8} {'worker peak MB':>14} "
          f"{'workers':>7} {'daemon MB':>9}  {'events':>7}  load", flush=True)
    first: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="xmlevents-bench-spark-mem-") as folder:
        for versions in args.versions:
            path = os.path.join(folder, f"catalogue-{versions}.jsonl.gz")
            write(path, versions, args.items, args.seed)
            for code in args.code:
                load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                # Not from the repository, whose xmlevents/ holds only the facade.
                proc = subprocess.run([sys.executable, __file__, "--run", path, code],
                                      capture_output=True, text=True, check=False,
                                      cwd=tempfile.gettempdir())
                if proc.returncode:
                    raise SystemExit(f"{code} at {versions} versions failed:\n{proc.stderr}")
                got = json.loads(proc.stdout.splitlines()[-1])
                peak = max(got["workers"], default=0) / 1024
                growth = (f"  {peak / first[code]:.2f}x the first size" if code in first
                          else "")
                first.setdefault(code, peak)
                print(f"{code:<4} {versions:>8} {got['seconds']:>8.1f} {peak:>14.1f} "
                      f"{len(got['workers']):>7} {got['daemon'] / 1024:>9.1f}  "
                      f"{got['counts'].get('event', 0):>7}  {load}{growth}", flush=True)


if __name__ == "__main__":
    main()
